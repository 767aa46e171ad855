#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# cgbypass-oci-hook against cgbypassd (sim backend) on a private system bus
# with the real polkitd: crafted OCI states and bundles, as a runtime hands
# them to a hook. The good cases (a delegation of the container's cgroup to
# its owner, the controllers re-enabled there, the owner's writes below it,
# the poststop end) and every error path, each of which changes nothing.
# On the sim backend only cgbypassd makes cgroups, so "the runtime made the
# container's cgroup" is played by AddDelegation create=true and
# RemoveDelegation (the cgroup stays); the VM test (guest-crun.sh) runs the
# hook under crun on a real cgroup2 hierarchy.
# TAP.
set -uo pipefail

src=${1:?source dir}
daemon=${2:?cgbypassd}
hook=${3:?cgbypass-oci-hook}
ctl=${4:?cgbypassctl}
# shellcheck source=tests/bus/bus-env.sh
. "$src/tests/bus/bus-env.sh"
bus_env_init "$src" "$daemon"
[ -x /usr/lib/polkit-1/polkitd ] || [ -x /usr/libexec/polkitd ] || bus_env_skip "polkitd is not installed"
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }
bus_env_install_policy || { echo "Bail out! cannot install the polkit actions"; exit 1; }
for u in alice bob; do
	bus_env_add_user "$u" || { echo "Bail out! useradd failed"; exit 1; }
done
bus_env_start_polkit || { echo "Bail out! polkitd did not start"; exit 1; }

D=$BUS_ENV_DIR
root=$D/root
bus_env_config tests/oci-hook/containers.conf || { echo "Bail out! the configuration"; exit 1; }
mkdir -p "$D/none"
bus_env_start_daemon --config "$D/c.conf" --config-dir "$D/none" --cgroup-root "$root" \
	--state-directory "$D/state" || { echo "Bail out! cgbypassd did not start"; exit 1; }

# the runtime's part: the container's cgroup exists before the hook runs
make_cgroup() {
	"$ctl" --no-ask-password delegate "$1" 0 >/dev/null 2>&1 || "$ctl" --no-ask-password delegate "$1" "$alice" cpu >/dev/null &&
		"$ctl" --no-ask-password undelegate "$1" >/dev/null
}
delegations() {
	"$ctl" --json delegations
}
# bundle DIR CONFIG-JSON: a bundle with that config.json
bundle() {
	mkdir -p "$1" && printf '%s\n' "$2" >"$1/config.json"
}
# state ID STATUS BUNDLE ANNOTATIONS-JSON [PID]
state() {
	printf '{"ociVersion":"1.0.2","id":"%s","status":"%s","pid":%s,"bundle":"%s","annotations":%s}\n' \
		"$1" "$2" "${5:-$$}" "$3" "$4"
}
# run_hook STATE [ARGS...]: HOOK_RC, HOOK_ERR (stderr)
run_hook() {
	local st=$1
	shift
	HOOK_ERR=$(printf '%s' "$st" | "$hook" "$@" 2>&1 >"$D/hook.out")
	HOOK_RC=$?
}
# creating_refused BUNDLE ANNOTATIONS-JSON DESCRIPTION TEXT [PID]: the hook at "creating" of container e
# refuses with exit 1 and TEXT (see refused)
creating_refused() {
	run_hook "$(state e creating "$1" "$2" "${5:-$$}")"
	refused "$3" 1 "$4"
}
# controllers CGROUP: GetCgroup's controllers, one line, sorted
controllers() {
	"$ctl" --json show "$1" | python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["controllers"])))'
}
# refused DESC RC TEXT: the hook failed with RC, one line on stderr containing TEXT, delegations unchanged
refused() {
	local desc=$1 rc=$2 text=$3 now
	now=$(delegations)
	if [ "$HOOK_RC" -ne "$rc" ]; then
		not_ok "$desc" "exit $HOOK_RC, not $rc: $HOOK_ERR"
	elif [ "$(printf '%s\n' "$HOOK_ERR" | wc -l)" -ne 1 ] || [[ $HOOK_ERR != *"$text"* ]]; then
		not_ok "$desc" "stderr is not one line with '$text': $HOOK_ERR"
	elif [ "$now" != "$before" ]; then
		not_ok "$desc" "the delegations changed: $now"
	else
		ok "$desc"
	fi
}

