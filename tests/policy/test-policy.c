/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The planner: order, idempotence, teardown and rebuild, refusals with their origin, undo. */
#include <check.h>

#include "../check-run.h"
#include "policy-test.h"
#include "cgbypass/cgpath.h"
#include "cgbypass/desired.h"
#include "cgbypass/policy.h"

#define CPU CGMASK(CONTROLLER_CPU)
#define MEM CGMASK(CONTROLLER_MEMORY)
#define IO CGMASK(CONTROLLER_IO)
#define PIDS CGMASK(CONTROLLER_PIDS)

static Hierarchy *h;

static void setup(void) {
        ck_assert_int_eq(hierarchy_new(&h, RULES_BYPASS, CGMASK_VM_KERNEL), 0);
}

static void teardown(void) {
        h = hierarchy_free(h);
}

static char *dump(void) {
        char *s;
        ck_assert_int_eq(hierarchy_dump(h, &s), 0);
        return s;
}

/* plan, check the copy did not touch h, execute on h */
static char *plan_and_run(const DesiredCgroup *d, size_t n) {
        _cleanup_free_ char *before = dump(), *after = NULL;
        PolicyErrors e = {};
        Plan *p = NULL;

        int r = policy_plan(h, d, n, &p, &e);
        for (size_t i = 0; i < e.n; i++)
                fprintf(stderr, "unexpected: %s\n", e.errors[i].message);
        ck_assert_int_eq(r, 0);
        ck_assert_int_eq(e.n, 0);
        after = dump();
        ck_assert_str_eq(before, after);
        char *text = plan_text(p);
        size_t idx;
        ck_assert_int_eq(plan_execute_model(p, h, &idx, NULL), 0);
        plan_free(p);
        return text;
}

static const DesiredCgroup doc_example[] = DOC_EXAMPLE_DESIRED;

START_TEST(test_doc_example_from_scratch) {
        _cleanup_free_ char *text = plan_and_run(doc_example, ELEMENTSOF(doc_example)), *tree = NULL;

        /* parents before children, E made on the way to F, the bypass before G's re-enable */
        ck_assert_str_eq(text,
                         "mkdir A\nmkdir A/B\nmkdir A/B/C\nmkdir A/B/G\nmkdir A/B/C/D\nmkdir A/B/C/D/E\n"
                         "mkdir A/B/C/D/E/F\n"
                         "write . cgroup.subtree_control +cpu\n"
                         "write A cgroup.subtree_control #cpu\n"
                         "write A/B cgroup.subtree_control #cpu\n"
                         "write A/B/C cgroup.subtree_control #cpu\n"
                         "write A/B/G cgroup.controllers +cpu\n"
                         "write A/B/C/D cgroup.subtree_control +cpu\n");
        ck_assert_int_eq(hierarchy_effective_tree(h, CONTROLLER_CPU, &tree), 0);
        ck_assert_str_eq(tree, "/\n  /A|/A/B|/A/B/C|/A/B/C/D\n    /A/B/C/D/E|/A/B/C/D/E/F\n    /A/B/G\n");
}
END_TEST

START_TEST(test_in_sync_plan_is_empty) {
        free(plan_and_run(doc_example, ELEMENTSOF(doc_example)));
        _cleanup_free_ char *again = plan_and_run(doc_example, ELEMENTSOF(doc_example));
        ck_assert_str_eq(again, "");
}
END_TEST

