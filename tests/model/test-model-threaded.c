/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Thread mode: cgroup.type (kernel: cgroup_type_show(), cgroup_type_write(),
 * cgroup_enable_threaded() with decision (b)), patch 002's mkdir refusal,
 * migration into invalid domains, and cgroup.procs/cgroup.threads listings.
 */
#include "model-test.h"

static const RuleSet both_rules[] = { RULES_STOCK, RULES_BYPASS };

START_TEST(test_type_reads) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);

        MKDIR(h, "A");
        MKDIR(h, "A/X");
        MKDIR(h, "A/T");
        MKDIR(h, "A/T/U");
        MKDIR(h, "R");
        ASSERT_READ(h, "A", "cgroup.type", "domain\n");
        ASSERT_READ(h, "A/T", "cgroup.type", "domain\n");
        ck_assert(!cgroup_has_file(h, hierarchy_root(h), "cgroup.type"));
        ck_assert_int_eq(cgroup_read(h, hierarchy_root(h), "cgroup.type", &(char *){ NULL }), -ENOENT);

        WRITE_OK(h, "A/T", "cgroup.type", "threaded");
        ASSERT_READ(h, "A", "cgroup.type", "domain threaded\n");
        ASSERT_READ(h, "A/T", "cgroup.type", "threaded\n");
        /* a domain sibling of a threaded cgroup under a non-root parent */
        ASSERT_READ(h, "A/X", "cgroup.type", "domain invalid\n");
        /* a new child of a threaded cgroup starts as a domain, an invalid one */
        ASSERT_READ(h, "A/T/U", "cgroup.type", "domain invalid\n");
        ck_assert_int_eq(cgroup_get_type(h, cg(h, "A/T/U")), CGROUP_TYPE_DOMAIN_INVALID);
        ck_assert_int_eq(cgroup_get_type(h, cg(h, "A")), CGROUP_TYPE_DOMAIN_THREADED);
        ck_assert_int_eq(cgroup_get_type(h, cg(h, "A/T")), CGROUP_TYPE_THREADED);
        ASSERT_READ(h, "R", "cgroup.type", "domain\n");

        /* under the (mixable) root, domain siblings of a threaded cgroup stay valid */
        WRITE_OK(h, "A/T/U", "cgroup.type", "threaded");
        MKDIR(h, "RT");
        WRITE_OK(h, "RT", "cgroup.type", "threaded");
        ASSERT_READ(h, "R", "cgroup.type", "domain\n");
        ASSERT_READ(h, "RT", "cgroup.type", "threaded\n");

        /* the conditions clear: thread root and invalid domain revert */
        ck_assert(hierarchy_rmdir(h, "A/T/U", NULL) == 0);
        ck_assert(hierarchy_rmdir(h, "A/T", NULL) == 0);
        ASSERT_READ(h, "A", "cgroup.type", "domain\n");
        ASSERT_READ(h, "A/X", "cgroup.type", "domain\n");
        hcheck(h);
}
END_TEST

/* A domain with processes and a threaded controller enabled is a thread root too. */
START_TEST(test_type_thread_root_by_processes) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);
        ProcId p;

        MKDIR(h, "A");
        MKDIR(h, "A/X");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu");
        p = SPAWN(h, "A");
        WRITE_OK(h, "A", "cgroup.subtree_control", "+cpu");
        ASSERT_READ(h, "A", "cgroup.type", "domain threaded\n");
        ASSERT_READ(h, "A/X", "cgroup.type", "domain invalid\n");
        ck_assert_int_eq(hierarchy_kill(h, p), 0);
        ASSERT_READ(h, "A", "cgroup.type", "domain\n");
        ASSERT_READ(h, "A/X", "cgroup.type", "domain\n");
}
END_TEST

typedef struct TypeCase {
        const char *input;
        int err;
} TypeCase;

