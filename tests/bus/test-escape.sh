#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2012,SC2181,SC2154 # SC2154: users come from bus_env_add_user
#
# The escape suite: hostile requests from a delegated owner (and from a
# user with nothing delegated) to cgbypassd on the sim backend, with the
# real polkitd: path traversal, symlinks the owner plants inside its
# subtree, paths outside the delegation, other users' cgroups, empty and
# huge strings, invalid UTF-8, unknown controllers, '#'/'+'/'-' injected
# in controller names, the root cgroup, requests racing a rmdir. None may
# succeed; each gets a named error; nothing changes; the daemon lives on. TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_owners_main "$@"
state=$BUS_ENV_DIR/state

snap() {
	(cd "$root" && find . -printf '%p %y %m %U\n' | sort && find . -type f -exec md5sum {} + | sort)
}
alive() {
	"$client" call GetCgroup /srv/bob >/dev/null 2>&1
}

# the owner's legitimate setup, then symlinks it plants in its own subtree
out=$(bus_env_as "$alice" "$client" call SetSubtreeControl /srv/alice '#cpu #io' 2>&1) ||
	{ echo "Bail out! the owner's setup failed: $out"; exit 1; }
bus_env_as "$alice" ln -s ../bob "$root/srv/alice/evil"
bus_env_as "$alice" ln -s /etc "$root/srv/alice/etc"
before=$(snap)
# a state directory without the file holds no client change, as the daemon reads it
changes() { cat "$state/client-changes" 2>/dev/null || true; }
changes_before=$(changes)

named=0
# hostile USER NAME DESCRIPTION ARGS...: refused with exactly the error NAME (full name if it has a dot)
hostile() {
	local u=$1 name=$2 d=$3 out st
	shift 3
	[[ $name == *.* ]] || name=org.cgbypass1.Error.$name
	out=$(bus_env_as "$u" "$client" call "$@" 2>&1)
	st=$?
	if [ $st -eq 1 ] && [[ $out == "$name: "* ]] && alive; then
		named=$((named + 1))
		ok "$d: ${name##*.}"
	else
		not_ok "$d (want $name)" "$out"
	fi
}
long=$(printf 'a%.0s' $(seq 5000))
deep=$(printf '/a%.0s' $(seq 300))
comp=$(printf 'b%.0s' $(seq 300))

