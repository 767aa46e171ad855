#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build the cgbypassd VM kernel (Debian's linux-source-6.1, tinyconfig plus
# kernel/config/cgbypass.config and systemd.config), with or without
# kernel/patches/, into a
# cache directory outside the source tree.  Prints the bzImage path as the
# last line of stdout; everything else goes to stderr.
set -euo pipefail

usage() {
    cat <<EOF
Usage: ${0##*/} {patched|stock} [--cache DIR] [--jobs N] [--force]

Builds a bzImage from ${TARBALL_DEFAULT}
(override with CGB_LINUX_TARBALL) configured as 'make tinyconfig' plus the
fragments kernel/config/cgbypass.config and kernel/config/systemd.config (in
that order; a later line wins).  'patched' applies kernel/patches/*.patch in
lexical order; 'stock' applies nothing.

The result lives in DIR/<flavor>-<hash>/bzImage, where <hash> covers the
patches, the config fragments and the tarball name; it is rebuilt only when one
of those changes.  Source and object trees are kept per flavor in
DIR/<flavor>-src and DIR/<flavor>-obj, and only files whose content changed
are rewritten, so a patch change rebuilds incrementally.

  --cache DIR  cache directory (default \${CGB_KERNEL_CACHE:-${CACHE_DEFAULT}})
  --jobs N     parallel make jobs (default: nproc = $(nproc))
  --force      rebuild even if the cached bzImage exists
  -h, --help   this text

The last line of stdout is the absolute path of the bzImage.
EOF
}

die() { echo "${0##*/}: $*" >&2; exit 1; }
log() { echo "${0##*/}: $*" >&2; }

TARBALL_DEFAULT=/usr/src/linux-source-6.1.tar.xz
CACHE_DEFAULT=/var/cache/cgbypassd-kernel
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TARBALL=${CGB_LINUX_TARBALL:-$TARBALL_DEFAULT}
CACHE=${CGB_KERNEL_CACHE:-$CACHE_DEFAULT}
FRAGMENTS=("$HERE/config/cgbypass.config" "$HERE/config/systemd.config")
PATCHDIR=$HERE/patches
JOBS=$(nproc)
FORCE=0
FLAVOR=

while [ $# -gt 0 ]; do
    case $1 in
    -h|--help) usage; exit 0 ;;
    --cache) [ $# -ge 2 ] || die "--cache needs a directory"; CACHE=$2; shift 2 ;;
    --cache=*) CACHE=${1#--cache=}; shift ;;
    --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; JOBS=$2; shift 2 ;;
    --jobs=*) JOBS=${1#--jobs=}; shift ;;
    --force) FORCE=1; shift ;;
    patched|stock) [ -z "$FLAVOR" ] || die "flavor given twice"; FLAVOR=$1; shift ;;
    *) die "unknown argument '$1' (try --help)" ;;
    esac
done
[ -n "$FLAVOR" ] || { usage >&2; exit 2; }
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "--jobs wants a positive number, not '$JOBS'"
[ -r "$TARBALL" ] || die "kernel tarball '$TARBALL' not found (apt-get install linux-source-6.1)"
for f in "${FRAGMENTS[@]}"; do
    [ -r "$f" ] || die "config fragment '$f' missing"
done
for tool in make gcc flex bison bc xz patch rsync flock sha256sum; do
    command -v "$tool" >/dev/null || die "'$tool' is not installed"
done

