#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck disable=SC2015
# test-unit-host.sh UNIT CGBYPASSD SBINDIR
# cgbypassd.service under the host's systemd, with all its hardening: a copy
# in /run/systemd/system as cgbypassd-test.service, run on the sim backend in
# a directory of its own (a drop-in adds it to ReadWritePaths=). Checks that
# it starts and gets READY, that `systemctl reload` reloads it, and that its
# journal reports no EPERM or EACCES. Removes everything it made. Skips
# unless PID 1 is systemd, we are root, and org.cgbypass1 is free. TAP output.
set -uo pipefail

unit=${1:?unit} daemon=$(realpath "${2:?cgbypassd}") sbindir=${3:?sbindir}
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -d /run/systemd/system ] && [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] || skip "PID 1 is not systemd"
command -v busctl >/dev/null || skip "busctl is not installed"
busctl --system status org.cgbypass1 >/dev/null 2>&1 && skip "org.cgbypass1 is taken (a cgbypassd runs)"

name=cgbypassd-test
sim=/run/$name-sim
policy=/etc/dbus-1/system.d/org.cgbypass1-$name.conf
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"
cleanup() {
	systemctl stop "$name.service" >/dev/null 2>&1
	rm -rf "/run/systemd/system/$name.service" "/run/systemd/system/$name.service.d" "$sim" "/var/lib/$name"
	systemctl daemon-reload
	systemctl reset-failed "$name.service" >/dev/null 2>&1
	if [ -e "$policy" ]; then
		rm -f "$policy"
		busctl --system call org.freedesktop.DBus / org.freedesktop.DBus ReloadConfig >/dev/null 2>&1
	fi
}
trap cleanup EXIT

# the bus policy, unless the machine has it
if [ ! -e /usr/share/dbus-1/system.d/org.cgbypass1.conf ] && [ ! -e /etc/dbus-1/system.d/org.cgbypass1.conf ]; then
	mkdir -p /etc/dbus-1/system.d
	cp "$(dirname "$0")/../../dbus/org.cgbypass1.conf" "$policy"
	busctl --system call org.freedesktop.DBus / org.freedesktop.DBus ReloadConfig >/dev/null
fi

mkdir -p "$sim/conf.d"
sed -e '/^# SPDX-License-Identifier:/d' -e 's/@name@/nobody/; s/@user@/nobody/' "$(dirname "$0")/../bus/srv-owner.conf" \
	>"$sim/cgbypassd.conf"
sed -e "s|^ExecStart=$sbindir/cgbypassd.*|ExecStart=$daemon --backend sim --cgroup-root $sim/root --state-directory /var/lib/$name --config $sim/cgbypassd.conf --config-dir $sim/conf.d|" \
	-e "s|^StateDirectory=.*|StateDirectory=$name|" -e '/^Alias=/d' "$unit" >"/run/systemd/system/$name.service"
mkdir -p "/run/systemd/system/$name.service.d"
printf '[Service]\nReadWritePaths=%s\nRestart=no\n' "$sim" >"/run/systemd/system/$name.service.d/sim.conf"
systemctl daemon-reload
since=$(date '+%Y-%m-%d %H:%M:%S')

out=$(systemctl start "$name.service" 2>&1) && [ "$(systemctl is-active "$name.service")" = active ] &&
	ok "starts and gets READY ($(systemctl show -P StatusText "$name.service"))" ||
	not_ok "start" "$out $(journalctl -u "$name.service" --since "$since" --no-pager | tail -20)"
[ "$(stat -c %U "$sim/root/srv/nobody" 2>&1)" = nobody ] && ok "the delegation is chowned to its owner" ||
	not_ok "delegation owner" "$(ls -la "$sim/root/srv" 2>&1)"
out=$(busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager EnableController ss /srv/nobody cpu 2>&1) &&
	ok "EnableController on the bus" || not_ok "EnableController" "$out"
out=$(systemctl reload "$name.service" 2>&1) && sleep 1 &&
	grep -q 'Reloaded the configuration' <<<"$(journalctl -u "$name.service" --since "$since" --no-pager)" &&
	[ "$(systemctl is-active "$name.service")" = active ] &&
	ok "systemctl reload ($(systemctl show -P Type "$name.service"))" ||
	not_ok "systemctl reload" "$out $(journalctl -u "$name.service" --since "$since" --no-pager | tail -20)"
out=$(systemctl stop "$name.service" 2>&1) && ok "stops" || not_ok "stop" "$out"
log=$(journalctl -u "$name.service" --since "$since" --no-pager)
printf '%s\n' "$log" | grep -Eqi 'EPERM|EACCES|not permitted|permission denied' &&
	not_ok "the journal reports a refused operation" "$log" || ok "no EPERM or EACCES in the journal"

tap_done
