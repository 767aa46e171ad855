#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The whole test suite, as CI runs it (.ci/run calls this and nothing else).
#
#  1. installs what the tests need (tools/deps.sh test; apt-get as root)
#  2. builds twice: build/ (plain) and build-asan/ (-Db_sanitize=address,undefined)
#  3. builds the VM kernels, patched and stock (kernel/build-kernel.sh; cached
#     in $CGB_KERNEL_CACHE, default /var/cache/cgbypassd-kernel)
#  4. runs every meson test in build/ (with the suite system unless
#     CGB_SYSTEM_TESTS=0, see below), then every test but the VM ones (suites
#     kernel and system) in build-asan/ (the VM runs build/'s binaries or the
#     package; sanitizers add nothing there)
#  5. builds build-fuzz/ with clang (-Dfuzz=true) and runs its suite fuzz:
#     each libFuzzer harness for $CGB_FUZZ_SECONDS (default 60) seconds
#  6. ends with one line "N passed, N failed" over all runs
#
# The suite system (tests/system: Debian 12 with systemd as PID 1 in the VM,
# the project's .deb installed, on both kernels) runs by default. On a fresh
# quiet 2-core machine the whole run took 52 min (the kernels 21, mmdebstrap
# of the root file system, then cached in /var/cache/cgbypassd-rootfs, 70 s);
# warm, 28 to 33 min. CGB_SYSTEM_TESTS=0 leaves it out, e.g. on a machine
# without a Debian mirror for mmdebstrap.
#
# usage: tools/run-tests.sh [--no-kernel] [MESON-TEST-ARGS...]
#   --no-kernel   skip building the kernels; the VM tests then fail and say why
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

build_kernel=1
if [ "${1:-}" = "--no-kernel" ]; then
	build_kernel=0
	shift
elif [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
	sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
fi

tools/deps.sh test

setup() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
	meson compile -C "$dir" >/dev/null
}

echo "== build (optimized, ASan+UBSan)"
# -O2 lets gcc see through inlining and warn where -O0 does not; -Werror stops on it
setup build -Dbuildtype=debugoptimized
setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

if [ $build_kernel -eq 1 ]; then
	echo "== VM kernels (cached; a cold build takes several minutes)"
	start=$(date +%s)
	CGB_KERNEL_PATCHED=$(kernel/build-kernel.sh patched | tail -n 1)
	CGB_KERNEL_STOCK=$(kernel/build-kernel.sh stock | tail -n 1)
	export CGB_KERNEL_PATCHED CGB_KERNEL_STOCK
	echo "   patched: $CGB_KERNEL_PATCHED"
	echo "   stock:   $CGB_KERNEL_STOCK ($(($(date +%s) - start)) s)"
fi

status=0
echo "== meson test (build/)"
system=()
[ "${CGB_SYSTEM_TESTS:-1}" = 0 ] && system=(--no-suite system)
meson test -C build --print-errorlogs "${system[@]}" "$@" || status=1
echo "== meson test (build-asan/, ASan+UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --print-errorlogs --no-suite kernel --no-suite system "$@" || status=1
echo "== fuzzers (build-fuzz/, clang, libFuzzer; ${CGB_FUZZ_SECONDS:-60} s each)"
# clang warns where gcc does not; -Werror stays with the gcc builds
CC=clang setup build-fuzz -Dfuzz=true -Dwerror=false -Dbuildtype=debugoptimized
meson test -C build-fuzz --print-errorlogs --suite fuzz || status=1

# meson prints per-test lines; CI reads this closing line
python3 - build/meson-logs/testlog.json build-asan/meson-logs/testlog.json build-fuzz/meson-logs/testlog.json <<'PY'
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        r = json.loads(line)["result"]
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
