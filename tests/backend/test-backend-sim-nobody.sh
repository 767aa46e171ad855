#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The sim backend needs no privileges: run its tests as nobody (setpriv).
# Usage: test-backend-sim-nobody.sh TEST-BACKEND-SIM
set -eu

exe=$1
if [ "$(id -u)" != 0 ]; then
    echo "1..0 # SKIP not root: the normal run of $exe is already unprivileged"
    exit 0
fi
if ! command -v setpriv >/dev/null 2>&1; then
    echo "1..0 # SKIP setpriv (util-linux) is not installed"
    exit 0
fi
uid=$(id -u nobody 2>/dev/null) || { echo "1..0 # SKIP no user nobody"; exit 0; }
gid=$(id -g nobody)
as_nobody() {
    setpriv --reuid="$uid" --regid="$gid" --clear-groups --reset-env "$@"
}
if ! as_nobody test -x "$exe"; then
    echo "1..0 # SKIP $exe is not reachable for nobody (a build directory below a private one)"
    exit 0
fi
# --reset-env drops the Check settings: pass them on; TMPDIR for mkdtemp()
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups \
    env -i PATH=/usr/bin:/bin TMPDIR=/tmp \
    CK_TAP_LOG_FILE_NAME="${CK_TAP_LOG_FILE_NAME:-}" CK_VERBOSITY="${CK_VERBOSITY:-normal}" \
    CK_DEFAULT_TIMEOUT="${CK_DEFAULT_TIMEOUT:-120}" CGB_TEST_EXPECT_UID="$uid" "$exe"
