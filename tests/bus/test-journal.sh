#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# cgbypassd under the journal: stderr is what $JOURNAL_STREAM names, and
# journald's socket is a listener of this test (in a mount namespace of
# its own: the host's journal, if any, sees nothing). Lines carry no program
# prefix; an applied change, a refusal and a reload are entries with their
# MESSAGE_ID and CGBYPASS_* fields; 301 cgroups that appear in a delegation
# at once (a directory moved in) are one adoption entry. TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
command -v unshare >/dev/null || bus_env_skip "unshare is not installed"
unshare --mount true 2>/dev/null || bus_env_skip "cannot make a mount namespace"
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }
bus_env_add_user alice || { echo "Bail out! useradd failed"; exit 1; }
D=$BUS_ENV_DIR
made_run=
cleanup() {
	[ -s "$D/journald.pid" ] && kill "$(cat "$D/journald.pid")" 2>/dev/null
	# shellcheck disable=SC2086 # the directories made, deepest first
	[ -n "$made_run" ] && rmdir $made_run 2>/dev/null
	bus_env_cleanup
}
trap cleanup EXIT
# the mount point of the namespace's tmpfs must exist on the host
for d in /run/systemd /run/systemd/journal; do
	[ -d "$d" ] || { mkdir "$d" && made_run="$d${made_run:+ $made_run}"; }
done

bus_env_config alice.conf backend=sim x=memory alice="$alice" || { echo "Bail out! the configuration"; exit 1; }
mkdir -p "$D/none" "$D/sim" "$D/stage"
: >"$D/stderr"
stream=$(stat -c '%d:%i' "$D/stderr")

# journald's native protocol: KEY=VALUE lines, or KEY, a 64-bit length and the value; entries end at "--"
cat >"$D/journald.py" <<'PY'
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind('/run/systemd/journal/socket')
os.chmod('/run/systemd/journal/socket', 0o666)
open(sys.argv[2], 'w').close()
with open(sys.argv[1], 'w', buffering=1) as out:
    while True:
        d, anc, _, _ = s.recvmsg(1 << 20, socket.CMSG_SPACE(4))
        for level, type_, data in anc:
            if level == socket.SOL_SOCKET and type_ == socket.SCM_RIGHTS:  # a large entry comes as a memfd
                fd = struct.unpack('i', data[:4])[0]
                d = os.pread(fd, 1 << 20, 0)
                os.close(fd)
        i = 0
        while i < len(d):
            nl = d.index(b'\n', i)
            line = d[i:nl]
            if b'=' in line:
                out.write(line.decode(errors='replace') + '\n')
                i = nl + 1
            else:
                n = struct.unpack('<Q', d[nl + 1:nl + 9])[0]
                val = d[nl + 9:nl + 9 + n]
                out.write(line.decode() + '=' + val.decode(errors='replace').replace('\n', '\\n') + '\n')
                i = nl + 9 + n + 1
        out.write('--\n')
PY
# shellcheck disable=SC2016 # expanded by the inner shell, in the namespace
unshare --mount --propagation private bash -c '
	mount -t tmpfs -o mode=0755 tmpfs /run/systemd/journal || exit 1
	python3 "$1/journald.py" "$1/entries" "$1/journald-ready" </dev/null >/dev/null 2>&1 &
	echo $! >"$1/journald.pid"
	for i in $(seq 100); do [ -e "$1/journald-ready" ] && break; sleep 0.05; done
	shift
	JOURNAL_STREAM=$0 exec "$@" 2>>"$BUS_ENV_DIR/stderr"' "$stream" "$D" "$daemon" --bus system \
	--config "$D/c.conf" --config-dir "$D/none" --cgroup-root "$D/sim" --state-directory "$D/state" &
BUS_ENV_DAEMON_PID=$!
bus_env_wait_for 30 bus_env_has_name org.cgbypass1 && ok "the daemon starts with stderr as the journal" ||
	{ not_ok "the daemon starts" "$(cat "$D/stderr")"; bus_env_done; exit 1; }

"$client" call EnableController /nowhere memory >/dev/null 2>&1
"$client" call EnableController /alice memory >/dev/null 2>&1
"$client" call Reload >/dev/null 2>&1
# 300 cgroups made elsewhere, moved into the delegation at once: one look
chown "$alice:" "$D/stage"
bus_env_as "$alice" bash -c "mkdir '$D/stage/batch' && cd '$D/stage/batch' && mkdir c{1..300}"
bus_env_as "$alice" mv "$D/stage/batch" "$D/sim/alice/batch"
bus_env_wait_for 10 grep -q '^CGBYPASS_ADOPTED=301$' "$D/entries"
sleep 0.5
kill "$BUS_ENV_DAEMON_PID"
wait "$BUS_ENV_DAEMON_PID"
BUS_ENV_DAEMON_PID=

# entry NAME FIELD...: an entry has every FIELD (KEY=VALUE, whole lines)
entry() {
	python3 - "$D/entries" "$@" <<'PY'
import sys
entries = open(sys.argv[1]).read().split('--\n')
want = sys.argv[3:]
ok = any(all(w in e.splitlines() for w in want) for e in entries)
sys.exit(0 if ok else 1)
PY
}
check_entry() {
	local what=$1
	shift
	entry "$@" && ok "journal: $what" || not_ok "journal: $what" "$(cat "$D/entries")"
}
check_entry "a refusal: MESSAGE_ID, method, cgroup, caller, result, error name" x \
	MESSAGE_ID=4bedc8f0252043418313b02bfe1e76d8 CGBYPASS_METHOD=EnableController CGBYPASS_CGROUP=/nowhere \
	CGBYPASS_ARGUMENT=memory CGBYPASS_CALLER_UID=0 CGBYPASS_RESULT=refused \
	CGBYPASS_ERROR=org.cgbypass1.Error.NotManaged PRIORITY=5
check_entry "an applied change" x MESSAGE_ID=3aad8117271446a3ad383849fb296393 CGBYPASS_METHOD=EnableController \
	CGBYPASS_CGROUP=/alice CGBYPASS_CALLER_UID=0 CGBYPASS_RESULT=applied PRIORITY=6
check_entry "a reload" x MESSAGE_ID=9f8dadb0acbd4a37aab2ba553292916b CGBYPASS_METHOD=Reload CGBYPASS_RESULT=applied
check_entry "301 cgroups adopted in one look: one entry" x MESSAGE_ID=14482f3dbc314e619a998715532b35ac \
	CGBYPASS_ADOPTED=301 CGBYPASS_FORGOTTEN=0
n=$(grep -c '^MESSAGE_ID=14482f3dbc314e619a998715532b35ac$' "$D/entries")
[ "$n" = 1 ] && ok "journal: one adoption entry in all" || not_ok "journal: one adoption entry in all" "$n"
n=$(grep -c 'Adopted' "$D/stderr")
[ "$n" = 0 ] && ok "stderr: the adoption is not 301 lines there either" || not_ok "stderr: adoption lines" "$n"
grep -q '^<6>Serving org.cgbypass1' "$D/stderr" && ! grep -q '^<[0-7]>cgbypassd:' "$D/stderr" &&
	ok "stderr: syslog priorities, no program prefix" || not_ok "stderr: no prefix" "$(cat "$D/stderr")"
! grep -q 'refused' "$D/stderr" && ok "stderr: the refusal is in the journal, not twice" ||
	not_ok "stderr: the refusal is in the journal, not twice" "$(cat "$D/stderr")"
bus_env_done
