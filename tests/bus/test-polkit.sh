#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2012,SC2181,SC2154 # SC2154: users come from bus_env_add_user
#
# Delegation and polkit with real parts: a private system-like bus, the real
# polkitd with the project's actions and test rules, unprivileged test
# users, cgbypassd on the sim backend. The owner re-enables a controller in
# its own subtree and in a child it made; another owner's subtree, an
# undelegated controller, a cgroup outside every delegation are refused;
# polkit's verdicts (rules, details, interactive flag), polkitd stopped, a
# client that disconnects during a pending check, restart and reload. TAP.
set -uo pipefail

ctl=${4:-}      # cgbypassctl, when the build has it
# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
bus_env_require_polkitd
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }
bus_env_install_policy || { echo "Bail out! cannot install the polkit actions"; exit 1; }
for u in alice bob carol mallory; do
	bus_env_add_user "$u" || { echo "Bail out! useradd failed"; exit 1; }
done
{
	bus_env_add_rules main "// cgbypassd's bus tests
var manyBlocked = false;
polkit.addRule(function(action, subject) {
	if (action.id.indexOf('org.cgbypass1.') != 0)
		return polkit.Result.NOT_HANDLED;
	var cgroup = action.lookup('cgroup');
	if (action.id == 'org.cgbypass1.manage' && subject.user == '$carol')
		return polkit.Result.YES;
	if (action.id == 'org.cgbypass1.manage-delegated' && cgroup == '/srv/alice/denied')
		return polkit.Result.NO;
	if (action.id == 'org.cgbypass1.manage-delegated' && cgroup == '/srv/alice/details')
		return action.lookup('controller') == 'io' && action.lookup('change') == '+io' &&
			action.lookup('file') == 'cgroup.controllers' ? polkit.Result.YES : polkit.Result.NO;
	if (action.id == 'org.cgbypass1.manage-delegated' && cgroup == '/srv/alice/many') {
		// the first check blocks polkitd for a while; the rest queue behind it
		if (!manyBlocked) {
			manyBlocked = true;
			polkit.spawn(['/bin/sleep', '4']);
		}
		return polkit.Result.YES;
	}
	if (action.id == 'org.cgbypass1.manage-delegated' && cgroup && cgroup.indexOf('/srv/alice/slow') == 0) {
		polkit.spawn(['/bin/sleep', '3']);
		return polkit.Result.YES;
	}
	return polkit.Result.NOT_HANDLED;
});"
} || { echo "Bail out! cannot install the polkit rules"; exit 1; }
bus_env_start_polkit || { echo "Bail out! polkitd did not start"; exit 1; }

D=$BUS_ENV_DIR
root=$D/root
state=$D/state
bus_env_config sim-srv.conf owners.conf alice="$alice" bob="$bob" || { echo "Bail out! the configuration"; exit 1; }
# a third owner, for the fairness of the polkit limits
printf '\n[delegate]\npath = /srv/carol\nuser = %s\ncontrollers = cpu\n' "$carol" >>"$D/c.conf"
start() { bus_env_start_cgbypassd "$root"; }
# as USER ARGS...: bus-client call as USER; $out, $st
as() { bus_env_client_as "$1" call "${@:2}"; }
# expect USER NAME DESCRIPTION ARGS...: the call fails with org.cgbypass1.Error.NAME
expect() {
	as "$1" "${@:4}"
	bus_env_expect_error "$2" "$3"
}
key() { bus_env_key "$@"; }
snap() { bus_env_snap "$root/$1"; }
owner_of() {
	stat -c %U "$1"
}

start || { echo "Bail out! cgbypassd did not start"; exit 1; }
"$client" watch 600 >"$D/signals" 2>&1 &
watch_pid=$!
bus_env_wait_for 10 grep -q '^ready$' "$D/signals" || not_ok "the signal watcher did not start"

# the delegation: directory, cgroup.procs and cgroup.threads are the owner's; the control files root's
[ "$(owner_of "$root/srv/alice")" = "$alice" ] && [ "$(owner_of "$root/srv/alice/cgroup.procs")" = "$alice" ] &&
	[ "$(owner_of "$root/srv/alice/cgroup.threads")" = "$alice" ] &&
	[ "$(owner_of "$root/srv/alice/cgroup.subtree_control")" = root ] &&
	[ "$(owner_of "$root/srv/alice/cgroup.controllers")" = root ] &&
	ok "the delegated cgroup, its cgroup.procs and cgroup.threads belong to the owner; control files to root" ||
	not_ok "ownership" "$(ls -la "$root/srv/alice")"
