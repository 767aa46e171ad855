#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2015,SC2016 # ok and not_ok never fail; the quoted shells expand
#
# In the system VM (run by vm-system-guest.sh, as root, cgbypassd.service
# active): the unprivileged alice (uid 1000) logs in (machinectl shell, a
# PAM login session through systemd-logind) and so gets user@1000.service,
# whose inside her own systemd manages. She starts a scope with
# `systemd-run --user --scope -p Delegate=yes`: her systemd leaves its
# inside alone. Root tells cgbypassd about it with a run-time delegation
# (AddDelegation, lifetime cgroup: the scope's cgroup goes when the scope
# stops). Inside it alice, over the system bus with polkitd running, makes
# nested app groups, bypasses cpu at the intermediate levels, re-enables it
# for one app and sets that app's cpu.weight. Her systemd keeps working
# (systemctl --user) and undoes nothing, also across
# `systemctl --user daemon-reload`. TAP on stdout.
#
# usage: guest-session.sh native|emulated

backend=${1:?native or emulated}
CG=/sys/fs/cgroup
U=alice
UID_=1000
SCOPE=cgb-guest-apps
RT=/run/user/$UID_

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/# /'
	return 0
}
check() { local d=$1 out; shift; if out=$("$@" 2>&1); then ok "$d"; else not_ok "$d" "$out"; fi; }
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

# alice's commands, with her session bus (dbus-user-session) and her systemd
as_alice() {
	timeout 60 setpriv --reuid=$UID_ --regid=$UID_ --init-groups \
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/$U USER=$U XDG_RUNTIME_DIR=$RT \
		DBUS_SESSION_BUS_ADDRESS=unix:path=$RT/bus "$@"
}

scope_pid=
scope_shell=
UNIT=
linger=
cleanup() {
	[ -n "$UNIT" ] && as_alice systemctl --user stop "$UNIT" >/dev/null 2>&1
	[ -n "$scope_pid" ] && kill "$scope_pid" 2>/dev/null
	[ -n "$scope_shell" ] && kill "$scope_shell" 2>/dev/null
	[ -n "$linger" ] && loginctl disable-linger $U >/dev/null 2>&1
	loginctl terminate-user $U >/dev/null 2>&1
}
trap cleanup EXIT

id $U >/dev/null 2>&1 || { not_ok "the user $U exists"; exit 1; }
diag "backend $backend"

# ---- the login ----
# machinectl shell opens a PAM session ("login" service of systemd-machined's
# container-shell) on the host: pam_systemd registers it and starts user@1000.
# (seen in the VM: machinectl shell sometimes stays after "Connection ...
# terminated"; the session is what counts here, its exit status is logged)
out=$(timeout 60 machinectl shell $U@.host /bin/sh -c 'echo "session=$XDG_SESSION_ID"; cat /proc/self/cgroup' 2>&1 </dev/null)
st=$?
diag "machinectl shell $U@.host: exit $st: $out"
if printf '%s\n' "$out" | grep -q 'session=[0-9a-z]' && printf '%s\n' "$out" | grep -q '^0::/user.slice/user-1000.slice/session-'; then
	ok "machinectl shell $U@.host: a login session (pam_systemd)"
else
	not_ok "machinectl shell $U@.host: a login session (pam_systemd)" "$out"
fi
# the user manager outlives that short session only with lingering; a long login does the same
loginctl enable-linger $U && linger=1
for _ in $(seq 150); do
	systemctl is-active --quiet user@$UID_.service && [ -S $RT/bus ] && break
	sleep 0.2
done
check "user@$UID_.service runs, with alice's session bus" systemctl is-active user@$UID_.service
check "alice's systemd answers (systemctl --user is-system-running)" as_alice systemctl --user is-system-running --wait
diag "loginctl: $(loginctl list-sessions --no-legend 2>&1)"

# ---- the scope ----
# From her login (machinectl shell): systemd-run --scope runs the command in
# place, so the shell stays until it ends (in the background here). Her
# systemd moves the process into the new scope.
timeout 900 machinectl shell $U@.host /usr/bin/systemd-run --user --scope --unit=$SCOPE -p Delegate=yes \
	/bin/sleep 800 </dev/null >/run/cgb-guest-scope.out 2>&1 &
scope_shell=$!
S=
for _ in $(seq 150); do
	S=$(as_alice systemctl --user show -P ControlGroup $SCOPE.scope 2>/dev/null)
	[ -n "$S" ] && [ -d "$CG$S" ] && [ -s "$CG$S/cgroup.procs" ] && break
	sleep 0.2
