# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash disable=SC2034
#
# A private system-like bus for the bus and polkit tests, sourced by them:
#
#   . bus-env.sh
#   bus_env_main "$@"                # src, daemon, client from a test's arguments; bus_env_init
#   bus_env_init SRCDIR              # temp dir, traps; skips (exit 0) unless root + tools
#   bus_env_require_polkitd          # skips unless polkitd is installed
#   bus_env_polkit_setup USER...     # the bus, the actions, the users, polkitd; "Bail out!" on failure
#   bus_env_use_cgroup2 PREFIX       # a scratch cgroup on the host's cgroup2 (mnt, X, scratch); skips
#   bus_env_cgroup2_cleanup          # ... removed again, from the test's EXIT trap
#   bus_env_start_bus                # dbus-daemon: the stock system.conf policy, our socket,
#                                    #   + SRCDIR/dbus/org.cgbypass1.conf
#   bus_env_install_policy           # SRCDIR/polkit/org.cgbypass1.policy -> /usr/share/polkit-1/actions
#   bus_env_add_rules NAME TEXT      # /etc/polkit-1/rules.d/NN-cgbypass-test-PID-NAME.rules
#   bus_env_start_polkit             # the real polkitd on that bus
#   bus_env_stop_polkit
#   bus_env_add_user VAR             # a new unprivileged user; VAR=name, VAR_uid=uid
#   bus_env_as USER CMD...           # run CMD as USER (setpriv; root: itself), on the private bus
#   bus_env_config FIXTURE... K=V... # SRCDIR/tests/bus/FIXTUREs (SRCDIR/FIXTURE where it names a directory),
#                                    #   @K@ replaced by V, as BUS_ENV_DIR/c.conf
#   bus_env_start_daemon ARGS...     # cgbypassd --bus system ARGS, waits for org.cgbypass1
#   bus_env_start_cgbypassd ROOT ARGS... # ... with BUS_ENV_DIR/c.conf, no conf.d, cgroup root ROOT,
#                                    #   state directory BUS_ENV_DIR/state
#   bus_env_client_as USER ARGS...   # the bus client (client=) as USER: output in out, status in st
#   bus_env_expect_error NAME DESC   # ok if that call ($out, $st) failed with org.cgbypass1.Error.NAME
#   bus_env_key CGROUP KEY           # one entry of GetCgroup, asked as root
#   bus_env_snap DIR                 # DIR's files with mode, owner and checksum: to show that nothing changed
#   bus_env_start_owners             # bus_env_config sim-srv.conf owners.conf ($alice, $bob), then
#                                    #   bus_env_start_cgbypassd on root=BUS_ENV_DIR/root; "Bail out!" on failure
#   bus_env_owners_main ARGS...      # bus_env_main, polkitd, the users alice bob mallory, bus_env_start_owners
#   bus_env_stop_daemon [SIGNAL]     # SIGTERM by default; sets BUS_ENV_DAEMON_STATUS
#
# Everything made here is removed again at exit: processes (by pid), users,
# rules, the temp dir
# (BUS_ENV_KEEP=DIR copies the logs there first).
# Exported: DBUS_SYSTEM_BUS_ADDRESS, BUS_ENV_DIR, BUS_ENV_DAEMON_LOG.

BUS_ENV_DIR=
BUS_ENV_BUS_PID=
BUS_ENV_POLKIT_PID=
BUS_ENV_DAEMON_PID=
BUS_ENV_DAEMON_LOG=
BUS_ENV_DAEMON_STATUS=
BUS_ENV_USERS=()
BUS_ENV_FILES=()
BUS_ENV_SRC=
BUS_ENV_CGBYPASSD=

bus_env_skip() {
	echo "1..0 # SKIP $*"
	exit 0
}

