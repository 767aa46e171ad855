/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgbypassctl's effective tree: parsing GetEffectiveTree's text
 * (interfaces.md), drawing it for people (box-drawing and ASCII) and as
 * JSON, and refusing text that is not in the format.
 */
#include <check.h>

#include "../check-run.h"
#include "cgbypass/model.h"
#include "ctl-json.h"
#include "ctl-tree.h"

/* interfaces.md's example below the root: root enables cpu for A; A(+) B(#) C(#) D(#) E(+) F(-), G(+) under B */
static const char doc_example[] =
        "/\n"
        "  /A|/A/B|/A/B/C|/A/B/C/D\n"
        "    /A/B/C/D/E|/A/B/C/D/E/F\n"
        "    /A/B/G\n";

static EffectiveNode *parse_ok(const char *text) {
        EffectiveNode *t = NULL;
        unsigned line = 0;

        ck_assert_int_eq(effective_tree_parse(text, &t, &line), 0);
        ck_assert_ptr_nonnull(t);
        return t;
}

static char *draw_full(const EffectiveNode *t, bool utf8, bool full) {
        char *s = NULL;

        ck_assert_int_eq(effective_tree_format(t, utf8, full, &s), 0);
        return s;
}

static char *draw(const EffectiveNode *t, bool utf8) {
        return draw_full(t, utf8, false);
}

static char *to_json(const EffectiveNode *t) {
        _cleanup_json_ json_object *o = effective_tree_to_json(t);

        ck_assert_ptr_nonnull(o);
        return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

START_TEST(test_doc_example_parse) {
        _cleanup_(effective_node_freep) EffectiveNode *t = parse_ok(doc_example);
        const EffectiveNode *root, *a;

        /* the top holds the depth-0 lines */
        ck_assert_uint_eq(t->n_members, 0);
        ck_assert_uint_eq(t->n_children, 1);
        root = t->children[0];
        ck_assert_uint_eq(root->n_members, 1);
        ck_assert_str_eq(root->members[0], "/");
        ck_assert_ptr_null(root->members[1]);
        ck_assert_uint_eq(root->n_children, 1);
        a = root->children[0];
        ck_assert_uint_eq(a->n_members, 4);
        ck_assert_str_eq(a->members[0], "/A");
        ck_assert_str_eq(a->members[3], "/A/B/C/D");
        ck_assert_uint_eq(a->n_children, 2);
        ck_assert_str_eq(a->children[0]->members[1], "/A/B/C/D/E/F");
        ck_assert_str_eq(a->children[1]->members[0], "/A/B/G");
        ck_assert_uint_eq(effective_tree_count_members(t), 8);
}
END_TEST

/* the drawing in both glyph sets: ASCII, then UTF-8 */
static const char *const doc_example_drawn[] = {
        "/\n"
        "`-/A, /A/B, /A/B/C, /A/B/C/D\n"
        "  |-/A/B/C/D/E, /A/B/C/D/E/F\n"
        "  `-/A/B/G\n",
        "/\n"
        "\u2514\u2500/A, /A/B, /A/B/C, /A/B/C/D\n"
        "  \u251c\u2500/A/B/C/D/E, /A/B/C/D/E/F\n"
        "  \u2514\u2500/A/B/G\n",
};

START_TEST(test_doc_example_drawn) {
        _cleanup_(effective_node_freep) EffectiveNode *t = parse_ok(doc_example);
        _cleanup_free_ char *s = draw(t, _i == 1);

        ck_assert_str_eq(s, doc_example_drawn[_i]);
}
END_TEST

START_TEST(test_doc_example_json) {
        _cleanup_(effective_node_freep) EffectiveNode *t = parse_ok(doc_example);
        _cleanup_free_ char *s = to_json(t);

        ck_assert_str_eq(s,
                         "{\"members\":[\"/\"],\"children\":[{\"members\":[\"/A\",\"/A/B\",\"/A/B/C\",\"/A/B/C/D\"],"
                         "\"children\":[{\"members\":[\"/A/B/C/D/E\",\"/A/B/C/D/E/F\"],\"children\":[]},"
                         "{\"members\":[\"/A/B/G\"],\"children\":[]}]}]}");
}
END_TEST

/* the model produces what the daemon returns: the client must read it as the literal above */
START_TEST(test_model_output_parses) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        _cleanup_(effective_node_freep) EffectiveNode *t = NULL;
        _cleanup_free_ char *text = NULL, *s = NULL;
        static const struct {
                const char *path, *file, *value;
        } writes[] = {
                { "/",        "cgroup.subtree_control", "+cpu" },
                { "/A",       "cgroup.subtree_control", "#cpu" },
                { "/A/B",     "cgroup.subtree_control", "#cpu" },
                { "/A/B/C",   "cgroup.subtree_control", "#cpu" },
                { "/A/B/C/D", "cgroup.subtree_control", "+cpu" },
                { "/A/B/G",   "cgroup.controllers",     "+cpu" },
        };
        static const char *const dirs[] = { "/A", "/A/B", "/A/B/C", "/A/B/C/D", "/A/B/C/D/E", "/A/B/C/D/E/F", "/A/B/G" };
        Reason reason;

        ck_assert_int_eq(hierarchy_new(&h, RULES_BYPASS, CGMASK_VM_KERNEL), 0);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                ck_assert_int_eq(hierarchy_mkdir(h, dirs[i], NULL, &reason), 0);
        for (size_t i = 0; i < ELEMENTSOF(writes); i++) {
                Cgroup *c;

                ck_assert_int_eq(hierarchy_lookup(h, writes[i].path, &c), 0);
                ck_assert_int_eq(cgroup_write(h, c, writes[i].file, writes[i].value, &reason), 0);
        }
        ck_assert_int_eq(hierarchy_effective_tree(h, CONTROLLER_CPU, &text), 0);
        t = parse_ok(text);
        s = draw(t, false);
        ck_assert_str_eq(s,
                         "/\n"
                         "`-/A, /A/B, /A/B/C, /A/B/C/D\n"
                         "  |-/A/B/C/D/E, /A/B/C/D/E/F\n"
                         "  `-/A/B/G\n");
}
END_TEST

