#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2012,SC2181,SC2154 # SC2154: users come from bus_env_add_user
#
# The owner's job, on the sim backend with the real polkitd and unprivileged
# owners (issue 11 sections 1 and 3, issue 13 item 3):
#  - after re-enabling cpu, io and memory, the owner writes cpu.weight,
#    io.weight and memory.max in its children (made before and after the
#    parent enabled them) and cannot write its delegation root's; the same
#    after a restart and a reload, which also repair owners; a delegation
#    that ends gives everything back to root;
#  - a hard link renamed over cgroup.procs and a symlink are never chowned;
#  - AddDelegation/RemoveDelegation by root, by a user polkit allows, and
#    their refusals (no polkit, nesting, overlap, an unknown controller, bad
#    options), which change nothing; lifetimes, restart, reload conflicts.
# TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
bus_env_require_polkitd
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }
bus_env_install_policy || { echo "Bail out! cannot install the polkit actions"; exit 1; }
# an older installed copy without org.cgbypass1.delegate (bus_env_install_policy keeps it): add that action beside it
if ! grep -q 'org.cgbypass1.delegate"' /usr/share/polkit-1/actions/org.cgbypass1.policy; then
	extra=/usr/share/polkit-1/actions/org.cgbypass1.delegate-test-$$.policy
	python3 - "$src/polkit/org.cgbypass1.policy" >"$extra" <<'PY' || { echo "Bail out! cannot add the action"; exit 1; }
import re, sys
text = open(sys.argv[1]).read()
action = re.search(r'\s*<action id="org.cgbypass1.delegate">.*?</action>', text, re.S).group(0)
print(re.sub(r'<policyconfig>.*</policyconfig>', lambda m: '<policyconfig>' + action + '\n</policyconfig>', text, flags=re.S))
PY
	BUS_ENV_FILES+=("$extra")
fi
for u in alice bob carol; do
	bus_env_add_user "$u" || { echo "Bail out! useradd failed"; exit 1; }
done
bus_env_add_rules owners "// cgbypassd's owner tests: carol may delegate below /rt
polkit.addRule(function(action, subject) {
	if (action.id == 'org.cgbypass1.delegate' && subject.user == '$carol' &&
	    action.lookup('cgroup').indexOf('/rt/') == 0)
		return action.lookup('operation') == 'add' && action.lookup('uid') == '$bob_uid' &&
			action.lookup('controller') == 'cpu' ? polkit.Result.YES : polkit.Result.NO;
	return polkit.Result.NOT_HANDLED;
});" || { echo "Bail out! cannot install the polkit rules"; exit 1; }
bus_env_start_polkit || { echo "Bail out! polkitd did not start"; exit 1; }

D=$BUS_ENV_DIR
root=$D/root
state=$D/state
write_conf() {
	bus_env_config sim-srv.conf || return 1
	cat >>"$D/c.conf" <<CONF

[cgroup]
path = /rt
subtree-control = #cpu #io +memory
$1
CONF
}
alice_section="
[delegate]
path = /srv/alice
user = $alice
controllers = cpu io memory
"
write_conf "$alice_section"
start() { bus_env_start_cgbypassd "$root"; }
as() { bus_env_client_as "$1" --no-interactive call "${@:2}"; }
expect() { # USER NAME DESCRIPTION ARGS...
	as "$1" "${@:4}"
	bus_env_expect_error "$2" "$3"
}
key() { bus_env_key "$@"; }
owner_of() {
	stat -c %U "$1" 2>&1
}
# can USER write FILE: the owner's job, as the shell does it
can_write() {
	bus_env_as "$1" sh -c "echo '$3' > '$2'" 2>/dev/null
}
# every file and directory of a subtree with its owner (and contents), and the state directory
snap() {
	(cd "$root" && find . -printf '%p %U %m\n' | sort && cat "$state/applied-state" "$state/delegations" 2>/dev/null)
}
A=$root/srv/alice
# io.weight comes with blk-iocost, which the VM kernel (and so the model) has
knobs="cpu.weight io.weight io.max memory.max"

start || { echo "Bail out! cgbypassd did not start"; exit 1; }

# ---- 1. the owner's knobs ----
bus_env_as "$alice" mkdir "$A/before" || not_ok "owner mkdir"
as "$alice" EnableController /srv/alice cpu && as "$alice" EnableController /srv/alice io &&
	as "$alice" SetSubtreeControl /srv/alice '+cpu +io +memory'
