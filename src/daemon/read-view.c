/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The read methods' views of the model, kept until it changes. */
#include <fcntl.h>

#include "cgbypass/cgpath.h"
#include "cgroupfs.h"
#include "delegation-limits.h"
#include "manager.h"
#include "read-view.h"

static void view_done(EffectiveView *v) {
        for (size_t i = 0; i < v->n_nodes; i++)
                strv_freep(&v->nodes[i].members);
        free(v->nodes);
        free(v->tree);
        *v = (EffectiveView) {};
}

void read_views_invalidate(ReadViews *v) {
        for (size_t i = 0; i < ELEMENTSOF(v->views); i++)
                if (v->views[i].valid || v->views[i].tree)
                        view_done(&v->views[i]);
}

void read_views_done(ReadViews *v) {
        read_views_invalidate(v);
}

/* Whether @path's directory is there (a sure "gone" only). */
static bool dir_exists(Manager *m, const char *path) {
        _cleanup_close_ int fd = -1;
        int root_fd = backend_get_root_fd(m->backend);

        return root_fd < 0 || cgfs_open_dir(root_fd, cgpath_relative(path), O_PATH, &fd) != -ENOENT;
}

int read_view_prepare(Manager *m, const char *scope) {
        /*
         * The watches saw every mkdir and rmdir of the delegations, and the daemon
         * made its own writes: a sim changes by nothing else; what other writers do
         * to a kernel is learnt before a change and at a reload (docs/backends.md).
         */
        if (watch_catch_up(m) > 0) {
                if (!scope || backend_get_type(m->backend) == BACKEND_SIM || manager_has_cgroup(m, scope))
                        return 0;
                /* a cgroup unknown here: news only where a directory is, and not one a limit kept out */
                if (delegation_over_limit(m, scope) || !dir_exists(m, scope))
                        return 0;
        }
        (void) manager_refresh(m, scope);
        return 0;
}

static int add_node(unsigned depth, const char *const *members, size_t n_members, void *userdata) {
        EffectiveView *v = userdata;
        _cleanup_strv_free_ char **copy = calloc(n_members + 1, sizeof(char *));

        if (!copy)
                return -ENOMEM;
        for (size_t i = 0; i < n_members; i++)
                if (!(copy[i] = strdup(members[i])))
                        return -ENOMEM;
        /* a power of two: grown by doubling */
        if ((v->n_nodes & (v->n_nodes - 1)) == 0) {
                EffectiveViewNode *nodes = reallocarray(v->nodes, v->n_nodes ? v->n_nodes * 2 : 1,
                                                        sizeof(EffectiveViewNode));
                if (!nodes)
                        return -ENOMEM;
                v->nodes = nodes;
        }
        v->nodes[v->n_nodes++] = (EffectiveViewNode) { .depth = depth, .members = TAKE_PTR(copy) };
        return 0;
}

int read_view_get(Manager *m, Controller x, const EffectiveView **ret) {
        const Hierarchy *h = backend_get_model(m->backend);
        EffectiveView *v;
        int r;

        if (x < 0 || x >= _CONTROLLER_MAX)
                return -EINVAL;
        v = &m->views.views[x];
        if (!v->valid) {
                view_done(v);
                m->walks++;
                r = hierarchy_effective_tree(h, x, &v->tree);
                if (r >= 0)
                        r = hierarchy_effective_nodes(h, x, add_node, v);
                if (r < 0) {
                        view_done(v);
                        return r;
                }
                v->valid = true;
        }
        *ret = v;
        return 0;
}