# ---- usage ----
out=$("$hook" --help) && [[ $out == *org.cgbypass1.enable* ]] && [[ $out == *poststop* ]] &&
	ok "--help describes the annotations and stages" || not_ok "--help" "$out"
out=$("$hook" --version) && [[ $out =~ ^cgbypass-oci-hook\ [0-9] ]] && ok "--version" || not_ok "--version" "$out"
before=$(delegations)
run_hook '{}' --stage createContainer
refused "--stage createContainer is refused: it runs in the container, without the system bus" 2 "createContainer"
run_hook '{}' --stage
refused "--stage without a value" 2 "needs a value"
run_hook '{}' extra
refused "an unexpected argument" 2 "unexpected argument 'extra'"

# ---- the good cases ----
good='{"ociVersion":"1.0.2","linux":{"cgroupsPath":"/ctr/c1"},"process":{"user":{"uid":'$alice_uid',"gid":'$alice_gid'}}}'
bundle "$D/b1" "$good"
make_cgroup /ctr/c1 || { echo "Bail out! cannot make /ctr/c1"; exit 1; }
check "before the hook, /ctr/c1 has cpu and io bypassed" test "$(controllers /ctr/c1)" = "#cpu #io memory"

# no annotation: at most a Reload (as root), best effort: never a failure
before=$(delegations)
HOOK_ERR=$(state c0 creating "$D/b1" '{"other":"x"}' | DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent "$hook" 2>&1)
HOOK_RC=$?
[ "$HOOK_RC" -eq 0 ] && [ -z "$HOOK_ERR" ] && [ "$(delegations)" = "$before" ] &&
	ok "a container without org.cgbypass1.enable: exit 0, silent, no bus needed" || not_ok "no annotation" "$HOOK_RC $HOOK_ERR"
run_hook "$(state c0 creating "$D/b1" '{"other":"x"}')"
[ "$HOOK_RC" -eq 0 ] && [ -z "$HOOK_ERR" ] && [ "$(delegations)" = "$before" ] &&
	ok "... with the daemon there: exit 0, silent, nothing delegated" || not_ok "no annotation, daemon there" "$HOOK_RC $HOOK_ERR"
# what crun's cgroupfs manager does to the parent before the hook runs: every controller enabled
sc_before=$(cat "$root/ctr/cgroup.subtree_control")
printf 'cpu io memory\n' >"$root/ctr/cgroup.subtree_control"
run_hook "$(state c0 creating "$D/b1" '{"other":"x"}')"
[ "$HOOK_RC" -eq 0 ] && [ "$(cat "$root/ctr/cgroup.subtree_control")" = "$sc_before" ] &&
	[ "$(controllers /ctr/c1)" = "#cpu #io memory" ] &&
	ok "... after the runtime rewrote the parent's subtree_control: the hook's reload puts the bypass back" ||
	not_ok "no annotation: the policy put back" "$HOOK_RC $HOOK_ERR; '$(cat "$root/ctr/cgroup.subtree_control")', not '$sc_before'"
bundle "$D/b0" '{"ociVersion":"1.0.2","linux":{"cgroupsPath":"/no/such/../cgroup"}}'
run_hook "$(state c0 creating "$D/b0" '{}')"
[ "$HOOK_RC" -eq 0 ] && [ -z "$HOOK_ERR" ] && ok "... and with a cgroupsPath cgbypassd would refuse: exit 0, silent" ||
	not_ok "no annotation, a bad cgroupsPath" "$HOOK_RC $HOOK_ERR"

