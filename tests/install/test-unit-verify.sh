#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-unit-verify.sh UNIT CGBYPASSD SBINDIR MAX-EXPOSURE
# The generated cgbypassd.service, with ExecStart= pointed at the built
# daemon (systemd-analyze verify checks that the program exists): verify
# prints nothing, and security --offline rates its exposure at most
# MAX-EXPOSURE. Man pages are not checked here (test-install.sh checks that
# the build installs them). TAP output.
set -uo pipefail

unit=${1:?unit} daemon=$(realpath "${2:?cgbypassd}") sbindir=${3:?sbindir} max=${4:?max exposure}
command -v systemd-analyze >/dev/null || { echo "1..0 # SKIP systemd-analyze is not installed"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"
export SYSTEMD_LOG_TARGET=console SYSTEMD_LOG_COLOR=0 SYSTEMD_PAGER=cat

sed "s|^ExecStart=$sbindir/cgbypassd|ExecStart=$daemon|" "$unit" >"$work/cgbypassd.service"
grep -q "^ExecStart=$daemon" "$work/cgbypassd.service" || not_ok "the unit's ExecStart= is not $sbindir/cgbypassd"
echo "# $(systemd-analyze --version | head -1), $(grep -E '^(Type|ExecReload)=' "$unit" | tr '\n' ' ')"

out=$(systemd-analyze verify --man=no "$work/cgbypassd.service" 2>&1)
status=$?
[ $status -eq 0 ] && [ -z "$out" ] && ok "systemd-analyze verify: no findings" ||
	not_ok "systemd-analyze verify: exit $status" "$out"

out=$(systemd-analyze security --offline=yes --no-pager "$work/cgbypassd.service" 2>&1)
score=$(printf '%s\n' "$out" | sed -n 's/^.*Overall exposure level for cgbypassd.service: \([0-9.]*\).*$/\1/p')
if [ -z "$score" ]; then
	not_ok "systemd-analyze security printed no exposure level" "$out"
else
	echo "# exposure level $score (at most $max)"
	printf '%s\n' "$out" | grep '✗' | sed 's/  */ /g; s/^/#   /'
	if awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }'; then
		ok "exposure level $score <= $max"
	else
		not_ok "exposure level $score > $max: the unit lost hardening" "$out"
	fi
fi

tap_done