START_TEST(test_switch_bypass_to_enable_rebuilds_below) {
        DesiredCgroup d[ELEMENTSOF(doc_example)];
        _cleanup_free_ char *tree = NULL;

        free(plan_and_run(doc_example, ELEMENTSOF(doc_example)));
        memcpy(d, doc_example, sizeof(d));
        d[1].sc_bypass = 0;
        d[1].sc_enable = CPU;
        _cleanup_free_ char *text = plan_and_run(d, ELEMENTSOF(d));
        /* below A, users of cpu are cleared bottom-up, A switches, then they come back top-down */
        ck_assert_str_eq(text,
                         "write A/B/C/D cgroup.subtree_control -cpu\n"
                         "write A/B/G cgroup.controllers #cpu\n"
                         "write A/B/C cgroup.subtree_control -cpu\n"
                         "write A/B cgroup.subtree_control -cpu\n"
                         "write A cgroup.subtree_control +cpu\n"
                         "write A/B cgroup.subtree_control #cpu\n"
                         "write A/B/C cgroup.subtree_control #cpu\n"
                         "write A/B/G cgroup.controllers +cpu\n"
                         "write A/B/C/D cgroup.subtree_control +cpu\n");
        ck_assert_int_eq(hierarchy_effective_tree(h, CONTROLLER_CPU, &tree), 0);
        ck_assert_str_eq(tree, "/\n  /A\n    /A/B|/A/B/C|/A/B/C/D\n      /A/B/C/D/E|/A/B/C/D/E/F\n      /A/B/G\n");
}
END_TEST

static void expect_errors(const DesiredCgroup *d, size_t n, const char *const *messages, const unsigned *lines) {
        _cleanup_free_ char *before = dump(), *after = NULL;
        PolicyErrors e = {};
        Plan *p = NULL;
        size_t k = 0;

        ck_assert_int_eq(policy_plan(h, d, n, &p, &e), -EINVAL);
        ck_assert_ptr_null(p);
        for (; messages[k]; k++) {
                ck_assert_uint_gt(e.n, k);
                ck_assert_str_eq(e.errors[k].message, messages[k]);
                ck_assert_uint_eq(e.errors[k].origin.line, lines[k]);
        }
        ck_assert_uint_eq(e.n, k);
        after = dump();
        ck_assert_str_eq(before, after);
        policy_errors_done(&e);
}

START_TEST(test_unmanaged_user_blocks_change) {
        DesiredCgroup d[ELEMENTSOF(doc_example) - 1];

        free(plan_and_run(doc_example, ELEMENTSOF(doc_example)));
        memcpy(d, doc_example, sizeof(d)); /* G not managed any more */
        d[1].sc_bypass = 0;
        d[1].sc_enable = CPU;
        d[1].sc_origin = (Origin) { "a.conf", 12 };
        expect_errors(d, ELEMENTSOF(d),
                      (const char *const[]) { "/A: cpu cannot change while /A/B/G uses it, and the configuration "
                                              "does not manage /A/B/G", NULL },
                      (const unsigned[]) { 12 });
}
END_TEST

START_TEST(test_refusals_name_reason_and_line) {
        ProcId pid;
        Cgroup *c;

        ck_assert_int_eq(hierarchy_mkdir(h, "busy", &c, NULL), 0);
        ck_assert_int_eq(hierarchy_spawn(h, c, &pid, NULL), 0);
        const DesiredCgroup d[] = {
                { .path = "/", .sc_enable = MEM, .sc_origin = { "m.conf", 2 } },
                { .path = "/busy", .sc_enable = MEM, .origin = { "m.conf", 4 }, .sc_origin = { "m.conf", 6 } },
                { .path = "/x", .create = true, .sc_origin = { "m.conf", 9 }, .origin = { "m.conf", 8 } },
                { .path = "/x/y", .create = true, .ctl_enable = IO, .origin = { "m.conf", 11 },
                  .ctl_origin = { "m.conf", 13 } },
                { .path = "/missing", .origin = { "m.conf", 15 } },
        };
        expect_errors(d, ELEMENTSOF(d),
                      (const char *const[]) {
                              "/missing: the cgroup does not exist (set create = yes to make it)",
                              "/busy: subtree-control +memory: the cgroup has processes, and a domain controller "
                              "cannot be given to its children",
                              "/x/y: controllers +io: the parent does not bypass it", NULL },
                      (const unsigned[]) { 15, 6, 13 });
}
END_TEST

