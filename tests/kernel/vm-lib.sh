# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the VM tests: find or build the kernels, fail (never skip) with
# the reason when the VM cannot run here.
# shellcheck shell=bash

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

vm_fail() {
	echo "not ok 1 - $*"
	echo "1..1"
	exit 1
}

vm_require() {
	command -v qemu-system-x86_64 >/dev/null ||
		vm_fail "qemu-system-x86_64 is missing (tools/deps.sh test installs qemu-system-x86)"
	[ -f /usr/src/linux-source-6.1.tar.xz ] ||
		vm_fail "/usr/src/linux-source-6.1.tar.xz is missing (tools/deps.sh test installs linux-source-6.1)"
	[ -x /bin/busybox ] || vm_fail "busybox-static is missing (tools/deps.sh test installs it)"
}

# vm_kernel patched|stock: the cached bzImage (built on a cache miss, which takes minutes)
vm_kernel() {
	local var=CGB_KERNEL_${1^^}
	if [ -n "${!var:-}" ] && [ -f "${!var}" ]; then
		echo "${!var}"
	else
		"$top/kernel/build-kernel.sh" "$1" 2>/dev/null | tail -n 1
	fi
}
