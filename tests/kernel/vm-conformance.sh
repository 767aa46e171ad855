#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The model against a real kernel: golden traces and seeded random traces run
# in the VM with cgbypass-trace --kernel and on the model, byte for byte
# (cgbypass-conform). Patched kernel vs --rules bypass, stock vs --rules stock.
#
# usage: vm-conformance.sh patched|stock BUILDDIR [COUNT] [SEED]
#   COUNT random traces (default 2000), seeds SEED.. (default 1)
set -euo pipefail
# shellcheck source=tests/kernel/vm-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/vm-lib.sh"

flavor=${1:?patched or stock}
build=${2:?build directory}
count=${3:-2000}
seed=${4:-1}
case "$flavor" in
patched) rules=bypass ;;
stock) rules=stock ;;
*) vm_fail "unknown kernel flavor '$flavor'" ;;
esac

vm_require
bz=$(vm_kernel "$flavor")
[ -f "$bz" ] || vm_fail "could not build the $flavor kernel (run kernel/build-kernel.sh $flavor)"

img=$(mktemp /tmp/cgb-conform.XXXXXX.img)
trap 'rm -f "$img"' EXIT
"$top/kernel/build-initramfs.sh" --out "$img" --bin "$build/src/trace/cgbypass-conform" \
	--file "$top/tests/traces:/traces" 2>/dev/null

start=$(date +%s)
set +e
out=$("$top/kernel/run-vm.sh" --kernel "$bz" --initrd "$img" --timeout 1500 -- \
	sh -c "cgbypass-conform --kernel /sys/fs/cgroup --rules $rules --seed $seed --count $count /traces/*.trace")
status=$?
set -e
printf '%s\n' "$out" | sed 's/^/# /'
echo "# $flavor kernel, --rules $rules, $count random traces from seed $seed: $(($(date +%s) - start)) s"
summary=$(printf '%s\n' "$out" | tail -n 1)
if [ $status -eq 0 ] && [[ $summary =~ ^[0-9]+\ passed,\ 0\ failed$ ]]; then
	echo "ok 1 - $flavor: $summary"
	echo "1..1"
	exit 0
fi
echo "not ok 1 - $flavor: exit status $status: $summary"
echo "1..1"
exit 1