run_hook "$(state c1 creating "$D/b1" '{"org.cgbypass1.enable":"cpu,io"}')"
[ "$HOOK_RC" -eq 0 ] && [ -z "$HOOK_ERR" ] && ok "createRuntime: exit 0, silent" || not_ok "createRuntime" "$HOOK_RC $HOOK_ERR"
check "the delegation: /ctr/c1 to the process.user.uid, cpu and io" \
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(not any(x["cgroup"]=="/ctr/c1" and x["uid"]==int(sys.argv[2]) and sorted(x["controllers"])==["cpu","io"] for x in d))' \
	"$(delegations)" "$alice_uid"
check "cpu and io are re-enabled in /ctr/c1" test "$(controllers /ctr/c1)" = "cpu io memory"
check "the owner has the cgroup's directory and cgroup.procs" \
	test "$(stat -c %u "$root/ctr/c1")/$(stat -c %u "$root/ctr/c1/cgroup.procs")" = "$alice_uid/$alice_uid"
# the owner's job: a group of its own, cpu for it, its cpu.weight
check "the owner makes a child" bus_env_as "$alice" mkdir "$root/ctr/c1/app"
check "the owner enables cpu for its children through the daemon" \
	bus_env_as "$alice" "$ctl" --no-ask-password set /ctr/c1 +cpu
check "the owner writes cpu.weight in its child" bus_env_as "$alice" sh -c "echo 50 >'$root/ctr/c1/app/cpu.weight'"
check "... and it holds" test "$(cat "$root/ctr/c1/app/cpu.weight")" = 50
! bus_env_as "$alice" sh -c "echo 50 >'$root/ctr/c1/cpu.weight'" 2>/dev/null &&
	ok "the container's own cpu.weight stays root's (it bounds the owner)" || not_ok "the root's cpu.weight is the owner's"
! bus_env_as "$bob" "$ctl" --no-ask-password set /ctr/c1 +io 2>/dev/null &&
	ok "another user cannot change the container's cgroup" || not_ok "bob changed /ctr/c1"

# a second start of the same cgroup: the daemon refuses, the first delegation stays
before=$(delegations)
run_hook "$(state c1 creating "$D/b1" '{"org.cgbypass1.enable":"cpu,io"}')"
refused "a second delegation of /ctr/c1: the daemon's refusal, with its error name" 1 "org.cgbypass1.Error.DelegationConflict"

# poststop: the delegation ends (lifetime cgroup ends it by itself when the runtime removes the cgroup)
run_hook "$(state c1 stopped "$D/b1" '{"org.cgbypass1.enable":"cpu,io"}' 0)"
[ "$HOOK_RC" -eq 0 ] && ! delegations | grep -q '"/ctr/c1"' && ok "poststop (status stopped) ends the delegation" ||
	not_ok "poststop" "$HOOK_RC $HOOK_ERR $(delegations)"
check "the files go back to root" test "$(stat -c %u "$root/ctr/c1/cgroup.procs")" = 0
run_hook "$(state c1 stopped "$D/b1" '{"org.cgbypass1.enable":"cpu,io"}' 0)"
[ "$HOOK_RC" -eq 0 ] && [ -z "$HOOK_ERR" ] && ok "poststop when the delegation is gone already: exit 0" ||
	not_ok "poststop again" "$HOOK_RC $HOOK_ERR"
rm "$D/b1/config.json"
run_hook "$(state c1 stopped "$D/b1" '{"org.cgbypass1.enable":"cpu,io"}' 0)"
[ "$HOOK_RC" -eq 0 ] && ok "poststop with the bundle gone: exit 0 (nothing names the cgroup; the lifetime ends it)" ||
	not_ok "poststop without a bundle" "$HOOK_RC $HOOK_ERR"
bundle "$D/b1" "$good"

