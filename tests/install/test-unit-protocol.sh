#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015
# test-unit-protocol.sh SRCDIR CGBYPASSD UNIT
# What cgbypassd.service asks of the daemon, checked without systemd as PID 1:
#  - it runs with the unit's CapabilityBoundingSet= and NoNewPrivileges=
#    (setpriv), on the sim backend with a delegation whose owner made a
#    child, so chown and writes into the owner's directories happen, and
#    nothing in its log says EPERM or EACCES;
#  - every system call it makes is one the unit's SystemCallFilter= allows
#    (strace, against systemd-analyze syscall-filter);
#  - its sd_notify messages (a socket of our own as NOTIFY_SOCKET): READY=1
#    at start; on SIGHUP and on Reload, RELOADING=1 with a MONOTONIC_USEC=
#    no earlier than the signal, then READY=1 (Type=notify-reload, systemd >= 253).
# Needs root and a private bus (tests/bus/bus-env.sh). TAP output.
set -uo pipefail

src=${1:?source dir} daemon=$(realpath "${2:?cgbypassd}") unit=${3:?unit}
# shellcheck source=../bus/bus-env.sh
. "$src/tests/bus/bus-env.sh"
bus_env_init "$src" "$daemon"
for t in strace setpriv systemd-analyze; do
	command -v "$t" >/dev/null || bus_env_skip "$t is not installed"
done
D=$BUS_ENV_DIR
root=$D/root
bus_env_start_bus || { not_ok "the private bus"; bus_env_done; exit 1; }
bus_env_add_user alice || { not_ok "a test user"; bus_env_done; exit 1; }

