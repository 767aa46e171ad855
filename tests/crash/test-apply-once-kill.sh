#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015
#
# cgbypassd --apply-once killed (SIGKILL) at points chosen by syscall fault
# injection (strace -e inject=SYSCALL:signal=KILL:when=N) on the sim
# backend, on each kind of system call that changes the sim or its state
# (mkdirat, openat, openat2, write, fchmod, renameat, unlinkat, fchownat,
# fsync, getdents64), spread over each kind's calls in an uninterrupted run;
# every fourth recovery is killed too. After each kill, a plain --apply-once
# must succeed and leave the simulated hierarchy (names, types, modes,
# owners, contents) and the state directory byte-identical to one
# uninterrupted apply. Two scenarios: a fresh hierarchy to configuration a
# (39 cgroups), and a to b (17 changes). TAP; the last line counts the kills.
# The work directory is on /dev/shm where it can be (CGB_CRASH_TMPDIR).
#
# usage: test-apply-once-kill.sh CGBYPASSD [POINTS-PER-SCENARIO]
set -uo pipefail

daemon=${1:?cgbypassd}
want_points=${2:-${CGB_CRASH_POINTS:-48}}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

command -v strace >/dev/null || { echo "1..0 # SKIP strace is not installed"; exit 0; }
tmp=${CGB_CRASH_TMPDIR:-/dev/shm}
[ -d "$tmp" ] && [ -w "$tmp" ] || tmp=/tmp
work=$(mktemp -d "$tmp/cgb-crash-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
strace -f -qq -o /dev/null true 2>/dev/null || { echo "1..0 # SKIP ptrace is not allowed here"; exit 0; }

# a failed recovery's log can be long: its first 30 lines
TAP_DETAIL_LINES=30
# shellcheck source=tests/tap.sh
. "$here/../tap.sh"

python3 "$here/gen-config.py" a >"$work/a.conf" && python3 "$here/gen-config.py" b >"$work/b.conf" ||
	{ echo "Bail out! cannot write the configurations"; exit 1; }
root=$work/root
state=$work/state

# LeakSanitizer cannot work under ptrace: the straced runs of an ASan build do without it
traced_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# The sim and its state always live at these paths: sim.state records the root's path.
apply() { # CONF [strace arguments...]: one --apply-once; its exit status
	local conf=$1
	shift
	if [ $# -gt 0 ]; then
		# the braces keep bash's "Killed" notice out of the TAP stream
		{ ASAN_OPTIONS=$traced_asan strace -f -qq -o /dev/null "$@" \
			"$daemon" --config "$conf" --config-dir "$work/none" --backend sim \
			--cgroup-root "$root" --state-directory "$state" --apply-once >>"$work/log" 2>&1; } 2>/dev/null
	else
		"$daemon" --config "$conf" --config-dir "$work/none" --backend sim \
			--cgroup-root "$root" --state-directory "$state" --apply-once >>"$work/log" 2>&1
	fi
}

# What must be byte-identical: every entry of the sim (type, mode, owner,
# content) and the state files (not the lock, whose content is nothing).
snapshot() {
	(
		cd "$root" || exit 1
		find . -printf '%p %y %m %U:%G %s\n' | LC_ALL=C sort
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
		cd "$state" || exit 1
		find . -type f ! -name backend.lock -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
	)
}

reset_to() { # a snapshot directory (or "fresh")
	rm -rf "$root" "$state"
	[ "$1" = fresh ] && return 0
	cp -a "$1/root" "$root" && cp -a "$1/state" "$state"
}

save_as() {
	mkdir -p "$1" && cp -a "$root" "$1/root" && cp -a "$state" "$1/state"
}

# the uninterrupted applies: fresh -> a, a -> b
: >"$work/log"
reset_to fresh
apply "$work/a.conf" && snapshot >"$work/want-a" && save_as "$work/after-a" &&
	apply "$work/b.conf" && snapshot >"$work/want-b" ||
	{ echo "Bail out! the uninterrupted applies failed:"; sed 's/^/# /' "$work/log"; exit 1; }
reset_to "$work/after-a"
apply "$work/b.conf" && snapshot | cmp -s - "$work/want-b" &&
	ok "uninterrupted: fresh -> a ($(grep -c ' d ' "$work/want-a") directories), a -> b; a second run gives the same bytes" ||
	not_ok "two uninterrupted runs differ" "$(snapshot | diff - "$work/want-b")"

# A save's regions of sim.state.journal hold their cgroups as they are now, so a child's may need its
# parent's: a kill between two appends left a journal the model refused. One write(2) per save.
reset_to fresh
ASAN_OPTIONS=$traced_asan strace -f -qq -y -e trace=write -o "$work/writes" \
	"$daemon" --config "$work/a.conf" --config-dir "$work/none" --backend sim \
	--cgroup-root "$root" --state-directory "$state" --apply-once >/dev/null 2>&1
n=$(grep -c 'sim\.state\.journal>' "$work/writes")
[ "$n" -eq 1 ] && ok "fresh -> a: its one save appends its journal regions in one write" ||
	not_ok "fresh -> a: $n writes to sim.state.journal, not one"

# Nothing of a fresh apply of a configuration without client changes needs a flush: the sim's state and the
# applied state describe the hierarchy, which lives in memory (desired.c, state_file_save()).
reset_to fresh
ASAN_OPTIONS=$traced_asan strace -f -qq -y -e trace=fsync,fdatasync -o "$work/syncs" \
	"$daemon" --config "$work/a.conf" --config-dir "$work/none" --backend sim \
	--cgroup-root "$root" --state-directory "$state" --apply-once >/dev/null 2>&1
[ -f "$state/applied-state" ] && ! grep -q sync "$work/syncs" &&
	ok "fresh -> a: the applied state is written and nothing is flushed" ||
	not_ok "fresh -> a: applied-state missing or flushed" "$(ls -l "$state"; cat "$work/syncs")"

kinds=(mkdirat openat openat2 write fchmod renameat unlinkat fchownat fsync getdents64)
kills=0
double=0

# count SCENARIO: each kind's calls in an uninterrupted run, as "KIND COUNT" lines
count_calls() {
	local start=$1 conf=$2
	reset_to "$start"
	ASAN_OPTIONS=$traced_asan strace -f -qq -c -o "$work/count" \
		"$daemon" --config "$conf" --config-dir "$work/none" --backend sim \
		--cgroup-root "$root" --state-directory "$state" --apply-once >/dev/null 2>&1 || return 1
	awk 'NF >= 5 && $4 ~ /^[0-9]+$/ { print $NF, $4 }' "$work/count"
}

# calls KIND: how many of KIND the last count saw
calls_of() {
	awk -v k="$1" '$1 == k { print $2 }' "$work/counts"
}

run_scenario() { # NAME START CONF WANT
	local name=$1 start=$2 conf=$3 want=$4 total=0 k c per i when point status bad=0 points=0
	count_calls "$start" "$conf" >"$work/counts" || { not_ok "$name: the counting run failed"; return; }
	for k in "${kinds[@]}"; do
		c=$(calls_of "$k")
		[ -n "$c" ] && total=$((total + c))
	done
	for k in "${kinds[@]}"; do
		c=$(calls_of "$k")
		[ -n "$c" ] && [ "$c" -gt 0 ] || continue
		# each kind gets points in proportion to its share, at least 2, at most its calls
		per=$(((want_points * c + total - 1) / total))
		[ "$per" -lt 2 ] && per=2
		[ "$per" -gt "$c" ] && per=$c
		for ((i = 0; i < per; i++)); do
			when=$((per > 1 ? 1 + i * (c - 1) / (per - 1) : 1))
			point="$k#$when"
			reset_to "$start"
			: >"$work/log"
			apply "$conf" -e trace="$k" -e inject="$k":signal=KILL:when="$when"
			status=$?
			if [ $status -ne 137 ]; then
				# the call was not reached (the counting run saw more): no kill, nothing to test
				[ $status -eq 0 ] && continue
				not_ok "$name: $point: exit $status without a kill" "$(cat "$work/log")"
				bad=$((bad + 1))
				continue
			fi
			kills=$((kills + 1))
			points=$((points + 1))
			if [ $((kills % 4)) -eq 0 ]; then
				# and the recovery killed too, at its own point of another kind
				apply "$conf" -e trace=renameat,mkdirat,unlinkat \
					-e inject=renameat,mkdirat,unlinkat:signal=KILL:when=$((1 + kills % 7))
				[ $? -eq 137 ] && double=$((double + 1))
			fi
			if ! apply "$conf"; then
				not_ok "$name: killed at $point: the recovery failed" "$(cat "$work/log")"
				bad=$((bad + 1))
			elif ! snapshot | cmp -s - "$want"; then
				not_ok "$name: killed at $point: the recovery differs from an uninterrupted apply" \
					"$(snapshot | diff "$want" - | head -n 20; cat "$work/log")"
				bad=$((bad + 1))
			fi
		done
	done
	[ $bad -eq 0 ] && ok "$name: killed at $points points, each recovery byte-identical to an uninterrupted apply"
}

run_scenario "fresh -> a" fresh "$work/a.conf" "$work/want-a"
run_scenario "a -> b" "$work/after-a" "$work/b.conf" "$work/want-b"
[ "$kills" -ge 100 ] && ok "$kills kill points in all, and $double kills during a recovery" ||
	not_ok "only $kills kill points; the test wants at least 100"
echo "# kill points: $kills, and $double kills during a recovery"
tap_done
