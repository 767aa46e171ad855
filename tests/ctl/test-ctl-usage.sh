#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015
# cgbypassctl without a daemon: --help, --version, every kind of bad usage
# (exit 2, one line on stderr naming the problem, nothing on stdout), and a
# bus nobody listens on (exit 1, one line). TAP output.
set -uo pipefail

ctl=${1:?path to cgbypassctl}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"
# shellcheck source=tests/ctl/ctl-test.sh
. "$(dirname "$0")/ctl-test.sh"

# No bus at all: a usage error must not need one, and a call must fail cleanly.
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$work/no-system-bus
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/no-session-bus

# run ARGS...: sets out (stdout), err (stderr), status
run() { capture "$ctl" "$@"; }

# usage DESCRIPTION PATTERN ARGS...: exit 2, one line matching PATTERN (a glob), no stdout
usage() {
	local d=$1 pattern=$2
	shift 2
	run "$@"
	# shellcheck disable=SC2053 # PATTERN is a glob
	if [ "$status" -eq 2 ] && [ -z "$out" ] && one_line "$err" && [[ $err == cgbypassctl:\ * ]] &&
		[[ $err == $pattern ]]; then
		ok "$d"
	else
		not_ok "$d" "cgbypassctl $*: exit $status, stdout '$out', stderr '$err'"
	fi
}

run --help
[ "$status" -eq 0 ] && [ -z "$err" ] && [[ $out == Usage:\ cgbypassctl\ * ]] &&
	[[ $out == *"Exit status:"* ]] && [[ $out == *"--no-ask-password"* ]] &&
	ok "--help: usage, exit status, options" || not_ok "--help" "$out$err"
for verb in "status" "show CGROUP" "tree CONTROLLER" "enable CGROUP CONTROLLER" \
	"bypass CGROUP CONTROLLER" "set CGROUP CHANGE..." "delegations" "delegate CGROUP USER CONTROLLER..." \
	"undelegate CGROUP" "reload" "help \[COMMAND\]"; do
	grep -q "^  $verb  *[A-Z]" <<<"$out" &&
		ok "--help describes '$verb' in one line" || not_ok "--help lacks '$verb'" "$out"
done
run -h
[ "$status" -eq 0 ] && [[ $out == Usage:* ]] && ok "-h is --help" || not_ok "-h" "$out$err"
run show --help
[ "$status" -eq 0 ] && [[ $out == Usage:* ]] && ok "--help after a verb" || not_ok "show --help" "$out$err"

# each verb's own help: 'VERB --help', 'help VERB', the same text; usage line, summary, details
for verb in status show tree enable bypass set delegations delegate undelegate reload; do
	run "$verb" --help
	a=$out a_status=$status
	run help "$verb"
	if [ "$a_status" -eq 0 ] && [ "$status" -eq 0 ] && [ -z "$err" ] && [ "$a" = "$out" ] &&
		[[ $(head -n 1 <<<"$out") == "Usage: cgbypassctl [OPTIONS...] $verb"* ]] &&
		[ "$(wc -l <<<"$out")" -ge 6 ] && [[ $out == *"cgbypassctl(1)"* ]]; then
		ok "'$verb --help' and 'help $verb': the verb's usage and details"
	else
		not_ok "help of $verb" "exit $a_status/$status: $a
---
$out$err"
	fi
done
run help
[ "$status" -eq 0 ] && [[ $out == Usage:\ cgbypassctl\ * ]] && [[ $out == *"Commands:"* ]] &&
	ok "help without a verb is --help" || not_ok "help" "$out$err"
run help help
[ "$status" -eq 0 ] && [[ $out == "Usage: cgbypassctl help [COMMAND]"* ]] && ok "help help" || not_ok "help help" "$out$err"
run --json enable --help
[ "$status" -eq 0 ] && [[ $out == "Usage: cgbypassctl [OPTIONS...] enable "* ]] &&
	ok "options before the verb do not hide its help" || not_ok "--json enable --help" "$out$err"
