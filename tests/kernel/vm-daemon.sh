#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon end to end in the VM, on both kernels: dbus-daemon, the real
# polkitd, cgbypassd with backend auto (native on the patched kernel,
# emulated on the stock one) and an unprivileged owner re-enabling and
# bypassing cpu in its delegation with cgbypassctl; a run-time delegation
# made by a root client, the owner's knobs, CgroupChanged for an owner's
# mkdir, policy values, a hostile owner; checked in the daemon's answers and
# the kernel's own files (vm-daemon-guest.sh, run inside). The example client
# is built here as a third party would build it: examples/client.c against a
# DESTDIR install with pkg-config alone (as tests/lib/test-lib-client.sh). TAP.
#
# usage: vm-daemon.sh CGBYPASSD CGBYPASSCTL PROBE MESON BUILDDIR LIBDIR
# The kernels come from CGB_KERNEL_PATCHED and CGB_KERNEL_STOCK, or are built
# (cached) with kernel/build-kernel.sh. Skips without qemu.
set -euo pipefail

daemon=${1:?cgbypassd}
ctl=${2:?cgbypassctl}
probe=${3:?vm-owner-probe}
meson=${4:?meson}
build=${5:?build dir}
libdir=${6:?libdir}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "1..0 # SKIP qemu-system-x86_64 is not installed"
	exit 0
fi
# shellcheck source=tests/kernel/vm-lib.sh
. "$here/vm-lib.sh"
vm_require
[ -x /usr/lib/polkit-1/polkitd ] || [ -x /usr/libexec/polkitd ] ||
	vm_fail "polkitd is not installed (tools/deps.sh test installs it)"
command -v dbus-daemon >/dev/null || vm_fail "dbus-daemon is not installed (tools/deps.sh test installs it)"
[ -x /usr/bin/setpriv ] || vm_fail "setpriv (util-linux) is missing"
for b in "$daemon" "$ctl" "$probe"; do
	[ -x "$b" ] || vm_fail "$b is not built"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgb-vm-daemon.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# the example client from the installed files only, and the errnos org.cgbypass1(5) documents
dest=$tmp/dest
DESTDIR=$dest "$meson" install -C "$build" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
	vm_fail "meson install into a DESTDIR failed: $(tail -n 5 "$tmp/install.log")"
flags=$(PKG_CONFIG_PATH=$dest$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs libcgbypass) ||
	vm_fail "pkg-config --cflags --libs libcgbypass failed on the DESTDIR install"
# shellcheck disable=SC2086 # pkg-config's flags are words
cc -Wall -Wextra -Werror -o "$tmp/client" "$top/examples/client.c" $flags 2>"$tmp/cc.log" ||
	vm_fail "examples/client.c does not build from the installed .pc: $(cat "$tmp/cc.log")"
sed -nE 's/^\.BR org\.cgbypass1\.Error\.([A-Za-z]+) " \(([A-Z]+)\)"$/\1 \2/p' "$top/man/org.cgbypass1.5" >"$tmp/errnos"
[ -s "$tmp/errnos" ] || vm_fail "no error names with errnos in man/org.cgbypass1.5"
# setpriv is also a busybox applet (without --reuid): the guest calls /usr/local/bin/setpriv
# ldd finds the installed libcgbypass.so.1 for the client (build-initramfs.sh puts it in /lib)
if ! LD_LIBRARY_PATH=$dest$libdir "$top/kernel/build-initramfs.sh" --out "$tmp/initrd.gz" --with-polkit \
	--user alice:1000 --user bob:1001 \
	--bin "$daemon:/usr/local/bin/cgbypassd" --bin "$ctl:/usr/local/bin/cgbypassctl" \
	--bin /usr/bin/setpriv:/usr/local/bin/setpriv \
	--bin "$tmp/client:/usr/local/bin/cgb-client" --bin "$probe:/usr/local/bin/vm-owner-probe" \
	--file "$tmp/errnos:/usr/local/share/cgb-errnos" \
	--file "$top/dbus/org.cgbypass1.conf:/etc/dbus-1/system.d/org.cgbypass1.conf" \
	--file "$top/polkit/org.cgbypass1.policy:/usr/share/polkit-1/actions/org.cgbypass1.policy" \
	--file "$here/vm-daemon-guest.sh:/usr/local/bin/vm-daemon-guest.sh" >"$tmp/initramfs.log" 2>&1; then
	sed 's/^/# /' "$tmp/initramfs.log"
	vm_fail "build-initramfs.sh failed"
fi

n=0
failed=0
# run FLAVOR BACKEND: boot, run the guest script, renumber its TAP lines
run() {
	local flavor=$1 backend=$2 bz out status start line done=0 count=0
	bz=$(vm_kernel "$flavor")
	if [ ! -f "$bz" ]; then
		n=$((n + 1)) failed=$((failed + 1))
		echo "not ok $n - $flavor: no kernel (kernel/build-kernel.sh $flavor)"
		return
	fi
	echo "# $flavor kernel: $bz"
	start=$(date +%s)
	set +e
	out=$("$top/kernel/run-vm.sh" --kernel "$bz" --initrd "$tmp/initrd.gz" --timeout 900 \
		--console-log "$tmp/console-$flavor.log" -- sh /usr/local/bin/vm-daemon-guest.sh "$backend" 2>"$tmp/run-vm.err")
	status=$?
	set -e
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ ok|ok)\ [0-9]+\ -\ (.*)$ ]]; then
			n=$((n + 1)) count=$((count + 1))
			# a TODO (a known bug) does not fail the test
			[ "${BASH_REMATCH[1]}" = ok ] || [[ ${BASH_REMATCH[2]} == *' # TODO '* ]] || failed=$((failed + 1))
			echo "${BASH_REMATCH[1]} $n - $flavor/$backend: ${BASH_REMATCH[2]}"
		elif [[ $line =~ ^1\.\.[0-9]+$ ]]; then
			:
		elif [[ $line =~ ^#\ vm-daemon-guest:\ done ]]; then
			done=1
			echo "$line"
		elif [[ $line =~ ^Bail\ out! ]]; then
			echo "# guest: $line"
		else
			echo "# ${line#\# }"
		fi
	done <<<"$out"
	echo "# $flavor kernel: $(($(date +%s) - start)) s in the VM, exit status $status"
	if [ "$status" -ne 0 ] || [ "$done" != 1 ] || [ "$count" -eq 0 ]; then
		n=$((n + 1)) failed=$((failed + 1))
		echo "not ok $n - $flavor/$backend: the guest script ran to the end and exited 0 (exit status $status, done marker $done, $count checks)"
		sed 's/^/#   /' "$tmp/run-vm.err"
	else
		n=$((n + 1))
		echo "ok $n - $flavor/$backend: the guest script ran to the end and exited 0 ($count checks)"
	fi
}

run patched native
run stock emulated
echo "1..$n"
[ "$failed" -eq 0 ]
