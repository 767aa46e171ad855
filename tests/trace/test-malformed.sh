#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-malformed.sh CGBYPASS-TRACE
# Every kind of malformed trace stops the run with "FILE:LINE: reason" on
# standard error and exit status 2, after printing the lines before it.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

# case NAME LINE REASON-SUBSTRING STDOUT-LINES [OPTIONS...] <<< TRACE
case_() {
	local name=$1 line=$2 reason=$3 nout=$4
	shift 4
	n=$((n + 1))
	cat >"$tmp/t.trace"
	"$bin" --model "$@" "$tmp/t.trace" >"$tmp/out" 2>"$tmp/err"
	local rc=$? why=
	local errtext
	errtext=$(cat "$tmp/err")
	if [ $rc -ne 2 ]; then
		why="exit status $rc, not 2"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		why="not one line on stderr"
	elif [[ "$errtext" != "$tmp/t.trace:$line: "* ]]; then
		why="stderr does not start with FILE:$line:"
	elif [[ "$errtext" != *"$reason"* ]]; then
		why="stderr does not say '$reason'"
	elif [ "$(wc -l <"$tmp/out")" -ne "$nout" ]; then
		why="$(wc -l <"$tmp/out") result lines on stdout, not $nout"
	fi
	if [ -n "$why" ]; then
		echo "not ok $n - $name: $why"
		sed 's/^/# stderr: /' "$tmp/err"
		sed 's/^/# stdout: /' "$tmp/out"
		failed=$((failed + 1))
	else
		echo "ok $n - $name"
	fi
}

echo "1..22"
case_ "unknown operation" 2 "unknown operation 'chmod'" 0 <<<$'mkdir A\nchmod A'
case_ "missing field" 3 "needs PATH FILE" 0 <<<$'# c\nmkdir A\nread A'
case_ "missing path" 1 "needs PATH" 0 <<<'rmdir'
case_ "extra field" 1 "then nothing" 0 <<<'mkdir A B'
case_ "double space" 1 "empty field" 0 <<<'exists  A cgroup.procs'
case_ "absolute path" 1 "relative" 0 <<<'mkdir /A'
case_ "dot-dot path" 1 "'..'" 0 <<<'mkdir A/..'
case_ "empty component" 1 "contains '//'" 0 <<<'mkdir A//B'
case_ "file with slash" 1 "bad file name" 0 <<<'read . a/b'
case_ "unknown tree controller" 1 "unknown controller 'cpu2'" 0 <<<'tree cpu2'
case_ "move of never-spawned label" 2 "unknown label 'x'" 0 <<<$'mkdir A\nmove x A'
case_ "kill of never-spawned label" 1 "unknown label 'x'" 0 <<<'kill x'
case_ "spawn of a live label" 3 "still alive (spawned on line 2)" 2 <<<$'mkdir A\nspawn x A\nspawn x A'
case_ "move of a killed label" 4 "not alive (killed on line 3)" 3 <<<$'mkdir A\nspawn x A\nkill x\nmove x A'
case_ "kill after a failed spawn" 2 "not alive (its spawn failed on line 1)" 1 <<<$'spawn x Z\nkill x'
case_ "kill of a killed label" 4 "not alive (killed on line 3)" 3 --rules stock <<<$'mkdir A\nspawn x A\nkill x\nkill x'
case_ "spawn failure is not malformed, a later move is" 5 "its spawn failed on line 4" 4 \
	<<<$'mkdir A\nwrite . cgroup.subtree_control +memory\nwrite A cgroup.subtree_control #memory\nspawn x A\nmove x .'
case_ "write the model does not implement" 3 "does not implement writes to 'cgroup.freeze'" 2 \
	<<<$'mkdir A\nwrite . cgroup.subtree_control +cpu\nwrite A cgroup.freeze 1'
case_ "read the model does not implement" 2 "does not implement reads of 'cgroup.stat'" 1 <<<$'mkdir A\nread A cgroup.stat'
case_ "a one-line trace" 1 "unknown operation 'bogus'" 0 <<<'bogus'
# the same through standard input: the name is <stdin>
n=$((n + 1))
printf 'mkdir A\nfrob\n' | "$bin" --model - >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(cat "$tmp/err")" == "<stdin>:2: unknown operation 'frob'" ]; then
	echo "ok $n - standard input diagnostics"
else
	echo "not ok $n - standard input diagnostics: exit $rc, stderr '$(cat "$tmp/err")'"
	failed=$((failed + 1))
fi
n=$((n + 1))
printf 'mkdir A\n\0\n' >"$tmp/nul.trace"
"$bin" --model "$tmp/nul.trace" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -s "$tmp/out" ]; then
	echo "ok $n - a NUL byte makes a trace malformed"
else
	echo "not ok $n - a NUL byte: exit $rc"
	failed=$((failed + 1))
fi
exit $((failed > 0))
