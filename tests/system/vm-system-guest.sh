#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2015 # ok and not_ok never fail
#
# Runs inside the system VM (Debian 12, systemd as PID 1, the project
# installed from its package; tests/system/vm-system.sh boots it), as root from
# cgb-vm-run.service once multi-user.target is reached. Uses the machine as
# its administrator and users would: systemctl, busctl, journalctl,
# cgbypassctl as the unprivileged alice on the real system bus with the real
# polkitd. Then looks at what systemd does to cgroup.subtree_control inside
# and outside a Delegate=yes subtree. Prints TAP and '# ' evidence lines; the
# last line is '# vm-system-guest: done' when it ran to the end.
#
# usage: vm-system-guest.sh native|emulated   (the backend auto must pick)
#
# More guest scripts (the crun and login-session users): vm-system.sh copies
# every tests/system/guest-*.sh of the source tree into the image as
# /usr/share/cgbypassd-tests/guest-*.sh (kernel/run-vm.sh --file; nothing else
# of the tree is copied: a script makes what it needs at run time from the
# image, which has crun, busybox-static, systemd-container and the package).
# After its own checks this script runs each, in name order, as
#   bash /usr/share/cgbypassd-tests/guest-NAME.sh native|emulated
# as root with cwd /root, cgbypassd.service active, alice (1000) and bob
# (1001), a 600 s limit each. A script prints TAP ('ok N - ...', 'not ok N -
# ...', '# ' lines; a '1..N' line is optional and ignored) and exits 0 when
# all passed. Its checks are folded in here renumbered as 'NAME: ...' (a
# '# TODO'/'# SKIP' directive kept); a non-zero exit, a timeout or no check at
# all is one more failed check. It should leave the system as it found it
# (stop its units, remove its files in /etc/cgbypassd/conf.d).

