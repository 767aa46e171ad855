#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-cli.sh VERSION CGBYPASS-TRACE CGBYPASS-TRACEGEN CGBYPASS-CONFORM
# --help, --version and bad usage of the three trace programs: help on
# stdout with exit 0, the version, and one line on stderr with a non-zero
# exit for every misuse.
set -u
version=$1 trace=$2 gen=$3 conform=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"
fail() { not_ok "$1" "$(cat "$tmp/out" "$tmp/err")"; }

# expect NAME STATUS STDOUT-PATTERN STDERR-LINES -- COMMAND...
expect() {
	local name=$1 status=$2 pattern=$3 errlines=$4
	shift 5
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	if [ $rc -ne "$status" ]; then
		fail "$name: exit status $rc, not $status"
	elif [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/out"; then
		fail "$name: stdout lacks '$pattern'"
	elif [ "$errlines" != "-" ] && [ "$(wc -l <"$tmp/err")" -ne "$errlines" ]; then
		fail "$name: $(wc -l <"$tmp/err") lines on stderr, not $errlines"
	else
		ok "$name"
	fi
}

printf 'mkdir A\nread . cgroup.controllers\n' >"$tmp/ok.trace"

echo "1..38"
for p in "$trace" "$gen" "$conform"; do
	b=$(basename "$p")
	expect "$b --help" 0 "^Usage:" 0 -- "$p" --help
	expect "$b --help has exit status" 0 "^Exit status" 0 -- "$p" --help
	expect "$b --help has an example" 0 "^Example" 0 -- "$p" --help
	expect "$b --version" 0 "^$b $version\$" 0 -- "$p" --version
	expect "$b unknown option" 2 "" 1 -- "$p" --bogus
done

expect "trace: no mode" 2 "" 1 -- "$trace" "$tmp/ok.trace"
expect "trace: both modes" 2 "" 1 -- "$trace" --model --kernel /sys/fs/cgroup "$tmp/ok.trace"
expect "trace: no TRACE" 2 "" 1 -- "$trace" --model
expect "trace: two TRACEs" 2 "" 1 -- "$trace" --model "$tmp/ok.trace" "$tmp/ok.trace"
expect "trace: bad rules" 2 "" 1 -- "$trace" --model --rules new "$tmp/ok.trace"
expect "trace: bad controller" 2 "" 1 -- "$trace" --model --controllers cpu,cpu3 "$tmp/ok.trace"
expect "trace: --rules with --kernel" 2 "" 1 -- "$trace" --kernel /sys/fs/cgroup --rules stock "$tmp/ok.trace"
expect "trace: --kernel needs DIR" 2 "" 1 -- "$trace" --kernel
expect "trace: missing file" 1 "" 1 -- "$trace" --model "$tmp/missing.trace"
expect "trace: DIR missing" 1 "" 1 -- "$trace" --kernel "$tmp/missing" "$tmp/ok.trace"
expect "trace: DIR not cgroup2" 1 "" 1 -- "$trace" --kernel "$tmp" "$tmp/ok.trace"
expect "trace: runs" 0 "^2 = cpuset cpu io memory hugetlb pids rdma misc\$" 0 -- \
	"$trace" --model --rules stock "$tmp/ok.trace"
printf 'mkdir A\nexists A debug.masks\n' >"$tmp/cold.trace"
expect "trace: a fresh root gives no implicit csses" 0 "^2 = no\$" 0 -- "$trace" --model "$tmp/cold.trace"
expect "trace: --settled" 0 "^2 = yes\$" 0 -- "$trace" --model --settled "$tmp/cold.trace"
expect "trace: --settled with --kernel" 2 "" 1 -- "$trace" --kernel /sys/fs/cgroup --settled "$tmp/ok.trace"
expect "trace: --controllers" 0 "^2 = io memory\$" 0 -- \
	"$trace" --model --controllers memory,io,perf_event "$tmp/ok.trace"
expect "tracegen: no seed" 2 "" 1 -- "$gen" --length 5
expect "tracegen: bad length" 2 "" 1 -- "$gen" --seed 1 --length 0
expect "tracegen: --count without --out-dir" 2 "" 1 -- "$gen" --seed 1 --length 5 --count 2
expect "conform: no --kernel" 2 "" 1 -- "$conform" --rules bypass --count 1
expect "conform: no --rules" 2 "" 1 -- "$conform" --kernel "$tmp" --count 1
expect "conform: nothing to run" 2 "" 1 -- "$conform" --kernel "$tmp" --rules stock
# a runner failure is a failed trace, and the summary line still comes last
expect "conform: DIR not cgroup2" 1 "^0 passed, 1 failed\$" - -- \
	"$conform" --kernel "$tmp" --rules stock "$tmp/ok.trace"
tap_status
