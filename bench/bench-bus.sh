#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2154 # alice comes from bus_env_add_user
#
# cgbypassd on the bus, measured against a baseline it could not beat: on a
# private system-like bus with the real polkitd (tests/bus/bus-env.sh), an
# unprivileged delegation owner calls
#
#   1. request path: EnableController and BypassController, alternately, on
#      its own delegated cgroup (sim backend, cgroup directory on tmpfs), so
#      every call is one real cgroup write (+cpu / #cpu to the cgroup's
#      cgroup.controllers); against bench/baseline-service, which asks polkit
#      the same question the same way and makes that one write(2). One
#      client: p50/p99 latency; 32 clients, each on its own cgroup: calls/s;
#      with each, the CPU time per call of the service, polkitd, dbus-daemon.
#      The one-client baseline also makes its record durable: the same bytes
#      to a small file in the directory where cgbypassd's state is, and one
#      fdatasync() of it (--sync-file); the 32-client one does not (the
#      throughput target: group commit must hide the fsync).
#      1c: the same call with 100, 10,002 and 100,002 managed cgroups
#      (cgbypassd only; 100 measured before and after the others).
#   2. read path: GetCgroup and GetEffectiveTree on the seeds' documentation
#      example (examples/demo.conf.in, G delegated and re-enabled) against the
#      baseline's bare Echo(s)->(s); 1 and 4 clients; p50. 2b: the same after G's owner made
#      12,000 cgroups in it (GetCgroup of one of them).
#   3. memory and start-up: VmRSS/VmHWM idle with that small configuration,
#      after the request load, and with 10,000 managed cgroups; the time from
#      exec to READY=1 on a NOTIFY_SOCKET this script provides, with 1,000
#      cgroups, from an empty directory (cold) and over its own state (warm).
#
# Baseline and daemon runs are interleaved A B B A A B ... (each pair in the
# other order than the one before, so linear drift cancels) and each figure
# is the median over the rounds. Prints figures and the targets; asserts
# nothing. Needs root (private bus, polkitd, a test user, a tmpfs mount).
#
# usage: bench-bus.sh SRCDIR CGBYPASSD BASELINE-SERVICE BENCH-BUS-CLIENT [BUILDTYPE OPTIMIZATION SANITIZE]
#   (meson compile -C BUILD bench-bus passes them all)
# Environment (defaults in brackets):
#   CGB_BENCH_ROUNDS [5]       A/B pairs per figure
#   CGB_BENCH_ITERATIONS [2000] timed calls per one-client request run (after CGB_BENCH_WARMUP [200])
#   CGB_BENCH_DURATION [5]     seconds per 32-client run; CGB_BENCH_CLIENTS [32]
#   CGB_BENCH_READ_ITERATIONS [5000] timed calls per client per read run
#   CGB_BENCH_CONTROLLER [cpu] the controller switched in part 1
#   CGB_BENCH_STATE [disk]     where cgbypassd's state directory is: disk (below /tmp, as
#                              /var/lib would be) or tmpfs (takes fsync out of the figures)
#   CGB_BENCH_STARTUP_RUNS [5] start-ups per figure in part 3
#   CGB_BENCH_SCALE_ITERATIONS [200] timed calls per size in part 1c
#   CGB_BENCH_SCALE_SIZES [100,10000,100000] managed cgroups in part 1c (the first is the reference)
#   CGB_BENCH_SCALE_START_WAIT [600] seconds part 1c waits for each daemon to reach the bus
#   CGB_BENCH_PERF_DIR         perf record --call-graph dwarf of the daemon there: parts 1a, 1b (all
#                              rounds) and each run of 1c (a profile, not a measurement)
#   CGB_BENCH_SCALE_FS [tmpfs] where part 1c's sim directories are: tmpfs (the one of part 1, by default
#                              too small for 100,002 cgroups: ~24 files each, a page each) or disk (below
#                              /tmp, every size; making and removing 2.4 million files there takes many
#                              minutes)
#   CGB_BENCH_TMPFS_SIZE [4g]  that tmpfs's size= (16g holds 100,002 cgroups' files, on a machine with the RAM)
#   CGB_BENCH_RELOAD_SIZE [10000] managed cgroups in part 1d (Reload calls together)
#   CGB_BENCH_PARTS [request,scale,reload,read,memory]
#   CGB_BENCH_READ_OWNER_CGROUPS [12000] part 2b: cgroups the owner of G makes (0: no part 2b)
#   CGB_BENCH_READ_BIG_ITERATIONS [READ_ITERATIONS] timed calls per client per read run in part 2b
#   CGB_BENCH_ANY_BUILD=1      measure even a sanitized or unoptimized build
#   BUS_ENV_KEEP=DIR           keep the logs (cgbypassd, dbus-daemon, polkitd)
set -uo pipefail

src=${1:?source dir}
daemon=${2:?cgbypassd}
baseline=${3:?baseline-service}
client=${4:?bench-bus-client}
buildtype=${5:-?}
optimization=${6:-?}
sanitize=${7:-?}

