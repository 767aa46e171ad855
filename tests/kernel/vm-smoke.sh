#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Both kernels boot; the patched one carries the series (kernel/tests/vm-smoke.sh).
set -euo pipefail
# shellcheck source=tests/kernel/vm-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/vm-lib.sh"

vm_require
patched=$(vm_kernel patched)
stock=$(vm_kernel stock)
{ [ -f "$patched" ] && [ -f "$stock" ]; } || vm_fail "could not build the kernels"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if "$top/kernel/tests/vm-smoke.sh" --patched "$patched" --stock "$stock" >"$log" 2>&1; then
	sed 's/^/# /' "$log"
	echo "ok 1 - both kernels boot; the patched one carries the series"
	echo "1..1"
	exit 0
fi
sed 's/^/# /' "$log"
echo "not ok 1 - kernel/tests/vm-smoke.sh failed"
echo "1..1"
exit 1