static const TypeCase type_cases[] = {
        { "threaded",           0 },
        { "threaded\n",         0 },
        { "  threaded\t\n",     0 },
        { "\xa0threaded",       0 },
        { "domain",             EINVAL },
        { "domain threaded",    EINVAL },
        { "domain invalid",     EINVAL },
        { "Threaded",           EINVAL },
        { "THREADED",           EINVAL },
        { "thread",             EINVAL },
        { "threadedx",          EINVAL },
        { "threaded x",         EINVAL },
        { "threaded\nthreaded", EINVAL },
        { "+threaded",          EINVAL },
        { " ",                  EINVAL },
        { "\n",                 EINVAL },
};

START_TEST(test_type_write_parse) {
        const TypeCase *tc = &type_cases[_i / 2];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i % 2], VM);

        MKDIR(h, "A");
        if (tc->err == 0) {
                WRITE_OK(h, "A", "cgroup.type", tc->input);
                ASSERT_READ(h, "A", "cgroup.type", "threaded\n");
                /* already threaded: a no-op */
                WRITE_NOOP(h, "A", "cgroup.type", tc->input);
        } else {
                WRITE_FAIL(h, "A", "cgroup.type", tc->input, tc->err, REASON_PARSE);
                ASSERT_FAIL(h, tc->err, REASON_PARSE, cgroup_write_type(h, cg(h, "A"), tc->input, &rsn));
        }
}
END_TEST

START_TEST(test_type_write_misc) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);

        MKDIR(h, "A");
        SPAWN(h, "A");
        /* parsing before anything else: a populated cgroup still gets EINVAL */
        WRITE_FAIL(h, "A", "cgroup.type", "domain", EINVAL, REASON_PARSE);
        /* empty write: 0 before the handler */
        WRITE_NOOP(h, "A", "cgroup.type", "");
        /* not on the root */
        WRITE_FAIL(h, "/", "cgroup.type", "threaded", ENOENT, REASON_NO_SUCH_FILE);
        /* populated and already threaded: the no-op test comes first */
        MKDIR(h, "T");
        WRITE_OK(h, "T", "cgroup.type", "threaded");
        SPAWN(h, "T");
        WRITE_NOOP(h, "T", "cgroup.type", "threaded");
}
END_TEST

START_TEST(test_threaded_refused_populated) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);

        MKDIR(h, "A");
        MKDIR(h, "B");
        MKDIR(h, "B/C");
        SPAWN(h, "A");
        SPAWN(h, "B/C");
        WRITE_FAIL(h, "A", "cgroup.type", "threaded", EOPNOTSUPP, REASON_CANNOT_BE_THREADED);
        /* populated through a descendant */
        WRITE_FAIL(h, "B", "cgroup.type", "threaded", EOPNOTSUPP, REASON_CANNOT_BE_THREADED);
        ASSERT_READ(h, "B", "cgroup.type", "domain\n");
}
END_TEST

START_TEST(test_threaded_refused_domain_controllers) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);

        MKDIR(h, "A");
        MKDIR(h, "C");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory");
        /* A child of the (mixable) root: only A's own subtree_control decides */
        WRITE_OK(h, "A", "cgroup.subtree_control", "+memory");
        WRITE_FAIL(h, "A", "cgroup.type", "threaded", EOPNOTSUPP, REASON_CANNOT_BE_THREADED);
        WRITE_OK(h, "A", "cgroup.subtree_control", "-memory +cpu");
        WRITE_OK(h, "A", "cgroup.type", "threaded");
        /* threaded controllers only: fine */
        WRITE_OK(h, "C", "cgroup.subtree_control", "+cpu");
        WRITE_OK(h, "C", "cgroup.type", "threaded");
        hcheck(h);
}
END_TEST

