/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trace library without a kernel: the parser and its diagnostics, the
 * errno table, the model runner, the generator's determinism, and the kernel
 * runner's rendering of the effective tree from debug.csses.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check-run.h"
#include "cgbypass/macro.h"
#include "cgbypass/trace.h"
#include "trace-internal.h"

static Trace *parse_ok(const char *text) {
        Trace *t = NULL;
        char *msg = NULL;
        int r = trace_parse(text, "t.trace", &t, &msg);

        ck_assert_msg(r == 0, "parse failed: %d %s", r, strempty(msg));
        free(msg);
        return t;
}

static void parse_bad(const char *text, const char *want_prefix, const char *want_reason) {
        _cleanup_(trace_freep) Trace *t = NULL;
        _cleanup_free_ char *msg = NULL;
        int r = trace_parse(text, "t.trace", &t, &msg);

        ck_assert_int_eq(r, -EBADMSG);
        ck_assert_ptr_null(t);
        ck_assert_ptr_nonnull(msg);
        ck_assert_msg(startswith(msg, want_prefix), "'%s' does not start with '%s'", msg, want_prefix);
        ck_assert_msg(strstr(msg, want_reason), "'%s' does not say '%s'", msg, want_reason);
}

START_TEST(test_parse_ops) {
        _cleanup_(trace_freep) Trace *t = parse_ok(
                "# comment\n"
                "\n"
                "mkdir A\n"
                "   # indented comment\n"
                "write A cgroup.subtree_control  +cpu #io  x\n"
                "write A cgroup.type\n"
                "write . cgroup.procs \n"
                "  read A/B cgroup.controllers\n"
                "exists . cpu.weight\n"
                "spawn p1 A\n"
                "move p1 .\n"
                "kill p1\n"
                "rmdir A\n"
                "tree perf_event");

        ck_assert_int_eq(t->n_ops, 11);
        ck_assert_int_eq(t->ops[0].type, TRACE_MKDIR);
        ck_assert_uint_eq(t->ops[0].line, 3);
        ck_assert_str_eq(t->ops[0].path, "A");
        /* CONTENT is the rest of the line, spaces and '#' included */
        ck_assert_int_eq(t->ops[1].type, TRACE_WRITE);
        ck_assert_uint_eq(t->ops[1].line, 5);
        ck_assert_str_eq(t->ops[1].file, "cgroup.subtree_control");
        ck_assert_str_eq(t->ops[1].content, " +cpu #io  x");
        /* extension (a): no CONTENT is an empty write; so is a lone separator */
        ck_assert_str_eq(t->ops[2].content, "");
        ck_assert_str_eq(t->ops[3].content, "");
        ck_assert_str_eq(t->ops[3].path, ".");
        ck_assert_int_eq(t->ops[4].type, TRACE_READ);
        ck_assert_str_eq(t->ops[4].path, "A/B");
        ck_assert_str_eq(t->ops[4].text, "  read A/B cgroup.controllers");
        ck_assert_int_eq(t->ops[5].type, TRACE_EXISTS);
        ck_assert_int_eq(t->ops[6].type, TRACE_SPAWN);
        ck_assert_str_eq(t->ops[6].label, "p1");
        ck_assert_str_eq(t->ops[7].path, ".");
        ck_assert_int_eq(t->ops[8].type, TRACE_KILL);
        ck_assert_int_eq(t->ops[9].type, TRACE_RMDIR);
        ck_assert_int_eq(t->ops[10].type, TRACE_TREE);
        ck_assert_int_eq(t->ops[10].controller, CONTROLLER_PERF_EVENT);
        ck_assert_uint_eq(t->ops[10].line, 14);
}
END_TEST

