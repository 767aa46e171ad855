#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-host.sh CGBYPASS-TRACE CGBYPASS-CONFORM TRACE...
# Conformance against this machine's real cgroup2: every TRACE runs on a
# scratch cgroup with --kernel and on the model with --nonroot (the scratch's
# parent is the mount root, which enables every controller it offers, as the
# model's --nonroot base does); the outputs must be identical. Also checks
# that each run leaves the scratch as it found it, that SIGTERM cleans up, and
# runs 200 generated traces through cgbypass-conform the same way.
# Prints TAP; "1..0 # SKIP reason" where no writable cgroup2 exists.
set -u
bin=$1 conform=$2
shift 2
traces=("$@")

skip() { echo "1..0 # SKIP $1"; exit 0; }

[ "$(id -u)" -eq 0 ] || skip "not root"
root=
for d in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	if [ "$(stat -f -c %T "$d" 2>/dev/null)" == "cgroup2fs" ]; then
		root=$d
		break
	fi
done
[ -n "$root" ] || skip "no cgroup2 mount at /sys/fs/cgroup/unified or /sys/fs/cgroup"
scratch=$root/cgbypass-host-test.$$
mkdir "$scratch" 2>/dev/null || skip "cannot create a cgroup in $root (read-only or delegated elsewhere)"

# the controllers on cgroup2: /proc/cgroups lists hierarchy 0 for those bound to it
controllers=$(awk '!/^#/ && $2 == 0 && $4 == 1 { printf "%s%s", sep, $1; sep = "," }' /proc/cgroups)
rules=stock
grep -qw bypass /sys/kernel/cgroup/features 2>/dev/null && rules=bypass

# the mount root enables what it offers, like the model's --nonroot base; undo at exit
enabled=()
restore() {
	rmdir "$scratch" 2>/dev/null
	for c in "${enabled[@]}"; do
		echo "-$c" >"$root/cgroup.subtree_control" 2>/dev/null
	done
}
trap restore EXIT
for c in $(cat "$root/cgroup.controllers"); do
	if ! grep -qw "$c" "$root/cgroup.subtree_control"; then
		if ! echo "+$c" >"$root/cgroup.subtree_control" 2>/dev/null; then
			skip "cannot enable $c in $root/cgroup.subtree_control"
		fi
		enabled+=("$c")
	fi
done

tmp=$(mktemp -d)
trap 'restore; rm -rf "$tmp"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"
fail() { not_ok "$1"; }

snapshot() { (cd "$scratch" && find . -type d | sort; cat cgroup.subtree_control cgroup.max.depth cgroup.max.descendants); }

echo "1..$((${#traces[@]} * 2 + 3))"
echo "# $root: --model --nonroot --rules $rules --controllers $controllers"
for t in "${traces[@]}"; do
	name=$(basename "$t" .trace)
	before=$(snapshot)
	"$bin" --kernel "$scratch" "$t" >"$tmp/kernel" 2>"$tmp/kernel.err"
	krc=$?
	"$bin" --model --nonroot --rules $rules --controllers "$controllers" "$t" >"$tmp/model" 2>"$tmp/model.err"
	mrc=$?
	if [ $krc -eq $mrc ] && cmp -s "$tmp/kernel" "$tmp/model"; then
		ok "$name: kernel and model agree ($(wc -l <"$tmp/kernel") lines)"
	else
		fail "$name: kernel (exit $krc) and model (exit $mrc) differ"
		diff "$tmp/kernel" "$tmp/model" | sed 's/^/# /'
		sed 's/^/# kernel stderr: /' "$tmp/kernel.err"
		sed 's/^/# model stderr: /' "$tmp/model.err"
	fi
	after=$(snapshot)
	if [ "$before" == "$after" ]; then
		ok "$name: the scratch cgroup is as before"
	else
		fail "$name: the run left changes behind"
		diff <(echo "$before") <(echo "$after") | sed 's/^/# /'
	fi
done

# SIGTERM in the middle of a long run: cleaned up, then killed by the signal
{
	echo "mkdir A"
	echo "write . cgroup.subtree_control +hugetlb"
	echo "spawn p A"
	yes "read A cgroup.procs" | head -n 400000
} >"$tmp/long.trace"
before=$(snapshot)
"$bin" --kernel "$scratch" "$tmp/long.trace" >/dev/null 2>"$tmp/err" &
pid=$!
sleep 0.3
kill -TERM $pid 2>/dev/null
wait $pid
rc=$?
after=$(snapshot)
if [ "$before" != "$after" ]; then
	fail "SIGTERM: the run left changes behind"
	diff <(echo "$before") <(echo "$after") | sed 's/^/# /'
elif [ $rc -eq 143 ]; then
	ok "SIGTERM: cleaned up, exit status 143"
elif [ $rc -eq 0 ]; then
	ok "SIGTERM: # the run ended before the signal; cleaned up"
else
	fail "SIGTERM: exit status $rc"
	sed 's/^/# /' "$tmp/err"
fi

# random traces, generated for this model (--nonroot, these controllers)
before=$(snapshot)
"$conform" --kernel "$scratch" --rules $rules --nonroot --controllers "$controllers" \
	--seed 1 --count 200 --length 60 >"$tmp/conform" 2>&1
rc=$?
summary=$(tail -n 1 "$tmp/conform")
if [ $rc -eq 0 ] && [ "$summary" == "200 passed, 0 failed" ]; then
	ok "cgbypass-conform: $summary"
else
	fail "cgbypass-conform: exit $rc, $summary"
	head -n 60 "$tmp/conform" | sed 's/^/# /'
fi
after=$(snapshot)
[ "$before" == "$after" ] && ok "cgbypass-conform: the scratch cgroup is as before" ||
	fail "cgbypass-conform: the runs left changes behind"
tap_status