run --version
[ "$status" -eq 0 ] && [[ $out =~ ^cgbypassctl\ [0-9]+\.[0-9]+ ]] && one_line "$out" &&
	ok "--version" || not_ok "--version" "$out$err"

if [ -w /dev/full ]; then
	err=$("$ctl" --help 2>&1 >/dev/full)
	status=$?
	[ "$status" -eq 1 ] && one_line "$err" && [[ $err == *"Failed to write the output"* ]] &&
		ok "a failed write of the output: exit 1, one line" || not_ok "--help >/dev/full" "exit $status: $err"
fi

usage "no verb" "*Missing command*"
usage "no verb after options" "*Missing command*" --json --bus=session
usage "unknown verb" "*'frobnicate'*" frobnicate
usage "unknown long option" "*'--frobnicate'*" --frobnicate status
usage "unknown long option after the verb" "*'--frobnicate'*" status --frobnicate
usage "unknown short option before the verb" "*'-x'*" -x status
usage "--bus with a bad value" "*'nowhere'*" --bus=nowhere status
usage "--bus VALUE form with a bad value" "*'nowhere'*" --bus nowhere status
usage "--bus without a value" "*--bus*" status --bus
usage "status takes no arguments" "*many arguments*status*" status /A
usage "delegations takes no arguments" "*many arguments*delegations*" delegations x
usage "reload takes no arguments" "*many arguments*reload*" reload now
usage "show without a cgroup" "*few arguments*show CGROUP*" show
usage "show with two cgroups" "*many arguments*show*" show /A /B
usage "show with a relative path" "*'A/B'*absolute*" show A/B
usage "show with an empty path" "*''*absolute*" show ""
usage "tree without a controller" "*few arguments*tree CONTROLLER*" tree
usage "tree with an unknown controller" "*'cpux'*" tree cpux
usage "tree with a change instead of a name" "*'+cpu'*" tree +cpu
usage "enable without a controller" "*few arguments*enable CGROUP CONTROLLER*" enable /A
usage "enable with a relative path" "*'A'*absolute*" enable A cpu
usage "enable with an unknown controller" "*'bogus'*" enable /A bogus
usage "bypass with an unknown controller" "*'bogus'.*" bypass /A bogus
usage "a misspelled controller: did you mean" "*'cpux'; did you mean 'cpu'?" tree cpux
usage "a misspelled controller: swapped letters" "*'mmeory'; did you mean 'memory'?" enable /A mmeory
usage "a misspelled controller in set" "*'pdis'; did you mean 'pids'?" set /A +cpu -pdis
usage "nothing close: no suggestion" "*Unknown controller 'bogus'." enable /A bogus
usage "a misspelled command: did you mean" "*'treee'; did you mean 'tree'?" treee cpu
usage "a misspelled command: delegate" "*'delegat'; did you mean 'delegate'?" delegat /A 0 cpu
usage "help of an unknown command" "*'nosuchverb'*" help nosuchverb
usage "help with two commands" "*many arguments*help*" help show tree
usage "enable '#cpu' is a bypass: says which verb" "*'cgbypassctl bypass /A cpu'*" enable /A '#cpu'
usage "bypass '+cpu' is an enable: says which verb" "*'cgbypassctl enable /A cpu'*" bypass /A +cpu
usage "enable '-cpu': says that the parent's set does it" "*'-cpu'*set*" enable /A -cpu
# enable CGROUP +cpu means enable CGROUP cpu, and bypass '#cpu' bypass cpu: they reach the bus
for args in "enable /A +cpu" "bypass /A #cpu"; do
	# shellcheck disable=SC2086 # two words and a path
	run $args
	[ "$status" -eq 1 ] && one_line "$err" && [[ $err == *"cannot reach org.cgbypass1"* ]] &&
		ok "$args: accepted (it reaches the bus)" || not_ok "$args" "exit $status: $err"