backend=${1:?native or emulated}
CG=/sys/fs/cgroup
HOST=/system.slice/cgb-host.service
DELEG=$HOST/alice
ALICE=1000
LOGS=/run/vm-system
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
	journalctl -b --no-pager -n 80 | sed 's/^/#   /'
	exit 1
}
# is DESC EXPECTED ACTUAL
is() {
	[ "$2" = "$3" ] && ok "$1" || not_ok "$1" "expected: '$2'
got:      '$3'"
}
# has DESC TEXT LINE-REGEX: some line of TEXT matches
has() {
	printf '%s\n' "$2" | grep -q -- "$3" && ok "$1" || not_ok "$1" "no line matching '$3' in:
$2"
}
evidence() {
	printf '%s\n' "$@" | sed 's/^/#   /'
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
as_alice() {
	setpriv --reuid=$ALICE --regid=$ALICE --init-groups --reset-env "$@"
}
# run alice|root ARGS...: cgbypassctl --no-ask-password ARGS; sets out, err, st
run() {
	local who=$1
	shift
	if [ "$who" = root ]; then
		cgbypassctl --no-ask-password "$@" >"$LOGS/out" 2>"$LOGS/err"
	else
		as_alice cgbypassctl --no-ask-password "$@" >"$LOGS/out" 2>"$LOGS/err"
	fi
	st=$?
	out=$(cat "$LOGS/out")
	err=$(cat "$LOGS/err")
}
succeeds() {
	local d=$1
	shift
	run "$@"
	[ $st -eq 0 ] && [ -z "$err" ] && ok "$d" ||
		not_ok "$d" "cgbypassctl $*: exit $st, stdout '$out', stderr '$err'"
}
show_has() {
	local d=$1 cg=$2 line=$3
	run root show "$cg"
	[ $st -eq 0 ] && printf '%s\n' "$out" | grep -qx " *$line" && ok "$d" ||
		not_ok "$d" "cgbypassctl show $cg: exit $st, wanted '$line' in:
$out$err"
}
cgfile() {
	cat "$CG$1/$2" 2>&1
}
# tree DIR: every cgroup below DIR (DIR included) with its control files
tree() {
	local d
	for d in $(find "$CG$1" -type d | sort); do
		echo "${d#"$CG"} c='$(cat "$d/cgroup.controllers")' sc='$(cat "$d/cgroup.subtree_control")'"
	done
}
# the cgroups systemd manages on the way to the test's units
outside() {
	local d
	for d in / /system.slice /cgb.slice /cgb.slice/cgb-a.service /cgb.slice/cgb-b.service; do
		[ -d "$CG$d" ] && echo "$d sc='$(cat "$CG$d/cgroup.subtree_control")'"
	done
}
unit_prop() {
	systemctl show -P "$2" "$1"
}
# mark_journal, then journal_since [MATCHES]: the journal's messages in between
mark_journal() {
	cursor=$(journalctl --no-pager -q -n 1 -o cat --show-cursor | sed -n 's/^-- cursor: //p')
}
journal_since() {
	journalctl --no-pager -o cat --after-cursor="$cursor" "$@"
}
# journal_wait REGEX [MATCHES]: wait up to 30 s for a matching message since the mark
journal_wait() {
	local re=$1 i=0
	shift
	while [ $i -lt 300 ]; do
		journal_since "$@" | grep -q -- "$re" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# reload_wait: systemctl reload, then wait for the daemon's verdict in the journal
# (Type=notify on systemd 252: the reload job ends once SIGHUP is sent)
reload_wait() {
	mark_journal
	systemctl reload cgbypassd.service
	reload_status=$?
	journal_wait 'Reloaded the configuration\|kept the running one' -u cgbypassd.service || true
	reload_log=$(journal_since -u cgbypassd.service)
}

echo "# vm-system-guest: expecting backend $backend on $(uname -r), $(systemctl --version | head -n 1)"

# ---- the system ----
state=$(systemctl is-system-running --wait 2>&1)
is "systemd is PID 1 and the system is up (is-system-running)" running "$state"
[ "$state" = running ] || evidence "$(systemctl --failed --no-legend 2>&1)"
echo "# boot: $(systemd-analyze time 2>&1 | head -n 1)"
if [ "$backend" = native ]; then
	grep -qx bypass /sys/kernel/cgroup/features && ok "the patched kernel lists bypass" ||
		not_ok "no bypass in /sys/kernel/cgroup/features" "$(cat /sys/kernel/cgroup/features)"
else
	! grep -qx bypass /sys/kernel/cgroup/features && ok "the stock kernel does not list bypass" ||
		not_ok "the stock kernel lists bypass"
fi
ver=$(dpkg-query -W -f='${Version} ${Status}' cgbypassd 2>/dev/null)
if [ -n "$ver" ]; then
	has "cgbypassd is installed from its package" "$ver" 'install ok installed$'
	echo "# package: cgbypassd $ver"
else
	echo "# no cgbypassd package: the image holds a 'meson install' of a --prefix=/usr build (stand-in)"
fi

# ---- systemd starts the service at boot ----
is "cgbypassd.service is enabled" enabled "$(systemctl is-enabled cgbypassd.service 2>&1)"
is "systemd started cgbypassd.service at boot" active "$(systemctl is-active cgbypassd.service 2>&1)"
# every later check would wait on D-Bus activation of a failing unit (25 s
# each, past the VM's time limit): stop here with the reason instead
systemctl -q is-active cgbypassd.service ||
	bail "cgbypassd.service is not active: $(journalctl -b -u cgbypassd.service --no-pager -o cat | tail -n 20)"
pid=$(unit_prop cgbypassd.service MainPID)
is "its main process is /usr/sbin/cgbypassd" /usr/sbin/cgbypassd "$(readlink "/proc/$pid/exe" 2>&1)"
has "it runs in its own cgroup" "$(cat "/proc/$pid/cgroup" 2>&1)" '^0::/system.slice/cgbypassd.service$'
has "the boot's journal: the daemon came up with backend $backend" \
	"$(journalctl -b -u cgbypassd.service --no-pager -o cat)" \
	"Serving org.cgbypass1 on the system bus: $backend backend on '/sys/fs/cgroup'"
is "the Backend property on the system bus: $backend" "s \"$backend\"" \
	"$(busctl get-property org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager Backend 2>&1)"

# ---- the administrator: the container-host example, applied at boot ----
# (vm-system.sh installed conf.d/examples/container-host.conf and
# containers.service, enabled, before the first boot)
CT=/system.slice/containers.service
is "containers.service (the example's Delegate=yes unit) runs" active "$(systemctl is-active containers.service 2>&1)"
is "... ordered before cgbypassd.service" yes \
	"$(systemctl show -P Before containers.service | tr ' ' '\n' | grep -qx cgbypassd.service && echo yes)"
is "its process sits in its leaf" "0::$CT/supervisor" \
	"$(cat "/proc/$(unit_prop containers.service MainPID)/cgroup" 2>&1)"
has "the boot's journal: the service applied the example at boot" \
	"$(journalctl -b -u cgbypassd.service --no-pager -o cat)" '^Applied the configuration: [1-9][0-9]* operation(s)\.$'
plan=$(cgbypassd --plan 2>&1)
st=$?
[ $st -eq 0 ] && [ -z "$plan" ] && ok "cgbypassd --plan is empty afterwards: the hierarchy is as configured" ||
	not_ok "cgbypassd --plan: exit $st" "$plan"
run root tree cpu
echo "# cgbypassctl tree cpu, the lines of $CT:"
evidence "$(printf '%s\n' "$out" | grep -F "$CT")"
# (.control: systemd 252 runs a delegated unit's ExecStartPost= there, and keeps it)
has "cgbypassctl tree cpu: $CT's cpu is shared by .control, supervisor and runtime (cpu bypassed below it)" "$out" \
	"[-]$CT, $CT/\.control, $CT/supervisor, $CT/runtime\$"
[ $st -eq 0 ] && ! printf '%s\n' "$out" | grep -q "[-]$CT/" && ok "... and no cgroup below $CT has a cpu of its own" ||
	not_ok "cgbypassctl tree cpu: a cgroup below $CT has its own cpu (exit $st)" "$out$err"
if [ "$backend" = native ]; then
	is "$CT/runtime in the kernel: cpu and io bypassed, cpuset, memory and pids" "cpuset #cpu #io memory pids" \
		"$(cgfile "$CT/runtime" cgroup.controllers)"
else
	is "$CT/runtime in the kernel: cpuset, memory and pids (cpu and io bypassed by the daemon)" "cpuset memory pids" \
		"$(cgfile "$CT/runtime" cgroup.controllers)"
fi
show_has "the daemon's view of $CT/runtime: cpu and io bypassed" "$CT/runtime" "Controllers: cpuset #cpu #io memory pids"
show_has "... delegated to bob, as the example says (user = 1001)" "$CT/runtime" "Delegated to: bob (1001)"
is "$CT/runtime is bob's" 1001 "$(stat -c %u "$CG$CT/runtime" 2>&1)"

# ---- bus activation ----
systemctl stop cgbypassd.service
is "systemctl stop: inactive" inactive "$(systemctl is-active cgbypassd.service 2>&1)"
mark_journal
out=$(as_alice busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager GetCgroup s / 2>&1)
has "alice calls GetCgroup / with busctl: the bus starts the daemon and it answers" "$out" '^a{sv} '
is "... through systemd: cgbypassd.service is active again" active "$(systemctl is-active cgbypassd.service 2>&1)"
journal_wait "Successfully activated service 'org.cgbypass1'" -u dbus.service
has "dbus-daemon says it activated org.cgbypass1" "$(journal_since -u dbus.service)" \
	"Successfully activated service 'org.cgbypass1'"
has "... and systemd started the unit for it" "$(journal_since -u cgbypassd.service)" '^Started cgbypassd.service'


# ---- a delegated unit for cgbypassd to manage ----
cat >/etc/systemd/system/cgb-host.service <<'EOF'
[Unit]
Description=a service whose subtree systemd delegates (the cgbypassd VM test)
[Service]
Delegate=yes
# the main process moves to a leaf of its own: the unit's cgroup can then
# enable controllers for its children (no internal processes)
ExecStart=/bin/sh -c 'd=/sys/fs/cgroup$$(sed -n "s/^0:://p" /proc/self/cgroup); mkdir "$$d/main" && echo $$$$ >"$$d/main/cgroup.procs" && exec sleep infinity'
EOF
systemctl daemon-reload
systemctl start cgb-host.service
is "cgb-host.service (Delegate=yes) runs" active "$(systemctl is-active cgb-host.service 2>&1)"
is "its process sits in its leaf" "0::$HOST/main" "$(cat "/proc/$(unit_prop cgb-host.service MainPID)/cgroup")"
echo "# systemd's controllers for the delegated unit: $(cgfile "$HOST" cgroup.controllers)"

# ---- systemctl reload: a changed configuration ----
mkdir -p /etc/cgbypassd/conf.d
cat >/etc/cgbypassd/conf.d/50-vm.conf <<EOF
# the cgbypassd VM test: a subtree systemd delegated to cgb-host.service
[cgroup]
path = $HOST
subtree-control = #cpu +memory

[cgroup]
path = $HOST/batch
create = yes
controllers = +cpu

[delegate]
path = $DELEG
user = alice
controllers = cpu
create = yes
EOF
cgbypassd --check-config >"$LOGS/check" 2>&1 && ok "cgbypassd --check-config accepts the new file" ||
	not_ok "--check-config" "$(cat "$LOGS/check")"
pid0=$(unit_prop cgbypassd.service MainPID)
reload_wait
is "systemctl reload exits 0" 0 "$reload_status"
has "the journal: the daemon reloaded and applied it" "$reload_log" 'Reloaded the configuration: [1-9][0-9]* operation(s)\.$'
is "... in the same process" "$pid0" "$(unit_prop cgbypassd.service MainPID)"
# written by the hardened unit: ReadWritePaths=/sys/fs/cgroup under ProtectKernelTunables=
if [ "$backend" = native ]; then
	is "$HOST bypasses cpu for its children in the kernel" "#cpu memory" "$(cgfile "$HOST" cgroup.subtree_control)"
	is "$DELEG: #cpu memory" "#cpu memory" "$(cgfile "$DELEG" cgroup.controllers)"
else
	is "$HOST: a pass-through level for batch's cpu in the kernel" "cpu memory" "$(cgfile "$HOST" cgroup.subtree_control)"
fi
is "$HOST/batch has cpu back" "cpu memory" "$(cgfile "$HOST/batch" cgroup.controllers)"
show_has "the daemon's view of $HOST" "$HOST" "Subtree control: #cpu memory"
show_has "the daemon's view of $DELEG" "$DELEG" "Controllers: #cpu memory"
[ -d "$CG$DELEG" ] && [ "$(stat -c %u "$CG$DELEG")" = $ALICE ] && ok "$DELEG exists and is alice's" ||
	not_ok "$DELEG" "$(ls -ln "$CG$HOST")"

# ---- systemctl reload: a broken configuration is refused ----
before=$(tree "$HOST")
cat >/etc/cgbypassd/conf.d/60-broken.conf <<EOF
[cgroup]
path = $HOST/batch
subtree-control = +memory +nosuchcontroller
EOF
reload_wait
has "the journal: the broken file is named with its line and reason" "$reload_log" '60-broken.conf:3: '
has "the journal: the running configuration is kept" "$reload_log" 'kept the running one'
evidence "$reload_log"
is "cgbypassd.service stays active" active "$(systemctl is-active cgbypassd.service 2>&1)"
is "... in the same process" "$pid0" "$(unit_prop cgbypassd.service MainPID)"
is "... and the kernel is unchanged" "$before" "$(tree "$HOST")"
rm /etc/cgbypassd/conf.d/60-broken.conf
reload_wait
has "the file removed, a reload is accepted again" "$reload_log" 'Reloaded the configuration: 0 operation(s)\.$'

# ---- the rule: no cgroup systemd manages (cgbypassd(8), SYSTEMD) ----
cat >/etc/cgbypassd/conf.d/70-systemd.conf <<EOF
[cgroup]
path = /
subtree-control = +hugetlb

[cgroup]
path = /system.slice/dbus.service/x
subtree-control = +memory
EOF
root_sc=$(cgfile / cgroup.subtree_control)
check=$(cgbypassd --check-config 2>&1)
is "cgbypassd --check-config refuses cgroups systemd manages (exit 1)" 1 "$?"
evidence "$check"
has "... /: the reason, at the path line" "$check" \
	'70-systemd.conf:2: / is managed by systemd (it is in / of -\.slice, which has no Delegate=yes): systemd rewrites'
has "... the unit systemd answers for /system.slice/dbus.service/x" "$check" \
	'70-systemd.conf:6: /system\.slice/dbus\.service/x is managed by systemd (it is in /system\.slice/dbus\.service of dbus\.service,'
has "... and the fix" "$check" 'Configure a subtree systemd delegates instead: the cgroup of a service or scope with Delegate=yes'
reload_wait
has "systemctl reload: the journal gives the same refusal" "$reload_log" '70-systemd.conf:2: / is managed by systemd'
has "... and keeps the running configuration" "$reload_log" 'kept the running one'
is "... cgbypassd.service stays active" active "$(systemctl is-active cgbypassd.service 2>&1)"
is "... in the same process" "$pid0" "$(unit_prop cgbypassd.service MainPID)"
is "... and / is as before" "$root_sc" "$(cgfile / cgroup.subtree_control)"
rm /etc/cgbypassd/conf.d/70-systemd.conf
reload_wait
has "the file removed, a reload is accepted again" "$reload_log" 'Reloaded the configuration: 0 operation(s)\.$'

# ---- the same rule for run-time delegations (AddDelegation, as root) ----
dl0=$(cgbypassctl delegations 2>&1)
sys_sc=$(cgfile /system.slice cgroup.subtree_control)
run root delegate /system.slice alice cpu
is "cgbypassctl delegate /system.slice: refused (exit 1)" 1 "$st"
evidence "$err"
has "... systemd manages it: the reason" "$err" \
	'/system\.slice is managed by systemd (it is in /system\.slice of system\.slice, which has no Delegate=yes)'
has "... and the fix" "$err" 'Delegate a subtree systemd delegates instead: the cgroup of a service or scope with Delegate=yes'
has "... with the error's name" "$err" 'org\.cgbypass1\.Error\.NotManaged'
run root delegate /system.slice/dbus.service/x alice cpu
is "cgbypassctl delegate /system.slice/dbus.service/x (no Delegate=yes): refused (exit 1)" 1 "$st"
evidence "$err"
has "... the unit systemd answers for it" "$err" \
	'/system\.slice/dbus\.service/x is managed by systemd (it is in /system\.slice/dbus\.service of dbus\.service,'
[ ! -e "$CG/system.slice/dbus.service/x" ] && ok "... and made no cgroup" || not_ok "a refused delegation made a cgroup"
is "... /system.slice is as before" "$sys_sc" "$(cgfile /system.slice cgroup.subtree_control)"
is "... and the delegations are as before" "$dl0" "$(cgbypassctl delegations 2>&1)"
# inside a Delegate=yes unit: accepted (and ended again)
succeeds "cgbypassctl delegate $HOST/rt alice cpu: below a Delegate=yes unit, accepted" root delegate "$HOST/rt" alice cpu
succeeds "... cgbypassctl undelegate $HOST/rt" root undelegate "$HOST/rt"
rmdir "$CG$HOST/rt" 2>/dev/null

# ---- the owner's changes through cgbypassctl, and a restart keeps them ----
succeeds "alice: cgbypassctl enable $DELEG cpu" alice enable "$DELEG" cpu
as_alice mkdir "$CG$DELEG/app" && ok "alice makes $DELEG/app" || not_ok "alice mkdir"
succeeds "alice: cgbypassctl set $DELEG '#cpu'" alice set "$DELEG" '#cpu'
succeeds "alice: cgbypassctl enable $DELEG/app cpu" alice enable "$DELEG/app" cpu
# The kernel gives the files of a controller to whoever enabled it (root, the
# daemon); the daemon hands them to the delegation's owner (ownership.c).
if as_alice sh -c "echo 42 >$CG$DELEG/app/cpu.weight" 2>"$LOGS/w"; then
	is "alice sets $DELEG/app/cpu.weight" 42 "$(cgfile "$DELEG/app" cpu.weight)"
else
	not_ok "alice sets $DELEG/app/cpu.weight" "$(cat "$LOGS/w"; ls -ln "$CG$DELEG/app"/cpu.*)"
	echo 42 >"$CG$DELEG/app/cpu.weight"
fi
before=$(tree "$HOST")
show0=$(cgbypassctl show "$DELEG/app" 2>&1)
systemctl restart cgbypassd.service
is "systemctl restart: active" active "$(systemctl is-active cgbypassd.service 2>&1)"
pid1=$(unit_prop cgbypassd.service MainPID)
[ "$pid1" != "$pid0" ] && ok "... in a new process" || not_ok "the same main process after restart"
has "the journal: the restarted daemon took up alice's changes" \
	"$(journalctl -u cgbypassd.service --no-pager -o cat -n 20)" \
	"Serving org.cgbypass1 on the system bus: $backend backend .* [1-9][0-9]* client change(s)"
is "the kernel's subtree is as before the restart" "$before" "$(tree "$HOST")"
is "the daemon's view of $DELEG/app is as before" "$show0" "$(cgbypassctl show "$DELEG/app" 2>&1)"
is "alice's cpu.weight is still 42" 42 "$(cgfile "$DELEG/app" cpu.weight)"

# ---- systemd-analyze security ----
sec=$(systemd-analyze security --no-pager cgbypassd.service 2>&1)
has "systemd-analyze security cgbypassd.service gives an exposure level" "$sec" 'Overall exposure level for cgbypassd.service'
echo "# $(printf '%s\n' "$sec" | grep 'Overall exposure level')"
printf '%s\n' "$sec" | grep '✗' | sed 's/^/#   /'

# ---- the journal ----
jl=$(journalctl -u cgbypassd.service -b --no-pager -o cat)
has "journalctl -u cgbypassd: the start-up line" "$jl" 'Serving org.cgbypass1 on the system bus'
has "journalctl -u cgbypassd: alice's request, with who asked" "$jl" "EnableController $DELEG cpu by uid=$ALICE"
fields=$(journalctl -u cgbypassd.service -b --no-pager -o verbose | sed -n 's/^ *\([A-Z_][A-Z0-9_]*\)=.*/\1/p' |
	grep -v '^_' | sort -u)
echo "# the daemon's journal fields (trusted _FIELDS left out): $(printf '%s' "$fields" | tr '\n' ' ')"
has "the messages carry a priority" "$fields" '^PRIORITY$'
has "... and the syslog identifier" "$fields" '^SYSLOG_IDENTIFIER$'
# the journal names the program (SYSLOG_IDENTIFIER): the text must not again
! printf '%s\n' "$jl" | grep -q '^cgbypassd: ' && ok "no message repeats the program name ('cgbypassd: ...')" ||
	not_ok "messages with a 'cgbypassd: ' prefix" "$(printf '%s\n' "$jl" | grep '^cgbypassd: ' | head -n 5)"
echo "# as journalctl shows it: $(journalctl -u cgbypassd.service -b --no-pager -o short -g 'Serving org' -n 1 | tail -n 1)"
has "... the source location (CODE_FILE)" "$fields" '^CODE_FILE$'
# alice's request as one entry with its own fields
req=$(journalctl -u cgbypassd.service -b --no-pager -o verbose CGBYPASS_METHOD=EnableController \
	CGBYPASS_CGROUP="$DELEG" 2>&1)
has "alice's EnableController: CGBYPASS_CALLER_UID=$ALICE" "$req" "^ *CGBYPASS_CALLER_UID=$ALICE\$"
has "... CGBYPASS_ARGUMENT=cpu" "$req" '^ *CGBYPASS_ARGUMENT=cpu$'
has "... CGBYPASS_RESULT" "$req" '^ *CGBYPASS_RESULT='
has "... MESSAGE_ID" "$req" '^ *MESSAGE_ID=[0-9a-f]\{32\}$'

# ---- coexistence: what systemd does to cgroup.subtree_control ----
# Slices: does systemd take Delegate=? (systemd.resource-control(5): services,
# scopes, sockets, mounts, swaps)
cat >/etc/systemd/system/cgb.slice <<'EOF'
[Slice]
Delegate=yes
EOF
for u in a b; do
	cat >/etc/systemd/system/cgb-$u.service <<'EOF'
[Service]
Slice=cgb.slice
ExecStart=/bin/sleep infinity
EOF
done
mark_journal
systemctl daemon-reload
systemctl start cgb-a.service
echo "# a slice with Delegate=yes: Delegate property '$(unit_prop cgb.slice Delegate)'; the journal says:"
evidence "$(journal_since _PID=1 | grep -i delegate)"

inside0=$(tree "$HOST")
outside0=$(outside)
echo "# inside ($HOST) and outside, before:"
evidence "$inside0" "$outside0"

# A writer other than systemd in cgroups systemd manages: the root, the slice.
echo +hugetlb >"$CG/cgroup.subtree_control"
for c in +cpu +io +hugetlb; do
	echo $c >"$CG/cgb.slice/cgroup.subtree_control" 2>"$LOGS/w" || evidence "writing $c to /cgb.slice: $(cat "$LOGS/w")"
done
outside1=$(outside)
echo "# outside, after writing +hugetlb at / and +cpu +io +hugetlb in /cgb.slice ourselves:"
evidence "$outside1"
# step NAME CMD...: run a systemd operation, report both sides
step() {
	local name=$1
	shift
	"$@" >/dev/null 2>&1
	echo "# after $name:"
	evidence "$(outside)"
	is "$name leaves the delegated subtree alone" "$inside0" "$(tree "$HOST")"
}
step "systemctl daemon-reload" systemctl daemon-reload
outside_reload=$(outside)
step "starting cgb-b.service (same slice)" systemctl start cgb-b.service
step "systemctl set-property cgb-b.service CPUWeight=50 (systemd wants cpu in cgb.slice)" \
	systemctl set-property --runtime cgb-b.service CPUWeight=50
outside_cpu=$(outside)
step "stopping cgb-b.service" systemctl stop cgb-b.service
step "stopping cgb-a.service (the slice empties)" systemctl stop cgb-a.service
step "a transient unit elsewhere (systemd-run -p MemoryMax=64M true)" systemd-run --wait -q -p MemoryMax=64M true
step "systemctl daemon-reexec" systemctl daemon-reexec
outside_end=$(outside)
is "systemd still runs cgb-host.service" active "$(systemctl is-active cgb-host.service 2>&1)"
is "and cgbypassd.service" active "$(systemctl is-active cgbypassd.service 2>&1)"
run root --json status
echo "# cgbypassctl status after the systemd operations: $(printf '%s' "$out" | tr -d '\n')"
! journalctl -u cgbypassd.service -b --no-pager -o cat | grep -q '^Drift' && ok "... no 'Drift' in its journal" ||
	not_ok "drift in cgbypassd's journal" "$(journalctl -u cgbypassd.service -b --no-pager -o cat | grep Drift)"
# the record the findings in docs/systemd.md come from
echo "# summary: root hugetlb after daemon-reload: $(printf '%s\n' "$outside_reload" | grep -c "^/ sc='.*hugetlb")," \
	"after re-exec: $(printf '%s\n' "$outside_end" | grep -c "^/ sc='.*hugetlb")"
echo "# summary: cgb.slice after daemon-reload: $(printf '%s\n' "$outside_reload" | grep '^/cgb.slice ')"
echo "# summary: cgb.slice after CPUWeight=: $(printf '%s\n' "$outside_cpu" | grep '^/cgb.slice ')"

# ---- the other users' guest scripts (see the top) ----
for g in /usr/share/cgbypassd-tests/guest-*.sh; do
	[ -f "$g" ] || continue
	name=${g##*/guest-}
	name=${name%.sh}
	echo "# $g:"
	timeout 600 bash "$g" "$backend" >"$LOGS/guest-$name.out" 2>"$LOGS/guest-$name.err" </dev/null
	gst=$?
	gcount=0
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ ok|ok)\ [0-9]+(\ -)?\ ?(.*)$ ]]; then
			gcount=$((gcount + 1))
			if [ "${BASH_REMATCH[1]}" = ok ]; then
				ok "$name: ${BASH_REMATCH[3]}"
			elif [[ ${BASH_REMATCH[3]} == *' # TODO '* ]]; then
				n=$((n + 1))
				echo "not ok $n - $name: ${BASH_REMATCH[3]}"
			else
				not_ok "$name: ${BASH_REMATCH[3]}"
			fi
		elif [[ $line =~ ^1\.\.[0-9]+ ]]; then
			:
		else
			echo "# ${line#\# }"
		fi
	done <"$LOGS/guest-$name.out"
	[ $gst -eq 0 ] && [ $gcount -gt 0 ] && ok "$name: guest-$name.sh ran to the end and exited 0 ($gcount checks)" ||
		not_ok "$name: guest-$name.sh ran to the end and exited 0 (exit status $gst, $gcount checks)" \
			"$(tail -n 30 "$LOGS/guest-$name.err")"
done

echo "1..$n"
echo "# vm-system-guest: done, $failed of $n failed"
[ $failed -eq 0 ]
