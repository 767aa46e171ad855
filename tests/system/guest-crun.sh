#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2015,SC2012,SC2016 # ok and not_ok never fail; ls for a diagnostic; the unit's shell expands
#
# In the system VM (run by vm-system-guest.sh, as root, cgbypassd.service
# active): Debian's crun runs a busybox container whose bundle asks, through
# the package's cgbypass-oci-hook (createRuntime and poststop hooks in its
# config.json: bare crun reads no hooks.d), for cpu in its cgroup below a
# Delegate=yes unit whose subtree cgbypassd manages with cpu and io bypassed.
# Checks: the container's process is in its cgroup, the cgroup has cpu of
# its own, the delegation to the container's user (alice, process.user.uid)
# exists, alice makes a child, moves the container's process there, enables
# cpu for it and writes its cpu.weight; crun itself writes every controller
# into the ancestors' cgroup.subtree_control, and the hook's request has
# cgbypassd put the parent's policy back (also for a second container without
# the annotation); a bad annotation aborts the start; after `crun delete` the
# cgroup and the delegation are gone. TAP on stdout.
#
# usage: guest-crun.sh native|emulated

backend=${1:?native or emulated}
CG=/sys/fs/cgroup
HOOK=/usr/libexec/cgbypassd/cgbypass-oci-hook
UNIT=cgb-guest-crun
P=/system.slice/$UNIT.service
CONF=/etc/cgbypassd/conf.d/50-guest-crun.conf
W=/run/cgb-guest-crun
OWNER=1000

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); echo "not ok $n - $1"
	[[ $1 == *' # TODO '* ]] || failed=$((failed + 1))
	[ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/# /'
	return 0
}
check() { local d=$1 out; shift; if out=$("$@" 2>&1); then ok "$d"; else not_ok "$d" "$out"; fi; }
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

cleanup() {
	crun kill cgb-ctr1 KILL >/dev/null 2>&1
	crun delete -f cgb-ctr1 >/dev/null 2>&1
	crun kill cgb-ctr0 KILL >/dev/null 2>&1
	crun delete -f cgb-ctr0 >/dev/null 2>&1
	crun delete -f cgb-bad >/dev/null 2>&1
	rm -f "$CONF"
	systemctl reload cgbypassd >/dev/null 2>&1
	systemctl stop "$UNIT.service" >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT

# the image's tools (tools/build-rootfs.sh's PACKAGES and the package), not the host's
for t in crun busybox cgbypassctl; do
	type -P "$t" >/dev/null || { not_ok "$t is installed in the image"; exit 1; }
done
[ -x "$HOOK" ] && ok "the package installed $HOOK" || { not_ok "the package installed $HOOK"; exit 1; }
[ -f /usr/share/containers/oci/hooks.d/cgbypass.json ] && ok "... and its hooks.d definition" ||
	not_ok "the hooks.d definition is installed"
diag "crun: $(crun --version | head -1); backend $backend"

# the Delegate=yes unit whose subtree holds the containers; its process in a leaf
# (a script file: systemd would expand the $ of an inline command line itself)
mkdir -p "$W"
cat >"$W/unit.sh" <<'SH'
d=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
mkdir -p "$d/supervisor" && echo $$ >"$d/supervisor/cgroup.procs" && exec sleep infinity
SH
systemd-run --quiet --unit="$UNIT" -p Delegate=yes /bin/sh "$W/unit.sh"
for _ in $(seq 300); do [ -d "$CG$P/supervisor" ] && break; sleep 0.2; done
check "a Delegate=yes unit for the containers ($P)" test -d "$CG$P/supervisor"
# The deployment crun's cgroupfs manager needs (cgbypass-oci-hook(8), THE
# RUNTIME'S OWN WRITES): the parent names every controller it has, cpu and io
# bypassed, the others enabled; crun's "+cpu +io ..." then changes only those two.
ctl_before=$(cat "$CG$P/cgroup.controllers")
policy="#cpu #io"
for c in $ctl_before; do
	case $c in cpu | io) ;; *) policy="$policy +$c" ;; esac
