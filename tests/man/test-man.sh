#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015
# The man pages: each renders without a warning (man-db, groff -ww, and
# mandoc -T lint where installed), and each documents what the code has, as
# the code has it:
#   cgbypassd.8       every option of 'cgbypassd --help', as a tagged paragraph
#   cgbypassctl.1     every option and command of 'cgbypassctl --help', likewise
#   cgbypassd.conf.5  every key each section takes in src/lib/config/config.c,
#                     under that section's heading, the compiled-in defaults,
#                     and every controller file of src/lib/model/cfvalue.c
#   org.cgbypass1.5   every member of dbus/org.cgbypass1.Manager.xml, every error
#                     name of include/cgbypass/cgbypass.h, every polkit action
# and nothing the code does not have (an option, command, key or error name
# the page documents but the code lacks fails too). TAP output.
#
# Usage: test-man.sh SOURCE_ROOT CGBYPASSD CGBYPASSCTL PAGE...
set -uo pipefail

src=${1:?source root}
daemon=${2:?path to cgbypassd}
ctl=${3:?path to cgbypassctl}
shift 3

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"

command -v man >/dev/null 2>&1 || tap_skip_all "man is not installed (Debian: man-db)"
command -v groff >/dev/null 2>&1 || tap_skip_all "groff is not installed (Debian: groff-base)"
man --help 2>&1 | grep -q -- '--warnings' || tap_skip_all "man is not man-db (no --warnings)"
command -v perl >/dev/null 2>&1 || tap_skip_all "perl is not installed"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export LC_ALL=C.UTF-8 MANWIDTH=80
unset MANPAGER PAGER MANOPT MANROFFOPT GROFF_TMAC_PATH

declare -A page=()
for p in "$@"; do
	page[$(basename "$p")]=$p
done
for name in cgbypassd.8 cgbypassctl.1 cgbypassd.conf.5 org.cgbypass1.5; do
	[ -n "${page[$name]:-}" ] || {
		echo "Bail out! $name was not given"
		exit 1
	}
done

# ---- rendering ----

for name in cgbypassd.8 cgbypassctl.1 cgbypassd.conf.5 org.cgbypass1.5; do
	f=${page[$name]}
	err=$(man --warnings -l "$f" 2>&1 >/dev/null)
	[ -z "$err" ] && ok "$name: man --warnings -l renders it without a warning" ||
		not_ok "$name: man --warnings -l warns" "$err"
	err=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
	[ -z "$err" ] && ok "$name: groff -man -ww checks it without a warning" ||
		not_ok "$name: groff -man -ww warns" "$err"
	if command -v mandoc >/dev/null 2>&1; then
		# STYLE messages are advice (such as "lower case character in document title"
		# for org.cgbypass1); warnings and errors count, except the missing date: the
		# pages have none on purpose (as systemd's), the version says which they are
		err=$(mandoc -T lint -W warning "$f" 2>&1 | grep -v 'WARNING: missing date')
		[ -z "$err" ] && ok "$name: mandoc -T lint finds nothing" || not_ok "$name: mandoc -T lint" "$err"
	else
		ok "$name: mandoc -T lint # SKIP mandoc is not installed"
	fi
	if grep -q '@[A-Za-z_]*@' "$f"; then
		not_ok "$name: no template variable is left" "$(grep -n '@[A-Za-z_]*@' "$f")"
	else
		ok "$name: no template variable is left"
	fi
	# The text the checks below read: one very long line per paragraph (nothing is
	# wrapped or hyphenated), no bold or underline.
	groff -man -Tutf8 -rLL=1000n -P-cbou "$f" 2>/dev/null >"$work/$name.txt"
done

version=$("$daemon" --version | awk '{ print $2 }')
for name in cgbypassd.8 cgbypassctl.1 cgbypassd.conf.5 org.cgbypass1.5; do
	footer=$(tail -n 1 "$work/$name.txt")
	[[ -n $version && $footer == *"cgbypassd $version"* ]] && ok "$name: the footer names cgbypassd $version" ||
		not_ok "$name: the footer does not name cgbypassd $version" "$footer"
done

# ---- helpers over the rendered text ----

# section NAME PAGE: the lines of the section whose heading (at column 0) is NAME
section() {
	awk -v want="$1" '/^[^ ]/ { on = ($0 == want); next } on' "$work/$2.txt"
}

