#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The backends on the project's VM kernels: native on the patched kernel,
# emulated on the stock kernel (with every controller, not only the host's
# hugetlb). Uses kernel/build-kernel.sh, build-initramfs.sh and run-vm.sh.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KDIR=$TOP/kernel
BINDIR=$TOP/build/tests/backend
CACHE_ARGS=()
PATCHED=
STOCK=

usage() {
    cat <<EOF
Usage: ${0##*/} [--bin-dir DIR] [--cache DIR] [--patched BZIMAGE] [--stock BZIMAGE]

Boots the patched VM kernel and runs test-backend-native on /sys/fs/cgroup
(the seeds' documentation example through backend_*() calls, checked in the
kernel's files), then the stock VM kernel and runs test-backend-emulated on
/sys/fs/cgroup with hugetlb and with memory. Prints the tests' TAP output;
exits 1 if any run fails.

  --bin-dir DIR      where test-backend-native and test-backend-emulated are
                     (default: build/tests/backend)
  --cache DIR        kernel cache directory (passed to build-kernel.sh)
  --patched BZIMAGE  use this patched kernel instead of building one
  --stock BZIMAGE    use this stock kernel instead of building one
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    -h|--help) usage; exit 0 ;;
    --bin-dir) [ $# -ge 2 ] || { usage >&2; exit 2; }; BINDIR=$2; shift 2 ;;
    --cache) [ $# -ge 2 ] || { usage >&2; exit 2; }; CACHE_ARGS=(--cache "$2"); shift 2 ;;
    --patched) [ $# -ge 2 ] || { usage >&2; exit 2; }; PATCHED=$2; shift 2 ;;
    --stock) [ $# -ge 2 ] || { usage >&2; exit 2; }; STOCK=$2; shift 2 ;;
    *) echo "${0##*/}: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done

for t in test-backend-native test-backend-emulated; do
    [ -x "$BINDIR/$t" ] || { echo "${0##*/}: $BINDIR/$t not built" >&2; exit 2; }
done
if ! command -v qemu-system-x86_64 >/dev/null; then
    echo "1..0 # SKIP qemu-system-x86_64 is not installed"
    exit 0
fi
[ -n "$PATCHED" ] || PATCHED=$("$KDIR/build-kernel.sh" patched "${CACHE_ARGS[@]}" | tail -n 1)
[ -n "$STOCK" ] || STOCK=$("$KDIR/build-kernel.sh" stock "${CACHE_ARGS[@]}" | tail -n 1)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cgb-vm-backend.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$KDIR/build-initramfs.sh" --out "$TMP/initrd.gz" \
    --bin "$BINDIR/test-backend-native" --bin "$BINDIR/test-backend-emulated" 2>/dev/null

ENV='CK_TAP_LOG_FILE_NAME=- CK_VERBOSITY=silent CK_DEFAULT_TIMEOUT=120'
status=0
run() {
    local name=$1 kernel=$2
    shift 2
    echo "# $name"
    if "$KDIR/run-vm.sh" --kernel "$kernel" --initrd "$TMP/initrd.gz" --timeout 300 -- "$@"; then
        echo "# PASS: $name"
    else
        echo "# FAIL: $name"
        status=1
    fi
}
run "native on the patched kernel" "$PATCHED" \
    sh -c "$ENV /usr/local/bin/test-backend-native"
run "emulated (hugetlb) on the stock kernel" "$STOCK" \
    sh -c "$ENV CGB_TEST_CGROUP2=/sys/fs/cgroup CGB_TEST_CONTROLLER=hugetlb /usr/local/bin/test-backend-emulated"
run "emulated (memory) on the stock kernel" "$STOCK" \
    sh -c "$ENV CGB_TEST_CGROUP2=/sys/fs/cgroup CGB_TEST_CONTROLLER=memory /usr/local/bin/test-backend-emulated"
exit $status