# the unit's capabilities, for setpriv: CAP_CHOWN -> +chown
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
bounding=-all
for c in $caps; do
	c=${c#CAP_}
	bounding+=",+${c,,}"
done
grep -qx 'NoNewPrivileges=yes' "$unit" && nnp=--no-new-privs || nnp=
echo "# bounding set $bounding $nnp"

bus_env_config srv-owner.conf name=alice user="$alice" || { not_ok "the configuration"; bus_env_done; exit 1; }
printf '[daemon]\nbackend = sim\ncgroup-root = %s\nstate-directory = %s\n\n' "$root" "$D/state" |
	cat - "$D/c.conf" >"$D/cgbypassd.conf"
mkdir "$D/conf.d"

# sd_notify receiver: one line per datagram, "RECEIVED_USEC<TAB>fields joined by |"
python3 - "$D/notify.sock" "$D/notify.log" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], 'a', buffering=1) as log:
    while True:
        msg = s.recv(4096).decode()
        log.write('%d\t%s\n' % (time.monotonic_ns() // 1000, msg.strip().replace('\n', '|')))
PY
notify_pid=$!
bus_env_wait_for 5 test -S "$D/notify.sock" || not_ok "the notify socket"

# the daemon as the unit runs it, under strace (LeakSanitizer cannot work under
# ptrace: an ASan build checks leaks in the other bus tests)
cat >"$D/run-daemon" <<RUN
#!/bin/sh
exec strace -f -qq -o "$D/strace.log" setpriv $nnp --bounding-set '$bounding' --inh-caps -all \
	env NOTIFY_SOCKET="$D/notify.sock" ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0" \
	"$daemon" "\$@"
RUN
chmod +x "$D/run-daemon"
BUS_ENV_CGBYPASSD=$D/run-daemon
if ! bus_env_start_daemon --config "$D/cgbypassd.conf" --config-dir "$D/conf.d"; then
	not_ok "cgbypassd starts with the unit's capabilities" "$(cat "$BUS_ENV_DAEMON_LOG")"
	kill "$notify_pid"
	bus_env_done
	exit 1
fi
ok "cgbypassd starts with the unit's capabilities"
pid=$(pgrep -f -n "^$daemon --bus system") || not_ok "the daemon's pid"
[ -n "$pid" ] && cap=$(sed -n 's/^CapBnd:\t//p' "/proc/$pid/status") &&
	echo "# the daemon's CapBnd $cap, NoNewPrivs $(sed -n 's/^NoNewPrivs:\t//p' "/proc/$pid/status")"
bus_env_wait_for 5 grep -q 'READY=1' "$D/notify.log" && ok "READY=1 at start" ||
	not_ok "no READY=1 at start" "$(cat "$D/notify.log")"

call() { busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager "$@" 2>&1; }
owner_of() { stat -c %U "$1"; }
[ "$(owner_of "$root/srv/alice")" = "$alice" ] && [ "$(owner_of "$root/srv/alice/cgroup.procs")" = "$alice" ] &&
	ok "the delegation is chowned to its owner (CAP_CHOWN)" || not_ok "delegation owner" "$(ls -la "$root/srv/alice")"
out=$(call EnableController ss /srv/alice cpu) && out=$(call SetSubtreeControl ss /srv/alice '#cpu #io') &&
	ok "root switches the delegation root" || not_ok "root on the delegation root" "$out"
bus_env_as "$alice" mkdir "$root/srv/alice/job"
out=$(call EnableController ss /srv/alice/job cpu) &&
	[ "$(cat "$root/srv/alice/job/cgroup.controllers" 2>&1)" = "cpu #io" ] &&
	ok "root switches a cgroup the owner made, in the owner's directory (CAP_DAC_OVERRIDE)" ||
	not_ok "root in the owner's child" "$out $(ls -la "$root/srv/alice/job" 2>&1 | head -5)"

# reload by SIGHUP (ExecReload=, and systemd >= 253's notify-reload), then by the method
reload_seen() { # since-usec: RELOADING=1 with MONOTONIC_USEC >= since, and a READY=1 after it
	awk -F'\t' -v since="$1" '
		$2 ~ /(^|\|)RELOADING=1(\||$)/ && match($2, /MONOTONIC_USEC=[0-9]+/) &&
			substr($2, RSTART + 15, RLENGTH - 15) + 0 >= since { r = NR }
		r && NR > r && $2 ~ /(^|\|)READY=1(\||$)/ { found = 1 }
		END { exit !found }' "$D/notify.log"
}
since=$(python3 -c 'import time; print(time.monotonic_ns() // 1000)')
kill -HUP "$pid"
bus_env_wait_for 10 reload_seen "$since" && ok "SIGHUP: RELOADING=1 with MONOTONIC_USEC after the signal, then READY=1" ||
	not_ok "SIGHUP reload protocol (since $since)" "$(cat "$D/notify.log")"
since=$(python3 -c 'import time; print(time.monotonic_ns() // 1000)')
out=$(call Reload) && bus_env_wait_for 10 reload_seen "$since" &&
	ok "Reload: RELOADING=1 with MONOTONIC_USEC, then READY=1" ||
	not_ok "Reload protocol" "$out $(cat "$D/notify.log")"

# SIGTERM to the daemon itself (strace would detach from it on its own SIGTERM);
# strace exits with the daemon's status
kill -TERM "$pid"
wait "$BUS_ENV_DAEMON_PID"
BUS_ENV_DAEMON_STATUS=$?
BUS_ENV_DAEMON_PID=
[ "$BUS_ENV_DAEMON_STATUS" = 0 ] && ok "SIGTERM: exit 0" || not_ok "exit status $BUS_ENV_DAEMON_STATUS"
kill "$notify_pid" 2>/dev/null
wait "$notify_pid" 2>/dev/null
grep -Eqi 'EPERM|EACCES|not permitted|permission denied' "$BUS_ENV_DAEMON_LOG" &&
	not_ok "the daemon's log reports a refused operation" "$(cat "$BUS_ENV_DAEMON_LOG")" ||
	ok "no EPERM or EACCES in the daemon's log"

# system calls: those after the daemon's execve, against the unit's filter
expand() { # @group or name... -> syscall names, one a line
	local x
	for x in "$@"; do
		if [[ $x == @* ]]; then
			# shellcheck disable=SC2046
			expand $(systemd-analyze syscall-filter --no-pager "$x" | sed -n 's/^    \([@a-z0-9_-]*\)$/\1/p')
		else
			echo "$x"
		fi
	done
}
allow=() deny=()
while read -r line; do
	v=${line#SystemCallFilter=}
	# shellcheck disable=SC2206
	if [[ $v == '~'* ]]; then deny+=(${v#\~}); else allow+=($v); fi
done < <(grep '^SystemCallFilter=' "$unit")
expand "${allow[@]}" | sort -u >"$D/allow"
expand "${deny[@]}" | sort -u >"$D/deny"
comm -23 "$D/allow" "$D/deny" >"$D/allowed"
awk '/execve\(".*\/cgbypassd"/ && / = 0$/ { on = 1; next }
	on && match($0, /^[0-9]+ +[a-z0-9_]+\(/) { s = substr($0, RSTART, RLENGTH - 1); sub(/^[0-9]+ +/, "", s); print s }' \
	"$D/strace.log" | sort -u >"$D/used"
used=$(wc -l <"$D/used")
refused=$(comm -23 "$D/used" "$D/allowed" | tr '\n' ' ')
[ "$used" -gt 20 ] && [ -z "$refused" ] &&
	ok "the $used system calls the daemon made are all in the unit's SystemCallFilter=" ||
	not_ok "system calls outside the unit's SystemCallFilter= ($used used): $refused" "$(tr '\n' ' ' <"$D/used")"

bus_env_done