ROUNDS=${CGB_BENCH_ROUNDS:-5}
ITER=${CGB_BENCH_ITERATIONS:-2000}
WARMUP=${CGB_BENCH_WARMUP:-200}
DURATION=${CGB_BENCH_DURATION:-5}
CLIENTS=${CGB_BENCH_CLIENTS:-32}
READ_ITER=${CGB_BENCH_READ_ITERATIONS:-5000}
X=${CGB_BENCH_CONTROLLER:-cpu}
STATE_ON=${CGB_BENCH_STATE:-disk}
STARTUP_RUNS=${CGB_BENCH_STARTUP_RUNS:-5}
SCALE_ITER=${CGB_BENCH_SCALE_ITERATIONS:-200}
SCALE_SIZES=${CGB_BENCH_SCALE_SIZES:-100,10000,100000}
RELOAD_SIZE=${CGB_BENCH_RELOAD_SIZE:-10000}
SCALE_START_WAIT=${CGB_BENCH_SCALE_START_WAIT:-600}
SCALE_ON=${CGB_BENCH_SCALE_FS:-tmpfs}
TMPFS_SIZE=${CGB_BENCH_TMPFS_SIZE:-4g}
PARTS=${CGB_BENCH_PARTS:-request,scale,reload,read,memory}
READ_OWNER_CGROUPS=${CGB_BENCH_READ_OWNER_CGROUPS:-12000}
READ_BIG_ITER=${CGB_BENCH_READ_BIG_ITERATIONS:-$READ_ITER}

say() { printf '%s\n' "$*"; }
die() { say "bench-bus: $*" >&2; exit 1; }
has_part() { [[ ",$PARTS," == *",$1,"* ]]; }

# ---- the build: no sanitizer, optimized ----
asan=no
ldd "$daemon" 2>/dev/null | grep -qE 'libasan|libubsan|libtsan' && asan=yes
say "# bench-bus: cgbypassd $("$daemon" --version 2>/dev/null | awk '{print $2}'), build $(dirname "$daemon")"
say "#   buildtype=$buildtype optimization=$optimization b_sanitize=$sanitize; sanitizer runtime linked: $asan"
if [ "$asan" = yes ] || [ "$sanitize" != none ] || [[ "$optimization" == 0 || "$optimization" == g ]]; then
	if [ "${CGB_BENCH_ANY_BUILD:-0}" != 1 ]; then
		die "this build is sanitized or unoptimized; set one up with
  meson setup -Dbuildtype=release -Db_sanitize=none BUILD && meson compile -C BUILD bench-bus
(or CGB_BENCH_ANY_BUILD=1 to measure it anyway)"
	fi
	say "# WARNING: measuring a sanitized or unoptimized build (CGB_BENCH_ANY_BUILD=1)"
fi
say "#   source: $(git -C "$src" describe --always --dirty 2>/dev/null || echo '?'); $(nproc) CPUs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the private bus, polkitd, one owner ----
# shellcheck source=tests/bus/bus-env.sh
. "$src/tests/bus/bus-env.sh"
# shellcheck source=bench/request-conf.sh
. "$src/bench/request-conf.sh"
bus_env_init "$src" "$daemon"
[ -x /usr/lib/polkit-1/polkitd ] || [ -x /usr/libexec/polkitd ] || bus_env_skip "polkitd is not installed"
D=$BUS_ENV_DIR
FS=$D/fs
BASE_PID=
BASE_NAME=
mkdir -p "$FS"
mount -t tmpfs -o "size=$TMPFS_SIZE,mode=0755" cgb-bench-bus "$FS" || bus_env_skip "cannot mount a tmpfs"

stop_baseline() {
	if [ -n "$BASE_PID" ]; then
		kill "$BASE_PID" 2>/dev/null
		wait "$BASE_PID" 2>/dev/null
	fi
	BASE_PID=
}
bench_cleanup() {
	stop_baseline
	bus_env_stop_daemon
	umount "$FS" 2>/dev/null || umount -l "$FS" 2>/dev/null
	bus_env_cleanup
}
trap bench_cleanup EXIT

bus_env_start_bus || die "the private bus did not start"
bus_env_install_policy || die "cannot install the polkit actions"
bus_env_add_user alice || die "useradd failed"
bus_env_allow_owner bench "$alice" || die "cannot add the polkit rule"
bus_env_start_polkit || die "polkitd did not start"

state_dir() {
	if [ "$STATE_ON" = tmpfs ]; then echo "$FS/state-$1"; else echo "$D/state-$1"; fi
}

# start_baseline ROOT [SYNC-FILE]: baseline-service queued for org.cgbypass1 behind cgbypassd; BASE_NAME its
# unique name. With SYNC-FILE: one fdatasync() of it after each write.
start_baseline() {
	rm -f "$D/base.name"
	"$baseline" --root "$1" --name-file "$D/base.name" ${2:+--sync-file "$2"} 2>>"$D/baseline.log" &
	BASE_PID=$!
	bus_env_wait_for 10 test -s "$D/base.name" || die "baseline-service did not start: $(cat "$D/baseline.log")"
	BASE_NAME=$(cat "$D/base.name")
}

# owner_call METHOD SIG ARGS...: one call as the owner, through busctl
owner_call() {
	local method=$1
	shift
	bus_env_as "$alice" busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager "$method" "$@"
}