START_TEST(test_parse_malformed) {
        parse_bad("mkdir A\nfrob A\n", "t.trace:2: ", "unknown operation 'frob'");
        parse_bad("mkdir\n", "t.trace:1: ", "needs PATH");
        parse_bad("read A\n", "t.trace:1: ", "needs PATH FILE");
        parse_bad("mkdir A B\n", "t.trace:1: ", "then nothing");
        parse_bad("mkdir  A\n", "t.trace:1: ", "empty field");
        parse_bad("mkdir /A\n", "t.trace:1: ", "relative");
        parse_bad("mkdir A/../B\n", "t.trace:1: ", "'..'");
        parse_bad("mkdir A//B\n", "t.trace:1: ", "contains '//'");
        parse_bad("mkdir A/\n", "t.trace:1: ", "ends with '/'");
        parse_bad("rmdir ./A\n", "t.trace:1: ", "'.'");
        parse_bad("read A a/b\n", "t.trace:1: ", "bad file name");
        parse_bad("exists A ..\n", "t.trace:1: ", "bad file name");
        parse_bad("tree cpux\n", "t.trace:1: ", "unknown controller 'cpux'");
        parse_bad("kill p1\n", "t.trace:1: ", "unknown label 'p1'");
        parse_bad("mkdir A\nmove p1 A\nspawn p1 A\n", "t.trace:2: ", "unknown label 'p1'");
        parse_bad("spawn p1\n", "t.trace:1: ", "needs LABEL PATH");
}
END_TEST

START_TEST(test_errno_names) {
        char buf[16];

        ck_assert_str_eq(trace_errno_name(EINVAL), "EINVAL");
        ck_assert_str_eq(trace_errno_name(EOPNOTSUPP), "EOPNOTSUPP");
        ck_assert_str_eq(trace_errno_name(ENOTDIR), "ENOTDIR");
        ck_assert_str_eq(trace_errno_name(EAGAIN), "EAGAIN");
        ck_assert_str_eq(trace_errno_name(E2BIG), "E2BIG");
        ck_assert_ptr_null(trace_errno_name(4242));
        ck_assert_str_eq(trace_errno_format(4242, buf), "E4242");
        ck_assert_str_eq(trace_errno_format(EBUSY, buf), "EBUSY");
}
END_TEST

static char *run_model(const char *text, RuleSet rules, bool nonroot, int *ret_r, char **ret_msg) {
        _cleanup_(trace_freep) Trace *t = parse_ok(text);
        TraceModelOptions o = { .rules = rules, .builtin = CGMASK_VM_KERNEL, .nonroot = nonroot };
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ck_assert_ptr_nonnull(f);
        *ret_r = trace_run_model(t, &o, f, ret_msg);
        ck_assert_int_eq(fclose(f), 0);
        return buf;
}

/* traces through the model runner: its output line by line, its status, and the message of a bad trace */
static const struct {
        const char *trace;
        RuleSet rules;
        bool nonroot;
        int r;
        const char *out;        /* NULL: not checked */
        const char *msg;        /* NULL: not checked */
} runs[] = {
        { "mkdir A\n"
          "write . cgroup.subtree_control +cpu\n"
          "write A cgroup.subtree_control #cpu\n"
          "read A cgroup.subtree_control\n"
          "write A cgroup.subtree_control +bogus\n"
          "spawn b A\n"
          "spawn a A\n"
          "read A cgroup.procs\n"
          "read A/B cgroup.controllers\n"
          "exists Q cgroup.procs\n"
          "rmdir .\n",
          RULES_BYPASS, false, 0,
          "1 ok\n2 ok\n3 ok\n4 = #cpu\n5 error EINVAL\n6 ok\n7 ok\n"
          "8 = a | b\n9 error ENOENT\n10 = no\n11 error EINVAL\n", NULL },
        /* labels sort with strcmp, whatever the spawn order */
        { "mkdir A\nspawn zz A\nspawn B A\nspawn a1 A\nread A cgroup.procs\n"
          "kill B\nread A cgroup.threads\nkill zz\nmove zz A\n",
          RULES_STOCK, false, -EBADMSG, "1 ok\n2 ok\n3 ok\n4 ok\n5 = B | a1 | zz\n6 ok\n7 = a1 | zz\n8 ok\n",
          "t.trace:9: move of 'zz', which is not alive (killed on line 8)" },
        /* a failed spawn leaves the label dead; a second spawn is fine */
        { "mkdir A\nmkdir A/B\nwrite . cgroup.subtree_control +memory\n"
          "write A cgroup.subtree_control +memory\nspawn p A\nspawn p A/B\nspawn p A\n",
          RULES_STOCK, false, -EBADMSG, "1 ok\n2 ok\n3 ok\n4 ok\n5 error EBUSY\n6 ok\n",
          "t.trace:7: spawn of 'p', which is still alive (spawned on line 6)" },
        { "mkdir A\nwrite A cgroup.subtree_control +x\nspawn p Z\nkill p\n", RULES_BYPASS, false, -EBADMSG, NULL,
          "t.trace:4: kill of 'p', which is not alive (its spawn failed on line 3)" },
        /* "." is /cgb, which has every controller from its parent */
        { "read . cgroup.controllers\nmkdir A\nwrite . cgroup.subtree_control +cpu\n"
          "exists . cgroup.type\nrmdir .\nmkdir .\ntree cpu\ntree memory\n",
          RULES_BYPASS, true, 0,
          "1 = cpuset cpu io memory hugetlb pids rdma misc\n2 ok\n3 ok\n4 = yes\n"
          "5 error EINVAL\n6 error EEXIST\n7 = / |   /A\n8 = /|/A\n", NULL },
};