/* Decision (b): the cgroup's own bypassed domain controller counts like an enabled one. */
START_TEST(test_decision_b_bypassed_domain_controller) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(RULES_BYPASS, VM);

        MKDIR(h, "A");
        MKDIR(h, "A/B");
        MKDIR(h, "C");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory");
        WRITE_OK(h, "A", "cgroup.subtree_control", "#memory");
        /* the parent is the root, which can always be a thread root: (b) alone refuses */
        WRITE_FAIL(h, "A", "cgroup.type", "threaded", EOPNOTSUPP, REASON_CANNOT_BE_THREADED);
        ASSERT_READ(h, "A/B", "cgroup.controllers", "#memory\n");
        /* a bypassed threaded controller does not count */
        WRITE_OK(h, "C", "cgroup.subtree_control", "#cpu");
        WRITE_OK(h, "C", "cgroup.type", "threaded");
        ASSERT_READ(h, "C", "cgroup.subtree_control", "#cpu\n");
        hcheck(h);
}
END_TEST

START_TEST(test_threaded_refused_parent_cannot_be_thread_root) {
        RuleSet rules = both_rules[_i];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);

        MKDIR(h, "P");
        MKDIR(h, "P/T");
        MKDIR(h, "P/D");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory");

        /* the parent enables a domain controller */
        WRITE_OK(h, "P", "cgroup.subtree_control", "+memory");
        WRITE_FAIL(h, "P/T", "cgroup.type", "threaded", EOPNOTSUPP, REASON_CANNOT_BE_THREADED);
        WRITE_OK(h, "P", "cgroup.subtree_control", "-memory");

        /* the parent bypasses one (patch 003's cgroup_can_be_thread_root()) */
        if (rules == RULES_BYPASS) {
                WRITE_OK(h, "P", "cgroup.subtree_control", "#memory");
                WRITE_FAIL(h, "P/T", "cgroup.type", "threaded", EOPNOTSUPP, REASON_CANNOT_BE_THREADED);
                WRITE_OK(h, "P", "cgroup.subtree_control", "-memory");
        }

        /* the parent has a populated domain child */
        ProcId p = SPAWN(h, "P/D");
        WRITE_FAIL(h, "P/T", "cgroup.type", "threaded", EOPNOTSUPP, REASON_CANNOT_BE_THREADED);
        ck_assert_int_eq(hierarchy_kill(h, p), 0);

        /* only threaded controllers: the parent becomes a thread root */
        WRITE_OK(h, "P", "cgroup.subtree_control", "+cpu");
        WRITE_OK(h, "P/T", "cgroup.type", "threaded");
        ASSERT_READ(h, "P", "cgroup.type", "domain threaded\n");
        ASSERT_READ(h, "P/D", "cgroup.type", "domain invalid\n");
        /* an invalid domain cannot join */
        WRITE_FAIL(h, "P/D", "cgroup.subtree_control", "+cpu", EOPNOTSUPP, REASON_INVALID_DOMAIN);
        hcheck(h);
}
END_TEST

/* Stock only: a child of an invalid domain (patch 002 forbids creating it) cannot join an invalid domain. */
START_TEST(test_threaded_refused_invalid_parent_domain) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(RULES_STOCK, VM);

        MKDIR(h, "P");
        MKDIR(h, "P/T");
        MKDIR(h, "P/X");
        WRITE_OK(h, "P/T", "cgroup.type", "threaded");
        MKDIR(h, "P/X/Y");
        /* cgroup_is_valid_domain() walks every ancestor: P is a (non-mixable) thread root */
        ASSERT_READ(h, "P/X/Y", "cgroup.type", "domain invalid\n");
        WRITE_FAIL(h, "P/X/Y", "cgroup.type", "threaded", EOPNOTSUPP, REASON_CANNOT_BE_THREADED);
        /* X itself can still become threaded: it joins P's valid domain */
        WRITE_OK(h, "P/X", "cgroup.type", "threaded");
        ASSERT_READ(h, "P/X/Y", "cgroup.type", "domain invalid\n");
        WRITE_OK(h, "P/X/Y", "cgroup.type", "threaded");
        hcheck(h);
}
END_TEST