# run_client ARGS...: one bench-bus-client run as the owner; prints its result line
run_client() {
	local out
	out=$(bus_env_as "$alice" "$client" run "$@" 2>>"$D/client.log") || {
		say "bench-bus: client failed: $*" >&2
		tail -5 "$D/client.log" | sed 's/^/#   /' >&2
		return 1
	}
	grep -q ' errors=0 ' <<<"$out" || say "# errors in: $out ($(tail -1 "$D/client.log"))" >&2
	printf '%s\n' "$out"
}

# ticks PID: user + system CPU time of PID so far, in clock ticks
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# with_cpu SERVICE_PID CMD...: CMD's result line + the CPU time per call of the service, polkitd
# and dbus-daemon while it ran (µs; clock-tick resolution, so meaningful over long runs)
with_cpu() {
	local svc=$1 s0 p0 b0 out calls hz
	shift
	hz=$(getconf CLK_TCK)
	s0=$(ticks "$svc") p0=$(ticks "$BUS_ENV_POLKIT_PID") b0=$(ticks "$BUS_ENV_BUS_PID")
	out=$("$@") || return 1
	calls=$(field "$out" calls)
	awk -v o="$out" -v c="$calls" -v hz="$hz" -v s="$(($(ticks "$svc") - s0))" \
		-v p="$(($(ticks "$BUS_ENV_POLKIT_PID") - p0))" -v b="$(($(ticks "$BUS_ENV_BUS_PID") - b0))" \
		'BEGIN { f = 1e6 / hz / (c > 0 ? c : 1); printf "%s cpu_svc_us=%.0f cpu_polkitd_us=%.0f cpu_bus_us=%.0f\n", o, s * f, p * f, b * f }'
}
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }

median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 == 0) print "-"; else printf "%.2fx", a / b }'; }

# interleave NAME_A NAME_B: runs "run_A" and "run_B" (functions) ROUNDS times, A B B A A B ...;
# results in RES_A[], RES_B[]
declare -a RES_A RES_B
interleave() {
	local a=$1 b=$2 i out
	RES_A=()
	RES_B=()
	for ((i = 0; i < ROUNDS; i++)); do
		if ((i % 2 == 0)); then
			out=$("$a") || return 1; RES_A+=("$out")
			out=$("$b") || return 1; RES_B+=("$out")
		else
			out=$("$b") || return 1; RES_B+=("$out")
			out=$("$a") || return 1; RES_A+=("$out")
		fi
	done
}
# med_of KEY LINES...: the median of KEY over result lines
med_of() {
	local key=$1 l v=()
	shift
	for l in "$@"; do v+=("$(field "$l" "$key")"); done
	median "${v[@]}"
}

# cpu_rows: CPU per call of the service, polkitd and dbus-daemon, medians over RES_A (baseline), RES_B
cpu_rows() {
	local k what
	for k in svc polkitd bus; do
		case $k in svc) what="the service";; polkitd) what="polkitd";; bus) what="dbus-daemon";; esac
		row "   CPU per call, $what, µs" "$(med_of "cpu_${k}_us" "${RES_A[@]}")" \
			"$(med_of "cpu_${k}_us" "${RES_B[@]}")" \
			"$(ratio "$(med_of "cpu_${k}_us" "${RES_B[@]}")" "$(med_of "cpu_${k}_us" "${RES_A[@]}")")" ""
	done
}
# perf_start NAME, perf_stop: with CGB_BENCH_PERF_DIR, perf record --call-graph dwarf of the daemon in
# between, to perf.data-NAME there (the daemon's CPU figures of that run are then perf's too)
PERF_PID=
perf_start() {
	[ -n "${CGB_BENCH_PERF_DIR:-}" ] || return 0
	perf record -q -F 999 --call-graph dwarf,16384 -p "$BUS_ENV_DAEMON_PID" \
		-o "$CGB_BENCH_PERF_DIR/perf.data-$1" 2>/dev/null &
	PERF_PID=$!
	sleep 1
}
perf_stop() {
	[ -n "$PERF_PID" ] || return 0
	kill -INT "$PERF_PID"
	wait "$PERF_PID"
	PERF_PID=
}
FIGURES=()
# figure NAME VALUE TARGET OP LIMIT: a line "figure: NAME = VALUE (target: TARGET) ok|MISSED"
figure() {
	local verdict
	verdict=$(awk -v v="$2" -v op="$4" -v l="$5" 'BEGIN { if (v == "" || v == "-" || v == "nan") print "MISSED"
		else if ((op == "<=" && v + 0 <= l + 0) || (op == ">=" && v + 0 >= l + 0)) print "ok"; else print "MISSED" }')
	FIGURES+=("figure: $1 = ${2:-none} (target: $3) $verdict")
}
num_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'; }
TABLE=()
row() { TABLE+=("$(printf '%-44s %12s %12s %8s  %s' "$@")"); }
note() { TABLE+=("$*"); }