# the owner annotation wins over process.user; --stage= picks the stage
make_cgroup /ctr/c2 || { echo "Bail out! cannot make /ctr/c2"; exit 1; }
bundle "$D/b2" '{"linux":{"cgroupsPath":"/ctr/c2"},"process":{"user":{"uid":0,"gid":0}}}'
run_hook "$(state c2 created "$D/b2" '{"org.cgbypass1.enable":"cpu","org.cgbypass1.owner":"'"$bob"'"}')" --stage=prestart
[ "$HOOK_RC" -eq 0 ] && delegations | python3 -c 'import json,sys; sys.exit(not any(x["cgroup"]=="/ctr/c2" and x["uid"]==int(sys.argv[1]) for x in json.load(sys.stdin)))' "$bob_uid" &&
	ok "org.cgbypass1.owner (a user name) is the owner" || not_ok "owner annotation" "$HOOK_RC $HOOK_ERR $(delegations)"
check "only cpu was asked: io stays bypassed" test "$(controllers /ctr/c2)" = "#io cpu memory"
run_hook "$(state c2 running "$D/b2" '{"org.cgbypass1.enable":"cpu"}')" --stage poststop
[ "$HOOK_RC" -eq 0 ] && ! delegations | grep -q '"/ctr/c2"' && ok "--stage poststop ends it whatever the status" ||
	not_ok "--stage poststop" "$HOOK_RC $HOOK_ERR"

# a user namespace: process.user.uid through linux.uidMappings
make_cgroup /ctr/c3 || { echo "Bail out! cannot make /ctr/c3"; exit 1; }
bundle "$D/b3" '{"linux":{"cgroupsPath":"/ctr/c3","uidMappings":[{"containerID":0,"hostID":'"$bob_uid"',"size":1},{"containerID":1000,"hostID":'"$alice_uid"',"size":10}]},"process":{"user":{"uid":1005,"gid":0}}}'
run_hook "$(state c3 creating "$D/b3" '{"org.cgbypass1.enable":"io"}')"
[ "$HOOK_RC" -eq 0 ] && delegations | python3 -c 'import json,sys; sys.exit(not any(x["cgroup"]=="/ctr/c3" and x["uid"]==int(sys.argv[1])+5 for x in json.load(sys.stdin)))' "$alice_uid" &&
	ok "uid 1005 in the container is hostID+5 through linux.uidMappings" || not_ok "uid mapping" "$HOOK_RC $HOOK_ERR $(delegations)"
check "io re-enabled in /ctr/c3" test "$(controllers /ctr/c3)" = "#cpu io memory"

# a rootful container without an owner: no delegation (cgbypassd delegates to
# unprivileged users only); root re-enables where the configuration manages the cgroup
bundle "$D/b4" '{"linux":{"cgroupsPath":"/ctr/root-managed"},"process":{"user":{"uid":0,"gid":0}}}'
before=$(delegations)
run_hook "$(state c4 creating "$D/b4" '{"org.cgbypass1.enable":"cpu"}')"
[ "$HOOK_RC" -eq 0 ] && [ "$(delegations)" = "$before" ] && [ "$(controllers /ctr/root-managed)" = "#io cpu memory" ] &&
	ok "owner root, a configured cgroup: cpu re-enabled, no delegation" ||
	not_ok "owner root" "$HOOK_RC $HOOK_ERR $(controllers /ctr/root-managed)"
make_cgroup /ctr/c4 || { echo "Bail out! cannot make /ctr/c4"; exit 1; }
bundle "$D/b4" '{"linux":{"cgroupsPath":"/ctr/c4"},"process":{"user":{"uid":0,"gid":0}}}'
run_hook "$(state c4 creating "$D/b4" '{"org.cgbypass1.enable":"cpu"}')"
refused "owner root, a cgroup nothing manages: the daemon's NotManaged, and the fix" 1 \
	"(org.cgbypass1.Error.NotManaged); the container's owner is root"
check "... and /ctr/c4 keeps cpu bypassed" test "$(controllers /ctr/c4)" = "#cpu #io memory"

