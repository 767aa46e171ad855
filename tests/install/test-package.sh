#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-package.sh TOP VERSION EXPECTED-FILES
# Builds the Debian packages of the tree TOP with tools/build-deb.sh (a copy
# of the tree, out of it) and checks them as a user and lintian see them:
# lintian has nothing to say at its default level (error, warning); each .deb
# has exactly the files of EXPECTED-FILES; the version is the project's; the
# maintainer scripts enable and start the unit as debhelper does, and purge
# (run for real, in a private mount namespace) removes the state directory
# while remove keeps it. Installing the .deb on a Debian 12 root file system
# under systemd is the system suite's job (tests/system). TAP output.
set -uo pipefail

top=${1:?source tree}
version=${2:?project version}
expected=${3:?package-files.txt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
skip() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1 # SKIP $2"; }

if ! debs=$("$top/tools/build-deb.sh" "$work/out" 2>"$work/build.err"); then
	not_ok "tools/build-deb.sh builds the packages" "$(cat "$work/build.err")"
	echo "1..$TAP_N"
	exit 1
fi
ok "tools/build-deb.sh builds the packages ($(wc -l <<<"$debs") .deb)"

declare -A deb
for d in $debs; do
	[ -f "$d" ] || not_ok "build-deb.sh printed '$d', which is not a file"
	deb[$(dpkg-deb -f "$d" Package)]=$d
done
want="cgbypassd libcgbypass-dev libcgbypass1"
# and the -dbgsym packages debhelper adds unless DEB_BUILD_OPTIONS has noddebs
got=$(printf '%s\n' "${!deb[@]}" | grep -v -- '-dbgsym$' | LC_ALL=C sort | xargs)
[ "$got" = "$want" ] && ok "the packages: $got" || not_ok "the packages are '$got', expected '$want'"

# lintian at its default level: no error and no warning; and no override
# left that no longer applies (lintian says so at the info level)
lint=$(lintian --display-info --fail-on error,warning "$work"/out/*.changes 2>&1)
status=$?
lint=$(grep -v '^running with root privileges' <<<"$lint")
[ $status -eq 0 ] && [ -z "$(grep -E '^[EW]: |^I: [^ ]+ [^ ]*(unused|mismatched)-override' <<<"$lint")" ] &&
	ok "lintian: no errors or warnings" || not_ok "lintian (exit $status)" "$lint"

# the files of each package
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
for p in cgbypassd libcgbypass1 libcgbypass-dev; do
	[ -n "${deb[$p]:-}" ] || continue
	sed -n "s/^$p[[:space:]]\{1,\}//p" "$expected" |
		sed -e "s|@multiarch@|$multiarch|g" -e "s|@unitdir@|$unitdir|g" -e "s|@version@|$version|g" |
		LC_ALL=C sort >"$work/want"
	dpkg-deb -c "${deb[$p]}" | awk '$1 !~ /^d/ {sub(/^\./, "", $6); print $6}' | LC_ALL=C sort >"$work/got"
	if out=$(diff -u "$work/want" "$work/got"); then
		ok "$p: the files of package-files.txt ($(wc -l <"$work/got"))"
	else
		not_ok "$p: files differ from package-files.txt (- expected, + in the .deb)" "$out"
	fi
done

# the package's version is the project's
v=$(dpkg-deb -f "${deb[cgbypassd]}" Version)
[ "$v" = "$version" ] || [[ $v == "$version"-* ]] &&
	ok "version $v is the project's ($version)" ||
	not_ok "package version $v, but meson.build says $version (debian/changelog)"

ctl=$work/ctl
dpkg-deb -e "${deb[cgbypassd]}" "$ctl"
[ "$(cat "$ctl/conffiles")" = /etc/cgbypassd/cgbypassd.conf ] &&
	ok "conffiles: /etc/cgbypassd/cgbypassd.conf" || not_ok "conffiles" "$(cat "$ctl/conffiles")"
grep -q "deb-systemd-helper enable 'cgbypassd.service'" "$ctl/postinst" &&
	grep -q "deb-systemd-invoke \$_dh_action 'cgbypassd.service'" "$ctl/postinst" &&
	ok "postinst enables and starts (on upgrade restarts) cgbypassd.service" ||
	not_ok "postinst does not enable and start cgbypassd.service" "$(cat "$ctl/postinst")"
grep -q "deb-systemd-invoke stop 'cgbypassd.service'" "$ctl/prerm" &&
	ok "prerm stops cgbypassd.service on removal" || not_ok "prerm" "$(cat "$ctl/prerm")"
depends=$(dpkg-deb -f "${deb[cgbypassd]}" Depends)
[[ $depends == *"dbus-system-bus"* && $depends == *libsystemd0* ]] &&
	ok "cgbypassd depends on a system bus and libsystemd0" || not_ok "cgbypassd's Depends: $depends"
if [ -n "${deb[libcgbypass-dev]:-}" ]; then
	dev_depends=$(dpkg-deb -f "${deb[libcgbypass-dev]}" Depends)
	[[ $dev_depends == *"libcgbypass1 (= $v)"* ]] && ok "libcgbypass-dev depends on libcgbypass1 (= $v)" ||
		not_ok "libcgbypass-dev's Depends: $dev_depends"
fi

unpacked=$work/root
for p in cgbypassd libcgbypass1 libcgbypass-dev; do
	[ -z "${deb[$p]:-}" ] || dpkg-deb -x "${deb[$p]}" "$unpacked"
done

# the library: its soname, and the development files build the packaged
# example client (pkg-config libcgbypass alone), which then runs on the
# packaged libcgbypass.so.1
if [ -n "${deb[libcgbypass1]:-}" ]; then
	libdir=$unpacked/usr/lib/$multiarch
	soname=$(objdump -p "$libdir/libcgbypass.so.1" | awk '$1 == "SONAME" {print $2}')
	[ "$soname" = libcgbypass.so.1 ] && ok "libcgbypass1: soname libcgbypass.so.1" || not_ok "soname '$soname'"
	[[ $depends == *"libcgbypass1 (>= "* ]] && ok "cgbypassd depends on libcgbypass1 (it links it)" ||
		not_ok "cgbypassd does not depend on libcgbypass1" "$depends"
	example=$unpacked/usr/share/doc/libcgbypass-dev/examples/client.c
	if flags=$(PKG_CONFIG_SYSROOT_DIR=$unpacked PKG_CONFIG_PATH=$libdir/pkgconfig \
		pkg-config --cflags --libs libcgbypass 2>&1) &&
		out=$(cc -Wall -Wextra -Werror -o "$work/client" "$example" $flags 2>&1); then
		ok "the packaged example builds with pkg-config libcgbypass ($flags)"
		# no bus here: the client runs, its first call fails plainly
		out=$(LD_LIBRARY_PATH=$libdir DBUS_SYSTEM_BUS_ADDRESS=unix:path=$work/no-bus "$work/client" reload 2>&1)
		status=$?
		loaded=$(LD_LIBRARY_PATH=$libdir ldd "$work/client" | awk '$1 == "libcgbypass.so.1" {print $3}')
		[ $status -eq 1 ] && [[ $out == "client: cannot connect to the bus"* ]] &&
			[ "$loaded" = "$libdir/libcgbypass.so.1" ] &&
			ok "it runs on the packaged libcgbypass.so.1" || not_ok "the example client (exit $status, $loaded)" "$out"
	else
		not_ok "the packaged example does not build with the packaged development files" "$flags
$out"
	fi
fi

# the unit as packaged: the installed daemon, the type Debian's systemd knows
unit=$unpacked$unitdir/cgbypassd.service
systemd_version=$(pkg-config --modversion systemd)
want_type=notify
[ "${systemd_version%%.*}" -ge 253 ] && want_type=notify-reload
grep -qx "Type=$want_type" "$unit" && grep -qx "ExecStart=/usr/sbin/cgbypassd" "$unit" &&
	ok "the unit: Type=$want_type (systemd $systemd_version), ExecStart=/usr/sbin/cgbypassd" ||
	not_ok "the packaged unit" "$(grep -E '^(Type|ExecStart)=' "$unit")"

# purge removes the state directory, remove keeps it: the real postrm, in a
# mount namespace whose /var/lib is a fresh tmpfs (deb-systemd-helper's state
# lives there too) and whose /run/systemd and /etc/systemd/system are empty
# (no daemon-reload of the host's systemd, no links of its units touched), with
# the environment dpkg gives maintainer scripts
if [ "$(id -u)" -ne 0 ] || ! unshare --mount true 2>/dev/null; then
	skip "postrm purge removes /var/lib/cgbypassd" "needs root and unshare --mount"
else
	out=$(unshare --mount sh -c '
		mount -t tmpfs tmpfs /var/lib || exit 1
		for d in /run/systemd /etc/systemd/system; do
			[ ! -d $d ] || mount -t tmpfs tmpfs $d || exit 1
		done
		export DPKG_MAINTSCRIPT_PACKAGE=cgbypassd DPKG_MAINTSCRIPT_NAME=postrm
		mkdir -p /var/lib/cgbypassd/sub && echo x >/var/lib/cgbypassd/sub/state
		sh "$1" remove || { echo "postrm remove failed"; exit 1; }
		[ -f /var/lib/cgbypassd/sub/state ] || { echo "remove took the state"; exit 1; }
		sh "$1" purge || { echo "postrm purge failed"; exit 1; }
		[ ! -e /var/lib/cgbypassd ] || { echo "purge left /var/lib/cgbypassd"; exit 1; }' sh "$ctl/postrm" 2>&1)
	[ $? -eq 0 ] && ok "postrm: remove keeps /var/lib/cgbypassd, purge removes it" || not_ok "postrm" "$out"
fi

tap_done
