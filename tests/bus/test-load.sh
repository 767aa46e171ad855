#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# 32 concurrent clients x 200 requests against cgbypassd (sim backend) with
# the real polkitd, every answer checked: 16 owners switching cpu in their
# own children and reading the state back after each change, 8 users in
# another's subtree (NotDelegated), 4 owners with an undelegated controller
# (ControllerNotDelegated), 4 with a bad path (InvalidPath). Then the
# daemon still answers, the state is what the last requests set, and it
# exits cleanly (under ASan: without leaks). TAP.
set -uo pipefail

requests=${CGB_LOAD_REQUESTS:-200}
# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_owners_main "$@"
D=$BUS_ENV_DIR
out=$(bus_env_as "$alice" "$client" call SetSubtreeControl /srv/alice '#cpu #io' 2>&1) ||
	{ echo "Bail out! the owner's setup failed: $out"; exit 1; }
for i in $(seq 0 15); do
	bus_env_as "$alice" mkdir "$root/srv/alice/c$i"
done

pids=()
t0=$(date +%s)
for i in $(seq 0 31); do
	if [ "$i" -lt 16 ]; then
		args=("$alice" load own "$requests" "/srv/alice/c$i" cpu)
	elif [ "$i" -lt 24 ]; then
		args=("$bob" load foreign "$requests" "/srv/alice/c$((i % 16))" cpu)
	elif [ "$i" -lt 28 ]; then
		args=("$alice" load undelegated "$requests" "/srv/alice/c$((i % 16))" memory)
	else
		args=("$mallory" load invalid "$requests" "srv/alice/c$((i % 16))" cpu)
	fi
	u=${args[0]}
	(bus_env_as "$u" "$client" "${args[@]:1}" >"$D/client-$i.out" 2>&1) &
	pids+=($!)
done
failed=0
for i in $(seq 0 31); do
	wait "${pids[$i]}" || failed=$((failed + 1))
done
t1=$(date +%s)
wrong=$(grep -L "^ok $requests\$" "$D"/client-*.out | wc -l)
[ "$failed" -eq 0 ] && [ "$wrong" -eq 0 ] &&
	ok "32 clients x $requests requests: every answer right ($((t1 - t0)) s)" ||
	not_ok "$failed clients failed" "$(grep -h -v '^ok' "$D"/client-*.out | head -10)"

last=$(((requests - 1) % 2))
want=$([ "$last" -eq 1 ] && echo "#cpu #io" || echo "cpu #io")
bad=0
for i in $(seq 0 15); do
	[ "$(cat "$root/srv/alice/c$i/cgroup.controllers")" = "$want" ] || bad=$((bad + 1))
done
[ $bad -eq 0 ] && ok "each owner's child is as its last request left it ('$want')" || not_ok "$bad children differ"
applied=$(grep -c "by uid=${alice_uid} .*: applied: " "$BUS_ENV_DAEMON_LOG")
refused=$(grep -c ": refused: " "$BUS_ENV_DAEMON_LOG")
[ "$applied" -ge $((16 * requests)) ] && [ "$refused" -eq $((16 * requests)) ] &&
	ok "the log has every change ($applied) and every refusal ($refused)" ||
	not_ok "log counts: $applied applied, $refused refused"
out=$("$client" call GetCgroup /srv/alice 2>&1) && ok "the daemon still answers" || not_ok "no answer" "$out"
bus_env_stop_clean "clean exit, no sanitizer report"

bus_env_done
