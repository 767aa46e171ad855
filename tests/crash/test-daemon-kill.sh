#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# cgbypassd (sim backend) killed with SIGKILL during bursts of requests, on a
# private bus with the real polkitd: 4 owners, each switching cpu in 4
# cgroups of its delegation as fast as the daemon answers, remember every
# acknowledged change (burst-client). The daemon is killed CGB_CRASH_KILLS
# times (default 10) at random moments and started again; after each start
# every cgroup must show its last acknowledged state (or the change that
# was in flight, unanswered). After the bursts, one more kill and start, and
# every final acknowledged state is checked again. Then CGB_CRASH_REPLY_KILLS
# times (default 100) one request, and SIGKILL the moment its reply is in:
# after the start, the cgroup and the record (the snapshot and the journal's
# commits, change-journal.h) must both say what was acknowledged. TAP; the
# last line counts.
#
# usage: test-daemon-kill.sh SRCDIR CGBYPASSD BURST-CLIENT
set -uo pipefail

src=${1:?source dir}
daemon=${2:?cgbypassd}
client=${3:?burst-client}
kills=${CGB_CRASH_KILLS:-10}
# shellcheck source=tests/bus/bus-env.sh
. "$src/tests/bus/bus-env.sh"
bus_env_init "$src" "$daemon"
bus_env_require_polkitd
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }
bus_env_install_policy || { echo "Bail out! cannot install the polkit actions"; exit 1; }
owners=()
for i in 0 1 2 3; do
	bus_env_add_user "u$i" || { echo "Bail out! useradd failed"; exit 1; }
	v=u$i
	owners+=("${!v}")
done
bus_env_start_polkit || { echo "Bail out! polkitd did not start"; exit 1; }

D=$BUS_ENV_DIR
root=$D/root
{
	printf '[cgroup]\npath = /\nsubtree-control = +cpu +io +memory\n\n'
	printf '[cgroup]\npath = /srv\nsubtree-control = #cpu #io +memory\n\n'
	for o in "${owners[@]}"; do
		printf '[delegate]\npath = /srv/%s\nuser = %s\ncontrollers = cpu io\n\n' "$o" "$o"
	done
} >"$D/c.conf"
start() {
	bus_env_start_daemon --backend sim --config "$D/c.conf" --config-dir "$D/none" \
		--cgroup-root "$root" --state-directory "$D/state"
}
start || { echo "Bail out! cgbypassd did not start"; exit 1; }

# each owner bypasses cpu for its children and makes four, as owners do
setup_ok=1
for o in "${owners[@]}"; do
	for k in 0 1 2 3; do
		bus_env_as "$o" mkdir "$root/srv/$o/c$k" || setup_ok=0
	done
	# a request in the delegation makes the daemon see the new cgroups
	out=$(bus_env_as "$o" busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager \
		SetSubtreeControl ss "/srv/$o" '#cpu #io' 2>&1) || { setup_ok=0; echo "# $o: $out"; }
done
[ $setup_ok -eq 1 ] && ok "4 owners bypass cpu in their delegations and make 4 cgroups each" ||
	{ not_ok "the owners' setup failed"; bus_env_done; exit 1; }

# the bursts last as long as the kills take, and a little more
seconds=$((kills * 2 + 4))
pids=()
for i in "${!owners[@]}"; do
	o=${owners[$i]}
	cgroups=()
	for k in 0 1 2 3; do cgroups+=("/srv/$o/c$k"); done
	(bus_env_as "$o" "$client" burst "$seconds" cpu "${cgroups[@]}" >"$D/client-$i.out" 2>&1) &
	pids+=($!)
done

killed=0
restart_failed=0
for ((i = 0; i < kills; i++)); do
	sleep "$(printf '0.%03d' $((300 + RANDOM % 700)))"
	bus_env_daemon_alive || { restart_failed=1; break; }
	{ bus_env_stop_daemon KILL; } 2>/dev/null       # without bash's "Killed" notice
	killed=$((killed + 1))
	start || { restart_failed=1; break; }
