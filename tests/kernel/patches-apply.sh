#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kernel/patches/ apply to the installed linux-source-6.1 without fuzz or offset.
set -euo pipefail
# shellcheck source=tests/kernel/vm-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/vm-lib.sh"

[ -f /usr/src/linux-source-6.1.tar.xz ] ||
	vm_fail "/usr/src/linux-source-6.1.tar.xz is missing (tools/deps.sh test installs linux-source-6.1)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if "$top/kernel/tests/check-patches-apply.sh" >"$log" 2>&1; then
	sed 's/^/# /' "$log"
	echo "ok 1 - every patch applies cleanly"
	echo "1..1"
	exit 0
fi
sed 's/^/# /' "$log"
echo "not ok 1 - a patch does not apply cleanly"
echo "1..1"
exit 1
