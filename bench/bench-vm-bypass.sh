#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The seeds' promise, measured: a pipe ping-pong (bench/pingpong.c) in the VM
# kernel, in a leaf at depth 8 with cpu enabled at every level, in a leaf at
# depth 8 with cpu bypassed at levels 2-8 and re-enabled at the leaf, in a
# leaf at depth 2 with cpu at both levels, and in a flat cgroup under the
# root.  Prints figures, asserts no time.
#
# Where bypass/flat's remaining ~15 % goes: the bypass leaf has two cpu task
# groups (b8 and b1: the root enables cpu for b1, which bypasses it for its
# children), flat has one.  Every cpu task group on the way up costs the same
# (enqueue, dequeue, pick and put walk the sched_entity of each level):
# deep/flat - 1 is seven such levels, bypass/flat - 1 is one.  'pair' has the
# same two groups with no bypassed level between them, so bypass/pair is what
# the six bypassed levels cost: the figure the series is about.
set -euo pipefail

PROG=${0##*/}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
KDIR=$TOP/kernel

ROUND_TRIPS=20000
WARMUP=1000
PAIRS=1
SIZE=1
ROUNDS=5
CLOCK=icount
SMP=1
TIMEOUT=1800
STOCK=0
VERBOSE=0
PATCHED_BZ=
STOCK_BZ=
PINGPONG=
CACHE_ARGS=()

usage() {
    cat <<EOF
Usage: $PROG [OPTIONS]

Boots the patched VM kernel (kernel/build-kernel.sh patched, built or taken
from the cache) under qemu TCG and runs bench/pingpong in these cgroups, all
set up in one boot and checked before anything is timed:

  deep    /d1/d2/.../d8  root and d1..d7 have +cpu in cgroup.subtree_control:
                         8 cpu task groups between the leaf and the root
  bypass  /b1/b2/.../b8  root +cpu; b1..b7 '#cpu' in cgroup.subtree_control
                         (b2..b8 bypassed), b8 '+cpu' in its cgroup.controllers:
                         2 cpu task groups (b8, whose parent group is b1's)
  pair    /e1/e2         root and e1 +cpu: 2 cpu task groups, no level between
                         them (what bypass is compared with)
  flat    /f1            root +cpu: 1 cpu task group
  root    /              reference: the root cgroup, no cpu task group

Each round runs every placement once (the starting placement rotates from
round to round); the figures are medians over the rounds, from ONE boot.
Prints the median time per placement, its spread ((max - min) / median),
and deep/flat, bypass/flat, pair/flat, root/flat and bypass/pair as ratios of
the medians, with the range of the same ratios taken round by round.  The guest checks the setup first
(cgroup.controllers, cgroup.subtree_control, debug.masks, cpu.weight and the
cpu css parent of every level, from debug.csses) and fails if it is not as
described above.

Options:
  -n, --round-trips N   timed round trips per pair and run (default $ROUND_TRIPS)
  -w, --warmup N        untimed round trips first (default $WARMUP)
  -p, --pairs P         pairs bouncing at once; P > 1 is hackbench-like (default $PAIRS)
  -s, --size BYTES      message size (default $SIZE)
  -r, --rounds R        rounds (default $ROUNDS)
  --clock icount|host   icount (default): qemu -icount shift=0,sleep=off, so the
                        guest's CLOCK_MONOTONIC advances 1 ns per emulated
                        instruction: reproducible, counts work, not cache misses.
                        host: plain TCG; the guest clock is host time, which
                        moves with the host's load (expect +-20 % per run)
  --smp N               guest CPUs (default $SMP)
  --stock               also boot the stock kernel (deep, flat, root; it has no bypass)
  --kernel BZIMAGE      patched kernel to use instead of building one
  --stock-kernel BZIMAGE
                        stock kernel to use with --stock instead of building one
  --cache DIR           kernel cache directory (passed to kernel/build-kernel.sh)
  --pingpong PATH       pingpong binary to use (default: build bench/pingpong.c
                        with \${CC:-cc} -O2 -static into a temporary directory)
  --timeout SECS        per boot (default $TIMEOUT)
  -v, --verbose         also print every check and every run
  -h, --help            this text

Exit status: 0 when the figures were printed; 1 when a build, the boot or a
check in the guest failed (its output is shown); 2 for bad usage.
EOF
}

die() { echo "$PROG: $*" >&2; exit 1; }
usage_error() { echo "$PROG: $* (try --help)" >&2; exit 2; }
need_arg() { [ "$1" -ge 2 ] || usage_error "$2 needs a value"; }
positive() { [[ $2 =~ ^[1-9][0-9]*$ ]] || usage_error "$1 wants a positive number, not '$2'"; }

while [ $# -gt 0 ]; do
    case $1 in
    -h|--help) usage; exit 0 ;;
    -n|--round-trips) need_arg $# "$1"; positive "$1" "$2"; ROUND_TRIPS=$2; shift 2 ;;
    -w|--warmup) need_arg $# "$1"; [[ $2 =~ ^[0-9]+$ ]] || usage_error "$1 wants a number"; WARMUP=$2; shift 2 ;;
    -p|--pairs) need_arg $# "$1"; positive "$1" "$2"; PAIRS=$2; shift 2 ;;
    -s|--size) need_arg $# "$1"; positive "$1" "$2"; SIZE=$2; shift 2 ;;
    -r|--rounds) need_arg $# "$1"; positive "$1" "$2"; ROUNDS=$2; shift 2 ;;
    --clock) need_arg $# "$1"; CLOCK=$2; shift 2 ;;
    --smp) need_arg $# "$1"; positive "$1" "$2"; SMP=$2; shift 2 ;;
    --stock) STOCK=1; shift ;;
    --kernel) need_arg $# "$1"; PATCHED_BZ=$2; shift 2 ;;
    --stock-kernel) need_arg $# "$1"; STOCK_BZ=$2; shift 2 ;;
    --cache) need_arg $# "$1"; CACHE_ARGS=(--cache "$2"); shift 2 ;;
    --pingpong) need_arg $# "$1"; PINGPONG=$2; shift 2 ;;
    --timeout) need_arg $# "$1"; positive "$1" "$2"; TIMEOUT=$2; shift 2 ;;
    -v|--verbose) VERBOSE=1; shift ;;
    *) usage_error "unknown argument '$1'" ;;
    esac
