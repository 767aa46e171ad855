#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2012,SC2154 # SC2154: users come from bus_env_add_user
#
# cgbypassd on the host's real cgroup2 (the emulated backend, a stock
# kernel), in a scratch subtree, with the real polkitd and an unprivileged
# owner: the delegation is handed over in the kernel's files, the owner
# re-enables a bypassed controller (the kernel shows it), the daemon learns
# a child the owner made with mkdir(2), refuses a change the kernel's
# no-internal-process rule forbids, keeps the state over a broken reload and
# a restart. Skips without a writable cgroup2 mount offering a domain
# controller (CGB_TEST_CGROUP2, CGB_TEST_CONTROLLER: default the first mount,
# hugetlb). The mount root's cgroup.subtree_control is restored after. TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
bus_env_require_polkitd

sleeper=
cleanup_kernel() {
	[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null && wait "$sleeper" 2>/dev/null
	bus_env_cgroup2_cleanup
	bus_env_cleanup
}
trap cleanup_kernel EXIT
bus_env_use_cgroup2 cgb-bus

bus_env_polkit_setup alice

D=$BUS_ENV_DIR
bus_env_config alice.conf backend=emulated x="$X" alice="$alice" || { echo "Bail out! the configuration"; exit 1; }
start() { bus_env_start_cgbypassd "$scratch"; }
as() { bus_env_client_as "$1" call "${@:2}"; }
key() { bus_env_key "$@"; }
has_css_files() { # a cgroup with X's interface files has its own css of X
	compgen -G "$scratch/$1/$X.*" >/dev/null
}
ksnap() {
	(cd "$scratch" && find . -name cgroup.subtree_control -printf '%p ' -exec cat {} \; | sort)
}

start || { echo "Bail out! cgbypassd did not start on $scratch"; exit 1; }
[ "$(busctl --system get-property org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager Backend)" = 's "emulated"' ] &&
	ok "cgbypassd serves $scratch with the emulated backend" || not_ok "Backend property"
[ "$(stat -c %U "$scratch/alice")" = "$alice" ] && [ "$(stat -c %U "$scratch/alice/cgroup.procs")" = "$alice" ] &&
	[ "$(stat -c %U "$scratch/alice/cgroup.threads")" = "$alice" ] &&
	[ "$(stat -c %U "$scratch/alice/cgroup.subtree_control")" = root ] &&
	ok "the kernel's files: the delegated directory, cgroup.procs and cgroup.threads are the owner's" ||
	not_ok "kernel ownership" "$(ls -la "$scratch/alice" | head -8)"
[ "$(key /alice controllers)" = "#$X" ] && ! has_css_files alice && ok "/alice starts with $X bypassed" ||
	not_ok "initial state" "$("$client" call GetCgroup /alice)"

"$client" watch 600 >"$D/signals" 2>&1 &
watch_pid=$!
bus_env_wait_for 10 grep -q '^ready$' "$D/signals"
as "$alice" EnableController /alice "$X"
[ $st -eq 0 ] && [ "$(key /alice controllers)" = "$X" ] && grep -qw "$X" "$scratch/cgroup.subtree_control" &&
	has_css_files alice && ok "the owner re-enables $X: the kernel gives /alice its own css" ||
	not_ok "owner EnableController on the kernel" "$out $(cat "$scratch/cgroup.subtree_control")"
bus_env_wait_for 5 grep -qx /alice "$D/signals" && ok "CgroupChanged /alice seen" || not_ok "no CgroupChanged"

# a child the owner makes with mkdir(2): the daemon reads it from the kernel before planning
bus_env_as "$alice" mkdir "$scratch/alice/job" "$scratch/alice/busy" &&
	ok "the owner makes children in the kernel's hierarchy" || not_ok "owner mkdir"
as "$alice" SetSubtreeControl /alice "#$X"
st1=$st
as "$alice" EnableController /alice/job "$X"
# (a stock kernel gives the sibling its own css too: emulation keeps the bypass in the model)
[ $st1 -eq 0 ] && [ $st -eq 0 ] && [ "$(key /alice/job controllers)" = "$X" ] && has_css_files alice/job &&
	[ "$(key /alice/busy controllers)" = "#$X" ] && grep -qw "$X" "$scratch/alice/cgroup.subtree_control" &&
	ok "... and re-enables $X in one of them; the kernel gives it a css, its sibling bypasses" ||
	not_ok "owner child on the kernel" "$out $(ls "$scratch/alice/job" | head -3)"

# the kernel's rules, from the model of what it found: no internal processes
sleep 300 &
sleeper=$!
echo "$sleeper" >"$scratch/alice/busy/cgroup.procs"
as "$alice" SetSubtreeControl /alice/busy "+$X"
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.HasProcesses: "* ]] && [ -z "$(cat "$scratch/alice/busy/cgroup.subtree_control")" ] &&
	ok "giving $X to the children of a cgroup with processes: HasProcesses, nothing changed" ||
	not_ok "HasProcesses" "$out"
kill "$sleeper" && wait "$sleeper" 2>/dev/null
sleeper=

# GetEffectiveNodes lists children as the kernel made them (inode order), not as readdir(3) does
# (a hash of the names), nor sorted by name (s10 before s2)
bus_env_as "$alice" mkdir "$scratch/alice/order"
for i in $(seq 1 12); do bus_env_as "$alice" mkdir "$scratch/alice/order/s$i"; done
got=$(busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager GetEffectiveNodes s "$X" |
	grep -o '"/alice/order/s[0-9]*"' | tr -d '"' | paste -sd' ')
[ "$got" = "$(seq -f /alice/order/s%g 1 12 | paste -sd' ')" ] &&
	ok "GetEffectiveNodes: children in the order they were made (readdir: $(ls -f "$scratch/alice/order" | sed -n '/^s/p' | head -4 | paste -sd' ') ...)" ||
	not_ok "GetEffectiveNodes order" "$got"
for i in $(seq 1 12); do rmdir "$scratch/alice/order/s$i"; done
rmdir "$scratch/alice/order"

# a broken reload keeps the kernel as it is; a restart keeps the owner's changes
before=$(ksnap)
cp "$D/c.conf" "$D/good.conf"
printf '[cgroup]\npath = /alice\nsubtree-control = +nosuch\n' >>"$D/c.conf"
ro=(--config "$D/c.conf" --config-dir "$D/none" --cgroup-root "$scratch" --state-directory "$D/state")
out=$("$BUS_ENV_CGBYPASSD" "${ro[@]}" --check-config 2>&1)
[ $? -eq 1 ] && [[ $out == *"$D/c.conf:"*"nosuch"* ]] && [ "$before" = "$(ksnap)" ] &&
	ok "--check-config beside the running daemon names the problem, reads the kernel, changes nothing" ||
	not_ok "--check-config beside the daemon" "$out"
out=$("$BUS_ENV_CGBYPASSD" "${ro[@]/c.conf/good.conf}" --plan 2>&1)
[ $? -eq 0 ] && [ -z "$out" ] && [ "$before" = "$(ksnap)" ] &&
	ok "--plan beside the running daemon: in sync, nothing changed" || not_ok "--plan beside the daemon" "$out"
# a limit the scan leaves unread (a childless cgroup's) is read before planning a mkdir below it
echo 0 >"$scratch/alice/job/cgroup.max.depth"
cp "$D/good.conf" "$D/deep.conf"
printf '[cgroup]\npath = /alice/job/deep\n' >>"$D/deep.conf"
out=$("$BUS_ENV_CGBYPASSD" "${ro[@]/c.conf/deep.conf}" --plan 2>&1)
[ $? -ne 0 ] && [[ $out == *"/alice/job/deep"* ]] && [[ $out == *"cgroup.max.depth"* ]] && [ ! -e "$scratch/alice/job/deep" ] &&
	[ "$before" = "$(ksnap)" ] &&
	ok "--plan: a mkdir below a cgroup whose cgroup.max.depth is 0 is refused as the kernel would" ||
	not_ok "--plan below a limit" "$out"
echo max >"$scratch/alice/job/cgroup.max.depth"
out=$("$client" call Reload 2>&1)
[[ $out == "org.cgbypass1.Error.ConfigInvalid: "*"$D/c.conf:"* ]] && [ "$before" = "$(ksnap)" ] &&
	ok "Reload with a broken configuration: ConfigInvalid, the kernel unchanged" || not_ok "broken reload" "$out"
cp "$D/good.conf" "$D/c.conf"
bus_env_stop_daemon
[ "$BUS_ENV_DAEMON_STATUS" = 0 ] && ok "SIGTERM: exit 0" || not_ok "exit $BUS_ENV_DAEMON_STATUS"
start || not_ok "restart"
[ "$before" = "$(ksnap)" ] && [ "$(key /alice/job controllers)" = "$X" ] && [ "$(key /alice subtree_control)" = "#$X" ] &&
	ok "a restart keeps the owner's changes in the kernel" || not_ok "restart" "$(ksnap)"
# the record is part of the transaction: the state directory read-only (a read-only
# bind mount over it), the kernel's files byte-identical after each refused change
kdump() { # every cgroup's directory and files, and the kernel's control files' contents
	(cd "$scratch" && find . -printf '%p %y\n' | LC_ALL=C sort &&
		find . \( -name cgroup.subtree_control -o -name cgroup.controllers \) -print | LC_ALL=C sort |
		while read -r f; do printf '== %s ' "$f"; cat "$f"; done)
}
view() {
	local c
	for c in / /alice /alice/job /alice/busy; do "$client" call GetCgroup "$c" 2>&1; done
}
if mount --bind "$D/state" "$D/state" 2>/dev/null && mount -o remount,bind,ro "$D/state" 2>/dev/null; then
	for call in "$alice EnableController /alice/busy $X" "$alice SetSubtreeControl /alice/job +$X" \
		"root BypassController /alice/job $X" "root EnableController /alice/busy $X"; do
		set -- $call
		who=$1
		shift
		vbefore=$(view)
		before=$(kdump)
		if [ "$who" = root ]; then
			out=$("$client" call "$@" 2>&1)
			st=$?
		else
			as "$who" "$@"
		fi
		[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.Failed: "*"taken back: the hierarchy is as before"* ]] &&
			[ "$before" = "$(kdump)" ] && [ "$vbefore" = "$(view)" ] &&
			ok "read-only state directory: ${who/$alice/owner} $*: taken back, the kernel's files as before" ||
			not_ok "read-only state directory: $who $*" "$out $(diff <(echo "$before") <(kdump) | head)"
	done
	umount "$D/state"
else
	not_ok "cannot bind-mount the state directory read-only"
fi

kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
bus_env_stop_daemon
! grep -qi sanitizer "$BUS_ENV_DAEMON_LOG" && ok "no sanitizer report" ||
	not_ok "sanitizer" "$(grep -i -A8 sanitizer "$BUS_ENV_DAEMON_LOG")"

bus_env_done
