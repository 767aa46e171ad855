/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Delegated cgroups are handed to their owners (the directory, cgroup.procs
 * and cgroup.threads; cgroup.subtree_control and cgroup.controllers stay
 * root's, so changes there go through the daemon).
 */

#include "manager.h"

/**
 * delegation_chown_all() - hand every existing delegated cgroup to its owner
 * @old: the previous configuration, or NULL: delegations it had and the
 *       current one lacks are taken back (owner root again)
 *
 * Failures are logged. Return: 0 or the first -errno.
 */
int delegation_chown_all(Manager *m, const Config *old);
