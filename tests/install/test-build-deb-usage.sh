#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-build-deb-usage.sh TOP
# tools/build-deb.sh refuses bad usage and a machine without the packaging
# tools with a one-line reason, before it builds anything. TAP output.
set -uo pipefail

top=${1:?source tree}
script=$top/tools/build-deb.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
# expect DESCRIPTION STATUS STDERR-LINE COMMAND...: exit status, the one line on stderr, nothing on stdout
expect() {
	local what=$1 want_status=$2 want_err=$3 status
	shift 3
	"$@" >"$work/out" 2>"$work/err"
	status=$?
	[ $status -eq "$want_status" ] && [ "$(cat "$work/err")" = "$want_err" ] && [ ! -s "$work/out" ] &&
		ok "$what" || not_ok "$what: exit $status" "$(cat "$work/out" "$work/err")"
}

expect "no OUTDIR" 1 "build-deb.sh: usage: tools/build-deb.sh OUTDIR" "$script"
expect "two arguments" 1 "build-deb.sh: one argument, OUTDIR (try --help)" "$script" a b
out=$("$script" --help)
[ $? -eq 0 ] && [[ $out == "Build the Debian packages"*"usage: tools/build-deb.sh OUTDIR"* ]] &&
	ok "--help" || not_ok "--help" "$out"

# a machine without debhelper: its PATH has the rest
mkdir "$work/bin"
for t in bash git dpkg-buildpackage dpkg-checkbuilddeps; do ln -s "$(command -v "$t")" "$work/bin/$t"; done
expect "no debhelper" 1 "build-deb.sh: 'dh' is not installed (tools/deps.sh package installs what the build needs)" \
	env PATH="$work/bin" "$script" "$work/debs"
[ ! -e "$work/debs" ] && ok "... and OUTDIR is not made" || not_ok "OUTDIR made before the check"

: >"$work/file"
expect "OUTDIR below a file" 1 "build-deb.sh: cannot make '$work/file/debs': Not a directory" "$script" "$work/file/debs"

tap_done
