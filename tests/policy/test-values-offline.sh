#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015
# Values in policy as a user meets them, with cgbypassd on the sim backend:
# --check-config names each bad value at FILE:LINE, --plan shows the value
# writes after the writes that make the files appear, --apply-once writes
# them, a second --plan is empty and a second apply writes nothing, a changed
# value is one write, and a value the kernel refuses changes nothing. TAP.
set -uo pipefail

daemon=${1:?path to cgbypassd}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

conf() { # FIXTURE TARGET: tests/policy/values/FIXTURE without its comment header, as TARGET
	grep -v '^#' "$(dirname "${BASH_SOURCE[0]}")/values/$1" >"$2"
}
run() { # conf, mode...
	local conf=$1
	shift
	"$daemon" --config "$conf" --config-dir "$work/none" --backend sim --cgroup-root "$work/root" \
		--state-directory "$work/state" "$@"
}
expect() { # description, expected, actual
	[ "$2" == "$3" ] && ok "$1" || not_ok "$1" "$(diff <(echo "$2") <(echo "$3"))"
}

conf good.conf "$work/good.conf"

out=$(run "$work/good.conf" --check-config 2>&1) && ok "--check-config takes values" ||
	not_ok "--check-config takes values" "$out"
out=$(run "$work/good.conf" --plan 2>&1)
expect "--plan: the value writes follow the writes that make their files appear" "mkdir work.slice
mkdir work.slice/job
write . cgroup.subtree_control +cpu +memory +pids
write work.slice cgroup.subtree_control +memory
write work.slice memory.max 4G
write work.slice cpu.weight 50
write work.slice pids.max 1000
write work.slice/job memory.high 1G" "$out"
out=$(run "$work/good.conf" --apply-once 2>&1) && [[ $out == *"8 operation(s)"* ]] &&
	ok "--apply-once applies them" || not_ok "--apply-once applies them" "$out"
expect "the kernel's reading of memory.max = 4G" "4294967296" "$(cat "$work/root/work.slice/memory.max")"
expect "the kernel's reading of memory.high = 1G" "1073741824" "$(cat "$work/root/work.slice/job/memory.high")"
expect "--plan is empty when in sync" "" "$(run "$work/good.conf" --plan 2>&1)"
out=$(run "$work/good.conf" --apply-once 2>&1)
[[ $out == *"0 operation(s)"* ]] && ok "re-apply: zero writes" || not_ok "re-apply: zero writes" "$out"

sed -e 's/^memory.max = 4G/memory.max = 6G/' -e '/^pids.max/d' "$work/good.conf" >"$work/changed.conf"
expect "a changed value is one write; a value taken out is left" "write work.slice memory.max 6G" \
	"$(run "$work/changed.conf" --plan 2>&1)"
run "$work/changed.conf" --apply-once >/dev/null 2>&1
expect "... and applied" "6442450944 1000" \
	"$(cat "$work/root/work.slice/memory.max") $(cat "$work/root/work.slice/pids.max")"

# refused at check time, each at its line
conf bad.conf "$work/bad.conf"
out=$(run "$work/bad.conf" --check-config 2>&1)
rc=$?
f=$work/bad.conf
expect "--check-config: each problem at FILE:LINE" "$f:7: memory.max: the kernel refuses '4 GB' (EINVAL); it takes 'max' or a number of bytes with an optional K, M, G, T, P or E suffix
$f:11: cpu.weight.nice: cpu.weight at line 10 sets the same CPU share; keep one
$f:19: memory.max: /home/alice is below the delegation root /home ($f:13): its files belong to the owner; set values on the delegation root to bound the owner
cgbypassd: The configuration has 3 problem(s); nothing was changed." "$out"
[ $rc -eq 1 ] && ok "--check-config exits 1" || not_ok "--check-config exits 1" "rc=$rc"
conf bad-files.conf "$f"
out=$(run "$f" --check-config 2>&1)
expect "--check-config: files the cgroup will not have under the policy" "$f:8: /work.slice: pids.max: pids is bypassed there, so the cgroup has no pids files; re-enable it ('controllers = +pids') to set them
$f:9: /work.slice: io.max: io is not enabled for the cgroup (its parent's subtree-control does not have +io), so it has no io files
cgbypassd: The configuration has 2 problem(s); nothing was changed." "$out"

# a value that only the kernel can refuse: the whole apply is undone
before=$(cd "$work/root" && find . -type f -exec sh -c 'printf "%s %s\n" "$1" "$(cat "$1")"' _ {} \; | sort)
conf sev.conf "$work/sev.conf"
out=$(run "$work/sev.conf" --check-config 2>&1) && ok "misc.max = sev 4 passes the check (SEV is the kernel's to know)" ||
	not_ok "misc.max = sev 4 passes the check" "$out"
out=$(run "$work/sev.conf" --apply-once 2>&1)
rc=$?
[ $rc -ne 0 ] && [[ $out == *"Invalid argument"* || $out == *"EINVAL"* ]] &&
	ok "the kernel's refusal fails the apply with its errno" || not_ok "the apply fails with EINVAL" "rc=$rc $out"
after=$(cd "$work/root" && find . -type f -exec sh -c 'printf "%s %s\n" "$1" "$(cat "$1")"' _ {} \; | sort)
[ "$before" == "$after" ] && [ ! -e "$work/root/new" ] && ok "... and nothing changed" ||
	not_ok "... and nothing changed" "$(diff <(echo "$before") <(echo "$after") | head -20)"

tap_done
