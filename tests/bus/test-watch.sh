#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# Owners' mkdir(2) and rmdir(2) in their delegations are seen when they
# happen (watch.c): on the sim, and on the host's cgroup2 with the emulated
# backend, the owner's mkdir yields CgroupChanged for the new cgroup with no
# call to the daemon in between; so do a child made in it at once (before
# its watch could be there), a deep mkdir -p, and rmdir. The latencies are
# printed as figures (syscall to signal); the assertion is only that the
# signal comes, within 5 s. The emulated part skips without a writable
# cgroup2 mount (CGB_TEST_CGROUP2: the first mount; CGB_TEST_CONTROLLER: the
# first controller it offers). TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }
bus_env_add_user alice || { echo "Bail out! useradd failed"; exit 1; }
D=$BUS_ENV_DIR
scratch=
watch_pid=
added=

cleanup() {
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	if [ -n "$scratch" ] && [ -d "$scratch" ]; then
		find "$scratch" -depth -type d -exec rmdir {} \; 2>/dev/null
		[ -d "$scratch" ] && echo "# could not remove $scratch" >&2
	fi
	[ -n "$added" ] && echo "-$added" >"$mnt/cgroup.subtree_control" 2>/dev/null
	bus_env_cleanup
}
trap cleanup EXIT

# await OP DIR CGROUP: as the owner, OP DIR and wait for CgroupChanged CGROUP
await() {
	local what=$1 out
	shift
	if out=$(bus_env_as "$alice" "$client" await "$@" 5 2>&1); then
		ok "$BACKEND: $what: CgroupChanged $3 without a call (${out#latency_ms } ms)"
		echo "# latency $BACKEND $2 $3: ${out#latency_ms } ms"
	else
		not_ok "$BACKEND: $what: CgroupChanged $3 without a call" "$out"
	fi
}

# run BACKEND ROOT X: one daemon on ROOT, the delegation /alice with controller X
run() {
	BACKEND=$1
	local root=$2 x=$3 n=0
	bus_env_config alice.conf backend="$BACKEND" x="$x" alice="$alice" || { not_ok "$BACKEND: the configuration"; return; }
	rm -rf "$D/state"
	: >"$BUS_ENV_DAEMON_LOG"
	if ! bus_env_start_daemon --config "$D/c.conf" --config-dir "$D/none" --cgroup-root "$root" \
		--state-directory "$D/state"; then
		not_ok "$BACKEND: the daemon starts"
		return
	fi
	ok "$BACKEND: the daemon starts with the delegation /alice"

	await "the owner's mkdir" mkdir "$root/alice/c1" /alice/c1
	# the new cgroup's watch is added after the refresh; a child made right away is seen all the same
	await "a child in the new cgroup" mkdir "$root/alice/c1/g" /alice/c1/g
	out=$("$client" call GetCgroup /alice/c1/g 2>&1)
	[[ $out == ok* ]] && ok "$BACKEND: the daemon knows the new cgroup" ||
		not_ok "$BACKEND: the daemon knows the new cgroup" "$out"

	# mkdir -p: each level is made before the daemon can watch it
	"$client" watch 60 >"$D/signals" 2>&1 &
	watch_pid=$!
	bus_env_wait_for 10 grep -q '^ready$' "$D/signals"
	bus_env_as "$alice" mkdir -p "$root/alice/p/q/r/s"
	bus_env_wait_for 5 grep -qx /alice/p/q/r/s "$D/signals" &&
		ok "$BACKEND: mkdir -p of four levels: CgroupChanged for the deepest" ||
		not_ok "$BACKEND: mkdir -p of four levels: CgroupChanged for the deepest" "$(cat "$D/signals")"
	# a burst of 50 mkdirs: every one is signalled, in few refreshes
	for ((i = 0; i < 50; i++)); do bus_env_as "$alice" mkdir "$root/alice/b$i"; done
	bus_env_wait_for 5 grep -qx /alice/b49 "$D/signals"
	n=$(grep -c '^/alice/b[0-9]*$' "$D/signals")
	[ "$n" = 50 ] && ok "$BACKEND: a burst of 50 mkdirs: 50 CgroupChanged" ||
		not_ok "$BACKEND: a burst of 50 mkdirs: 50 CgroupChanged" "got $n"
	kill "$watch_pid" 2>/dev/null
	wait "$watch_pid" 2>/dev/null
	watch_pid=

	# a sim's cgroup directory holds plain files, which go first
	[ "$BACKEND" = sim ] && bus_env_as "$alice" find "$root/alice/c1/g" -type f -delete
	await "the owner's rmdir" rmdir "$root/alice/c1/g" /alice/c1/g
	out=$("$client" call GetCgroup /alice/c1/g 2>&1)
	[[ $out == *NoSuchCgroup* ]] && ok "$BACKEND: the removed cgroup is gone from the daemon's view" ||
		not_ok "$BACKEND: the removed cgroup is gone from the daemon's view" "$out"

	# a directory made by someone else outside any delegation is not watched
	if [ "$BACKEND" = sim ]; then
		mkdir "$root/outside"
		sleep 0.5
		! grep -q 'outside' "$BUS_ENV_DAEMON_LOG" && ok "$BACKEND: no adoption outside the delegations" ||
			not_ok "$BACKEND: no adoption outside the delegations" "$(cat "$BUS_ENV_DAEMON_LOG")"
	fi
	bus_env_daemon_alive && ok "$BACKEND: the daemon is still running" ||
		not_ok "$BACKEND: the daemon is still running" "$(cat "$BUS_ENV_DAEMON_LOG")"
	bus_env_stop_daemon
	[ "$BUS_ENV_DAEMON_STATUS" = 0 ] && ok "$BACKEND: the daemon exits cleanly" ||
		not_ok "$BACKEND: the daemon exits cleanly" "status $BUS_ENV_DAEMON_STATUS: $(cat "$BUS_ENV_DAEMON_LOG")"
}

mkdir -p "$D/none" "$D/sim"
run sim "$D/sim" memory

mnt=${CGB_TEST_CGROUP2:-$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)}
if [ -n "$mnt" ] && [ -w "$mnt/cgroup.subtree_control" ]; then
	X=${CGB_TEST_CONTROLLER:-$(awk '{ print $1 }' "$mnt/cgroup.controllers")}
	# the scratch cgroup has X when the mount's root enables it (restored after)
	if [ -n "$X" ] && ! grep -qw "$X" "$mnt/cgroup.subtree_control"; then
		echo "+$X" >"$mnt/cgroup.subtree_control" && added=$X
	fi
	scratch=$mnt/cgb-watch-$$
	if [ -n "$X" ] && mkdir "$scratch"; then
		run emulated "$scratch" "$X"
		find "$scratch" -depth -type d -exec rmdir {} \; 2>/dev/null
	else
		ok "# SKIP emulated: cannot make $scratch"
	fi
else
	ok "# SKIP emulated: no writable cgroup2 mount"
fi
bus_env_done
