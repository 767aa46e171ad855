/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/strbuf.h"
#include "cgbypass/trace.h"
#include "trace-internal.h"

/*
 * The kernel's side of `tree`: the nodes are the csses that debug.csses lists,
 * linked by their P= ids exactly as the kernel linked them (css_create()), so
 * a css with the wrong parent shows up as a line at the wrong place instead of
 * being silently re-derived from the directory structure.
 */

typedef struct Node {
        int css_id;             /* 0: the pseudo node holding "/" when "/" has no css */
        int parent_css_id;
        size_t first;           /* index of the owning cgroup (first member) */
        size_t *members;
        size_t n_members;
        struct Node **children;
        size_t n_children;
        bool placed;
} Node;

typedef struct TreeCtx {
        const char *const *paths;
        Node *nodes;
        size_t n_nodes;
} TreeCtx;

static const TreeCtx *sort_ctx;

static int node_cmp(const void *a, const void *b) {
        const Node *x = *(Node *const *) a, *y = *(Node *const *) b;

        return strcmp(sort_ctx->paths[x->first], sort_ctx->paths[y->first]);
}

static void render(const TreeCtx *ctx, StrBuf *b, Node *n, unsigned depth, bool *first) {
        if (!*first)
                strbuf_putc(b, '\n');
        *first = false;
        for (unsigned i = 0; i < depth; i++)
                strbuf_append(b, "  ");
        for (size_t i = 0; i < n->n_members; i++) {
                if (i > 0)
                        strbuf_putc(b, '|');
                strbuf_append(b, ctx->paths[n->members[i]]);
        }
        n->placed = true;

        sort_ctx = ctx;
        if (n->n_children > 1)
                qsort(n->children, n->n_children, sizeof(Node *), node_cmp);
        for (size_t i = 0; i < n->n_children; i++)
                if (!n->children[i]->placed)    /* P= cycles cannot loop forever */
                        render(ctx, b, n->children[i], depth + 1, first);
}

static Node *node_by_css(const TreeCtx *ctx, int id) {
        for (size_t i = 0; i < ctx->n_nodes; i++)
                if (ctx->nodes[i].css_id == id && id != 0)
                        return &ctx->nodes[i];
        return NULL;
}

static int node_add_child(Node *p, Node *c) {
        Node **v = reallocarray(p->children, p->n_children + 1, sizeof(Node *));
        if (!v)
                return -ENOMEM;
        v[p->n_children++] = c;
        p->children = v;
        return 0;
}

int trace_tree_from_csses(size_t ncg, const char *const *paths, const int *parents,
                          const int *css_ids, const int *css_parent_ids, char **ret) {
        _cleanup_free_ size_t *owner = NULL;    /* cgroup index -> node index */
        TreeCtx ctx = { .paths = paths };
        StrBuf b = STRBUF_INIT;
        bool any = false, first = true;
        int r = 0;

        if (ncg == 0)
                return -EINVAL;
        for (size_t i = 0; i < ncg; i++)
                any = any || css_ids[i] != 0;
        if (!any)
                return -EINVAL;

        owner = calloc(ncg, sizeof(size_t));
        ctx.nodes = calloc(ncg, sizeof(Node));
        if (!owner || !ctx.nodes) {
                free(ctx.nodes);
                return -ENOMEM;
        }

        /* "/" is always a node: when it has no css of its own (DIR below the
         * mount root), it stands for the outside css its members use */
        for (size_t i = 0; i < ncg; i++) {
                if (i == 0 || css_ids[i] != 0) {
                        ctx.nodes[ctx.n_nodes] = (Node) {
                                .css_id = css_ids[i],
                                .parent_css_id = css_parent_ids[i],
                                .first = i,
                        };
                        owner[i] = ctx.n_nodes++;
                } else
                        owner[i] = owner[parents[i]];   /* pre-order: the parent came first */

                Node *n = &ctx.nodes[owner[i]];
                size_t *m = reallocarray(n->members, n->n_members + 1, sizeof(size_t));
                if (!m) {
                        r = -ENOMEM;
                        goto finish;
                }
                m[n->n_members++] = i;
                n->members = m;
        }

        Node *top = &ctx.nodes[0];
        for (size_t i = 1; i < ctx.n_nodes; i++) {
                Node *n = &ctx.nodes[i], *p = node_by_css(&ctx, n->parent_css_id);

                /* a P= outside DIR: only right when "/" has no css of its own */
                if (!p && top->css_id == 0)
                        p = top;
                if (p && p != n) {
                        r = node_add_child(p, n);
                        if (r < 0)
                                goto finish;
                }
        }

        render(&ctx, &b, top, 0, &first);

        /* nodes whose P= leads nowhere (or in a cycle): show them, marked */
        for (size_t i = 0; i < ctx.n_nodes; i++) {
                Node *n = &ctx.nodes[i];
                if (n->placed)
                        continue;
                strbuf_printf(&b, "\n?P=%d ", n->parent_css_id);
                bool f = true;
                render(&ctx, &b, n, 0, &f);
        }
        r = strbuf_steal(&b, ret);

finish:
        strbuf_done(&b);
        for (size_t i = 0; i < ctx.n_nodes; i++) {
                free(ctx.nodes[i].members);
                free(ctx.nodes[i].children);
        }
        free(ctx.nodes);
        return r;
}

/* debug.csses, kernel/cgroup/debug.c: "%2d: %-4s\t- %p[%d] %d%s\n", %s = " P=%d" or "" */
int trace_csses_find(const char *text, const char *ctrl, int *ret_id, int *ret_parent) {
        size_t clen = strlen(ctrl);

        for (const char *s = text; *s;) {
                size_t len = strcspn(s, "\n");
                const char *colon = memchr(s, ':', len), *tab = memchr(s, '\t', len);
                if (colon && tab && tab > colon) {
                        const char *name = colon + 1 + strspn(colon + 1, " ");
                        size_t nlen = (size_t) (tab - name);
                        while (nlen > 0 && name[nlen - 1] == ' ')
                                nlen--;
                        if (nlen == clen && strncmp(name, ctrl, clen) == 0) {
                                const char *end = s + len;
                                const char *br = memchr(tab, '[', (size_t) (end - tab));
                                const char *rb = br ? memchr(br, ']', (size_t) (end - br)) : NULL;
                                const char *p = NULL;

                                if (!rb)
                                        return -EBADMSG;
                                /* after "[id] online_cnt": " P=parent_id" when the css has a parent */
                                for (const char *q = rb; q + 3 <= end; q++)
                                        if (q[0] == ' ' && q[1] == 'P' && q[2] == '=') {
                                                p = q + 3;
                                                break;
                                        }
                                *ret_id = atoi(br + 1);
                                *ret_parent = p ? atoi(p) : 0;
                                return 1;
                        }
                }
                s += len + (s[len] == '\n');
        }
        *ret_id = *ret_parent = 0;
        return 0;
}