# gen_conf N FILE: [cgroup] sections for / and /b, then N/100 groups /b/gG (#cpu +memory) of
# 99 children each, every other one re-enabling cpu: N + 2 sections
# med_latencies: prints both sides' runs (RES_A, RES_B); their medians of p50 and p99 into b50 d50 b99 d99
med_latencies() {
	printf '#   baseline: %s\n' "${RES_A[@]}"
	printf '#   cgbypassd: %s\n' "${RES_B[@]}"
	b50=$(med_of p50_us "${RES_A[@]}") d50=$(med_of p50_us "${RES_B[@]}")
	b99=$(med_of p99_us "${RES_A[@]}") d99=$(med_of p99_us "${RES_B[@]}")
}

gen_conf() {
	awk -v n="$1" 'BEGIN {
		print "[daemon]\nbackend = sim\n"
		print "[cgroup]\npath = /\nsubtree-control = +cpu +memory\n"
		print "[cgroup]\npath = /b\nsubtree-control = +cpu +memory\n"
		for (g = 0; g < n / 100; g++) {
			printf "[cgroup]\npath = /b/g%d\nsubtree-control = #cpu +memory\n\n", g
			for (c = 0; c < 99; c++) {
				printf "[cgroup]\npath = /b/g%d/c%d\n", g, c
				if (c % 2 == 0)
					print "controllers = +cpu"
				print ""
			}
		}
	}' >"$2"
}
# ---- 1. the request path ----
if has_part request; then
	say "# 1. request path: setting up (sim on tmpfs, $CLIENTS delegated cgroups of one owner, state on $STATE_ON)"
	sim=$FS/sim1
	base=$FS/base1
	request_conf "$D/c1.conf" "$alice" "$X"
	bus_env_start_daemon --config "$D/c1.conf" --config-dir "$D/none" --cgroup-root "$sim" \
		--state-directory "$(state_dir 1)" || die "cgbypassd did not start"
	# the owner bypasses X for its children, makes them, and the daemon adopts them
	owner_call SetSubtreeControl ss /srv/alice "#$X" >/dev/null || die "the owner's SetSubtreeControl failed"
	for ((i = 0; i < CLIENTS; i++)); do
		bus_env_as "$alice" mkdir "$sim/srv/alice/c$i" || die "mkdir c$i"
	done
	# GetEffectiveTree learns every delegation whole (a request learns only its cgroup's subtree)
	busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager GetEffectiveTree s "$X" >/dev/null ||
		die "GetEffectiveTree failed"
	for ((i = 0; i < CLIENTS; i++)); do
		[ "$(cat "$sim/srv/alice/c$i/cgroup.controllers")" = "#$X" ] ||
			die "c$i was not adopted with $X bypassed: $(cat "$sim/srv/alice/c$i/cgroup.controllers")"
	done
	# the baseline writes the same files in a copy of the same tree, on the same tmpfs
	cp -a "$sim" "$base"
	# the baseline's record: a small file beside cgbypassd's state, on the same disk
	sync_file=$(state_dir 1)/baseline-record
	start_baseline "$base" "$sync_file"

	# both sides do the one write: check it once
	owner_call EnableController ss /srv/alice/c0 "$X" >/dev/null || die "EnableController failed"
	[ "$(cat "$sim/srv/alice/c0/cgroup.controllers")" = "$X" ] || die "cgbypassd did not re-enable $X"
	owner_call BypassController ss /srv/alice/c0 "$X" >/dev/null || die "BypassController failed"
	bus_env_as "$alice" busctl --system call "$BASE_NAME" /org/cgbypass1 org.cgbypass1.Manager EnableController \
		ss /srv/alice/c0 "$X" >/dev/null || die "the baseline's EnableController failed"
	[ "$(cat "$base/srv/alice/c0/cgroup.controllers")" = "+$X" ] || die "the baseline did not write"
	bus_env_as "$alice" busctl --system call "$BASE_NAME" /org/cgbypass1 org.cgbypass1.Manager BypassController \
		ss /srv/alice/c0 "$X" >/dev/null || die "the baseline's BypassController failed"

	say "# 1a. one client: $ROUNDS x ($ITER calls after $WARMUP) per side"
	req1_base() { with_cpu "$BASE_PID" run_client --dest "$BASE_NAME" --method change --arg "$X" --cgroup-fmt '/srv/alice/c%u' \
		--warmup "$WARMUP" --iterations "$ITER"; }
	req1_daemon() { with_cpu "$BUS_ENV_DAEMON_PID" run_client --dest org.cgbypass1 --method change --arg "$X" --cgroup-fmt '/srv/alice/c%u' \
		--warmup "$WARMUP" --iterations "$ITER"; }
	perf_start 1a
	interleave req1_base req1_daemon || die "request runs failed"
	perf_stop
	med_latencies
	B50_1=$b50 B99_1=$b99
	note "1. request path: Enable/BypassController, 1 client, µs (median of $ROUNDS runs; baseline + fdatasync)"
	row "   p50" "$b50" "$d50" "$(ratio "$d50" "$b50")" "target <= 1.10x"
	row "   p99" "$b99" "$d99" "$(ratio "$d99" "$b99")" ""
	cpu_rows
	figure request_p50_vs_baseline_fdatasync "$(num_ratio "$d50" "$b50")" "<= 1.10" "<=" 1.10
	figure request_cpu_vs_baseline "$(num_ratio "$(med_of cpu_svc_us "${RES_B[@]}")" "$(med_of cpu_svc_us "${RES_A[@]}")")" \
		"<= 2.00" "<=" 2.00
	# the 32-client target is against the baseline without its fdatasync
	stop_baseline
	start_baseline "$base"

	say "# 1b. $CLIENTS clients, each on its own cgroup: $ROUNDS x ${DURATION}s per side"
	reqn_base() { with_cpu "$BASE_PID" run_client --dest "$BASE_NAME" --method change --arg "$X" --cgroup-fmt '/srv/alice/c%u' \
		--clients "$CLIENTS" --warmup 20 --duration "$DURATION"; }
	reqn_daemon() { with_cpu "$BUS_ENV_DAEMON_PID" run_client --dest org.cgbypass1 --method change --arg "$X" --cgroup-fmt '/srv/alice/c%u' \
		--clients "$CLIENTS" --warmup 20 --duration "$DURATION"; }
	perf_start 1b
	interleave reqn_base reqn_daemon || die "concurrent request runs failed"
	perf_stop
	med_latencies
	bt=$(med_of calls_per_s "${RES_A[@]}") dt=$(med_of calls_per_s "${RES_B[@]}")
	note "   $CLIENTS clients, each its own cgroup"
	row "   throughput, calls/s" "$bt" "$dt" "$(ratio "$dt" "$bt")" "target >= 1.00x (baseline without fdatasync)"
	row "   p50 under load, µs" "$b50" "$d50" "$(ratio "$d50" "$b50")" ""
	row "   p99 under load, µs" "$b99" "$d99" "$(ratio "$d99" "$b99")" ""
	cpu_rows
	figure throughput_32_clients_vs_baseline "$(num_ratio "$dt" "$bt")" ">= 1.00" ">=" 1.00
	LOAD_RSS=$(awk '/^VmRSS:/ { print $2 }' "/proc/$BUS_ENV_DAEMON_PID/status")
	LOAD_HWM=$(awk '/^VmHWM:/ { print $2 }' "/proc/$BUS_ENV_DAEMON_PID/status")
	stop_baseline
	bus_env_stop_daemon
	[ "$BUS_ENV_DAEMON_STATUS" = 0 ] || say "# cgbypassd exited with status $BUS_ENV_DAEMON_STATUS" >&2
