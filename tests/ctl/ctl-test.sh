# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# What the cgbypassctl tests share, sourced (with tests/tap.sh):
#   capture CMD...     run CMD: stdout in out, stderr in err (through $work/err), exit status in status
#   one_line TEXT      TEXT is one line, not empty

capture() {
	out=$("$@" 2>"$work/err")
	status=$?
	err=$(cat "$work/err")
}

one_line() {
	[ -n "$1" ] && [ "$(printf '%s\n' "$1" | wc -l)" -eq 1 ]
}
