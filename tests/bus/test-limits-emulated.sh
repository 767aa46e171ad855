#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ok and not_ok never fail, so 'test && ok || not_ok' is an if-else here
# shellcheck disable=SC2015,SC2154 # SC2154: users come from bus_env_add_user
#
# The limits on cgroups in delegations on the emulated backend, on the
# host's cgroup2 in a scratch cgroup, with the real polkitd. The kernel
# cannot be told to refuse an owner's mkdir, so (delegation-limits.h,
# docs/backends.md): with max-cgroups-per-delegation = 5 and
# max-delegated-cgroups = 8, the cgroups beyond a limit are not taken on,
# the daemon says so once per delegation, every request in that delegation
# is refused with TooManyCgroups and changes nothing, other delegations are
# served; once the owner has removed enough, the delegation is managed
# again, what it holds taken on. Skips without a writable cgroup2 mount
# offering CGB_TEST_CONTROLLER (hugetlb). TAP.
set -uo pipefail

# shellcheck source=tests/bus/bus-env.sh
. "${1:?source dir}/tests/bus/bus-env.sh"
bus_env_main "$@"
bus_env_require_polkitd

trap 'bus_env_cgroup2_cleanup; bus_env_cleanup' EXIT
bus_env_use_cgroup2 cgb-lim
bus_env_polkit_setup alice

