/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the read methods answer from. A controller's effective tree
 * (GetEffectiveTree's text, GetEffectiveNodes' nodes) is built once from
 * the model and kept until the model changes: manager_emit_changes(), which
 * every change, apply, reload and refresh ends with, drops the views. So a
 * read costs its reply, not a walk of every cgroup.
 *
 * The model is what reads answer from, without a refresh, while the watches
 * cover every delegated cgroup (watch.c; the pending events are taken in
 * first, so an owner's mkdir just before the call is known), on every
 * backend. What other root writers do to a kernel is not seen by reads: a
 * change request checks its subtree first, a reload re-reads everything
 * (docs/backends.md). Without complete watches a read refreshes first.
 */

#include <stdbool.h>

#include "cgbypass/controller.h"

typedef struct Manager Manager;

typedef struct EffectiveViewNode {
        unsigned depth;
        char **members;         /* NULL-terminated */
} EffectiveViewNode;

typedef struct EffectiveView {
        bool valid;
        char *tree;             /* GetEffectiveTree's text */
        EffectiveViewNode *nodes;
        size_t n_nodes;
} EffectiveView;

typedef struct ReadViews {
        EffectiveView views[_CONTROLLER_MAX];
} ReadViews;

void read_views_done(ReadViews *v);
/* The model changed: every view is built again at its next read. */
void read_views_invalidate(ReadViews *v);

/**
 * read_view_prepare() - bring the model up to date for a read of @scope
 * @scope: the cgroup the read is about (NULL: the whole hierarchy)
 *
 * Return: 0 (a failed refresh is logged; the read answers from what is known).
 */
int read_view_prepare(Manager *m, const char *scope);

/**
 * read_view_get() - @x's effective tree, from the views or built now
 *
 * Return: 0 with *@ret valid until the model next changes; -EINVAL (@x not
 * built in, or without a css on cgroup2), -ENOMEM.
 */
int read_view_get(Manager *m, Controller x, const EffectiveView **ret);