START_TEST(test_bad_descriptions) {
        const DesiredCgroup d[] = {
                { .path = "/a", .sc_enable = CPU, .sc_disable = CPU, .origin = { "b.conf", 1 } },
                { .path = "/", .ctl_enable = CPU, .origin = { "b.conf", 3 } },
                { .path = "/a", .origin = { "b.conf", 5 } },
                { .path = "relative", .origin = { "b.conf", 7 } },
        };
        expect_errors(d, ELEMENTSOF(d),
                      (const char *const[]) { "/a: subtree-control names a controller twice",
                                              "/: the root cgroup has no parent to bypass controllers for it",
                                              "relative: not an absolute cgroup path", "/a: described twice",
                                              NULL },
                      (const unsigned[]) { 1, 3, 7, 5 });
}
END_TEST

/* twins among many descriptions: found by the hash check, reported in path order as the sort pairs them */
START_TEST(test_described_twice_among_many) {
        static char paths[200][16];
        DesiredCgroup d[ELEMENTSOF(paths) + 3];
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                snprintf(paths[i], sizeof(paths[i]), "/t%zu", i);
                d[n++] = (DesiredCgroup) { .path = paths[i], .origin = { "t.conf", (unsigned) i + 1 } };
        }
        d[n++] = (DesiredCgroup) { .path = "/t7", .origin = { "t.conf", 301 } };
        d[n++] = (DesiredCgroup) { .path = "/t150", .origin = { "t.conf", 302 } };
        d[n++] = (DesiredCgroup) { .path = "/t7", .origin = { "t.conf", 303 } };
        expect_errors(d, n,
                      (const char *const[]) { "/t150: described twice", "/t7: described twice",
                                              "/t7: described twice", NULL },
                      (const unsigned[]) { 302, 301, 303 });
}
END_TEST

START_TEST(test_undo_restores_each_step) {
        _cleanup_free_ char *start = NULL;
        PolicyErrors e = {};
        Plan *p = NULL;
        DesiredCgroup d[ELEMENTSOF(doc_example)];

        free(plan_and_run(doc_example, ELEMENTSOF(doc_example)));
        memcpy(d, doc_example, sizeof(d));
        d[0].sc_enable = CPU | PIDS;
        d[1].sc_bypass = 0;
        d[1].sc_enable = CPU | PIDS;
        d[6].ctl_enable = 0;
        d[6].ctl_bypass = CPU;
        start = dump();
        ck_assert_int_eq(policy_plan(h, d, ELEMENTSOF(d), &p, &e), 0);
        ck_assert_uint_gt(p->n_ops, 4);

        /* run it, then undo it write by write: each undo lands exactly on the state before its op */
        char **states = calloc(p->n_ops + 1, sizeof(char *));
        for (size_t i = 0; i < p->n_ops; i++) {
                Cgroup *c;
                states[i] = dump();
                ck_assert_int_eq(p->ops[i].type, PLAN_OP_WRITE);
                ck_assert_int_eq(hierarchy_lookup(h, p->ops[i].path, &c), 0);
                ck_assert_int_eq(cgroup_write(h, c, p->ops[i].file, p->ops[i].value, NULL), 0);
        }
        for (size_t i = p->n_ops; i-- > 0;) {
                Cgroup *c;
                _cleanup_free_ char *now = NULL;
                ck_assert_int_eq(hierarchy_lookup(h, p->ops[i].path, &c), 0);
                ck_assert_int_eq(cgroup_write(h, c, p->ops[i].file, p->ops[i].undo, NULL), 0);
                now = dump();
                ck_assert_str_eq(now, states[i]);
                free(states[i]);
        }
        free(states);
        plan_free(p);
}
END_TEST