START_TEST(test_threaded_subtree_joins_domain) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);
        ProcId p, q;

        MKDIR(h, "A");
        MKDIR(h, "A/T");
        WRITE_OK(h, "A/T", "cgroup.type", "threaded");
        /* A becomes threaded too: A and A/T join the root's domain */
        WRITE_OK(h, "A", "cgroup.type", "threaded");
        ASSERT_READ(h, "A", "cgroup.type", "threaded\n");
        ASSERT_READ(h, "A/T", "cgroup.type", "threaded\n");
        p = SPAWN(h, "A/T");
        q = SPAWN(h, "/");
        /* the root's cgroup.procs lists the processes of its thread subtree */
        ProcId *ids = NULL;
        size_t n = 0;
        ck_assert_int_eq(cgroup_get_procs(h, hierarchy_root(h), true, &ids, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(ids[0], p);
        ck_assert_uint_eq(ids[1], q);
        free(ids);
        /* a thread moves anywhere in the same domain */
        ASSERT_OK(hierarchy_move(h, q, cg(h, "A"), false, &rsn));
        hcheck(h);
}
END_TEST

/*
 * Regression (hierarchy_check() once required "threaded cgroups are in their
 * parent's domain"): cgroup_enable_threaded() (kernel/cgroup/cgroup.c:
 * 3574-3576) gives the new domain to the switched cgroup and to *every*
 * threaded descendant, also to those below a domain in between. Here K (a
 * threaded child of the thread root D) moves to the root's domain while D
 * stays its own domain, now invalid. The model does what the kernel does,
 * and its invariant check must accept the state (the random test reaches it
 * too, seed 2 stock).
 */
START_TEST(test_threaded_switch_over_nested_thread_root) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);
        ProcId p;

        MKDIR(h, "A");
        MKDIR(h, "A/D");
        MKDIR(h, "A/D/K");
        WRITE_OK(h, "A/D/K", "cgroup.type", "threaded");
        ASSERT_READ(h, "A/D", "cgroup.type", "domain threaded\n");
        WRITE_OK(h, "A", "cgroup.type", "threaded");
        ASSERT_READ(h, "A", "cgroup.type", "threaded\n");
        ASSERT_READ(h, "A/D", "cgroup.type", "domain invalid\n");
        ASSERT_READ(h, "A/D/K", "cgroup.type", "threaded\n");
        /* K's resource domain is the root's: it takes processes, and threads move to A */
        p = SPAWN(h, "A/D/K");
        ASSERT_OK(hierarchy_move(h, p, cg(h, "A"), false, &rsn));
        ASSERT_OK(hierarchy_move(h, p, cg(h, "A/D/K"), false, &rsn));
        ASSERT_FAIL(h, EOPNOTSUPP, REASON_INVALID_DOMAIN, hierarchy_move(h, p, cg(h, "A/D"), true, &rsn));
        char expected[16];
        snprintf(expected, sizeof(expected), "%u\n", p);
        ASSERT_READ(h, "/", "cgroup.procs", expected);
        ASSERT_READ(h, "A/D", "cgroup.procs", "");
        hcheck(h);
}
END_TEST

/* ---- mkdir under an invalid domain (patch 002) ---- */