bus_env_as "$alice" sh -c "echo +cpu > '$root/srv/alice/cgroup.subtree_control'" 2>/dev/null &&
	not_ok "the owner could write its delegation root's cgroup.subtree_control" ||
	ok "the owner cannot write its delegation root's cgroup.subtree_control behind the daemon"

# the owner re-enables a bypassed controller in its own subtree
as "$alice" EnableController /srv/alice cpu
[ $st -eq 0 ] && [ "$(cat "$root/srv/alice/cgroup.controllers")" = "cpu #io memory" ] &&
	[ -e "$root/srv/alice/cpu.weight" ] && ok "the owner re-enables cpu in its delegation: allowed, the sim shows it" ||
	not_ok "owner EnableController" "$out"
bus_env_wait_for 5 grep -qx /srv/alice "$D/signals" && ok "CgroupChanged /srv/alice seen" ||
	not_ok "no CgroupChanged for /srv/alice" "$(cat "$D/signals")"
grep -q "EnableController /srv/alice cpu by uid=${alice_uid} pid=[0-9]*: applied: 1 operation(s); owner of the delegation, polkit org.cgbypass1.manage-delegated" \
	"$BUS_ENV_DAEMON_LOG" && ok "logged with uid, pid, cgroup, change and decision" ||
	not_ok "log line" "$(tail -3 "$BUS_ENV_DAEMON_LOG")"
sim_before=$(cat "$state/sim.state" "$state/sim.state.journal" 2>/dev/null)
as "$alice" SetSubtreeControl /srv/alice '#cpu #io'
[ $st -eq 0 ] && [ "$(cat "$root/srv/alice/cgroup.subtree_control")" = "#cpu #io" ] &&
	ok "the owner bypasses cpu and io for its children" || not_ok "owner SetSubtreeControl" "$out"
# the sim's own state is saved after the reply, when the daemon is idle
bus_env_wait_for 5 eval '[ "$(cat "$state/sim.state" "$state/sim.state.journal" 2>/dev/null)" != "$sim_before" ]' &&
	ok "... and the simulated hierarchy's state is saved shortly after" ||
	not_ok "sim.state not saved after a request"

# ... and in a child it made itself (the daemon learns it before planning)
bus_env_as "$alice" mkdir "$root/srv/alice/job"
as "$alice" EnableController /srv/alice/job cpu
[ $st -eq 0 ] && [ "$(cat "$root/srv/alice/job/cgroup.controllers" 2>&1)" = "cpu #io" ] &&
	[ "$(owner_of "$root/srv/alice/job/cgroup.subtree_control")" = "$alice" ] &&
	ok "the owner re-enables cpu in a child it made; the child is the owner's, as in cgroupfs" ||
	not_ok "owner child" "$out $(ls -la "$root/srv/alice/job" 2>&1 | head -5)"
# several levels at once: every one on the way is learnt, and each is announced
bus_env_as "$alice" mkdir -p "$root/srv/alice/deep/a/b"
as "$alice" GetCgroup /srv/alice/deep/a/b
[ $st -eq 0 ] && "$client" call GetCgroup /srv/alice/deep/a >/dev/null &&
	bus_env_wait_for 5 grep -qx /srv/alice/deep/a/b "$D/signals" && grep -qx /srv/alice/deep "$D/signals" &&
	grep -qx /srv/alice/deep/a "$D/signals" &&
	ok "a path the owner made at once: every level learnt, CgroupChanged for each" ||
	not_ok "mkdir -p" "$out $(grep deep "$D/signals")"
# ... and removed again: the daemon forgets them when asked, and says so
bus_env_as "$alice" rm -rf "$root/srv/alice/deep"
as "$alice" GetCgroup /srv/alice/deep/a
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.NoSuchCgroup: "* ]] && kill -0 "$BUS_ENV_DAEMON_PID" &&
	as "$alice" GetCgroup /srv/alice/deep && [[ $out == "org.cgbypass1.Error.NoSuchCgroup: "* ]] &&
	ok "a path the owner removed: forgotten, NoSuchCgroup, the daemon lives on" ||
	not_ok "rm -r of an adopted path" "$out $(tail -5 "$BUS_ENV_DAEMON_LOG")"

