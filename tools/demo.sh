#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guided demo: installs what the build needs (as root), builds, and walks
# through the bypass series' documentation example on the model of a kernel
# that carries the series (cgbypass-trace --model), one step at a time.
#
# usage: tools/demo.sh [TRACE]    (default: examples/documentation-example.trace)
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
trace=${1:-examples/documentation-example.trace}

tools/deps.sh build
if [ ! -f build/build.ninja ]; then
	meson setup build >/dev/null
fi
meson compile -C build >/dev/null

if [ -t 1 ]; then
	bold=$(tput bold 2>/dev/null || true)
	dim=$(tput dim 2>/dev/null || true)
	reset=$(tput sgr0 2>/dev/null || true)
else
	bold='' dim='' reset=''
fi

out=$(build/src/trace/cgbypass-trace --model --rules bypass "$trace")

# Print the trace with each operation's result beside it; '## ' lines narrate.
n=0
while IFS= read -r line || [ -n "$line" ]; do
	n=$((n + 1))
	case "$line" in
	'## '*)
		printf '\n%s%s%s\n' "$bold" "${line#\#\# }" "$reset"
		continue
		;;
	'#'* | '') continue ;;
	esac
	result=$(printf '%s\n' "$out" | sed -n "s/^$n //p")
	case "$line" in
	tree*)
		printf '  %s%s%s\n' "$dim" "$line" "$reset"
		printf '%s\n' "${result#= }" | sed 's/ | /\n/g' | sed 's/^/      /'
		;;
	*)
		printf '  %-48s %s\n' "$line" "$result"
		;;
	esac
done <"$trace"

cat <<MSG

${bold}What happened${reset}
  Each line above ran on cgbypassd's model of Linux 6.1 with the bypass series
  (src/lib/model/). The same trace runs against a real kernel that carries the
  series with 'cgbypass-trace --kernel /sys/fs/cgroup TRACE', and the outputs
  are compared byte for byte in the test suite (kernel/, tests/traces/).
  Try:  build/src/trace/cgbypass-trace --model --rules stock $trace
MSG
