#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# The record is part of the transaction (issue 13, item 1): with the state
# directory full (a small tmpfs, filled) and read-only (a read-only bind
# mount over it), every entry point that changes the hierarchy -- an
# owner's and root's EnableController, BypassController and
# SetSubtreeControl, Reload, --apply-once -- leaves the hierarchy
# byte-identical to before (a dump of every cgroup's files, their owners and
# modes, and the daemon's own GetCgroup answers) and says so: Error.Failed
# "taken back: the hierarchy is as before", exit status 1. Then, with the
# state directory writable again, the same change is made and recorded.
# sim backend, private bus, the real polkitd. TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
bus_env_require_polkitd
command -v mount >/dev/null || bus_env_skip "mount is not installed"
D=$BUS_ENV_DIR
state=$D/state
mkdir -p "$state" "$D/conf.d"
mount -t tmpfs -o size=256k,mode=0755 cgb-test-state "$state" 2>/dev/null || bus_env_skip "cannot mount a tmpfs"
unmount_state() {
	while mountpoint -q "$state"; do umount "$state" || break; done
}
trap 'unmount_state; bus_env_cleanup' EXIT
bus_env_polkit_setup alice bob

root=$D/root
bus_env_config sim-srv.conf owners.conf alice="$alice" bob="$bob" || { echo "Bail out! the configuration"; exit 1; }
bus_env_start_daemon --config "$D/c.conf" --config-dir "$D/conf.d" --cgroup-root "$root" \
	--state-directory "$state" || { echo "Bail out! cgbypassd did not start"; exit 1; }

# as USER ARGS...: bus-client call as USER (root: directly); $out, $st
as() { bus_env_client_as "$1" call "${@:2}"; }
# dump DIR: every cgroup's files with type and mode, then their contents. Owners are
# left out until the sim keeps an owner-made child's files its creator's after a
# write (issue 13 item 8, another branch); then add %U:%G.
dump() {
	(
		cd "$1" || exit 1
		find . -printf '%p %y %M\n' | LC_ALL=C sort
		# every line of every file, with its file and line number: one process, not one per file
		grep -rn --binary-files=text "" . | LC_ALL=C sort
	)
}
# the daemon's own view of the cgroups the calls touch
view() {
	local c
	for c in / /A /srv /srv/alice /srv/alice/c1 /srv/alice/c2; do
		"$client" call GetCgroup "$c" 2>&1
	done
}

as "$alice" SetSubtreeControl /srv/alice '#cpu #io'
[ $st -eq 0 ] || { echo "Bail out! the owner's setup failed: $out"; exit 1; }
bus_env_as "$alice" mkdir "$root/srv/alice/c1" "$root/srv/alice/c2"
as "$alice" EnableController /srv/alice/c2 io
[ $st -eq 0 ] || { echo "Bail out! the owner's setup failed: $out"; exit 1; }

fill() {
	# the journal's zeros ahead of its commits take commits on a full disk (change-journal.h):
	# full here is full with them used up (no NUL in what it committed)
	local j=$state/client-changes.journal
	[ -f "$j" ] && truncate -s "$(tr -d '\000' <"$j" | wc -c)" "$j"
	# the filler may end short of the last page; a second, byte-sized one takes the rest
	dd if=/dev/zero of="$state/fill" bs=4k >/dev/null 2>&1
	dd if=/dev/zero of="$state/fill2" bs=1 >/dev/null 2>&1
	true
}
unfill() {
	rm -f "$state/fill" "$state/fill2"
}
make_ro() {
	mount --bind "$state" "$state" && mount -o remount,bind,ro "$state"
}
make_rw() {
	umount "$state"
}