done
cat >"$CONF" <<CONF
[cgroup]
path = $P
subtree-control = $policy
CONF
diag "$P/cgroup.controllers '$ctl_before': subtree-control = $policy"
check "cgbypassd reloads with the containers' parent bypassing cpu and io ($policy)" systemctl reload cgbypassd
diag "$P: cgroup.subtree_control '$(cat "$CG$P/cgroup.subtree_control")' (cgbypassctl: $(cgbypassctl show "$P" 2>&1 | grep -i subtree))"
sc_before=$(cat "$CG$P/cgroup.subtree_control")

# the bundle: busybox, its process as alice, the hooks in config.json
mkdir -p "$W/b/rootfs/bin" "$W/b/rootfs/proc" "$W/b/rootfs/dev" "$W/b/rootfs/tmp"
cp "$(type -P busybox)" "$W/b/rootfs/bin/busybox"
for a in sh sleep cat; do ln -sf busybox "$W/b/rootfs/bin/$a"; done
# ancestors ID: the cgroup.subtree_control of / and /system.slice (systemd's), for the record
ancestors() { echo "/ '$(cat "$CG/cgroup.subtree_control")', /system.slice '$(cat "$CG/system.slice/cgroup.subtree_control")'"; }
bundle_config() { # ID ENABLE (empty: no annotation)
	local annotations='"org.cgbypass1.enable": "'$2'"'
	[ -n "$2" ] || annotations='"other": "x"'
	cat <<JSON
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": { "uid": $OWNER, "gid": $OWNER },
    "args": ["/bin/sleep", "600"],
    "env": ["PATH=/bin"],
    "cwd": "/"
  },
  "root": { "path": "rootfs", "readonly": true },
  "hostname": "$1",
  "mounts": [
    { "destination": "/proc", "type": "proc", "source": "proc" },
    { "destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"] }
  ],
  "annotations": { $annotations },
  "hooks": {
    "createRuntime": [ { "path": "$HOOK", "args": ["cgbypass-oci-hook", "--stage", "createRuntime"] } ],
    "poststop": [ { "path": "$HOOK", "args": ["cgbypass-oci-hook", "--stage", "poststop"] } ]
  },
  "linux": {
    "cgroupsPath": "$P/$1",
    "namespaces": [ { "type": "pid" }, { "type": "mount" }, { "type": "ipc" }, { "type": "uts" } ]
  }
}
JSON
}
bundle_config cgb-ctr1 cpu >"$W/b/config.json"
diag "systemd's cgroups before crun: $(ancestors)"
# --no-pivot: the VM's root file system is an initramfs, where pivot_root(2) fails with EINVAL

# to a file, not a pipe: the detached container keeps crun's standard output open
if crun run --no-pivot --detach --bundle "$W/b" cgb-ctr1 >"$W/run.out" 2>&1 </dev/null; then
	ok "crun run --detach: the container started"
else
	not_ok "crun run --detach: the container started" "$(cat "$W/run.out")"
	diag "journal: $(journalctl -u cgbypassd -n 20 --no-pager 2>&1)"
	exit 1
fi
pid=$(crun state cgb-ctr1 | sed -n 's/^ *"pid": *\([0-9]*\).*/\1/p')
diag "container pid $pid: $(cat "/proc/$pid/cgroup" 2>&1)"
check "the container's process is in $P/cgb-ctr1" grep -qx "$pid" "$CG$P/cgb-ctr1/cgroup.procs"
show=$(cgbypassctl show "$P/cgb-ctr1" 2>&1)
diag "$show"
diag "$P/cgb-ctr1/cgroup.controllers: '$(cat "$CG$P/cgb-ctr1/cgroup.controllers")'"
grep -qw cpu "$CG$P/cgb-ctr1/cgroup.controllers" && [ -e "$CG$P/cgb-ctr1/cpu.weight" ] &&
	ok "the container's cgroup has cpu of its own (cpu.weight exists)" || not_ok "the container's cgroup has cpu" "$show"