# tags PAGE [SECTION]: the tags of tagged paragraphs (lines indented by exactly 7
# columns, the .TP tag column of a section or subsection) of the page or section
tags() {
	if [ $# -gt 1 ]; then section "$2" "$1"; else cat "$work/$1.txt"; fi |
		grep -E '^ {7}[^ ]' | sed 's/^ *//'
}

# expect_all WHAT LIST_FILE FOUND_FILE: every line of LIST_FILE is in FOUND_FILE
expect_all() {
	local missing
	missing=$(grep -vxF -f "$3" "$2")
	[ -z "$missing" ] && ok "$1" || not_ok "$1" "missing: $(tr '\n' ' ' <<<"$missing")"
}

# nonempty WHAT FILE MIN: the extraction found at least MIN items (else the source changed shape)
nonempty() {
	local count
	count=$(grep -c . "$2")
	[ "$count" -ge "$3" ] && ok "$1: found $count" ||
		not_ok "$1: found $count, expected at least $3; has the source changed its shape?" "$(cat "$2")"
}

# options NAME PROGRAM PAGE MIN: PROGRAM --help (in NAME-help.txt) has at least MIN long options, and
# PAGE's OPTIONS tags ("--plan", "--config=FILE", "-h, --help", "--bus=system|session") are the same set
options() {
	local name=$1 program=$2 page=$3 min=$4 bin=${2##*/}
	"$program" --help >"$work/$name-help.txt"
	grep -oE -- '--[a-z][a-z-]*' "$work/$name-help.txt" | sort -u >"$work/$name-options"
	nonempty "$bin --help: long options" "$work/$name-options" "$min"
	tags "$page" OPTIONS | sed -nE 's/^(-[a-zA-Z], )?(--[a-z][a-z-]*).*/\2/p' | sort -u >"$work/$name-documented"
	expect_all "$page documents every option of $bin --help" "$work/$name-options" "$work/$name-documented"
	expect_all "$page documents no option that $bin --help lacks" "$work/$name-documented" "$work/$name-options"
}

# ---- cgbypassd.8: the options of --help ----

options daemon "$daemon" cgbypassd.8 11

# ---- cgbypassctl.1: the options and the commands of --help ----

options ctl "$ctl" cgbypassctl.1 5

awk '/^Commands:/ { on = 1; next } /^[^ ]/ { on = 0 } on && /^  [a-z]/ { print $1 }' "$work/ctl-help.txt" |
	sort -u >"$work/ctl-verbs"
nonempty "cgbypassctl --help: commands" "$work/ctl-verbs" 8
tags cgbypassctl.1 COMMANDS | awk '{ print $1 }' | sort -u >"$work/ctl-verbs-documented"
expect_all "cgbypassctl.1 documents every command of cgbypassctl --help" "$work/ctl-verbs" "$work/ctl-verbs-documented"
expect_all "cgbypassctl.1 documents no command that cgbypassctl --help lacks" \
	"$work/ctl-verbs-documented" "$work/ctl-verbs"

# ---- cgbypassd.conf.5: the keys of every section ----

# "SECTION KEY" for every key a section takes: section_info[] names each
# section; key_table[] lists { SECTION_X, "key", ... } (the KEY() macro too).
perl -0777 -ne '
	my %section;
	/section_info\[\]\s*=\s*\{(.*?)\n\};/s or die "no section_info[]\n";
	my $s = $1;
	$section{$2} = $1 while $s =~ /\{\s*"([a-z]+)"\s*,\s*(SECTION_[A-Z]+)\s*\}/g;
	/key_table\[\]\s*=\s*\{(.*?)\n\};/s or die "no key_table[]\n";
	my $table = $1;
	while ($table =~ /(?:KEY\(|\{)\s*(SECTION_[A-Z]+)\s*,\s*"([a-z-]+)"/g) {
		die "no section for $1\n" unless defined $section{$1};
		print "$section{$1} $2\n";
	}' "$src/src/lib/config/config.c" | sort -u >"$work/conf-keys"
nonempty "src/lib/config/config.c: section keys" "$work/conf-keys" 10
# the sections the page documents: its "[NAME] SECTION" headings
awk '/^\[[a-z]+\] SECTION$/ { print $1 }' "$work/cgbypassd.conf.5.txt" | tr -d '[]' | sort -u >"$work/conf-sections"
awk '{ print $1 }' "$work/conf-keys" | sort -u >"$work/conf-sections-code"
expect_all "cgbypassd.conf.5 has a section for every section of the loader" "$work/conf-sections-code" "$work/conf-sections"
while read -r s; do
	tags cgbypassd.conf.5 "[$s] SECTION" | sed -nE "s/^([a-z][a-z-]*) = .*/$s \\1/p"
done <"$work/conf-sections" | sort -u >"$work/conf-documented"
expect_all "cgbypassd.conf.5 documents every key of every section, under that section" \
	"$work/conf-keys" "$work/conf-documented"
expect_all "cgbypassd.conf.5 documents no key that the loader does not take there" \
	"$work/conf-documented" "$work/conf-keys"

# the compiled-in defaults and places, and the section name limit
perl -ne 'print "$1\n" if /#define\s+CONFIG_(?:MAIN_FILE|CONF_DIR|DEFAULT_CGROUP_ROOT|DEFAULT_STATE_DIRECTORY)\s+"([^"]+)"/' \
	"$src/include/cgbypass/config.h" >"$work/conf-defaults"
nonempty "include/cgbypass/config.h: defaults" "$work/conf-defaults" 4
for name in cgbypassd.8 cgbypassd.conf.5; do
	missing=
	while read -r d; do
		grep -qF -- "$d" "$work/$name.txt" || missing+=" $d"
	done <"$work/conf-defaults"
	[ -z "$missing" ] && ok "$name names the compiled-in defaults" ||
		not_ok "$name lacks the compiled-in defaults:$missing"
done
limit=$(sed -nE 's/^#define INI_SECTION_NAME_MAX ([0-9]+).*/\1/p' "$src/src/lib/config/config-parser.h")
[ -n "$limit" ] && grep -q "section name holds at most $limit bytes" "$work/cgbypassd.conf.5.txt" &&
	ok "cgbypassd.conf.5 states the section name limit ($limit bytes)" ||
	not_ok "cgbypassd.conf.5 does not state the section name limit of src/lib/config/config-parser.h ('$limit')"

# the controller files a [cgroup] section may set: value_types[] of cfvalue.c,
# each a tagged paragraph "FILE = VALUE" under "CONTROLLER FILES"
perl -0777 -ne '
	/value_types\[\]\s*=\s*\{(.*?)\n\};/s or die "no value_types[]\n";
	my $t = $1;
	print "$1\n" while $t =~ /\{\s*"([a-z0-9_.]+)"\s*,/g;' "$src/src/lib/model/cfvalue.c" | sort -u >"$work/value-files"
nonempty "src/lib/model/cfvalue.c: value files" "$work/value-files" 10
tags cgbypassd.conf.5 "CONTROLLER FILES" | sed -nE 's/^([a-z][a-z0-9_.]*\.[a-z0-9_.]+) = .*/\1/p' |
	sort -u >"$work/value-files-documented"
expect_all "cgbypassd.conf.5 documents every controller file a [cgroup] section may set" \
	"$work/value-files" "$work/value-files-documented"
expect_all "cgbypassd.conf.5 documents no controller file that cgbypassd cannot set" \
	"$work/value-files-documented" "$work/value-files"

# ---- org.cgbypass1.5: members, errors, polkit actions ----

perl -ne 'print "$1\n" while /<(?:method|property|signal) name="([A-Za-z]+)"/g' \
	"$src/dbus/org.cgbypass1.Manager.xml" | sort -u >"$work/members"
nonempty "dbus/org.cgbypass1.Manager.xml: members" "$work/members" 11
tags org.cgbypass1.5 "THE MANAGER OBJECT" | sed -nE 's/^([A-Z][A-Za-z]*)( ?\().*/\1/p' | sort -u >"$work/members-documented"
expect_all "org.cgbypass1.5 documents every method, property and signal" "$work/members" "$work/members-documented"
expect_all "org.cgbypass1.5 documents no member that the interface lacks" "$work/members-documented" "$work/members"

perl -ne 'print "org.cgbypass1.Error.$1\n" if /CGBYPASS_ERROR_PREFIX\s+"([A-Za-z]+)"/' \
	"$src/include/cgbypass/cgbypass.h" | sort -u >"$work/errors"
nonempty "include/cgbypass/cgbypass.h: error names" "$work/errors" 10
tags org.cgbypass1.5 ERRORS | sed -nE 's/^(org\.cgbypass1\.Error\.[A-Za-z]+).*/\1/p' | sort -u >"$work/errors-documented"
expect_all "org.cgbypass1.5 lists every org.cgbypass1.Error name in ERRORS" "$work/errors" "$work/errors-documented"
# (all capitals: a placeholder, as in "org.cgbypass1.Error.NAME")
cat "$work"/*.txt | grep -oE 'org\.cgbypass1\.Error\.[A-Za-z]+' | grep -vE '\.Error\.[A-Z]+$' |
	sort -u >"$work/errors-named"
expect_all "the pages name no org.cgbypass1.Error that the code lacks" "$work/errors-named" "$work/errors"

perl -ne 'print "$1\n" if /<action id="([^"]+)"/' "$src/polkit/org.cgbypass1.policy" | sort -u >"$work/actions"
nonempty "polkit/org.cgbypass1.policy: actions" "$work/actions" 2
for name in org.cgbypass1.5 cgbypassd.8; do
	grep -oE 'org\.cgbypass1\.(manage[a-z-]*|delegate)\b' "$work/$name.txt" | sort -u >"$work/actions-$name"
	expect_all "$name names every polkit action" "$work/actions" "$work/actions-$name"
	expect_all "$name names no polkit action that the policy lacks" "$work/actions-$name" "$work/actions"
done
tags org.cgbypass1.5 AUTHORIZATION | grep -xF -f "$work/actions" | sort -u >"$work/actions-tagged"
expect_all "org.cgbypass1.5 describes every polkit action in AUTHORIZATION" "$work/actions" "$work/actions-tagged"

tap_done