START_TEST(test_model_runner) {
        _cleanup_free_ char *out = NULL, *msg = NULL;
        int r;

        out = run_model(runs[_i].trace, runs[_i].rules, runs[_i].nonroot, &r, &msg);
        ck_assert_int_eq(r, runs[_i].r);
        if (runs[_i].out)
                ck_assert_str_eq(out, runs[_i].out);
        if (runs[_i].msg)
                ck_assert_str_eq(msg, runs[_i].msg);
}
END_TEST

START_TEST(test_generate_deterministic) {
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        _cleanup_(trace_freep) Trace *t = NULL;
        TraceModelOptions o = { .rules = RULES_BYPASS, .builtin = CGMASK_VM_KERNEL };
        TraceModelOptions n = { .rules = RULES_STOCK, .builtin = CGMASK(CONTROLLER_HUGETLB), .nonroot = true };

        ck_assert_int_eq(trace_generate(42, 80, &o, &a), 0);
        ck_assert_int_eq(trace_generate(42, 80, &o, &b), 0);
        ck_assert_int_eq(trace_generate(43, 80, &o, &c), 0);
        ck_assert_str_eq(a, b);
        ck_assert_str_ne(a, c);
        ck_assert(startswith(a, "# cgbypass-tracegen --seed 42 --length 80 --rules bypass"));
        t = parse_ok(a);
        ck_assert_int_eq(t->n_ops, 80);
        ck_assert_int_eq(trace_generate(1, 0, &o, &c), -EINVAL);
        ck_assert_int_eq(trace_generate(42, 80, &n, &d), 0);
        ck_assert(startswith(d, "# cgbypass-tracegen --seed 42 --length 80 --rules stock --controllers hugetlb --nonroot\n"));
}
END_TEST

/* generated traces are well-formed for the rules they were made for */
START_TEST(test_generate_well_formed) {
        static const RuleSet rules[] = { RULES_BYPASS, RULES_STOCK };

        for (uint64_t seed = 1000; seed < 1100; seed++) {
                _cleanup_free_ char *text = NULL, *out = NULL, *msg = NULL;
                _cleanup_(trace_freep) Trace *t = NULL;
                int r;

                TraceModelOptions o = { .rules = rules[_i], .builtin = CGMASK_VM_KERNEL, .nonroot = seed % 2 };

                ck_assert_int_eq(trace_generate(seed, 50, &o, &text), 0);
                ck_assert_int_eq(trace_parse(text, "gen", &t, NULL), 0);
                out = run_model(text, rules[_i], o.nonroot, &r, &msg);
                ck_assert_msg(r == 0, "seed %" PRIu64 ": %s", seed, strempty(msg));
                ck_assert_msg(!strstr(text, "read . cgroup.procs") && !strstr(text, "read . cgroup.threads"),
                              "seed %" PRIu64 " reads the root's process list", seed);
        }
}
END_TEST