[ ! -e "$CG$P/cgb-ctr1/io.weight" ] && ok "io, not asked for, stays bypassed (no io.weight)" ||
	not_ok "io stays bypassed in the container's cgroup" "$(ls "$CG$P/cgb-ctr1")"
dl=$(cgbypassctl delegations 2>&1)
diag "$dl"
printf '%s\n' "$dl" | grep -q "^$P/cgb-ctr1 .*\(alice\|$OWNER\)" &&
	ok "the hook delegated the container's cgroup to its user (uid $OWNER)" || not_ok "the delegation exists" "$dl"
sc_after=$(cat "$CG$P/cgroup.subtree_control")
diag "$P/cgroup.subtree_control before crun '$sc_before', after '$sc_after'"
diag "systemd's cgroups after crun: $(ancestors) (crun writes every controller there too; systemd's business)"
# same_as_before SC: every controller the parent had before crun is as cgbypassd
# set it (a controller crun made available only now, above the parent, is not
# cgbypassd's: it could not name it)
same_as_before() {
	local t
	for t in $1; do
		case " $ctl_before " in *" ${t#\#} "*) ;; *) continue ;; esac
		case " $sc_before " in *" $t "*) ;; *) return 1 ;; esac
	done
	for t in $sc_before; do
		case " $1 " in *" $t "*) ;; *) return 1 ;; esac
	done
}
plan=$(cgbypassd --plan 2>&1)
[ -z "$plan" ] && ok "after crun run and its hook, cgbypassd --plan is empty (crun's writes to $P are undone)" ||
	not_ok "cgbypassd --plan is empty after crun run" "$plan"
# emulated: the kernel's $P enables cpu on the way to the container's own (a pass-through level)
if [ "$backend" = native ]; then
	same_as_before "$sc_after" && ok "... and $P's cgroup.subtree_control is as cgbypassd set it ('$sc_after')" ||
		not_ok "$P's cgroup.subtree_control is as cgbypassd set it" "before '$sc_before', after '$sc_after'"
fi

# the owner's job: its own child for the container's process, cpu for it, its cpu.weight
as_owner() { setpriv --reuid=$OWNER --regid=$OWNER --clear-groups "$@"; }
check "alice makes a child in the container's cgroup" as_owner mkdir "$CG$P/cgb-ctr1/main"
check "alice moves the container's process there" as_owner sh -c "echo $pid >'$CG$P/cgb-ctr1/main/cgroup.procs'"
check "alice enables cpu for the children (cgbypassctl set, through the daemon)" \
	as_owner cgbypassctl --no-ask-password set "$P/cgb-ctr1" +cpu
check "alice writes the child's cpu.weight" as_owner sh -c "echo 42 >'$CG$P/cgb-ctr1/main/cpu.weight'"
check "... and it holds" test "$(cat "$CG$P/cgb-ctr1/main/cpu.weight")" = 42
! as_owner sh -c "echo 42 >'$CG$P/cgb-ctr1/cpu.weight'" 2>/dev/null && ok "the container's own cpu.weight stays root's" ||
	not_ok "alice wrote the delegation root's cpu.weight"
check "the process stays in main" grep -qx "$pid" "$CG$P/cgb-ctr1/main/cgroup.procs"

# a second container that asks for nothing: crun writes "+cpu +io ..." to $P
# again; its hook has cgbypassd reload, which puts the bypass back
mkdir -p "$W/b0"
cp -a "$W/b/rootfs" "$W/b0/"
bundle_config cgb-ctr0 "" >"$W/b0/config.json"
if crun run --no-pivot --detach --bundle "$W/b0" cgb-ctr0 >"$W/run0.out" 2>&1 </dev/null; then
	ok "crun run --detach: a container without the annotation started"
