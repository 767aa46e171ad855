#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Boot a kernel under qemu (TCG), run one command inside and bring back its
# output and exit status over the second serial port.
set -euo pipefail

TRAILER_PREFIX='@@cgbypassd-vm-exit-status:'
TIMEOUT=300
MEM=512M
SMP=1
APPEND=
KERNEL=
INITRD=
CONSOLE_COPY=
FILES=()
TIMING=0
RAW=0
QEMU=${CGB_QEMU:-qemu-system-x86_64}
QEMU_ARGS=()

usage() {
    cat <<EOF
Usage: ${0##*/} --kernel BZIMAGE --initrd FILE [OPTIONS] -- COMMAND [ARG]...

Boots BZIMAGE with the initramfs FILE (from kernel/build-initramfs.sh) under
$QEMU -accel tcg, runs COMMAND inside (as root, cwd /root, stdin
/dev/null, through /bin/sh), prints what it wrote to stdout and stderr on
stdout and exits with its exit status.  Kernel messages go to ttyS0 (a console
log), the command's output to ttyS1, so they never mix.

Options:
  --timeout SECS      give up after SECS seconds (default $TIMEOUT)
  --append ARGS       more kernel command line arguments
  --file SRC:DST      make SRC (file or directory) available as DST inside,
                      by appending a cpio archive to a copy of the initramfs;
                      repeatable
  --mem SIZE          guest memory (default $MEM)
  --smp N             guest CPUs (default $SMP)
  --console-log FILE  keep the kernel console log in FILE
  --raw               stream the output uncompressed while the command runs
                      (the default collects it and sends it gzipped after
                      the command ends: the emulated 16550 moves ~250 KB/s)
  --time              print the wall time of the boot-run-poweroff to stderr
  --qemu-arg ARG      pass ARG to qemu after the others (repeatable; e.g.
                      --qemu-arg -icount --qemu-arg shift=0,sleep=off for a
                      clock that counts instructions, as bench-vm does)
  -h, --help          this text

Exit status: COMMAND's, or 124 when the VM did not finish in time (hang),
125 when no result came back (panic, init died, output cut), 2 for bad usage.
On 124 and 125 the last 50 lines of the console log go to stderr.
The kernel command line always has: console=ttyS0 cgroup_debug panic=-1.
Interrupting this script (SIGINT, SIGTERM, SIGHUP) stops the VM too.

Environment: CGB_QEMU names the qemu binary (default qemu-system-x86_64).
EOF
}

die() { echo "${0##*/}: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case $1 in
    -h|--help) usage; exit 0 ;;
    --kernel) [ $# -ge 2 ] || die "--kernel needs a file"; KERNEL=$2; shift 2 ;;
    --initrd) [ $# -ge 2 ] || die "--initrd needs a file"; INITRD=$2; shift 2 ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; TIMEOUT=$2; shift 2 ;;
    --append) [ $# -ge 2 ] || die "--append needs arguments"; APPEND="$APPEND $2"; shift 2 ;;
    --file) [ $# -ge 2 ] || die "--file needs SRC:DST"; FILES+=("$2"); shift 2 ;;
    --mem) [ $# -ge 2 ] || die "--mem needs a size"; MEM=$2; shift 2 ;;
    --smp) [ $# -ge 2 ] || die "--smp needs a number"; SMP=$2; shift 2 ;;
    --console-log) [ $# -ge 2 ] || die "--console-log needs a file"; CONSOLE_COPY=$2; shift 2 ;;
    --time) TIMING=1; shift ;;
    --raw) RAW=1; shift ;;
    --qemu-arg) [ $# -ge 2 ] || die "--qemu-arg needs an argument"; QEMU_ARGS+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument '$1' (try --help)" ;;
    esac
done
if [ -z "$KERNEL" ] || [ -z "$INITRD" ] || [ $# -eq 0 ]; then
    usage >&2
    exit 2
fi
[ -r "$KERNEL" ] || die "kernel '$KERNEL' not found"
[ -r "$INITRD" ] || die "initramfs '$INITRD' not found"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "--timeout wants seconds, not '$TIMEOUT'"
command -v "$QEMU" >/dev/null || { echo "${0##*/}: $QEMU is not installed (apt-get install qemu-system-x86)" >&2; exit 125; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cgb-vm.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
CONSOLE=$TMP/console.log
RESULT=$TMP/result.bin

# The command as a sh script: each argument single-quoted.
script='cd /root'$'\n'
for arg in "$@"; do
    script+="'${arg//\'/\'\\\'\'}' "
done
script+=$'\n'
cmd64=$(printf '%s' "$script" | base64 -w0)

cmdline="console=ttyS0 cgroup_debug panic=-1${APPEND}"
[ "$RAW" = 1 ] || cmdline="$cmdline cgb.gz=1"
initrd=$INITRD
extra=$TMP/extra
if [ $(( ${#cmdline} + ${#cmd64} )) -gt 1900 ]; then
    # too long for the kernel command line (2048 bytes): ship it as /run-test
    mkdir -p "$extra"
    printf '#!/bin/sh\n%s' "$script" >"$extra/run-test"
    chmod 0755 "$extra/run-test"
else
    cmdline="$cmdline cgb.cmd=$cmd64"
fi
for f in "${FILES[@]}"; do
    case $f in
    *:/*) ;;
    *) die "--file wants SRC:/ABSOLUTE/DST, not '$f'" ;;
    esac
    src=${f%%:*} dst=${f#*:}
    [ -e "$src" ] || die "'$src' does not exist"
    mkdir -p "$extra$(dirname "$dst")"
    cp -rL "$src" "$extra$dst"
done
if [ -d "$extra" ]; then
    # The kernel unpacks concatenated cpio archives in order; later entries win.
    initrd=$TMP/initrd.img
    cp "$INITRD" "$initrd"
    (cd "$extra" && find . -mindepth 1 | LC_ALL=C sort |
        cpio --quiet -o -H newc --owner 0:0) | gzip -1 >>"$initrd"
fi

: >"$CONSOLE"
: >"$RESULT"
T0=$(date +%s.%N)
set +e
# timeout(1) puts qemu in a process group of its own, out of reach of the
# terminal's ^C: pass our interruptions on, or qemu runs until TIMEOUT
timeout -k 5 "$TIMEOUT" "$QEMU" -accel tcg -cpu qemu64 -m "$MEM" -smp "$SMP" \
    -nographic -nodefaults -no-user-config -monitor none -no-reboot \
    -kernel "$KERNEL" -initrd "$initrd" -append "$cmdline" \
    -serial "file:$CONSOLE" -serial "file:$RESULT" "${QEMU_ARGS[@]}" </dev/null >"$TMP/qemu.out" 2>&1 &
qemu_pid=$!
trap 'kill -TERM "$qemu_pid" 2>/dev/null; wait "$qemu_pid"; rm -rf "$TMP"; exit 130' INT TERM HUP
wait "$qemu_pid"
qemu_status=$?
trap - INT TERM HUP
set -e
T1=$(date +%s.%N)
[ -z "$CONSOLE_COPY" ] || cp "$CONSOLE" "$CONSOLE_COPY"
if [ "$TIMING" = 1 ]; then
    printf '%s: VM wall time %.2f s, result %d bytes\n' "${0##*/}" \
        "$(echo "$T1 - $T0" | bc)" "$(stat -c %s "$RESULT")" >&2
fi

show_console() {
    echo "${0##*/}: $1; last 50 lines of the console log:" >&2
    tail -n 50 "$CONSOLE" | sed 's/^/    /' >&2
    if [ -s "$TMP/qemu.out" ]; then
        echo "${0##*/}: qemu said:" >&2
        sed 's/^/    /' "$TMP/qemu.out" >&2
    fi
}

last=$(tail -n 1 "$RESULT")
if [[ $last =~ ^${TRAILER_PREFIX}\ ([0-9]+)@@$ ]] &&
   [ "$(tail -c $(( ${#last} + 2 )) "$RESULT" | head -c 1 | od -An -c | tr -d ' ')" = '\n' ]; then
    status=${BASH_REMATCH[1]}
    if [ "$RAW" = 1 ]; then
        head -c -$(( ${#last} + 2 )) "$RESULT"
        exit "$status"
    fi
    if head -c -$(( ${#last} + 2 )) "$RESULT" | gzip -dc >"$TMP/output"; then
        cat "$TMP/output"
        exit "$status"
    fi
    show_console "the compressed output from the VM is corrupt"
    exit 125
fi

if [ "$qemu_status" = 124 ] || [ "$qemu_status" = 137 ]; then
    if [ "$RAW" = 1 ] && [ -s "$RESULT" ]; then
        echo "${0##*/}: the command's output until then:" >&2
        tail -c 20000 "$RESULT" | sed 's/^/    /' >&2
    fi
    show_console "the VM did not finish within $TIMEOUT s"
    exit 124
fi
if grep -q 'Kernel panic' "$CONSOLE"; then
    show_console "the kernel panicked"
else
    show_console "no result trailer from the VM (qemu exit status $qemu_status)"
fi
if [ -s "$RESULT" ]; then
    echo "${0##*/}: partial output (last 10 lines):" >&2
    tail -n 10 "$RESULT" | sed 's/^/    /' >&2
fi
exit 125