hostile "$alice" InvalidPath "path traversal with '..'" EnableController /srv/alice/../bob cpu
hostile "$alice" InvalidPath "path traversal to the root" SetSubtreeControl /srv/alice/../../.. +cpu
hostile "$alice" InvalidPath "a '.' component" EnableController /srv/alice/./x cpu
hostile "$alice" InvalidPath "'//' in the path" EnableController //srv/alice cpu
hostile "$alice" InvalidPath "a relative path" EnableController srv/alice cpu
hostile "$alice" InvalidPath "a trailing '/'" EnableController /srv/alice/ cpu
hostile "$alice" InvalidPath "an empty path" EnableController '' cpu
hostile "$alice" InvalidPath "a 5000-byte path" EnableController "/srv/alice/$long" cpu
hostile "$alice" InvalidPath "a path 300 levels deep" EnableController "/srv/alice$deep" cpu
hostile "$alice" InvalidPath "a 300-byte component" EnableController "/srv/alice/$comp" cpu
hostile "$alice" InvalidPath "a newline in the path" EnableController $'/srv/alice\n/srv/bob' cpu
hostile "$alice" InvalidPath "a control character in the path" EnableController $'/srv/alice/\x01' cpu
hostile "$alice" InvalidPath "white space in the path" EnableController '/srv/alice/a b' cpu
hostile "$alice" NoSuchCgroup "a symlink the owner planted, to another owner's cgroup" EnableController /srv/alice/evil cpu
hostile "$alice" NoSuchCgroup "a symlink the owner planted, to /etc" SetSubtreeControl /srv/alice/etc +cpu
hostile "$alice" NoSuchCgroup "a path through a planted symlink" EnableController /srv/alice/evil/x cpu
hostile "$alice" NoSuchCgroup "an interface file as a cgroup" EnableController /srv/alice/cgroup.procs cpu
hostile "$alice" NoSuchCgroup "a path through an interface file" EnableController /srv/alice/cgroup.procs/x cpu
hostile "$alice" NoSuchCgroup "odd but valid UTF-8 (U+202E)" EnableController $'/srv/alice/\u202e' cpu
hostile "$alice" NotDelegated "another owner's delegation root" EnableController /srv/bob cpu
hostile "$alice" NotDelegated "below another owner's delegation root" SetSubtreeControl /srv/bob/x '#cpu'
hostile "$alice" NotDelegated "the delegation's parent" SetSubtreeControl /srv +cpu
hostile "$alice" NotDelegated "a managed cgroup outside the delegation" EnableController /A cpu
hostile "$alice" NotManaged "a cgroup nobody manages" SetSubtreeControl /elsewhere +cpu
hostile "$alice" RootCgroup "the root cgroup, EnableController" EnableController / cpu
hostile "$alice" NotDelegated "the root cgroup, SetSubtreeControl" SetSubtreeControl / -cpu
hostile "$mallory" NotDelegated "a user without a delegation, in alice's" EnableController /srv/alice cpu
hostile "$mallory" NotDelegated "a user without a delegation, below alice's" SetSubtreeControl /srv/alice +cpu
hostile "$alice" UnknownController "an unknown controller" EnableController /srv/alice nosuch
hostile "$alice" UnknownController "a cgroup v1 controller" EnableController /srv/alice cpuacct
hostile "$alice" InvalidArgument "an implicit controller" EnableController /srv/alice perf_event
hostile "$alice" InvalidArgument "'#' injected in the controller name" EnableController /srv/alice '#cpu'
hostile "$alice" InvalidArgument "'+' injected in the controller name" BypassController /srv/alice '+cpu'
hostile "$alice" InvalidArgument "'-' injected in the controller name" EnableController /srv/alice -cpu
hostile "$alice" InvalidArgument "two controllers in one name" EnableController /srv/alice 'cpu io'
hostile "$alice" InvalidArgument "a change injected in the controller name" EnableController /srv/alice 'cpu -io'
hostile "$alice" InvalidArgument "an empty controller" EnableController /srv/alice ''
hostile "$alice" InvalidArgument "a 5000-byte controller" EnableController /srv/alice "$long"
hostile "$alice" InvalidArgument "an empty change" SetSubtreeControl /srv/alice ''
hostile "$alice" InvalidArgument "a change without a prefix" SetSubtreeControl /srv/alice cpu
hostile "$alice" InvalidArgument "a controller named twice" SetSubtreeControl /srv/alice '+cpu -cpu'
hostile "$alice" InvalidArgument "a newline in the change" SetSubtreeControl /srv/alice $'+cpu\n-io'
hostile "$alice" InvalidArgument "shell syntax in the change" SetSubtreeControl /srv/alice '+cpu;echo'
hostile "$alice" InvalidArgument "a 5000-byte change" SetSubtreeControl /srv/alice "+$long"
hostile "$alice" ControllerNotDelegated "an undelegated controller in the change" SetSubtreeControl /srv/alice '+memory'
hostile "$alice" ControllerNotDelegated "an undelegated controller among delegated ones" SetSubtreeControl /srv/alice '#cpu -memory'
hostile "$mallory" AccessDenied "Reload by a user" Reload
out=$(bus_env_as "$alice" "$client" call-sig EnableController su /srv/alice 7 2>&1)
[ $? -eq 1 ] && [[ $out == "org.freedesktop.DBus.Error.InvalidArgs: "* ]] && alive && named=$((named + 1)) &&
	ok "a call with the wrong signature: InvalidArgs" || not_ok "wrong signature" "$out"
[ "$named" -ge 30 ] && ok "$named hostile requests, each refused with a named error" || not_ok "only $named named refusals"

