#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# What an owner can do to the sim's files in its own delegation, against
# cgbypassd on a private bus with the real polkitd (issue 13): swap a file
# with a FIFO while root reloads (the daemon must never block), make a
# directory of the sim's old temporary name, leave files, FIFOs, sockets,
# symlinks and odd names (reported, left alone, never fatal to a reload or
# a start), keep its own cgroup's files after a change; and root deleting
# the sim root (Reload says so). TAP.
#
# usage: test-sim-hostile.sh SRCDIR CGBYPASSD
set -uo pipefail

src=${1:?source dir}
daemon=${2:?cgbypassd}
# shellcheck source=tests/bus/bus-env.sh
. "$src/tests/bus/bus-env.sh"
bus_env_init "$src" "$daemon"
bus_env_require_polkitd
bus_env_polkit_setup alice

D=$BUS_ENV_DIR
root=$D/root
own=$root/srv/alice
bus_env_config srv-owner.conf name=alice user="$alice" || { echo "Bail out! the configuration"; exit 1; }
start() {
	bus_env_start_daemon --backend sim --config "$D/c.conf" --config-dir "$D/none" \
		--cgroup-root "$root" --state-directory "$D/state"
}
call() { # USER METHOD SIGNATURE ARGS...: busctl with a deadline, so that a blocked daemon fails the test
	local u=$1
	shift
	if [ "$u" = root ]; then
		busctl --system --timeout=20 call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager "$@"
	else
		bus_env_as "$u" busctl --system --timeout=20 call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager "$@"
	fi
}
start || { echo "Bail out! cgbypassd did not start"; exit 1; }

# the owner's own cgroup, adopted by its first request
bus_env_as "$alice" mkdir "$own/c1"
check "the owner bypasses cpu and io below its delegation" call "$alice" SetSubtreeControl ss /srv/alice '#cpu #io'

# item 8: a change rewrites c1's files; the kernel keeps the creator as their owner
check "the owner re-enables io in its own cgroup" call "$alice" EnableController ss /srv/alice/c1 io
owners=$(stat -c '%U %n' "$own/c1/cgroup.controllers" "$own/c1/io.max" "$own/c1/cgroup.procs" 2>&1)
[ "$(printf '%s\n' "$owners" | grep -c "^$alice ")" -eq 3 ] &&
	ok "after the change, the owner still owns its cgroup's files, and the new io.max" ||
	not_ok "a change gave the owner's cgroup files to root" "$owners"

# item 4: a directory of the sim's old temporary name
bus_env_as "$alice" mkdir "$own/.cgb-tmp"
check "the owner's request adopts its '.cgb-tmp'" call "$alice" BypassController ss /srv/alice/c1 io
check "root's change above it rewrites the owner's delegation root" call root SetSubtreeControl ss /srv '#cpu #io -memory'
check "and back" call root SetSubtreeControl ss /srv '#cpu #io +memory'
check "Reload with it" call root Reload

# item 5: what an owner leaves in its delegation
bus_env_as "$alice" sh -c "echo mine >'$own/notes.txt' && mkfifo '$own/pipe' && ln -s /etc/shadow '$own/link' &&
	echo x >'$own/odd
name' && mkdir '$own/my dir' && echo y >'$own/my dir/x'" &&
	bus_env_as "$alice" python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('$own/sock')" ||
	not_ok "the owner could not leave its files"
check "Reload with an owner's files, FIFO, socket, symlink and odd names in its delegation" call root Reload
{ bus_env_stop_daemon TERM; } 2>/dev/null
if start; then
	ok "cgbypassd starts with them"
else
	not_ok "cgbypassd does not start with an owner's files in its delegation" "$(tail -n 5 "$BUS_ENV_DAEMON_LOG")"
	start
fi
[ "$(cat "$own/notes.txt")" = mine ] && [ -p "$own/pipe" ] && [ -S "$own/sock" ] && [ -L "$own/link" ] &&
	[ "$(cat "$own/my dir/x")" = y ] && ok "they are left alone" || not_ok "an owner's file was touched"
grep -q "Left alone in /srv/alice: 'notes.txt'" "$BUS_ENV_DAEMON_LOG" && grep -q "'odd?name'" "$BUS_ENV_DAEMON_LOG" &&
	ok "and reported, odd names quoted" || not_ok "the owner's files are not reported" "$(grep -i left "$BUS_ENV_DAEMON_LOG")"

# item 2: a file of the delegation root swapped with a FIFO, over and over, while root reloads
bus_env_as "$alice" mkfifo "$own/fifo"
bus_env_as "$alice" python3 -c "
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = b'$own/cgroup.events', b'$own/fifo'
end = time.time() + 60
while time.time() < end and os.path.exists('$D/swapping'):
    libc.renameat2(-100, a, -100, b, 2)    # AT_FDCWD, RENAME_EXCHANGE
" &
swapper=$!
touch "$D/swapping"
answered=0
for _ in $(seq 1 40); do
	out=$(call root Reload 2>&1) || break
	answered=$((answered + 1))
done
rm -f "$D/swapping"
wait "$swapper"
[ $answered -eq 40 ] && ok "40 reloads answered while the owner swapped a file with a FIFO" ||
	not_ok "reload $((answered + 1)) of 40 got no answer while the owner swapped a file with a FIFO" "$out"
check "cgbypassd still answers the owner" call "$alice" EnableController ss /srv/alice/c1 cpu

# item 9: the sim root deleted
rm -rf "$root"
! out=$(call root Reload 2>&1) && [[ $out == *"was deleted"* ]] &&
	ok "Reload after the sim root was deleted fails and says so" ||
	not_ok "Reload after the sim root was deleted" "$out"
check "cgbypassd still answers" call root GetCgroup s /srv
bus_env_stop_daemon TERM
bus_env_done
