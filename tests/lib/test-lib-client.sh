#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# A third-party client of the installed library, as its developer would
# build it: `meson install` into a DESTDIR, then examples/client.c compiled
# with nothing but `pkg-config --cflags --libs libcgbypass` (pointed into
# the DESTDIR), and run against the real cgbypassd on a private system-like
# bus with the real polkitd: as an unprivileged owner, and as root for the
# errors only root can reach. For each error it provokes, the errno that
# sd_bus_error_get_errno() gives must be the one org.cgbypass1(5) documents.
# Also: an owner hears CgroupChanged through a match rule, while the bus's
# monitor is closed to it. TAP output.
#
# Usage: test-lib-client.sh SOURCE_ROOT CGBYPASSD MESON BUILDDIR LIBDIR SANITIZE
set -uo pipefail

src=${1:?source dir}
daemon=${2:?cgbypassd}
meson=${3:?meson}
build=${4:?build dir}
libdir=${5:?libdir}
sanitize=${6:-none}
# shellcheck source=tests/bus/bus-env.sh
. "$src/tests/bus/bus-env.sh"
bus_env_init "$src" "$daemon"
for t in cc pkg-config readelf; do
	command -v "$t" >/dev/null 2>&1 || bus_env_skip "$t is not installed"
done
bus_env_require_polkitd

D=$BUS_ENV_DIR
dest=$D/dest

# ---- build the example from the installed files ----

if out=$(DESTDIR=$dest "$meson" install -C "$build" --no-rebuild --quiet 2>&1); then
	ok "meson install into a DESTDIR"
else
	not_ok "meson install into a DESTDIR" "$out"
	echo "1..$BUS_ENV_N"
	exit 1
fi
# PKG_CONFIG_SYSROOT_DIR: the .pc says the final paths; the files are below DESTDIR
pc() {
	PKG_CONFIG_PATH=$dest$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest pkg-config "$@"
}
flags=$(pc --cflags --libs libcgbypass 2>&1)
[[ $flags == *"-I$dest"* ]] && [[ $flags == *"-L$dest$libdir"* ]] && [[ $flags == *-lcgbypass* ]] &&
	[[ $flags == *-lsystemd* ]] &&
	ok "pkg-config --cflags --libs libcgbypass: the DESTDIR's header and library, and libsystemd" ||
	not_ok "pkg-config flags" "$flags"
sanflags=()
# an instrumented library needs an instrumented program (the sanitizer's runtime comes first)
[ "$sanitize" != none ] && sanflags=("-fsanitize=$sanitize")
# shellcheck disable=SC2086 # pkg-config's flags are words
if out=$(cc -Wall -Wextra -Werror "${sanflags[@]}" -o "$D/client" "$src/examples/client.c" $flags 2>&1); then
	ok "examples/client.c builds with those flags alone"
else
	not_ok "examples/client.c does not build" "$out"
	echo "1..$BUS_ENV_N"
	exit 1
fi
readelf -d "$D/client" | grep -q 'Shared library: \[libcgbypass.so.1\]' &&
	ok "the client needs libcgbypass.so.1" || not_ok "NEEDED" "$(readelf -d "$D/client")"
resolved=$(LD_LIBRARY_PATH=$dest$libdir ldd "$D/client" | awk '/libcgbypass/ { print $3 }')
[ "$resolved" = "$dest$libdir/libcgbypass.so.1" ] && ok "it runs with the installed library" ||
	not_ok "libcgbypass resolves to '$resolved'"
chmod -R a+rX "$D"

# ---- the daemon, polkitd, an owner ----

bus_env_polkit_setup owner
root=$D/root
bus_env_config sim-srv.conf || { echo "Bail out! the configuration"; exit 1; }
cat >>"$D/c.conf" <<CONF

[delegate]
path = /srv/owner
user = $owner
controllers = cpu

[cgroup]
path = /A
CONF
bus_env_start_daemon --config "$D/c.conf" --config-dir "$D/none" --cgroup-root "$root" \
	--state-directory "$D/state" || { echo "Bail out! cgbypassd did not start"; exit 1; }