done
diag "machinectl shell ... systemd-run --user --scope: $(cat /run/cgb-guest-scope.out 2>&1)"
diag "scope cgroup: '$S'; controllers '$(cat "$CG$S/cgroup.controllers" 2>&1)'"
if [[ $S == /user.slice/user-$UID_.slice/user@$UID_.service/*/$SCOPE.scope ]]; then
	ok "systemd-run --user --scope -p Delegate=yes from her login: $S"
	UNIT=$SCOPE.scope
else
	not_ok "systemd-run --user --scope -p Delegate=yes from her login" "$S"
	# the same delegation as a service of hers, to test the rest
	SCOPE=cgb-guest-apps-svc
	as_alice systemd-run --user --quiet --unit=$SCOPE -p Delegate=yes /bin/sleep 800
	UNIT=$SCOPE.service
	for _ in $(seq 150); do
		S=$(as_alice systemctl --user show -P ControlGroup $UNIT 2>/dev/null)
		[ -n "$S" ] && [ -s "$CG$S/cgroup.procs" ] && break
		sleep 0.2
	done
	diag "instead: the service $UNIT, cgroup '$S'"
	[ -n "$S" ] && [ -d "$CG$S" ] || exit 1
fi
scope_pid=$(head -n 1 "$CG$S/cgroup.procs")
check "her systemd says Delegate=yes" test "$(as_alice systemctl --user show -P Delegate $UNIT)" = yes
diag "the parents' subtree_control: $(p=$S; while [ "$p" != / ] && [ -n "$p" ]; do p=${p%/*}; [ -z "$p" ] && p=/; printf '%s=[%s] ' "$p" "$(cat "$CG$p/cgroup.subtree_control")"; done)"
grep -qw cpu "$CG$S/cgroup.controllers" && ok "the scope has cpu (user@.service delegates it)" ||
	not_ok "the scope has cpu" "$(cat "$CG$S/cgroup.controllers")"

# the scope's process to a leaf: a cgroup with processes enables nothing for its children
check "alice moves the scope's process to a leaf" as_alice sh -c "mkdir '$CG$S/supervisor' && echo $scope_pid >'$CG$S/supervisor/cgroup.procs'"

# ---- cgbypassd is told: a run-time delegation by root ----
check "root delegates the scope to alice (cgbypassctl delegate, lifetime cgroup)" \
	cgbypassctl --no-ask-password delegate "$S" $U cpu
diag "$(cgbypassctl delegations 2>&1)"

# ---- inside: nested app groups, cpu bypassed at the intermediate levels, one app with its own ----
for d in apps apps/web apps/web/frontend apps/web/backend apps/batch; do
	check "alice makes $d" as_alice mkdir "$CG$S/$d"
done
check "alice enables cpu for the scope's children" as_alice cgbypassctl --no-ask-password set "$S" +cpu
check "alice bypasses cpu below apps" as_alice cgbypassctl --no-ask-password set "$S/apps" '#cpu'
check "alice bypasses cpu below apps/web" as_alice cgbypassctl --no-ask-password set "$S/apps/web" '#cpu'
check "alice re-enables cpu for apps/web/frontend" as_alice cgbypassctl --no-ask-password enable "$S/apps/web/frontend" cpu
check "alice sets frontend's cpu.weight" as_alice sh -c "echo 300 >'$CG$S/apps/web/frontend/cpu.weight'"
check "... which holds" test "$(cat "$CG$S/apps/web/frontend/cpu.weight")" = 300
tree=$(cgbypassctl tree cpu --full 2>&1)
diag "$(printf '%s\n' "$tree" | grep -F "$S")"
# one effective node: apps, apps/web and the bypassed apps below; frontend its own
node=$(printf '%s\n' "$tree" | grep -F "$S/apps/web/backend")
case "$node" in
*"$S/apps, "*"$S/apps/batch"*) case "$node" in *frontend*) not_ok "frontend has its own cpu node" "$node" ;;
	*) ok "backend and batch share apps' cpu node, frontend has its own" ;; esac ;;
*) not_ok "backend and batch share apps' cpu node" "$tree" ;;
esac
# native: the kernel gives them no cpu files (emulated: a stock kernel keeps cpu
# enabled at apps and apps/web on the way to frontend, pass-through levels whose
# children have the files; docs/backends.md)
if [ "$backend" = native ]; then
	[ ! -e "$CG$S/apps/web/backend/cpu.weight" ] && [ ! -e "$CG$S/apps/batch/cpu.weight" ] &&
		ok "backend and batch have no cpu.weight of their own" || not_ok "the bypassed ones have no cpu.weight"
fi
state() {
	printf '%s|%s|%s|%s\n' "$(cat "$CG$S/cgroup.subtree_control")" "$(cat "$CG$S/apps/cgroup.subtree_control")" \
		"$(cat "$CG$S/apps/web/cgroup.subtree_control")" "$(cat "$CG$S/apps/web/frontend/cpu.weight" 2>&1)"
}
before=$(state)
diag "state: $before"

# ---- her systemd keeps working and undoes nothing ----
check "systemctl --user status works" as_alice systemctl --user status --no-pager
check "systemctl --user daemon-reload" as_alice systemctl --user daemon-reload
check "she starts and stops another unit of hers" as_alice sh -c 'systemd-run --user --quiet --unit=cgb-guest-other /bin/true && sleep 1'
check "system-wide daemon-reload" systemctl daemon-reload
after=$(state)
[ "$after" = "$before" ] && ok "nothing undone after the reloads and the unit ($after)" ||
	not_ok "nothing undone after the reloads" "before $before, after $after"
check "the scope still runs" as_alice systemctl --user is-active $UNIT
plan=$(cgbypassd --plan 2>&1)
[ -z "$plan" ] && ok "cgbypassd --plan is empty" || not_ok "cgbypassd --plan is empty" "$plan"

# ---- the end: the scope stops, its cgroup goes, the delegation ends ----
check "alice stops the scope" as_alice systemctl --user stop $UNIT
for _ in $(seq 50); do [ -d "$CG$S" ] || break; sleep 0.2; done
[ ! -d "$CG$S" ] && ok "her systemd removed the scope's cgroup, with alice's groups in it" ||
	not_ok "the scope's cgroup is gone" "$(find "$CG$S" -maxdepth 3 -type d 2>&1 | head)"
cgbypassctl show / >/dev/null 2>&1
dl=$(cgbypassctl delegations 2>&1)
printf '%s\n' "$dl" | grep -qF "$S" && not_ok "the delegation ended with the scope" "$dl" ||
	ok "the delegation ended with the scope (lifetime cgroup)"

echo "1..$n"
[ $failed -eq 0 ]
