# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# TAP for the shell tests (https://testanything.org), sourced:
#   ok DESCRIPTION
#   not_ok DESCRIPTION [DETAIL]     DETAIL's lines follow as "# " comments (the first
#                                   TAP_DETAIL_LINES of them, where that is set)
#   check DESCRIPTION CMD...        ok when CMD succeeds, else not_ok with its output
#   tap_skip_all REASON             "1..0 # SKIP REASON", exit 0
#   tap_done                        the plan "1..N" after the tests; status 1 if one failed
#   tap_status                      the status alone, for a script that printed its plan first
# and what the shell tests wait with:
#   wait_for SECONDS CMD...         poll every 50 ms until CMD succeeds; fails after SECONDS
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else.
TAP_N=0
TAP_FAILED=0

ok() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1"
}

not_ok() {
	TAP_N=$((TAP_N + 1))
	TAP_FAILED=$((TAP_FAILED + 1))
	echo "not ok $TAP_N - $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | head -n "${TAP_DETAIL_LINES:--0}" | sed 's/^/# /'
	return 0
}

check() {
	local d=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$d"; else not_ok "$d" "$out"; fi
}

tap_skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

tap_status() {
	[ "$TAP_FAILED" -eq 0 ]
}

tap_done() {
	echo "1..$TAP_N"
	tap_status
}

wait_for() {
	local limit=$(($1 * 20)) i
	shift
	for ((i = 0; i < limit; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}