START_TEST(test_mkdir_under_invalid_domain) {
        RuleSet rules = both_rules[_i];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);

        MKDIR(h, "P");
        MKDIR(h, "P/T");
        MKDIR(h, "P/X");
        WRITE_OK(h, "P/T", "cgroup.type", "threaded");
        ASSERT_READ(h, "P/X", "cgroup.type", "domain invalid\n");

        if (rules == RULES_BYPASS)
                ASSERT_FAIL(h, EOPNOTSUPP, REASON_INVALID_DOMAIN, hierarchy_mkdir(h, "P/X/Y", NULL, &rsn));
        else
                ASSERT_OK(hierarchy_mkdir(h, "P/X/Y", NULL, &rsn));

        /* a threaded parent is not refused: patch 002 tests !cgroup_is_threaded(parent) */
        ASSERT_OK(hierarchy_mkdir(h, "P/T/U", NULL, &rsn));
        ASSERT_READ(h, "P/T/U", "cgroup.type", "domain invalid\n");
        if (rules == RULES_BYPASS)
                ASSERT_FAIL(h, EOPNOTSUPP, REASON_INVALID_DOMAIN, hierarchy_mkdir(h, "P/T/U/V", NULL, &rsn));
        else
                ASSERT_OK(hierarchy_mkdir(h, "P/T/U/V", NULL, &rsn));

        /* EEXIST (VFS) and the newline check come first */
        ASSERT_FAIL(h, EEXIST, REASON_EXISTS, hierarchy_mkdir(h, "P/X/cgroup.procs", NULL, &rsn));
        ASSERT_FAIL(h, EINVAL, REASON_PARSE, hierarchy_mkdir(h, "P/X/a\nb", NULL, &rsn));
        hcheck(h);
}
END_TEST

/* Decision (e): patch 002's EOPNOTSUPP before the hierarchy-limit EAGAIN. */
START_TEST(test_mkdir_invalid_domain_before_limits) {
        RuleSet rules = both_rules[_i];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);

        MKDIR(h, "P");
        MKDIR(h, "P/T");
        MKDIR(h, "P/X");
        WRITE_OK(h, "P/T", "cgroup.type", "threaded");
        WRITE_OK(h, "/", "cgroup.max.descendants", "3");
        if (rules == RULES_BYPASS)
                ASSERT_FAIL(h, EOPNOTSUPP, REASON_INVALID_DOMAIN, hierarchy_mkdir(h, "P/X/Y", NULL, &rsn));
        else
                ASSERT_FAIL(h, EAGAIN, REASON_LIMIT, hierarchy_mkdir(h, "P/X/Y", NULL, &rsn));
        WRITE_OK(h, "P/X", "cgroup.max.depth", "0");
        if (rules == RULES_BYPASS)
                ASSERT_FAIL(h, EOPNOTSUPP, REASON_INVALID_DOMAIN, hierarchy_mkdir(h, "P/X/Y", NULL, &rsn));
        else
                ASSERT_FAIL(h, EAGAIN, REASON_LIMIT, hierarchy_mkdir(h, "P/X/Y", NULL, &rsn));
        /* under the threaded parent only the limit applies */
        ASSERT_FAIL(h, EAGAIN, REASON_LIMIT, hierarchy_mkdir(h, "P/T/U", NULL, &rsn));
}
END_TEST

/* ---- processes ---- */

START_TEST(test_procs_into_invalid_domain) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);
        ProcId p;

        MKDIR(h, "P");
        MKDIR(h, "P/T");
        MKDIR(h, "P/X");
        MKDIR(h, "Q");
        WRITE_OK(h, "P/T", "cgroup.type", "threaded");
        p = SPAWN(h, "Q");
        ASSERT_FAIL(h, EOPNOTSUPP, REASON_INVALID_DOMAIN, hierarchy_spawn(h, cg(h, "P/X"), NULL, &rsn));
        ASSERT_FAIL(h, EOPNOTSUPP, REASON_INVALID_DOMAIN, hierarchy_move(h, p, cg(h, "P/X"), true, &rsn));
        ASSERT_FAIL(h, EOPNOTSUPP, REASON_INVALID_DOMAIN, hierarchy_move(h, p, cg(h, "P/X"), false, &rsn));
        /* the thread root and its threaded child take processes */
        ASSERT_OK(hierarchy_move(h, p, cg(h, "P/T"), true, &rsn));
        ASSERT_OK(hierarchy_move(h, p, cg(h, "P"), false, &rsn));
        /* unknown processes */
        ASSERT_FAIL(h, ESRCH, REASON_NO_SUCH_PROCESS, hierarchy_move(h, 0, cg(h, "Q"), true, &rsn));
        ASSERT_FAIL(h, ESRCH, REASON_NO_SUCH_PROCESS, hierarchy_move(h, 99, cg(h, "Q"), true, &rsn));
        ck_assert_int_eq(hierarchy_kill(h, p), 0);
        ASSERT_FAIL(h, ESRCH, REASON_NO_SUCH_PROCESS, hierarchy_move(h, p, cg(h, "Q"), true, &rsn));
        ASSERT_FAIL(h, ESRCH, ANY_REASON, hierarchy_kill(h, p));
        ASSERT_FAIL(h, ESRCH, ANY_REASON, hierarchy_kill(h, 0));
        ck_assert_ptr_null(hierarchy_proc_cgroup(h, p));
        hcheck(h);
}
END_TEST

