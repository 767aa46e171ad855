#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2016 # dpkg-query's format, and the script run in a namespace, expand there
#
# The root file system of the system VM: Debian 12 with systemd as PID 1,
# made with mmdebstrap from this machine's own apt sources, cached; and, per
# run, an initramfs of it with the project installed from its .deb.
set -euo pipefail

CACHE_DEFAULT=/var/cache/cgbypassd-rootfs
SOURCES_DEFAULT=/etc/apt/sources.list.d/debian.sources
TRAILER_PREFIX='@@cgbypassd-vm-exit-status:'

usage() {
	cat <<EOF
Usage: ${0##*/} [--cache DIR] [--force]
       ${0##*/} --out FILE [--deb FILE]... [--destdir DIR] [--setup DIR] [--cache DIR]

The first form makes (or finds) the cached Debian 12 root file system and
prints its directory as the last line of stdout.  The second also writes FILE,
an initramfs (gzip-compressed newc cpio) for kernel/run-vm.sh: the cached
image with one more archive appended, the files that installing the given
packages changed.  They are installed with dpkg -i in a chroot on an overlay
of the cached tree (the cache is never written), as 'apt install ./PKG.deb'
would on a machine without network; the package's maintainer scripts enable
its units there as they do on any Debian system.  --destdir copies a tree
made by 'meson install --destdir DIR' of a --prefix=/usr build instead and
enables cgbypassd.service (a stand-in for a package).  --setup runs DIR/setup.sh
in the chroot after that, in DIR (as an administrator sets a machine up before
its first boot): what it changes is in FILE too.

The image: mmdebstrap --variant=essential of bookworm with systemd (PID 1),
udev, dbus, polkitd, libpam-systemd, dbus-user-session, systemd-container,
crun, busybox-static and the libraries cgbypassd links; the users alice
(1000) and bob (1001) with home directories and no password; no man pages,
documentation or locales.  /init is PID 1 (systemd).  The unit
cgb-vm-run.service runs, once multi-user.target is reached, the command that
kernel/run-vm.sh passes (cgb.cmd= on the kernel command line, or /run-test)
as root, sends its output and exit status over the second serial port and
powers the machine off: run-vm.sh works with this image as with the busybox
one of kernel/build-initramfs.sh.

The cache key is a hash of the recipe in this script (the package list, the
mmdebstrap call, every customization) and of the apt sources file; DIR/debian12-<hash>/ holds
root/ (the tree), base.cpio.gz (its initramfs) and build-info; a build
removes the images of other recipes.

  --cache DIR    cache directory (default \${CGB_ROOTFS_CACHE:-$CACHE_DEFAULT})
  --sources FILE apt sources for mmdebstrap (default \${CGB_ROOTFS_SOURCES:-$SOURCES_DEFAULT})
  --force        rebuild even if the cached image exists
  --out FILE     write the per-run initramfs to FILE
  --deb FILE     a binary package to install (repeatable)
  --destdir DIR  a 'meson install --destdir' tree to copy in
  --setup DIR    run DIR/setup.sh (sh, as root, cwd DIR) in the chroot last
  -h, --help     this text

Needs root (mmdebstrap, chroot and overlay mounts), mmdebstrap, cpio, gzip.
EOF
}

die() { echo "${0##*/}: $*" >&2; exit 1; }
log() { echo "${0##*/}: $*" >&2; }

CACHE=${CGB_ROOTFS_CACHE:-$CACHE_DEFAULT}
SOURCES=${CGB_ROOTFS_SOURCES:-$SOURCES_DEFAULT}
FORCE=0
OUT=
DEBS=()
DESTDIR=
SETUP=
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--cache) [ $# -ge 2 ] || die "--cache needs a directory"; CACHE=$2; shift 2 ;;
	--sources) [ $# -ge 2 ] || die "--sources needs a file"; SOURCES=$2; shift 2 ;;
	--force) FORCE=1; shift ;;
	--out) [ $# -ge 2 ] || die "--out needs a file"; OUT=$2; shift 2 ;;
	--deb) [ $# -ge 2 ] || die "--deb needs a file"; DEBS+=("$2"); shift 2 ;;
	--destdir) [ $# -ge 2 ] || die "--destdir needs a directory"; DESTDIR=$2; shift 2 ;;
	--setup) [ $# -ge 2 ] || die "--setup needs a directory"; SETUP=$2; shift 2 ;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
done
if [ -z "$OUT" ] && { [ ${#DEBS[@]} -gt 0 ] || [ -n "$DESTDIR" ] || [ -n "$SETUP" ]; }; then
	die "--deb, --destdir and --setup need --out"
fi
for d in "${DEBS[@]}"; do
	[ -f "$d" ] || die "package '$d' not found"
done
[ -z "$DESTDIR" ] || [ -d "$DESTDIR" ] || die "--destdir '$DESTDIR' is not a directory"
[ -z "$SETUP" ] || [ -f "$SETUP/setup.sh" ] || die "--setup '$SETUP' has no setup.sh"
[ "$(id -u)" -eq 0 ] || die "needs root (mmdebstrap, chroot, overlay mounts)"
for tool in mmdebstrap cpio gzip chroot unshare flock sha256sum; do
	command -v "$tool" >/dev/null || die "'$tool' is not installed (tools/deps.sh test)"
done
[ -r "$SOURCES" ] || die "apt sources '$SOURCES' not found"

# Everything the image holds. cgbypassd links libsystemd0, libinih1 and
# libjson-c5 (dpkg -i installs no dependencies: keep them here).
PACKAGES=(systemd systemd-sysv udev dbus polkitd libpam-systemd dbus-user-session
	systemd-container passwd procps crun busybox-static libinih1 libjson-c5)

# --- the cached image ----------------------------------------------------------

# customize ROOT: what mmdebstrap does not do
customize() {
	local root=$1
	# systemd as PID 1 from the initramfs; no initrd-release, so a normal boot
	ln -sfn /sbin/init "$root/init"
	echo cgbvm >"$root/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tcgbvm\n' >"$root/etc/hosts"
	: >"$root/etc/fstab"
	# a fixed machine id: no first-boot units; the journal has one name
	echo 5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e >"$root/etc/machine-id"
	chroot "$root" useradd --create-home --user-group --uid 1000 --shell /bin/bash alice
	chroot "$root" useradd --create-home --user-group --uid 1001 --shell /bin/bash bob
	mkdir -p "$root/etc/systemd/journald.conf.d"
	cat >"$root/etc/systemd/journald.conf.d/cgb-vm.conf" <<-'EOF'
		# the VM's root is a tmpfs: keep the journal in /run
		[Journal]
		Storage=volatile
	EOF
	# timers that would wake in a test run of minutes
	local u
	for u in dpkg-db-backup.timer fstrim.timer e2scrub_all.timer apt-daily.timer \
		apt-daily-upgrade.timer man-db.timer systemd-tmpfiles-clean.timer; do
		ln -sfn /dev/null "$root/etc/systemd/system/$u"
	done

	mkdir -p "$root/usr/local/libexec"
	cat >"$root/usr/local/libexec/cgb-vm-run" <<-EOF
		#!/bin/sh
		# SPDX-License-Identifier: LGPL-2.1-or-later
		# cgb-vm-run.service (tools/build-rootfs.sh): kernel/run-vm.sh's protocol
		# under systemd: the command from cgb.cmd= (base64) or /run-test, its
		# output on /dev/ttyS1 (gzip-compressed with cgb.gz=1), the trailer line,
		# then power off.
		TRAILER_PREFIX='$TRAILER_PREFIX'
	EOF
	cat >>"$root/usr/local/libexec/cgb-vm-run" <<-'EOF'
		RESULT=/dev/ttyS1
		stty -F "$RESULT" 115200 raw -echo -echoe -echok -echoctl -echoke
		cmd=
		for word in $(cat /proc/cmdline); do
			case $word in
			cgb.cmd=*) cmd=${word#cgb.cmd=} ;;
			esac
		done
		if [ -n "$cmd" ]; then
			printf '%s' "$cmd" | base64 -d >/run/cgb-cmd || { echo "cgb-vm-run: bad cgb.cmd" >&2; cmd=; }
		fi
		if [ -n "$cmd" ]; then
			set -- /bin/sh /run/cgb-cmd
		elif [ -e /run-test ]; then
			set -- /bin/sh /run-test
		else
			set -- /bin/sh -c 'echo "cgb-vm-run: no cgb.cmd= on the kernel command line and no /run-test" >&2; exit 127'
		fi
		cd /root || exit 1
		if grep -qw cgb.gz=1 /proc/cmdline; then
			"$@" </dev/null >/run/cgb-output 2>&1
			status=$?
			gzip -c -1 /run/cgb-output >"$RESULT"
		else
			"$@" </dev/null >"$RESULT" 2>&1
			status=$?
		fi
		printf '\n%s %d@@\n' "$TRAILER_PREFIX" "$status" >"$RESULT"
		# tcsetattr(TCSADRAIN) returns once the UART has sent everything
		stty -F "$RESULT" raw
		echo "cgb-vm-run: command exited with status $status, powering off" >/dev/console
		# the root is a tmpfs: nothing to sync or unmount
		systemctl --force --force poweroff
	EOF
	chmod 0755 "$root/usr/local/libexec/cgb-vm-run"
	cat >"$root/etc/systemd/system/cgb-vm-run.service" <<-'EOF'
		# SPDX-License-Identifier: LGPL-2.1-or-later
		# The test command of kernel/run-vm.sh, once the system is up.
		[Unit]
		Description=cgbypassd VM test command
		# as systemd-update-utmp-runlevel.service: after the target, not part of it
		DefaultDependencies=no
		After=multi-user.target
		Requires=sysinit.target

		[Service]
		Type=exec
		ExecStart=/usr/local/libexec/cgb-vm-run
		Environment=HOME=/root
		StandardOutput=journal+console
	EOF
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	ln -sfn ../cgb-vm-run.service "$root/etc/systemd/system/multi-user.target.wants/cgb-vm-run.service"
	# what the image does not need to boot
	rm -rf "$root/var/cache/apt" "$root/var/lib/apt/lists" "$root/usr/lib/udev/hwdb.bin"
}

build_image() {
	local t0 t1 tmp
	t0=$(date +%s)
	tmp=$IMG.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	log "mmdebstrap: Debian 12 with ${PACKAGES[*]} into $tmp/root"
	# (merged /usr made by the hook, not by the usrmerge package and its perl)
	if ! mmdebstrap --variant=essential --format=directory \
		--hook-dir=/usr/share/mmdebstrap/hooks/maybe-merged-usr \
		--include="$(IFS=,; echo "${PACKAGES[*]}")" \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		bookworm "$tmp/root" "$SOURCES" >"$tmp/mmdebstrap.log" 2>&1; then
		tail -n 30 "$tmp/mmdebstrap.log" >&2
		die "mmdebstrap failed (log: $tmp/mmdebstrap.log)"
	fi
	customize "$tmp/root"
	log "packing $tmp/base.cpio.gz"
	(cd "$tmp/root" && find . -mindepth 1 | LC_ALL=C sort |
		cpio --quiet -o -H newc --reproducible) | gzip -6 -n >"$tmp/base.cpio.gz"
	t1=$(date +%s)
	{
		echo "hash=$HASH"
		echo "packages=${PACKAGES[*]}"
		echo "size_kib=$(du -sk "$tmp/root" | cut -f1)"
		echo "image_kib=$(du -k "$tmp/base.cpio.gz" | cut -f1)"
		echo "build_seconds=$((t1 - t0))"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		chroot "$tmp/root" dpkg-query -W -f='${Package}=${Version}\n' | sed 's/^/version /'
	} >"$tmp/build-info"
	rm -rf "$IMG"
	mv "$tmp" "$IMG"
	log "built in $((t1 - t0)) s: $IMG ($(du -sh "$IMG/root" | cut -f1) tree, $(du -h "$IMG/base.cpio.gz" | cut -f1) image)"
}

# The key: the recipe (the package list, the two functions above) and the sources.
HASH=$({
	echo "cgbypassd-rootfs-recipe 1"
	echo "${PACKAGES[*]}"
	declare -f customize build_image
	echo "sources"
	grep -v '^#' "$SOURCES"
} | sha256sum | cut -c1-16)
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
IMG=$CACHE/debian12-$HASH

exec 9>"$CACHE/rootfs.lock"
flock 9
if [ "$FORCE" = 1 ] || [ ! -s "$IMG/base.cpio.gz" ]; then
	build_image
	# images of older recipes are never used again
	for old in "$CACHE"/debian12-*; do
		[ "$old" = "$IMG" ] || { log "removing the stale $old"; rm -rf "$old"; }
	done
else
	log "cached: $IMG"
fi
exec 9>&-

if [ -z "$OUT" ]; then
	echo "$IMG"
	exit 0
fi

# --- the per-run image: the cached one plus what installing the project changed

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cgb-rootfs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/upper" "$WORK/work" "$WORK/merged" "$WORK/debs"
for d in "${DEBS[@]}"; do
	cp "$d" "$WORK/debs/"
done
[ -z "$DESTDIR" ] || DESTDIR=$(cd "$DESTDIR" && pwd)
[ -z "$SETUP" ] || SETUP=$(cd "$SETUP" && pwd)

# In a mount namespace of its own: nothing stays mounted when it ends.
export IMG WORK DESTDIR SETUP
if ! unshare --mount --propagation private bash -euc '
	mount -t overlay overlay -o "lowerdir=$IMG/root,upperdir=$WORK/upper,workdir=$WORK/work" "$WORK/merged"
	m=$WORK/merged
	mount -t proc proc "$m/proc"
	mount --bind /dev "$m/dev"
	mkdir -p "$m/tmp/cgb-debs"
	mount --bind "$WORK/debs" "$m/tmp/cgb-debs"
	if [ -n "$(ls "$WORK/debs")" ]; then
		chroot "$m" sh -c "DEBIAN_FRONTEND=noninteractive dpkg -i /tmp/cgb-debs/*.deb"
	fi
	if [ -n "$DESTDIR" ]; then
		cp -a "$DESTDIR/." "$m/"
		chroot "$m" systemctl enable cgbypassd.service
	fi
	if [ -n "$SETUP" ]; then
		mkdir -p "$m/tmp/cgb-setup"
		mount --bind "$SETUP" "$m/tmp/cgb-setup"
		chroot "$m" sh -euc "cd /tmp/cgb-setup && sh -eu ./setup.sh"
		umount "$m/tmp/cgb-setup"
		rmdir "$m/tmp/cgb-setup"
	fi
	umount "$m/tmp/cgb-debs" "$m/dev" "$m/proc"
	rmdir "$m/tmp/cgb-debs"
' >"$WORK/install.log" 2>&1; then
	sed 's/^/    /' "$WORK/install.log" >&2
	die "installing into the image failed"
fi
sed 's/^/    /' "$WORK/install.log" >&2

# The upper layer is what changed. Overlayfs marks a deleted file with a 0:0
# character device; the appended archive cannot delete, so those are dropped.
whiteouts=$(find "$WORK/upper" -type c | wc -l)
[ "$whiteouts" -eq 0 ] || log "note: $whiteouts file(s) the installation deleted stay in the image"
cp "$IMG/base.cpio.gz" "$OUT.tmp"
(cd "$WORK/upper" && find . -mindepth 1 ! -type c | LC_ALL=C sort |
	cpio --quiet -o -H newc --reproducible) | gzip -1 -n >>"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "wrote $OUT ($(du -h "$OUT" | cut -f1); $(find "$WORK/upper" ! -type d | wc -l) files from the installation)"
