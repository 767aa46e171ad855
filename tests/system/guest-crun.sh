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
# cpu for it and writes its cpu.weight; what crun itself writes to the
# ancestors' cgroup.subtree_control; a bad annotation aborts the start; after
# `crun delete` the cgroup and the delegation are gone. TAP on stdout.
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
cat >"$CONF" <<CONF
[cgroup]
path = $P
subtree-control = #cpu #io +memory +pids
CONF
check "cgbypassd reloads with the containers' parent bypassing cpu and io" systemctl reload cgbypassd
diag "$P: cgroup.subtree_control '$(cat "$CG$P/cgroup.subtree_control")' (cgbypassctl: $(cgbypassctl show "$P" 2>&1 | grep -i subtree))"
sc_before=$(cat "$CG$P/cgroup.subtree_control")

# the bundle: busybox, its process as alice, the hooks in config.json
mkdir -p "$W/b/rootfs/bin" "$W/b/rootfs/proc" "$W/b/rootfs/dev" "$W/b/rootfs/tmp"
cp "$(type -P busybox)" "$W/b/rootfs/bin/busybox"
for a in sh sleep cat; do ln -sf busybox "$W/b/rootfs/bin/$a"; done
bundle_config() { # ID ENABLE
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
  "annotations": { "org.cgbypass1.enable": "$2" },
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
diag "cgbypassd --plan after crun: $(cgbypassd --plan 2>&1 | head -5)"
[ "$sc_before" = "$sc_after" ] && ok "crun left the parent's cgroup.subtree_control as cgbypassd set it" ||
	not_ok "crun left the parent's cgroup.subtree_control as cgbypassd set it # TODO crun's cgroupfs manager writes every available controller into each ancestor's subtree_control; cgbypassd puts back the ones it configures (cpu, io) at its next refresh, the others (cpuset, hugetlb) stay" \
		"before '$sc_before', after '$sc_after'"

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
