#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Smoke test of the VM rig and the port: boot the patched and the stock
# kernel and check the bypass interface from inside.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KDIR=$(cd "$HERE/.." && pwd)
CACHE_ARGS=()
PATCHED=
STOCK=

usage() {
    cat <<EOF
Usage: ${0##*/} [--cache DIR] [--patched BZIMAGE] [--stock BZIMAGE]

Builds (or takes from the cache) the patched and the stock VM kernel with
kernel/build-kernel.sh, an initramfs with kernel/build-initramfs.sh, boots
each with kernel/run-vm.sh and checks:
  patched: 'bypass' in /sys/kernel/cgroup/features; the cgroup-v2.rst example
           A(+) B(#) C(#) D(#) E(+) F(-), G(+) under B; the project's fixes
           (bypass vetted like enable, threaded switch, threaded children);
           debug.masks has four lines
  stock:   no 'bypass' feature; cgroup.controllers is read-only (0444:
           EACCES for a user, EINVAL for root, whom DAC lets open it);
           '#' in cgroup.subtree_control is EINVAL; debug.masks has two lines
Prints one PASS/FAIL line per check; exits 1 if any check fails.

  --cache DIR        kernel cache directory (passed to build-kernel.sh)
  --patched BZIMAGE  use this patched kernel instead of building one
  --stock BZIMAGE    use this stock kernel instead of building one
  -h, --help         this text
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    -h|--help) usage; exit 0 ;;
    --cache) [ $# -ge 2 ] || { usage >&2; exit 2; }; CACHE_ARGS=(--cache "$2"); shift 2 ;;
    --patched) [ $# -ge 2 ] || { usage >&2; exit 2; }; PATCHED=$2; shift 2 ;;
    --stock) [ $# -ge 2 ] || { usage >&2; exit 2; }; STOCK=$2; shift 2 ;;
    *) echo "${0##*/}: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done

if ! command -v qemu-system-x86_64 >/dev/null; then
    echo "FAIL: qemu-system-x86_64 is not installed (apt-get install qemu-system-x86); cannot boot the VM kernels"
    exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cgb-vm-smoke.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

if [ -z "$PATCHED" ]; then
    PATCHED=$("$KDIR/build-kernel.sh" patched "${CACHE_ARGS[@]}" | tail -n 1)
fi
if [ -z "$STOCK" ]; then
    STOCK=$("$KDIR/build-kernel.sh" stock "${CACHE_ARGS[@]}" | tail -n 1)
fi

# Shared helpers for the guest scripts: check NAME EXPECTED ACTUAL, and
# try FILE CONTENT -> "ok" or the error text of the failed write.
cat >"$TMP/lib.sh" <<'EOF'
failed=0
check() {
    if [ "$2" = "$3" ]; then
        echo "PASS: $1"
    else
        echo "FAIL: $1: expected '$2', got '$3'"
        failed=1
    fi
}
try() {
    # one write(2), like the trace tool; dd reports the errno text
    if out=$(printf '%s' "$2" | dd of="$1" bs=4096 conv=notrunc 2>&1); then
        echo ok
    else
        case $out in
        *"No such file or directory"*) echo ENOENT ;;
        *"Device or resource busy"*) echo EBUSY ;;
        *"Operation not supported"*) echo EOPNOTSUPP ;;
        *"Invalid argument"*) echo EINVAL ;;
        *"Permission denied"*) echo EACCES ;;
        *) echo "$out" ;;
        esac
    fi
}
has() { if [ -e "$1" ]; then echo yes; else echo no; fi; }
# the css id of controller $2 in cgroup $1, and its parent's (from debug.csses)
css_id() { sed -n "s/^ *[0-9]*: $2 .*\\[\\([0-9]*\\)\\].*/\\1/p" "$1/debug.csses"; }
css_parent() { sed -n "s/^ *[0-9]*: $2 .* P=\\([0-9]*\\)\$/\\1/p" "$1/debug.csses"; }
lines() { wc -l <"$1" | tr -d ' '; }
cd /sys/fs/cgroup
EOF

cat >"$TMP/patched.sh" <<'EOF'
. /smoke/lib.sh
check "patched: /sys/kernel/cgroup/features lists bypass" yes \
    "$(grep -qx bypass /sys/kernel/cgroup/features && echo yes || echo no)"
check "patched: debug.masks has four lines" 4 "$(lines debug.masks)"
check "patched: cgroup.controllers is writable (0644)" "-rw-r--r--" "$(ls -l cgroup.controllers | cut -c1-10)"
check "patched: root cgroup.controllers write is EINVAL" EINVAL "$(try cgroup.controllers +cpu)"