/* a node with siblings after it continues the vertical line past its own children */
START_TEST(test_vertical_lines) {
        _cleanup_(effective_node_freep) EffectiveNode *t = parse_ok("/\n"
                                                                    "  /a\n"
                                                                    "    /a/x\n"
                                                                    "      /a/x/1\n"
                                                                    "    /a/y\n"
                                                                    "  /b|/b/c\n");
        _cleanup_free_ char *ascii = draw(t, false), *utf8 = draw(t, true);

        ck_assert_str_eq(ascii,
                         "/\n"
                         "|-/a\n"
                         "| |-/a/x\n"
                         "| | `-/a/x/1\n"
                         "| `-/a/y\n"
                         "`-/b, /b/c\n");
        ck_assert_str_eq(utf8,
                         "/\n"
                         "\u251c\u2500/a\n"
                         "\u2502 \u251c\u2500/a/x\n"
                         "\u2502 \u2502 \u2514\u2500/a/x/1\n"
                         "\u2502 \u2514\u2500/a/y\n"
                         "\u2514\u2500/b, /b/c\n");
        ck_assert_uint_eq(effective_tree_count_members(t), 7);
}
END_TEST

/* small trees, drawn and in JSON */
static const struct {
        const char *text;
        bool utf8;
        const char *drawn, *json;
} small[] = {
        /* the root alone, without a final newline */
        { "/|/a|/a/b", false, "/, /a, /a/b\n", "{\"members\":[\"/\",\"/a\",\"/a/b\"],\"children\":[]}" },
        /* several depth-0 lines (not what the daemon sends today): JSON wraps them in a node without members */
        { "/x\n  /x/y\n/z\n", false, "/x\n`-/x/y\n/z\n",
          "{\"members\":[],\"children\":[{\"members\":[\"/x\"],\"children\":[{\"members\":"
          "[\"/x/y\"],\"children\":[]}]},{\"members\":[\"/z\"],\"children\":[]}]}" },
        { "", true, "", "{\"members\":[],\"children\":[]}" },
};

START_TEST(test_small) {
        _cleanup_(effective_node_freep) EffectiveNode *t = parse_ok(small[_i].text);
        _cleanup_free_ char *s = draw(t, small[_i].utf8), *j = to_json(t);

        ck_assert_str_eq(s, small[_i].drawn);
        ck_assert_str_eq(j, small[_i].json);
}
END_TEST

static const struct {
        const char *text;
        unsigned line;
} malformed[] = {
        { "  /\n",                     1 },     /* the first line is indented */
        { "/\n    /a\n",               2 },     /* skips a level */
        { "/\n   /a\n",                2 },     /* odd indentation */
        { "/\n  /a\n\n  /b\n",         3 },     /* an empty line */
        { "/\n  a\n",                  2 },     /* not an absolute path */
        { "/\n  /a||/a/b\n",           2 },     /* an empty member */
        { "/\n  /a|\n",                2 },     /* a trailing '|' */
        { "/\n  /a\n\t/b\n",           3 },     /* tabs are not the indentation */
        { "/\n  \n",                   2 },     /* only spaces */
};

START_TEST(test_malformed) {
        EffectiveNode *t = NULL;
        unsigned line = 0;

        ck_assert_int_eq(effective_tree_parse(malformed[_i].text, &t, &line), -EBADMSG);
        ck_assert_ptr_null(t);
        ck_assert_uint_eq(line, malformed[_i].line);
}
END_TEST

START_TEST(test_too_deep) {
        _cleanup_free_ char *text = NULL;
        EffectiveNode *t = NULL;
        size_t size = 0;
        unsigned line = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        for (unsigned d = 0; d <= EFFECTIVE_TREE_DEPTH_MAX; d++)
                fprintf(f, "%*s/%u\n", (int) (2 * d), "", d);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(effective_tree_parse(text, &t, &line), -EBADMSG);
        ck_assert_uint_eq(line, EFFECTIVE_TREE_DEPTH_MAX + 1);
}
END_TEST

