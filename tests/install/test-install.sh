#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-install.sh MESON BUILDDIR EXPECTED-FILES NAME=DIR...
# Installs the build into a temporary DESTDIR and checks the result against
# EXPECTED-FILES (its @NAME@ replaced by the DIRs the build chose): the same
# files and empty directories, nothing else; the modes of the programs and
# the configuration; the unit's and the activation file's programs; the man
# pages the unit's Documentation= names. TAP output.
set -uo pipefail

meson=${1:?meson}
build=${2:?build dir}
expected=${3:?expected-files.txt}
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest=$work/dest
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/# /'
	return 0
}

declare -A dir
sed_args=()
for kv in "$@"; do
	dir[${kv%%=*}]=${kv#*=}
	sed_args+=(-e "s|@${kv%%=*}@|${kv#*=}|g")
done

if out=$(DESTDIR=$dest "$meson" install -C "$build" --no-rebuild --quiet 2>&1); then
	ok "meson install into a DESTDIR"
else
	not_ok "meson install into a DESTDIR" "$out"
	echo "1..$n"
	exit 1
fi

# the layout: regular files and symlinks, and directories that are empty
grep -v -e '^#' -e '^$' "$expected" | sed "${sed_args[@]}" | LC_ALL=C sort >"$work/want"
if grep -q '@' "$work/want"; then
	not_ok "every @name@ in expected-files.txt is known" "$(grep '@' "$work/want")"
fi
(cd "$dest" && find . \( -type f -o -type l \) -printf '/%P\n' && find . -mindepth 1 -type d -empty -printf '/%P/\n') |
	LC_ALL=C sort >"$work/got"
if out=$(diff -u "$work/want" "$work/got"); then
	ok "installed files are those in expected-files.txt ($(wc -l <"$work/got"))"
else
	not_ok "installed files differ from expected-files.txt (- expected, + installed)" "$out"
fi

mode_is() { # description, mode, path below DESTDIR
	local m
	m=$(stat -c %a "$dest$3" 2>&1)
	[ "$m" = "$2" ] && ok "$1: mode $2" || not_ok "$1: mode $m, expected $2"
}
mode_is "cgbypassd" 755 "${dir[sbindir]}/cgbypassd"
mode_is "cgbypassctl" 755 "${dir[bindir]}/cgbypassctl"
mode_is "cgbypass-trace" 755 "${dir[bindir]}/cgbypass-trace"
mode_is "cgbypassd.conf" 644 "${dir[sysconfdir]}/cgbypassd/cgbypassd.conf"
mode_is "conf.d" 755 "${dir[sysconfdir]}/cgbypassd/conf.d"
mode_is "cgbypassd.service" 644 "${dir[unitdir]}/cgbypassd.service"
mode_is "the bus policy" 644 "${dir[dbus_policy_dir]}/org.cgbypass1.conf"
mode_is "the polkit actions" 644 "${dir[polkit_actions_dir]}/org.cgbypass1.policy"
mode_is "libcgbypass.so.1.0.0" 755 "${dir[libdir]}/libcgbypass.so.1.0.0"
mode_is "<cgbypass/cgbypass.h>" 644 "${dir[includedir]}/cgbypass/cgbypass.h"
[ "$(readlink "$dest${dir[libdir]}/libcgbypass.so.1")" = libcgbypass.so.1.0.0 ] &&
	[ "$(readlink "$dest${dir[libdir]}/libcgbypass.so")" = libcgbypass.so.1 ] &&
	ok "libcgbypass.so -> .so.1 -> .so.1.0.0" || not_ok "libcgbypass symlinks" "$(ls -l "$dest${dir[libdir]}")"
pc=$dest${dir[libdir]}/pkgconfig/libcgbypass.pc
# the header includes <systemd/sd-bus.h>: libsystemd is a public requirement
grep -q '^Cflags: -I${includedir}$' "$pc" && grep -q '^Requires: .*libsystemd' "$pc" &&
	grep -q '^Libs: .*-lcgbypass' "$pc" &&
	ok "libcgbypass.pc: the header's directory, -lcgbypass, requires libsystemd" || not_ok "libcgbypass.pc" "$(cat "$pc")"

# the unit starts the installed daemon; the activation file names the unit
unit=$dest${dir[unitdir]}/cgbypassd.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[[ $exec_start == "${dir[sbindir]}/cgbypassd" || $exec_start == "${dir[sbindir]}/cgbypassd "* ]] &&
	[ -x "$dest${exec_start%% *}" ] &&
	ok "ExecStart= runs the installed ${dir[sbindir]}/cgbypassd" || not_ok "ExecStart=$exec_start"
if [ "${dir[sysconfdir]}" != /etc ]; then
	[[ $exec_start == *"--config ${dir[sysconfdir]}/cgbypassd/cgbypassd.conf --config-dir ${dir[sysconfdir]}/cgbypassd/conf.d" ]] &&
		ok "ExecStart= names the installed configuration (sysconfdir ${dir[sysconfdir]})" ||
		not_ok "ExecStart= does not name the configuration in ${dir[sysconfdir]}" "$exec_start"
fi
grep -q '@[a-z_]*@' "$unit" && not_ok "the unit has unsubstituted @...@" "$(grep '@[a-z_]*@' "$unit")"
svc=$dest${dir[dbus_services_dir]}/org.cgbypass1.service
[ "$(sed -n 's/^SystemdService=//p' "$svc")" = cgbypassd.service ] &&
	[ "$(sed -n 's/^Name=//p' "$svc")" = "$(sed -n 's/^BusName=//p' "$unit")" ] &&
	[ "$(sed -n 's/^Alias=//p' "$unit")" = dbus-org.cgbypass1.service ] &&
	ok "activation file, BusName= and Alias= agree on org.cgbypass1" ||
	not_ok "activation file and unit disagree" "$(cat "$svc")"

# every man page the unit's Documentation= names is installed
docs=$(sed -n 's/^Documentation=//p' "$unit")
missing=
for d in $docs; do
	[[ $d =~ ^man:([^()]+)\(([0-9])\)$ ]] || continue
	page="${dir[mandir]}/man${BASH_REMATCH[2]}/${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
	[ -f "$dest$page" ] || missing+=" $page"
done
[ -z "$missing" ] && ok "the man pages of Documentation= are installed" ||
	not_ok "Documentation= names man pages that are not installed:$missing"

echo "1..$n"
[ "$failed" -eq 0 ]
