#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-tracegen.sh CGBYPASS-TRACEGEN CGBYPASS-TRACE
# The generator is deterministic (same arguments, same text), --count N
# writes exactly the traces of seeds S..S+N-1, and what it writes runs on the
# model without being malformed.
set -u
gen=$1 trace=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"
fail() { not_ok "$1"; }

echo "1..7"
"$gen" --seed 7 --length 120 >"$tmp/a" && "$gen" --seed 7 --length 120 >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok "same seed, same text" || fail "same seed, same text"
"$gen" --seed 8 --length 120 >"$tmp/c"
cmp -s "$tmp/a" "$tmp/c" && fail "another seed, another text" || ok "another seed, another text"
[ "$(grep -vc '^#' "$tmp/a")" -eq 120 ] && ok "--length counts operations" || fail "--length counts operations"
"$gen" --seed 7 --length 120 --rules stock >"$tmp/s"
cmp -s "$tmp/a" "$tmp/s" && fail "--rules stock generates for stock" || ok "--rules stock generates for stock"

"$gen" --seed 5 --length 30 --count 4 --out-dir "$tmp/batch"
good=1
for s in 5 6 7 8; do
	"$gen" --seed $s --length 30 >"$tmp/one"
	cmp -s "$tmp/one" "$tmp/batch/gen-$s.trace" || good=0
done
[ "$(ls "$tmp/batch" | wc -l)" -eq 4 ] || good=0
[ $good -eq 1 ] && ok "--count writes seeds S..S+N-1" || fail "--count writes seeds S..S+N-1"

for r in bypass stock; do
	"$gen" --seed 300 --length 80 --count 50 --rules $r --out-dir "$tmp/$r"
	bad=
	for f in "$tmp/$r"/*.trace; do
		"$trace" --model --rules $r "$f" >/dev/null 2>"$tmp/err" || bad="$bad $(basename "$f"): $(cat "$tmp/err")"
	done
	[ -z "$bad" ] && ok "50 $r traces run on the model" || fail "$r traces malformed:$bad"
done
tap_status
