#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2016,SC2119,SC2120,SC2181
#
# cgbypassd on a private system-like bus, sim backend, callers root (no
# polkit needed): the interface as documented, the error names, GetCgroup,
# GetEffectiveTree, ListDelegations, CgroupChanged, Reload (a broken
# configuration keeps the running state), SIGHUP, restart keeps client
# changes, SIGTERM, a second instance, --bus session, log priorities. TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }

D=$BUS_ENV_DIR
root=$D/root
state=$D/state
nobody_uid=$(id -u nobody)

bus_env_config doc-srv.conf || { echo "Bail out! the configuration"; exit 1; }
start() { bus_env_start_cgbypassd "$root" "$@"; }

# c ARGS...: bus-client call, output in $out, status in $st
c() {
	out=$("$client" call "$@" 2>&1)
	st=$?
}
# expect_error NAME DESCRIPTION ARGS...
expect_error() {
	c "${@:3}"
	bus_env_expect_error "$1" "$2"
}
# key CGROUP KEY: one entry of GetCgroup
key() { bus_env_key "$@"; }
# the sim's files, contents and modes: to show that nothing changed
snap() { bus_env_snap "$root"; }
watch_start() {
	: >"$D/signals"
	"$client" watch 600 >"$D/signals" 2>&1 &
	watch_pid=$!
	bus_env_wait_for 10 grep -q '^ready$' "$D/signals"
}
watch_stop() {
	kill "$watch_pid" 2>/dev/null
	wait "$watch_pid" 2>/dev/null
}
# seen PATH: a CgroupChanged for PATH arrived (waits up to 5 s)
seen() {
	bus_env_wait_for 5 grep -qx -- "$1" "$D/signals"
}

start || { echo "Bail out! cgbypassd did not start"; exit 1; }
ok "cgbypassd applies the configuration and owns org.cgbypass1 on the private bus"

# the interface, as documented
busctl --system call org.cgbypass1 /org/cgbypass1 org.freedesktop.DBus.Introspectable Introspect --json=short |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0])' >"$D/introspect.xml"
out=$(python3 "$src/tests/bus/introspect-compare.py" "$src/dbus/org.cgbypass1.Manager.xml" org.cgbypass1.Manager \
	<"$D/introspect.xml" 2>&1) && ok "introspection equals dbus/org.cgbypass1.Manager.xml" ||
	not_ok "introspection differs from dbus/org.cgbypass1.Manager.xml" "$out"

version=$("$daemon" --version | cut -d' ' -f2)
out=$(busctl --system get-property org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager Version Backend CgroupRoot 2>&1)
[ "$out" = "s \"$version\"
s \"sim\"
s \"$root\"" ] && ok "properties Version, Backend, CgroupRoot" || not_ok "properties" "$out"
out=$(busctl --system set-property org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager Backend s native 2>&1) &&
	not_ok "a const property can be set" "$out" || ok "properties are read-only"

# GetEffectiveTree: the seeds' documentation example
c GetEffectiveTree cpu
expected='  /A|/A/B|/A/B/C|/A/B/C/D
    /A/B/C/D/E|/A/B/C/D/E/F
    /A/B/G'
[ $st -eq 0 ] && [[ $out == *"$expected"* ]] && [[ $out == *$'\n/\n'* ]] &&
	ok "GetEffectiveTree cpu: the documentation example's lines" || not_ok "GetEffectiveTree cpu" "$out"
expect_error UnknownController "GetEffectiveTree of an unknown controller" GetEffectiveTree nosuch
expect_error UnknownController "GetEffectiveTree of a v1-only controller" GetEffectiveTree cpuacct

# GetCgroup
[ "$(key /A/B/G controllers)" = "cpu" ] && [ "$(key /A/B controllers)" = "#cpu" ] &&
	[ "$(key /A subtree_control)" = "#cpu" ] && [ "$(key /A/B/C/D subtree_control)" = "cpu" ] &&
	ok "GetCgroup: controllers and subtree_control, bypassed ones with '#'" ||
	not_ok "GetCgroup controllers" "$("$client" call GetCgroup /A/B/G)"
