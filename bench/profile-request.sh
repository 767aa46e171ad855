#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2154 # alice comes from bus_env_add_user
#
# Instructions and system calls of cgbypassd per request: the setup of
# bench-bus.sh's part 1 (private bus, the real polkitd, sim on a tmpfs, state
# on disk, one owner with 32 cgroups), then one client's EnableController /
# BypassController loop on /srv/alice/c0, with the daemon either under
# callgrind (counters zeroed before the loop, dumped after it) or with
# strace -f -c attached for the loop only. Counts, not time: it may run
# while timing benchmarks run elsewhere.
#
# It runs in a mount namespace of its own, with an empty directory over
# /etc/polkit-1/rules.d: the rule that lets the owner in is never seen by
# another polkitd on the machine (which would reload its rules).
#
# usage: profile-request.sh SRCDIR CGBYPASSD BENCH-BUS-CLIENT callgrind|strace OUTDIR [CALLS]
#   callgrind: OUTDIR/callgrind.out.loop (callgrind_annotate it), Ir/call printed
#   strace:    OUTDIR/strace-c.txt, syscalls/call printed
#   trace:     OUTDIR/strace.txt, every system call of the loop
#   perf:      OUTDIR/perf.data, the daemon's cpu-clock samples during the loop (kernel
#              symbols are reliable here; user ones less so in a VM without counters)
#   cpu:       the daemon's user and system CPU time per call (/proc/PID/stat; a timing
#              figure: run it on a quiet machine)
# CGB_PROFILE_CLIENTS=K: K clients, each on its own cgroup (bench-bus's part
# 1b), CALLS calls each; the default is one client on c0.
set -uo pipefail

src=$(realpath "${1:?source dir}")
daemon=$(realpath "${2:?cgbypassd}")
client=$(realpath "${3:?bench-bus-client}")
mode=${4:?callgrind or strace}
out=${5:?output directory}
CALLS=${6:-400}

if [ -z "${CGB_PROFILE_NS:-}" ]; then
	exec env CGB_PROFILE_NS=1 unshare -m --propagation private "$(realpath "$0")" "$src" "$daemon" "$client" "$mode" "$out" "$CALLS"
fi
say() { printf '%s\n' "$*"; }
die() { say "profile-request: $*" >&2; exit 1; }
mkdir -p "$out"
out=$(realpath "$out")

# shellcheck source=tests/bus/bus-env.sh
. "$src/tests/bus/bus-env.sh"
# shellcheck source=tests/tap.sh
. "$src/tests/tap.sh"
# shellcheck source=bench/request-conf.sh
. "$src/bench/request-conf.sh"
bus_env_init "$src" "$daemon"
D=$BUS_ENV_DIR
mkdir -p "$D/rules" "$D/fs" /etc/polkit-1/rules.d
mount --bind "$D/rules" /etc/polkit-1/rules.d || die "cannot hide /etc/polkit-1/rules.d"
mount -t tmpfs -o size=256m,mode=0755 cgb-profile "$D/fs" || die "cannot mount a tmpfs"
trap 'bus_env_cleanup_all' EXIT
bus_env_cleanup_all() { bus_env_stop_daemon; umount -l "$D/fs"; bus_env_cleanup; }

bus_env_start_bus || die "the private bus did not start"
bus_env_install_policy || die "cannot install the polkit actions"
bus_env_add_user alice || die "useradd failed"
bus_env_allow_owner profile "$alice" || die "cannot add the polkit rule"
bus_env_start_polkit || die "polkitd did not start"

request_conf "$D/c1.conf" "$alice" cpu
sim=$D/fs/sim1
mkdir -p "$D/none"
case $mode in
callgrind)
	cat >"$D/daemon" <<-SH
	#!/bin/sh
	exec valgrind --tool=callgrind --callgrind-out-file=$out/callgrind.out.%p --vgdb=yes $daemon "\$@"
	SH
	;;