PATCHES=()
if [ "$FLAVOR" = patched ]; then
    shopt -s nullglob
    PATCHES=("$PATCHDIR"/*.patch)
    shopt -u nullglob
    [ ${#PATCHES[@]} -gt 0 ] || die "no patches in $PATCHDIR"
fi

TARNAME=$(basename "$TARBALL")
HASH=$({
    echo "cgbypassd-kernel-recipe 1"
    echo "flavor $FLAVOR"
    echo "tarball $TARNAME"
    for f in "${FRAGMENTS[@]}"; do echo "fragment $(basename "$f")"; cat "$f"; done
    for p in "${PATCHES[@]}"; do echo "patch $(basename "$p")"; cat "$p"; done
} | sha256sum | cut -c1-16)

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
OUT=$CACHE/$FLAVOR-$HASH
SRC=$CACHE/$FLAVOR-src
OBJ=$CACHE/$FLAVOR-obj

# One build per flavor at a time; a second caller waits and then finds the result.
exec 9>"$CACHE/$FLAVOR.lock"
flock 9

if [ "$FORCE" = 0 ] && [ -s "$OUT/bzImage" ]; then
    log "cached: $OUT/bzImage"
    echo "$OUT/bzImage"
    exit 0
fi

T0=$(date +%s)
# (tar dies of SIGPIPE once head has its line: ignore that status)
TOP=$({ tar -tJf "$TARBALL" 2>/dev/null || true; } | head -n1 | cut -d/ -f1)
[ -n "$TOP" ] || die "cannot read '$TARBALL'"

# --- source tree: unpack once per flavor and tarball -------------------------
if [ ! -f "$SRC/.cgb-tarball" ] || [ "$(cat "$SRC/.cgb-tarball")" != "$TARNAME" ]; then
    log "unpacking $TARNAME into $SRC"
    rm -rf "$SRC" "$OBJ"
    mkdir -p "$SRC"
    tar -xJf "$TARBALL" -C "$SRC" --strip-components=1
    : >"$SRC/.cgb-patched-files"
    echo "$TARNAME" >"$SRC/.cgb-tarball"
fi

# --- patches: compute the patched files in a scratch tree, then copy only the
# files whose content differs, so make sees new mtimes only where needed ----
WORK=$(mktemp -d "$CACHE/.work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
touched=$WORK/touched
for p in "${PATCHES[@]}"; do
    sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p"
done | sort -u >"$touched.new"
sort -u "$SRC/.cgb-patched-files" >"$touched.old"
sort -u "$touched.new" "$touched.old" >"$touched"

if [ -s "$touched" ]; then
    mkdir -p "$WORK/orig"
    # Originals of every file the old or the new patch set touches.  Files the
    # tarball lacks (created by a patch) are simply absent.
    sed "s|^|$TOP/|" "$touched" >"$WORK/members"
    tar -xJf "$TARBALL" -C "$WORK/orig" --strip-components=1 \
        --ignore-failed-read -T "$WORK/members" 2>/dev/null || true
    for p in "${PATCHES[@]}"; do
        log "applying $(basename "$p")"
        patch -d "$WORK/orig" -p1 --fuzz=0 --no-backup-if-mismatch -s <"$p" \
            || die "$(basename "$p") does not apply"
    done
    while read -r f; do
        if [ -e "$WORK/orig/$f" ]; then
            if ! cmp -s "$WORK/orig/$f" "$SRC/$f"; then
                log "updating $f"
                mkdir -p "$(dirname "$SRC/$f")"
                cp "$WORK/orig/$f" "$SRC/$f"
            fi
        elif [ -e "$SRC/$f" ]; then
            log "removing $f"
            rm -f "$SRC/$f"
        fi
    done <"$touched"
fi
cp "$touched.new" "$SRC/.cgb-patched-files"

# --- configure -----------------------------------------------------------------
mkdir -p "$OBJ"
K=(make -C "$SRC" O="$OBJ" ARCH=x86_64 -s)
log "configuring: tinyconfig + $(for f in "${FRAGMENTS[@]}"; do basename "$f"; done | paste -sd+)"
{
    "${K[@]}" tinyconfig &&
    "$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" "${FRAGMENTS[@]}" &&
    "${K[@]}" olddefconfig
} >"$OBJ/config.log" 2>&1 || { cat "$OBJ/config.log" >&2; die "configuration failed"; }

# What the fragments ask for, a later fragment's line winning (as in merge_config.sh)
declare -A want=()
for f in "${FRAGMENTS[@]}"; do
    while IFS= read -r line; do
        case $line in
        CONFIG_*=*) want[${line%%=*}]=$line ;;
        "# CONFIG_"*" is not set") sym=${line#\# }; want[${sym%% *}]=off ;;
        esac
    done <"$f"
done
missing=0
for sym in "${!want[@]}"; do
    line=${want[$sym]}
    if [ "$line" = off ]; then
        if grep -q "^$sym=" "$OBJ/.config"; then
            log "config: wanted $sym off, got '$(grep "^$sym=" "$OBJ/.config")'"
            missing=1
        fi
    elif ! grep -qxF -- "$line" "$OBJ/.config"; then
        log "config: wanted '$line', got '$(grep -E "^(# )?$sym[= ]" "$OBJ/.config" || echo "$sym absent")'"
        missing=1
    fi
done
[ "$missing" = 0 ] || die "config fragment did not survive olddefconfig (see above)"

# --- build ---------------------------------------------------------------------
log "building bzImage ($FLAVOR, -j$JOBS) in $OBJ, log in $OBJ/build.log"
TB=$(date +%s)
if ! "${K[@]}" -j"$JOBS" bzImage >"$OBJ/build.log" 2>&1; then
    tail -n 40 "$OBJ/build.log" >&2
    die "kernel build failed (full log: $OBJ/build.log)"
fi
T1=$(date +%s)

mkdir -p "$OUT.tmp"
cp "$OBJ/arch/x86/boot/bzImage" "$OBJ/.config" "$OBJ/System.map" "$OUT.tmp/"
{
    echo "flavor=$FLAVOR"
    echo "tarball=$TARNAME"
    echo "patches=$(for p in "${PATCHES[@]}"; do basename "$p"; done | tr '\n' ' ')"
    echo "build_seconds=$((T1 - TB))"
    echo "total_seconds=$((T1 - T0))"
    echo "jobs=$JOBS"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT.tmp/build-info"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
log "built in $((T1 - TB)) s (total $((T1 - T0)) s): $OUT/bzImage"
echo "$OUT/bzImage"
