/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Delegations made at run time (AddDelegation, RemoveDelegation). They live
 * in the running Config beside the [delegate] sections (DelegateSpec.runtime),
 * so every rule and check of a configured delegation holds for them too,
 * and are recorded in STATE_DIR/delegations, crash-safe, one line each:
 *
 *   delegate PATH uid=UID controllers=cpu,io lifetime=cgroup|persistent create=yes|no
 *
 * A reload or a restart reads the file with the configuration: a
 * configuration that conflicts with one of them is refused, naming both
 * places (FILE:LINE and STATE_DIR/delegations:LINE). Lifetime "cgroup": the
 * delegation ends when its cgroup is gone (seen at the next refresh).
 */

#include "manager.h"

#define RUNTIME_DELEGATIONS_FILE_NAME "delegations"

/**
 * runtime_delegations_merge() - add the recorded run-time delegations to @c
 *
 * Return: 0; -EINVAL with @errs (a malformed record, a conflict with the
 * configuration); -errno reading the file.
 */
int runtime_delegations_merge(Config *c, ConfigErrors *errs);

/* Run-time delegations of lifetime "cgroup" whose cgroup is gone end (logged, recorded). */
void runtime_delegations_forget_gone(Manager *m);

/**
 * manager_add_delegation() - delegate @path to @uid for @controllers, now and after restarts
 * @create: make the cgroup when it is missing
 * @persistent: until RemoveDelegation (else until the cgroup is removed)
 * @reterr: why, for the caller: REFUSAL_REQUEST with the reason of each errno below
 *
 * Recorded first, then applied (the cgroup made, handed to its owner); on a
 * failure the record is restored and nothing changed. Return: 0; -ENOENT
 * (no such cgroup, or its parent is missing); -EEXIST (the cgroup is
 * delegated already, or a delegation holds it or lies below it); -EINVAL
 * (the policy cannot have it); -errno of the state or of a write.
 */
int manager_add_delegation(Manager *m, const char *path, uid_t uid, CgMask controllers, bool create,
                           bool persistent, Refusal *reterr);

/**
 * manager_remove_delegation() - end a run-time delegation of @path
 *
 * The files go back to root; the cgroups and their controllers stay.
 * Return: 0; -ESRCH (no delegation of @path); -EPERM (a configured one:
 * @reterr names its place); -errno of the state (nothing changed).
 */
int manager_remove_delegation(Manager *m, const char *path, uid_t *ret_uid, Refusal *reterr);
