#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tools/build-rootfs.sh refuses bad usage with one clear line on stderr and
# exit 1, before it makes or touches a cache. TAP.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tool=$top/tools/build-rootfs.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgb-rootfs-usage.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# refused DESC REGEX ARGS...: exit 1, nothing on stdout, one stderr line matching REGEX, no cache made
refused() {
	local d=$1 re=$2 st out err
	shift 2
	# shellcheck disable=SC2086 # tool may be a command with arguments
	out=$(CGB_ROOTFS_CACHE=$tmp/cache $tool "$@" 2>"$tmp/err")
	st=$?
	err=$(cat "$tmp/err")
	n=$((n + 1))
	if [ $st -eq 1 ] && [ -z "$out" ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
		printf '%s\n' "$err" | grep -q -- "^build-rootfs.sh: $re" && [ ! -e "$tmp/cache" ]; then
		echo "ok $n - $d"
		echo "#   $err"
	else
		failed=$((failed + 1))
		echo "not ok $n - $d"
		echo "#   exit $st, stdout '$out', stderr '$err', cache $(ls -d "$tmp/cache" 2>&1)"
	fi
}

refused "an unknown argument" "unknown argument '--bogus' (try --help)" --bogus
refused "--deb without --out" "--deb, --destdir and --setup need --out" --deb /dev/null
refused "--destdir without --out" "--deb, --destdir and --setup need --out" --destdir /
refused "--setup without --out" "--deb, --destdir and --setup need --out" --setup /
refused "a --setup directory without setup.sh" "--setup '$tmp' has no setup.sh" --out "$tmp/x" --setup "$tmp"
refused "--setup without a directory" "--setup needs a directory" --out "$tmp/x" --setup
refused "a package that does not exist" "package '$tmp/nope.deb' not found" --out "$tmp/x" --deb "$tmp/nope.deb"
refused "a --destdir that is not a directory" "--destdir '/dev/null' is not a directory" --out "$tmp/x" --destdir /dev/null
refused "--out without a file" "--out needs a file" --out
refused "sources that do not exist" "apt sources '$tmp/none' not found" --sources "$tmp/none"
if [ "$(id -u)" -eq 0 ]; then
	# as nobody: the tool needs root for mmdebstrap, chroot and mounts
	tool="setpriv --reuid=65534 --regid=65534 --clear-groups $tool"
	refused "not root" "needs root (mmdebstrap, chroot, overlay mounts)" --out "$tmp/x" --destdir /
	tool=$top/tools/build-rootfs.sh
fi
out=$("$tool" --help)
n=$((n + 1))
if printf '%s\n' "$out" | grep -q '^Usage: build-rootfs.sh'; then
	echo "ok $n - --help prints the usage"
else
	failed=$((failed + 1))
	echo "not ok $n - --help prints the usage"
fi
echo "1..$n"
[ $failed -eq 0 ]