# invalid UTF-8 cannot be sent: sd-bus refuses to build the message (and dbus-daemon would drop the sender)
for bad in $'/srv/alice/\xff' $'/srv/alice/\xc0\xaf' $'/srv/alice/\xed\xa0\x80'; do
	out=$(bus_env_as "$alice" "$client" call EnableController "$bad" cpu 2>&1)
	[ $? -eq 2 ] && [[ $out == "local: "* ]] && alive && ok "invalid UTF-8 ($(printf '%q' "$bad")) never leaves the client" ||
		not_ok "invalid UTF-8 $(printf '%q' "$bad")" "$out"
done

[ "$before" = "$(snap)" ] && ok "none succeeded: every file and directory is as before" ||
	not_ok "the hierarchy changed" "$(diff <(echo "$before") <(snap) | head -20)"
[ "$changes_before" = "$(changes)" ] && ok "no client change recorded" ||
	not_ok "client changes" "$(changes)"
[ "$(readlink "$root/srv/alice/evil")" = ../bob ] && [ "$(cat "$root/srv/bob/cgroup.controllers")" = "#cpu #io memory" ] &&
	ok "the planted symlinks were not followed" || not_ok "symlinks"

# a symlink in place of a control file is replaced, never written through
bus_env_as "$alice" rm -f "$root/srv/alice/cgroup.subtree_control"
bus_env_as "$alice" ln -s ../bob/cgroup.subtree_control "$root/srv/alice/cgroup.subtree_control"
bob_sc=$(cat "$root/srv/bob/cgroup.subtree_control")
out=$(bus_env_as "$alice" "$client" call SetSubtreeControl /srv/alice '-io' 2>&1)
[ "$bob_sc" = "$(cat "$root/srv/bob/cgroup.subtree_control")" ] && [ ! -L "$root/srv/alice/cgroup.subtree_control" ] &&
	[ "$(cat "$root/srv/alice/cgroup.subtree_control")" = "#cpu" ] &&
	ok "a symlink the owner put in place of a control file is replaced, not written through" ||
	not_ok "control file symlink" "$out $(ls -la "$root/srv/alice/cgroup.subtree_control")"
bus_env_as "$alice" "$client" call SetSubtreeControl /srv/alice '#io' >/dev/null
bus_env_as "$alice" rm -f "$root/srv/alice/evil" "$root/srv/alice/etc"

# requests racing a rmdir: every answer ok or a named error, the daemon consistent after
(
	for _ in $(seq 60); do
		bus_env_as "$alice" mkdir "$root/srv/alice/race" 2>/dev/null
		sleep 0.02
		bus_env_as "$alice" rm -rf "$root/srv/alice/race" 2>/dev/null
	done
) &
racer=$!
bad=0 good=0 refused=0
for _ in $(seq 60); do
	out=$(bus_env_as "$alice" "$client" call EnableController /srv/alice/race cpu 2>&1)
	case $out in
	ok*) good=$((good + 1)) ;;
	org.cgbypass1.Error.*) refused=$((refused + 1)) ;;
	*) bad=$((bad + 1)) && echo "# unexpected: $out" ;;
	esac
done
wait "$racer"
bus_env_as "$alice" rm -rf "$root/srv/alice/race"
[ $bad -eq 0 ] && alive && ok "60 requests racing mkdir/rmdir: $good applied, $refused named errors, nothing else" ||
	not_ok "race: $bad unexpected answers" "$(tail -n 60 "$BUS_ENV_DAEMON_LOG")"
out=$("$client" call GetCgroup /srv/alice/race 2>&1)
[[ $out == "org.cgbypass1.Error.NoSuchCgroup: "* ]] && ! changes | grep -q '^change /srv/alice/race ' &&
	[ ! -e "$root/srv/alice/race" ] && ok "after the race: the cgroup is gone, and so is its client change" ||
	not_ok "after the race" "$out $(changes)"

bus_env_stop_clean "the daemon lived on: clean exit"

bus_env_done
