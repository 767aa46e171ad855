#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2181
# cgbypassd's offline modes end to end on the sim backend: --check-config,
# --plan, --apply-once, and bad usage. TAP output.
set -uo pipefail

daemon=${1:?path to cgbypassd}
data=${2:?tests/data/daemon}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"

run() { # conf, mode...: runs cgbypassd on a fresh-per-test sim root
	local conf=$1
	shift
	"$daemon" --config "$conf" --config-dir "$work/none" --cgroup-root "$work/root" \
		--state-directory "$work/state" "$@"
}

# --help, --version, bad usage
out=$("$daemon" --help) && [[ $out == *"--check-config"* ]] && [[ $out == *"Exit status"* ]] &&
	ok "--help documents the modes and the exit status" || not_ok "--help" "$out"
out=$("$daemon" --version) && [[ $out =~ ^cgbypassd\ [0-9] ]] && ok "--version" || not_ok "--version" "$out"
out=$("$daemon" --frobnicate 2>&1)
[ $? -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ $out == *"--frobnicate"* ]] &&
	ok "unknown option: exit 2, one line naming it" || not_ok "unknown option" "$out"
out=$("$daemon" --plan --apply-once 2>&1)
[ $? -eq 2 ] && [[ $out == *"exclude each other"* ]] && ok "two modes: exit 2" || not_ok "two modes" "$out"
out=$("$daemon" --bus nowhere 2>&1)
[ $? -eq 2 ] && [[ $out == *"'nowhere'"* ]] && ok "bad --bus: exit 2" || not_ok "bad --bus" "$out"

# a broken configuration: every problem, FILE:LINE, exit 1, nothing created
out=$(run "$data/broken.conf" --check-config 2>&1)
status=$?
lines=$(printf '%s\n' "$out" | grep -c "^$data/broken.conf:[0-9]*: ")
[ $status -eq 1 ] && [ "$lines" -ge 3 ] && [ ! -e "$work/state/applied-state" ] &&
	ok "broken config: $lines FILE:LINE problems, exit 1, nothing written" || not_ok "broken config" "$out"
out=$(run "$data/doc-example.conf" --backend bogus --check-config 2>&1)
[[ $out == *"--backend: "* ]] && ok "a bad --backend is named as the option" || not_ok "bad --backend" "$out"

# a configuration the kernel's rules refuse: the line of the key that asked
out=$(run "$data/unreachable.conf" --check-config 2>&1)
[ $? -eq 1 ] && [[ $out == *"$data/unreachable.conf:10: /srv/a: controllers +memory: the parent does not bypass it"* ]] &&
	ok "unreachable state: refused at its line, with the reason" || not_ok "unreachable state" "$out"
out=$(run "$data/unreachable.conf" --apply-once 2>&1)
[ $? -eq 1 ] && [ ! -e "$work/state/applied-state" ] && [ ! -e "$work/root/srv" ] &&
	ok "unreachable state: --apply-once changes nothing" || not_ok "unreachable apply" "$out"

# the documentation example: check, plan, apply, in sync
check "doc example: --check-config passes" run "$data/doc-example.conf" --check-config
plan=$(run "$data/doc-example.conf" --plan 2>&1)
expected='mkdir A
mkdir A/B
mkdir A/B/C
mkdir A/B/G
mkdir A/B/C/D
mkdir A/B/C/D/E
mkdir A/B/C/D/E/F
write . cgroup.subtree_control +cpu
write A cgroup.subtree_control #cpu
write A/B cgroup.subtree_control #cpu
write A/B/C cgroup.subtree_control #cpu
write A/B/G cgroup.controllers +cpu
write A/B/C/D cgroup.subtree_control +cpu'
[ "$plan" = "$expected" ] && ok "doc example: --plan prints the trace" || not_ok "doc example plan" "$plan"
[ ! -e "$work/state/applied-state" ] && ok "--plan writes no state" || not_ok "--plan wrote state"
ro=(--state-directory "$work/ro-state" --cgroup-root "$work/ro-root")
out=$(run "$data/doc-example.conf" "${ro[@]}" --check-config 2>&1) &&
	[ "$(run "$data/doc-example.conf" "${ro[@]}" --plan 2>&1)" = "$expected" ] &&
	[ ! -e "$work/ro-state" ] && [ ! -e "$work/ro-root" ] &&
	ok "--check-config and --plan create nothing, not even the sim or the state directory" ||
	not_ok "read-only modes created something" "$out$(find "$work/ro-state" "$work/ro-root" 2>&1 | head)"