# client USER ARGS...: the example as USER (or root); sets out, st
client() {
	out=$(bus_env_as "$1" env LD_LIBRARY_PATH="$dest$libdir" "$D/client" "${@:2}" 2>&1)
	st=$?
}
# succeeds USER DESCRIPTION ARGS...
succeeds() {
	local u=$1 d=$2
	shift 2
	client "$u" "$@"
	[ $st -eq 0 ] && [[ $out == *ok ]] && ok "$d" || not_ok "$d" "exit $st: $out"
}
# errno_of NAME: the errno org.cgbypass1(5) documents for org.cgbypass1.Error.NAME
errno_of() {
	sed -nE "s/^\\.BR org\\.cgbypass1\\.Error\\.$1 \" \\(([A-Z]+)\\)\"\$/\\1/p" "$src/man/org.cgbypass1.5"
}
provoked=()
# refused USER NAME DESCRIPTION ARGS...: the call fails with NAME, decoded to the documented errno
refused() {
	local u=$1 name=$2 d=$3 want
	shift 3
	want=$(errno_of "$name")
	client "$u" "$@"
	if [ -n "$want" ] && [ $st -eq 1 ] && [[ $out == "error org.cgbypass1.Error.$name $want ("*"): "* ]] &&
		[[ $out != *mismatch* ]]; then
		ok "$d: $name, sd_bus_error_get_errno() $want"
		provoked+=("$name")
	else
		not_ok "$d" "wanted $name ($want); exit $st: $out"
	fi
}

succeeds "$owner" "owner: enable /srv/owner cpu" enable /srv/owner cpu
refused "$owner" ControllerNotDelegated "owner: a controller the delegation lacks" enable /srv/owner io
refused "$owner" NotDelegated "owner: a managed cgroup of no delegation of the owner's" enable /A cpu
refused "$owner" NotManaged "owner: a cgroup nobody manages" enable /elsewhere cpu
refused "$owner" NoSuchCgroup "owner: show a cgroup that does not exist" show /srv/owner/nonexistent
refused "$owner" InvalidPath "owner: show a relative path" show srv/owner
refused "$owner" UnknownController "owner: the tree of no controller" tree bogus
refused "$owner" UnknownController "owner: the tree of a controller cgroup2 lacks (GetEffectiveNodes)" tree cpuacct
refused "$owner" InvalidArgument "owner: a change without a sign" set /srv/owner cpu
bus_env_as "$owner" mkdir "$root/srv/owner/child"
succeeds "$owner" "owner: set /srv/owner +cpu" set /srv/owner +cpu
refused "$owner" NotBypassedByParent "owner: re-enable in a child of an enabling parent" enable /srv/owner/child cpu
succeeds "$owner" "owner: set /srv/owner #cpu" set /srv/owner "#cpu"
succeeds "$owner" "owner: enable /srv/owner/child cpu" enable /srv/owner/child cpu
refused "$owner" InUseBelow "owner: disable what a child re-enabled" set /srv/owner -cpu
succeeds "$owner" "owner: bypass /srv/owner/child cpu" bypass /srv/owner/child cpu
succeeds "$owner" "owner: set /srv/owner -cpu" set /srv/owner -cpu
refused "$owner" NotAvailable "owner: give the children what the cgroup lacks" set /srv/owner/child +cpu
refused "$owner" AccessDenied "owner: reload" reload
refused root RootCgroup "root: re-enable in the root cgroup" enable / cpu
cp "$D/c.conf" "$D/c.conf.good"
printf '[cgroup]\npath = /B\nsubtree-control = +nosuchcontroller\n' >>"$D/c.conf"
refused root ConfigInvalid "root: reload a broken configuration" reload
cp "$D/c.conf.good" "$D/c.conf"
succeeds root "root: reload after the fix" reload

# ---- run-time delegations through the library ----
succeeds root "root: AddDelegation of a new cgroup to a uid" delegate /srv/rt 4242 cpu
client root show /srv/rt
[ $st -eq 0 ] && ok "the delegated cgroup exists" || not_ok "show /srv/rt" "$out"
refused root DelegationConflict "root: AddDelegation inside a delegation" delegate /srv/owner/rt 4242 cpu
refused root NotRuntimeDelegation "root: RemoveDelegation of a [delegate] section's" undelegate /srv/owner
refused "$owner" AccessDenied "owner: AddDelegation" delegate /srv/rt2 4242 cpu
succeeds root "root: RemoveDelegation" undelegate /srv/rt
refused root NoSuchDelegation "root: RemoveDelegation of a cgroup no longer delegated" undelegate /srv/rt

# every error name the map has: provoked above, or listed here with why not
not_provoked="InUseBySubtree HasProcesses NotSupported Busy Failed TooManyCgroups"
missing=
while read -r name; do
	[[ " ${provoked[*]} $not_provoked " == *" $name "* ]] || missing+=" $name"