[ $st -eq 0 ] && [ "$(cat "$A/before/cgroup.controllers")" = "cpu io memory" ] &&
	ok "the owner re-enables cpu and io and gives cpu, io and memory to its children" || not_ok "owner enable" "$out"
# (issue 13 item 8: the sim rewrote such files as root's; kernfs keeps the inode and its owner)
[ "$(owner_of "$A/before/cgroup.controllers")" = "$alice" ] && [ "$(owner_of "$A/before/cgroup.subtree_control")" = "$alice" ] &&
	ok "files of the owner's child whose contents the change rewrote stay the owner's" ||
	not_ok "rewritten files" "$(ls -la "$A/before" | head -6)"
bus_env_as "$alice" mkdir "$A/after" && as "$alice" GetCgroup /srv/alice/after
[ $st -eq 0 ] && ok "a child made after the parent enabled them is learnt" || not_ok "after" "$out"
child_ok=1
for c in before after; do
	for k in $knobs; do
		if [ "$(owner_of "$A/$c/$k")" != "$alice" ] || ! can_write "$alice" "$A/$c/$k" 50; then
			child_ok=
			not_ok "the owner cannot write $c/$k" "$(stat -c "%U %n" "$A/$c/$k" 2>&1)"
		fi
	done
done
[ -n "$child_ok" ] && ok "the owner writes cpu.weight, io.weight, io.max and memory.max in a child made before and after"
[ "$(cat "$A/before/cpu.weight")" = 50 ] && ok "... and the write landed" || not_ok "cpu.weight" "$(cat "$A/before/cpu.weight")"
root_ok=1
for k in $knobs cgroup.subtree_control cgroup.controllers; do
	if [ "$(owner_of "$A/$k")" != root ] || can_write "$alice" "$A/$k" 50; then
		root_ok=
		not_ok "the owner can write the delegation root's $k" "$(ls -la "$A/$k")"
	fi
done
out=$(bus_env_as "$alice" sh -c "echo 50 > '$A/cpu.weight'" 2>&1)
[ -n "$root_ok" ] && [[ $out == *"Permission denied"* ]] &&
	ok "the delegation root's knobs stay root's: writing them is Permission denied (EACCES)" || not_ok "root knobs" "$out"
[ "$(owner_of "$A/cgroup.procs")" = "$alice" ] && [ "$(owner_of "$A/cgroup.threads")" = "$alice" ] &&
	ok "... while its cgroup.procs and cgroup.threads stay the owner's" || not_ok "procs" "$(ls -la "$A")"

# a change of the owner reaches files that appear deeper down: grandchildren too
bus_env_as "$alice" mkdir "$A/before/g" && as "$alice" SetSubtreeControl /srv/alice/before '+cpu'
[ $st -eq 0 ] && [ "$(owner_of "$A/before/g/cpu.weight")" = "$alice" ] && can_write "$alice" "$A/before/g/cpu.weight" 7 &&
	ok "a grandchild's cpu.weight, made to appear by the owner's request, is the owner's" ||
	not_ok "grandchild" "$out $(ls -la "$A/before/g" | head -4)"

# restart and reload keep and repair it
chown root:root "$A/before/cpu.weight" "$A/after/io.max"
bus_env_stop_daemon
start || not_ok "restart"
[ "$(owner_of "$A/before/cpu.weight")" = "$alice" ] && [ "$(owner_of "$A/after/io.max")" = "$alice" ] &&
	[ "$(owner_of "$A/cpu.weight")" = root ] && can_write "$alice" "$A/after/memory.max" 1G &&
	ok "a restart gives the children's files back to the owner (and the root's knobs stay root's)" ||
	not_ok "restart ownership" "$(ls -la "$A/before" | head -5)"
chown root:root "$A/after/cpu.weight"
"$client" call Reload >/dev/null
[ "$(owner_of "$A/after/cpu.weight")" = "$alice" ] && ok "a reload repairs an owner too" ||
	not_ok "reload ownership" "$(ls -la "$A/after" | head -5)"

