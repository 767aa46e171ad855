/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * CgroupChanged goes out for every cgroup whose controller state a call
 * changed: a snapshot before, compared with the model after.
 */

#include "cgbypass/model.h"

typedef struct Manager Manager;

/* The controller state of every cgroup, to tell which changed. */
typedef struct SnapshotEntry {
        char *path;
        CgMask controllers, bypassed, subtree_control, subtree_bypass, css;
        CgroupType type;
} SnapshotEntry;

typedef struct Snapshot {
        SnapshotEntry *v;       /* sorted by path */
        size_t n;
        char *scope;            /* NULL: every cgroup */
} Snapshot;

void snapshot_done(Snapshot *s);
/* @scope: only that cgroup's subtree and its parent (NULL: every cgroup) */
int snapshot_take(const Hierarchy *h, const char *scope, Snapshot *ret);

/* Emit CgroupChanged for every cgroup that differs between @before and now (no bus: nothing). */
void manager_emit_changes(Manager *m, const Snapshot *before);

/* For manager_emit_changes(); empty without a bus. @scope: the subtree that may change (NULL: all). */
void manager_snapshot_for_signals(Manager *m, const char *scope, Snapshot *s);

/* CgroupChanged for each of @paths, cgroups that came or went behind the daemon; the read views are dropped. */
void manager_emit_paths(Manager *m, char *const *paths, size_t n);
