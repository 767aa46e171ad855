#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015
# Values in policy through a running cgbypassd (sim backend, a private
# system-like bus from tests/bus/bus-env.sh, caller root): Reload applies a
# changed value with one write and leaves the rest, a Reload in sync writes
# nothing, and a value the kernel refuses fails the Reload as a whole with
# the hierarchy as before. TAP.
set -uo pipefail

src=${1:?source dir}
daemon=${2:?cgbypassd}
# shellcheck source=tests/bus/bus-env.sh
. "$src/tests/bus/bus-env.sh"
bus_env_init "$src" "$daemon"
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }

D=$BUS_ENV_DIR
root=$D/root
conf() { # memory.max of /w, then extra lines for /w
	cat >"$D/c.conf" <<CONF
[daemon]
backend = sim

[cgroup]
path = /
subtree-control = +cpu +memory +pids +misc

[cgroup]
path = /w
memory.max = $1
pids.max = 100
$2
CONF
}
reload() {
	out=$(busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager Reload 2>&1)
}
reloads() { grep -c "Reloaded the configuration" "$BUS_ENV_DAEMON_LOG"; }

conf 4G ""
bus_env_start_daemon --config "$D/c.conf" --config-dir "$D/none" --cgroup-root "$root" \
	--state-directory "$D/state" || { echo "Bail out! cgbypassd did not start"; exit 1; }
[ "$(cat "$root/w/memory.max" "$root/w/pids.max")" = "$(printf '4294967296\n100')" ] &&
	ok "the daemon applies the values at start" || not_ok "values at start" "$(cat "$root/w/memory.max")"

conf 6G ""
sed -i '/^pids.max/d' "$D/c.conf"
reload
[ -z "$out" ] && grep -q "Reloaded the configuration: 1 operation(s)" "$BUS_ENV_DAEMON_LOG" &&
	[ "$(cat "$root/w/memory.max" "$root/w/pids.max")" = "$(printf '6442450944\n100')" ] &&
	ok "Reload: the changed value is one write, a value taken out is left as it is" ||
	not_ok "Reload with a changed value" "$out $(tail -3 "$BUS_ENV_DAEMON_LOG")"

reload
n=$(reloads)
[ -z "$out" ] && [ "$(grep "Reloaded the configuration" "$BUS_ENV_DAEMON_LOG" | tail -1)" = \
	"cgbypassd: Reloaded the configuration: 0 operation(s)." ] && [ "$n" -eq 2 ] &&
	ok "Reload in sync: zero writes" || not_ok "Reload in sync" "$out $(tail -3 "$BUS_ENV_DAEMON_LOG")"

before=$(cd "$root" && find . -type f -exec sh -c 'printf "%s %s\n" "$1" "$(cat "$1")"' _ {} \; | sort)
conf 2G "misc.max = sev 4"
printf '\n[cgroup]\npath = /new\n' >>"$D/c.conf"
reload
after=$(cd "$root" && find . -type f -exec sh -c 'printf "%s %s\n" "$1" "$(cat "$1")"' _ {} \; | sort)
[[ $out == *"Invalid argument"* ]] && [ "$before" = "$after" ] && [ ! -e "$root/new" ] &&
	bus_env_daemon_alive && ok "a value the kernel refuses fails the Reload; the hierarchy is as before" ||
	not_ok "refused Reload" "$out $(diff <(echo "$before") <(echo "$after") | head)"

bus_env_stop_daemon
bus_env_done
