# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# The request benchmarks' configuration, sourced by bench-bus.sh (part 1, and
# 1c's /srv) and profile-request.sh, so that the profile measures the setup
# bench-bus times.

# srv_alice_conf FILE USER CONTROLLER: appends the managed /srv and USER's delegation of CONTROLLER below it
srv_alice_conf() {
	cat >>"$1" <<-CONF
	[cgroup]
	path = /srv
	subtree-control = +cpu +memory

	[delegate]
	path = /srv/alice
	user = $2
	controllers = $3
	CONF
}

# request_conf FILE USER CONTROLLER: part 1's whole configuration (sim backend)
request_conf() {
	cat >"$1" <<-CONF
	[daemon]
	backend = sim

	[cgroup]
	path = /
	subtree-control = +cpu +io +memory

	CONF
	srv_alice_conf "$@"
}