out=$(run "$data/doc-example.conf" --apply-once 2>&1)
[ $? -eq 0 ] && [[ $out == *"13 operation(s)"* ]] && ok "doc example: --apply-once makes 13 operations" ||
	not_ok "doc example apply" "$out"
[ "$(cat "$work/root/A/B/G/cgroup.controllers" 2>&1)" = "cpu" ] &&
	[ "$(cat "$work/root/A/B/cgroup.controllers" 2>&1)" = "#cpu" ] && [ -e "$work/root/A/B/G/cpu.weight" ] &&
	[ ! -e "$work/root/A/B/cpu.weight" ] && ok "sim files show the re-enable and the bypass" ||
	not_ok "sim files" "$(ls "$work/root/A/B" "$work/root/A/B/G" 2>&1)"
grep -q '^cgroup /A/B/G create=yes sc= ctl=+cpu$' "$work/state/applied-state" 2>/dev/null &&
	ok "the applied state is saved" || not_ok "applied state" "$(cat "$work/state/applied-state" 2>&1)"
tmps=("$work"/state/.*.tmp)
[ -e "${tmps[0]}" ] && not_ok "a temporary file was left in the state directory" ||
	ok "no temporary file left behind"

plan=$(run "$data/doc-example.conf" --plan 2>&1)
[ -z "$plan" ] && ok "in sync: --plan prints nothing" || not_ok "in sync plan" "$plan"
inodes() { (cd "$work/state" && stat -c '%n %i' applied-state client-changes 2>&1); }
before=$(inodes)
: >"$work/state/.client-changes.tmp"     # what a writer killed before its rename leaves
out=$(run "$data/doc-example.conf" --apply-once 2>&1)
[ $? -eq 0 ] && [[ $out == *"0 operation(s)"* ]] && ok "re-apply makes zero writes" || not_ok "re-apply" "$out"
# the state files hold the same text: not written again (a write renames a new inode over them)
[ "$(inodes)" = "$before" ] && [ ! -e "$work/state/.client-changes.tmp" ] &&
	ok "re-apply with nothing to change rewrites no state file, and removes a stale temporary" ||
	not_ok "state files rewritten by a re-apply" "$before / $(inodes) $(ls -a "$work/state")"

# beside a running daemon (it holds the state directory's lock): the read-only
# modes work, --apply-once is refused with a reason and changes nothing
if command -v flock >/dev/null; then
	before=$(cd "$work" && find root state -printf '%p %s %T@\n' | sort)
	out=$(flock "$work/state/backend.lock" "$daemon" --config "$data/doc-example.conf" --config-dir "$work/none" \
		--cgroup-root "$work/root" --state-directory "$work/state" --plan 2>&1)
	[ $? -eq 0 ] && [ -z "$out" ] && ok "--plan beside a daemon holding the lock" || not_ok "--plan, locked" "$out"
	out=$(flock "$work/state/backend.lock" "$daemon" --config "$data/unreachable.conf" --config-dir "$work/none" \
		--cgroup-root "$work/root" --state-directory "$work/state" --check-config 2>&1)
	[ $? -eq 1 ] && [[ $out == *"unreachable.conf:10: "* ]] && ok "--check-config beside a daemon holding the lock" ||
		not_ok "--check-config, locked" "$out"
	out=$(flock "$work/state/backend.lock" "$daemon" --config "$data/unreachable.conf" --config-dir "$work/none" \
		--cgroup-root "$work/root" --state-directory "$work/state" --apply-once 2>&1)
	[ $? -eq 1 ] && [[ $out == *"is in use by another backend"* ]] &&
		[ "$(cd "$work" && find root state -printf '%p %s %T@\n' | sort)" = "$before" ] &&
		ok "--apply-once beside a running daemon: refused, nothing changed" || not_ok "--apply-once, locked" "$out"
