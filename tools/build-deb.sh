#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the Debian packages of this tree (debian/) into OUTDIR and print the
# paths of the .deb files, one a line. The tree is the working tree as it is
# (tracked files and untracked ones git does not ignore, edits included),
# copied to a temporary directory, because dpkg-buildpackage writes its
# results beside the source. The build log is OUTDIR/build.log; OUTDIR also
# gets the .changes and .buildinfo files (lintian reads the .changes).
#
# usage: tools/build-deb.sh OUTDIR
# Needs the package profile of tools/deps.sh (debhelper, dpkg-dev).
# DEB_BUILD_OPTIONS is passed on (default: parallel=NPROC).
set -euo pipefail

die() {
	echo "build-deb.sh: $*" >&2
	exit 1
}
case "${1:-}" in
-h | --help)
	sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
"") die "usage: tools/build-deb.sh OUTDIR" ;;
esac
[ $# -eq 1 ] || die "one argument, OUTDIR (try --help)"
for tool in git dpkg-buildpackage dpkg-checkbuilddeps dh; do
	command -v "$tool" >/dev/null || die "'$tool' is not installed (tools/deps.sh package installs what the build needs)"
done

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
err=$(mkdir -p "$1" 2>&1) || die "cannot make '$1': ${err##*: }"
out=$(cd "$1" && pwd)
[ -f "$top/debian/control" ] || die "no debian/ in $top"
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 || die "$top is not a git work tree (the file list comes from git)"

if ! deps=$(cd "$top" && dpkg-checkbuilddeps 2>&1); then
	die "${deps#dpkg-checkbuilddeps: error: } (tools/deps.sh package installs them)"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cgbypassd-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
version=$(cd "$top" && dpkg-parsechangelog -S Version)
src=$work/cgbypassd-$version
mkdir "$src"
# tracked and untracked-but-not-ignored files that exist (not deleted ones)
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 -r sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done' sh |
	tar -c --null -T - -f -) | tar -x -C "$src" -f -

log=$out/build.log
echo "build-deb.sh: building cgbypassd $version in $work (log: $log)" >&2
if ! (cd "$src" && DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=$(nproc)} \
	dpkg-buildpackage -b -us -uc) >"$log" 2>&1; then
	tail -n 40 "$log" | cut -c 1-300 >&2
	die "dpkg-buildpackage failed; the whole log is $log"
fi

shopt -s nullglob
debs=("$work"/*.deb)
[ ${#debs[@]} -gt 0 ] || die "dpkg-buildpackage made no .deb (see $log)"
mv -f "${debs[@]}" "$work"/*.changes "$work"/*.buildinfo "$out"/
for d in "${debs[@]}"; do echo "$out/${d##*/}"; done
