#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-config-examples.sh CGBYPASSD DEFAULT-CONF EXAMPLE...
# The shipped configuration files load: the commented default file alone
# (and it changes nothing), each example alone, and each example as a drop-in
# beside the default file, as an administrator would copy it. All with
# --check-config and --plan on a fresh sim root. TAP output.
set -uo pipefail

daemon=${1:?cgbypassd} default=${2:?cgbypassd.conf}
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"
run() { # tag conf confdir mode: a fresh sim root per run
	rm -rf "$work/root-$1" "$work/state-$1"
	"$daemon" "$4" --backend sim --cgroup-root "$work/root-$1" --state-directory "$work/state-$1" \
		--config "$2" --config-dir "$3"
}
mkdir "$work/empty"

out=$(run default "$default" "$work/empty" --check-config 2>&1) && ok "$(basename "$default"): --check-config" ||
	not_ok "$(basename "$default"): --check-config" "$out"
out=$(run default "$default" "$work/empty" --plan 2>&1) && [ -z "$out" ] &&
	ok "$(basename "$default"): every setting commented out, the plan is empty" ||
	not_ok "$(basename "$default"): --plan" "$out"
# the [daemon] settings, uncommented, are valid ([cgroup] and [delegate] have
# no defaults; their keys are documented)
awk '/^#\[daemon\]$/ { on = 1 } /^# \[/ { on = 0 } on && /^#[[a-z]/ { print substr($0, 2) }' "$default" \
	>"$work/daemon.conf"
keys=$(grep -c ' = ' "$work/daemon.conf")
out=$(run daemon "$work/daemon.conf" "$work/empty" --check-config 2>&1) && [ "$keys" -eq 5 ] &&
	ok "$(basename "$default"): its [daemon] section uncommented ($keys keys) is valid" ||
	not_ok "$(basename "$default"): [daemon] uncommented ($keys keys)" "$out"
missing=
for k in path create subtree-control controllers user; do
	grep -q "^#$k = " "$default" || missing+=" $k"
done
[ -z "$missing" ] && ok "$(basename "$default") documents every [cgroup] and [delegate] key" ||
	not_ok "$(basename "$default") lacks$missing"

# An example for a systemd host configures a Delegate=yes unit's subtree; on
# the sim a drop-in plays systemd's part, which enables the controllers of
# Delegate=yes (cpu cpuset io memory pids) on the way down to the unit's
# cgroup (tests/system checks the real one).
mkdir "$work/systemd"
cat >"$work/systemd/00-as-systemd.conf" <<'EOF'
[cgroup]
path = /
subtree-control = +cpu +cpuset +io +memory +pids
[cgroup]
path = /system.slice
subtree-control = +cpu +cpuset +io +memory +pids
EOF
for ex in "$@"; do
	name=$(basename "$ex")
	dir=$work/empty
	grep -q '^path = /system\.slice/' "$ex" && dir=$work/systemd
	out=$(run "$name" "$ex" "$dir" --check-config 2>&1) && ok "$name: --check-config" ||
		not_ok "$name: --check-config" "$out"
	out=$(run "$name" "$ex" "$dir" --plan 2>&1) && [ -n "$out" ] &&
		ok "$name: --plan ($(printf '%s\n' "$out" | wc -l) operations)" || not_ok "$name: --plan" "$out"
	mkdir -p "$work/conf.d-$name"
	[ "$dir" = "$work/empty" ] || cp "$dir"/*.conf "$work/conf.d-$name/"
	cp "$ex" "$work/conf.d-$name/50-$name"
	out=$(run "$name-dropin" "$default" "$work/conf.d-$name" --check-config 2>&1) &&
		ok "$name as a drop-in beside $(basename "$default")" ||
		not_ok "$name as a drop-in beside $(basename "$default")" "$out"
done

tap_done