START_TEST(test_csses_find) {
        static const char text[] =
                " 0: cpuset\t- 00000000c0ffee00[1] 1\n"
                " 1: cpu \t- 00000000deadbeef[7] 1 P=3\n"
                " 8: perf_event\t- 000000001234abcd[12] 1 P=1\n"
                "14: debug\t- 00000000aaaaaaaa[1] 1\n";
        int id, parent;

        ck_assert_int_eq(trace_csses_find(text, "cpu", &id, &parent), 1);
        ck_assert_int_eq(id, 7);
        ck_assert_int_eq(parent, 3);
        ck_assert_int_eq(trace_csses_find(text, "perf_event", &id, &parent), 1);
        ck_assert_int_eq(id, 12);
        ck_assert_int_eq(parent, 1);
        ck_assert_int_eq(trace_csses_find(text, "debug", &id, &parent), 1);
        ck_assert_int_eq(id, 1);
        ck_assert_int_eq(parent, 0);
        ck_assert_int_eq(trace_csses_find(text, "memory", &id, &parent), 0);
        ck_assert_int_eq(id, 0);
        ck_assert_int_eq(trace_csses_find(" 1: cpu \t- garbage\n", "cpu", &id, &parent), -EBADMSG);
}
END_TEST

/* the seeds' documentation example as debug.csses would show it */
static const char *const doc_paths[] = {
        "/", "/A", "/A/B", "/A/B/C", "/A/B/C/D", "/A/B/C/D/E", "/A/B/C/D/E/F", "/A/B/G",
};
static const int doc_parents[] = { -1, 0, 1, 2, 3, 4, 5, 2 };

START_TEST(test_tree_from_csses) {
        _cleanup_free_ char *s = NULL;
        const int ids[] = { 1, 5, 0, 0, 0, 9, 0, 11 };
        const int pids[] = { 0, 1, 0, 0, 0, 5, 0, 5 };

        ck_assert_int_eq(trace_tree_from_csses(8, doc_paths, doc_parents, ids, pids, &s), 0);
        ck_assert_str_eq(s, "/\n  /A|/A/B|/A/B/C|/A/B/C/D\n    /A/B/C/D/E|/A/B/C/D/E/F\n    /A/B/G");
}
END_TEST

START_TEST(test_tree_wrong_parent_shows) {
        _cleanup_free_ char *s = NULL, *u = NULL;
        /* G's css linked to the root's instead of A's: it must not render as the model does */
        const int ids[] = { 1, 5, 0, 0, 0, 9, 0, 11 };
        const int pids[] = { 0, 1, 0, 0, 0, 5, 0, 1 };
        const int pids_unknown[] = { 0, 1, 0, 0, 0, 5, 0, 77 };

        ck_assert_int_eq(trace_tree_from_csses(8, doc_paths, doc_parents, ids, pids, &s), 0);
        ck_assert_str_eq(s, "/\n  /A|/A/B|/A/B/C|/A/B/C/D\n    /A/B/C/D/E|/A/B/C/D/E/F\n  /A/B/G");
        ck_assert_int_eq(trace_tree_from_csses(8, doc_paths, doc_parents, ids, pids_unknown, &u), 0);
        ck_assert_str_eq(u, "/\n  /A|/A/B|/A/B/C|/A/B/C/D\n    /A/B/C/D/E|/A/B/C/D/E/F\n?P=77 /A/B/G");
}
END_TEST

START_TEST(test_tree_no_css) {
        _cleanup_free_ char *s = NULL;
        const int zero[8] = {};
        /* DIR below the root without a css of its own: "/" stands for the outside css */
        const int ids[] = { 0, 5, 0, 0, 0, 0, 0, 0 };
        const int pids[] = { 0, 3, 0, 0, 0, 0, 0, 0 };

        ck_assert_int_eq(trace_tree_from_csses(8, doc_paths, doc_parents, zero, zero, &s), -EINVAL);
        ck_assert_int_eq(trace_tree_from_csses(8, doc_paths, doc_parents, ids, pids, &s), 0);
        ck_assert_str_eq(s, "/\n  /A|/A/B|/A/B/C|/A/B/C/D|/A/B/C/D/E|/A/B/C/D/E/F|/A/B/G");
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE_TABLE(
                "trace", "lib", NULL, NULL, { test_parse_ops }, { test_parse_malformed }, { test_errno_names },
                { test_model_runner, ELEMENTSOF(runs) }, { test_generate_deterministic },
                { test_generate_well_formed, 2 }, { test_csses_find },
                { test_tree_from_csses }, { test_tree_wrong_parent_shows }, { test_tree_no_css }));
}
