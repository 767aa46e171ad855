#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# The latency from an owner's mkdir(2) and rmdir(2) to CgroupChanged on the
# emulated backend, on the host's cgroup2 in a scratch cgroup: 200 rounds of
# vm-owner-probe series (the probe the VM test runs), with 300 cgroups
# already in the delegation so that a re-read of the hierarchy would show.
# Every signal must come (within 5 s); the figures (p50, p99, max, against a
# Ping of the daemon in the same run) are printed, not judged: the machine's
# load decides them. Skips without a writable cgroup2 mount offering
# CGB_TEST_CONTROLLER (hugetlb). TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
probe=${4:?vm-owner-probe}
rounds=${CGB_LATENCY_ROUNDS:-200}

trap 'bus_env_cgroup2_cleanup; bus_env_cleanup' EXIT
bus_env_use_cgroup2 cgb-lat
bus_env_start_bus || { echo "Bail out! the private bus did not start"; exit 1; }
bus_env_add_user alice || { echo "Bail out! useradd failed"; exit 1; }

bus_env_config alice.conf backend=emulated x="$X" alice="$alice" || { echo "Bail out! the configuration"; exit 1; }
bus_env_start_cgbypassd "$scratch" || { echo "Bail out! cgbypassd did not start on $scratch"; exit 1; }
for ((i = 0; i < 300; i++)); do echo "$scratch/alice/k$i"; done | bus_env_as "$alice" xargs mkdir
bus_env_wait_for 10 sh -c "'$client' call GetCgroup /alice/k299 | grep -q ^ok" &&
	ok "300 cgroups made by the owner are taken on" || not_ok "300 cgroups" "$("$client" call GetCgroup /alice/k299)"

if out=$(bus_env_as "$alice" "$probe" series "$scratch/alice" "$rounds" 100 2>&1); then
	ok "$rounds rounds of the owner's mkdir and rmdir: every CgroupChanged came"
else
	not_ok "$rounds rounds of the owner's mkdir and rmdir" "$out"
fi
while IFS= read -r line; do echo "# emulated (host): $line"; done <<<"$out"
bus_env_daemon_alive && ok "the daemon is still running" || not_ok "daemon" "$(tail "$BUS_ENV_DAEMON_LOG")"
bus_env_stop_clean "the daemon exits cleanly, no sanitizer report"
bus_env_done