done
case $CLOCK in
icount|host) ;;
*) usage_error "--clock wants icount or host, not '$CLOCK'" ;;
esac

T_START=$(date +%s)
QEMU_BASE=${CGB_QEMU:-qemu-system-x86_64}
command -v "$QEMU_BASE" >/dev/null ||
    die "$QEMU_BASE is not installed (apt-get install qemu-system-x86); cannot boot the VM kernel"
command -v awk >/dev/null || die "awk is not installed"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cgb-bench-vm.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# --- the workload: a static binary needs nothing else in the initramfs -----------
if [ -z "$PINGPONG" ]; then
    PINGPONG=$TMP/pingpong
    "${CC:-cc}" -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -static \
        -o "$PINGPONG" "$HERE/pingpong.c" ||
        die "cannot build $HERE/pingpong.c statically (is libc6-dev installed?)"
fi
[ -x "$PINGPONG" ] || die "'$PINGPONG' is not an executable"

# --- kernels -------------------------------------------------------------------
if [ -z "$PATCHED_BZ" ]; then
    PATCHED_BZ=$("$KDIR/build-kernel.sh" patched "${CACHE_ARGS[@]}" | tail -n 1)
fi
[ -r "$PATCHED_BZ" ] || die "patched kernel '$PATCHED_BZ' not found"
if [ "$STOCK" = 1 ]; then
    if [ -z "$STOCK_BZ" ]; then
        STOCK_BZ=$("$KDIR/build-kernel.sh" stock "${CACHE_ARGS[@]}" | tail -n 1)
    fi
    [ -r "$STOCK_BZ" ] || die "stock kernel '$STOCK_BZ' not found"
fi

# --- the guest side: set up, check, measure --------------------------------------
mkdir -p "$TMP/guest"
cat >"$TMP/guest/measure.sh" <<'EOF'
# bench-vm-bypass guest script (busybox sh).
# Usage: measure.sh ROUNDS "PLACEMENT..." [PINGPONG OPTION]...
# Output: "check ok|FAIL TEXT", "info TEXT", "run PLACEMENT ROUND SECONDS".
set -u
ROUNDS=$1
PLACEMENTS=$2
shift 2
CG=/sys/fs/cgroup
D=d1/d2/d3/d4/d5/d6/d7/d8
B=b1/b2/b3/b4/b5/b6/b7/b8
failed=0

