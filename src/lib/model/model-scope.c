/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A copy of one subtree and its ancestors, for vetting a request's plan at a
 * cost that does not grow with the rest of the hierarchy (hierarchy_clone()
 * copies everything).
 */
#include "model-internal.h"

int hierarchy_clone_scope(const Hierarchy *h, const Cgroup *scope, Hierarchy **ret) {
        _cleanup_(hierarchy_freep) Hierarchy *n = NULL;
        _cleanup_free_ Cgroup **chain = NULL;
        Cgroup *top = (Cgroup *) scope;  /* ->clone is scratch, as in hierarchy_clone() */
        const Cgroup *a;
        size_t depth = 0, size = 0;
        int r;

        for (a = scope; a->parent; a = a->parent)
                depth++;
        if (a != h->root)
                return -EINVAL;
        chain = malloc((depth ? depth : 1) * sizeof(Cgroup *));
        if (!chain)
                return -ENOMEM;
        depth = 0;
        for (a = scope; a->parent; a = a->parent)
                chain[depth++] = (Cgroup *) a;

        r = hierarchy_new(&n, h->rules, h->builtin);
        if (r < 0)
                return r;
        for (const Cgroup *c = scope; c; c = cgroup_next_descendant_pre(c, scope))
                size++;
        size += depth;
        /* as many buckets as cgroups, a power of two, like a hierarchy grown to this size */
        while (n->n_buckets < size)
                n->n_buckets *= 2;
        free(n->buckets);
        n->buckets = calloc(n->n_buckets, sizeof(Cgroup *));
        if (!n->buckets)
                return -ENOMEM;

        n->limits_maybe_unread = h->limits_maybe_unread;
        n->values_maybe_stored = h->values_maybe_stored;
        h->root->clone = n->root;
        r = cgroup_copy_state(n->root, h->root);
        /* the ancestors, from the top down, then the subtree in pre-order */
        while (r >= 0 && depth > 0)
                r = cgroup_clone_under(n, chain[--depth]);
        if (r < 0)
                return r;
        for (Cgroup *c = cgroup_next_descendant_pre(top, top); c; c = cgroup_next_descendant_pre(c, top)) {
                r = cgroup_clone_under(n, c);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(n);
        return 0;
}
