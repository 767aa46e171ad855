#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# The limits on cgroups in delegations (src/daemon/delegation-limits.c,
# cgbypassd(8) LIMITS), on the sim with the real polkitd: with
# max-cgroups-per-delegation = 5 and max-delegated-cgroups = 8, an owner's
# mkdirs beyond a limit are not taken on (the daemon says so once, and keeps
# serving); GetCgroup and a request on such a cgroup fail with
# TooManyCgroups naming the limit and change nothing; once the owner removes
# a cgroup the next one is taken on; AddDelegation over the total fails the
# same way; --check-config refuses a bad limit. TAP.
set -uo pipefail

src=${1:?source dir}
daemon=${2:?cgbypassd}
client=${3:?bus-client}
# shellcheck source=tests/bus/bus-env.sh
. "$src/tests/bus/bus-env.sh"
bus_env_init "$src" "$daemon"
[ -x /usr/lib/polkit-1/polkitd ] || [ -x /usr/libexec/polkitd ] || bus_env_skip "polkitd is not installed"
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }
bus_env_install_policy || { echo "Bail out! cannot install the polkit actions"; exit 1; }
bus_env_add_user alice || { echo "Bail out! useradd failed"; exit 1; }
bus_env_start_polkit || { echo "Bail out! polkitd did not start"; exit 1; }
trap bus_env_cleanup EXIT

D=$BUS_ENV_DIR
root=$D/root
state=$D/state

# ---- bad limits: refused with FILE:LINE ----
for v in 0 abc 1000001 -3; do
	printf '[daemon]\nbackend = sim\nmax-delegated-cgroups = %s\n' "$v" >"$D/bad.conf"
	out=$("$daemon" --check-config --config "$D/bad.conf" --config-dir "$D/none" --cgroup-root "$root" 2>&1)
	[ $? -eq 1 ] && [[ $out == *"$D/bad.conf:3: max-delegated-cgroups: '$v' is not a number of cgroups from 1 to 1000000"* ]] &&
		ok "--check-config: max-delegated-cgroups = $v is refused" || not_ok "bad limit $v" "$out"
done

bus_env_config limits.conf backend=sim top=/srv x=cpu alice="$alice" || { echo "Bail out! the configuration"; exit 1; }
cat >>"$D/c.conf" <<CONF

[cgroup]
path = /
subtree-control = +cpu +memory

[cgroup]
path = /srv
subtree-control = #cpu +memory
CONF
bus_env_start_daemon --config "$D/c.conf" --config-dir "$D/none" --cgroup-root "$root" --state-directory "$state" ||
	{ echo "Bail out! cgbypassd did not start"; exit 1; }

as() {
	local u=$1
	shift
	out=$(bus_env_as "$u" "$client" --no-interactive call "$@" 2>&1)
	st=$?
}
children() { "$client" call GetCgroup "$1" | sed -n 's/^children=//p'; }
snap() { (cd "$root" && find . -printf '%p %U %m\n' | sort && cat "$state/applied-state" "$state/client-changes" 2>/dev/null); }

# ---- one delegation over its limit: the root and 4 children are taken on, 2 are not ----
as "$alice" SetSubtreeControl /srv/a1 '#cpu'
[ $st -eq 0 ] || not_ok "the owner bypasses cpu for its children" "$out"
bus_env_as "$alice" mkdir "$root/srv/a1/c0" "$root/srv/a1/c1" "$root/srv/a1/c2" "$root/srv/a1/c3" \
	"$root/srv/a1/c4" "$root/srv/a1/c5" || { echo "Bail out! the owner's mkdir failed"; exit 1; }
kids=$(children /srv/a1)
n=$(tr ' ' '\n' <<<"$kids" | grep -c '^/srv/a1/c')
[ "$n" = 4 ] && ok "max-cgroups-per-delegation = 5: 4 of the owner's 6 children are taken on" || not_ok "taken on" "$kids"
refused=()
for c in c0 c1 c2 c3 c4 c5; do
	[[ " $kids " == *" /srv/a1/$c "* ]] || refused+=("/srv/a1/$c")