bus_env_cleanup() {
	local pid
	# never stop half-way, even under set -e: wait returns the killed process's status
	for pid in "$BUS_ENV_DAEMON_PID" "$BUS_ENV_POLKIT_PID" "$BUS_ENV_BUS_PID"; do
		if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null || true
		fi
	done
	BUS_ENV_DAEMON_PID='' BUS_ENV_POLKIT_PID='' BUS_ENV_BUS_PID=''
	local u f
	for u in "${BUS_ENV_USERS[@]}"; do
		userdel "$u" >/dev/null 2>&1 || echo "# could not remove the test user $u" >&2
	done
	BUS_ENV_USERS=()
	for f in "${BUS_ENV_FILES[@]}"; do
		rm -f "$f"
	done
	BUS_ENV_FILES=()
	# BUS_ENV_KEEP=DIR keeps the logs (cgbypassd, dbus-daemon, polkitd) there
	if [ -n "${BUS_ENV_KEEP:-}" ] && [ -n "$BUS_ENV_DIR" ]; then
		mkdir -p "$BUS_ENV_KEEP" && cp "$BUS_ENV_DIR"/*.log "$BUS_ENV_KEEP"/ 2>/dev/null
	fi
	[ -n "$BUS_ENV_DIR" ] && rm -rf "$BUS_ENV_DIR"
	BUS_ENV_DIR=
}

# bus_env_init SRCDIR CGBYPASSD
bus_env_init() {
	BUS_ENV_SRC=${1:?source dir}
	BUS_ENV_CGBYPASSD=${2:?cgbypassd}
	[ "$(id -u)" = 0 ] || bus_env_skip "needs root (a private system bus, polkitd, test users)"
	local t
	for t in dbus-daemon busctl setpriv useradd userdel python3; do
		command -v "$t" >/dev/null 2>&1 || bus_env_skip "$t is not installed"
	done
	BUS_ENV_DIR=$(mktemp -d /tmp/cgb-bus-XXXXXX) || exit 1
	# the test users reach the bus socket and the sim directories below it
	chmod 0755 "$BUS_ENV_DIR"
	BUS_ENV_DAEMON_LOG=$BUS_ENV_DIR/cgbypassd.log
	trap bus_env_cleanup EXIT
	trap 'exit 130' INT TERM
	export BUS_ENV_DIR BUS_ENV_DAEMON_LOG
}

# bus_env_main SRCDIR CGBYPASSD BUS-CLIENT [...]: a bus test's arguments as src, daemon and client
bus_env_main() {
	src=${1:?source dir}
	daemon=${2:?cgbypassd}
	client=${3:?bus-client}
	bus_env_init "$src" "$daemon"
}

bus_env_require_polkitd() {
	[ -x /usr/lib/polkit-1/polkitd ] || [ -x /usr/libexec/polkitd ] || bus_env_skip "polkitd is not installed"
}

# bus_env_polkit_setup USER...: the private bus, the project's actions, the users (bus_env_add_user), polkitd
bus_env_polkit_setup() {
	local u
	bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }
	bus_env_install_policy || { echo "Bail out! cannot install the polkit actions"; exit 1; }
	for u in "$@"; do
		bus_env_add_user "$u" || { echo "Bail out! useradd failed"; exit 1; }
	done
	bus_env_start_polkit || { echo "Bail out! polkitd did not start"; exit 1; }
}

# bus_env_use_cgroup2 PREFIX: the scratch cgroup PREFIX-PID of the host's cgroup2 (CGB_TEST_CGROUP2: the
# first mount), with CGB_TEST_CONTROLLER (hugetlb) enabled above it. Sets mnt, X, scratch; skips where the
# mount is missing or read-only or lacks X. The caller's EXIT trap calls bus_env_cgroup2_cleanup.
BUS_ENV_CGROUP2_ADDED=
bus_env_use_cgroup2() {
	mnt=${CGB_TEST_CGROUP2:-$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)}
	X=${CGB_TEST_CONTROLLER:-hugetlb}
	if [ -z "$mnt" ] || [ ! -w "$mnt/cgroup.subtree_control" ]; then
		bus_env_skip "no writable cgroup2 mount"
	fi
	grep -qw "$X" "$mnt/cgroup.controllers" || bus_env_skip "the cgroup2 mount $mnt does not offer $X"
	scratch=$mnt/$1-$$
	if ! grep -qw "$X" "$mnt/cgroup.subtree_control"; then
		echo "+$X" >"$mnt/cgroup.subtree_control" || bus_env_skip "cannot enable $X in $mnt"
		BUS_ENV_CGROUP2_ADDED=1
	fi
	mkdir "$scratch" || bus_env_skip "cannot make $scratch"
}

# the scratch subtree bottom-up (a cgroup with a process left cannot go, and says so), X as it was
bus_env_cgroup2_cleanup() {
	if [ -n "${scratch:-}" ] && [ -d "$scratch" ]; then
		find "$scratch" -depth -type d -exec rmdir {} \; 2>/dev/null
		[ -d "$scratch" ] && echo "# could not remove $scratch" >&2
	fi
	[ -n "$BUS_ENV_CGROUP2_ADDED" ] && echo "-$X" >"$mnt/cgroup.subtree_control" 2>/dev/null
	BUS_ENV_CGROUP2_ADDED=
}

# bus_env_wait_for SECONDS CMD...: tap.sh's wait_for
bus_env_wait_for() {
	wait_for "$@"
}

bus_env_has_name() {
	busctl --system status "$1" >/dev/null 2>&1
}

bus_env_start_bus() {
	local conf=$BUS_ENV_DIR/system.conf sock=$BUS_ENV_DIR/system_bus_socket
	# The stock system bus policy, minus what makes it the machine's bus:
	# no user switch, fork, pidfile, syslog or activation helper; our socket;
	# absolute include dirs (relative ones resolve against the config's place).
	sed -e '/<user>/d' -e '/<fork\/>/d' -e '/<pidfile>/d' -e '/<syslog\/>/d' \
		-e '/<servicehelper>/d' -e '/<standard_system_servicedirs\/>/d' \
		-e "s|<listen>.*</listen>|<listen>unix:path=$sock</listen>|" \
		-e 's|<includedir>system.d</includedir>|<includedir>/usr/share/dbus-1/system.d</includedir>|' \
		-e "s|</busconfig>|  <include>$BUS_ENV_SRC/dbus/org.cgbypass1.conf</include>\n</busconfig>|" \
		/usr/share/dbus-1/system.conf >"$conf" || return 1
	grep -q "$sock" "$conf" || { echo "# system.conf has no <listen> to adapt" >&2; return 1; }
	dbus-daemon --config-file="$conf" --nofork --nopidfile --nosyslog 2>"$BUS_ENV_DIR/dbus.log" &
	BUS_ENV_BUS_PID=$!
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$sock
	unset DBUS_SESSION_BUS_ADDRESS
	bus_env_wait_for 10 busctl --system list || {
		echo "# dbus-daemon did not come up:" >&2
		sed 's/^/# /' "$BUS_ENV_DIR/dbus.log" >&2
		return 1
	}
}

# Install the project's polkit actions (polkitd reads only /usr/share/polkit-1/actions).
bus_env_install_policy() {
	local dst=/usr/share/polkit-1/actions/org.cgbypass1.policy src=$BUS_ENV_SRC/polkit/org.cgbypass1.policy tmp
	[ -d /usr/share/polkit-1/actions ] || return 1
	cmp -s "$dst" "$src" && return 0
	# A stale copy could hide an action the tree added: the tree's file
	# replaces it, by rename, so that a polkitd of a test running in parallel
	# never reads half a file. It stays (as a package's would): removing it at
	# exit would pull an action from under the tests still running.
	tmp=$(mktemp /usr/share/polkit-1/actions/.org.cgbypass1.policy.XXXXXX) || return 1
	if ! cp "$src" "$tmp" || ! chmod 0644 "$tmp" || ! mv -f "$tmp" "$dst"; then
		rm -f "$tmp"
		return 1
	fi
}

# bus_env_add_rules NAME TEXT: a rules file, read by polkitd at its start (and on change)
bus_env_add_rules() {
	local f=/etc/polkit-1/rules.d/10-cgbypass-test-$$-$1.rules
	mkdir -p /etc/polkit-1/rules.d
	printf '%s\n' "$2" >"$f" || return 1
	chmod 0644 "$f"
	BUS_ENV_FILES+=("$f")
}

# bus_env_allow_owner NAME USER: polkit says yes to USER's delegated action from a rules file, polkitd's
# real path (subject lookup on the bus, the JavaScript rules) without an authentication agent
bus_env_allow_owner() {
	bus_env_add_rules "$1" "polkit.addRule(function(action, subject) {
	if (action.id == 'org.cgbypass1.manage-delegated' && subject.user == '$2')
		return polkit.Result.YES;
	return polkit.Result.NOT_HANDLED;
});"
}

bus_env_remove_rules() {
	rm -f "/etc/polkit-1/rules.d/10-cgbypass-test-$$-$1.rules"
}

bus_env_start_polkit() {
	local polkitd=/usr/lib/polkit-1/polkitd
	[ -x "$polkitd" ] || polkitd=/usr/libexec/polkitd
	[ -x "$polkitd" ] || return 1
	# it drops to its own user; it finds the bus through DBUS_SYSTEM_BUS_ADDRESS
	"$polkitd" --no-debug >>"$BUS_ENV_DIR/polkitd.log" 2>&1 &
	BUS_ENV_POLKIT_PID=$!
	bus_env_wait_for 20 bus_env_has_name org.freedesktop.PolicyKit1 || {
		echo "# polkitd did not come up:" >&2
		sed 's/^/# /' "$BUS_ENV_DIR/polkitd.log" >&2
		return 1
	}
}

bus_env_stop_polkit() {
	[ -n "$BUS_ENV_POLKIT_PID" ] || return 0
	kill "$BUS_ENV_POLKIT_PID" 2>/dev/null
	wait "$BUS_ENV_POLKIT_PID" 2>/dev/null
	BUS_ENV_POLKIT_PID=
	bus_env_wait_for 10 eval '! bus_env_has_name org.freedesktop.PolicyKit1'
}

# bus_env_add_user VAR: VAR=cgbtN-PID, VAR_uid, VAR_gid
bus_env_add_user() {
	local var=$1 name
	name=cgbt${#BUS_ENV_USERS[@]}-$$
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
		--user-group "$name" >/dev/null 2>&1 || return 1
	BUS_ENV_USERS+=("$name")
	printf -v "$var" '%s' "$name"
	printf -v "${var}_uid" '%s' "$(id -u "$name")"
	printf -v "${var}_gid" '%s' "$(id -g "$name")"
}

# bus_env_as USER CMD...: root runs CMD itself
bus_env_as() {
	local u=$1
	shift
	[ "$u" = root ] && { env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" "$@"; return; }
	setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups \
		env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" "$@"
}

# bus_env_config FIXTURE... KEY=VALUE...: a configuration for the daemon, the fixtures one after the
# other; fails if a @KEY@ is left
bus_env_config() {
	local -a fixtures=() edits=(-e '/^# SPDX-License-Identifier:/d')
	local a
	for a in "$@"; do
		case $a in
		*=*) edits+=(-e "s|@${a%%=*}@|${a#*=}|g") ;;
		*/*) fixtures+=("$BUS_ENV_SRC/$a") ;;
		*) fixtures+=("$BUS_ENV_SRC/tests/bus/$a") ;;
		esac
	done
	sed "${edits[@]}" "${fixtures[@]}" >"$BUS_ENV_DIR/c.conf" || return 1
	! grep -n '@[A-Za-z_]*@' "$BUS_ENV_DIR/c.conf" >&2
}

