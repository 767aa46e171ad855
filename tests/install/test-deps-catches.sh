#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-deps-catches.sh TEST-DEPS
# test-deps.sh fails for what it is there to catch. It runs on a small tree
# whose deps.sh lists only gcc and whose script tests for ninja and meson
# (installed wherever the project builds; each in a `for VAR in` list), a
# tool no package has, one in a comment, and gzip (Essential). TAP output.
set -uo pipefail

checker=${1:?test-deps.sh}
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

mkdir -p "$tree/tools" "$tree/kernel"
cat >"$tree/tools/deps.sh" <<'SH'
#!/bin/sh
[ "$1" = --list ] && echo gcc
SH
# $c: this file itself is one that test-deps.sh reads
c=command
cat >"$tree/kernel/k.sh" <<SH
for t in ninja; do
	$c -v "\$t" >/dev/null || exit 1
done
# $c -v cgb-in-a-comment is not a test
for tool in meson gzip; do
	$c -v "\$tool" && $c -v cgb-no-such-tool
done
SH
chmod +x "$tree/tools/deps.sh"

out=$("$checker" "$tree")
status=$?
[ $status -ne 0 ] && ok "fails (exit $status)" || not_ok "passes a tree whose deps.sh lacks ninja and meson" "$out"
expect() {
	grep -qxF -- "$1" <<<"$(sed 's/^\(not \)\{0,1\}ok [0-9]* - //' <<<"$out")" && ok "says: $1" || not_ok "does not say: $1" "$out"
}
expect "'ninja' (kernel/k.sh): package ninja-build is not installed by 'tools/deps.sh test' (Priority: optional; add it to its list)"
expect "'meson' (kernel/k.sh): package meson is not installed by 'tools/deps.sh test' (Priority: optional; add it to its list)"
expect "'cgb-no-such-tool' (kernel/k.sh): not installed, although every package of 'deps.sh test' is; add the package that has it to tools/deps.sh"
expect "'gzip' (kernel/k.sh): gzip, in every Debian 12 (Essential)"
grep -q cgb-in-a-comment <<<"$out" && not_ok "a comment counts as a test for a tool" "$out" || ok "a comment is not a test for a tool"
[ "$(grep -c '^not ok' <<<"$out")" -eq 3 ] && ok "three failures, no others" || not_ok "failures other than the three" "$out"

tap_done