done
r1=${refused[0]:-/srv/a1/none}
bus_env_wait_for 5 grep -q "Not taking on .* the delegation /srv/a1 holds 5 cgroup(s).*max-cgroups-per-delegation" \
	"$BUS_ENV_DAEMON_LOG" && ok "the daemon logs which limit" || not_ok "log" "$(tail -5 "$BUS_ENV_DAEMON_LOG")"

before=$(snap)
as root GetCgroup "$r1"
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.TooManyCgroups: cgbypassd did not take on $r1: the delegation /srv/a1 holds 5 cgroup(s)"*"max-cgroups-per-delegation"* ]] &&
	ok "GetCgroup of a cgroup beyond the limit: TooManyCgroups, naming the limit" || not_ok "GetCgroup beyond" "$out"
as "$alice" EnableController "$r1" cpu
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.TooManyCgroups: "* ]] &&
	ok "the owner's EnableController on it: TooManyCgroups" || not_ok "EnableController beyond" "$out"
[ "$before" = "$(snap)" ] && ok "... and neither changed anything" ||
	not_ok "a refusal changed something" "$(diff <(echo "$before") <(snap) | head -10)"
as root GetCgroup /srv/a1/none
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.NoSuchCgroup: "* ]] &&
	ok "a directory that is not there is still NoSuchCgroup" || not_ok "NoSuchCgroup" "$out"

# ---- the daemon keeps serving ----
taken=$(tr ' ' '\n' <<<"$kids" | grep '^/srv/a1/c' | head -1)
as "$alice" EnableController "$taken" cpu
e0="$st $out"
as root GetEffectiveTree cpu
[ $st -eq 0 ] && [[ $out == *"$taken"* ]] && [[ $out != *"$r1"* ]] && [[ $e0 == "0 "* ]] &&
	ok "the daemon keeps serving: reads, and the owner's request on a cgroup taken on" || not_ok "serving" "$e0 $out"

# ---- the total: 5 in a1 + the root of a2 = 6; two more fit ----
bus_env_as "$alice" mkdir "$root/srv/a2/d0" "$root/srv/a2/d1" "$root/srv/a2/d2" ||
	{ echo "Bail out! the owner's mkdir failed"; exit 1; }
kids2=$(children /srv/a2)
n=$(tr ' ' '\n' <<<"$kids2" | grep -c '^/srv/a2/d')
[ "$n" = 2 ] && ok "max-delegated-cgroups = 8: 2 of 3 more are taken on" || not_ok "total" "$kids2"
for c in d0 d1 d2; do
	[[ " $kids2 " == *" /srv/a2/$c "* ]] || r2=/srv/a2/$c
done
as root GetCgroup "${r2:-/srv/a2/none}"
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.TooManyCgroups: "*"all delegations together hold 8 cgroup(s)"*"max-delegated-cgroups"* ]] &&
	ok "beyond the total: TooManyCgroups, naming max-delegated-cgroups" || not_ok "total message" "$out"

# ---- AddDelegation over the total ----
before=$(snap)
as root AddDelegation /srv/x "$alice_uid" cpu ''
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.TooManyCgroups: "*"max-delegated-cgroups"* ]] && [ "$before" = "$(snap)" ] &&
	ok "AddDelegation over the total: TooManyCgroups, nothing changed" || not_ok "AddDelegation" "$out"

# ---- room again: the owner removes a cgroup, the next look takes one of the refused on ----
rm -r "$root/srv/a1/$(basename "$(tr ' ' '\n' <<<"$kids" | grep '^/srv/a1/c' | tail -1)")"
kids=$(children /srv/a1)
now=
for r in "${refused[@]}"; do
	[[ " $kids " == *" $r "* ]] && now=$r
done
n=$(tr ' ' '\n' <<<"$kids" | grep -c '^/srv/a1/c')
[ "$n" = 4 ] && [ -n "$now" ] && [ "$(stat -c %U "$root$now/cgroup.procs")" = "$alice" ] &&
	ok "after the owner removed one, a refused cgroup is taken on (and its files are the owner's)" ||
	not_ok "room again" "$kids"

bus_env_stop_daemon
[ "$BUS_ENV_DAEMON_STATUS" = 0 ] && ok "the daemon exits cleanly" || not_ok "exit status $BUS_ENV_DAEMON_STATUS"
bus_env_done
