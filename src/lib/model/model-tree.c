/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A controller's effective hierarchy (the seeds' "node clusters"): one node
 * per css, holding its cgroup and every descendant that uses the same css
 * because it bypasses or lacks the controller.
 */
#include "cgbypass/strbuf.h"
#include "model-internal.h"

typedef struct Node {
        const Cgroup *cgroup;   /* the cgroup that owns the css */
        char *path;
} Node;

static bool has_css(const Hierarchy *h, const Cgroup *c, Controller ctrl) {
        return cg_ss_mask(h, c, false) & CGMASK(ctrl);
}

static int node_cmp(const void *a, const void *b) {
        return strcmp(((const Node *) a)->path, ((const Node *) b)->path);
}

/* Next cgroup in pre-order below @owner that shares @owner's css; skips subtrees with their own. */
static const Cgroup *member_next(const Hierarchy *h, const Cgroup *pos, const Cgroup *owner, Controller ctrl) {
        for (const Cgroup *c = pos->first_child; c; c = c->next_sibling)
                if (!has_css(h, c, ctrl))
                        return c;
        for (const Cgroup *c = pos; c != owner; c = c->parent)
                for (const Cgroup *s = c->next_sibling; s; s = s->next_sibling)
                        if (!has_css(h, s, ctrl))
                                return s;
        return NULL;
}

/* Cgroups with their own css whose nearest css-owning ancestor is @owner. */
static int collect_child_nodes(const Hierarchy *h, const Cgroup *owner, Controller ctrl,
                               Node **ret, size_t *ret_n) {
        Node *nodes = NULL;
        size_t n = 0, cap = 0;

        for (const Cgroup *c = owner->first_child; c;) {
                if (has_css(h, c, ctrl)) {
                        if (n == cap) {
                                cap = cap ? cap * 2 : 8;
                                Node *nn = realloc(nodes, cap * sizeof(Node));
                                if (!nn)
                                        goto oom;
                                nodes = nn;
                        }
                        nodes[n].cgroup = c;
                        if (cgroup_path(c, &nodes[n].path) < 0)
                                goto oom;
                        n++;
                } else if (c->first_child) {
                        c = c->first_child;
                        continue;
                }
                /* next in pre-order, without descending into css owners */
                while (c != owner && !c->next_sibling)
                        c = c->parent;
                c = c == owner ? NULL : c->next_sibling;
        }
        if (n > 1)
                qsort(nodes, n, sizeof(Node), node_cmp);
        *ret = nodes;
        *ret_n = n;
        return 0;
oom:
        for (size_t i = 0; i < n; i++)
                free(nodes[i].path);
        free(nodes);
        return -ENOMEM;
}

static int render_node(const Hierarchy *h, const Cgroup *owner, const char *owner_path,
                       Controller ctrl, unsigned depth, StrBuf *b) {
        Node *children;
        size_t n;
        int r;

        for (unsigned i = 0; i < depth; i++)
                strbuf_append(b, "  ");
        strbuf_append(b, owner_path);
        for (const Cgroup *m = member_next(h, owner, owner, ctrl); m; m = member_next(h, m, owner, ctrl)) {
                _cleanup_free_ char *p = NULL;
                if (cgroup_path(m, &p) < 0)
                        return -ENOMEM;
                strbuf_putc(b, '|');
                strbuf_append(b, p);
        }
        strbuf_putc(b, '\n');

        r = collect_child_nodes(h, owner, ctrl, &children, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                if (r >= 0)
                        r = render_node(h, children[i].cgroup, children[i].path, ctrl, depth + 1, b);
                free(children[i].path);
        }
        free(children);
        return r;
}

int hierarchy_effective_tree(const Hierarchy *h, Controller ctrl, char **ret) {
        StrBuf b = STRBUF_INIT;
        int r;

        if (ctrl < 0 || ctrl >= _CONTROLLER_MAX || !(h->builtin & CGMASK(ctrl)))
                return -EINVAL;

        r = render_node(h, h->root, "/", ctrl, 0, &b);
        if (r < 0) {
                strbuf_done(&b);
                return r;
        }
        return strbuf_steal(&b, ret);
}

/* One node of hierarchy_effective_nodes(): its members' paths, in the order of render_node()'s line. */
static int visit_node(const Hierarchy *h, const Cgroup *owner, const char *owner_path, Controller ctrl,
                      unsigned depth, EffectiveNodeFunc f, void *userdata) {
        char **members = NULL;
        size_t n = 0, cap = 0;
        Node *children = NULL;
        size_t n_children = 0;
        int r = -ENOMEM;

        for (const Cgroup *m = owner; m; m = member_next(h, m, owner, ctrl)) {
                if (n + 2 > cap) {
                        char **nm;

                        cap = cap ? cap * 2 : 8;
                        nm = reallocarray(members, cap, sizeof(char *));
                        if (!nm)
                                goto out;
                        members = nm;
                }
                members[n] = NULL;
                if (m == owner)
                        members[n] = strdup(owner_path);
                else if (cgroup_path(m, &members[n]) < 0)
                        members[n] = NULL;
                if (!members[n])
                        goto out;
                members[++n] = NULL;
        }
        r = f(depth, (const char *const *) members, n, userdata);
        if (r < 0)
                goto out;

        r = collect_child_nodes(h, owner, ctrl, &children, &n_children);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < n_children; i++) {
                if (r >= 0)
                        r = visit_node(h, children[i].cgroup, children[i].path, ctrl, depth + 1, f, userdata);
                free(children[i].path);
        }
        free(children);
out:
        for (size_t i = 0; i < n; i++)
                free(members[i]);
        free(members);
        return r;
}

int hierarchy_effective_nodes(const Hierarchy *h, Controller ctrl, EffectiveNodeFunc f, void *userdata) {
        if (ctrl < 0 || ctrl >= _CONTROLLER_MAX || !(h->builtin & CGMASK(ctrl)))
                return -EINVAL;
        return visit_node(h, h->root, "/", ctrl, 0, f, userdata);
}