else
	echo "# flock(1) is not installed; skipped the lock checks"
fi

# drift: the hierarchy changed behind the daemon's back since its last apply
cat >"$work/drift.conf" <<CONF
[daemon]
backend = sim
[cgroup]
path = /A/B/G
controllers = #cpu
CONF
# someone else changes G; our record of what we applied still says re-enabled
cp "$work/state/applied-state" "$work/applied-before"
run "$work/drift.conf" --apply-once >/dev/null 2>&1
cp "$work/applied-before" "$work/state/applied-state"
out=$(run "$data/doc-example.conf" --apply-once 2>&1)
[[ $out == *"Drift: /A/B/G cgroup.controllers cpu: expected re-enabled, found bypassed"* ]] &&
	[[ $out == *"1 operation(s)"* ]] && ok "drift is logged and fixed through the plan" || not_ok "drift" "$out"

# drift is reckoned from the applied state with the saved client changes over it (the last use of this state)
printf '%s\n' '# cgbypassd client changes v1; written by cgbypassd, do not edit' \
	'change /A/B/G sc= ctl=#cpu admin= owner=-' >"$work/state/client-changes"
out=$(run "$data/doc-example.conf" --apply-once 2>&1)
[[ $out == *"Drift: /A/B/G cgroup.controllers cpu: expected bypassed, found re-enabled"* ]] &&
	ok "drift: a saved client change is part of what was applied" || not_ok "drift with a client change" "$out"

# a new configuration is not drift: nothing to report on the first apply
out=$(run "$data/doc-example.conf" --state-directory "$work/fresh-state" --cgroup-root "$work/fresh-root" --apply-once 2>&1)
[[ $out != *Drift* ]] && ok "a first apply reports no drift" || not_ok "first apply drift" "$out"

# the applied state is replaced without a flush (desired.c): what a power loss may leave of it, a torn
# line or an empty file, is reported and skipped, and the apply goes on
printf 'cgroup /A create=yes sc=+cp' >"$work/state/applied-state"
out=$(run "$data/doc-example.conf" --apply-once 2>&1)
[ $? -eq 0 ] && [[ $out == *"Failed to read the applied state"* ]] && head -n 1 "$work/state/applied-state" |
	grep -q '^# cgbypassd applied state' && ok "a torn applied state: warned about, replaced, applied" ||
	not_ok "torn applied state" "$out"
: >"$work/state/applied-state"
out=$(run "$data/doc-example.conf" --apply-once 2>&1)
[ $? -eq 0 ] && [ -s "$work/state/applied-state" ] && ok "an empty applied state: replaced, applied" ||
	not_ok "empty applied state" "$out"

# A one-shot mode advises its heap for huge pages (main.c, batch_heap()); the service does not. glibc's
# malloc only: an ASan build has its own.
if ! command -v strace >/dev/null || ! strace -f -qq -o /dev/null true 2>/dev/null; then
	ok "huge-page heap # SKIP strace cannot run here"
elif grep -q libasan <<<"$(ldd "$daemon")"; then
	ok "huge-page heap # SKIP an ASan build does not use glibc malloc"
else
	strace -qq -e trace=madvise -o "$work/madvise" "$daemon" --config "$data/doc-example.conf" \
		--config-dir "$work/none" --check-config >/dev/null 2>&1
	grep -q 'MADV_HUGEPAGE) = 0' "$work/madvise" && ok "--check-config: its heap is advised for huge pages" ||
		not_ok "--check-config: no MADV_HUGEPAGE" "$(cat "$work/madvise")"
fi

tap_done
