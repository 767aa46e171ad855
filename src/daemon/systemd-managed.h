/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The supported deployment on a systemd host (docs/systemd.md): cgbypassd
 * manages subtrees that systemd delegates (a service or scope with
 * Delegate=yes) and never a cgroup systemd manages itself, whose
 * cgroup.subtree_control systemd rewrites at every daemon-reload and unit
 * start or stop. Who manages a cgroup is systemd's word: the unit
 * GetUnitByControlGroup names, its ControlGroup and its Delegate property.
 * (Not the trusted.delegate xattr systemd >= 251 sets: reading trusted.*
 * needs CAP_SYS_ADMIN, which the unit does not give.)
 */

#include <stdbool.h>
#include <sys/types.h>

#include "cgbypass/config.h"

typedef struct Manager Manager;

/* systemd's answer for one cgroup path: the unit whose cgroup holds it */
typedef struct SystemdUnit {
        char *id;               /* "foo.service" */
        char *cgroup;           /* its ControlGroup, "/system.slice/foo.service" */
        bool delegate;          /* Delegate=yes (a slice has no Delegate=: false) */
} SystemdUnit;

void systemd_unit_done(SystemdUnit *u);

/* Return: 0 with @ret filled, or a negative errno (the check then reports it for the path). */
typedef int (*SystemdUnitLookup)(const char *path, SystemdUnit *ret, void *userdata);

/**
 * systemd_managed_check() - refuse the configuration's cgroups that systemd manages
 * @c: the configuration (its run-time delegations are not checked: AddDelegation checked
 *     them, with systemd_managed_check_delegation(), and a reload must not fail for them)
 * @lookup: systemd's answer for a path
 * @errs: one error per refused section, at its path= line, with the reason and the fix
 *
 * A [cgroup] section's subtree-control and a [delegate] section may name a delegated
 * unit's own cgroup or anything below it; a [cgroup] section's controllers= and
 * values (cpu.weight = ...) must be below it: the unit's own controllers and values
 * are systemd's (the parent's cgroup.subtree_control, CPUWeight= and the like).
 *
 * Return: 0, -EINVAL when an error was added, or -ENOMEM.
 */
int systemd_managed_check(const Config *c, SystemdUnitLookup lookup, void *userdata, ConfigErrors *errs);

/**
 * manager_check_systemd_managed() - systemd_managed_check() with systemd's answers, when
 * cgbypassd runs under systemd (sd_booted()) on a cgroup2 mount (not the sim)
 *
 * Asks systemd on its private socket (root), else on the system bus.
 *
 * Return: as systemd_managed_check(); 0 when not under systemd.
 */
int manager_check_systemd_managed(Manager *m, const Config *c, ConfigErrors *errs);

/**
 * systemd_managed_check_delegation() - the same rule for AddDelegation's cgroup
 * @path: the cgroup to delegate
 * @uid: to whom
 * @ret_why: when refused, the reason and the fix (free())
 *
 * As a [delegate] section: at or below the cgroup of a unit with Delegate=yes. Inside
 * user@UID.service, whose inside the user's own systemd manages, only the cgroup of a scope
 * or service of hers (the name ends in .scope or .service; not a slice), delegated to UID:
 * cgbypassd cannot ask that systemd (its socket is in /run/user, which the unit's
 * ProtectHome= hides), so the caller answers for its Delegate=yes.
 *
 * Return: 0 (allowed), -EINVAL with *@ret_why, or -ENOMEM.
 */
int systemd_managed_check_delegation(const char *path, uid_t uid, SystemdUnitLookup lookup, void *userdata,
                                     char **ret_why);

/**
 * manager_check_systemd_delegation() - systemd_managed_check_delegation() with systemd's
 * answers, under the conditions of manager_check_systemd_managed()
 *
 * Return: as systemd_managed_check_delegation(); 0 when not under systemd.
 */
int manager_check_systemd_delegation(Manager *m, const char *path, uid_t uid, char **ret_why);