# ---- 2. hostile ground (issue 13 item 3) ----
mkdir "$D/home" && chown "$alice" "$D/home"
echo secret >"$D/victim" && chmod 0666 "$D/victim"  # protected_hardlinks lets anyone link a file they may write
bus_env_as "$alice" sh -c "ln '$D/victim' '$A/before/x' && mv -f '$A/before/x' '$A/before/cpu.weight' &&
	ln '$D/victim' '$A/x' && mv -f '$A/x' '$A/cgroup.procs'" ||
	not_ok "the owner could not set up the hard links"
bus_env_as "$alice" sh -c "rm -f '$A/after/cpu.weight' && ln -s '$D/victim' '$A/after/cpu.weight' &&
	rm -f '$A/cgroup.threads' && ln -s '$D/victim' '$A/cgroup.threads'" || not_ok "the owner could not make the symlinks"
as "$alice" SetSubtreeControl /srv/alice '-memory'
st1=$st
"$client" call Reload >/dev/null
[ "$(owner_of "$D/victim")" = root ] && bus_env_daemon_alive &&
	ok "hard links renamed over cgroup.procs and cpu.weight, symlinks: the file elsewhere stays root's" ||
	not_ok "hard link attack" "$(ls -la "$D/victim") $st1"
grep -q "more than one link" "$BUS_ENV_DAEMON_LOG" && ok "... and the daemon says why it skipped them" ||
	not_ok "no log of the hard link" "$(tail -5 "$BUS_ENV_DAEMON_LOG")"
rm -f "$D/victim"

# ---- 3. run-time delegations ----
"$client" call GetCgroup /rt >/dev/null
before=$(snap)
expect "$bob" AccessDenied "a user without polkit's yes" AddDelegation /rt/x "$bob_uid" cpu ''
expect "$alice" AccessDenied "the owner of another delegation, for itself" AddDelegation /rt/x "$alice_uid" cpu ''
expect root DelegationConflict "inside a configured delegation" AddDelegation /srv/alice/before "$bob_uid" cpu ''
[[ $out == *"$D/c.conf:"* ]] && ok "... and the message names the [delegate] section" || not_ok "conflict message" "$out"
expect root DelegationConflict "above a configured delegation" AddDelegation /srv "$bob_uid" cpu ''
expect root DelegationConflict "the same path as a configured delegation" AddDelegation /srv/alice "$bob_uid" cpu ''
expect root UnknownController "an unknown controller" AddDelegation /rt/x "$bob_uid" cpu,nosuch ''
expect root InvalidArgument "an unknown option" AddDelegation /rt/x "$bob_uid" cpu 'color=s:red'
expect root InvalidArgument "a lifetime that does not exist" AddDelegation /rt/x "$bob_uid" cpu 'lifetime=s:forever'
expect root InvalidArgument "create of the wrong type" AddDelegation /rt/x "$bob_uid" cpu 'create=s:yes'
expect root NoSuchCgroup "create=false for a missing cgroup" AddDelegation /rt/x "$bob_uid" cpu 'create=b:false'
expect root NoSuchCgroup "a missing parent" AddDelegation /rt/no/x "$bob_uid" cpu ''
expect root RootCgroup "the root cgroup" AddDelegation / "$bob_uid" cpu ''
expect root InvalidArgument "uid 0" AddDelegation /rt/x 0 cpu ''
expect root InvalidPath "a path that is not normalized" AddDelegation /rt//x "$bob_uid" cpu ''
expect root NotRuntimeDelegation "RemoveDelegation of a configured delegation" RemoveDelegation /srv/alice
expect root NoSuchDelegation "RemoveDelegation of a cgroup nobody has" RemoveDelegation /rt
[ "$before" = "$(snap)" ] && ok "... and none of them changed anything" ||
	not_ok "a refusal changed something" "$(diff <(echo "$before") <(snap) | head -10)"