# Documentation/admin-guide/cgroup-v2.rst, "Cgroup Hierarchy":
#   A(+) - B(#) - C(#) - D(#) - E(+) - F(-)
#                \ G(+)
# effective hierarchy of cpu: A|B|C|D - E|F, and G below A|B|C|D.
mkdir -p A/B/C/D/E/F A/B/G
check "doc: root +cpu" ok "$(try cgroup.subtree_control +cpu)"
check "doc: A #cpu" ok "$(try A/cgroup.subtree_control '#cpu')"
check "doc: B #cpu" ok "$(try A/B/cgroup.subtree_control '#cpu')"
check "doc: C #cpu" ok "$(try A/B/C/cgroup.subtree_control '#cpu')"
check "doc: D #cpu" ok "$(try A/B/C/D/cgroup.subtree_control '#cpu')"
check "doc: E +cpu in cgroup.controllers" ok "$(try A/B/C/D/E/cgroup.controllers +cpu)"
check "doc: G +cpu in cgroup.controllers" ok "$(try A/B/G/cgroup.controllers +cpu)"
check "doc: A/cgroup.subtree_control" "#cpu" "$(cat A/cgroup.subtree_control)"
check "doc: A/cgroup.controllers" cpu "$(cat A/cgroup.controllers)"
check "doc: B/cgroup.controllers" "#cpu" "$(cat A/B/cgroup.controllers)"
check "doc: E/cgroup.controllers" cpu "$(cat A/B/C/D/E/cgroup.controllers)"
check "doc: F/cgroup.controllers" "" "$(cat A/B/C/D/E/F/cgroup.controllers)"
for d in A A/B A/B/C A/B/C/D A/B/C/D/E A/B/C/D/E/F A/B/G; do
    case $d in A|A/B/C/D/E|A/B/G) want=yes ;; *) want=no ;; esac
    check "doc: $d has cpu.weight" $want "$(has $d/cpu.weight)"
done
check "doc: E's cpu css has A's as parent" "$(css_id A cpu)" "$(css_parent A/B/C/D/E cpu)"
check "doc: G's cpu css has A's as parent" "$(css_id A cpu)" "$(css_parent A/B/G cpu)"
check "doc: A debug.masks subtree_bypass" "subtree_bypass   : cpu" "$(sed -n 3p A/debug.masks)"
check "doc: E debug.masks enable_ss_mask" "enable_ss_mask   : cpu" "$(sed -n 4p A/B/C/D/E/debug.masks)"
check "doc: D -cpu while E re-enables it is EBUSY" EBUSY "$(try A/B/C/D/cgroup.subtree_control -cpu)"
check "doc: E +memory in cgroup.controllers is ENOENT" ENOENT "$(try A/B/C/D/E/cgroup.controllers +memory)"
check "doc: E #cpu in cgroup.controllers" ok "$(try A/B/C/D/E/cgroup.controllers '#cpu')"
check "doc: E has no cpu.weight after #cpu" no "$(has A/B/C/D/E/cpu.weight)"
check "doc: E/cgroup.controllers back to bypass" "#cpu" "$(cat A/B/C/D/E/cgroup.controllers)"

# 0005: bypassing a domain controller is vetted like enabling it
check "fix: root +memory" ok "$(try cgroup.subtree_control +memory)"
mkdir P
sleep 1000 &
pid=$!
echo $pid >P/cgroup.procs
check "fix: #memory in a cgroup with processes is EBUSY" EBUSY "$(try P/cgroup.subtree_control '#memory')"
echo $pid >cgroup.procs
kill $pid
wait $pid 2>/dev/null
rmdir P

# 0006: a cgroup bypassing a domain controller can't become threaded
mkdir Q
check "fix: Q #memory" ok "$(try Q/cgroup.subtree_control '#memory')"
check "fix: threaded on a cgroup bypassing memory is EOPNOTSUPP" EOPNOTSUPP "$(try Q/cgroup.type threaded)"
rmdir Q

# 0008: a threaded child of a root that bypasses memory sees no memory
check "fix: root #memory" ok "$(try cgroup.subtree_control '#memory')"
mkdir T
check "fix: T threaded" ok "$(try T/cgroup.type threaded)"
check "fix: threaded T/cgroup.controllers has no #memory" cpu "$(cat T/cgroup.controllers)"
check "fix: threaded T +memory in cgroup.controllers is ENOENT" ENOENT "$(try T/cgroup.controllers +memory)"
rmdir T
exit $failed
EOF

cat >"$TMP/stock.sh" <<'EOF'
. /smoke/lib.sh
check "stock: /sys/kernel/cgroup/features has no bypass" no \
    "$(grep -qx bypass /sys/kernel/cgroup/features && echo yes || echo no)"
check "stock: debug.masks has two lines" 2 "$(lines debug.masks)"
check "stock: cgroup.controllers is read-only (0444)" "-r--r--r--" "$(ls -l cgroup.controllers | cut -c1-10)"
check "stock: root +cpu" ok "$(try cgroup.subtree_control +cpu)"
mkdir A
# 0444 stops other users at open(2) with EACCES; root passes the DAC check and
# the write reaches cgroup_file_write(), which has no handler: EINVAL.
check "stock: writing cgroup.controllers as a user is EACCES" EACCES \
    "$(su -s /bin/sh nobody -c ". /smoke/lib.sh >/dev/null; try $PWD/A/cgroup.controllers +cpu")"
check "stock: writing cgroup.controllers as root is EINVAL" EINVAL "$(try A/cgroup.controllers +cpu)"
check "stock: #cpu in cgroup.subtree_control is EINVAL" EINVAL "$(try A/cgroup.subtree_control '#cpu')"
rmdir A
exit $failed
EOF

chmod 0755 "$TMP"   # /smoke inside: readable for the unprivileged check
"$KDIR/build-initramfs.sh" --out "$TMP/initrd.gz" --file "$TMP:/smoke" 2>/dev/null

status=0
for flavor in patched stock; do
    if [ $flavor = patched ]; then kernel=$PATCHED; else kernel=$STOCK; fi
    set +e
    "$KDIR/run-vm.sh" --kernel "$kernel" --initrd "$TMP/initrd.gz" --timeout 180 \
        -- sh "/smoke/$flavor.sh"
    rc=$?
    set -e
    if [ $rc = 0 ]; then
        echo "PASS: $flavor kernel ($kernel)"
    else
        echo "FAIL: $flavor kernel ($kernel): exit status $rc"
        status=1
    fi
done
exit $status