check() {
    if [ "$2" = "$3" ]; then
        echo "check ok $1: '$3'"
    else
        echo "check FAIL $1: expected '$2', got '$3'"
        failed=1
    fi
}
put() {
    # one write(2), as a program would do it
    if ! printf '%s' "$2" | dd of="$CG/$1" bs=4096 conv=notrunc 2>/dev/null; then
        echo "check FAIL write '$2' to $1"
        failed=1
    fi
}
has() { if [ -e "$CG/$1" ]; then echo yes; else echo no; fi; }
controllers() { cat "$CG/$1/cgroup.controllers"; }
# css id of cpu in cgroup $1 and its parent's, from debug.csses ("none": no cpu css)
css_id() {
    v=$(sed -n 's/^ *[0-9]*: cpu .*\[\([0-9]*\)\].*/\1/p' "$CG/$1/debug.csses")
    echo "${v:-none}"
}
css_parent() {
    v=$(sed -n 's/^ *[0-9]*: cpu .* P=\([0-9]*\)$/\1/p' "$CG/$1/debug.csses")
    echo "${v:-none}"
}
mask() { sed -n "s/^$2 *: *//p" "$CG/$1/debug.masks"; }
name() { if [ "$1" = . ]; then echo "the root"; else echo "$1"; fi; }
# cpu task groups on the path from cgroup $1 up to (not counting) the root
cpu_groups() {
    n=0
    p=$1
    while [ "$p" != . ]; do
        [ "$(css_id "$p")" = none ] || n=$((n + 1))
        p=$(dirname "$p")
    done
    echo "$n"
}
# "d1 d1/d2 ... d1/.../d8" for d1/.../d8
ancestors() {
    p=''
    for c in $(echo "$1" | tr / ' '); do
        p=${p:+$p/}$c
        echo "$p"
    done
}

BYPASS=no
grep -qx bypass /sys/kernel/cgroup/features && BYPASS=yes
echo "info kernel $(uname -r), bypass feature: $BYPASS, $(grep -c ^processor /proc/cpuinfo) CPU(s)"
put cgroup.subtree_control +cpu
check "/ cgroup.subtree_control" cpu "$(cat "$CG/cgroup.subtree_control")"
root_id=$(css_id .)

for p in $PLACEMENTS; do
    case $p in
    deep)
        mkdir -p "$CG/$D"
        prev=.
        for c in $(ancestors "$D"); do
            [ "$c" = "$D" ] || put "$c/cgroup.subtree_control" +cpu
            check "$c cgroup.controllers" cpu "$(controllers "$c")"
            check "$c cpu.weight exists" yes "$(has "$c/cpu.weight")"
            check "$c cpu css parent is $(name "$prev")'s" "$(css_id "$prev")" "$(css_parent "$c")"
            prev=$c
        done
        [ "$BYPASS" = no ] || check "$D debug.masks enable_ss_mask" "" "$(mask "$D" enable_ss_mask)"
        check "$D cpu task groups up to the root" 8 "$(cpu_groups "$D")"
        ;;
    bypass)
        if [ "$BYPASS" != yes ]; then
            echo "check FAIL no bypass in /sys/kernel/cgroup/features"
            exit 1
        fi
        mkdir -p "$CG/$B"
        for c in $(ancestors "$B"); do
            [ "$c" = "$B" ] || put "$c/cgroup.subtree_control" '#cpu'
        done
        put "$B/cgroup.controllers" +cpu
        for c in $(ancestors "$B"); do
            if [ "$c" = b1 ]; then
                check "$c cgroup.controllers" cpu "$(controllers "$c")"
                check "$c cpu.weight exists" yes "$(has "$c/cpu.weight")"
                check "$c cpu css parent is the root's" "$root_id" "$(css_parent "$c")"
            elif [ "$c" = "$B" ]; then
                check "$c cgroup.controllers" cpu "$(controllers "$c")"
                check "$c debug.masks enable_ss_mask" cpu "$(mask "$c" enable_ss_mask)"
                check "$c cpu.weight exists" yes "$(has "$c/cpu.weight")"
                check "$c cpu css parent is b1's" "$(css_id b1)" "$(css_parent "$c")"
            else
                check "$c cgroup.controllers" "#cpu" "$(controllers "$c")"
                check "$c cpu.weight exists" no "$(has "$c/cpu.weight")"
                check "$c has no cpu css" none "$(css_id "$c")"
            fi
            [ "$c" = "$B" ] || check "$c debug.masks subtree_bypass" cpu "$(mask "$c" subtree_bypass)"
        done
        check "$B cpu task groups up to the root" 2 "$(cpu_groups "$B")"
        for c in b1/b2 "$B"; do
            echo "info $c: cgroup.controllers '$(controllers "$c")'," \
                "cpu.weight $(has "$c/cpu.weight")," \
                "debug.masks $(tr -s ' \n' ' ' <"$CG/$c/debug.masks")"
        done
        ;;
    pair)
        mkdir -p "$CG/e1/e2"
        put e1/cgroup.subtree_control +cpu
        check "e1 cpu css parent is the root's" "$root_id" "$(css_parent e1)"
        check "e1/e2 cpu.weight exists" yes "$(has e1/e2/cpu.weight)"
        check "e1/e2 cpu css parent is e1's" "$(css_id e1)" "$(css_parent e1/e2)"
        check "e1/e2 cpu task groups up to the root" 2 "$(cpu_groups e1/e2)"
        ;;
    flat)
        mkdir -p "$CG/f1"
        check "f1 cgroup.controllers" cpu "$(controllers f1)"
        check "f1 cpu.weight exists" yes "$(has f1/cpu.weight)"
        check "f1 cpu css parent is the root's" "$root_id" "$(css_parent f1)"
        check "f1 cpu task groups up to the root" 1 "$(cpu_groups f1)"
        ;;
    root) ;;
    *)
        echo "check FAIL unknown placement '$p'"
        exit 1
        ;;
    esac
