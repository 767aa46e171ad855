#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build the gzip-compressed initramfs (newc cpio) the cgbypassd VM boots:
# busybox-static, the given binaries with their shared libraries and the
# dynamic loader, optionally dbus-daemon and polkitd, extra users, and an
# /init that runs one command and reports its output and exit status on the
# second serial port.
set -euo pipefail

TRAILER_PREFIX='@@cgbypassd-vm-exit-status:'

usage() {
    cat <<EOF
Usage: ${0##*/} --out FILE [--bin PATH[:DST]]... [--with-dbus] [--with-polkit]
       [--user NAME:UID[:GID]]... [--file SRC:DST]...

  --out FILE      write the initramfs (gzip-compressed newc cpio) to FILE
  --bin PATH      install the executable PATH as /usr/local/bin/\$(basename PATH)
                  (or at DST with PATH:DST), with the shared libraries ldd
                  lists and the dynamic loader (a name that is also a busybox
                  applet must be called by its full path: busybox sh prefers
                  its applets)
  --with-dbus     add dbus-daemon and a minimal system and session bus
                  configuration (/usr/share/dbus-1/{system,session}.conf, any
                  /etc/dbus-1/system.d/*.conf is included); start it inside
                  with 'dbus-daemon --system --fork'
  --with-polkit   add the host's polkitd (Debian: /usr/lib/polkit-1/polkitd,
                  at the same path) with its libraries, its user and group
                  'polkitd', an empty /usr/share/polkit-1/actions (add action
                  files with --file), the host's 50-default.rules in
                  /usr/share/polkit-1/rules.d (or the same rule written out),
                  an empty /etc/polkit-1/rules.d and /var/lib/polkit-1, all
                  readable by polkitd; implies --with-dbus.  Start it inside,
                  after the bus, as root: '/usr/lib/polkit-1/polkitd &' (it
                  drops to its user; --no-debug sends its messages to syslog)
  --user NAME:UID[:GID]
                  add the user NAME (home /nonexistent, shell /bin/sh) with
                  primary group GID (default: UID) to /etc/passwd, and a group
                  NAME with that GID to /etc/group unless the GID exists;
                  repeatable
  --file SRC:DST  copy the file or directory SRC to DST inside the image
  -h, --help      this text

Users always present: root (0), messagebus (100, group 101), nobody (65534),
and polkitd with --with-polkit.  Files in the image belong to root.

The image always holds /bin/busybox (from busybox-static) with every applet
as a symbolic link to /bin/busybox.  Its /init mounts proc, sysfs, devtmpfs,
tmpfs on /tmp and /run, and cgroup2 on /sys/fs/cgroup, then runs the command
from the kernel command line parameter cgb.cmd=<base64 of a sh script> (what
kernel/run-vm.sh passes), or else /run-test if present, with its stdout and
stderr on /dev/ttyS1 (gzip-compressed, after the command ends, if the
command line has cgb.gz=1), followed by the trailer line
  ${TRAILER_PREFIX} N@@
(preceded by one extra newline), and then powers off with 'poweroff -f'.
EOF
}

die() { echo "${0##*/}: $*" >&2; exit 1; }

OUT=
BINS=()
FILES=()
DBUS=0
POLKIT=0
USERS=()
while [ $# -gt 0 ]; do
    case $1 in
    -h|--help) usage; exit 0 ;;
    --out) [ $# -ge 2 ] || die "--out needs a file"; OUT=$2; shift 2 ;;
    --out=*) OUT=${1#--out=}; shift ;;
    --bin) [ $# -ge 2 ] || die "--bin needs a path"; BINS+=("$2"); shift 2 ;;
    --bin=*) BINS+=("${1#--bin=}"); shift ;;
    --file) [ $# -ge 2 ] || die "--file needs SRC:DST"; FILES+=("$2"); shift 2 ;;
    --file=*) FILES+=("${1#--file=}"); shift ;;
    --with-dbus) DBUS=1; shift ;;
    --with-polkit) POLKIT=1; DBUS=1; shift ;;
    --user) [ $# -ge 2 ] || die "--user needs NAME:UID[:GID]"; USERS+=("$2"); shift 2 ;;
    --user=*) USERS+=("${1#--user=}"); shift ;;
    *) die "unknown argument '$1' (try --help)" ;;
    esac
done
[ -n "$OUT" ] || { usage >&2; exit 2; }
for u in "${USERS[@]}"; do
    [[ $u =~ ^[a-z_][a-z0-9_-]*:[0-9]+(:[0-9]+)?$ ]] || die "--user wants NAME:UID[:GID], not '$u'"
    case ${u%%:*} in
    root|messagebus|nobody|nogroup|polkitd) die "--user: '${u%%:*}' is always there" ;;
    esac
done
POLKITD=
if [ "$POLKIT" = 1 ]; then
    for p in /usr/lib/polkit-1/polkitd /usr/libexec/polkitd; do
        [ -x "$p" ] && { POLKITD=$p; break; }
    done
    [ -n "$POLKITD" ] || die "polkitd not found (apt-get install polkitd)"
