/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

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

/* "/A|/A/B" (the line after its indentation) -> members */
static int node_parse_members(EffectiveNode *n, const char *s, size_t len) {
        const char *end = s + len;

        for (const char *p = s;;) {
                const char *bar = memchr(p, '|', (size_t) (end - p));
                const char *e = bar ?: end;
                char **m;

                if (e == p || *p != '/')
                        return -EBADMSG;
                m = reallocarray(n->members, n->n_members + 2, sizeof(*m));
                if (!m)
                        return -ENOMEM;
                n->members = m;
                n->members[n->n_members] = strndup(p, (size_t) (e - p));
                if (!n->members[n->n_members])
                        return -ENOMEM;
                n->members[++n->n_members] = NULL;
                if (!bar)
                        return 0;
                p = bar + 1;
        }
}

int effective_tree_parse(const char *text, EffectiveNode **ret, unsigned *reterr_line) {
        _cleanup_(effective_node_freep) EffectiveNode *top = NULL;
        _cleanup_free_ EffectiveNode **stack = NULL;    /* stack[d]: the last node at depth d - 1 */
        size_t depth_max = 0;                          /* deepest depth allowed on the next line */
        unsigned line = 0;
        int r;

        top = calloc(1, sizeof(*top));
        stack = calloc(EFFECTIVE_TREE_DEPTH_MAX + 1, sizeof(*stack));
        if (!top || !stack)
                return -ENOMEM;
        stack[0] = top;

        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);
                size_t spaces = strspn(p, " "), depth;
                _cleanup_(effective_node_freep) EffectiveNode *n = NULL;

                line++;
                depth = spaces / 2;
                if (spaces % 2 != 0 || depth > depth_max || depth >= EFFECTIVE_TREE_DEPTH_MAX) {
                        r = -EBADMSG;
                        goto fail;
                }
                n = calloc(1, sizeof(*n));
                if (!n)
                        return -ENOMEM;
                r = node_parse_members(n, p + spaces, len - spaces);
                if (r < 0)
                        goto fail;
                r = node_add_child(stack[depth], n);
                if (r < 0)
                        return r;
                stack[depth + 1] = TAKE_PTR(n);
                depth_max = depth + 1;
                p = nl ? nl + 1 : p + len;
        }

        *ret = TAKE_PTR(top);
        return 0;

fail:
        if (r == -EBADMSG && reterr_line)
                *reterr_line = line;
        return r;
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
} TreeGlyphs;

/* systemd's TREE_BRANCH, TREE_RIGHT, TREE_VERTICAL, TREE_SPACE in both forms */
static const TreeGlyphs glyphs_utf8 = { "\u251c\u2500", "\u2514\u2500", "\u2502 ", "  " };
static const TreeGlyphs glyphs_ascii = { "|-", "`-", "| ", "  " };

static void node_format_members(const EffectiveNode *n, StrBuf *b) {
        for (size_t i = 0; i < n->n_members; i++) {
                if (i > 0)
                        strbuf_append(b, ", ");
                strbuf_append(b, n->members[i]);
        }
        strbuf_putc(b, '\n');
}

/* @prefix holds what the ancestors draw in front of @n's children */
static void node_format_children(const EffectiveNode *n, const TreeGlyphs *g, StrBuf *prefix, StrBuf *b) {
        for (size_t i = 0; i < n->n_children; i++) {
                const EffectiveNode *c = n->children[i];
                bool last = i + 1 == n->n_children;
                size_t saved = prefix->len;

                strbuf_append_n(b, prefix->s ?: "", prefix->len);
                strbuf_append(b, last ? g->last : g->branch);
                node_format_members(c, b);

                strbuf_append(prefix, last ? g->space : g->vertical);
                node_format_children(c, g, prefix, b);
                strbuf_truncate(prefix, saved);
        }
}

int effective_tree_format(const EffectiveNode *top, bool utf8, char **ret) {
        const TreeGlyphs *g = utf8 ? &glyphs_utf8 : &glyphs_ascii;
        StrBuf b = STRBUF_INIT, prefix = STRBUF_INIT;
        int r;

        for (size_t i = 0; i < top->n_children; i++) {
                node_format_members(top->children[i], &b);
                node_format_children(top->children[i], g, &prefix, &b);
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
