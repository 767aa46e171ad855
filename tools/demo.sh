#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guided demo. As root on Debian 12: installs what it needs, builds, starts
# a private system bus with the real polkitd and cgbypassd on the sim backend
# (examples/demo.conf.in: the bypass series' documentation example and one
# delegation), then walks through it with cgbypassctl. Everything it starts or
# creates (bus, polkitd, daemon, a demo user, temp files) is removed at the end.
#
# usage: tools/demo.sh
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: run it as root: it starts a private system bus and polkitd, and adds a demo user" >&2
	exit 1
fi
tools/deps.sh demo
[ -f build/build.ninja ] || meson setup build >/dev/null
meson compile -C build >/dev/null

if [ -t 1 ]; then
	bold=$(tput bold 2>/dev/null || true)
	reset=$(tput sgr0 2>/dev/null || true)
else
	bold='' reset=''
fi
say() { printf '\n%s%s%s\n' "$bold" "$*" "$reset"; }
show() { # the command as a person would type it, then its output
	local shown="$*"
	printf '  $ %s\n' "${shown//$top\/build\/src\/ctl\//}"
	"$@" 2>&1 | sed 's/^/    /' || true
}

# shellcheck source=tests/bus/bus-env.sh
. tests/bus/bus-env.sh
bus_env_init "$top" "$top/build/src/daemon/cgbypassd"
bus_env_start_bus
bus_env_install_policy
bus_env_start_polkit
owner=
bus_env_add_user owner # sets owner (the user name) and owner_uid
ctl=$top/build/src/ctl/cgbypassctl
sed "s/@OWNER@/$owner/" examples/demo.conf.in >"$BUS_ENV_DIR/demo.conf"
mkdir -p "$BUS_ENV_DIR/root" "$BUS_ENV_DIR/state"
bus_env_start_daemon --config "$BUS_ENV_DIR/demo.conf" --config-dir "$BUS_ENV_DIR/none" \
	--cgroup-root "$BUS_ENV_DIR/root" --state-directory "$BUS_ENV_DIR/state"
as_owner() { bus_env_as "$owner" "$@"; }

say "cgbypassd runs on a private system bus (sim backend: a directory that looks like cgroup2)."
show "$ctl" status
say "The configuration: / enables cpu; A, B and C bypass it ('#cpu'); D enables it again;
G (under B) is delegated to the user '$owner', who may switch cpu there."
show "$ctl" delegations
say "The effective hierarchy for cpu: one line per cpu css, cgroups that share it joined."
show "$ctl" tree cpu
show "$ctl" show /A/B/G
say "The owner re-enables cpu for G (G's parent B bypasses cpu). polkit allows owners
in their own delegation; cgbypassd checks the ownership."
printf '  $ runuser -u %s -- cgbypassctl enable /A/B/G cpu\n' "$owner"
as_owner "$ctl" enable /A/B/G cpu 2>&1 | sed 's/^/    /' || true
show "$ctl" tree cpu
show cat "$BUS_ENV_DIR/root/A/B/G/cgroup.controllers"
show ls "$BUS_ENV_DIR/root/A/B/G"
say "Refused: the owner may not touch B, which is not delegated to them ..."
printf '  $ runuser -u %s -- cgbypassctl enable /A/B cpu\n' "$owner"
as_owner "$ctl" enable /A/B cpu 2>&1 | sed 's/^/    /' || true
say "... and even root cannot make B leave bypass mode while G re-enabled cpu below it."
show "$ctl" set /A/B -cpu
say "The owner puts G back in bypass mode."
printf '  $ runuser -u %s -- cgbypassctl bypass /A/B/G cpu\n' "$owner"
as_owner "$ctl" bypass /A/B/G cpu 2>&1 | sed 's/^/    /' || true
show "$ctl" tree cpu

cat <<MSG

${bold}Where to go from here${reset}
  cgbypassd --help, cgbypassctl --help; the model behind every answer:
  build/src/trace/cgbypass-trace --model examples/documentation-example.trace
  The demo's bus, polkitd, daemon and user '$owner' are removed now.
MSG