done
if [ "$failed" != 0 ]; then
    echo "check FAIL the setup is not what the benchmark measures; nothing timed"
    exit 1
fi

dir_of() {
    case $1 in
    deep) echo "$CG/$D" ;;
    bypass) echo "$CG/$B" ;;
    pair) echo "$CG/e1/e2" ;;
    flat) echo "$CG/f1" ;;
    root) echo "$CG" ;;
    esac
}
np=$(echo "$PLACEMENTS" | wc -w)
r=1
while [ "$r" -le "$ROUNDS" ]; do
    # rotate the order: round r starts with placement number (r - 1) mod np
    order=$(echo "$PLACEMENTS $PLACEMENTS" | tr ' ' '\n' |
        sed -n "$(( (r - 1) % np + 1 )),$(( (r - 1) % np + np ))p")
    for p in $order; do
        if ! out=$(/usr/local/bin/pingpong --cgroup "$(dir_of "$p")" "$@" 2>&1); then
            echo "check FAIL pingpong in $p: $out"
            exit 1
        fi
        echo "info $p round $r: $out"
        s=$(echo "$out" | sed -n 's/.* seconds=\([0-9.]*\) .*/\1/p')
        if [ -z "$s" ]; then
            echo "check FAIL cannot parse: $out"
            exit 1
        fi
        echo "run $p $r $s"
    done
    r=$((r + 1))
done
EOF

"$KDIR/build-initramfs.sh" --out "$TMP/initrd.gz" --bin "$PINGPONG" \
    --file "$TMP/guest:/bench" 2>"$TMP/initramfs.log" ||
    { cat "$TMP/initramfs.log" >&2; die "kernel/build-initramfs.sh failed"; }

CLOCK_ARGS=()
[ "$CLOCK" = icount ] && CLOCK_ARGS=(--qemu-arg -icount --qemu-arg shift=0,sleep=off)

# boot FLAVOR BZIMAGE PLACEMENTS: run the guest script, keep its output in $TMP/FLAVOR.out
boot() {
    local flavor=$1 bz=$2 placements=$3 t0 rc=0
    t0=$(date +%s)
    "$KDIR/run-vm.sh" --kernel "$bz" --initrd "$TMP/initrd.gz" --smp "$SMP" \
        --timeout "$TIMEOUT" "${CLOCK_ARGS[@]}" -- sh /bench/measure.sh "$ROUNDS" "$placements" \
        --round-trips "$ROUND_TRIPS" --warmup "$WARMUP" --pairs "$PAIRS" --size "$SIZE" \
        >"$TMP/$flavor.out" || rc=$?
    echo $(( $(date +%s) - t0 )) >"$TMP/$flavor.seconds"
    if [ "$rc" != 0 ] || grep -q '^check FAIL' "$TMP/$flavor.out"; then
        echo "$PROG: the $flavor VM run failed (exit status $rc); its output:" >&2
        sed 's/^/    /' "$TMP/$flavor.out" >&2
        exit 1
    fi
    if [ "$VERBOSE" = 1 ]; then
        sed "s/^/[$flavor] /" "$TMP/$flavor.out"
    fi
}