fi

# ---- 1c. the request path at 100, 10,002 and 100,002 managed cgroups (cgbypassd only) ----
# scale_run N TAG: one daemon over N + 2 managed cgroups and a delegation; prints the client's line
scale_run() {
	local n=$1 tag=$2 out
	gen_conf "$n" "$D/cs-$tag.conf"
	srv_alice_conf "$D/cs-$tag.conf" "$alice" "$X"
	# bus_env_start_daemon waits 30 s; the sim makes 100,002 cgroups' files first, which takes longer here
	"$BUS_ENV_CGBYPASSD" --bus system --config "$D/cs-$tag.conf" --config-dir "$D/none" \
		--cgroup-root "$SCALE_FS/sim-scale-$tag" --state-directory "$(state_dir "scale-$tag")" \
		>>"$BUS_ENV_DAEMON_LOG" 2>&1 &
	BUS_ENV_DAEMON_PID=$!
	BUS_ENV_DAEMON_STATUS=
	bus_env_wait_for "$SCALE_START_WAIT" scale_started || {
		tail -3 "$BUS_ENV_DAEMON_LOG" | sed 's/^/#   /' >&2
		bus_env_stop_daemon KILL
		die "cgbypassd did not start with $n cgroups within $SCALE_START_WAIT s"
	}
	if ! kill -0 "$BUS_ENV_DAEMON_PID" 2>/dev/null; then
		tail -3 "$BUS_ENV_DAEMON_LOG" | sed 's/^/#   /' >&2
		die "cgbypassd exited while starting with $n cgroups"
	fi
	owner_call SetSubtreeControl ss /srv/alice "#$X" >/dev/null || die "the owner's SetSubtreeControl failed"
	bus_env_as "$alice" mkdir "$SCALE_FS/sim-scale-$tag/srv/alice/c0" || die "mkdir c0"
	perf_start "$n-$tag"
	out=$(with_cpu "$BUS_ENV_DAEMON_PID" run_client --dest org.cgbypass1 --method change --arg "$X" \
		--cgroup-fmt '/srv/alice/c%u' --warmup 20 --iterations "$SCALE_ITER") || die "the $n-cgroup run failed"
	perf_stop
	bus_env_stop_daemon
	rm -rf "${SCALE_FS:?}/sim-scale-$tag" "$(state_dir "scale-$tag")"
	printf '%s\n' "$out"
}
# the name is there, or the daemon is gone (a failed start): stop waiting either way
scale_started() { bus_env_has_name org.cgbypass1 || ! kill -0 "$BUS_ENV_DAEMON_PID" 2>/dev/null; }
if has_part scale; then
	IFS=, read -r -a sizes <<<"$SCALE_SIZES"
	if [ "$SCALE_ON" = tmpfs ]; then SCALE_FS=$FS; else SCALE_FS=$D/scale-fs; mkdir -p "$SCALE_FS"; fi
	say "# 1c. request path with ${SCALE_SIZES//,/, } managed cgroups: $SCALE_ITER calls each, one client," \
		"cgbypassd only; ${sizes[0]} before and after the others"
	ref1=$(scale_run "${sizes[0]}" ref1) || die "scale run failed"
	say "#   ${sizes[0]}: $ref1"
	declare -A SCALE_OUT
	for n in "${sizes[@]:1}"; do
		SCALE_OUT[$n]=$(scale_run "$n" "n$n") || die "scale run failed"
		say "#   $n: ${SCALE_OUT[$n]}"
	done
	ref2=$(scale_run "${sizes[0]}" ref2) || die "scale run failed"
	say "#   ${sizes[0]} again: $ref2"
	r50=$(awk -v a="$(field "$ref1" p50_us)" -v b="$(field "$ref2" p50_us)" 'BEGIN { printf "%.1f\n", (a + b) / 2 }')
	rcpu=$(awk -v a="$(field "$ref1" cpu_svc_us)" -v b="$(field "$ref2" cpu_svc_us)" 'BEGIN { printf "%.0f\n", (a + b) / 2 }')
	note "1c. request path, 1 client, by managed cgroups (reference: ${sizes[0]}, the mean of the runs before and after)"
	row "   p50, µs, ${sizes[0]} managed cgroups" "" "$r50" "" "CPU per call $rcpu µs"
	for n in "${sizes[@]:1}"; do
		o=${SCALE_OUT[$n]}
		row "   p50, µs, $n managed cgroups" "$r50" "$(field "$o" p50_us)" "$(ratio "$(field "$o" p50_us)" "$r50")" \
			"target <= 1.20x; CPU per call $(field "$o" cpu_svc_us) µs"
		figure "request_p50_${n}_vs_${sizes[0]}_cgroups" "$(num_ratio "$(field "$o" p50_us)" "$r50")" "<= 1.20" "<=" 1.20
	done