done < <(sed -nE 's/.*CGBYPASS_ERROR_PREFIX "([A-Za-z]+)".*/\1/p' "$src/include/cgbypass/cgbypass.h")
# InUseBySubtree (the daemon plans a re-enable with the cgroup's own subtree_control, so a
# caller did not reach it here), HasProcesses (processes in a sim cgroup), NotSupported (thread
# mode), Busy (256 pending polkit checks), Failed (a kernel write refused) and TooManyCgroups
# (tests/bus/test-limits.sh) need what this test does not set up; tests/lib/test-lib-abi.sh decodes every name of the map without the daemon.
[ -z "$missing" ] && ok "every error name is provoked here but $not_provoked" ||
	not_ok "error names neither provoked nor listed as not provoked:$missing"

# GetEffectiveNodes through the library: GetEffectiveTree's lines as (depth, members)
client "$owner" tree cpu
text=$(busctl --system call org.cgbypass1 /org/cgbypass1 org.cgbypass1.Manager GetEffectiveTree s cpu |
	sed -E 's/^s "(.*)"$/\1/; s/\\n/\n/g' | awk 'NF { match($0, /^ */); gsub(/\|/, " "); print RLENGTH / 2, substr($0, RLENGTH + 1) }')
[ $st -eq 0 ] && [ "$out" = "$text
ok" ] && [ "$(wc -l <<<"$text")" -ge 3 ] && ok "GetEffectiveNodes: GetEffectiveTree's lines, as depth and members" ||
	not_ok "tree" "$out
--- GetEffectiveTree
$text"

# ---- signals: a normal user hears them through a match rule ----

bus_env_as "$owner" env LD_LIBRARY_PATH="$dest$libdir" "$D/client" watch 1 >"$D/watch" 2>&1 &
watch_pid=$!
bus_env_wait_for 10 grep -qx watching "$D/watch"
client "$owner" bypass /srv/owner cpu
wait "$watch_pid"
w=$?
[ $w -eq 0 ] && grep -qx 'changed /srv/owner' "$D/watch" &&
	ok "owner: CgroupChanged through a match rule (cgbypass_match_cgroup_changed)" ||
	not_ok "owner's match rule" "exit $w: $(cat "$D/watch")"
out=$(bus_env_as "$owner" timeout 5 busctl --system monitor org.cgbypass1 2>&1)
st=$?
[ $st -ne 0 ] && [ $st -ne 124 ] && [[ $out == *"ccess denied"* || $out == *"ermission denied"* ]] &&
	ok "owner: busctl monitor is refused (BecomeMonitor needs privileges)" ||
	not_ok "busctl monitor as the owner" "exit $st: $out"
# dbus-monitor falls back to match rules, which carry broadcast signals (org.cgbypass1(5))
bus_env_as "$owner" timeout 10 dbus-monitor --system "type='signal',sender='org.cgbypass1'" >"$D/dbus-monitor" 2>&1 &
monitor_pid=$!
bus_env_wait_for 10 grep -q 'NameAcquired' "$D/dbus-monitor"
client "$owner" enable /srv/owner cpu
bus_env_wait_for 5 grep -q 'member=CgroupChanged' "$D/dbus-monitor" &&
	grep -q 'Falling back to eavesdropping' "$D/dbus-monitor" &&
	ok "owner: dbus-monitor is refused monitoring, falls back to a match, and shows CgroupChanged" ||
	not_ok "dbus-monitor as the owner" "$(cat "$D/dbus-monitor")"
kill "$monitor_pid" 2>/dev/null
wait "$monitor_pid" 2>/dev/null
if command -v gdbus >/dev/null 2>&1; then
	bus_env_as "$owner" timeout 10 gdbus monitor --system --dest org.cgbypass1 >"$D/gdbus" 2>&1 &
	gdbus_pid=$!
	bus_env_wait_for 10 grep -q 'Monitoring signals' "$D/gdbus"
	sleep 0.5 # gdbus adds its match after saying so
	client "$owner" bypass /srv/owner cpu
	bus_env_wait_for 5 grep -q "CgroupChanged ('/srv/owner',)" "$D/gdbus" &&
		ok "owner: gdbus monitor --system --dest org.cgbypass1 shows CgroupChanged" ||
		not_ok "gdbus monitor as the owner" "$(cat "$D/gdbus")"
	kill "$gdbus_pid" 2>/dev/null
	wait "$gdbus_pid" 2>/dev/null
else
	ok "gdbus monitor as the owner # SKIP gdbus is not installed (Debian: libglib2.0-bin)"
fi

bus_env_stop_daemon
[ "$BUS_ENV_DAEMON_STATUS" = 0 ] && ok "cgbypassd exits 0 on SIGTERM" ||
	not_ok "cgbypassd exit status $BUS_ENV_DAEMON_STATUS" "$(tail -n 20 "$BUS_ENV_DAEMON_LOG")"
bus_env_done
