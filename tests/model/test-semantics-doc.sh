#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-semantics-doc.sh SOURCE_ROOT
# docs/bypass-semantics.md's table names, for each decision (a)-(k), the
# model functions and the kernel patches that implement it: each decision
# has a row, each function it names is defined in src/lib/model/, each
# patch number is a file of kernel/patches/. TAP output.
set -u
src=${1:?source root}
doc=$src/docs/bypass-semantics.md
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

for d in a b c d e f g h i j k; do
	row=$(grep -E "^\| \($d\) \|" "$doc")
	if [ -z "$row" ]; then
		not_ok "($d) has a row" "no '| ($d) |' line in $doc"
		continue
	fi
	model=$(printf '%s\n' "$row" | awk -F' \\| ' '{ print $3 }')
	kernel=$(printf '%s\n' "$row" | awk -F' \\| ' '{ print $4 }')
	missing=
	for f in $(printf '%s\n' "$model" | grep -oE '`[a-z_0-9]+\(\)' | tr -d '`()'); do
		grep -qE "^[a-zA-Z].*[ *]$f\(" "$src"/src/lib/model/*.c || missing="$missing $f()"
	done
	for p in $(printf '%s\n' "$kernel" | grep -oE '\b00[0-9]{2}\b'); do
		ls "$src"/kernel/patches/"$p"-*.patch >/dev/null 2>&1 || missing="$missing patch $p"
	done
	if ! printf '%s\n' "$model" | grep -qE '`[a-z_0-9]+\(\)'; then
		not_ok "($d) names a model function" "$row"
	elif [ -n "$missing" ]; then
		not_ok "($d) names what exists" "missing:$missing"
	else
		ok "($d) names what exists"
	fi
done
tap_done