# attempt MODE WHO DESCRIPTION ARGS...: refused, taken back, the hierarchy and the daemon's view unchanged
attempt() {
	local mode=$1 who=$2 d=$3 before view_before
	shift 3
	view_before=$(view)     # first: a cgroup the owner made is adopted (rendered) here, not by the change
	before=$(dump "$root")
	as "$who" "$@"
	[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.Failed: "*"could not record the change"*"taken back: the hierarchy is as before"* ]] &&
		ok "$mode: $d: Error.Failed, taken back" || not_ok "$mode: $d: the answer" "$out"
	[ "$(dump "$root")" = "$before" ] && ok "$mode: $d: the hierarchy is byte-identical to before" ||
		not_ok "$mode: $d: the hierarchy changed" "$(diff <(echo "$before") <(dump "$root") | head -20)"
	[ "$(view)" = "$view_before" ] && ok "$mode: $d: GetCgroup answers as before" ||
		not_ok "$mode: $d: the daemon's view changed" "$(diff <(echo "$view_before") <(view) | head -20)"
}

# the drop-in of Reload and --apply-once: it makes two cgroups and writes the subtree_control of one
dropin() {
	printf '[cgroup]\npath = /B\ncreate = yes\nsubtree-control = +memory\n\n[cgroup]\npath = /B/new\ncreate = yes\n' \
		>"$D/conf.d/50-b.conf"
}

# reload_attempt MODE: the drop-in; Reload refused, taken back
reload_attempt() {
	local mode=$1 before
	before=$(dump "$root")
	dropin
	as root Reload
	[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.Failed: "*"could not be recorded"*"taken back: the hierarchy is as before"* ]] &&
		ok "$mode: Reload: Error.Failed, taken back" || not_ok "$mode: Reload: the answer" "$out"
	[ "$(dump "$root")" = "$before" ] && ok "$mode: Reload: the hierarchy is byte-identical to before" ||
		not_ok "$mode: Reload: the hierarchy changed" "$(diff <(echo "$before") <(dump "$root") | head -20)"
	rm -f "$D/conf.d/50-b.conf"
}

calls() {
	local mode=$1
	attempt "$mode" "$alice" "owner's EnableController" EnableController /srv/alice/c1 cpu
	attempt "$mode" "$alice" "owner's BypassController" BypassController /srv/alice/c2 io
	attempt "$mode" "$alice" "owner's SetSubtreeControl" SetSubtreeControl /srv/alice '+cpu #io'
	attempt "$mode" root "root's EnableController in a delegation" EnableController /srv/alice/c1 io
	attempt "$mode" root "root's SetSubtreeControl of a configured cgroup" SetSubtreeControl /srv '#cpu +io +memory'
	attempt "$mode" root "root's BypassController" BypassController /srv/alice/c2 io
	reload_attempt "$mode"
}

fill
calls full
unfill
make_ro || { echo "Bail out! cannot bind-mount the state directory read-only"; exit 1; }
calls read-only
make_rw

# the state directory writable again: the same change is made and recorded
as "$alice" EnableController /srv/alice/c1 cpu
[ $st -eq 0 ] && grep -qw cpu "$root/srv/alice/c1/cgroup.controllers" &&
	ok "writable again: the owner's change is applied" || not_ok "writable again" "$out"
# in the snapshot, or in a commit of the journal after it (change-journal.h); either may be absent
recorded() { cat "$state/client-changes" "$state/client-changes.journal" 2>/dev/null || true; }
grep -qE '^([0-9]+ [0-9a-f]{16} )?change /srv/alice/c1 ' <<<"$(recorded)" &&
	ok "writable again: and recorded" ||
	not_ok "not recorded" "$(cat "$state/client-changes" "$state/client-changes.journal" 2>&1 | tr -s ' ')"
bus_env_stop_clean "clean exit, no sanitizer report"

# --apply-once: a configuration that makes a cgroup and changes another
dropin
apply_once() {
	local mode=$1 before
	before=$(dump "$root")
	out=$("$daemon" --apply-once --config "$D/c.conf" --config-dir "$D/conf.d" --cgroup-root "$root" \
		--state-directory "$state" 2>&1)
	st=$?
	# read-only: it cannot even take the state directory's lock, and stops before it plans
	[ $st -eq 1 ] && [[ $out == *"the hierarchy is as before"* || $out == *"backend.lock': Read-only"* ]] &&
		ok "$mode: --apply-once exits 1, as before" ||
		not_ok "$mode: --apply-once: status $st" "$out"
	[ "$(dump "$root")" = "$before" ] && ok "$mode: --apply-once: the hierarchy is byte-identical to before" ||
		not_ok "$mode: --apply-once changed the hierarchy" "$(diff <(echo "$before") <(dump "$root") | head -20)"
}
fill
apply_once full
unfill
make_ro && apply_once read-only
make_rw
out=$("$daemon" --apply-once --config "$D/c.conf" --config-dir "$D/conf.d" --cgroup-root "$root" \
	--state-directory "$state" 2>&1)
st=$?
[ $st -eq 0 ] && [ -d "$root/B/new" ] && ok "writable again: --apply-once applies" || not_ok "--apply-once" "$out"

bus_env_done
