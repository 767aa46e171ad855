#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2012,SC2154 # SC2154: users come from bus_env_add_user
#
# The owner's job on the host's real cgroup2 (the emulated backend), in a
# scratch subtree, with the real polkitd: after the owner re-enables a
# bypassed controller and gives it to its children, the kernel's interface
# files that the daemon's writes made appear in children (made before and
# after) are the owner's, who writes them; the delegation root's are not;
# restart and reload repair them; cgroup2 itself refuses the owner's hard
# links and symlinks; AddDelegation and RemoveDelegation hand a kernel
# cgroup over and take it back. Skips without a writable cgroup2 mount
# offering a domain controller with a writable knob (CGB_TEST_CGROUP2,
# CGB_TEST_CONTROLLER: default the first mount, hugetlb). TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
bus_env_require_polkitd

trap 'bus_env_cgroup2_cleanup; bus_env_cleanup' EXIT
bus_env_use_cgroup2 cgb-own
# the controller's first writable knob in a child, as the kernel names it (hugetlb.2MB.max, cpu.weight, ...)
mkdir "$scratch/probe" && echo "+$X" >"$scratch/cgroup.subtree_control" || bus_env_skip "cannot probe $X"
knob=$(cd "$scratch/probe" && for f in "$X".*; do [ -f "$f" ] && [ -w "$f" ] && [[ $f == *.max || $f == *.weight ]] && echo "$f" && break; done)
echo "-$X" >"$scratch/cgroup.subtree_control"
rmdir "$scratch/probe"
[ -n "$knob" ] || bus_env_skip "$X has no writable .max or .weight file"
value=$(case $knob in *.weight) echo 50 ;; *) echo 4194304 ;; esac)

bus_env_polkit_setup alice bob

D=$BUS_ENV_DIR
bus_env_config alice.conf backend=emulated x="$X" alice="$alice" || { echo "Bail out! the configuration"; exit 1; }
printf '\n[cgroup]\npath = /rt\nsubtree-control = #%s\n' "$X" >>"$D/c.conf"
start() { bus_env_start_cgbypassd "$scratch"; }
as() { bus_env_client_as "$1" --no-interactive call "${@:2}"; }
owner_of() {
	stat -c %U "$1" 2>&1
}
can_write() {
	bus_env_as "$1" sh -c "echo '$3' > '$2'" 2>/dev/null
}
key() { bus_env_key "$@"; }
A=$scratch/alice

start || { echo "Bail out! cgbypassd did not start on $scratch"; exit 1; }
bus_env_as "$alice" mkdir "$A/before" || not_ok "owner mkdir"
as "$alice" EnableController /alice "$X" && as "$alice" SetSubtreeControl /alice "+$X"
[ $st -eq 0 ] && [ -e "$A/before/$knob" ] && ok "the owner re-enables $X and gives it to its children: the kernel shows $knob" ||
	not_ok "owner enable" "$out"
bus_env_as "$alice" mkdir "$A/after"
as "$alice" GetCgroup /alice/after
for c in before after; do
	[ "$(owner_of "$A/$c/$knob")" = "$alice" ] && can_write "$alice" "$A/$c/$knob" "$value" &&
		[ "$(cat "$A/$c/$knob")" = "$value" ] &&
		ok "the owner writes the kernel's $c/$knob (a child made $c the parent enabled $X)" ||
		not_ok "owner writes $c/$knob" "$(stat -c "%U %n" "$A/$c/$knob" 2>&1)"
done
out=$(bus_env_as "$alice" sh -c "echo $value > '$A/$knob'" 2>&1)
[ "$(owner_of "$A/$knob")" = root ] && [[ $out == *"Permission denied"* ]] &&
	ok "the delegation root's $knob stays root's: EACCES for the owner" || not_ok "root knob" "$out"
[ "$(owner_of "$A/cgroup.procs")" = "$alice" ] && [ "$(owner_of "$A/cgroup.subtree_control")" = root ] &&
	ok "... its cgroup.procs is the owner's, its cgroup.subtree_control root's" || not_ok "root files" "$(ls -la "$A" | head)"

# restart and reload repair owners in the kernel's files
chown root:root "$A/before/$knob"
bus_env_stop_daemon
start || not_ok "restart"
[ "$(owner_of "$A/before/$knob")" = "$alice" ] && ok "a restart gives the child's $knob back to the owner" ||
	not_ok "restart" "$(stat -c "%U %n" "$A/before/$knob" 2>&1)"
chown root:root "$A/after/$knob"
"$client" call Reload >/dev/null
[ "$(owner_of "$A/after/$knob")" = "$alice" ] && ok "so does a reload" || not_ok "reload"

# cgroup2 refuses the owner's hard links and symlinks (kernfs has neither): nothing to redirect
echo secret >"$D/victim" && chmod 0666 "$D/victim"
if bus_env_as "$alice" ln "$A/before/cgroup.procs" "$A/before/x" 2>/dev/null ||
	bus_env_as "$alice" ln -s "$D/victim" "$A/before/y" 2>/dev/null; then
	not_ok "cgroup2 took an owner's link"
else
	ok "cgroup2 refuses an owner's hard link and symlink in its cgroups"
fi
as "$alice" SetSubtreeControl /alice "-$X"
[ $st -eq 0 ] && [ "$(owner_of "$D/victim")" = root ] && bus_env_daemon_alive &&
	ok "a later change hands nothing else over" || not_ok "after the attempt" "$out"

# a run-time delegation of a kernel cgroup, and its end
as root AddDelegation /rt/c "$bob_uid" "$X" ''
[ $st -eq 0 ] && [ -d "$scratch/rt/c" ] && [ "$(owner_of "$scratch/rt/c")" = "$bob" ] &&
	[ "$(owner_of "$scratch/rt/c/cgroup.procs")" = "$bob" ] && [ "$(key /rt/c delegation_kind)" = runtime ] &&
	ok "AddDelegation makes the kernel cgroup /rt/c and hands it to its owner" || not_ok "AddDelegation" "$out"
bus_env_as "$bob" mkdir "$scratch/rt/c/job"
as "$bob" EnableController /rt/c "$X" && as "$bob" SetSubtreeControl /rt/c "+$X"
[ $st -eq 0 ] && can_write "$bob" "$scratch/rt/c/job/$knob" "$value" && ! can_write "$bob" "$scratch/rt/c/$knob" "$value" &&
	ok "its owner writes $knob in its child after re-enabling $X, not its root's" || not_ok "bob's job" "$out"
as root RemoveDelegation /rt/c
[ $st -eq 0 ] && [ -d "$scratch/rt/c/job" ] && [ -z "$(find "$scratch/rt/c" ! -user root)" ] &&
	ok "RemoveDelegation: every directory and kernel file of the subtree is root's again; the cgroups stay" ||
	not_ok "RemoveDelegation" "$out $(find "$scratch/rt/c" ! -user root | head -3)"
# lifetime cgroup: root removes the cgroup, the delegation ends
as root AddDelegation /rt/d "$bob_uid" "$X" ''
rmdir "$scratch/rt/d"
"$client" call GetCgroup /rt >/dev/null
out=$("$client" call ListDelegations)
[ $st -eq 0 ] && [[ $out != *"/rt/d"* ]] && ok "lifetime cgroup: rmdir of the kernel cgroup ends the delegation" ||
	not_ok "lifetime" "$out"

bus_env_stop_daemon
! grep -qi sanitizer "$BUS_ENV_DAEMON_LOG" && ok "no sanitizer report" ||
	not_ok "sanitizer" "$(grep -i -A8 sanitizer "$BUS_ENV_DAEMON_LOG")"
bus_env_done
