/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/strbuf.h"
#include "ctl-json.h"
#include "ctl-tree.h"

EffectiveNode *effective_node_free(EffectiveNode *n) {
        if (!n)
                return NULL;
        for (size_t i = 0; i < n->n_members; i++)
                free(n->members[i]);
        free(n->members);
        for (size_t i = 0; i < n->n_children; i++)
                effective_node_free(n->children[i]);
        free(n->children);
        free(n);
        return NULL;
}

static int node_add_child(EffectiveNode *parent, EffectiveNode *child) {
        EffectiveNode **c = reallocarray(parent->children, parent->n_children + 1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        parent->children = c;
        parent->children[parent->n_children++] = child;
        return 0;
}

int effective_tree_builder_init(EffectiveTreeBuilder *b) {
        *b = (EffectiveTreeBuilder) {
                .top = calloc(1, sizeof(EffectiveNode)),
                .stack = calloc(EFFECTIVE_TREE_DEPTH_MAX + 1, sizeof(EffectiveNode *)),
        };
        if (!b->top || !b->stack) {
                effective_tree_builder_done(b);
                return -ENOMEM;
        }
        b->stack[0] = b->top;
        return 0;
}

void effective_tree_builder_done(EffectiveTreeBuilder *b) {
        b->top = effective_node_free(b->top);
        free(b->stack);
        b->stack = NULL;
}

int effective_tree_builder_add(EffectiveTreeBuilder *b, unsigned depth, char **members) {
        _cleanup_(effective_node_freep) EffectiveNode *n = calloc(1, sizeof(*n));
        int r;

        if (!n) {
                strv_freep(&members);
                return -ENOMEM;
        }
        n->members = members;
        while (members && members[n->n_members])
                n->n_members++;
        if (depth > b->depth_max || depth >= EFFECTIVE_TREE_DEPTH_MAX || n->n_members == 0)
                return -EBADMSG;
        for (size_t i = 0; i < n->n_members; i++)
                if (members[i][0] != '/')
                        return -EBADMSG;
        r = node_add_child(b->stack[depth], n);
        if (r < 0)
                return r;
        b->stack[depth + 1] = TAKE_PTR(n);
        b->depth_max = depth + 1;
        return 0;
}

EffectiveNode *effective_tree_builder_steal(EffectiveTreeBuilder *b) {
        EffectiveNode *top = TAKE_PTR(b->top);

        effective_tree_builder_done(b);
        return top;
}

/* "/A|/A/B" (the line after its indentation) -> members */
static int parse_members(const char *s, size_t len, char ***ret) {
        const char *end = s + len;
        _cleanup_strv_free_ char **members = NULL;
        size_t n = 0;

        for (const char *p = s;;) {
                const char *bar = memchr(p, '|', (size_t) (end - p));
                const char *e = bar ?: end;
                char **m;

                if (e == p)
                        return -EBADMSG;
                m = reallocarray(members, n + 2, sizeof(*m));
                if (!m)
                        return -ENOMEM;
                members = m;
                members[n] = strndup(p, (size_t) (e - p));
                if (!members[n])
                        return -ENOMEM;
                members[++n] = NULL;
                if (!bar)
                        break;
                p = bar + 1;
        }
        *ret = TAKE_PTR(members);
        return 0;
}

int effective_tree_parse(const char *text, EffectiveNode **ret, unsigned *reterr_line) {
        EffectiveTreeBuilder b;
        unsigned line = 0;
        int r;

        r = effective_tree_builder_init(&b);
        if (r < 0)
                return r;
        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);
                size_t spaces = strspn(p, " ");
                char **members = NULL;

                line++;
                r = spaces % 2 != 0 ? -EBADMSG : parse_members(p + spaces, len - spaces, &members);
                if (r >= 0)
                        r = effective_tree_builder_add(&b, spaces / 2 > EFFECTIVE_TREE_DEPTH_MAX ?
                                                       EFFECTIVE_TREE_DEPTH_MAX : (unsigned) (spaces / 2), members);
                if (r < 0) {
                        if (r == -EBADMSG && reterr_line)
                                *reterr_line = line;
                        effective_tree_builder_done(&b);
                        return r;
                }
                p = nl ? nl + 1 : p + len;
        }
        *ret = effective_tree_builder_steal(&b);
        return 0;
}