/* "/c" owning the css of /c/s1 ... /c/sN, which bypass it, and /c/x with a child */
static char *cluster_text(unsigned n) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        fputs("/\n  /c", f);
        for (unsigned i = 1; i <= n; i++)
                fprintf(f, "|/c/s%u", i);
        fputs("|/c/x|/c/x/y\n", f);
        ck_assert_int_eq(fclose(f), 0);
        return text;
}

START_TEST(test_fold_long_cluster) {
        _cleanup_free_ char *text = cluster_text(300), *ascii = NULL, *utf8 = NULL, *full = NULL;
        _cleanup_(effective_node_freep) EffectiveNode *t = parse_ok(text);

        ascii = draw(t, false);
        ck_assert_str_eq(ascii, "/\n`-/c, /c/s1 ... /c/s300 (300 cgroups), /c/x, /c/x/y\n");
        utf8 = draw(t, true);
        ck_assert_str_eq(utf8, "/\n\u2514\u2500/c, /c/s1 \u2026 /c/s300 (300 cgroups), /c/x, /c/x/y\n");
        /* --full: every member, in the daemon's order */
        full = draw_full(t, false, true);
        ck_assert_ptr_nonnull(strstr(full, "\n`-/c, /c/s1, /c/s2, /c/s3, "));
        ck_assert_ptr_nonnull(strstr(full, ", /c/s299, /c/s300, /c/x, /c/x/y\n"));
        ck_assert_ptr_null(strstr(full, "..."));
}
END_TEST

START_TEST(test_fold_threshold) {
        _cleanup_free_ char *at = cluster_text(EFFECTIVE_TREE_FOLD_MIN), *over = cluster_text(EFFECTIVE_TREE_FOLD_MIN + 1);
        _cleanup_(effective_node_freep) EffectiveNode *t5 = parse_ok(at), *t6 = parse_ok(over);
        _cleanup_free_ char *d5 = draw(t5, false), *d6 = draw(t6, false);

        /* /c/x has a member below it: it ends the run, which it would hide */
        ck_assert_str_eq(d5, "/\n`-/c, /c/s1, /c/s2, /c/s3, /c/s4, /c/s5, /c/x, /c/x/y\n");
        ck_assert_str_eq(d6, "/\n`-/c, /c/s1 ... /c/s6 (6 cgroups), /c/x, /c/x/y\n");
}
END_TEST

/* the root's own cluster: "/" is not a sibling of the children that bypass it, so it starts no run */
START_TEST(test_fold_root_cluster) {
        _cleanup_(effective_node_freep) EffectiveNode *t = parse_ok("/|/s1|/s2|/s3|/s4|/s5|/s6\n");
        _cleanup_free_ char *d = draw(t, false);

        ck_assert_str_eq(d, "/, /s1 ... /s6 (6 cgroups)\n");
}
END_TEST

/* GetEffectiveNodes' pairs build the same tree as the text */
START_TEST(test_builder) {
        _cleanup_(effective_node_freep) EffectiveNode *parsed = parse_ok(doc_example), *built = NULL;
        _cleanup_free_ char *a = NULL, *b = NULL;
        static const struct {
                unsigned depth;
                const char *members[5];
        } nodes[] = {
                { 0, { "/" } },
                { 1, { "/A", "/A/B", "/A/B/C", "/A/B/C/D" } },
                { 2, { "/A/B/C/D/E", "/A/B/C/D/E/F" } },
                { 2, { "/A/B/G" } },
        };
        EffectiveTreeBuilder builder;

        ck_assert_int_eq(effective_tree_builder_init(&builder), 0);
        for (size_t i = 0; i < ELEMENTSOF(nodes); i++) {
                char **m = calloc(5, sizeof(char *));
                for (size_t j = 0; nodes[i].members[j]; j++)
                        m[j] = strdup(nodes[i].members[j]);
                ck_assert_int_eq(effective_tree_builder_add(&builder, nodes[i].depth, m), 0);
        }
        /* a level skipped, an empty node, a relative member: refused, and taken */
        char **bad = calloc(2, sizeof(char *));
        bad[0] = strdup("/x");
        ck_assert_int_eq(effective_tree_builder_add(&builder, 4, bad), -EBADMSG);
        ck_assert_int_eq(effective_tree_builder_add(&builder, 1, calloc(1, sizeof(char *))), -EBADMSG);
        bad = calloc(2, sizeof(char *));
        bad[0] = strdup("x");
        ck_assert_int_eq(effective_tree_builder_add(&builder, 1, bad), -EBADMSG);
        built = effective_tree_builder_steal(&builder);
        a = draw(parsed, false);
        b = draw(built, false);
        ck_assert_str_eq(a, b);
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE_TABLE(
                "ctl-tree", "tree", NULL, NULL, { test_doc_example_parse },
                { test_doc_example_drawn, ELEMENTSOF(doc_example_drawn) }, { test_doc_example_json },
                { test_model_output_parses }, { test_vertical_lines }, { test_small, ELEMENTSOF(small) },
                { test_malformed, ELEMENTSOF(malformed) }, { test_too_deep },
                { test_fold_long_cluster }, { test_fold_threshold }, { test_fold_root_cluster }, { test_builder }));
}