else
	not_ok "crun run: a container without the annotation" "$(cat "$W/run0.out")"
fi
sc0=$(cat "$CG$P/cgroup.subtree_control")
plan=$(cgbypassd --plan 2>&1)
[ -z "$plan" ] && ok "... cgbypassd --plan is empty after it (the hook had cgbypassd reload)" ||
	not_ok "cgbypassd --plan is empty after the second container" "$plan"
if [ "$backend" = native ]; then
	same_as_before "$sc0" && ok "... $P's cgroup.subtree_control is as cgbypassd set it ('$sc0')" ||
		not_ok "$P's cgroup.subtree_control after the second container" "before '$sc_before', now '$sc0'"
	[ ! -e "$CG$P/cgb-ctr0/cpu.weight" ] && ok "... it has no cpu of its own (cpu bypassed)" ||
		not_ok "the second container has no cpu of its own" "$(ls "$CG$P/cgb-ctr0")"
fi
check "... the first one's cgroup keeps its cpu" test -e "$CG$P/cgb-ctr1/cpu.weight"
check "... and alice's cpu.weight of 42 holds" test "$(cat "$CG$P/cgb-ctr1/main/cpu.weight")" = 42
cgbypassctl delegations 2>&1 | grep -q "cgb-ctr0" && not_ok "no delegation for the container that asked none" ||
	ok "... and no delegation for it"
crun kill cgb-ctr0 KILL >/dev/null 2>&1
for _ in $(seq 50); do crun state cgb-ctr0 2>/dev/null | grep -q '"stopped"' && break; sleep 0.2; done
check "crun delete of the second container" crun delete cgb-ctr0

# stop: crun removes the cgroup; lifetime cgroup (and the poststop hook) end the delegation
crun kill cgb-ctr1 KILL >/dev/null 2>&1
for _ in $(seq 50); do crun state cgb-ctr1 2>/dev/null | grep -q '"stopped"' && break; sleep 0.2; done
check "crun delete" crun delete cgb-ctr1
[ ! -d "$CG$P/cgb-ctr1" ] && ok "the container's cgroup is gone" || not_ok "the container's cgroup is gone" "$(ls -R "$CG$P/cgb-ctr1" 2>&1 | head)"
dl=$(cgbypassctl delegations 2>&1)
printf '%s\n' "$dl" | grep -q "^$P/cgb-ctr1 " && not_ok "the delegation ended with the container" "$dl" ||
	ok "the delegation ended with the container"
diag "journal: $(journalctl -u cgbypassd -n 8 --no-pager -o cat 2>&1)"

# a bad annotation: the createRuntime hook fails, crun does not start the container
bundle_config cgb-bad cpu,bogus >"$W/b/config.json"
crun run --no-pivot --detach --bundle "$W/b" cgb-bad >"$W/run.out" 2>&1 </dev/null
st=$?
out=$(cat "$W/run.out")
diag "crun run with org.cgbypass1.enable=cpu,bogus: exit $st: $out"
[ $st -ne 0 ] && ok "an unknown controller in the annotation: crun refuses to start the container" ||
	not_ok "crun refused the container with a bad annotation" "$out"
printf '%s\n' "$out" | grep -q "unknown controller 'bogus'" && ok "... and says why (the hook's line)" ||
	diag "crun's output does not carry the hook's message"
crun delete -f cgb-bad >/dev/null 2>&1
[ ! -d "$CG$P/cgb-bad" ] && ok "... and leaves no cgroup" || not_ok "no cgroup left by the failed start"
cgbypassctl delegations 2>&1 | grep -q "cgb-bad" && not_ok "no delegation left by the failed start" ||
	ok "... and no delegation"

echo "1..$n"
[ $failed -eq 0 ]