D=$BUS_ENV_DIR
bus_env_config limits.conf backend=emulated top= x="$X" alice="$alice" || { echo "Bail out! the configuration"; exit 1; }
printf '\n[cgroup]\npath = /\nsubtree-control = #%s\n' "$X" >>"$D/c.conf"
as() { bus_env_client_as "$1" --no-interactive call "${@:2}"; }
children() { "$client" call GetCgroup "$1" | sed -n 's/^children=//p'; }
count() { tr ' ' '\n' <<<"$1" | grep -c "^$2"; }
snap() { (cd "$scratch" && find . -type d -printf '%p %U\n' | sort && cat ./*/cgroup.subtree_control) 2>&1; }
warned() { grep -c "Not taking on more cgroups in the delegation $1" "$BUS_ENV_DAEMON_LOG"; }

bus_env_start_cgbypassd "$scratch" || { echo "Bail out! cgbypassd did not start on $scratch"; exit 1; }

# ---- within the limit: 4 children and the root ----
bus_env_as "$alice" mkdir "$scratch/a1/c0" "$scratch/a1/c1" "$scratch/a1/c2" "$scratch/a1/c3" ||
	{ echo "Bail out! the owner's mkdir failed"; exit 1; }
kids=$(children /a1)
[ "$(count "$kids" /a1/c)" = 4 ] && [ "$(warned /a1)" = 0 ] &&
	ok "max-cgroups-per-delegation = 5: the root and 4 children are taken on, no warning" || not_ok "within" "$kids"
as "$alice" SetSubtreeControl /a1 "#$X"
[ "$st" -eq 0 ] && as "$alice" EnableController /a1/c0 "$X"
[ "$st" -eq 0 ] && ok "the owner's requests in the delegation are served" || not_ok "request within" "$out"

# ---- beyond it: c4 and c5 are not taken on; said once ----
bus_env_as "$alice" mkdir "$scratch/a1/c4" "$scratch/a1/c5" "$scratch/a1/c4/g"
bus_env_wait_for 5 grep -q "Not taking on more cgroups in the delegation /a1" "$BUS_ENV_DAEMON_LOG"
kids=$(children /a1)
[ "$(count "$kids" /a1/c)" = 4 ] && [ "$(warned /a1)" = 1 ] &&
	grep -q "delegation /a1: the delegation /a1 holds 5 cgroup(s).*max-cgroups-per-delegation" "$BUS_ENV_DAEMON_LOG" &&
	ok "beyond the limit: nothing more is taken on, the daemon says once which limit" ||
	not_ok "beyond" "$kids $(grep -i 'taking on' "$BUS_ENV_DAEMON_LOG")"
before=$(snap)
as root GetCgroup /a1/c4
[ "$st" -eq 1 ] && [[ $out == "org.cgbypass1.Error.TooManyCgroups: cgbypassd did not take on /a1/c4: its delegation /a1 holds more cgroups than"*"max-cgroups-per-delegation = 5"* ]] &&
	ok "GetCgroup of a cgroup not taken on: TooManyCgroups, naming the limits" || not_ok "GetCgroup beyond" "$out"
as "$alice" EnableController /a1/c1 "$X"
[ "$st" -eq 1 ] && [[ $out == "org.cgbypass1.Error.TooManyCgroups: "*"/a1"* ]] &&
	ok "a request on a cgroup taken on before, in the same delegation: TooManyCgroups" || not_ok "request in /a1" "$out"
as "$alice" EnableController /a1/c4 "$X"
[ "$st" -eq 1 ] && [[ $out == "org.cgbypass1.Error.TooManyCgroups: "* ]] &&
	ok "... and on one not taken on" || not_ok "request on c4" "$out"
[ "$before" = "$(snap)" ] && ok "... the refusals changed nothing in the kernel" ||
	not_ok "a refusal changed something" "$(diff <(echo "$before") <(snap) | head)"
for i in 6 7 8; do bus_env_as "$alice" mkdir "$scratch/a1/c$i"; done
as root GetCgroup /a1
sleep 0.3
[ "$(warned /a1)" = 1 ] && ok "more mkdirs beyond the limit: still one line" || not_ok "log flood" "$(warned /a1)"

# ---- another delegation is served; the total ----
as "$alice" EnableController /a2 "$X"
[ "$st" -eq 0 ] && ok "the other delegation is served meanwhile" || not_ok "a2" "$out"
bus_env_as "$alice" mkdir "$scratch/a2/d0" "$scratch/a2/d1" "$scratch/a2/d2"
bus_env_wait_for 5 grep -q "Not taking on more cgroups in the delegation /a2" "$BUS_ENV_DAEMON_LOG"
kids2=$(children /a2)
as root GetCgroup /a2/d2
[ "$(count "$kids2" /a2/d)" = 2 ] && [[ $out == "org.cgbypass1.Error.TooManyCgroups: "*"max-delegated-cgroups = 8"* ]] &&
	grep -q "delegation /a2: all delegations together hold 8 cgroup(s)" "$BUS_ENV_DAEMON_LOG" &&
	ok "max-delegated-cgroups = 8: 2 of 3 more are taken on, the third is TooManyCgroups" || not_ok "total" "$kids2 $out"

# ---- room again: the owner removes what is beyond the limit ----
bus_env_as "$alice" rmdir "$scratch/a1/c8" "$scratch/a1/c7" "$scratch/a1/c6" "$scratch/a1/c5" "$scratch/a1/c4/g"
as "$alice" EnableController /a1/c1 "$X"
[ "$st" -eq 1 ] && ok "still beyond (c4 is left): refused" || not_ok "still beyond" "$out"
bus_env_as "$alice" rmdir "$scratch/a1/c3"
bus_env_wait_for 5 grep -q "The delegation /a1 is within its limits again" "$BUS_ENV_DAEMON_LOG"
kids=$(children /a1)
as "$alice" EnableController /a1/c4 "$X"
[ "$st" -eq 0 ] && [[ " $kids " == *" /a1/c4 "* ]] && [ "$(count "$kids" /a1/c)" = 4 ] &&
	ok "after the owner removed enough, the delegation is managed again: c4 taken on, its request served" ||
	not_ok "room again" "$kids $out"
bus_env_daemon_alive && ok "the daemon is still running" || not_ok "daemon" "$(tail "$BUS_ENV_DAEMON_LOG")"
bus_env_stop_clean "the daemon exits cleanly, no sanitizer report"
bus_env_done