done
[ $restart_failed -eq 0 ] && ok "killed cgbypassd $killed times during the bursts; each time it started again" ||
	not_ok "cgbypassd did not come back after kill $killed" "$(tail -n 20 "$BUS_ENV_DAEMON_LOG")"

failed=0
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || failed=$((failed + 1))
	sed -n 's/^state //p' "$D/client-$i.out" >"$D/table-$i"
done
acked=0
checked=0
for i in "${!owners[@]}"; do
	read -r _ a _ c _ _ _ _ < <(grep '^acked ' "$D/client-$i.out")
	acked=$((acked + ${a:-0}))
	checked=$((checked + ${c:-0}))
done
[ $failed -eq 0 ] && [ "$acked" -gt 0 ] &&
	ok "$acked acknowledged changes; after every restart each cgroup showed its last one ($checked checks)" ||
	not_ok "$failed of 4 clients lost an acknowledged change or got a wrong answer" "$(cat "$D"/client-*.out)"

# the last acknowledged states survive one more kill
{ bus_env_stop_daemon KILL; } 2>/dev/null
killed=$((killed + 1))
if start; then
	out=$(for i in "${!owners[@]}"; do
		bus_env_as "${owners[$i]}" "$client" verify "$D/table-$i" cpu || echo "FAILED"
	done 2>&1)
	final=$(printf '%s\n' "$out" | awk '/^checked/ { n += $2 } END { print n + 0 }')
	[[ $out != *FAILED* ]] && [ "$final" -eq 16 ] &&
		ok "after a kill at rest, all 16 last acknowledged states are there" ||
		not_ok "a last acknowledged state is missing after a kill" "$out"
	checked=$((checked + final))
else
	not_ok "cgbypassd did not come back after the last kill" "$(tail -n 20 "$BUS_ENV_DAEMON_LOG")"
fi
# kill -9 right after a reply: the record was durable before the reply left
reply_kills=${CGB_CRASH_REPLY_KILLS:-100}
# recorded PATH: the controllers token of PATH's last record (snapshot, then the journal's complete lines)
recorded() {
	cat "$D/state/client-changes" "$D/state/client-changes.journal" 2>/dev/null |
		awk -v p="$1" '{ for (i = 1; i <= NF; i++) if ($i == "change" && $(i + 1) == p) { t = ""
			for (j = i + 2; j <= NF; j++) if ($j ~ /^ctl=/) t = substr($j, 5); last = t } }
			END { print last }'
}
lost=0
done_kills=0
o=${owners[0]}
for ((i = 0; i < reply_kills; i++)); do
	k=$((RANDOM % 4))
	if ((RANDOM % 2)); then method=EnableController want_file=cpu want_rec=+cpu
	else method=BypassController want_file='#cpu' want_rec='#cpu'; fi
	bus_env_as "$o" busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager "$method" ss \
		"/srv/$o/c$k" cpu >/dev/null 2>&1 || { lost=$((lost + 1)); echo "# $method c$k was refused"; continue; }
	{ bus_env_stop_daemon KILL; } 2>/dev/null
	done_kills=$((done_kills + 1))
	start || { lost=$((lost + 1)); echo "# no restart after reply kill $i"; break; }
	got_file=$(cat "$root/srv/$o/c$k/cgroup.controllers" 2>/dev/null)
	got_rec=$(recorded "/srv/$o/c$k")
	if [[ " $got_file " != *" $want_file "* ]] || [[ ",$got_rec," != *",$want_rec,"* ]]; then
		lost=$((lost + 1))
		echo "# after $method c$k and a kill: cgroup.controllers '$got_file', record '$got_rec'"
	fi
done
[ $lost -eq 0 ] && [ $done_kills -ge "$reply_kills" ] &&
	ok "killed right after $done_kills replies: every acknowledged change was in the cgroup and in the record" ||
	not_ok "$lost of $reply_kills acknowledged changes lost or refused after a kill right after the reply"
killed=$((killed + done_kills))
acked=$((acked + done_kills))
checked=$((checked + done_kills))

bus_env_stop_daemon TERM
echo "# daemon kills: $killed, acknowledged changes: $acked, states checked after a kill: $checked"
bus_env_done