# the record cannot be written (a read-only state directory): refused, nothing changed
state_ro() {
	mount --bind "$state" "$state" 2>/dev/null || return 1
	mount -o remount,bind,ro "$state" 2>/dev/null || { umount -l "$state"; return 1; }
}
if state_ro; then
	as root AddDelegation /rt/ro "$alice_uid" cpu ''
	umount -l "$state"
	[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.Failed: "*"nothing was changed" ]] && [ ! -e "$root/rt/ro" ] &&
		[ "$before" = "$(snap)" ] && ok "AddDelegation with a read-only state directory: Failed, nothing changed" ||
		not_ok "read-only AddDelegation" "$out"
else
	ok "# SKIP cannot make the state directory read-only (bind mounts)"
fi

as root AddDelegation /rt/c1 "$alice_uid" cpu,io ''
[ $st -eq 0 ] && [ "$(owner_of "$root/rt/c1")" = "$alice" ] && [ "$(owner_of "$root/rt/c1/cgroup.procs")" = "$alice" ] &&
	[ "$(owner_of "$root/rt/c1/cgroup.subtree_control")" = root ] &&
	ok "root's AddDelegation makes /rt/c1 and hands it to its owner" || not_ok "AddDelegation" "$out"
[ "$(key /rt/c1 delegation_kind)" = runtime ] && [ "$(key /rt/c1 delegated_to)" = "$alice_uid" ] &&
	[ "$(key /srv/alice delegation_kind)" = config ] && [ "$(key /rt delegation_kind)" = "" ] &&
	ok "GetCgroup tells the kind: runtime, config, none" || not_ok "delegation_kind" "$("$client" call GetCgroup /rt/c1)"
out=$("$client" call ListDelegations 2>&1)
[[ $out == *"/srv/alice"* ]] && [[ $out == *"/rt/c1"* ]] && ok "ListDelegations lists both kinds" ||
	not_ok "ListDelegations" "$out"
expect root DelegationConflict "nested in a run-time delegation" AddDelegation /rt/c1/sub "$bob_uid" cpu ''
if state_ro; then
	as root RemoveDelegation /rt/c1
	umount -l "$state"
	[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.Failed: "*"nothing was changed" ]] &&
		[ "$(key /rt/c1 delegation_kind)" = runtime ] && [ "$(owner_of "$root/rt/c1")" = "$alice" ] &&
		ok "RemoveDelegation with a read-only state directory: Failed, still delegated" || not_ok "read-only RemoveDelegation" "$out"
else
	ok "# SKIP cannot make the state directory read-only (bind mounts)"
fi
expect root DelegationConflict "above a run-time delegation" AddDelegation /rt "$bob_uid" cpu ''

# the owner's job in it
bus_env_as "$alice" mkdir "$root/rt/c1/job"
as "$alice" EnableController /rt/c1 cpu && as "$alice" SetSubtreeControl /rt/c1 +cpu
[ $st -eq 0 ] && can_write "$alice" "$root/rt/c1/job/cpu.weight" 200 && ! can_write "$alice" "$root/rt/c1/cpu.weight" 200 &&
	ok "the owner of a run-time delegation re-enables cpu, writes cpu.weight in its child, not its root's" ||
	not_ok "runtime owner job" "$out"
expect "$alice" ControllerNotDelegated "a controller the run-time delegation lacks" SetSubtreeControl /rt/c1 +memory

# a uid without a passwd entry; a user polkit allows
as root AddDelegation /rt/ns 4000123 '' 'lifetime=s:persistent,create=b:true'
[ $st -eq 0 ] && [ "$(stat -c %u "$root/rt/ns")" = 4000123 ] &&
	ok "a uid without passwd entry (a user-namespace range), lifetime persistent" || not_ok "nopasswd" "$out"
out=$(busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager AddDelegation 'suasa{sv}' \
	/rt/bc 4000124 2 cpu io 1 lifetime s persistent 2>&1)
[ $? -eq 0 ] && [ "$(stat -c %u "$root/rt/bc")" = 4000124 ] && grep -q '^delegate /rt/bc uid=4000124 controllers=cpu,io lifetime=persistent create=yes$' "$state/delegations" &&
	ok "busctl as org.cgbypass1(5) shows it; the record in the state directory" || not_ok "busctl AddDelegation" "$out"
as "$carol" AddDelegation /rt/b1 "$bob_uid" cpu ''
[ $st -eq 0 ] && [ "$(owner_of "$root/rt/b1")" = "$bob" ] && ok "a non-root caller that polkit allows (rule on cgroup, uid, controller)" ||
	not_ok "carol" "$out"
expect "$carol" AccessDenied "... but not with other details" AddDelegation /rt/b2 "$bob_uid" cpu,io ''

# restart, reload, a configuration that conflicts
bus_env_stop_daemon
start || not_ok "restart"
[ "$(key /rt/c1 delegation_kind)" = runtime ] && [[ $(key /rt/c1 controllers) == "cpu "* ]] &&
	[ "$(key /rt/ns delegated_to)" = 4000123 ] && can_write "$alice" "$root/rt/c1/job/cpu.weight" 300 &&
	ok "run-time delegations and their owners' changes survive a restart" || not_ok "restart" "$("$client" call GetCgroup /rt/c1)"
write_conf "$alice_section
[delegate]
path = /rt
user = $bob
"
before=$(snap)
out=$("$client" call Reload 2>&1)
[[ $out == "org.cgbypass1.Error.ConfigInvalid: "*"$D/c.conf:"*"$state/delegations:"* ]] && [ "$before" = "$(snap)" ] &&
	ok "a configuration that conflicts with run-time delegations is refused, naming both places" ||
	not_ok "conflicting reload" "$out"
out=$("$BUS_ENV_CGBYPASSD" --config "$D/c.conf" --config-dir "$D/none" --cgroup-root "$root" \
	--state-directory "$state" --check-config 2>&1)
[ $? -eq 1 ] && [[ $out == *"delegations cannot nest"* ]] && ok "--check-config says so too" || not_ok "check-config" "$out"
write_conf "$alice_section"
"$client" call Reload >/dev/null && [ "$(key /rt/c1 delegation_kind)" = runtime ] &&
	ok "a good reload keeps them" || not_ok "reload"

# lifetime cgroup: gone with the cgroup
rm -rf "$root/rt/b1"
"$client" call GetCgroup /rt >/dev/null
out=$("$client" call ListDelegations 2>&1)
[[ $out != *"/rt/b1"* ]] && ! grep -q ' /rt/b1 ' "$state/delegations" && grep -q "/rt/b1 to uid $bob_uid ended" "$BUS_ENV_DAEMON_LOG" &&
	ok "lifetime cgroup: the delegation ends when its cgroup is removed" || not_ok "lifetime" "$out"

# RemoveDelegation: the files back to root, the cgroups stay
expect "$alice" AccessDenied "the owner cannot end its own run-time delegation without polkit" RemoveDelegation /rt/c1
as root RemoveDelegation /rt/c1
[ $st -eq 0 ] && [ -d "$root/rt/c1/job" ] && [ -z "$(find "$root/rt/c1" ! -user root)" ] &&
	[ "$(key /rt/c1 delegated_to)" = 4294967295 ] && ! grep -q ' /rt/c1 ' "$state/delegations" &&
	ok "RemoveDelegation: every file and directory back to root, the cgroups stay" ||
	not_ok "RemoveDelegation" "$out $(find "$root/rt/c1" ! -user root | head -3)"
# a delegation made and ended with no restart between, its cgroup then removed by root
as root AddDelegation /rt/brief "$bob_uid" cpu ''
as root RemoveDelegation /rt/brief
rm -rf "$root/rt/brief"
"$client" call GetCgroup /rt >/dev/null
# drift at the next start is reckoned from the applied state
! grep -q ' /rt/brief ' "$state/applied-state" &&
	ok "an ended delegation's cgroup leaves the applied state: its removal is no drift" ||
	not_ok "applied state after RemoveDelegation" "$(grep ' /rt/' "$state/applied-state")"
bus_env_stop_daemon
start || not_ok "restart"
[ "$(key /rt/c1 delegated_to)" = 4294967295 ] && [ "$(key /rt/ns delegation_kind)" = runtime ] &&
	ok "... and it stays ended after a restart; the persistent one stays" || not_ok "after restart"
! grep -q 'Drift: /rt/' "$BUS_ENV_DAEMON_LOG" && ok "... and the restart reports no drift below /rt" ||
	not_ok "drift after ended delegations" "$(grep "Drift: " "$BUS_ENV_DAEMON_LOG")"

# a configured delegation that ends takes its files back too
write_conf ""
"$client" call Reload >/dev/null
[ -z "$(find "$A" ! -user root)" ] && ok "a [delegate] section removed: the subtree is root's again" ||
	not_ok "config take back" "$(find "$A" ! -user root | head -3)"

bus_env_stop_daemon
! grep -qi sanitizer "$BUS_ENV_DAEMON_LOG" && ok "no sanitizer report" ||
	not_ok "sanitizer" "$(grep -i -A8 sanitizer "$BUS_ENV_DAEMON_LOG")"
bus_env_done
