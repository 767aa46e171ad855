#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Install what cgbypassd needs on Debian 12. Idempotent: only missing packages
# are installed, and apt's lists are refreshed only when something is missing.
#
# usage: tools/deps.sh [build|test]
#   build  compiler, meson, libsystemd, inih, check, json-c
#   demo   build + dbus and polkitd (the demo runs the daemon on a private bus)
#   test   build + what the test suite needs (qemu, linux-source-6.1 and the
#          kernel build tools, busybox, dbus, polkitd, cgroup-tools, systemd's
#          systemd-analyze, strace, man-db, groff and mandoc for the man pages,
#          mmdebstrap for the system VM's root file system)
set -euo pipefail

profile=${1:-build}
build_pkgs=(gcc meson ninja-build pkg-config libsystemd-dev libinih-dev check libjson-c-dev)
test_pkgs=(qemu-system-x86 linux-source-6.1 busybox-static make bc bison flex libelf-dev libssl-dev
	cpio xz-utils rsync patch dbus polkitd cgroup-tools systemd strace man-db groff-base mandoc
	mmdebstrap)

case "$profile" in
build) pkgs=("${build_pkgs[@]}") ;;
demo) pkgs=("${build_pkgs[@]}" dbus polkitd util-linux passwd) ;;
test) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
-h | --help)
	sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
*)
	echo "deps.sh: unknown profile '$profile' (build or test)" >&2
	exit 2
	;;
esac

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