fi

# ---- 1d. Reload calls that arrive together: an OCI hook asks for one at each container start ----
if has_part reload; then
	say "# 1d. Reload with $RELOAD_SIZE managed cgroups: one call, then $CLIENTS together (each its own" \
		"connection, as root), $ROUNDS x each"
	gen_conf "$RELOAD_SIZE" "$D/reload.conf"
	bus_env_start_daemon --config "$D/reload.conf" --config-dir "$D/none" --cgroup-root "$FS/sim-reload" \
		--state-directory "$(state_dir reload)" || die "cgbypassd did not start"
	reload_one() { "$client" run --method Reload --clients 1 --warmup 0 --iterations 1 2>>"$D/client.log"; }
	reload_all() { "$client" run --method Reload --clients "$CLIENTS" --warmup 0 --iterations 1 2>>"$D/client.log"; }
	interleave reload_one reload_all || die "reload runs failed"
	printf '#   one: %s\n' "${RES_A[@]}"
	printf "#   $CLIENTS together: %s\n" "${RES_B[@]}"
	for l in "${RES_A[@]}" "${RES_B[@]}"; do
		[ "$(field "$l" errors)" = 0 ] || die "a Reload failed: $l"
	done
	w1=$(awk -v w="$(med_of wall_s "${RES_A[@]}")" 'BEGIN { printf "%.1f", w * 1000 }')
	wn=$(awk -v w="$(med_of wall_s "${RES_B[@]}")" 'BEGIN { printf "%.1f", w * 1000 }')
	note "1d. Reload, $RELOAD_SIZE managed cgroups (sim): baseline = one call alone"
	row "   $CLIENTS calls together, ms to the last answer" "$w1" "$wn" "$(ratio "$wn" "$w1")" "target <= 2.00x"
	figure "reload_${CLIENTS}_together_vs_1" "$(num_ratio "$wn" "$w1")" "<= 2.00" "<=" 2.00
	bus_env_stop_daemon
	rm -rf "${FS:?}/sim-reload" "$(state_dir reload)"
fi