done
usage "delegate without controllers" "*few arguments*delegate CGROUP USER CONTROLLER...*" delegate /A root
usage "delegate to an unknown user" "*Unknown user 'nosuchuser-$$'*" delegate /A "nosuchuser-$$" cpu
usage "delegate to a uid out of range" "*'4294967295' is not a uid*" delegate /A 4294967295 cpu
usage "delegate to a uid with junk" "*'12x' is not a uid*" delegate /A 12x cpu
usage "delegate with a relative path" "*'A'*absolute*" delegate A root cpu
usage "delegate with a misspelled controller" "*did you mean 'io'?" delegate /A root cpu oi
usage "undelegate without a cgroup" "*few arguments*undelegate CGROUP*" undelegate
usage "undelegate with a relative path" "*'A'*absolute*" undelegate A
usage "--lifetime with a bad value" "*'forever'*" --lifetime=forever delegate /A root cpu
usage "--lifetime without a value" "*--lifetime*" delegate /A root cpu --lifetime
usage "--no-create is for delegate only" "*'--no-create' is for 'delegate', not 'enable'*" --no-create enable /A cpu
usage "--lifetime is for delegate only" "*'--lifetime' is for 'delegate', not 'show'*" show /A --lifetime=persistent
# a uid needs no user entry (user-namespace ranges): accepted, it reaches the bus
run delegate /A 100000 cpu io --lifetime persistent --no-create
[ "$status" -eq 1 ] && one_line "$err" && [[ $err == *"cannot reach org.cgbypass1"* ]] &&
	ok "delegate to a uid without a user entry: accepted" || not_ok "delegate 100000" "exit $status: $err"usage "bypass with three arguments" "*many arguments*bypass*" bypass /A cpu io
usage "set without a change" "*few arguments*set CGROUP CHANGE...*" set /A
usage "set with only blanks" "*No change*" set /A " "
usage "set with a change lacking + - #" "*'cpu'*+CONTROLLER*" set /A cpu
usage "set with a bare sign" "*'+'*" set /A +
usage "set with an unknown controller" "*'bogus'*" set /A +cpu '#bogus'
usage "set: an unknown controller inside a quoted list" "*'nope'*" set /A "+cpu -nope"
usage "set: a relative path is judged before the changes" "*'A'*absolute*" set A -memory
# '-memory' after the verb is a change, not an option: it reaches the bus (which is not there)
run set /A -memory
[ "$status" -eq 1 ] && one_line "$err" && [[ $err == *"cannot reach org.cgbypass1"* ]] &&
	ok "set /A -memory: the change is an argument, not an option" || not_ok "set -memory" "$status: $err"
run set /A -- -memory
[ "$status" -eq 1 ] && [[ $err == *"cannot reach"* ]] && ok "-- ends the options" || not_ok "--" "$status: $err"
# options after the verb
run show /A --json --bus=session --no-ask-password
[ "$status" -eq 1 ] && [[ $err == *"on the session bus"* ]] &&
	ok "options after the verb are options" || not_ok "options after the verb" "$status: $err"

# nobody on the bus's address
for bus in system session; do
	run --bus "$bus" status
	[ "$status" -eq 1 ] && [ -z "$out" ] && one_line "$err" &&
		[[ $err == "cgbypassctl: cannot reach org.cgbypass1 on the $bus bus: "*"; is cgbypassd running?" ]] &&
		ok "no $bus bus: exit 1, one line" || not_ok "no $bus bus" "exit $status: $err"
done
run --bus system enable /A cpu
[ "$status" -eq 1 ] && one_line "$err" && [[ $err == *"cannot reach org.cgbypass1 on the system bus"* ]] &&
	ok "a change without a bus: exit 1, one line" || not_ok "enable without a bus" "exit $status: $err"
out=$(env -u DBUS_SESSION_BUS_ADDRESS -u XDG_RUNTIME_DIR "$ctl" --bus=session status 2>&1)
status=$?
[ "$status" -eq 1 ] && one_line "$out" && [[ $out == *"DBUS_SESSION_BUS_ADDRESS"* ]] &&
	ok "no session bus address: says which variable" || not_ok "no session address" "exit $status: $out"

tap_done
