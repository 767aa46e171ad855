#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run one libFuzzer harness for a while from its seed corpus; TAP.
#
# usage: run-fuzzer.sh FUZZER SEEDS [SECONDS]
#   FUZZER   a harness built with -Dfuzz=true (build-fuzz/tests/fuzz/fuzz-NAME)
#   SEEDS    its committed seed directory (tests/fuzz/NAME); NAME.dict beside it
#   SECONDS  how long (default $CGB_FUZZ_SECONDS, else 60)
#
# Every seed runs first, so the corpus is also a regression test. New inputs
# go to a scratch corpus, never into the source tree. A finding fails the test
# with the sanitizer's report and the input (hex), and the input is kept in
# $CGB_FUZZ_ARTIFACTS (meson test: the build's meson-logs; default /tmp) for
# `FUZZER INPUT` to reproduce it.
set -uo pipefail

fuzzer=${1:?fuzzer}
seeds=${2:?seed directory}
seconds=${3:-${CGB_FUZZ_SECONDS:-60}}
name=$(basename "$fuzzer")
dict=${seeds%/}.dict

[ -x "$fuzzer" ] || { echo "Bail out! $fuzzer is not an executable"; exit 1; }
[ -d "$seeds" ] || { echo "Bail out! no seed directory $seeds"; exit 1; }
artifacts=${CGB_FUZZ_ARTIFACTS:-/tmp}
work=$(mktemp -d "/tmp/cgb-$name-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/crash"

args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192
	-print_final_stats=1 -artifact_prefix="$work/crash/")
[ -f "$dict" ] && args+=(-dict="$dict")
echo "1..1"
echo "# $name ${args[*]} $seeds"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
	"$fuzzer" "${args[@]}" "$work/corpus" "$seeds" >"$work/log" 2>&1
status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -n 1)
nseeds=$(find "$seeds" -type f | wc -l)
grown=$(find "$work/corpus" -type f | wc -l)
found=$(find "$work/crash" -type f | head -n 1)
if [ $status -eq 0 ] && [ -z "$found" ]; then
	echo "ok 1 - $name: ${runs:-?} runs in $seconds s (${rate:-?} exec/s), ${cov:-cov: ?}, $nseeds seeds, $grown new inputs, no finding"
	exit 0
fi
echo "not ok 1 - $name: finding after ${runs:-?} runs (exit $status)"
grep -E -A40 '^==[0-9]+==ERROR|runtime error|^fuzz: |^==[0-9]+== ERROR' "$work/log" | head -n 80 | sed 's/^/# /'
if [ -n "$found" ]; then
	mkdir -p "$artifacts"
	keep=$artifacts/$name-$(basename "$found")
	cp "$found" "$keep"
	echo "# input kept in $keep (reproduce: $fuzzer $keep); hex:"
	od -A d -t x1z -v "$found" | head -n 40 | sed 's/^/#   /'
else
	tail -n 20 "$work/log" | sed 's/^/# /'
fi
exit 1