# bus_env_start_daemon ARGS...: cgbypassd on the private bus, stderr to BUS_ENV_DAEMON_LOG
bus_env_start_daemon() {
	"$BUS_ENV_CGBYPASSD" --bus system "$@" >>"$BUS_ENV_DAEMON_LOG" 2>&1 &
	BUS_ENV_DAEMON_PID=$!
	BUS_ENV_DAEMON_STATUS=
	if ! bus_env_wait_for 30 bus_env_has_name org.cgbypass1; then
		echo "# cgbypassd did not come up:" >&2
		sed 's/^/# /' "$BUS_ENV_DAEMON_LOG" >&2
		bus_env_stop_daemon KILL
		return 1
	fi
}

# bus_env_start_cgbypassd ROOT ARGS...: the daemon as most bus tests start it
bus_env_start_cgbypassd() {
	local root=$1
	shift
	bus_env_start_daemon --config "$BUS_ENV_DIR/c.conf" --config-dir "$BUS_ENV_DIR/none" --cgroup-root "$root" \
		--state-directory "$BUS_ENV_DIR/state" "$@"
}

# bus_env_client_as USER ARGS...: "$client" ARGS as USER; its output (stderr too) in out, its status in st
bus_env_client_as() {
	local u=$1
	shift
	out=$(bus_env_as "$u" "$client" "$@" 2>&1)
	st=$?
}

