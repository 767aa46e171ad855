/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Delegated cgroups are handed to their owners: the delegation root's
 * directory, cgroup.procs and cgroup.threads (its other files stay root's:
 * they bound the owner, and changes there go through the daemon), and below
 * it every file to the owner of its cgroup's directory. Every change of an
 * owner goes through backend_chown*() (cgroupfs.c vets each file on its fd).
 */

#include "manager.h"

/* A cgroup's interface files, as the model lists them (sorted). */
typedef struct OwnershipFiles {
        char *path;
        const char **files;     /* cftype_table[]'s names (cgroup_list_file_names()) */
} OwnershipFiles;

/* The files of a request's subtree before its writes (ownership_before()). */
typedef struct OwnershipBefore {
        OwnershipFiles *v;      /* sorted by path */
        size_t n;               /* 0: not taken (the pass looks at every file); else @scope's cgroup is one */
} OwnershipBefore;

/**
 * ownership_writes_as_owner() - a request's writes at @scope made as the owner would
 *
 * For a @scope strictly inside a delegation, where every file its writes
 * make appear is the owner's: asks the backend to create those files as the
 * owner of their directory (the sim can, as root; the kernel makes them as
 * root), so that no ownership_before() and ownership_sync() are needed. Not
 * while a cgroup waits for a whole pass after a failed one. Return: true
 * when the backend will; then call ownership_writes_done() after the writes.
 */
bool ownership_writes_as_owner(Manager *m, const char *scope);
void ownership_writes_done(Manager *m);

/**
 * ownership_before() - what @scope's subtree holds before a request's writes
 *
 * Taken only for a @scope strictly inside a delegation, where
 * ownership_sync() then looks only at the files that appeared (and at whole
 * cgroups that are new, or whose last pass failed). Return: 0 or -ENOMEM
 * (@ret is then not taken).
 */
int ownership_before(Manager *m, const char *scope, OwnershipBefore *ret);
void ownership_before_done(OwnershipBefore *b);

/**
 * ownership_sync() - give owners the files that the daemon's writes made appear
 * @scope: the cgroup whose subtree the writes reached (NULL: every delegation, whole)
 * @before: ownership_before() of @scope, or NULL: every file of the subtree is looked at
 *
 * For each delegation that holds @scope or lies below it. Failures are
 * logged (a file an owner tampered with is skipped, and its cgroup is looked
 * at whole by the next pass there). Return: 0 or the first -errno.
 */
int ownership_sync(Manager *m, const char *scope, const OwnershipBefore *before);

/**
 * ownership_take_back() - a delegation ended: every directory and file of
 *                         @path's subtree to root
 * @uid: the owner it had (for the log)
 *
 * The cgroups stay. Failures are logged. Return: 0 or the first -errno.
 */
int ownership_take_back(Manager *m, const char *path, uid_t uid);

/**
 * delegation_chown_all() - hand every existing delegated cgroup to its owner
 * @old: the previous configuration, or NULL: delegations it had and the
 *       current one lacks are taken back (ownership_take_back())
 *
 * At start and after a reload: ownership_sync() of everything. Failures are
 * logged. Return: 0 or the first -errno.
 */
int delegation_chown_all(Manager *m, const Config *old);