START_TEST(test_thread_migration_across_domains) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);
        ProcId p;

        MKDIR(h, "P");
        MKDIR(h, "P/T");
        MKDIR(h, "Q");
        WRITE_OK(h, "P/T", "cgroup.type", "threaded");
        p = SPAWN(h, "P/T");
        ASSERT_FAIL(h, EOPNOTSUPP, REASON_THREAD_MIGRATION, hierarchy_move(h, p, cg(h, "Q"), false, &rsn));
        ASSERT_FAIL(h, EOPNOTSUPP, REASON_THREAD_MIGRATION, hierarchy_move(h, p, hierarchy_root(h), false, &rsn));
        ASSERT_OK(hierarchy_move(h, p, cg(h, "P"), false, &rsn));
        /* the whole process may leave */
        ASSERT_OK(hierarchy_move(h, p, cg(h, "Q"), true, &rsn));
        ck_assert_ptr_eq(hierarchy_proc_cgroup(h, p), cg(h, "Q"));
}
END_TEST

/* No internal process constraint in threaded cgroups and for threaded controllers. */
START_TEST(test_threaded_internal_processes) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);

        MKDIR(h, "P");
        MKDIR(h, "P/T");
        MKDIR(h, "P/T/U");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory +pids");
        WRITE_OK(h, "P", "cgroup.subtree_control", "+cpu +pids");
        WRITE_OK(h, "P/T", "cgroup.type", "threaded");
        WRITE_OK(h, "P/T/U", "cgroup.type", "threaded");
        SPAWN(h, "P/T");
        SPAWN(h, "P");
        WRITE_OK(h, "P/T", "cgroup.subtree_control", "+cpu");
        SPAWN(h, "P/T/U");
        ASSERT_READ(h, "P/T", "cgroup.controllers", "cpu pids\n");
        ASSERT_READ(h, "P/T/U", "cgroup.controllers", "cpu\n");
        ASSERT_READ(h, "P/T", "cgroup.events", "populated 1\nfrozen 0\n");
        hcheck(h);
}
END_TEST

