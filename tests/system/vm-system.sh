#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The installed package under systemd as PID 1, on both VM kernels: a Debian
# 12 root file system (tools/build-rootfs.sh, cached) with the project's .deb
# installed (tools/build-deb.sh; until that exists, a 'meson install' of a
# --prefix=/usr build stands in), booted under qemu on the patched kernel
# (backend auto: native) and the stock one (emulated); the checks run inside
# (vm-system-guest.sh). TAP.
#
# usage: vm-system.sh
# The kernels come from CGB_KERNEL_PATCHED and CGB_KERNEL_STOCK, or are built
# (cached) with kernel/build-kernel.sh. Skips, saying why, where the VM cannot
# be made: not root, or qemu, mmdebstrap or the kernel source not installed
# (tools/deps.sh test installs them).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

skip() {
	echo "1..0 # SKIP $*"
	exit 0
}
[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap, chroot and overlay mounts build the root file system)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (tools/deps.sh test)"
command -v mmdebstrap >/dev/null || skip "mmdebstrap is not installed (tools/deps.sh test)"
[ -f /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed (tools/deps.sh test)"
# shellcheck source=tests/kernel/vm-lib.sh
. "$top/tests/kernel/vm-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgb-vm-system.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
fail() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1"
	[ ! -f "${2:-}" ] || sed 's/^/#   /' "$2"
}
pass() {
	n=$((n + 1))
	echo "ok $n - $1"
}
finish() {
	echo "1..$n"
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}

# ---- the root file system, the package, the per-run image ----
t0=$(date +%s)
if nice "$top/tools/build-rootfs.sh" >"$tmp/rootfs.out" 2>"$tmp/rootfs.log"; then
	pass "the Debian 12 root file system ($(tail -n 1 "$tmp/rootfs.out"), $(($(date +%s) - t0)) s)"
else
	fail "tools/build-rootfs.sh made the root file system" "$tmp/rootfs.log"
	finish
fi
t0=$(date +%s)
if [ -x "$top/tools/build-deb.sh" ]; then
	what=package
	if nice "$top/tools/build-deb.sh" "$tmp/debs" >"$tmp/deb.log" 2>&1; then
		debs=()
		for d in "$tmp"/debs/*.deb; do
			case ${d##*/} in
			*-dbgsym_* | *-dev_*) ;;
			*) debs+=(--deb "$d") ;;
			esac
		done
		pass "tools/build-deb.sh built $(printf '%s ' "$tmp"/debs/*.deb | sed "s|$tmp/debs/||g")($(($(date +%s) - t0)) s)"
	else
		fail "tools/build-deb.sh built the packages" "$tmp/deb.log"
		finish
	fi
	install=("${debs[@]}")
else
	what="meson install (no tools/build-deb.sh yet)"
	if nice meson setup "$tmp/build" "$top" --prefix=/usr -Dtests=false -Dbuildtype=debugoptimized >"$tmp/deb.log" 2>&1 &&
		nice meson compile -C "$tmp/build" >>"$tmp/deb.log" 2>&1 &&
		meson install -C "$tmp/build" --no-rebuild --destdir "$tmp/dest" >>"$tmp/deb.log" 2>&1; then
		pass "stand-in for the package: meson install of a --prefix=/usr build ($(($(date +%s) - t0)) s)"
	else
		fail "meson install of a --prefix=/usr build" "$tmp/deb.log"
		finish
	fi
	install=(--destdir "$tmp/dest")
fi
t0=$(date +%s)
if "$top/tools/build-rootfs.sh" --out "$tmp/initrd.gz" "${install[@]}" >/dev/null 2>"$tmp/image.log"; then
	pass "the per-run image with the $what installed ($(du -h "$tmp/initrd.gz" | cut -f1), $(($(date +%s) - t0)) s)"
	sed 's/^/#   /' "$tmp/image.log"
else
	fail "installing the $what into the image" "$tmp/image.log"
	finish
fi

# run FLAVOR BACKEND: boot, run the guest script, renumber its TAP lines
run() {
	local flavor=$1 backend=$2 bz out status start line done=0 count=0
	bz=$(vm_kernel "$flavor")
	if [ ! -f "$bz" ]; then
		fail "$flavor: no kernel (kernel/build-kernel.sh $flavor)"
		return
	fi
	echo "# $flavor kernel: $bz"
	start=$(date +%s)
	set +e
	# TCG on a busy host is slow: systemd's 90 s start timeouts would fail
	# units that are merely waiting for a CPU
	# tests/system/guest-*.sh go to /usr/share/cgbypassd-tests/ (see the top
	# of vm-system-guest.sh, which runs them)
	local guests=() g
	for g in "$here"/guest-*.sh; do
		[ -f "$g" ] && guests+=(--file "$g:/usr/share/cgbypassd-tests/${g##*/}")
	done
	out=$("$top/kernel/run-vm.sh" --kernel "$bz" --initrd "$tmp/initrd.gz" --mem 1G --timeout 2400 \
		--append "systemd.default_timeout_start_sec=900" \
		--console-log "$tmp/console-$flavor.log" \
		--file "$here/vm-system-guest.sh:/usr/local/bin/vm-system-guest.sh" "${guests[@]}" \
		-- bash /usr/local/bin/vm-system-guest.sh "$backend" 2>"$tmp/run-vm.err")
	status=$?
	set -e
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ ok|ok)\ [0-9]+\ -\ (.*)$ ]]; then
			n=$((n + 1)) count=$((count + 1))
			[ "${BASH_REMATCH[1]}" = ok ] || [[ ${BASH_REMATCH[2]} == *' # TODO '* ]] || failed=$((failed + 1))
			echo "${BASH_REMATCH[1]} $n - $flavor/$backend: ${BASH_REMATCH[2]}"
		elif [[ $line =~ ^1\.\.[0-9]+$ ]]; then
			:
		elif [[ $line =~ ^#\ vm-system-guest:\ done ]]; then
			done=1
			echo "$line"
		else
			echo "# ${line#\# }"
		fi
	done <<<"$out"
	echo "# $flavor kernel: $(($(date +%s) - start)) s for the VM (boot, checks, power-off), exit status $status"
	if [ "$status" -ne 0 ] || [ "$done" != 1 ] || [ "$count" -eq 0 ]; then
		fail "$flavor/$backend: the guest script ran to the end and exited 0 (exit status $status, done marker $done, $count checks)" \
			"$tmp/run-vm.err"
		echo "# the console, last 60 lines:"
		tail -n 60 "$tmp/console-$flavor.log" | sed 's/^/#   /'
	else
		pass "$flavor/$backend: the guest script ran to the end and exited 0 ($count checks)"
	fi
}

run patched native
run stock emulated
finish
