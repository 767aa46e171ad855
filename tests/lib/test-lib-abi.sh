#!/usr/bin/env bash
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015
# SPDX-License-Identifier: LGPL-2.1-or-later
# libcgbypass's ABI and error map, without a bus: the soname, exactly the
# symbols of libcgbypass.sym and all in version LIBCGBYPASS_1, the header on
# its own in C and C++, and every error name decoded (by the library's own
# registration at load) to the errno that org.cgbypass1(5) documents, for
# every name the page lists and the map has. TAP output.
#
# Usage: test-lib-abi.sh SOURCE_ROOT LIBCGBYPASS.SO LIB-MAP-LIST
set -uo pipefail

src=${1:?source root}
lib=${2:?libcgbypass.so}
list=${3:?lib-map-list}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

soname=$(readelf -d "$lib" | sed -nE 's/.*Library soname: \[(.*)\]/\1/p')
[ "$soname" = libcgbypass.so.1 ] && ok "soname libcgbypass.so.1" || not_ok "soname '$soname'"

# the symbols: what the version script lists, nothing else, all versioned LIBCGBYPASS_1
sed -n 's/^ *\(cgbypass_[a-z_]*\);$/\1/p' "$src/src/libcgbypass/libcgbypass.sym" | sort >"$work/want"
nm -D --defined-only "$lib" | awk '$3 !~ /^LIBCGBYPASS_/ { print $3 }' | sed 's/@@.*//' | sort >"$work/got"
out=$(diff -u "$work/want" "$work/got") && ok "exported symbols are libcgbypass.sym's ($(wc -l <"$work/got"))" ||
	not_ok "exported symbols differ from libcgbypass.sym" "$out"
unversioned=$(nm -D --defined-only "$lib" | awk '$3 ~ /^cgbypass_/ && $3 !~ /@@LIBCGBYPASS_1$/')
[ -z "$unversioned" ] && ok "every symbol has version LIBCGBYPASS_1" || not_ok "unversioned symbols" "$unversioned"
grep -q "cgbypass_" "$work/got" && ok "the public functions are exported" || not_ok "no cgbypass_ symbol"

# the header stands alone
for pair in "c cc" "c++ c++"; do
	read -r lang compiler <<<"$pair"
	if ! command -v "$compiler" >/dev/null 2>&1; then
		ok "the header compiles alone as $lang # SKIP no $compiler"
		continue
	fi
	out=$(printf '#include <cgbypass/cgbypass.h>\nint f(void);\nint f(void) { return cgbypass_error_map[0].code; }\n' |
		"$compiler" -x "$lang" -Wall -Wextra -Werror -I"$src/include" -fsyntax-only - 2>&1) &&
		ok "the header compiles alone as $lang" || not_ok "the header as $lang" "$out"
done

# the map, decoded by sd-bus after nothing but loading the library
if ! "$list" >"$work/map" 2>"$work/map.err"; then
	not_ok "every name decodes to the map's errno" "$(cat "$work/map.err")"
else
	ok "every name decodes to the map's errno, registered at load ($(wc -l <"$work/map") names)"
fi
sed -nE 's/^\.BR (org\.cgbypass1\.Error\.[A-Za-z]+) " \(([A-Z]+)\)"$/\1 \2/p' "$src/man/org.cgbypass1.5" |
	sort >"$work/page"
[ "$(wc -l <"$work/page")" -ge 10 ] && ok "org.cgbypass1.5: errors with errnos: $(wc -l <"$work/page")" ||
	not_ok "org.cgbypass1.5: found only $(wc -l <"$work/page") errors with errnos; has the page changed shape?"
sort "$work/map" >"$work/map.sorted"
out=$(diff -u "$work/page" "$work/map.sorted") &&
	ok "org.cgbypass1(5) documents each error's errno as sd_bus_error_get_errno() decodes it" ||
	not_ok "org.cgbypass1(5) and the map disagree (- page, + map)" "$out"

tap_done
