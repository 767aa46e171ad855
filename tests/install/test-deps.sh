#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-deps.sh TOP [PROFILE]
# Every tool a script of the project tests for is installed by
# `tools/deps.sh PROFILE` (default test), so a fresh Debian 12 machine that ran
# it has everything (issue 12: build-kernel.sh stopped at a missing rsync).
#
# The tools: each literal `command -v TOOL`, and each `for VAR in A B C; do`
# list followed within three lines by `command -v "$VAR"`, in
# TOP/{tools,kernel,tests,bench}/**/*.sh. Each is mapped to the Debian
# package that owns it on this machine (dpkg -S) and is fine when that package
#   - is Essential: yes or Priority: required (what the smallest Debian 12,
#     debootstrap's minbase and the debian:12 image, always has), or
#   - is in the profile's list (tools/deps.sh --list PROFILE), or
#   - comes with a package in that list (its Depends and Pre-Depends,
#     recursively: dbus-daemon comes with dbus, pkgconf with pkg-config).
# A tool that is not installed here fails the test once every package of the
# list is installed (deps.sh has run and did not bring it), and is skipped,
# with the reason, before. TAP output.
set -uo pipefail

top=${1:?source tree}
profile=${2:-test}
# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
# what Debian's packages install, not what this machine added (/usr/local, ~)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

if ! listed=$("$top/tools/deps.sh" --list "$profile" 2>&1) || [ -z "$listed" ]; then
	not_ok "tools/deps.sh --list $profile" "$listed"
	echo "1..$TAP_N"
	exit 1
fi
declare -A in_list pulled essential priority installed deps_of
for p in $listed; do in_list[$p]=1; done
# Essential, Priority, Status and dependencies of every package dpkg knows, at once
while IFS='|' read -r p e pr st deps; do
	essential[$p]=$e priority[$p]=$pr deps_of[$p]=$deps
	[ "$st" = "install ok installed" ] && installed[$p]=1
done < <(dpkg-query -W -f='${Package}|${Essential}|${Priority}|${Status}|${Depends}, ${Pre-Depends}\n' 2>/dev/null |
	awk -F'|' -v OFS='|' '{ d = $5; for (i = 6; i <= NF; i++) d = d " " $i
		gsub(/\([^)]*\)|\[[^]]*\]|:[a-z0-9]+|,/, " ", d); $5 = d; NF = 5; print }')
# what installing the list brings: its Depends and Pre-Depends, recursively
# (pulled[P] = the listed package that brings P)
queue=()
for p in $listed; do pulled[$p]=$p queue+=("$p"); done
while [ ${#queue[@]} -gt 0 ]; do
	p=${queue[0]} queue=("${queue[@]:1}")
	for d in ${deps_of[$p]:-}; do
		[ -n "${pulled[$d]:-}" ] && continue
		pulled[$d]=${pulled[$p]}
		queue+=("$d")
	done
done
not_installed=()
for p in $listed; do [ -n "${installed[$p]:-}" ] || not_installed+=("$p"); done

# tool -> the first script that tests for it
declare -A script_of
tools=()
while IFS=: read -r file tool; do
	[ -n "${script_of[$tool]:-}" ] && continue
	script_of[$tool]=${file#"$top"/}
	tools+=("$tool")
done < <(
	find "$top/tools" "$top/kernel" "$top/tests" "$top/bench" -name '*.sh' -type f -print0 2>/dev/null |
		LC_ALL=C sort -z | xargs -0 -r awk '
			FNR == 1 { loopvar = "" }
			/^[[:space:]]*#/ { next }
			# for VAR in A B C; do ... command -v "$VAR": the list, when the
			# test follows within three lines
			match($0, /for [A-Za-z_][A-Za-z0-9_]* in [^;$"]*; do/) {
				split(substr($0, RSTART + 4, RLENGTH - 4), w, " ")
				loopvar = w[1]; looplist = ""; loopline = FNR
				for (i = 3; i in w && w[i] != "do"; i++) looplist = looplist " " w[i]
				sub(/;$/, "", looplist)
			}
			loopvar != "" && FNR - loopline <= 3 &&
			    (index($0, "command -v \"$" loopvar "\"") || index($0, "command -v $" loopvar)) {
				n = split(looplist, t, " ")
				for (i = 1; i <= n; i++) print FILENAME ":" t[i]
				loopvar = ""
			}
			{
				while (match($0, /command -v [A-Za-z0-9_][A-Za-z0-9_.+-]*/)) {
					print FILENAME ":" substr($0, RSTART + 11, RLENGTH - 11)
					$0 = substr($0, RSTART + RLENGTH)
				}
			}'
)
if [ ${#tools[@]} -eq 0 ]; then
	not_ok "found the tools the scripts test for" "no 'command -v' in $top/{tools,kernel,tests,bench}"
	echo "1..$TAP_N"
	exit 1
fi

# the package that owns each command's file, from one dpkg -S (it reads every
# file list, so once); /bin and /usr/bin are one directory on a merged-/usr
# system, but dpkg knows each file under one of the names
declare -A path_of owner_of
candidates() { # the names dpkg may know the command's file by, in order
	local c
	for c in "$1" "$(readlink -f "$1")"; do printf '%s\n' "$c" "${c#/usr}" "/usr${c#/usr}"; done
}
for t in "${tools[@]}"; do path_of[$t]=$(command -v "$t") || path_of[$t]=; done
while IFS='|' read -r file pkg; do
	owner_of[$file]=$pkg
done < <(for t in "${tools[@]}"; do [ -n "${path_of[$t]}" ] && candidates "${path_of[$t]}"; done |
	sort -u | xargs -r dpkg -S 2>/dev/null |
	sed -n '/^diversion by /d; s/^\([^:, ]*\)\(:[a-z0-9]*\)\{0,1\}\(, [^:]*\)*: \(.*\)$/\4|\1/p')
owner() {
	local c
	while read -r c; do
		[ -n "${owner_of[$c]:-}" ] && echo "${owner_of[$c]}" && return 0
	done < <(candidates "$1")
	return 1
}

for t in "${tools[@]}"; do
	where=${script_of[$t]}
	path=${path_of[$t]}
	if [ -z "$path" ]; then
		if [ ${#not_installed[@]} -eq 0 ]; then
			not_ok "'$t' ($where): not installed, although every package of 'deps.sh $profile' is; add the package that has it to tools/deps.sh"
		else
			ok "'$t' ($where) # SKIP not installed, and 'tools/deps.sh $profile' has not run (missing: ${not_installed[*]})"
		fi
		continue
	fi
	if ! pkg=$(owner "$path"); then
		not_ok "'$t' ($where): $path belongs to no Debian package, so tools/deps.sh cannot install it"
		continue
	fi
	if [ "${essential[$pkg]:-}" = yes ]; then
		ok "'$t' ($where): $pkg, in every Debian 12 (Essential)"
	elif [ "${priority[$pkg]:-}" = required ]; then
		ok "'$t' ($where): $pkg, in every Debian 12 (Priority: required)"
	elif [ -n "${in_list[$pkg]:-}" ]; then
		ok "'$t' ($where): $pkg, in deps.sh's list"
	elif [ -n "${pulled[$pkg]:-}" ]; then
		ok "'$t' ($where): $pkg, which ${pulled[$pkg]} in deps.sh's list brings"
	else
		not_ok "'$t' ($where): package $pkg is not installed by 'tools/deps.sh $profile' (Priority: ${priority[$pkg]:-?}; add it to its list)"
	fi
done

tap_done