# report FLAVOR: medians, spreads and ratios from "run PLACEMENT ROUND SECONDS" lines
report() {
    awk -v flavor="$1" -v trips=$((ROUND_TRIPS * PAIRS)) '
    function median(a, n,    i, j, t, b) {
        for (i = 1; i <= n; i++) b[i] = a[i]
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && b[j - 1] > b[j]; j--) { t = b[j]; b[j] = b[j - 1]; b[j - 1] = t }
        return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
    }
    function minmax(a, n,    i) {
        lo = hi = a[1]
        for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
    }
    $1 == "info" && $2 == "kernel" { sub(/^info /, ""); kinfo = $0 }
    $1 == "info" && $2 ~ /^b1\/b2(\/b3\/b4\/b5\/b6\/b7\/b8)?:$/ { sub(/^info /, ""); shown[++nshown] = $0 }
    $1 == "check" && $2 == "ok" { checks++ }
    $1 == "run" {
        if (!($2 in n)) order[++np] = $2
        t[$2, ++n[$2]] = $4; rt[$2, $3] = $4
        if ($3 > rounds) rounds = $3
    }
    END {
        desc["deep"] = "/d1/../d8, cpu at every level (8 groups)"
        desc["bypass"] = "/b1/../b8, #cpu at 1-7, +cpu at b8 (2 groups)"
        desc["pair"] = "/e1/e2, cpu at both (2 groups)"
        desc["flat"] = "/f1 (1 group)"
        desc["root"] = "/ (reference: no cpu group)"
        split("deep bypass pair flat root", want, " ")
        printf "[%s] %s; setup checked (%d checks)\n", flavor, kinfo, checks
        for (i = 1; i <= nshown; i++) printf "[%s]   %s\n", flavor, shown[i]
        printf "[%s] %-7s %-46s %9s %8s  %-19s %7s\n", flavor, "place", "cgroup", "median s",
            "us/trip", "   min..max s", "spread"
        for (k = 1; k <= 5; k++) {
            p = want[k]
            if (!(p in n)) continue
            for (i = 1; i <= n[p]; i++) a[i] = t[p, i]
            med[p] = median(a, n[p]); minmax(a, n[p])
            printf "[%s] %-7s %-46s %9.4f %8.3f  %8.4f..%-9.4f %6.2f%%\n", flavor, p, desc[p],
                med[p], med[p] / trips * 1e6, lo, hi, (hi - lo) / med[p] * 100
        }
        split("deep/flat bypass/flat pair/flat root/flat bypass/pair", pq, " ")
        for (k = 1; k <= 5; k++) {
            split(pq[k], x, "/"); p = x[1]; q = x[2]
            if (!(p in n) || !(q in n)) continue
            m = 0
            for (r = 1; r <= rounds; r++)
                if (((p, r) in rt) && ((q, r) in rt)) a[++m] = rt[p, r] / rt[q, r]
            minmax(a, m)
            ratio[pq[k]] = med[p] / med[q]
            printf "[%s] %11s = %.3f   (round by round %.3f..%.3f)\n", flavor, pq[k],
                ratio[pq[k]], lo, hi
        }
        if (("deep/flat" in ratio) && ("bypass/flat" in ratio))
            printf "[%s] one cpu task group level costs %.3f of flat (deep: 7 levels), " \
                "bypass has one level more than flat: %.3f\n", flavor,
                (ratio["deep/flat"] - 1) / 7, ratio["bypass/flat"] - 1
        if ("bypass/pair" in ratio)
            printf "figure: %s bypass/pair = %.3f (target: <= 1.02: six bypassed levels cost nothing) %s\n",
                flavor, ratio["bypass/pair"], ratio["bypass/pair"] <= 1.02 ? "ok" : "MISSED"
    }' "$TMP/$1.out"
}

boot patched "$PATCHED_BZ" "deep bypass pair flat root"
if [ "$STOCK" = 1 ]; then
    boot stock "$STOCK_BZ" "deep pair flat root"
fi

if [ "$CLOCK" = icount ]; then
    clock_text="icount: guest time = emulated instructions, 1 ns each"
else
    clock_text="host: TCG, guest time follows the host's clock and load"
fi
echo "pipe ping-pong: $PAIRS pair(s), $SIZE-byte messages, $ROUND_TRIPS round trips per pair and run," \
    "$ROUNDS rounds interleaved, $SMP guest CPU(s); clock $clock_text"
echo "[patched] $PATCHED_BZ"
report patched
if [ "$STOCK" = 1 ]; then
    echo "[stock] $STOCK_BZ"
    report stock
fi
printf 'whole run %d s (VM: patched %d s' "$(( $(date +%s) - T_START ))" "$(cat "$TMP/patched.seconds")"
[ "$STOCK" = 0 ] || printf ', stock %d s' "$(cat "$TMP/stock.seconds")"
printf ')\n'