START_TEST(test_drift) {
        Drift *d;
        size_t n;
        Cgroup *a;

        free(plan_and_run(doc_example, ELEMENTSOF(doc_example)));
        ck_assert_int_eq(policy_drift(h, doc_example, ELEMENTSOF(doc_example), &d, &n), 0);
        ck_assert_uint_eq(n, 0);
        drift_free_array(d, n);

        ck_assert_int_eq(hierarchy_lookup(h, "A/B/G", &a), 0);
        ck_assert_int_eq(cgroup_write(h, a, "cgroup.controllers", "#cpu", NULL), 0);
        ck_assert_int_eq(policy_drift(h, doc_example, ELEMENTSOF(doc_example), &d, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(d[0].path, "/A/B/G");
        ck_assert_str_eq(d[0].file, "cgroup.controllers");
        ck_assert_int_eq(d[0].controller, CONTROLLER_CPU);
        ck_assert_str_eq(d[0].expected, "re-enabled");
        ck_assert_str_eq(d[0].found, "bypassed");
        drift_free_array(d, n);
}
END_TEST

/* Random desired states over a small tree: a plan either reaches them exactly or names why not. */
static uint64_t rng;
static uint64_t next_rand(void) {
        rng += 0x9e3779b97f4a7c15ULL;
        uint64_t z = rng;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static char *errors_text(const PolicyErrors *e) {
        StrBuf b = STRBUF_INIT;
        char *s = NULL;

        for (size_t i = 0; i < e->n; i++)
                strbuf_printf(&b, "%s\n", e->errors[i].message);
        strbuf_putc(&b, '.');
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

/* policy_plan_scope() on each existing cgroup's entries: the plan and errors policy_plan() gives them */
static void check_scoped_plans(const DesiredCgroup *d, size_t n) {
        for (size_t i = 0; i < n; i++) {
                DesiredCgroup sub[16];
                PolicyErrors e1 = {}, e2 = {};
                Plan *p1 = NULL, *p2 = NULL;
                size_t k = 0;
                Cgroup *c;

                if (hierarchy_lookup(h, d[i].path, &c) < 0)
                        continue;
                for (size_t j = 0; j < n && k < ELEMENTSOF(sub); j++)
                        if (cgpath_is_at_or_below(d[j].path, d[i].path))
                                sub[k++] = d[j];
                _cleanup_free_ char *before = dump(), *after = NULL;
                int r1 = policy_plan(h, sub, k, &p1, &e1);
                int r2 = policy_plan_scope(h, d[i].path, sub, k, &p2, &e2);
                after = dump();
                ck_assert_str_eq(before, after);
                ck_assert_int_eq(r1, r2);
                _cleanup_free_ char *t1 = p1 ? plan_text(p1) : strdup("-"), *t2 = p2 ? plan_text(p2) : strdup("-");
                _cleanup_free_ char *m1 = errors_text(&e1), *m2 = errors_text(&e2);
                ck_assert_str_eq(t1, t2);
                ck_assert_str_eq(m1, m2);
                plan_free(p1);
                plan_free(p2);
                policy_errors_done(&e1);
                policy_errors_done(&e2);
        }
}

START_TEST(test_random_plans) {
        static const char *const paths[] = { "/", "/a", "/a/b", "/a/b/c", "/a/d", "/e", "/e/f" };
        static const int parent[] = { -1, 0, 1, 2, 1, 0, 5 };
        const CgMask pool[] = { CPU, MEM, IO, PIDS };
        unsigned reached = 0, refused = 0;

        rng = 42;
        for (unsigned round = 0; round < 400; round++) {
                DesiredCgroup all[ELEMENTSOF(paths)] = {}, d[ELEMENTSOF(paths)];
                bool coherent = round % 2 == 0;
                size_t n = 0;

                /* mostly consistent with the parent's wishes, sometimes not: both outcomes matter */
                for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                        DesiredCgroup *x = &all[i];
                        *x = (DesiredCgroup) { .path = paths[i], .create = true };
                        CgMask offered = i == 0 ? CGMASK_ALL : all[parent[i]].sc_enable | all[parent[i]].sc_bypass;
                        CgMask bypassed = i == 0 ? 0 : all[parent[i]].sc_bypass;
                        bool wild = next_rand() % 30 == 0;
                        /* half the rounds describe every controller: those must all be reachable */
                        bool complete = round % 2 == 0;
                        if (wild)
                                coherent = false;
                        for (size_t k = 0; k < ELEMENTSOF(pool); k++) {
                                bool ok = wild || (offered & pool[k]);
                                if (complete && !wild) {
                                        unsigned v = next_rand() % 3;
                                        if (!(offered & pool[k]) || v == 2)
                                                x->sc_disable |= pool[k];
                                        else if (v == 0)
                                                x->sc_enable |= pool[k];
                                        else
                                                x->sc_bypass |= pool[k];
                                        if (i > 0 && (bypassed & pool[k]) && next_rand() % 2)
                                                x->ctl_enable |= pool[k];
                                        else if (i > 0)
                                                x->ctl_bypass |= pool[k];
                                        continue;
                                }
                                switch (next_rand() % 10) {
                                case 0: case 1: case 2: if (ok) x->sc_enable |= pool[k]; break;
                                case 3: case 4: case 5: if (ok) x->sc_bypass |= pool[k]; break;
                                case 6: case 7: case 8: x->sc_disable |= pool[k]; break;
                                default: break;
                                }
                                if (i > 0 && (wild || (bypassed & pool[k])))
                                        switch (next_rand() % 5) {
                                        case 0: case 1: x->ctl_enable |= pool[k]; break;
                                        case 2: case 3: x->ctl_bypass |= pool[k]; break;
                                        default: break;
                                        }
                        }
                        if (i == 0 || next_rand() % 12 != 0)
                                d[n++] = *x;
                        else
                                coherent = false;
                }

                _cleanup_free_ char *before = dump(), *after = NULL;
                PolicyErrors e = {};
                Plan *p = NULL;
                int r = policy_plan(h, d, n, &p, &e);
                after = dump();
                ck_assert_str_eq(before, after);
                check_scoped_plans(d, n);
                /* every cgroup described for every controller it can use: nothing may stand in the way */
                if (coherent)
                        ck_assert_int_eq(r, 0);
                if (r == -EINVAL) {
                        ck_assert_uint_gt(e.n, 0);
                        if (getenv("POLICY_DEBUG")) {
                                for (size_t i = 0; i < e.n; i++)
                                        fprintf(stderr, "round %u: %s\n", round, e.errors[i].message);
                                char *s = dump();
                                fprintf(stderr, "%s", s);
                                free(s);
                                for (size_t i = 0; i < n; i++)
                                        fprintf(stderr, "  want %s sc+%x #%x -%x ctl+%x #%x\n", d[i].path,
                                                d[i].sc_enable, d[i].sc_bypass, d[i].sc_disable,
                                                d[i].ctl_enable, d[i].ctl_bypass);
                        }
                        policy_errors_done(&e);
                        refused++;
                        continue;
                }
                ck_assert_int_eq(r, 0);
                size_t idx;
                ck_assert_int_eq(plan_execute_model(p, h, &idx, NULL), 0);
                plan_free(p);

                Drift *dr;
                size_t ndr;
                ck_assert_int_eq(policy_drift(h, d, n, &dr, &ndr), 0);
                ck_assert_uint_eq(ndr, 0);
                drift_free_array(dr, ndr);
                ck_assert_int_eq(hierarchy_check(h, NULL), 0);

                /* and now it is in sync */
                ck_assert_int_eq(policy_plan(h, d, n, &p, &e), 0);
                ck_assert_uint_eq(p->n_ops, 0);
                plan_free(p);
                reached++;
        }
        /* the generator must exercise both outcomes */
        ck_assert_uint_gt(reached, 100);
        ck_assert_uint_gt(refused, 40);
}
END_TEST

START_TEST(test_plan_may_add_files) {
        PlanOp ops[] = {
                { .type = PLAN_OP_WRITE, .path = (char *) "a", .file = (char *) "cgroup.controllers", .value = (char *) "#cpu" },
                { .type = PLAN_OP_WRITE, .path = (char *) "a", .file = (char *) "cgroup.subtree_control",
                  .value = (char *) "-memory #io" },
                { .type = PLAN_OP_WRITE, .path = (char *) "a", .file = (char *) "cgroup.subtree_control",
                  .value = (char *) "#io +pids" },
                { .type = PLAN_OP_MKDIR, .path = (char *) "a/b" },
                { .type = PLAN_OP_WRITE, .path = (char *) "a", .file = (char *) "cpu.weight", .value = (char *) "50" },
        };
        Plan p = { .ops = ops };

        ck_assert(!plan_may_add_files(&p));     /* empty */
        p.n_ops = 2;
        ck_assert(!plan_may_add_files(&p));     /* only takes away */
        for (size_t i = 2; i < ELEMENTSOF(ops); i++) {
                p.ops = &ops[i];
                p.n_ops = 1;
                ck_assert(plan_may_add_files(&p));
        }
}
END_TEST

/* the applied state's token lists: what desired_tokens_append() writes, and what it never writes */
START_TEST(test_tokens_parse) {
        static const struct {
                const char *s;
                bool minus;
                int r;
                CgMask plus, hash, minus_mask;
        } rows[] = {
                { "", true, 0, 0, 0, 0 },
                { "+cpu,#io,-memory", true, 0, CGMASK(CONTROLLER_CPU), CGMASK(CONTROLLER_IO), CGMASK(CONTROLLER_MEMORY) },
                { ",+cpu,,#io,", false, 0, CGMASK(CONTROLLER_CPU), CGMASK(CONTROLLER_IO), 0 },  /* empty tokens skipped */
                { "-memory", false, -EBADMSG, 0, 0, 0 },
                { "cpu", true, -EBADMSG, 0, 0, 0 },
                { "+", true, -EBADMSG, 0, 0, 0 },
                { "+nope", true, -EBADMSG, 0, 0, 0 },
                { "+cpu,#cpu", true, -EBADMSG, 0, 0, 0 },
                { "+cpuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu", true, -EBADMSG, 0, 0, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                CgMask plus = 0, hash = 0, minus = 0;
                int r = desired_tokens_parse(rows[i].s, rows[i].minus, &plus, &hash, &minus);
                ck_assert_msg(r == rows[i].r, "'%s': %d", rows[i].s, r);
                if (r == 0)
                        ck_assert_msg(plus == rows[i].plus && hash == rows[i].hash && minus == rows[i].minus_mask,
                                      "'%s': masks", rows[i].s);
        }
}
END_TEST

/* what state_file_load() reads: lines cut at their newline (and a NUL), words at runs of spaces */
static int load_text(const char *text, size_t len, DesiredSet *ret) {
        char dir[] = "/tmp/test-policy-XXXXXX";
        _cleanup_free_ char *path = NULL;
        int r;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, STATE_FILE_NAME), 0);
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(text, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
        r = state_file_load(dir, ret);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(rmdir(dir), 0);
        return r;
}

#define HEADER "# cgbypassd applied state v1; written by cgbypassd, do not edit\n"
#define LOAD(literal, ret) load_text(literal, sizeof(literal) - 1, ret)

/* the applied state's text, byte for byte: controllers in ssid order, ',' between, one line a cgroup */
START_TEST(test_state_file_save_text) {
        char dir[] = "/tmp/cgb-state-XXXXXX";
        _cleanup_free_ char *path = NULL;
        DesiredCgroup items[] = {
                { .path = (char *) "/", .sc_enable = CPU | MEM, .sc_bypass = IO, .sc_disable = PIDS },
                { .path = (char *) "/a/b", .create = true, .ctl_enable = CPU, .ctl_bypass = IO | PIDS },
                { .path = (char *) "/c", .create = true, .sc_enable = CGMASK_ALL & ~controller_inhibit_mask(CGMASK_ALL) },
        };
        DesiredSet set = { .items = items, .n = ELEMENTSOF(items) };
        char text[1024] = "";

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(state_file_save(dir, &set), 0);
        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, STATE_FILE_NAME), 0);
        FILE *f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_gt(fread(text, 1, sizeof(text) - 1, f), 0);
        fclose(f);
        ck_assert_str_eq(text, HEADER
                         "cgroup / create=no sc=+cpu,#io,+memory,-pids ctl=\n"
                         "cgroup /a/b create=yes sc= ctl=+cpu,#io,#pids\n"
                         "cgroup /c create=yes sc=+cpuset,+cpu,+io,+memory,+perf_event,+hugetlb,+pids,+rdma,+misc,+debug "
                         "ctl=\n");
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_state_file_load) {
        DesiredSet s = {};

        ck_assert_int_eq(LOAD(HEADER "cgroup / create=no sc=+cpu ctl=\n"
                              "cgroup  /a/b   create=yes  sc=#cpu,-io ctl=+cpu\n"
                              "cgroup /c", &s), 0);
        ck_assert_uint_eq(s.n, 3);
        ck_assert_str_eq(s.items[0].path, "/");
        ck_assert(!s.items[0].create);
        ck_assert_uint_eq(s.items[0].sc_enable, CPU);
        ck_assert_str_eq(s.items[1].path, "/a/b");
        ck_assert(s.items[1].create);
        ck_assert_uint_eq(s.items[1].sc_bypass, CPU);
        ck_assert_uint_eq(s.items[1].sc_disable, IO);
        ck_assert_uint_eq(s.items[1].ctl_enable, CPU);
        ck_assert_uint_eq(s.items[1].origin.line, 3);
        ck_assert(strstr(s.items[1].origin.file, STATE_FILE_NAME));
        ck_assert_str_eq(s.items[2].path, "/c");
        desired_set_done(&s);

        /* a NUL ends the line as a string: the rest of it is not read */
        ck_assert_int_eq(load_text(HEADER "cgroup /d sc=+cpu\0 junk\n", sizeof(HEADER) - 1 + 24, &s), 0);
        ck_assert_uint_eq(s.n, 1);
        ck_assert_str_eq(s.items[0].path, "/d");
        ck_assert_uint_eq(s.items[0].sc_enable, CPU);
        desired_set_done(&s);

        ck_assert_int_eq(LOAD("", &s), -EBADMSG);
        ck_assert_int_eq(LOAD("# another header\n", &s), -EBADMSG);
        ck_assert_int_eq(LOAD(HEADER "\n", &s), -EBADMSG);
        ck_assert_int_eq(LOAD(HEADER "group /a\n", &s), -EBADMSG);
        ck_assert_int_eq(LOAD(HEADER "cgroup a\n", &s), -EBADMSG);
        ck_assert_int_eq(LOAD(HEADER "cgroup /a what=1\n", &s), -EBADMSG);
        ck_assert_int_eq(LOAD(HEADER "cgroup /a sc=+nope\n", &s), -EBADMSG);
        ck_assert_int_eq(LOAD(HEADER, &s), 0);
        ck_assert_uint_eq(s.n, 0);
        desired_set_done(&s);
        ck_assert_int_eq(state_file_load("/nonexistent-dir", &s), -ENOENT);
}
END_TEST

static Suite *policy_suite(void) {
        return CHECK_SUITE("policy", "plan", setup, teardown, test_doc_example_from_scratch,
                           test_in_sync_plan_is_empty, test_switch_bypass_to_enable_rebuilds_below,
                           test_unmanaged_user_blocks_change, test_refusals_name_reason_and_line,
                           test_bad_descriptions, test_described_twice_among_many, test_undo_restores_each_step, test_drift, test_random_plans, test_state_file_save_text,
                           test_plan_may_add_files, test_tokens_parse, test_state_file_load);
}

int main(void) {
        return check_run(policy_suite());
}
