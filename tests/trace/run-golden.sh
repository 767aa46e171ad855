#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-golden.sh CGBYPASS-TRACE TRACE EXPECTED RULES
# Runs TRACE on the model with RULES and compares the output byte for byte
# with EXPECTED. Exit 0 when equal and the run exited 0; else shows why, exit 1.
set -u
trace_bin=$1 trace=$2 expected=$3 rules=$4

out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$trace_bin" --model --rules "$rules" "$trace" >"$out" 2>"$err"
rc=$?
if [ $rc -eq 0 ] && cmp -s "$expected" "$out"; then
	exit 0
fi
echo "$trace --rules $rules: exit status $rc; stderr:"
cat "$err"
echo "difference to $expected (- expected, + got):"
diff -u "$expected" "$out" | tail -n +3
exit 1