fi
for tool in cpio gzip ldd; do
    command -v "$tool" >/dev/null || die "'$tool' is not installed"
done
BUSYBOX=${CGB_BUSYBOX:-/bin/busybox}
[ -x "$BUSYBOX" ] || die "busybox not found at $BUSYBOX (apt-get install busybox-static)"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
    die "$BUSYBOX is dynamically linked; install busybox-static"
fi

ROOT=$(mktemp -d "${TMPDIR:-/tmp}/cgb-initramfs.XXXXXX")
trap 'rm -rf "$ROOT"' EXIT

mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,lib,lib64,etc,proc,sys,dev,tmp,run,root,var}
ln -s ../run "$ROOT/var/run"
install -m 0755 "$BUSYBOX" "$ROOT/bin/busybox"
while read -r applet; do
    case $applet in ''|bin/busybox) continue ;; esac
    mkdir -p "$ROOT/$(dirname "$applet")"
    ln -sf /bin/busybox "$ROOT/$applet"
done < <("$BUSYBOX" --list-full)

# copy_libs EXE: the libraries ldd lists for EXE, at the same absolute paths,
# plus the dynamic loader.  Static executables need nothing.
copy_libs() {
    local exe=$1 out lib
    out=$(ldd "$exe" 2>&1) || return 0
    while read -r lib; do
        [ -n "$lib" ] || continue
        if [ ! -e "$ROOT$lib" ]; then
            mkdir -p "$ROOT$(dirname "$lib")"
            cp -L "$lib" "$ROOT$lib"
        fi
        # a library of the build tree (libcgbypass) is found through an
        # $ORIGIN rpath that does not hold where the image puts the program
        case $lib in
        /lib/* | /lib64/* | /usr/lib/* | /usr/lib64/*) ;;
        *) mkdir -p "$ROOT/lib" && cp -L "$lib" "$ROOT/lib/$(basename "$lib")" ;;
        esac
    done < <(printf '%s\n' "$out" | sed -n -e 's|.*=> \(/[^ ]*\) (.*|\1|p' \
                                          -e 's|^[[:space:]]*\(/[^ ]*\) (.*|\1|p')
}

# install_bin SRC DST
install_bin() {
    local src=$1 dst=$2
    if [ ! -f "$src" ] || [ ! -x "$src" ]; then
        die "'$src' is not an executable file"
    fi
    mkdir -p "$ROOT$(dirname "$dst")"
    rm -f "$ROOT$dst"
    cp -L "$src" "$ROOT$dst"
    chmod 0755 "$ROOT$dst"
    copy_libs "$src"
}

APPLETS=$("$BUSYBOX" --list)
for b in "${BINS[@]}"; do
    case $b in
    *:*) src=${b%%:*} dst=${b#*:} ;;
    *) src=$b dst=/usr/local/bin/$(basename "$b") ;;
    esac
    install_bin "$src" "$dst"
    # Debian's busybox sh runs its own applet for a bare applet name, whatever PATH says.
    if grep -qxF -- "$(basename "$dst")" <<<"$APPLETS"; then
        echo "${0##*/}: warning: '$(basename "$dst")' is a busybox applet; call it as $dst" >&2
    fi
done

cat >"$ROOT/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
messagebus:x:100:101::/nonexistent:/bin/false
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$ROOT/etc/group" <<'EOF'
root:x:0:
messagebus:x:101:
nogroup:x:65534:
EOF
if [ "$POLKIT" = 1 ]; then
    echo 'polkitd:x:996:996:polkit:/nonexistent:/bin/false' >>"$ROOT/etc/passwd"
    echo 'polkitd:x:996:' >>"$ROOT/etc/group"
fi
for u in "${USERS[@]}"; do
    IFS=: read -r uname uid gid <<<"$u"
    gid=${gid:-$uid}
    if cut -d: -f3 "$ROOT/etc/passwd" | grep -qxF "$uid"; then
        die "--user $u: uid $uid is taken"
    fi
    if cut -d: -f1 "$ROOT/etc/passwd" | grep -qxF "$uname"; then
        die "--user $u: '$uname' is given twice"
    fi
    echo "$uname:x:$uid:$gid::/nonexistent:/bin/sh" >>"$ROOT/etc/passwd"
    cut -d: -f3 "$ROOT/etc/group" | grep -qxF "$gid" || echo "$uname:x:$gid:" >>"$ROOT/etc/group"
done
echo 'passwd: files' >"$ROOT/etc/nsswitch.conf"
echo 'group: files' >>"$ROOT/etc/nsswitch.conf"
echo 5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e >"$ROOT/etc/machine-id"