START_TEST(test_procs_listings) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);
        ProcId a, t, u, q, t2;

        MKDIR(h, "P");
        MKDIR(h, "P/T");
        MKDIR(h, "P/T/U");
        MKDIR(h, "Q");
        WRITE_OK(h, "P/T", "cgroup.type", "threaded");
        WRITE_OK(h, "P/T/U", "cgroup.type", "threaded");
        q = SPAWN(h, "Q");
        u = SPAWN(h, "P/T/U");
        a = SPAWN(h, "P");
        t = SPAWN(h, "P/T");
        t2 = SPAWN(h, "P/T");
        ck_assert_uint_eq(q, 1);
        ck_assert_uint_eq(t2, 5);

        /* threaded cgroups have no cgroup.procs to read */
        ck_assert(cgroup_has_file(h, cg(h, "P/T"), "cgroup.procs"));
        ck_assert_int_eq(cgroup_read(h, cg(h, "P/T"), "cgroup.procs", &(char *){ NULL }), -EOPNOTSUPP);
        ck_assert_int_eq(cgroup_read(h, cg(h, "P/T/U"), "cgroup.procs", &(char *){ NULL }), -EOPNOTSUPP);
        ck_assert_int_eq(cgroup_get_procs(h, cg(h, "P/T"), true, &(ProcId *){ NULL }, &(size_t){ 0 }),
                         -EOPNOTSUPP);

        /* the thread root lists every process of its thread subtree, sorted */
        char expected[64];
        snprintf(expected, sizeof(expected), "%u\n%u\n%u\n%u\n", u, a, t, t2);
        ASSERT_READ(h, "P", "cgroup.procs", expected);
        /* cgroup.threads lists only the cgroup's own */
        snprintf(expected, sizeof(expected), "%u\n", a);
        ASSERT_READ(h, "P", "cgroup.threads", expected);
        snprintf(expected, sizeof(expected), "%u\n%u\n", t, t2);
        ASSERT_READ(h, "P/T", "cgroup.threads", expected);
        snprintf(expected, sizeof(expected), "%u\n", u);
        ASSERT_READ(h, "P/T/U", "cgroup.threads", expected);
        snprintf(expected, sizeof(expected), "%u\n", q);
        ASSERT_READ(h, "Q", "cgroup.procs", expected);
        ASSERT_READ(h, "Q", "cgroup.threads", expected);
        /* the root's listing is its own processes only: the thread subtree belongs to P */
        ASSERT_READ(h, "/", "cgroup.procs", "");
        hcheck(h);
}
END_TEST

/* kernel: cgroup_procs_write_start(): kstrtoint(strstrip(buf), 0, &pid) || pid < 0 -> EINVAL */
START_TEST(test_procs_write_parse) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);
        static const char *const bad[] = { "abc", "-1", "1 2", "0x", "99999999999", " ", "1,2" };

        MKDIR(h, "A");
        for (size_t k = 0; k < ELEMENTSOF(bad); k++) {
                WRITE_FAIL(h, "A", "cgroup.procs", bad[k], EINVAL, REASON_PARSE);
                WRITE_FAIL(h, "A", "cgroup.threads", bad[k], EINVAL, REASON_PARSE);
        }
        WRITE_NOOP(h, "A", "cgroup.procs", "");
        /* a well-formed pid is a real process: outside the model */
        WRITE_FAIL(h, "A", "cgroup.procs", " 42\n", ENOSYS, REASON_NOT_MODELED);
}
END_TEST

static Suite *threaded_suite(void) {
        Suite *s = suite_create("model-threaded");

        CHECK_TCASE(s, "type", NULL, NULL, { test_type_reads, 2 }, { test_type_thread_root_by_processes, 2 },
                    { test_type_write_parse, 2 * ELEMENTSOF(type_cases) }, { test_type_write_misc, 2 },
                    { test_threaded_refused_populated, 2 }, { test_threaded_refused_domain_controllers, 2 },
                    { test_decision_b_bypassed_domain_controller },
                    { test_threaded_refused_parent_cannot_be_thread_root, 2 },
                    { test_threaded_refused_invalid_parent_domain }, { test_threaded_subtree_joins_domain, 2 },
                    { test_threaded_switch_over_nested_thread_root, 2 });
        CHECK_TCASE(s, "mkdir", NULL, NULL, { test_mkdir_under_invalid_domain, 2 },
                    { test_mkdir_invalid_domain_before_limits, 2 });
        CHECK_TCASE(s, "procs", NULL, NULL, { test_procs_into_invalid_domain, 2 },
                    { test_thread_migration_across_domains, 2 }, { test_threaded_internal_processes, 2 },
                    { test_procs_listings, 2 }, { test_procs_write_parse, 2 });
        return s;
}

int main(void) {
        return check_run(threaded_suite());
}