# a parent that enables the controller itself: nothing to re-enable
make_cgroup /srv/c5 || { echo "Bail out! cannot make /srv/c5"; exit 1; }
bundle "$D/b5" '{"linux":{"cgroupsPath":"/srv/c5"},"process":{"user":{"uid":'"$alice_uid"'}}}'
run_hook "$(state c5 creating "$D/b5" '{"org.cgbypass1.enable":"cpu"}')"
[ "$HOOK_RC" -eq 0 ] && [ "$(controllers /srv/c5)" = "cpu memory" ] && delegations | grep -q '"/srv/c5"' &&
	ok "the parent enables cpu: delegated, nothing to re-enable" || not_ok "parent enables" "$HOOK_RC $HOOK_ERR"
# annotations from config.json when the state has none
make_cgroup /ctr/c6 || { echo "Bail out! cannot make /ctr/c6"; exit 1; }
bundle "$D/b6" '{"linux":{"cgroupsPath":"/ctr/c6"},"process":{"user":{"uid":'"$alice_uid"'}},"annotations":{"org.cgbypass1.enable":"cpu"}}'
HOOK_ERR=$(printf '{"ociVersion":"1.0.2","id":"c6","status":"creating","pid":1,"bundle":"%s"}' "$D/b6" | "$hook" 2>&1)
HOOK_RC=$?
[ "$HOOK_RC" -eq 0 ] && [ "$(controllers /ctr/c6)" = "#io cpu memory" ] &&
	ok "a state without annotations: config.json's" || not_ok "config annotations" "$HOOK_RC $HOOK_ERR"

# ---- errors: each one line, exit 1, nothing changed ----
make_cgroup /ctr/e || { echo "Bail out! cannot make /ctr/e"; exit 1; }
bundle "$D/be" '{"linux":{"cgroupsPath":"/ctr/e"},"process":{"user":{"uid":'"$alice_uid"'}}}'
before=$(delegations)
e_before=$(controllers /ctr/e)
en='{"org.cgbypass1.enable":"cpu"}'
run_hook 'not json'
refused "a state that is not JSON" 1 "is not JSON"
run_hook '{"id":"x","bundle":"/b"} {}'
refused "text after the state's JSON value" 1 "text after its JSON value"
run_hook '[1,2]'
refused "a state that is not an object" 1 "not a JSON object"
run_hook '{"bundle":"'"$D/be"'","annotations":'"$en"'}'
refused "a state without id" 1 "no container 'id'"
run_hook '{"id":"e","annotations":'"$en"'}'
refused "a state without bundle" 1 "no 'bundle'"
run_hook '{"id":"e","bundle":"rel/b","annotations":'"$en"'}'
refused "a relative bundle" 1 "is not an absolute path"
run_hook '{"id":"e","pid":"12","bundle":"'"$D/be"'","annotations":'"$en"'}'
refused "a pid that is a string" 1 "'pid' is not an integer"
run_hook '{"id":"e","pid":1,"bundle":"'"$D/be"'","annotations":{"org.cgbypass1.enable":7}}'
refused "an annotation that is not a string" 1 "is not a string"
creating_refused "$D/nobundle" "$en" "a bundle without config.json" "cannot read '$D/nobundle/config.json'"
bundle "$D/bbad" '{"linux":'
creating_refused "$D/bbad" "$en" "a config.json that is not JSON" "config.json is not JSON: it ends inside a value"
bundle "$D/bbad" '{"linux":{"cgroupsPath":5}}'
creating_refused "$D/bbad" "$en" "a cgroupsPath that is not a string" "'cgroupsPath' is not a string"
creating_refused "$D/be" '{"org.cgbypass1.enable":"cpu,bogus"}' "an unknown controller, before any bus call" "unknown controller 'bogus'"
creating_refused "$D/be" '{"org.cgbypass1.enable":" "}' "an empty controller list" "names no controller"
creating_refused "$D/be" '{"org.cgbypass1.enable":"cpu","org.cgbypass1.enabled":"io"}' "an unknown org.cgbypass1 annotation (a typo)" "unknown annotation 'org.cgbypass1.enabled'"
creating_refused "$D/be" '{"org.cgbypass1.enable":"cpu","org.cgbypass1.owner":"no-such-user-x"}' "an owner that is no user" "no such user 'no-such-user-x'"
creating_refused "$D/be" '{"org.cgbypass1.enable":"cpu","org.cgbypass1.owner":"12x"}' "an owner that is neither name nor uid" "neither a user name nor a uid"
bundle "$D/bnouser" '{"linux":{"cgroupsPath":"/ctr/e"}}'
creating_refused "$D/bnouser" "$en" "no process.user and no owner annotation" "no process.user.uid"
bundle "$D/bmap" '{"linux":{"cgroupsPath":"/ctr/e","uidMappings":[{"containerID":0,"hostID":100000,"size":10}]},"process":{"user":{"uid":50}}}'
creating_refused "$D/bmap" "$en" "a uid outside the uid mappings" "in none of linux.uidMappings"
bundle "$D/bdots" '{"linux":{"cgroupsPath":"/ctr/../e"},"process":{"user":{"uid":'"$alice_uid"'}}}'
creating_refused "$D/bdots" "$en" "a cgroupsPath with '..'" "'/ctr/../e'"
bundle "$D/brel" '{"linux":{"cgroupsPath":"ctr/e"},"process":{"user":{"uid":'"$alice_uid"'}}}'
creating_refused "$D/brel" "$en" "a relative cgroupsPath and a pid that is gone" \
	"cannot read the cgroup of the container's process 2147483000" 2147483000
