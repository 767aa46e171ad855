#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=dash disable=SC2015,SC2012 # ok and not_ok never fail; ls of cgroupfs names
#
# Runs inside the VM (busybox sh, as root; tests/kernel/vm-daemon.sh boots it):
# the system bus, the real polkitd, cgbypassd with backend auto on
# /sys/fs/cgroup, and the owner alice (uid 1000) switching cpu in her
# delegation through cgbypassctl; bob (uid 1001) has no delegation. Checks
# the daemon's answers and the kernel's own files. Prints TAP; the last line
# is '# vm-daemon-guest: done' when it ran to the end; exits 1 if a check failed.
#
# usage: vm-daemon-guest.sh native|emulated   (the backend auto must pick)

backend=${1:?native or emulated}
CG=/sys/fs/cgroup
SETPRIV=/usr/local/bin/setpriv
LOGS=/run/vm-daemon
ALICE=1000
BOB=1001
mkdir -p "$LOGS"

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/#   /'
}
bail() {
	echo "Bail out! $1"
	for f in "$LOGS"/*.log; do
		echo "# --- $f"
		sed 's/^/#   /' "$f"
	done
	exit 1
}
# wait_for TENTHS CMD...: poll every 0.1 s
wait_for() {
	local i=0 limit=$1
	shift
	while [ $i -lt "$limit" ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
as_user() {
	local uid=$1
	shift
	"$SETPRIV" --reuid="$uid" --regid="$uid" --clear-groups "$@"
}
# run UID|root ARGS...: cgbypassctl --no-ask-password ARGS; sets out, err, st
run() {
	local who=$1
	shift
	if [ "$who" = root ]; then
		cgbypassctl --no-ask-password "$@" >"$LOGS/out" 2>"$LOGS/err"
	else
		as_user "$who" cgbypassctl --no-ask-password "$@" >"$LOGS/out" 2>"$LOGS/err"
	fi
	st=$?
	out=$(cat "$LOGS/out")
	err=$(cat "$LOGS/err")
}
# succeeds DESC UID ARGS...: exit 0, nothing on stdout or stderr
succeeds() {
	local d=$1
	shift
	run "$@"
	[ $st -eq 0 ] && [ -z "$out" ] && [ -z "$err" ] && ok "$d" ||
		not_ok "$d" "cgbypassctl $*: exit $st, stdout '$out', stderr '$err'"
}
# refused DESC NAME UID ARGS...: exit 1, one line 'cgbypassctl: ... (org.cgbypass1.Error.NAME)'
refused() {
	local d=$1 name=$2
	shift 2
	run "$@"
	if [ $st -eq 1 ] && [ -z "$out" ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
		printf '%s\n' "$err" | grep -q "^cgbypassctl: .*(org\.cgbypass1\.Error\.$name)\$"; then
		ok "$d: $name, exit 1"
		echo "#   $err"
	else
		not_ok "$d" "cgbypassctl $*: exit $st, stdout '$out', stderr '$err' (wanted $name)"
	fi
}
# is DESC EXPECTED ACTUAL
is() {
	[ "$2" = "$3" ] && ok "$1" || not_ok "$1" "expected: '$2'
got:      '$3'"
}
# has DESC FILE-OR-TEXT LINE-REGEX: some line of the text matches
has() {
	printf '%s\n' "$2" | grep -q -- "$3" && ok "$1" || not_ok "$1" "no line matching '$3' in:
$2"
}
cgfile() {
	cat "$CG$1/$2" 2>&1
}
exists() {
	[ -e "$CG$1/$2" ]
}
# the kernel's view of the whole hierarchy: every cgroup's control files and file names
snapshot() {
	local d
	for d in $(find "$CG" -type d | sort); do
		echo "== ${d#"$CG"} c='$(cat "$d/cgroup.controllers")' sc='$(cat "$d/cgroup.subtree_control")'"
		ls "$d" | tr '\n' ' '
		echo
	done
}
show_has() {
	local d=$1 cg=$2 line=$3
	run root show "$cg"
	[ $st -eq 0 ] && printf '%s\n' "$out" | grep -qx " *$line" && ok "$d" ||
		not_ok "$d" "cgbypassctl show $cg: exit $st, wanted '$line' in:
$out$err"
}

echo "# vm-daemon-guest: expecting backend $backend on $(uname -r)"

# ---- the kernel ----
if [ "$backend" = native ]; then
	grep -qx bypass /sys/kernel/cgroup/features && ok "the patched kernel lists bypass in /sys/kernel/cgroup/features" ||
		not_ok "no bypass in features" "$(cat /sys/kernel/cgroup/features)"
else
	grep -qx bypass /sys/kernel/cgroup/features && not_ok "the stock kernel lists bypass" ||
		ok "the stock kernel does not list bypass in /sys/kernel/cgroup/features"
fi
grep -qw cgroup_debug /proc/cmdline && [ -e "$CG/debug.masks" ] && ok "booted with cgroup_debug: the root has debug.masks" ||
	not_ok "no cgroup_debug" "$(cat /proc/cmdline)"

# ---- the bus, polkitd, the daemon ----
dbus-daemon --system --fork >"$LOGS/dbus.log" 2>&1 || bail "dbus-daemon --system did not start"
wait_for 100 test -S /run/dbus/system_bus_socket || bail "no system bus socket"

# a rule that says no for one cgroup: proves that polkitd, not a default, decides
cat >/etc/polkit-1/rules.d/10-vm-daemon.rules <<'EOF'
polkit.addRule(function(action, subject) {
    if (action.id == "org.cgbypass1.manage-delegated" &&
        action.lookup("cgroup") == "/srv/alice/denied")
        return polkit.Result.NO;
    return polkit.Result.NOT_HANDLED;
});
EOF
# without --no-debug its messages go to its log instead of (the absent) syslog
polkitd=/usr/lib/polkit-1/polkitd
[ -x "$polkitd" ] || polkitd=/usr/libexec/polkitd
"$polkitd" >"$LOGS/polkitd.log" 2>&1 &
polkit_pid=$!
wait_for 300 grep -q 'Acquired the name org.freedesktop.PolicyKit1' "$LOGS/polkitd.log" ||
	bail "polkitd did not take org.freedesktop.PolicyKit1"
grep -q 'Successfully changed to user polkitd' "$LOGS/polkitd.log" &&
	[ "$(stat -c %U "/proc/$polkit_pid")" = polkitd ] &&
	ok "the real polkitd is on the bus, running as user polkitd" ||
	not_ok "polkitd's user" "$(cat "$LOGS/polkitd.log")"
grep -q 'Finished loading, compiling and executing 2 rules' "$LOGS/polkitd.log" &&
	ok "polkitd loaded the default rules and the test's rule" ||
	not_ok "polkitd's rules" "$(cat "$LOGS/polkitd.log")"

mkdir -p /etc/cgbypassd
cat >/etc/cgbypassd/cgbypassd.conf <<'EOF'
# vm-daemon: the root enables cpu io memory; /srv bypasses cpu for its
# children and enables memory; /srv/alice is alice's, for cpu
[daemon]
backend = auto
cgroup-root = /sys/fs/cgroup
state-directory = /var/lib/cgbypassd

[cgroup]
path = /
subtree-control = +cpu +io +memory

[cgroup]
path = /srv
subtree-control = #cpu +memory

[delegate]
path = /srv/alice
user = alice
controllers = cpu

[cgroup]
path = /srv/other
EOF

daemon_pid=
daemon_up() {
	kill -0 "$daemon_pid" 2>/dev/null || return 2
	cgbypassctl status
}
start_daemon() {
	local i=0
	cgbypassd >>"$LOGS/cgbypassd.log" 2>&1 &
	daemon_pid=$!
	while [ $i -lt 300 ]; do
		daemon_up >/dev/null 2>&1
		case $? in
		0) return 0 ;;
		2) return 1 ;;
		esac
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
stop_daemon() {
	kill -TERM "$daemon_pid"
	wait "$daemon_pid"
	daemon_status=$?
	daemon_pid=
}
# On a freshly booted 6.1 the root's debug.masks shows no implicit csses until
# the first write of its cgroup.subtree_control (docs/backends.md): the first
# --check-config runs before any write, on both kernels.
cgbypassd --check-config >"$LOGS/check.log" 2>&1 && ok "cgbypassd --check-config accepts the configuration" ||
	not_ok "--check-config" "$(cat "$LOGS/check.log")"
start_daemon || bail "cgbypassd did not come up on the bus"
ok "cgbypassd (backend auto, default configuration file) serves org.cgbypass1"
has "the daemon says which backend auto picked" "$(cat "$LOGS/cgbypassd.log")" \
	"Serving org.cgbypass1 on the system bus: $backend backend on '/sys/fs/cgroup', 1 delegation(s)"

run root status
is "cgbypassctl status: Backend $backend, cgroup root, 4 cgroups, 1 delegation" \
	"Backend: $backend|Cgroup root: /sys/fs/cgroup|Controllers: cpuset cpu io memory hugetlb pids rdma misc|Cgroups: 4|Delegations: 1|0" \
	"$(printf '%s\n' "$out" | sed -n '2,$p' | sed 's/^ *//' | tr '\n' '|')$st"
run root --json status
has "cgbypassctl --json status: the Backend property is $backend" "$out" "\"backend\": *\"$backend\""
run root delegations
is "cgbypassctl delegations: /srv/alice to alice (1000) for cpu" "CGROUP      OWNER         CONTROLLERS
/srv/alice  alice (1000)  cpu

1 delegation listed." "$out"

# ---- the configuration in the kernel ----
is "the root enables cpu io memory" "cpu io memory" "$(cgfile / cgroup.subtree_control)"
if [ "$backend" = native ]; then
	is "/srv bypasses cpu for its children (#cpu in its cgroup.subtree_control)" "#cpu memory" \
		"$(cgfile /srv cgroup.subtree_control)"
	is "/srv/alice sees #cpu in its cgroup.controllers" "#cpu memory" "$(cgfile /srv/alice cgroup.controllers)"
	has "debug.masks of /srv: subtree_bypass cpu" "$(cgfile /srv debug.masks)" '^subtree_bypass *: cpu$'
	has "debug.masks of /srv/alice: no enable_ss_mask" "$(cgfile /srv/alice debug.masks)" '^enable_ss_mask *: *$'
else
	is "/srv: the kernel gets memory only (an unneeded bypass is not enabled)" "memory" \
		"$(cgfile /srv cgroup.subtree_control)"
	is "/srv/alice has memory in the kernel, no cpu" "memory" "$(cgfile /srv/alice cgroup.controllers)"
	has "debug.masks of /srv: the stock two lines, subtree_control memory" "$(cgfile /srv debug.masks)" \
		'^subtree_control *: memory$'
	is "debug.masks of /srv has the stock two lines" 2 "$(cgfile /srv debug.masks | wc -l)"
fi
show_has "the daemon's view of /srv: #cpu memory" /srv "Subtree control: #cpu memory"
show_has "the daemon's view of /srv/alice: #cpu memory" /srv/alice "Controllers: #cpu memory"
exists /srv cpu.weight && ! exists /srv/alice cpu.weight && ! exists /srv/other cpu.weight &&
	ok "cpu knobs: /srv has cpu.weight, its bypassed children none" ||
	not_ok "cpu knobs before" "$(ls "$CG/srv" "$CG/srv/alice" "$CG/srv/other")"
run root tree cpu
tree0=$out
is "cgbypassctl tree cpu: /srv and its children share /srv's cpu" "/
\`-/srv, /srv/alice, /srv/other" "$out"

# ---- the delegation ----
[ "$(stat -c %u "$CG/srv/alice")" = $ALICE ] && [ "$(stat -c %u "$CG/srv/alice/cgroup.procs")" = $ALICE ] &&
	[ "$(stat -c %u "$CG/srv/alice/cgroup.threads")" = $ALICE ] &&
	[ "$(stat -c %u "$CG/srv/alice/cgroup.subtree_control")" = 0 ] &&
	[ "$(stat -c %u "$CG/srv/alice/cgroup.controllers")" = 0 ] &&
	ok "the delegation: directory, cgroup.procs, cgroup.threads alice's; control files root's" ||
	not_ok "ownership" "$(ls -ln "$CG/srv/alice" | head -20)"
snap0=$(snapshot)
as_user $ALICE sh -c "echo +cpu >$CG/srv/alice/cgroup.controllers" 2>/dev/null &&
	not_ok "alice could write cgroup.controllers behind the daemon" ||
	ok "alice cannot write her cgroup.controllers herself"
is "... and nothing changed" "$snap0" "$(snapshot)"

# ---- the owner re-enables cpu through the bus ----
succeeds "alice: cgbypassctl enable /srv/alice cpu" $ALICE enable /srv/alice cpu
is "/srv/alice/cgroup.controllers: cpu memory" "cpu memory" "$(cgfile /srv/alice cgroup.controllers)"
exists /srv/alice cpu.weight && [ "$(cgfile /srv/alice cpu.weight)" = 100 ] && exists /srv/alice cpu.max &&
	ok "cpu knobs appear in /srv/alice (cpu.weight 100, cpu.max)" ||
	not_ok "no cpu knobs in /srv/alice" "$(ls "$CG/srv/alice")"
if [ "$backend" = native ]; then
	has "debug.masks of /srv/alice: enable_ss_mask cpu" "$(cgfile /srv/alice debug.masks)" '^enable_ss_mask *: cpu$'
	is "/srv still bypasses cpu" "#cpu memory" "$(cgfile /srv cgroup.subtree_control)"
	is "/srv/other still bypasses cpu" "#cpu memory" "$(cgfile /srv/other cgroup.controllers)"
	! exists /srv/other cpu.weight && ok "/srv/other still has no cpu knobs" || not_ok "cpu knobs in /srv/other"
else
	is "/srv becomes a pass-through level: cpu enabled in the kernel" "cpu memory" \
		"$(cgfile /srv cgroup.subtree_control)"
	has "debug.masks of /srv: subtree_control cpu, memory" "$(cgfile /srv debug.masks)" \
		'^subtree_control *: cpu, memory$'
	is "/srv/other gets a css of its own in the kernel (docs/backends.md: what differs from native)" \
		"cpu memory" "$(cgfile /srv/other cgroup.controllers)"
	show_has "the daemon's view of /srv/other: #cpu memory" /srv/other "Controllers: #cpu memory"
fi
show_has "the daemon's view of /srv/alice: cpu memory" /srv/alice "Controllers: cpu memory"
show_has "the daemon's view of /srv: #cpu memory" /srv "Subtree control: #cpu memory"
has "the daemon logs who asked and that polkit's manage-delegated allowed it" "$(cat "$LOGS/cgbypassd.log")" \
	"EnableController /srv/alice cpu by uid=$ALICE pid=[0-9]*: applied: 1 operation(s); owner of the delegation, polkit org.cgbypass1.manage-delegated"
run root tree cpu
is "cgbypassctl tree cpu: /srv/alice has a cpu node of its own" "/
\`-/srv, /srv/other
  \`-/srv/alice" "$out"

# ---- children the owner makes ----
as_user $ALICE mkdir "$CG/srv/alice/job" "$CG/srv/alice/denied" && ok "alice makes /srv/alice/job and /srv/alice/denied" ||
	not_ok "alice mkdir"
succeeds "alice: cgbypassctl set /srv/alice '#cpu'" $ALICE set /srv/alice '#cpu'
show_has "the daemon's view of /srv/alice/job: #cpu" /srv/alice/job "Controllers: #cpu"
succeeds "alice: cgbypassctl enable /srv/alice/job cpu" $ALICE enable /srv/alice/job cpu
is "/srv/alice/job/cgroup.controllers: cpu" "cpu" "$(cgfile /srv/alice/job cgroup.controllers)"
exists /srv/alice/job cpu.weight && ok "cpu.weight appears in /srv/alice/job" ||
	not_ok "no cpu.weight in /srv/alice/job" "$(ls "$CG/srv/alice/job")"
if [ "$backend" = native ]; then
	is "/srv/alice/cgroup.subtree_control: #cpu" "#cpu" "$(cgfile /srv/alice cgroup.subtree_control)"
	has "debug.masks of /srv/alice/job: enable_ss_mask cpu" "$(cgfile /srv/alice/job debug.masks)" \
		'^enable_ss_mask *: cpu$'
	! exists /srv/alice/denied cpu.weight && ok "/srv/alice/denied has no cpu knobs" ||
		not_ok "cpu knobs in /srv/alice/denied"
else
	is "/srv/alice becomes a pass-through level in the kernel" "cpu" "$(cgfile /srv/alice cgroup.subtree_control)"
fi
run root tree cpu
is "cgbypassctl tree cpu: job below alice" "/
\`-/srv, /srv/other
  \`-/srv/alice, /srv/alice/denied
    \`-/srv/alice/job" "$out"

# ---- refusals: named errors, exit 1, nothing changed ----
snap1=$(snapshot)
refused "alice, where a polkit rule says no" AccessDenied $ALICE enable /srv/alice/denied cpu
refused "alice, a controller not delegated to her" ControllerNotDelegated $ALICE enable /srv/alice memory
refused "alice, a managed cgroup outside her delegation" NotDelegated $ALICE enable /srv/other cpu
refused "alice, the parent of her delegation" NotDelegated $ALICE set /srv +io
refused "bob, in alice's delegation" NotDelegated $BOB bypass /srv/alice/job cpu
is "... and nothing changed in the kernel" "$snap1" "$(snapshot)"
show_has "... nor in the daemon's view" /srv/alice/denied "Controllers: #cpu"

# ---- a restart keeps the owner's changes ----
stop_daemon
is "SIGTERM: cgbypassd exits 0" 0 "$daemon_status"
start_daemon && ok "cgbypassd starts again" || bail "cgbypassd did not come up again"
has "... with alice's changes from the state directory" "$(cat "$LOGS/cgbypassd.log")" \
	"Serving org.cgbypass1 on the system bus: $backend backend on '/sys/fs/cgroup', 1 delegation(s), [1-9][0-9]* client change(s)"
is "... and the kernel is as before the restart" "$snap1" "$(snapshot)"
show_has "... and so is the daemon's view of /srv/alice/job" /srv/alice/job "Controllers: cpu"

# ---- the owner bypasses cpu again ----
succeeds "alice: cgbypassctl bypass /srv/alice/job cpu" $ALICE bypass /srv/alice/job cpu
! exists /srv/alice/job cpu.weight && ok "cpu.weight is gone from /srv/alice/job" ||
	not_ok "cpu.weight still in /srv/alice/job"
succeeds "alice: cgbypassctl set /srv/alice -cpu" $ALICE set /srv/alice -cpu
as_user $ALICE rmdir "$CG/srv/alice/job" "$CG/srv/alice/denied" && ok "alice removes her children" ||
	not_ok "alice rmdir"
succeeds "alice: cgbypassctl bypass /srv/alice cpu" $ALICE bypass /srv/alice cpu
! exists /srv/alice cpu.weight && ok "cpu.weight is gone from /srv/alice" || not_ok "cpu.weight still in /srv/alice"
if [ "$backend" = native ]; then
	is "/srv/alice/cgroup.controllers: #cpu memory again" "#cpu memory" "$(cgfile /srv/alice cgroup.controllers)"
	has "debug.masks of /srv/alice: no enable_ss_mask" "$(cgfile /srv/alice debug.masks)" '^enable_ss_mask *: *$'
else
	is "/srv: no pass-through any more, memory only in the kernel" "memory" "$(cgfile /srv cgroup.subtree_control)"
fi
is "the kernel's hierarchy is as the configuration made it" "$snap0" "$(snapshot)"
run root tree cpu
is "cgbypassctl tree cpu as at the start" "$tree0" "$out"

# ---- policy values on the real kernel (issue 11 section 2) ----
BOBCG=/rt/bob
cp /etc/cgbypassd/cgbypassd.conf "$LOGS/base.conf"
cat >"$LOGS/bad.conf" <<'EOF'
[daemon]
backend = auto
cgroup-root = /sys/fs/cgroup
state-directory = /var/lib/cgbypassd

[cgroup]
path = /
subtree-control = +cpu +io +memory

[cgroup]
path = /vals
io.weight = default 0
io.cost.qos = enable=1
EOF
cgbypassd --config "$LOGS/bad.conf" --check-config >"$LOGS/out" 2>&1
st=$?
out=$(cat "$LOGS/out")
[ $st -eq 1 ] && printf '%s\n' "$out" | grep -q "^$LOGS/bad.conf:12: io.weight: the kernel refuses 'default 0' (EINVAL)" &&
	printf '%s\n' "$out" | grep -q "^$LOGS/bad.conf:13: .*io.cost.qos" &&
	ok "--check-config refuses io.weight = default 0 and io.cost.qos at FILE:LINE, exit 1" ||
	not_ok "--check-config of bad values" "exit $st: $out"
cat >>/etc/cgbypassd/cgbypassd.conf <<'EOF'

[cgroup]
path = /rt
subtree-control = #cpu #io +memory

[cgroup]
path = /vals
memory.max = 64M
cpu.weight = 50
io.weight = default 200
EOF
cgbypassd --check-config >"$LOGS/check2.log" 2>&1 && ok "--check-config takes memory.max, cpu.weight and io.weight values" ||
	not_ok "--check-config of values" "$(cat "$LOGS/check2.log")"
plan=$(cgbypassd --plan 2>&1)
echo "# cgbypassd --plan:"
printf '%s\n' "$plan" | sed 's/^/#   /'
mk=$(printf '%s\n' "$plan" | grep -n '^mkdir vals$' | cut -d: -f1)
w1=$(printf '%s\n' "$plan" | grep -n '^write vals memory.max 64M$' | cut -d: -f1)
w2=$(printf '%s\n' "$plan" | grep -n '^write vals cpu.weight 50$' | cut -d: -f1)
w3=$(printf '%s\n' "$plan" | grep -n '^write vals io.weight default 200$' | cut -d: -f1)
[ -n "$mk" ] && [ -n "$w1" ] && [ -n "$w2" ] && [ -n "$w3" ] && [ "$w1" -gt "$mk" ] && [ "$w2" -gt "$mk" ] &&
	[ "$w3" -gt "$mk" ] && ok "--plan: the three value writes, after the mkdir that makes their files" ||
	not_ok "--plan of values" "$plan"
succeeds "root: cgbypassctl reload applies them" root reload
is "the kernel shows memory.max 64M, cpu.weight 50, io.weight default 200 in /vals" "67108864|50|default 200" \
	"$(cgfile /vals memory.max)|$(cgfile /vals cpu.weight)|$(cgfile /vals io.weight)"
is "--plan is empty once applied" "" "$(cgbypassd --plan 2>&1)"
succeeds "root: cgbypassctl reload again" root reload
has "... writes nothing: the log says 0 operation(s)" "$(grep 'Reloaded the configuration' "$LOGS/cgbypassd.log" | tail -n 1)" \
	'Reloaded the configuration: 0 operation(s)\.$'

# ---- a run-time delegation made by a root client (issue 11 section 3) ----
# the example client, built on the host from the installed libcgbypass.pc
# (vm-daemon.sh), as root and as the owner; each error decoded by sd-bus
client_run() {
	local who=$1
	shift
	if [ "$who" = root ]; then
		cgb-client "$@" >"$LOGS/out" 2>&1
	else
		as_user "$who" cgb-client "$@" >"$LOGS/out" 2>&1
	fi
	st=$?
	out=$(cat "$LOGS/out")
}
client_ok() {
	local d=$1
	shift
	client_run "$@"
	[ $st -eq 0 ] && [ "$(printf '%s\n' "$out" | tail -n 1)" = ok ] && ok "$d" || not_ok "$d" "exit $st: $out"
}
decoded=
# client_refused DESC NAME WHO ARGS...: the documented errno, from sd_bus_error_get_errno()
client_refused() {
	local d=$1 name=$2 want
	shift 2
	want=$(sed -n "s/^$name //p" /usr/local/share/cgb-errnos)
	client_run "$@"
	if [ -n "$want" ] && [ $st -eq 1 ] && printf '%s\n' "$out" | grep -q "^error org\.cgbypass1\.Error\.$name $want (" &&
		! printf '%s\n' "$out" | grep -q mismatch; then
		ok "client: $d: $name, decoded to $want"
		decoded="$decoded $name"
	else
		not_ok "client: $d" "wanted $name ($want); exit $st: $out"
	fi
}
client_ok "root's client: AddDelegation $BOBCG to uid $BOB for cpu and io" root delegate $BOBCG $BOB cpu io
[ "$(stat -c %u "$CG$BOBCG")" = $BOB ] && [ "$(stat -c %u "$CG$BOBCG/cgroup.procs")" = $BOB ] &&
	[ "$(stat -c %u "$CG$BOBCG/cgroup.subtree_control")" = 0 ] &&
	ok "$BOBCG is made and handed over: directory and cgroup.procs bob's, cgroup.subtree_control root's" ||
	not_ok "ownership of $BOBCG" "$(ls -ln "$CG$BOBCG" | head)"
run root delegations
has "cgbypassctl delegations lists it" "$out" "^$BOBCG  *bob ($BOB)  *cpu io"

# ---- the owner's mkdir is seen at once (issue 11 section 5) ----
if as_user $BOB vm-owner-probe inotify "$CG$BOBCG" >"$LOGS/out" 2>&1; then
	ok "cgroup2 reports the owner's mkdir and rmdir to an inotify watch: $(tr '\n' ' ' <"$LOGS/out")"
else
	not_ok "inotify on a cgroup2 directory" "$(cat "$LOGS/out")"
fi
# nothing calls the daemon between the mkdir and the signal: only its inotify watch can see it
if as_user $BOB vm-owner-probe changed mkdir "$CG$BOBCG/a" >"$LOGS/out" 2>&1; then
	ok "bob's own mkdir $BOBCG/a: $(cat "$LOGS/out")"
	echo "# latency ($backend): $(sed -n 's/^CgroupChanged [^ ]* //p' "$LOGS/out")"
else
	not_ok "no CgroupChanged for bob's mkdir" "$(cat "$LOGS/out")"
fi
if as_user $BOB vm-owner-probe changed rmdir "$CG$BOBCG/a" >"$LOGS/out" 2>&1; then
	ok "bob's own rmdir $BOBCG/a: $(cat "$LOGS/out")"
	echo "# latency ($backend): $(sed -n 's/^CgroupChanged [^ ]* //p' "$LOGS/out")"
else
	not_ok "no CgroupChanged for bob's rmdir" "$(cat "$LOGS/out")"
fi
# many rounds: p50, p99 and max, how many beyond issue 11's 100 ms, a Ping as the same-run baseline.
# Figures, not a pass/fail bound: under TCG the guest's clock and scheduling are the emulator's.
if as_user $BOB vm-owner-probe series "$CG$BOBCG" 40 100 >"$LOGS/out" 2>&1; then
	ok "40 rounds of bob's mkdir and rmdir in $BOBCG: a CgroupChanged for each"
	sed "s/^/# latency ($backend): /" "$LOGS/out"
else
	not_ok "40 rounds of bob's mkdir and rmdir" "$(cat "$LOGS/out")"
fi

# ---- the owner's knobs (issue 11 section 1) ----
as_user $BOB mkdir "$CG$BOBCG/a" "$CG$BOBCG/b" && ok "bob makes $BOBCG/a and $BOBCG/b" || not_ok "bob mkdir"
succeeds "bob: cgbypassctl enable $BOBCG cpu" $BOB enable $BOBCG cpu
client_ok "bob's client: EnableController $BOBCG io" $BOB enable $BOBCG io
succeeds "bob: cgbypassctl set $BOBCG '#cpu #io'" $BOB set $BOBCG '#cpu #io'
succeeds "bob: cgbypassctl enable $BOBCG/a cpu" $BOB enable $BOBCG/a cpu
client_ok "bob's client: EnableController $BOBCG/a io" $BOB enable $BOBCG/a io
is "$BOBCG/a/cgroup.controllers: cpu io" "cpu io" "$(cgfile $BOBCG/a cgroup.controllers)"
if [ "$backend" = native ]; then
	! exists $BOBCG/b cpu.weight && ! exists $BOBCG/b io.weight && ok "$BOBCG/b has neither cpu.weight nor io.weight" ||
		not_ok "knobs in $BOBCG/b" "$(ls "$CG$BOBCG/b")"
else
	# emulated: the sibling gets a css of its own in the kernel (docs/backends.md)
	show_has "the daemon's view of $BOBCG/b: #cpu #io" $BOBCG/b "Controllers: #cpu #io"
fi
[ "$(stat -c %u "$CG$BOBCG/a/cpu.weight")" = $BOB ] && [ "$(stat -c %u "$CG$BOBCG/a/io.weight")" = $BOB ] &&
	ok "the daemon's writes made cpu.weight and io.weight appear in $BOBCG/a as bob's" ||
	not_ok "owner of a's knobs" "$(ls -ln "$CG$BOBCG/a"/*.weight)"
as_user $BOB sh -c "echo 500 >$CG$BOBCG/a/cpu.weight && echo 'default 300' >$CG$BOBCG/a/io.weight" 2>"$LOGS/err" &&
	ok "bob writes cpu.weight 500 and io.weight 'default 300' in $BOBCG/a" || not_ok "bob's writes" "$(cat "$LOGS/err")"
is "... and the kernel shows them" "500|default 300" "$(cgfile $BOBCG/a cpu.weight)|$(cgfile $BOBCG/a io.weight)"
for k in cpu.weight io.weight; do
	as_user $BOB sh -c "echo 42 >$CG$BOBCG/$k" 2>"$LOGS/err"
	st=$?
	[ $st -ne 0 ] && grep -q 'Permission denied' "$LOGS/err" && [ "$(stat -c %u "$CG$BOBCG/$k")" = 0 ] &&
		ok "bob cannot write his delegation root's $k: EACCES ($(cat "$LOGS/err"))" ||
		not_ok "bob and $BOBCG/$k" "exit $st: $(cat "$LOGS/err") $(ls -ln "$CG$BOBCG/$k")"
done
is "... which stay at their defaults" "100|default 100" "$(cgfile $BOBCG cpu.weight)|$(cgfile $BOBCG io.weight)"

# ---- every error the client provokes, decoded to org.cgbypass1(5)'s errno ----
client_refused "a controller the delegation lacks" ControllerNotDelegated $BOB enable $BOBCG memory
client_refused "a managed cgroup of someone else's" NotDelegated $BOB enable /srv/alice cpu
client_refused "a cgroup nobody manages" NotManaged $BOB enable /elsewhere cpu
client_refused "show a cgroup that does not exist" NoSuchCgroup $BOB show $BOBCG/nonexistent
client_refused "a relative path" InvalidPath $BOB show rt/bob
client_refused "the tree of no controller" UnknownController $BOB tree bogus
client_refused "a change without a sign" InvalidArgument $BOB set $BOBCG cpu
as_user $BOB mkdir "$CG$BOBCG/a/g"
succeeds "bob: cgbypassctl set $BOBCG/a +cpu" $BOB set $BOBCG/a +cpu
client_refused "re-enable where the parent enables" NotBypassedByParent $BOB enable $BOBCG/a/g cpu
client_refused "disable what a child re-enabled" InUseBelow $BOB set $BOBCG -cpu
client_refused "reload" AccessDenied $BOB reload
client_refused "AddDelegation" AccessDenied $BOB delegate /rt/x $BOB cpu
client_refused "root: re-enable in the root cgroup" RootCgroup root enable / cpu
client_refused "root: AddDelegation inside a delegation" DelegationConflict root delegate $BOBCG/a $BOB cpu
client_refused "root: RemoveDelegation of a configured delegation" NotRuntimeDelegation root undelegate /srv/alice
client_refused "root: RemoveDelegation of a cgroup nobody has" NoSuchDelegation root undelegate /srv/other
echo "# decoded:$decoded"

# ---- a hostile owner on the real cgroup2 (issue 13 items 2-5) ----
# kernfs has no mknod, create, link or RENAME_EXCHANGE: what the sim must guard
# against cannot be made here; the daemon's temporary name is an ordinary cgroup
as_user $BOB mkfifo "$CG$BOBCG/fifo" 2>"$LOGS/err" && not_ok "bob made a FIFO in cgroup2" ||
	ok "cgroup2 refuses bob's FIFO: $(cat "$LOGS/err")"
as_user $BOB sh -c ">$CG$BOBCG/notes.txt" 2>"$LOGS/err" && not_ok "bob made a plain file in cgroup2" ||
	ok "cgroup2 refuses bob's plain file: $(cat "$LOGS/err")"
x=$(as_user $BOB vm-owner-probe socket "$CG$BOBCG/sock" 2>&1)
[ -n "$x" ] && [ "$x" != ok ] && [ ! -e "$CG$BOBCG/sock" ] && ok "cgroup2 refuses bob's unix socket: bind(2) $x" ||
	not_ok "bob's socket in cgroup2" "$x"
as_user $BOB ln "$CG$BOBCG/a/cgroup.procs" "$CG$BOBCG/x" 2>"$LOGS/err" && not_ok "bob made a hard link in cgroup2" ||
	ok "cgroup2 refuses bob's hard link of cgroup.procs: $(cat "$LOGS/err")"
cgbypassctl --no-ask-password reload >"$LOGS/reload.out" 2>&1 &
reload_pid=$!
x1=$(as_user $BOB vm-owner-probe exchange "$CG$BOBCG/cgroup.procs" "$CG$BOBCG/cgroup.threads" 2>&1)
x2=$(as_user $BOB vm-owner-probe exchange "$CG$BOBCG/a" "$CG$BOBCG/b" 2>&1)
wait $reload_pid
reload_st=$?
is "renameat2(RENAME_EXCHANGE) of two files and of two cgroups during a reload: EINVAL both" "EINVAL EINVAL" "$x1 $x2"
[ $reload_st -eq 0 ] && ok "... and the reload succeeded" || not_ok "reload during the exchange" "$(cat "$LOGS/reload.out")"
as_user $BOB mkdir "$CG$BOBCG/.cgb-tmp" && ok "bob makes a cgroup named .cgb-tmp (the sim's temporary name)" ||
	not_ok "mkdir .cgb-tmp"
succeeds "root: cgbypassctl reload with it" root reload
succeeds "bob: cgbypassctl bypass $BOBCG/a io" $BOB bypass $BOBCG/a io
show_has "the daemon knows $BOBCG/.cgb-tmp as a cgroup of the delegation" $BOBCG/.cgb-tmp "Controllers: #cpu #io"
daemon_up >/dev/null 2>&1 && ok "the daemon is up and answers" || bail "the daemon died"
as_user $BOB rmdir "$CG$BOBCG/.cgb-tmp"

# ---- the delegation ends: everything back to root ----
client_ok "root's client: RemoveDelegation $BOBCG" root undelegate $BOBCG
left=$(find "$CG$BOBCG" ! -user root)
[ -z "$left" ] && [ -d "$CG$BOBCG/a" ] && ok "RemoveDelegation: every file of $BOBCG back to root, the cgroups stay" ||
	not_ok "after RemoveDelegation" "$left"
rmdir "$CG$BOBCG/a/g" "$CG$BOBCG/a" "$CG$BOBCG/b" "$CG$BOBCG"

# ---- the end ----
! grep -v ': refused: org\.cgbypass1\.Error\.' "$LOGS/cgbypassd.log" | grep -qi 'disagree\|drift\|error\|warn\|fail' &&
	ok "the daemon logged no disagreement, drift, error or warning (besides the refusals)" ||
	not_ok "the daemon's log" "$(cat "$LOGS/cgbypassd.log")"
stop_daemon
is "SIGTERM: cgbypassd exits 0" 0 "$daemon_status"
kill "$polkit_pid" 2>/dev/null
echo "# cgbypassd's log:"
sed 's/^/#   /' "$LOGS/cgbypassd.log"
echo "1..$n"
echo "# vm-daemon-guest: done, $failed of $n failed"
[ $failed -eq 0 ]