[ "$(key /A type)" = domain ] && [ "$(key /A delegated_to)" = 4294967295 ] &&
	[ "$(key /srv/owner delegated_to)" = "$nobody_uid" ] && [ "$(key /srv/owner delegation)" = /srv/owner ] &&
	[ "$(key /srv/owner delegated_controllers)" = "cpu io" ] && [ "$(key /A managed)" = true ] &&
	[ "$(key /A/B/C/D/E managed)" = false ] && [ "$(key /A/B/C/D/E effective)" = "cpu:/A/B/C/D/E" ] &&
	[ "$(key /A/B/C effective)" = "cpu:/A" ] && [ "$(key /A/B children)" = "/A/B/C /A/B/G" ] &&
	ok "GetCgroup: type, delegated_to (uid or 0xffffffff), delegation, managed, effective, children" ||
	not_ok "GetCgroup fields" "$("$client" call GetCgroup /srv/owner; "$client" call GetCgroup /A/B/C)"
expect_error NoSuchCgroup "GetCgroup of a missing cgroup" GetCgroup /nowhere
expect_error InvalidPath "GetCgroup of a relative path" GetCgroup A/B

# ListDelegations
c ListDelegations
[ $st -eq 0 ] && [ "$out" = "ok
/srv/owner
$nobody_uid
cpu
io" ] && ok "ListDelegations: cgroup, owner uid, controllers" || not_ok "ListDelegations" "$out"

# the client changes as recorded: the snapshot, then the journal's records (change-journal.h)
recorded_changes() {
	cat "$state/client-changes" "$state/client-changes.journal" 2>/dev/null | sed -E 's/^[0-9]+ [0-9a-f]{16} //'
}
# changes by root: the sim's files show them, CgroupChanged goes out, the state is recorded
watch_start || not_ok "the signal watcher did not start"
c EnableController /srv/owner cpu
[ $st -eq 0 ] && [ "$(cat "$root/srv/owner/cgroup.controllers")" = "cpu #io memory" ] &&
	[ -e "$root/srv/owner/cpu.weight" ] && ok "EnableController /srv/owner cpu: the sim's files show it" ||
	not_ok "EnableController" "$out $(cat "$root/srv/owner/cgroup.controllers")"
seen /srv/owner && ok "CgroupChanged /srv/owner seen" || not_ok "no CgroupChanged for /srv/owner" "$(cat "$D/signals")"
grep -qx 'change /srv/owner sc= ctl=+cpu admin=cpu owner=-' <(recorded_changes) &&
	ok "the client change is recorded in the state directory" || not_ok "client-changes" "$(cat <(recorded_changes))"
c SetSubtreeControl /srv/owner '#cpu #io'
[ $st -eq 0 ] && [ "$(cat "$root/srv/owner/cgroup.subtree_control")" = "#cpu #io" ] &&
	ok "SetSubtreeControl /srv/owner '#cpu #io'" || not_ok "SetSubtreeControl" "$out"

expect_error NotBypassedByParent "EnableController where the parent enables, not bypasses" EnableController /A cpu
[[ $out == *"/ does not bypass cpu for its children; ask its owner, or change /'s subtree-control in the configuration"* ]] &&
	ok "... and the message says what to do" || not_ok "NotBypassedByParent message" "$out"
expect_error InUseBelow "disabling cpu under a re-enabled child" SetSubtreeControl /A/B -cpu
# the kernel refuses a change of a cgroup's own css while its subtree_control names the
# controller; the planner clears the subtree_control around the change and restores it
c SetSubtreeControl /A/B/G +cpu
c BypassController /A/B/G cpu
[ $st -eq 0 ] && [ "$(key /A/B/G controllers)" = "#cpu" ] && [ "$(key /A/B/G subtree_control)" = cpu ] &&
	ok "BypassController under its own +cpu: planned around, subtree_control kept" || not_ok "planned bypass" "$out"
c EnableController /A/B/G cpu
expect_error NotAvailable "giving the children a controller the parent does not offer" SetSubtreeControl /A/B/G +io
expect_error NotManaged "a cgroup the configuration neither manages nor delegates" EnableController /A/B/C/D/E cpu
expect_error NoSuchCgroup "a missing cgroup inside the delegation" EnableController /srv/owner/none cpu
expect_error RootCgroup "EnableController on the root" EnableController / cpu
expect_error UnknownController "an unknown controller" EnableController /srv/owner nosuch
expect_error InvalidArgument "an empty change" SetSubtreeControl /srv/owner ''
[ "$(key /A/B subtree_control)" = "#cpu" ] && [ "$(key /A/B/G controllers)" = cpu ] &&
	ok "the refused requests changed nothing" || not_ok "state after refusals" "$("$client" call GetCgroup /A/B)"

# a cgroup made behind the daemon's back inside a delegation: adopted, and signalled
mkdir "$root/srv/owner/made"
[ "$(key /srv/owner/made controllers)" = "#cpu #io" ] && ok "a directory made in a delegation becomes a cgroup (sim)" ||
	not_ok "adoption" "$("$client" call GetCgroup /srv/owner/made)"
seen /srv/owner/made && ok "CgroupChanged for the cgroup found by a refresh" || not_ok "no CgroupChanged /srv/owner/made"

# Reload with a broken configuration: refused with every FILE:LINE, the running state stays
before=$(snap)
cp "$D/c.conf" "$D/good.conf"
cat >>"$D/c.conf" <<'CONF'
[cgroup]
path = relative/path
subtree-control = +nosuch
[bogus
CONF
c Reload
lines=$(printf '%s\n' "$out" | grep -c "^$D/c.conf:[0-9]*: ")
[ $st -eq 1 ] && [[ $out == "org.cgbypass1.Error.ConfigInvalid: "* ]] && [ "$lines" -ge 3 ] &&
	ok "Reload of a broken configuration: ConfigInvalid with $lines FILE:LINE problems" || not_ok "broken Reload" "$out"
[ "$before" = "$(snap)" ] && [ "$(key /srv/owner controllers)" = "cpu #io memory" ] &&
	ok "... and the running state stays, files and client changes" || not_ok "state after a broken reload"
grep -q "kept the running one" "$BUS_ENV_DAEMON_LOG" && grep -q "^cgbypassd: $D/c.conf:[0-9]*: " "$BUS_ENV_DAEMON_LOG" &&
	ok "... and the log has the FILE:LINE problems" || not_ok "broken reload log" "$(tail -5 "$BUS_ENV_DAEMON_LOG")"
# reloads N: the daemon's reloads so far
reloads() { grep -c "Reloading the configuration" "$BUS_ENV_DAEMON_LOG"; }
# Reload calls sent together, the daemon stopped meanwhile so that it reads them in one go:
# one reload for all, and each call gets its answer. reloads_together COUNT [ERROR]
reloads_together() {
	: >"$D/reloads.out"
	kill -STOP "$BUS_ENV_DAEMON_PID"
	"$client" reloads "$@" >"$D/reloads.out" 2>&1 &
	local rp=$!
	bus_env_wait_for 10 grep -qx sent "$D/reloads.out"
	sleep 0.3       # dbus-daemon hands them on to the stopped daemon's socket
	kill -CONT "$BUS_ENV_DAEMON_PID"
	wait "$rp"
	st=$?
	out=$(cat "$D/reloads.out")
}
n0=$(reloads)
reloads_together 4 org.cgbypass1.Error.ConfigInvalid
n1=$(reloads)
[ $st -eq 0 ] && [[ $out == *"ok 4" ]] && [ $((n1 - n0)) -eq 1 ] && [ "$before" = "$(snap)" ] &&
	ok "4 Reload calls together, broken configuration: one reload, each call refused with ConfigInvalid" ||
	not_ok "Reloads together, broken" "$out; $((n1 - n0)) reload(s)"
kill -HUP "$BUS_ENV_DAEMON_PID"
bus_env_wait_for 5 eval '[ "$(grep -c "kept the running one" "$BUS_ENV_DAEMON_LOG")" -ge 2 ]' &&
	bus_env_daemon_alive && [ "$before" = "$(snap)" ] &&
	ok "SIGHUP with a broken configuration: logged, refused, still serving" || not_ok "SIGHUP broken"

# Reload with a good, changed configuration
cp "$D/good.conf" "$D/c.conf"
printf '\n[cgroup]\npath = /B\nsubtree-control = +memory\n' >>"$D/c.conf"
c Reload
[ $st -eq 0 ] && [ -d "$root/B" ] && [ "$(cat "$root/B/cgroup.subtree_control")" = memory ] &&
	[ "$(key /srv/owner controllers)" = "cpu #io memory" ] &&
	ok "Reload applies the new configuration and keeps the client changes" || not_ok "good Reload" "$out"
seen /B && ok "CgroupChanged for the cgroup the reload made" || not_ok "no CgroupChanged /B" "$(cat "$D/signals")"
# an OCI hook asks for a reload at each container start: a burst of them shares one
printf '\n[cgroup]\npath = /B2\nsubtree-control = +memory\n' >>"$D/c.conf"
n0=$(reloads)
reloads_together 8
n1=$(reloads)
[ $st -eq 0 ] && [[ $out == *"ok 8" ]] && [ $((n1 - n0)) -eq 1 ] && [ -d "$root/B2" ] &&
	grep -q "8 Reload calls share this reload" "$BUS_ENV_DAEMON_LOG" &&
	ok "8 Reload calls together: one reload applies the new configuration, and each call is answered" ||
	not_ok "Reloads together" "$out; $((n1 - n0)) reload(s)"
c Reload
[ $st -eq 0 ] && [ "$(reloads)" -eq $((n1 + 1)) ] && ok "... and a Reload after them reloads again" ||
	not_ok "Reload after the shared one" "$out"
n0=$(grep -c "Reloaded the configuration" "$BUS_ENV_DAEMON_LOG")
kill -HUP "$BUS_ENV_DAEMON_PID"
bus_env_wait_for 5 eval '[ "$(grep -c "Reloaded the configuration" "$BUS_ENV_DAEMON_LOG")" -gt "$n0" ]' &&
	ok "SIGHUP reloads" || not_ok "SIGHUP reload" "$(tail -3 "$BUS_ENV_DAEMON_LOG")"
watch_stop

# a second daemon does not take the name
out=$("$daemon" --bus system --config "$D/c.conf" --config-dir "$D/none" --cgroup-root "$D/root2" \
	--state-directory "$D/state2" 2>&1)
[ $? -ne 0 ] && [[ $out == *"owns org.cgbypass1 already"* ]] && ok "a second instance refuses to start" ||
	not_ok "second instance" "$out"

# SIGTERM: a clean exit; a restart keeps the client changes. Reload calls that wait then are
# answered that it stops (or, read after the signal, see it go): none is left without an answer
kill -STOP "$BUS_ENV_DAEMON_PID"
"$client" reloads 2 >"$D/reloads.out" 2>&1 &
rp=$!
bus_env_wait_for 10 grep -qx sent "$D/reloads.out"
sleep 0.3
kill -TERM "$BUS_ENV_DAEMON_PID"
kill -CONT "$BUS_ENV_DAEMON_PID"
bus_env_stop_daemon TERM
wait "$rp"
out=$(cat "$D/reloads.out")
[[ $out == *"org.cgbypass1.Error.Failed: cgbypassd is stopping"* || $out == *"org.freedesktop.DBus.Error.NoReply"* ]] &&
	ok "Reload calls waiting at SIGTERM are answered" || not_ok "Reloads at SIGTERM" "$out"
[ "$BUS_ENV_DAEMON_STATUS" = 0 ] && ! bus_env_has_name org.cgbypass1 && ok "SIGTERM: exit 0, the name is released" ||
	not_ok "SIGTERM" "status $BUS_ENV_DAEMON_STATUS"
grep -qi "sanitizer" "$BUS_ENV_DAEMON_LOG" && not_ok "sanitizer report" "$(grep -i -A5 sanitizer "$BUS_ENV_DAEMON_LOG")" ||
	ok "no sanitizer report"
before=$(snap)
start && [ "$(key /srv/owner controllers)" = "cpu #io memory" ] && [ "$(key /srv/owner subtree_control)" = "#cpu #io" ] &&
	[ "$before" = "$(snap)" ] && ok "a restart keeps the client changes" || not_ok "restart" "$("$client" call GetCgroup /srv/owner)"
grep -q "Applied the configuration: 0 operation(s)" "$BUS_ENV_DAEMON_LOG" &&
	ok "... with nothing to change" || not_ok "restart operations" "$(grep Applied "$BUS_ENV_DAEMON_LOG")"
bus_env_stop_daemon

# --bus session, and the log's priorities under journald
: >"$D/journal.log"
ino=$(stat -c '%d:%i' "$D/journal.log")
DBUS_SESSION_BUS_ADDRESS=$DBUS_SYSTEM_BUS_ADDRESS JOURNAL_STREAM=$ino "$daemon" --bus session --config "$D/c.conf" \
	--config-dir "$D/none" --cgroup-root "$root" --state-directory "$state" 2>>"$D/journal.log" &
BUS_ENV_DAEMON_PID=$!
bus_env_wait_for 20 bus_env_has_name org.cgbypass1 && ok "--bus session serves on \$DBUS_SESSION_BUS_ADDRESS" ||
	not_ok "--bus session" "$(cat "$D/journal.log")"
c EnableController /srv/owner/none cpu
bus_env_stop_daemon
grep -q '^<6>Serving org.cgbypass1' "$D/journal.log" &&
	grep -q '^<5>EnableController /srv/owner/none cpu by uid=0 pid=[0-9]*: refused: org.cgbypass1.Error.NoSuchCgroup' "$D/journal.log" &&
	! grep -q '^<[0-7]>cgbypassd: ' "$D/journal.log" &&
	ok "under journald: syslog priorities and no program prefix, refusals with uid, pid, cgroup, change and decision" ||
	not_ok "journald log" "$(cat "$D/journal.log")"

# sd_notify: READY with a STATUS, RELOADING on SIGHUP, STOPPING at the end
python3 - "$D/notify" "$D/notify.log" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.2)
end = time.time() + 30
with open(sys.argv[2], 'w', buffering=1) as log:
    while time.time() < end:
        try:
            log.write(s.recv(4096).decode().replace('\n', ' ') + '\n')
        except socket.timeout:
            pass
PY
listener=$!
bus_env_wait_for 5 test -S "$D/notify"
NOTIFY_SOCKET=$D/notify start
bus_env_wait_for 5 grep -q 'READY=1' "$D/notify.log"
kill -HUP "$BUS_ENV_DAEMON_PID"
bus_env_wait_for 5 eval '[ "$(grep -c READY=1 "$D/notify.log")" -ge 2 ]'
bus_env_stop_daemon
bus_env_wait_for 5 grep -q 'STOPPING=1' "$D/notify.log"
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null
grep -q '^READY=1 STATUS=Serving ' "$D/notify.log" && grep -q '^RELOADING=1 STATUS=Reloading' "$D/notify.log" &&
	[ "$(grep -c '^READY=1' "$D/notify.log")" -eq 2 ] && grep -q '^STOPPING=1' "$D/notify.log" &&
	ok "sd_notify: READY=1 and STATUS=, RELOADING=1 on SIGHUP, READY=1 again, STOPPING=1" ||
	not_ok "sd_notify" "$(cat "$D/notify.log")"

# the bus goes away: no one can reach the daemon, so it exits with 1 (cgbypassd(8), EXIT STATUS) and
# says why (the service manager decides what next), as it did with sd_bus_set_exit_on_disconnect()
start
c EnableController /A/B/G cpu
kill "$BUS_ENV_BUS_PID"
for _ in $(seq 100); do bus_env_daemon_alive || break; sleep 0.1; done
if bus_env_daemon_alive; then
	not_ok "cgbypassd still runs 10 s after its bus went away"
	bus_env_stop_daemon KILL
else
	wait "$BUS_ENV_DAEMON_PID"
	status=$?
	BUS_ENV_DAEMON_PID=
	[ "$status" -eq 1 ] && grep -q "Lost the connection to the bus" "$BUS_ENV_DAEMON_LOG" &&
		! grep -qi sanitizer "$BUS_ENV_DAEMON_LOG" &&
		ok "the bus gone: cgbypassd exits with status $status, 'Lost the connection to the bus'" ||
		not_ok "exit without a bus: status $status" "$(tail -5 "$BUS_ENV_DAEMON_LOG")"
fi

bus_env_done