# the same through cgbypassctl, as owners will use it
if [ -n "$ctl" ]; then
	bus_env_as "$alice" mkdir "$root/srv/alice/ctl"
	out=$(bus_env_as "$alice" "$ctl" --no-ask-password enable /srv/alice/ctl cpu 2>&1)
	[ $? -eq 0 ] && [ "$(cat "$root/srv/alice/ctl/cgroup.controllers")" = "cpu #io" ] &&
		ok "cgbypassctl enable by the owner" || not_ok "cgbypassctl enable" "$out"
	out=$(bus_env_as "$alice" "$ctl" --no-ask-password bypass /srv/bob cpu 2>&1)
	[ $? -eq 1 ] && [[ $out == "cgbypassctl: /srv/bob is delegated to uid ${bob_uid}, not to you"*"(org.cgbypass1.Error.NotDelegated)" ]] &&
		[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && ok "cgbypassctl prints a refusal as one line with its name" ||
		not_ok "cgbypassctl refusal" "$out"
else
	ok "# SKIP cgbypassctl is not part of this build"
fi

# refusals
bob_before=$(snap srv/bob)
expect "$alice" NotDelegated "the owner in another owner's subtree" EnableController /srv/bob cpu
expect "$alice" NotDelegated "the owner in another owner's subtree, below its root" SetSubtreeControl /srv/bob/x +cpu
[ "$bob_before" = "$(snap srv/bob)" ] && ok "... and the other subtree is unchanged" || not_ok "bob's subtree changed"
expect "$alice" ControllerNotDelegated "an undelegated controller" EnableController /srv/alice memory
[[ $out == *"covers cpu io, not memory"* ]] && ok "... and the message names what is delegated" || not_ok "message" "$out"
expect "$mallory" NotDelegated "outside any delegation without admin rights" SetSubtreeControl /A +pids
expect "$alice" NotDelegated "the owner outside its delegation" SetSubtreeControl /srv '+cpu'
expect "$mallory" NotManaged "a cgroup nobody manages" EnableController /elsewhere cpu
[ "$(cat "$root/A/cgroup.subtree_control")" = "" ] && ok "... and nothing changed" || not_ok "/A changed"

# polkit decides: an administrator by a rule, a rule saying no, the details it gets
as "$carol" SetSubtreeControl /A +pids
[ $st -eq 0 ] && [ "$(cat "$root/A/cgroup.subtree_control")" = pids ] &&
	grep -q "SetSubtreeControl /A +pids by uid=${carol_uid} .*applied.*administrator, polkit org.cgbypass1.manage" \
		"$BUS_ENV_DAEMON_LOG" && ok "a user polkit authorizes for org.cgbypass1.manage changes a managed cgroup" ||
	not_ok "admin by polkit" "$out"
bus_env_as "$alice" mkdir "$root/srv/alice/denied" "$root/srv/alice/details"
expect "$alice" AccessDenied "the owner, where a polkit rule says no" EnableController /srv/alice/denied cpu
as "$alice" EnableController /srv/alice/details io
[ $st -eq 0 ] && ok "polkit gets the details cgroup, controller, change and file (a rule checks them)" ||
	not_ok "details" "$out"
expect "$alice" AccessDenied "... and refuses other details" EnableController /srv/alice/details cpu
as "$mallory" SetSubtreeControl /A +cpu
[[ $out == *"no authentication agent did"* ]] && ok "an interactive call: polkit wanted authentication, no agent" ||
	not_ok "interactive" "$out"
out=$(bus_env_as "$mallory" "$client" --no-interactive call SetSubtreeControl /A +cpu 2>&1)
[[ $out == "org.cgbypass1.Error.NotDelegated: "*"did not allow interactive authorization"* ]] &&
	ok "a non-interactive call: no authentication asked for" || not_ok "non-interactive" "$out"

# a pending check: the daemon serves others meanwhile; the answer comes when polkit's does
# (polkitd stopped holds the check; no clock involved)
bus_env_as "$alice" mkdir "$root/srv/alice/slow" "$root/srv/alice/slow2"
kill -STOP "$BUS_ENV_POLKIT_PID"
(bus_env_as "$alice" "$client" call EnableController /srv/alice/slow cpu >"$D/slow.out" 2>&1) &
slow_pid=$!
sleep 1 # the call reaches the daemon, which asks polkit (held); if not yet, it waits all the same
others=$("$client" call EnableController /srv/bob cpu 2>&1 && "$client" call GetCgroup /srv/alice 2>&1)
others_st=$?
kill -0 "$slow_pid" 2>/dev/null
pending=$?
kill -CONT "$BUS_ENV_POLKIT_PID"
wait "$slow_pid"
[ $others_st -eq 0 ] && [ $pending -eq 0 ] && [ "$(head -1 "$D/slow.out")" = ok ] &&
	[ "$(cat "$root/srv/alice/slow/cgroup.controllers")" = "cpu #io" ] &&
	ok "while a check is pending other callers are served; the pending one succeeds after polkit" ||
	not_ok "pending check" "others: $others_st $others; pending: $pending; $(cat "$D/slow.out")"

# the client changes as recorded: the snapshot, then the journal's records (change-journal.h)
recorded_changes() {
	cat "$state/client-changes" "$state/client-changes.journal" 2>/dev/null | sed -E 's/^[0-9]+ [0-9a-f]{16} //'
}
# a client that disconnects while its check is pending: nothing applied, nothing kept
out=$(bus_env_as "$alice" "$client" abandon 500 EnableController /srv/alice/slow2 cpu 2>&1)
sleep 4
[ "$out" = sent ] && [ "$(cat "$root/srv/alice/slow2/cgroup.controllers")" = "#cpu #io" ] &&
	! grep -q '^change /srv/alice/slow2 ' <(recorded_changes) &&
	grep -q "disconnected while polkit was asked" "$BUS_ENV_DAEMON_LOG" && [ "$(key /srv/alice/slow2 controllers)" = "#cpu #io" ] &&
	ok "a client that disconnects during a pending check: dropped, nothing applied, the daemon serves on" ||
	not_ok "disconnect" "$out $(cat "$root/srv/alice/slow2/cgroup.controllers") $(grep slow2 "$BUS_ENV_DAEMON_LOG")"

# limits: at most 32 checks pending per caller uid; the rest are told Busy at once.
# polkitd is held (SIGSTOP) while they queue, so the count is exact on any machine.
# many CALLER CGROUP N TAG: N calls at once from CALLER, in the background (pids in many_pids)
many_pids=()
many() {
	local u=$1 c=$2 n=$3 tag=$4 i
	for i in $(seq "$n"); do
		(bus_env_as "$u" "$client" --no-interactive call EnableController "$c" cpu >"$D/$tag-$i.out" 2>&1) &
		many_pids+=($!)
	done
}
many_wait() {
	local p
	for p in "${many_pids[@]}" "$@"; do wait "$p"; done
	many_pids=()
}
count() { # count TAG PATTERN: outputs of TAG matching the line PATTERN
	grep -lx "$2" "$D/$1"-*.out 2>/dev/null | wc -l
}
bus_env_as "$alice" mkdir "$root/srv/alice/many"
kill -STOP "$BUS_ENV_POLKIT_PID"
many "$alice" /srv/alice/many 70 many
bus_env_wait_for 60 eval '[ "$(count many "org.cgbypass1.Error.Busy: .*")" -ge 38 ]'
kill -CONT "$BUS_ENV_POLKIT_PID"
many_wait
busy=$(count many 'org.cgbypass1.Error.Busy: .*')
fine=$(count many ok)
[ "$busy" -eq 38 ] && [ "$fine" -eq 32 ] && [ "$(key /srv/alice/many controllers)" = "cpu #io" ] &&
	ok "70 checks at once from one uid: 32 pending and served, 38 told Busy" ||
	not_ok "limits: $busy busy, $fine ok" "$(cat "$D"/many-*.out | sort | uniq -c)"

# fairness: two callers with checks pending past their limits (70 each: above the bus's 128
# pending replies of cgbypassd's connection, were they all sent) do not keep a third owner's
# request in its own delegation from being asked about and served
bus_env_as "$bob" mkdir "$root/srv/bob/fair"
kill -STOP "$BUS_ENV_POLKIT_PID"
many "$alice" /srv/alice/many 70 fa
many "$bob" /srv/bob/fair 70 fb
bus_env_wait_for 60 eval '[ "$(count fa "org.cgbypass1.Error.Busy: .*")" -ge 38 ] && [ "$(count fb "org.cgbypass1.Error.Busy: .*")" -ge 38 ]'
(bus_env_as "$carol" "$client" --no-interactive call BypassController /srv/carol cpu >"$D/carol.out" 2>&1) &
carol_pid=$!
sleep 1 # carol's call reaches the daemon, which asks polkit (held)
kill -0 "$carol_pid" 2>/dev/null
carol_pending=$?
kill -CONT "$BUS_ENV_POLKIT_PID"
many_wait "$carol_pid"
[ "$carol_pending" -eq 0 ] && [ "$(cat "$D/carol.out")" = ok ] &&
	ok "two callers past their limits: a third owner's request waits for polkit like any, then is served" ||
	not_ok "fairness: pending $carol_pending" "$(cat "$D/carol.out")"
# the 32 held checks of each end as polkit's answer makes them (bob's cgroup is not bypassed: refused),
# or, on a machine so slow that holding polkitd took past the daemon's 25 s, denied for the timeout
[ "$(count fa 'org.cgbypass1.Error.Busy: .*')" -eq 38 ] && [ "$(count fb 'org.cgbypass1.Error.Busy: .*')" -eq 38 ] &&
	[ "$(grep -L '^org.cgbypass1.Error.Busy: ' "$D"/fa-*.out | wc -l)" -eq 32 ] &&
	[ "$(grep -L '^org.cgbypass1.Error.Busy: ' "$D"/fb-*.out | wc -l)" -eq 32 ] &&
	ok "... and the two each had 32 checks asked and were told Busy 38 times" ||
	not_ok "fairness counts" "$(cat "$D"/fa-*.out "$D"/fb-*.out | sort | uniq -c)"

# polkitd stopped: no, for everyone but root
bus_env_stop_polkit
expect "$alice" AccessDenied "polkitd stopped: the owner is denied" BypassController /srv/alice cpu
[[ $out == *"polkit could not decide"* ]] && ok "... saying polkit could not decide" || not_ok "polkit gone message" "$out"
[ "$(cat "$root/srv/alice/cgroup.controllers")" = "cpu #io memory" ] && ok "... and nothing changed" ||
	not_ok "changed without polkit"
"$client" call SetSubtreeControl /srv/bob +cpu >/dev/null && ok "polkitd stopped: root needs no polkit" ||
	not_ok "root without polkit"
bus_env_start_polkit || not_ok "polkitd did not start again"
as "$alice" BypassController /srv/alice/job cpu
[ $st -eq 0 ] && ok "polkitd back: the owner is served again" || not_ok "polkit back" "$out"

# polkitd hangs (stopped, so its name stays on the bus): the daemon's own
# 25 s wait ends in a denial, and everyone else is served meanwhile
before=$(snap srv/alice)
kill -STOP "$BUS_ENV_POLKIT_PID"
bus_env_as "$alice" "$client" --no-interactive call EnableController /srv/alice/job cpu >"$D/hang.out" 2>&1 &
hang=$!
if [ -n "$ctl" ]; then
	bus_env_as "$alice" "$ctl" --no-ask-password enable /srv/alice/job io >"$D/hang-ctl.out" 2>&1 &
	hang_ctl=$!
fi
sleep 1 # both calls reach the daemon and wait for polkit
as "$bob" GetCgroup /srv/alice
[ $st -eq 0 ] && kill -0 "$hang" 2>/dev/null && ok "polkitd hangs: other callers are served while a check waits" ||
	not_ok "served during a pending check" "$out"
"$client" call SetSubtreeControl /srv/bob -cpu >/dev/null && kill -0 "$hang" 2>/dev/null &&
	ok "polkitd hangs: root changes things meanwhile" || not_ok "root during a pending check"
wait "$hang"
st=$?
out=$(cat "$D/hang.out")
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.AccessDenied: polkit could not decide (org.freedesktop.DBus.Error.NoReply"* ]] &&
	ok "polkitd hangs: the owner is denied when the daemon stops waiting" || not_ok "polkit timeout" "$out"
if [ -n "$ctl" ]; then
	wait "$hang_ctl"
	st=$?
	out=$(cat "$D/hang-ctl.out")
	# cgbypassctl outwaits the daemon, so it reports the daemon's answer, not its own timeout
	[ $st -eq 1 ] && [[ $out == "cgbypassctl: polkit could not decide"*"(org.cgbypass1.Error.AccessDenied)" ]] &&
		ok "... and cgbypassctl prints the daemon's answer" || not_ok "cgbypassctl during a polkit timeout" "$out"
fi
kill -CONT "$BUS_ENV_POLKIT_PID"
[ "$(snap srv/alice)" = "$before" ] && ok "... and nothing changed" || not_ok "changed after a polkit timeout"
"$client" call SetSubtreeControl /srv/bob +cpu >/dev/null || not_ok "root could not undo its change"
as "$alice" EnableController /srv/alice/job cpu
[ $st -eq 0 ] && as "$alice" BypassController /srv/alice/job cpu
[ $st -eq 0 ] && ok "polkitd resumed: its late answers are dropped, new checks served" || not_ok "after the hang" "$out"
kill -0 "$BUS_ENV_DAEMON_PID" && ok "the daemon lives on" || not_ok "the daemon died after a polkit timeout"

# a restart keeps what the owners set
bus_env_stop_daemon
[ "$BUS_ENV_DAEMON_STATUS" = 0 ] && ok "SIGTERM with checks done: exit 0" || not_ok "exit status $BUS_ENV_DAEMON_STATUS"
grep -q "change /srv/alice sc=#cpu,#io ctl=+cpu admin= owner=$alice_uid" <(recorded_changes) &&
	ok "the owner's changes are recorded with the owner" || not_ok "client-changes" "$(cat <(recorded_changes))"
start || not_ok "restart"
[ "$(key /srv/alice controllers)" = "cpu #io memory" ] && [ "$(key /srv/alice subtree_control)" = "#cpu #io" ] &&
	[ "$(key /srv/alice/job controllers)" = "#cpu #io" ] && [ "$(key /srv/alice/slow controllers)" = "cpu #io" ] &&
	ok "a restart keeps the owners' changes" || not_ok "restart state" "$("$client" call GetCgroup /srv/alice)"
# the applied configuration and the client changes together are what was applied
grep -q "Drift" "$BUS_ENV_DAEMON_LOG" && not_ok "a restart over client changes reports drift" "$(grep Drift "$BUS_ENV_DAEMON_LOG")" ||
	ok "... and reports no drift for them"

# a reload that takes io from alice and the delegation from bob
sed -i -e 's/^controllers = cpu io$/controllers = cpu/' "$D/c.conf"
python3 - "$D/c.conf" <<'PY'
import sys
p = sys.argv[1]
text = open(p).read()
start = text.index('[delegate]\npath = /srv/bob')
end = text.index('[cgroup]\npath = /A')
open(p, 'w').write(text[:start] + text[end:])
PY
"$client" call Reload >/dev/null && [ "$(owner_of "$root/srv/bob")" = root ] &&
	[ "$(owner_of "$root/srv/bob/cgroup.procs")" = root ] && grep -q "Took /srv/bob back" "$BUS_ENV_DAEMON_LOG" &&
	ok "a reload without bob's delegation takes /srv/bob back" || not_ok "take back" "$(ls -la "$root/srv/bob" | head -3)"
grep -q "Dropping the client change of /srv/alice/details for io" "$BUS_ENV_DAEMON_LOG" &&
	! grep -q "^change /srv/alice/details " <(recorded_changes) &&
	ok "... and drops alice's io change, no longer delegated" || not_ok "drop io" "$(cat <(recorded_changes))"
expect "$bob" NotManaged "bob, without his delegation" EnableController /srv/bob cpu
expect "$alice" ControllerNotDelegated "alice, io no longer delegated" BypassController /srv/alice/details io
as "$bob" Reload
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.AccessDenied: "* ]] && ok "Reload by an unprivileged user: AccessDenied" ||
	not_ok "unprivileged reload" "$out"

kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
bus_env_stop_clean "clean exit, no sanitizer report"

bus_env_done