# ---- 2. the read path ----
DEMO_CONF=$D/demo.conf
sed "s/@OWNER@/$alice/" "$src/examples/demo.conf.in" >"$DEMO_CONF"
# read_runs LABEL CGROUP ITERATIONS: GetCgroup CGROUP and GetEffectiveTree cpu against Echo, 1 and 4 clients
# read_runs LABEL TAG CGROUP ITERATIONS: TAG names the figures (one line each)
read_runs() {
	local label=$1 tag=$2 cg=$3 iter=$4 k w
	w=$((iter >= 1000 ? 200 : 20))
	for k in 1 4; do
		say "# 2. $label, $k client(s): $ROUNDS x $iter calls per client per method"
		rd_echo() { with_cpu "$BASE_PID" run_client --dest "$BASE_NAME" --method Echo --arg "$cg" --clients "$k" --warmup "$w" \
			--iterations "$iter"; }
		rd_getcg() { with_cpu "$BUS_ENV_DAEMON_PID" run_client --dest org.cgbypass1 --method GetCgroup --arg "$cg" --clients "$k" --warmup "$w" \
			--iterations "$iter"; }
		rd_tree() { with_cpu "$BUS_ENV_DAEMON_PID" run_client --dest org.cgbypass1 --method GetEffectiveTree --arg cpu --clients "$k" \
			--warmup "$w" --iterations "$iter"; }
		interleave rd_echo rd_getcg || die "read runs failed"
		E1=("${RES_A[@]}") G1=("${RES_B[@]}")
		interleave rd_echo rd_tree || die "read runs failed"
		E1+=("${RES_A[@]}") T1=("${RES_B[@]}")
		printf '#   Echo: %s\n' "${E1[@]}"
		printf '#   GetCgroup: %s\n' "${G1[@]}"
		printf '#   GetEffectiveTree: %s\n' "${T1[@]}"
		e50=$(med_of p50_us "${E1[@]}") g50=$(med_of p50_us "${G1[@]}") t50=$(med_of p50_us "${T1[@]}")
		et=$(med_of calls_per_s "${E1[@]}") gt=$(med_of calls_per_s "${G1[@]}") tt=$(med_of calls_per_s "${T1[@]}")
		note "2. read path, $label, $k client(s), baseline = Echo(s)->(s)"
		row "   GetCgroup $cg p50, µs" "$e50" "$g50" "$(ratio "$g50" "$e50")" "target <= 1.20x"
		row "   GetEffectiveTree p50, µs" "$e50" "$t50" "$(ratio "$t50" "$e50")" \
			"$([ "$tag" = demo ] && echo "target <= 1.20x" || echo "the reply's size; target in 2b")"
		figure "getcgroup_p50_vs_echo_${tag}_${k}_clients" "$(num_ratio "$g50" "$e50")" "<= 1.20" "<=" 1.20
		# a tree of every owner cgroup is a reply of that many paths: its target is against an Echo of
		# as many bytes (2b), and the row above says what the size costs
		[ "$tag" = demo ] &&
			figure "geteffectivetree_p50_vs_echo_${tag}_${k}_clients" "$(num_ratio "$t50" "$e50")" "<= 1.20" "<=" 1.20
		row "   GetCgroup calls/s" "$et" "$gt" "$(ratio "$gt" "$et")" ""
		row "   GetEffectiveTree calls/s" "$et" "$tt" "$(ratio "$tt" "$et")" ""
		row "   CPU per call, the service, µs (Echo/GetCgroup)" "$(med_of cpu_svc_us "${E1[@]}")" \
			"$(med_of cpu_svc_us "${G1[@]}")" "" "GetEffectiveTree: $(med_of cpu_svc_us "${T1[@]}") µs"
	done
}
if has_part read; then
	say "# 2. read path: the documentation example (examples/demo.conf.in), G delegated and re-enabled"
	# room for part 2b's owner cgroups in G (max-cgroups-per-delegation is 4096 by default)
	mkdir -p "$D/read.d"
	printf '[daemon]\nmax-cgroups-per-delegation = %d\n' $((READ_OWNER_CGROUPS + 1)) >"$D/read.d/limits.conf"
	# a cgbypassd from before the limits (measured for comparison) has no such key, and no limit
	"$daemon" --check-config --config "$DEMO_CONF" --config-dir "$D/read.d" --cgroup-root "$FS/sim2" >/dev/null 2>&1 ||
		rm -f "$D/read.d/limits.conf"
	bus_env_start_daemon --config "$DEMO_CONF" --config-dir "$D/read.d" --cgroup-root "$FS/sim2" \
		--state-directory "$(state_dir 2)" || die "cgbypassd did not start"
	owner_call EnableController ss /A/B/G cpu >/dev/null || die "the owner could not re-enable cpu in G"
	tree=$(busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager GetEffectiveTree s cpu)
	grep -q '/A/B/G' <<<"$tree" || die "unexpected effective tree: $tree"
	mkdir -p "$FS/base2"
	start_baseline "$FS/base2"
	read_runs "demo" demo /A/B/G "$READ_ITER"
	if ((READ_OWNER_CGROUPS > 0)); then
		# 2b. the owner of G makes READ_OWNER_CGROUPS cgroups (issue 13's 12,000): reads of one
		# cgroup must cost as before, and the tree its reply (every cgroup is in it), not a walk
		say "# 2b. the owner makes $READ_OWNER_CGROUPS cgroups in /A/B/G"
		bus_env_as "$alice" sh -c "cd '$FS/sim2/A/B/G' && seq -f o%g 0 $((READ_OWNER_CGROUPS - 1)) | xargs mkdir" ||
			die "the owner's mkdir failed"
		bus_env_wait_for 600 sh -c "busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager \
			GetCgroup s /A/B/G/o$((READ_OWNER_CGROUPS - 1)) >/dev/null 2>&1" || die "the owner's cgroups were not taken on"
		size=$(busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager GetEffectiveTree s cpu | wc -c)
		say "#   taken on; GetEffectiveTree's reply is $size bytes"
		read_runs "+$READ_OWNER_CGROUPS owner cgroups" "owner${READ_OWNER_CGROUPS}" /A/B/G/o7 "$READ_BIG_ITER"
		note "   (GetEffectiveTree's reply: $size bytes, every cgroup; Echo's: a few bytes)"
		# the reply's own cost on the bus: against an Echo of as many bytes
		for k in 1 4; do
			rd_echo_big() { with_cpu "$BASE_PID" run_client --dest "$BASE_NAME" --method Echo --arg x --arg-size "$size" \
				--clients "$k" --warmup 5 --iterations "$READ_BIG_ITER"; }
			rd_tree_big() { with_cpu "$BUS_ENV_DAEMON_PID" run_client --dest org.cgbypass1 --method GetEffectiveTree --arg cpu \
				--clients "$k" --warmup 5 --iterations "$READ_BIG_ITER"; }
			interleave rd_echo_big rd_tree_big || die "read runs failed"
			printf '#   Echo of %s bytes: %s\n' "$size" "${RES_A[@]}"
			printf '#   GetEffectiveTree: %s\n' "${RES_B[@]}"
			e50=$(med_of p50_us "${RES_A[@]}") t50=$(med_of p50_us "${RES_B[@]}")
			note "2b. +$READ_OWNER_CGROUPS owner cgroups, $k client(s), baseline = Echo of $size bytes"
			row "   GetEffectiveTree p50, µs" "$e50" "$t50" "$(ratio "$t50" "$e50")" "target <= 1.20x"
			figure "geteffectivetree_p50_vs_echo_same_bytes_owner${READ_OWNER_CGROUPS}_${k}_clients" \
				"$(num_ratio "$t50" "$e50")" "<= 1.20" "<=" 1.20
		done
	fi
	stop_baseline
	bus_env_stop_daemon
