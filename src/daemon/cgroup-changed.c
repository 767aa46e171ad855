/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CgroupChanged: snapshots of every cgroup's controller state, and the signal for each that differs. */
#include "cgbypass/bus-names.h"
#include "cgbypass/log.h"
#include "manager.h"

void snapshot_done(Snapshot *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i].path);
        free(s->v);
        free(s->scope);
        *s = (Snapshot) {};
}

static int snapshot_entry_cmp(const void *a, const void *b) {
        return strcmp(((const SnapshotEntry *) a)->path, ((const SnapshotEntry *) b)->path);
}

static int snapshot_add(Snapshot *s, size_t *cap, const Hierarchy *h, Cgroup *c) {
        SnapshotEntry *e;
        int r;

        if (s->n == *cap) {
                size_t n = *cap ? *cap * 2 : 16;
                SnapshotEntry *v = reallocarray(s->v, n, sizeof(SnapshotEntry));
                if (!v)
                        return -ENOMEM;
                s->v = v;
                *cap = n;
        }
        e = &s->v[s->n];
        r = cgroup_path(c, &e->path);
        if (r < 0)
                return r;
        s->n++;
        e->controllers = cgroup_get_controllers(h, c);
        e->bypassed = cgroup_get_bypassed(h, c);
        e->subtree_control = cgroup_get_subtree_control(c);
        e->subtree_bypass = cgroup_get_subtree_bypass(c);
        e->css = cgroup_get_css_mask(h, c);
        e->type = cgroup_get_type(h, c);
        return 0;
}

int snapshot_take(const Hierarchy *h, const char *scope, Snapshot *ret) {
        Cgroup *top = hierarchy_root(h);
        Snapshot s = {};
        size_t cap = 0;
        int r = 0;

        if (scope) {
                s.scope = strdup(scope);
                if (!s.scope)
                        return -ENOMEM;
                /* a scope that does not exist (yet, or any more) has nothing to compare */
                if (hierarchy_lookup(h, scope, &top) < 0)
                        top = NULL;
                else if (cgroup_parent(top))
                        r = snapshot_add(&s, &cap, h, cgroup_parent(top));
        }
        for (Cgroup *c = top; c && r >= 0; c = cgroup_next_descendant_pre(c, top))
                r = snapshot_add(&s, &cap, h, c);
        if (r < 0) {
                snapshot_done(&s);
                return r;
        }
        if (s.n > 0)    /* a scope that is gone leaves s.v NULL, which qsort() must not get */
                qsort(s.v, s.n, sizeof(SnapshotEntry), snapshot_entry_cmp);
        *ret = s;
        return 0;
}

static bool snapshot_entry_equal(const SnapshotEntry *a, const SnapshotEntry *b) {
        return a->controllers == b->controllers && a->bypassed == b->bypassed &&
                a->subtree_control == b->subtree_control && a->subtree_bypass == b->subtree_bypass &&
                a->css == b->css && a->type == b->type;
}

static void emit_cgroup_changed(Manager *m, const char *path) {
        int r = sd_bus_emit_signal(m->bus, CGBYPASS_BUS_PATH, CGBYPASS_BUS_INTERFACE, "CgroupChanged", "s", path);
        if (r < 0)
                log_warning_errno(r, "Failed to emit CgroupChanged for %s, ignoring: %m", path);
}

void manager_emit_changes(Manager *m, const Snapshot *before) {
        Snapshot after = {};
        size_t i = 0, j = 0;
        bool came_or_went = false;

        read_views_invalidate(&m->views);
        /* watch.c follows cgroups that came or went, and delegations (a change of those takes a whole
         * snapshot); its walk of the delegations is not for a request that only changed controllers */
        if (!m->bus || !before->scope)
                watch_mark_dirty(m);
        if (!m->bus || (!before->v && !before->scope))
                return;
        if (snapshot_take(backend_get_model(m->backend), before->scope, &after) < 0) {
                watch_mark_dirty(m);
                log_oom();
                return;
        }
        /* both sorted by path: cgroups that appeared, went, or changed */
        while (i < before->n || j < after.n) {
                int cmp = i == before->n ? 1 : j == after.n ? -1 : strcmp(before->v[i].path, after.v[j].path);

                came_or_went |= cmp != 0;
                if (cmp < 0)
                        emit_cgroup_changed(m, before->v[i++].path);
                else if (cmp > 0)
                        emit_cgroup_changed(m, after.v[j++].path);
                else {
                        if (!snapshot_entry_equal(&before->v[i], &after.v[j]))
                                emit_cgroup_changed(m, after.v[j].path);
                        i++;
                        j++;
                }
        }
        if (came_or_went)
                watch_mark_dirty(m);
        snapshot_done(&after);
}

/*
 * A snapshot for manager_emit_changes(); without a bus there is no one to tell.
 * @scope: the subtree that may change (NULL: all).
 */
void manager_snapshot_for_signals(Manager *m, const char *scope, Snapshot *s) {
        *s = (Snapshot) {};
        if (!m->bus)
                return;
        m->walks++;
        if (snapshot_take(backend_get_model(m->backend), scope, s) < 0)
                log_oom();
}

void manager_emit_paths(Manager *m, char *const *paths, size_t n) {
        /* the new cgroups are watched; inotify drops a removed one's watch itself */
        read_views_invalidate(&m->views);
        for (size_t i = 0; i < n; i++)
                (void) watch_add(m, paths[i]);
        if (!m->bus)
                return;
        for (size_t i = 0; i < n; i++)
                emit_cgroup_changed(m, paths[i]);
}
