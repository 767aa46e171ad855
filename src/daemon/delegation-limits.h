/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The most cgroups cgbypassd takes on in delegations: each costs the model,
 * an inotify watch (watch.c) and a share of every refresh, and owners make
 * them at will. A cgroup beyond a limit is not taken on (adopt.c): the
 * directory stays, unmanaged, the owner's requests on it are refused with
 * TooManyCgroups, and it is taken on once the delegation is below the limit
 * again. AddDelegation that would exceed the total is refused the same way.
 * The limits are [daemon] max-cgroups-per-delegation and
 * max-delegated-cgroups (cgbypassd.conf(5); cgbypassd(8), LIMITS).
 */

#include <stddef.h>

typedef struct Manager Manager;

/* The cgroups of the delegation rooted at @root that the model knows (0: not known). */
size_t delegation_cgroups(const Manager *m, const char *root);

/* The cgroups of all delegations that the model knows. */
size_t delegated_cgroups(const Manager *m);

/**
 * delegation_limits_check() - whether @adding more cgroups may join the delegation @root
 * @total: delegated_cgroups() now
 * @reterr_why: which limit, as a sentence (may be NULL)
 *
 * Return: 0 they may; -EDQUOT a limit forbids it; -ENOMEM.
 */
int delegation_limits_check(const Manager *m, const char *root, size_t total, size_t adding, char **reterr_why);