fi

# ---- 3. memory and start-up ----
# startup NAME CONF ROOT STATE SETTLE_MS: one start of cgbypassd to READY=1; prints the client's line
startup() {
	"$client" startup --notify-socket "$D/notify-$1.sock" --settle-ms "$5" -- \
		"$daemon" --bus system --config "$2" --config-dir "$D/none" --cgroup-root "$3" --state-directory "$4" \
		2>>"$BUS_ENV_DAEMON_LOG"
}
if has_part memory; then
	say "# 3. memory and start-up (sim on tmpfs; READY=1 on a notify socket)"
	out=$(startup small "$DEMO_CONF" "$FS/sim3" "$FS/state3" 1000) || die "the small start failed"
	say "#   small config, idle: $out"
	note "3. memory and start-up"
	row "   RSS idle, small config (demo), kB" "" "$(field "$out" rss_kb)" "" "VmHWM $(field "$out" hwm_kb) kB"
	[ -n "${LOAD_RSS:-}" ] &&
		row "   RSS after the request load, kB" "" "$LOAD_RSS" "" "VmHWM $LOAD_HWM kB (part 1's daemon, $CLIENTS delegated cgroups)"

	gen_conf 1000 "$D/c1000.conf"
	cold=() warm=()
	for ((i = 0; i < STARTUP_RUNS; i++)); do
		out=$(startup k$i "$D/c1000.conf" "$FS/sim-1k-$i" "$FS/state-1k-$i" 0) || die "the 1,000-cgroup start failed"
		cold+=("$(field "$out" ready_ms)")
		out=$(startup k$i "$D/c1000.conf" "$FS/sim-1k-$i" "$FS/state-1k-$i" 0) || die "the 1,000-cgroup restart failed"
		warm+=("$(field "$out" ready_ms)")
	done
	say "#   1,002 sections, exec to READY=1, ms: cold ${cold[*]}; warm ${warm[*]}"
	row "   start-up, 1,002 cgroups, cold, ms" "" "$(median "${cold[@]}")" "" "exec -> READY=1, empty directory"
	row "   start-up, 1,002 cgroups, warm, ms" "" "$(median "${warm[@]}")" "" "exec -> READY=1, restart over its own state"

	gen_conf 10000 "$D/c10000.conf"
	out=$(startup big "$D/c10000.conf" "$FS/sim-10k" "$FS/state-10k" 1000) || die "the 10,000-cgroup start failed"
	say "#   10,002 sections, cold: $out"
	row "   RSS, 10,002 cgroups, kB" "" "$(field "$out" rss_kb)" "" "VmHWM $(field "$out" hwm_kb) kB, 1 s after READY=1"
	row "   start-up, 10,002 cgroups, cold, ms" "" "$(field "$out" ready_ms)" "" ""
	out=$(startup big "$D/c10000.conf" "$FS/sim-10k" "$FS/state-10k" 1000) || die "the 10,000-cgroup restart failed"
	say "#   10,002 sections, warm: $out"
	row "   RSS, 10,002 cgroups, warm start, kB" "" "$(field "$out" rss_kb)" "" "VmHWM $(field "$out" hwm_kb) kB"
	row "   start-up, 10,002 cgroups, warm, ms" "" "$(field "$out" ready_ms)" "" ""
fi

say ""
say "bench-bus figures ($buildtype build, optimization=$optimization, b_sanitize=$sanitize; state directory on $STATE_ON;"
say "  load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); medians of $ROUNDS interleaved runs)"
printf '%-44s %12s %12s %8s  %s\n' "" "baseline" "cgbypassd" "ratio" ""
printf '%s\n' "${TABLE[@]}"
((${#FIGURES[@]} > 0)) && printf '%s\n' "${FIGURES[@]}"