bus_env_expect_error() {
	if [ "$st" -eq 1 ] && [[ $out == "org.cgbypass1.Error.$1: "* ]]; then
		ok "$2: $1"
	else
		not_ok "$2" "$out"
	fi
}

bus_env_key() {
	"$client" call GetCgroup "$1" | sed -n "s/^$2=//p"
}

bus_env_snap() {
	(cd "$1" && find . -type f -printf '%p %m %U\n' -exec md5sum {} + | sort)
}

bus_env_start_owners() {
	root=$BUS_ENV_DIR/root
	bus_env_config sim-srv.conf owners.conf alice="$alice" bob="$bob" || { echo "Bail out! the configuration"; exit 1; }
	bus_env_start_cgbypassd "$root" || { echo "Bail out! cgbypassd did not start"; exit 1; }
}

bus_env_owners_main() {
	bus_env_main "$@"
	bus_env_require_polkitd
	bus_env_polkit_setup alice bob mallory
	bus_env_start_owners
}

bus_env_daemon_alive() {
	[ -n "$BUS_ENV_DAEMON_PID" ] && kill -0 "$BUS_ENV_DAEMON_PID" 2>/dev/null
}

bus_env_stop_daemon() {
	[ -n "$BUS_ENV_DAEMON_PID" ] || return 0
	kill -"${1:-TERM}" "$BUS_ENV_DAEMON_PID" 2>/dev/null
	wait "$BUS_ENV_DAEMON_PID"
	BUS_ENV_DAEMON_STATUS=$?
	BUS_ENV_DAEMON_PID=
	return 0
}

# bus_env_stop_clean DESCRIPTION: stops the daemon; one test, that it exits 0 without a sanitizer report
bus_env_stop_clean() {
	bus_env_stop_daemon
	[ "$BUS_ENV_DAEMON_STATUS" = 0 ] && ! grep -qi sanitizer "$BUS_ENV_DAEMON_LOG" &&
		ok "$1" ||
		not_ok "exit status $BUS_ENV_DAEMON_STATUS" "$(grep -i -A8 sanitizer "$BUS_ENV_DAEMON_LOG")"
}

# TAP: ok, not_ok, check
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
bus_env_done() {
	tap_done
}
