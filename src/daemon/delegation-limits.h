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

/*
 * native and emulated cannot refuse an owner's mkdir(2): a delegation whose
 * directories go beyond a limit is "over its limit". The cgroups beyond it
 * are not taken on (no model, no watch), the daemon says so once in the
 * journal, and every request on a cgroup of that delegation is refused
 * with TooManyCgroups until the owner has removed enough (each of its rmdirs
 * in an over-limit delegation counts the directories again). A whole
 * re-read (start-up, reload) takes on what it finds and marks a delegation
 * that holds more than max-cgroups-per-delegation.
 */

/* The root of the delegation that holds @path if it is over its limit, or NULL. */
const char *delegation_over_limit(const Manager *m, const char *path);

/* Mark @root over its limit, saying @why once. Return: 0 or -ENOMEM. */
int delegation_mark_over(Manager *m, const char *root, const char *why);

/* @root is within its limits again: said once. */
void delegation_clear_over(Manager *m, const char *root);

/* After a whole re-read: mark the delegations that hold more than max-cgroups-per-delegation. */
void delegation_limits_recheck(Manager *m);

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