strace | trace | cpu | perf) printf '#!/bin/sh\nexec %s "$@"\n' "$daemon" >"$D/daemon" ;;
*) die "mode: callgrind, strace, trace, perf or cpu" ;;
esac
chmod +x "$D/daemon"
BUS_ENV_CGBYPASSD=$D/daemon
bus_env_start_daemon --config "$D/c1.conf" --config-dir "$D/none" --cgroup-root "$sim" \
	--state-directory "$D/state" || die "cgbypassd did not start"
call() {
	bus_env_as "$alice" busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager "$@" >/dev/null
}
call SetSubtreeControl ss /srv/alice "#cpu" || die "SetSubtreeControl failed"
for i in $(seq 0 31); do bus_env_as "$alice" mkdir "$sim/srv/alice/c$i" || die "mkdir"; done
busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager GetEffectiveTree s cpu >/dev/null ||
	die "GetEffectiveTree failed"
CLIENTS=${CGB_PROFILE_CLIENTS:-1}
run() {
	bus_env_as "$alice" "$client" run --dest org.cgbypass1 --method change --arg cpu --cgroup-fmt '/srv/alice/c%u' \
		--warmup 0 --iterations "$1" --clients "$CLIENTS"
}
run 50 >/dev/null || die "warm-up failed"
# under_strace ARGS...: the loop with strace ARGS attached to the daemon for it alone
under_strace() {
	strace -f "$@" -p "$BUS_ENV_DAEMON_PID" &
	local spid=$!
	sleep 1
	res=$(run "$CALLS") || die "the loop failed"
	kill -INT "$spid"
	wait "$spid"
	say "$res"
}
case $mode in
callgrind)
	callgrind_control -z "$BUS_ENV_DAEMON_PID" >/dev/null || die "callgrind_control -z failed"
	res=$(run "$CALLS") || die "the loop failed"
	callgrind_control -d loop "$BUS_ENV_DAEMON_PID" >/dev/null || die "callgrind_control -d failed"
	sleep 1
	f=$(ls -t "$out"/callgrind.out.*.loop* 2>/dev/null | head -1)
	[ -n "$f" ] || f=$(ls -t "$out"/callgrind.out.* | head -1)
	mv "$f" "$out/callgrind.out.loop"
	ir=$(callgrind_annotate "$out/callgrind.out.loop" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
	say "$res"
	say "calls=$((CALLS * CLIENTS)) Ir=$ir Ir_per_call=$((ir / CALLS / CLIENTS))"
	;;
strace)
	under_strace -c -o "$out/strace-c.txt"
	n=$(awk '$NF == "total" { print $4 }' "$out/strace-c.txt")
	say "calls=$((CALLS * CLIENTS)) syscalls=$n per_call=$(awk -v n="$n" -v c="$((CALLS * CLIENTS))" 'BEGIN { printf "%.1f", n / c }')"
	;;
trace)
	under_strace -s 80 -o "$out/strace.txt"
	;;
perf)
	perf record -q -e cpu-clock -g -o "$out/perf.data" -p "$BUS_ENV_DAEMON_PID" &
	ppid=$!
	sleep 1
	res=$(run "$CALLS") || die "the loop failed"
	kill -INT "$ppid"
	wait "$ppid"
	say "$res"
	;;
cpu)
	# fields 14 and 15 of /proc/PID/stat (the name in field 2 has no spaces here), in clock ticks
	ticks() { awk '{ print $14, $15 }' "/proc/$BUS_ENV_DAEMON_PID/stat"; }
	read -r u0 s0 < <(ticks)
	res=$(run "$CALLS") || die "the loop failed"
	read -r u1 s1 < <(ticks)
	hz=$(getconf CLK_TCK)
	n=$((CALLS * CLIENTS))
	say "$res"
	say "calls=$n user_us_per_call=$(((u1 - u0) * 1000000 / hz / n)) sys_us_per_call=$(((s1 - s0) * 1000000 / hz / n))"
	;;
esac
bus_env_stop_daemon
rm -f "$out"/callgrind.out.[0-9]*
