#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Install what cgbypassd needs on Debian 12. Idempotent: only missing packages
# are installed, and apt's lists are refreshed only when something is missing.
#
# usage: tools/deps.sh [build|demo|package|test]
#        tools/deps.sh --list PROFILE   print the profile's packages, install nothing
#   build    compiler, meson, libsystemd, inih, check, json-c
#   demo     build + dbus and polkitd (the demo runs the daemon on a private bus)
#   package  build + debhelper, dpkg-dev, lintian and git (tools/build-deb.sh)
#   test     build + package + what the test suite needs (qemu, linux-source-6.1
#            and the kernel build tools, busybox, dbus, polkitd, cgroup-tools,
#            systemd's systemd-analyze, strace, man-db, groff and mandoc for the
#            man pages, gdbus for the signal test of tests/lib, clang and
#            libclang-rt-14-dev (libFuzzer) for the fuzzers, mmdebstrap for
#            the system VM's root file system); every tool a script tests for
#            (tests/install/test-deps.sh)
set -euo pipefail

list=0
if [ "${1:-}" = --list ]; then
	list=1
	shift
fi
profile=${1:-build}
build_pkgs=(gcc meson ninja-build pkg-config libsystemd-dev libinih-dev check libjson-c-dev)
test_pkgs=(qemu-system-x86 linux-source-6.1 busybox-static make bc bison flex libelf-dev libssl-dev
	cpio xz-utils rsync patch dbus polkitd cgroup-tools systemd strace man-db groff-base mandoc libglib2.0-bin python3
	mount util-linux clang libclang-rt-14-dev mmdebstrap)
package_pkgs=(build-essential dpkg-dev debhelper lintian git)

case "$profile" in
build) pkgs=("${build_pkgs[@]}") ;;
demo) pkgs=("${build_pkgs[@]}" dbus polkitd util-linux passwd) ;;
package) pkgs=("${build_pkgs[@]}" "${package_pkgs[@]}") ;;
test) pkgs=("${build_pkgs[@]}" "${package_pkgs[@]}" "${test_pkgs[@]}") ;;
-h | --help)
	sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
*)
	echo "deps.sh: unknown profile '$profile' (build, demo, package or test)" >&2
	exit 2
	;;
esac
if [ $list -eq 1 ]; then
	printf '%s\n' "${pkgs[@]}"
	exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