run_hook "$(state e stopped "$D/brel" "$en" 0)" --stage createRuntime
refused "a relative cgroupsPath and no pid" 1 "cannot tell the container's cgroup"
bundle "$D/bmissing" '{"linux":{"cgroupsPath":"/ctr/missing"},"process":{"user":{"uid":'"$alice_uid"'}}}'
run_hook "$(state e creating "$D/bmissing" "$en")"
refused "a cgroup that does not exist: the daemon's NoSuchCgroup (never created by the hook)" 1 \
	"org.cgbypass1.Error.NoSuchCgroup"
[ ! -e "$root/ctr/missing" ] && ok "... and it was not made" || not_ok "the hook made /ctr/missing"
run_hook "$(state e creating "$D/be" '{"org.cgbypass1.enable":"cpu,pids"}')"
refused "a controller the parent neither enables nor bypasses: refused, the delegation rolled back" 1 \
	"cannot have 'pids'"
check "... and /ctr/e's controllers are as before" test "$(controllers /ctr/e)" = "$e_before"
run_hook "$(state e creating "$D/be" '{"org.cgbypass1.enable":"cpu","org.cgbypass1.owner":"'"$bob_uid"'"}')" \
	--stage poststart </dev/null
# (that one is good: poststart is a setup stage); undo it for the next checks
[ "$HOOK_RC" -eq 0 ] && ok "--stage poststart delegates too" || not_ok "poststart" "$HOOK_RC $HOOK_ERR"
"$ctl" --no-ask-password undelegate /ctr/e >/dev/null
before=$(delegations)
HOOK_ERR=$(state e creating "$D/be" "$en" | DBUS_SYSTEM_BUS_ADDRESS=unix:path=$D/nobus "$hook" 2>&1)
HOOK_RC=$?
refused "no system bus" 1 "cannot connect to the system bus"
HOOK_ERR=$(head -c 2000000 /dev/zero | tr '\0' ' ' | "$hook" 2>&1)
HOOK_RC=$?
refused "a state larger than 1 MiB" 1 "larger than 1 MiB"

bus_env_daemon_alive && ok "cgbypassd is still running" || not_ok "cgbypassd died" "$(tail -5 "$BUS_ENV_DAEMON_LOG")"
bus_env_done