size_t effective_tree_count_members(const EffectiveNode *n) {
        size_t count = n->n_members;

        for (size_t i = 0; i < n->n_children; i++)
                count += effective_tree_count_members(n->children[i]);
        return count;
}

typedef struct TreeGlyphs {
        const char *branch;     /* a child with more siblings after it */
        const char *last;       /* the last child */
        const char *vertical;   /* below a child with more siblings after it */
        const char *space;      /* below the last child */
        const char *ellipsis;   /* between the first and the last of a folded run */
} TreeGlyphs;

/* systemd's TREE_BRANCH, TREE_RIGHT, TREE_VERTICAL, TREE_SPACE in both forms */
static const TreeGlyphs glyphs_utf8 = { "\u251c\u2500", "\u2514\u2500", "\u2502 ", "  ", "\u2026" };
static const TreeGlyphs glyphs_ascii = { "|-", "`-", "| ", "  ", "..." };

/* whether members[i] has none of its descendants after it (pre-order: they would follow at once) */
static bool is_leaf(const EffectiveNode *n, size_t i) {
        return i + 1 >= n->n_members || streq(n->members[i + 1], n->members[i]) ||
               !cgpath_is_at_or_below(n->members[i + 1], n->members[i]);
}

static void node_format_members(const EffectiveNode *n, const TreeGlyphs *g, bool full, StrBuf *b) {
        for (size_t i = 0; i < n->n_members;) {
                size_t run = 1;

                if (i > 0)
                        strbuf_append(b, ", ");
                /* a run: siblings in a row, none followed by members below it (they would hide in the fold) */
                if (!full && is_leaf(n, i))
                        while (i + run < n->n_members && cgpath_are_siblings(n->members[i], n->members[i + run]) &&
                               is_leaf(n, i + run))
                                run++;
                if (run > EFFECTIVE_TREE_FOLD_MIN) {
                        strbuf_printf(b, "%s %s %s (%zu cgroups)", n->members[i], g->ellipsis,
                                      n->members[i + run - 1], run);
                        i += run;
                } else
                        strbuf_append(b, n->members[i++]);
        }
        strbuf_putc(b, '\n');
}

/* @prefix holds what the ancestors draw in front of @n's children */
static void node_format_children(const EffectiveNode *n, const TreeGlyphs *g, bool full, StrBuf *prefix,
                                 StrBuf *b) {
        for (size_t i = 0; i < n->n_children; i++) {
                const EffectiveNode *c = n->children[i];
                bool last = i + 1 == n->n_children;
                size_t saved = prefix->len;

                strbuf_append_n(b, prefix->s ?: "", prefix->len);
                strbuf_append(b, last ? g->last : g->branch);
                node_format_members(c, g, full, b);

                strbuf_append(prefix, last ? g->space : g->vertical);
                node_format_children(c, g, full, prefix, b);
                strbuf_truncate(prefix, saved);
        }
}

int effective_tree_format(const EffectiveNode *top, bool utf8, bool full, char **ret) {
        const TreeGlyphs *g = utf8 ? &glyphs_utf8 : &glyphs_ascii;
        StrBuf b = STRBUF_INIT, prefix = STRBUF_INIT;
        int r;

        for (size_t i = 0; i < top->n_children; i++) {
                node_format_members(top->children[i], g, full, &b);
                node_format_children(top->children[i], g, full, &prefix, &b);
        }

        r = prefix.oom ? -ENOMEM : 0;
        strbuf_done(&prefix);
        if (r < 0) {
                strbuf_done(&b);
                return r;
        }
        return strbuf_steal(&b, ret);
}

static json_object *node_to_json(const EffectiveNode *n) {
        _cleanup_json_ json_object *o = json_object_new_object();
        _cleanup_json_ json_object *children = json_object_new_array();

        if (!o || !children)
                return NULL;
        if (json_add(o, "members", json_new_strv(n->members)) < 0)
                return NULL;
        for (size_t i = 0; i < n->n_children; i++)
                if (json_append(children, node_to_json(n->children[i])) < 0)
                        return NULL;
        if (json_add(o, "children", TAKE_PTR(children)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *effective_tree_to_json(const EffectiveNode *top) {
        return node_to_json(top->n_children == 1 ? top->children[0] : top);
}