if [ "$DBUS" = 1 ]; then
    DBUS_DAEMON=$(command -v dbus-daemon || true)
    [ -n "$DBUS_DAEMON" ] || die "dbus-daemon not found (apt-get install dbus-daemon)"
    install_bin "$DBUS_DAEMON" /usr/bin/dbus-daemon
    mkdir -p "$ROOT/usr/share/dbus-1" "$ROOT/etc/dbus-1/system.d" "$ROOT/etc/dbus-1/session.d"
    for type in system session; do
        if [ $type = system ]; then
            listen='unix:path=/run/dbus/system_bus_socket'
        else
            listen='unix:path=/run/dbus/session_bus_socket'
        fi
        cat >"$ROOT/usr/share/dbus-1/$type.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- cgbypassd VM: minimal $type bus, everything allowed, no activation -->
<busconfig>
  <type>$type</type>
  <listen>$listen</listen>
  <pidfile>/run/dbus/$type.pid</pidfile>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
  <includedir>/etc/dbus-1/$type.d</includedir>
</busconfig>
EOF
    done
fi

if [ "$POLKIT" = 1 ]; then
    install_bin "$POLKITD" "$POLKITD"
    # Debian keeps the rules directories polkitd:root 0700; the image's files
    # all belong to root, so they are world-readable instead.
    install -d -m 0755 "$ROOT/usr/share/polkit-1/actions" "$ROOT/usr/share/polkit-1/rules.d" \
        "$ROOT/etc/polkit-1/rules.d" "$ROOT/var/lib/polkit-1"
    if [ -r /usr/share/polkit-1/rules.d/50-default.rules ]; then
        install -m 0644 /usr/share/polkit-1/rules.d/50-default.rules "$ROOT/usr/share/polkit-1/rules.d/"
    else
        cat >"$ROOT/usr/share/polkit-1/rules.d/50-default.rules" <<'EOF'
polkit.addAdminRule(function(action, subject) {
    return ["unix-group:sudo"];
});
EOF
    fi
fi

for f in "${FILES[@]}"; do
    case $f in
    *:/*) ;;
    *) die "--file wants SRC:/ABSOLUTE/DST, not '$f'" ;;
    esac
    src=${f%%:*} dst=${f#*:}
    [ -e "$src" ] || die "'$src' does not exist"
    mkdir -p "$ROOT$(dirname "$dst")"
    rm -rf "${ROOT:?}$dst"
    cp -rL "$src" "$ROOT$dst"
done

cat >"$ROOT/init" <<EOF
#!/bin/sh
# cgbypassd VM init (generated by kernel/build-initramfs.sh)
TRAILER_PREFIX='$TRAILER_PREFIX'
EOF
cat >>"$ROOT/init" <<'EOF'
PATH=/usr/local/bin:/usr/local/sbin:/bin:/sbin:/usr/bin:/usr/sbin
HOME=/root
export PATH HOME
RESULT=/dev/ttyS1

mount -t proc proc /proc
mount -t sysfs sysfs /sys
grep -q ' /dev ' /proc/mounts || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/dbus /dev/pts /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup

# raw: no \n -> \r\n, no echo; the bytes arrive on the host as written
stty -F "$RESULT" 115200 raw -echo -echoe -echok -echoctl -echoke

cmd=
for word in $(cat /proc/cmdline); do
    case $word in
    cgb.cmd=*) cmd=${word#cgb.cmd=} ;;
    esac
done
if [ -n "$cmd" ]; then
    printf '%s' "$cmd" | base64 -d >/run/cgb-cmd || { echo "init: bad cgb.cmd" >/dev/console; cmd=; }
fi
if [ -n "$cmd" ]; then
    set -- /bin/sh /run/cgb-cmd
elif [ -e /run-test ]; then
    set -- /bin/sh -c 'exec /run-test'
else
    set -- /bin/sh -c 'echo "init: no cgb.cmd= on the kernel command line and no /run-test" >&2; exit 127'
fi

cd /root
if grep -qw cgb.gz=1 /proc/cmdline; then
    # The emulated 16550 moves ~250 KB/s: collect the output, send it gzipped.
    "$@" </dev/null >/tmp/.cgb-output 2>&1
    status=$?
    gzip -c -1 /tmp/.cgb-output >"$RESULT"
    rm -f /tmp/.cgb-output
else
    "$@" </dev/null >"$RESULT" 2>&1
    status=$?
fi
printf '\n%s %d@@\n' "$TRAILER_PREFIX" "$status" >"$RESULT"
# tcsetattr(TCSADRAIN): returns once the UART has sent everything
stty -F "$RESULT" raw
echo "init: command exited with status $status, powering off" >/dev/console
sync
poweroff -f
sleep 5
echo "init: poweroff -f failed" >/dev/console
EOF
chmod 0755 "$ROOT/init"

mkdir -p "$(dirname "$OUT")"
(cd "$ROOT" && find . -mindepth 1 | LC_ALL=C sort |
    cpio --quiet -o -H newc --owner 0:0 --reproducible) | gzip -6 -n >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "${0##*/}: wrote $OUT ($(du -k "$OUT" | cut -f1) KiB)" >&2
