#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Check that kernel/patches/*.patch apply, in lexical order, with `patch -p1`
# to a freshly unpacked Debian linux-source-6.1 tree: no fuzz, no offsets, no
# rejects.  Each patch is first tried with --dry-run, then applied for real so
# the next one sees its result.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TARBALL=${CGB_LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
PATCHDIR=$HERE/../patches
QUICK=0

usage() {
    cat <<EOF
Usage: ${0##*/} [--quick] [--patches DIR] [--tarball FILE]

Unpacks the kernel tarball (default $TARBALL, or CGB_LINUX_TARBALL) into a
temporary directory and applies every DIR/*.patch (default kernel/patches) in
lexical order with 'patch -p1', first with --dry-run, then for real.  Fails on
any fuzz, offset, reject or malformed patch.  Prints one line per patch.

  --quick         unpack only the files the patches touch (same result, faster)
  --patches DIR   directory holding the patches
  --tarball FILE  kernel source tarball
  -h, --help      this text
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    -h|--help) usage; exit 0 ;;
    --quick) QUICK=1; shift ;;
    --patches) [ $# -ge 2 ] || { usage >&2; exit 2; }; PATCHDIR=$2; shift 2 ;;
    --tarball) [ $# -ge 2 ] || { usage >&2; exit 2; }; TARBALL=$2; shift 2 ;;
    *) echo "${0##*/}: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done

fail() { echo "FAIL: $*"; exit 1; }
indent() { printf '%s\n' "$1" | while IFS= read -r l; do printf '    %s\n' "$l"; done; }
[ -r "$TARBALL" ] || fail "kernel tarball '$TARBALL' not found (apt-get install linux-source-6.1)"
command -v patch >/dev/null || fail "'patch' is not installed"

shopt -s nullglob
patches=("$PATCHDIR"/*.patch)
shopt -u nullglob
[ ${#patches[@]} -gt 0 ] || fail "no patches in $PATCHDIR"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cgb-check-patches.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
TREE=$TMP/linux
mkdir -p "$TREE"

echo "tarball: $TARBALL"
echo "patches: ${#patches[@]} in $(cd "$PATCHDIR" && pwd)"
TOP=$({ tar -tJf "$TARBALL" 2>/dev/null || true; } | head -n1 | cut -d/ -f1)
[ -n "$TOP" ] || fail "cannot list '$TARBALL'"
if [ "$QUICK" = 1 ]; then
    for p in "${patches[@]}"; do
        sed -n 's|^--- a/\([^[:space:]]*\).*|\1|p' "$p"
    done | sort -u | sed "s|^|$TOP/|" >"$TMP/members"
    echo "unpacking $(wc -l <"$TMP/members") touched files into $TREE"
    tar -xJf "$TARBALL" -C "$TREE" --strip-components=1 -T "$TMP/members"
else
    echo "unpacking the whole tree into $TREE"
    tar -xJf "$TARBALL" -C "$TREE" --strip-components=1
fi

status=0
for p in "${patches[@]}"; do
    name=$(basename "$p")
    files=$(grep -c '^diff --git ' "$p" || true)
    hunks=$(grep -c '^@@ ' "$p" || true)
    if ! out=$(patch -d "$TREE" -p1 --dry-run --fuzz=0 --no-backup-if-mismatch <"$p" 2>&1); then
        echo "FAIL: $name: dry run failed"; indent "$out"
        status=1; break
    fi
    if bad=$(echo "$out" | grep -Ei 'fuzz|offset|reject|fail|reversed|malformed|garbage|only garbage'); then
        echo "FAIL: $name: not clean"; indent "$bad"
        status=1; break
    fi
    if ! out=$(patch -d "$TREE" -p1 --fuzz=0 --no-backup-if-mismatch <"$p" 2>&1); then
        echo "FAIL: $name: apply failed"; indent "$out"
        status=1; break
    fi
    if bad=$(echo "$out" | grep -Ei 'fuzz|offset|reject|fail|reversed|malformed'); then
        echo "FAIL: $name: not clean"; indent "$bad"
        status=1; break
    fi
    echo "ok: $name ($files files, $hunks hunks, no fuzz, no offset)"
done

if [ "$status" = 0 ]; then
    leftovers=$(find "$TREE" \( -name '*.rej' -o -name '*.orig' \) -print | head -n 5)
    if [ -n "$leftovers" ]; then
        echo "FAIL: reject or backup files left:"; indent "$leftovers"
        status=1
    fi
fi
if [ "$status" = 0 ]; then
    echo "PASS: all ${#patches[@]} patches apply cleanly to $(basename "$TARBALL")"
fi
exit "$status"
