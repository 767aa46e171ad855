/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup.subtree_control writes (kernel: cgroup_subtree_control_write(), and
 * the series' version from patch 003/004 under the bypass rules): parsing,
 * the order of the ENOENT/EBUSY checks, implicit and dependent controllers,
 * and cgroup_vet_subtree_control_enable() with decision (a).
 */
#include "model-test.h"

static const RuleSet both_rules[] = { RULES_STOCK, RULES_BYPASS };

/* ---- parsing, at the root ---- */

typedef struct ParseCase {
        const char *input;
        int err[_RULES_MAX];            /* errno, 0 for success */
        const char *after[_RULES_MAX];  /* the root's cgroup.subtree_control after success */
} ParseCase;

#define OK(s)         { 0, 0 }, { s, s }
#define FAILS(e)      { e, e }, { NULL, NULL }
#define STOCK_EINVAL(s) { EINVAL, 0 }, { NULL, s } /* '#' is a bypass-only prefix */

static const ParseCase parse_cases[] = {
        { "+cpu",                       OK("cpu\n") },
        { "  +cpu  ",                   OK("cpu\n") },
        { "+cpu\n",                     OK("cpu\n") },
        { "\t+cpu +memory\n",           OK("cpu memory\n") },
        { "+memory +cpu",               OK("cpu memory\n") },     /* printed in ssid order */
        { "+cpu  +memory",              OK("cpu memory\n") },     /* empty token skipped */
        { " +cpu   +memory ",           OK("cpu memory\n") },
        { "+cpu\v\f\r",                 OK("cpu\n") },            /* strstrip(): kernel isspace() */
        { "+cpu\xa0",                   OK("cpu\n") },            /* lib/ctype.c: 0xa0 is a space */
        { "\xa0+cpu",                   OK("cpu\n") },
        { " ",                          OK("") },                 /* no token: nothing to do */
        { "\n",                         OK("") },
        { "-cpu",                       OK("") },                 /* not enabled: no-op */
        { "+cpu -cpu",                  OK("") },                 /* last token wins */
        { "-cpu +cpu",                  OK("cpu\n") },
        { "+memory -memory +memory",    OK("memory\n") },
        { "+cpuset +cpu +io +memory +hugetlb +pids +rdma +misc",
                                        OK("cpuset cpu io memory hugetlb pids rdma misc\n") },
        { "+cpu\t+memory",              FAILS(EINVAL) },          /* only ' ' separates */
        { "+cpu\n+memory",              FAILS(EINVAL) },
        { "+cpu,+memory",               FAILS(EINVAL) },
        { "cpu",                        FAILS(EINVAL) },          /* missing prefix */
        { "pu",                         FAILS(EINVAL) },
        { "+",                          FAILS(EINVAL) },
        { "-",                          FAILS(EINVAL) },
        { "++cpu",                      FAILS(EINVAL) },
        { "*cpu",                       FAILS(EINVAL) },
        { "xcpu",                       FAILS(EINVAL) },
        { "+CPU",                       FAILS(EINVAL) },
        { "+cpu2",                      FAILS(EINVAL) },
        { "+bogus",                     FAILS(EINVAL) },
        { "+cpuacct",                   FAILS(EINVAL) },          /* v1-only and not built */
        { "+devices",                   FAILS(EINVAL) },
        { "+freezer",                   FAILS(EINVAL) },
        { "+net_cls",                   FAILS(EINVAL) },
        { "+net_prio",                  FAILS(EINVAL) },
        { "-net_prio",                  FAILS(EINVAL) },
        { "+cpu +bogus",                FAILS(EINVAL) },          /* all or nothing */
        { "+cpu +devices",              FAILS(EINVAL) },
        { "+perf_event +bogus",         FAILS(EINVAL) },          /* parsing comes before availability */
        { "+perf_event",                FAILS(ENOENT) },          /* implicit: never in cgroup_control() */
        { "+debug",                     FAILS(ENOENT) },
        { "+cpu +perf_event",           FAILS(ENOENT) },
        { "#cpu",                       STOCK_EINVAL("#cpu\n") },
        { "+cpu #cpu",                  STOCK_EINVAL("#cpu\n") },
        { "#cpu +cpu",                  STOCK_EINVAL("cpu\n") },
        { "#cpu -cpu",                  STOCK_EINVAL("") },
        { "#cpuset +cpu #io -memory",   STOCK_EINVAL("#cpuset cpu #io\n") },
        { "##cpu",                      FAILS(EINVAL) },
};

/* cases whose stock and bypass answers differ in kind: '-' of an unavailable controller */
static const ParseCase parse_cases_minus[] = {
        /* stock: disabling what is not enabled is skipped; patch 003: every name must be available */
        { "-perf_event",                { 0, ENOENT }, { "", NULL } },
        { "-debug",                     { 0, ENOENT }, { "", NULL } },
        { "#perf_event",                { EINVAL, ENOENT }, { NULL, NULL } },
        { "#debug",                     { EINVAL, ENOENT }, { NULL, NULL } },
        { "+cpu -debug",                { 0, ENOENT }, { "cpu\n", NULL } },
};

static void check_parse_case(const ParseCase *pc, RuleSet rules) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);
        int err = pc->err[rules];

        if (err == 0) {
                WRITE_OK(h, "/", "cgroup.subtree_control", pc->input);
                ASSERT_READ(h, "/", "cgroup.subtree_control", pc->after[rules]);
        } else
                WRITE_FAIL(h, "/", "cgroup.subtree_control", pc->input, err,
                           err == EINVAL ? REASON_PARSE : REASON_NOT_AVAILABLE);
        hcheck(h);
}

START_TEST(test_parse) {
        check_parse_case(&parse_cases[_i / 2], both_rules[_i % 2]);
}
END_TEST

START_TEST(test_parse_minus_unavailable) {
        check_parse_case(&parse_cases_minus[_i / 2], both_rules[_i % 2]);
}
END_TEST

/* A non-root cgroup parses the same; parsing fails before availability is looked at. */
START_TEST(test_parse_at_child) {
        for (size_t k = 0; k < ELEMENTSOF(both_rules); k++) {
                _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[k], VM);
                MKDIR(h, "A");
                WRITE_FAIL(h, "A", "cgroup.subtree_control", "+cpu +bogus", EINVAL, REASON_PARSE);
                WRITE_FAIL(h, "A", "cgroup.subtree_control", "+cpu", ENOENT, REASON_NOT_AVAILABLE);
                WRITE_FAIL(h, "A", "cgroup.subtree_control", "+cpu\t", ENOENT, REASON_NOT_AVAILABLE);
                WRITE_FAIL(h, "A", "cgroup.subtree_control", "+cpu\t+io", EINVAL, REASON_PARSE);
        }
}
END_TEST

START_TEST(test_empty_write) {
        for (size_t k = 0; k < ELEMENTSOF(both_rules); k++) {
                _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[k], VM);
                MKDIR(h, "A");
                /* cgroup_file_write(): "if (!nbytes) return 0;" before any handler */
                WRITE_NOOP(h, "A", "cgroup.subtree_control", "");
                WRITE_NOOP(h, "/", "cgroup.subtree_control", "");
                /* the handler itself: no tokens, nothing to do */
                ASSERT_NOOP(h, cgroup_write_subtree_control(h, cg(h, "A"), "", &rsn));
                ASSERT_NOOP(h, cgroup_write_subtree_control(h, cg(h, "A"), " \n", &rsn));
        }
}
END_TEST

START_TEST(test_not_built_in) {
        /* a kernel without io, debug (no cgroup_debug) and perf_event */
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], M(CPU) | M(MEMORY) | M(PIDS));

        WRITE_FAIL(h, "/", "cgroup.subtree_control", "+io", EINVAL, REASON_PARSE);
        WRITE_FAIL(h, "/", "cgroup.subtree_control", "+debug", EINVAL, REASON_PARSE);
        WRITE_FAIL(h, "/", "cgroup.subtree_control", "+perf_event", EINVAL, REASON_PARSE);
        WRITE_FAIL(h, "/", "cgroup.subtree_control", "-io", EINVAL, REASON_PARSE);
        ASSERT_READ(h, "/", "cgroup.controllers", "cpu memory pids\n");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+memory +cpu");
        ASSERT_READ(h, "/", "cgroup.subtree_control", "cpu memory\n");
        /* nothing implicit: subtree_ss_mask is exactly subtree_control */
        ASSERT_MASK(cgroup_get_subtree_ss_mask(hierarchy_root(h)), M(CPU) | M(MEMORY));
}
END_TEST

START_TEST(test_v1_only_are_unknown) {
        /* every controller built, as on a kernel with the v1-only ones compiled in */
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], CGMASK_ALL);
        static const char *const v1[] = { "cpuacct", "devices", "freezer", "net_cls", "net_prio" };

        ASSERT_READ(h, "/", "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
        for (size_t k = 0; k < ELEMENTSOF(v1); k++) {
                char buf[64];
                snprintf(buf, sizeof(buf), "+%s", v1[k]);
                WRITE_FAIL(h, "/", "cgroup.subtree_control", buf, EINVAL, REASON_PARSE);
                snprintf(buf, sizeof(buf), "-%s", v1[k]);
                WRITE_FAIL(h, "/", "cgroup.subtree_control", buf, EINVAL, REASON_PARSE);
        }
}
END_TEST

/*
 * Regression (the model once cut long writes): cgroup files use kernfs ops with .atomic_write_len = PAGE_SIZE
 * (kernel/cgroup/cgroup.c:4203 and 4212), so kernfs_fop_write_iter()
 * (fs/kernfs/file.c:318-320) fails a longer write(2) with -E2BIG before any
 * handler.
 */
START_TEST(test_write_longer_than_a_page) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);
        char buf[4097 + 1];

        /* exactly a page: accepted, the trailing spaces are stripped */
        memset(buf, ' ', sizeof(buf));
        memcpy(buf, "+cpu", 4);
        buf[4096] = '\0';
        WRITE_OK(h, "/", "cgroup.subtree_control", buf);
        ASSERT_READ(h, "/", "cgroup.subtree_control", "cpu\n");

        /* one byte more: -E2BIG, even though the first page alone would be valid */
        memset(buf, ' ', sizeof(buf));
        memcpy(buf, "+memory", 7);
        buf[4097] = '\0';
        WRITE_FAIL(h, "/", "cgroup.subtree_control", buf, E2BIG, ANY_REASON);
}
END_TEST

/* ---- the order of the checks after parsing ---- */

typedef struct OrderCase {
        const char *input;
        int err[_RULES_MAX];
        Reason reason[_RULES_MAX];
        const char *after;              /* A's cgroup.subtree_control on success (both rule sets) */
} OrderCase;

/*
 * root: +cpu +memory +pids; A: +cpu +memory; A/B: +cpu. The writes go to A.
 * Stock 6.1 walks the controllers in ssid order and the first failing check
 * decides; patch 003 first refuses any unavailable name (ENOENT), then EBUSY.
 */
static const OrderCase order_cases[] = {
        { "+cpuset -cpu",  { ENOENT, ENOENT }, { REASON_NOT_AVAILABLE, REASON_NOT_AVAILABLE }, NULL },
        { "-cpu +cpuset",  { ENOENT, ENOENT }, { REASON_NOT_AVAILABLE, REASON_NOT_AVAILABLE }, NULL },
        { "-cpu +io",      { EBUSY, ENOENT },  { REASON_CHILD_USES_IT, REASON_NOT_AVAILABLE }, NULL },
        { "+io -cpu",      { EBUSY, ENOENT },  { REASON_CHILD_USES_IT, REASON_NOT_AVAILABLE }, NULL },
        { "-cpu -hugetlb", { EBUSY, ENOENT },  { REASON_CHILD_USES_IT, REASON_NOT_AVAILABLE }, NULL },
        { "-memory +io",   { ENOENT, ENOENT }, { REASON_NOT_AVAILABLE, REASON_NOT_AVAILABLE }, NULL },
        { "-cpu",          { EBUSY, EBUSY },   { REASON_CHILD_USES_IT, REASON_CHILD_USES_IT }, NULL },
        { "-cpu -memory",  { EBUSY, EBUSY },   { REASON_CHILD_USES_IT, REASON_CHILD_USES_IT }, NULL },
        { "+pids -cpu",    { EBUSY, EBUSY },   { REASON_CHILD_USES_IT, REASON_CHILD_USES_IT }, NULL },
        { "-io",           { 0, ENOENT },      { 0, REASON_NOT_AVAILABLE }, "cpu memory\n" },
        { "-hugetlb -pids", { 0, ENOENT },     { 0, REASON_NOT_AVAILABLE }, "cpu memory\n" },
        { "+cpu",          { 0, 0 },           { 0, 0 }, "cpu memory\n" }, /* redundant: no EBUSY */
        { "+pids -memory", { 0, 0 },           { 0, 0 }, "cpu pids\n" },
        { "-memory -pids", { 0, 0 },           { 0, 0 }, "cpu\n" },
        { "+cpu -cpu +cpu", { 0, 0 },          { 0, 0 }, "cpu memory\n" },
        { "#cpu",          { EINVAL, EBUSY },  { REASON_PARSE, REASON_CHILD_USES_IT }, NULL },
        { "#pids",         { EINVAL, 0 },      { REASON_PARSE, 0 }, "cpu memory #pids\n" },
};

START_TEST(test_check_order) {
        const OrderCase *oc = &order_cases[_i / 2];
        RuleSet rules = both_rules[_i % 2];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);

        MKDIR(h, "A");
        MKDIR(h, "A/B");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory +pids");
        WRITE_OK(h, "A", "cgroup.subtree_control", "+cpu +memory");
        WRITE_OK(h, "A/B", "cgroup.subtree_control", "+cpu");

        if (oc->err[rules] == 0) {
                _cleanup_free_ char *before = hdump(h), *after = NULL;
                WRITE_OK(h, "A", "cgroup.subtree_control", oc->input);
                ASSERT_READ(h, "A", "cgroup.subtree_control", oc->after);
                after = hdump(h);
                /* a write that changes nothing must not touch anything */
                if (streq(oc->after, "cpu memory\n"))
                        ck_assert_str_eq(before, after);
        } else
                WRITE_FAIL(h, "A", "cgroup.subtree_control", oc->input, oc->err[rules], oc->reason[rules]);
        hcheck(h);
}
END_TEST

/* Stock: "-x" of a controller that is not enabled is skipped, even when it is not available at all. */
START_TEST(test_stock_disable_not_enabled_is_noop) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(RULES_STOCK, VM);

        MKDIR(h, "A");
        SPAWN(h, "A");
        WRITE_NOOP(h, "A", "cgroup.subtree_control", "-io");
        WRITE_NOOP(h, "A", "cgroup.subtree_control", "-io -memory -cpu -perf_event -debug");
        WRITE_NOOP(h, "/", "cgroup.subtree_control", "-memory");
        /* a no-op never reaches the vetting: A has a process */
        WRITE_OK(h, "/", "cgroup.subtree_control", "+memory");
        WRITE_NOOP(h, "A", "cgroup.subtree_control", "-memory");
}
END_TEST

/* Patch 003's changed rule: '-' of an unavailable controller is ENOENT; of an available, unused one a no-op. */
START_TEST(test_bypass_disable_unavailable_is_enoent) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(RULES_BYPASS, VM);

        MKDIR(h, "A");
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "-io", ENOENT, REASON_NOT_AVAILABLE);
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "-perf_event", ENOENT, REASON_NOT_AVAILABLE);
        WRITE_OK(h, "/", "cgroup.subtree_control", "+io");
        WRITE_NOOP(h, "A", "cgroup.subtree_control", "-io");
        /* a bypassed controller is available below, for '-' too */
        WRITE_OK(h, "/", "cgroup.subtree_control", "#cpu");
        WRITE_NOOP(h, "A", "cgroup.subtree_control", "-cpu");
        WRITE_OK(h, "A", "cgroup.subtree_control", "#cpu");
        WRITE_OK(h, "A", "cgroup.subtree_control", "-cpu");
        ASSERT_READ(h, "A", "cgroup.subtree_control", "");
}
END_TEST

/* ---- EBUSY: a child enables, bypasses or re-enabled the controller ---- */

typedef struct ChildCase {
        const char *root_setup;         /* root's subtree_control */
        const char *child_file;         /* what A writes */
        const char *child_write;
        const char *busy[3];            /* root writes that must fail with EBUSY */
        const char *noop;               /* root write that is redundant: 0, no change */
} ChildCase;

static const ChildCase child_cases[] = {
        { "+cpu", "cgroup.subtree_control", "+cpu", { "-cpu", "#cpu", "-cpu +memory" }, "+cpu" },
        { "+cpu", "cgroup.subtree_control", "#cpu", { "-cpu", "#cpu", "#cpu #memory" }, "+cpu" },
        { "#cpu", "cgroup.controllers",     "+cpu", { "-cpu", "+cpu", "+memory +cpu" }, "#cpu" },
        { "#cpu", "cgroup.subtree_control", "+cpu", { "-cpu", "+cpu", "-cpu" }, "#cpu" },
        { "#cpu", "cgroup.subtree_control", "#cpu", { "-cpu", "+cpu", "-cpu" }, "#cpu" },
};

START_TEST(test_ebusy_child_uses_it) {
        const ChildCase *cc = &child_cases[_i];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(RULES_BYPASS, VM);

        MKDIR(h, "A");
        MKDIR(h, "Z");  /* a sibling that uses nothing */
        WRITE_OK(h, "/", "cgroup.subtree_control", cc->root_setup);
        WRITE_OK(h, "A", cc->child_file, cc->child_write);
        for (size_t k = 0; k < ELEMENTSOF(cc->busy); k++)
                WRITE_FAIL(h, "/", "cgroup.subtree_control", cc->busy[k], EBUSY, REASON_CHILD_USES_IT);
        WRITE_NOOP(h, "/", "cgroup.subtree_control", cc->noop);
        /* other controllers are not held */
        WRITE_OK(h, "/", "cgroup.subtree_control", "+memory");
        WRITE_OK(h, "/", "cgroup.subtree_control", "-memory");
        hcheck(h);
}
END_TEST

START_TEST(test_stock_ebusy_child_enables_it) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(RULES_STOCK, VM);

        MKDIR(h, "A");
        MKDIR(h, "A/B");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory");
        WRITE_OK(h, "A", "cgroup.subtree_control", "+memory");
        WRITE_FAIL(h, "/", "cgroup.subtree_control", "-memory", EBUSY, REASON_CHILD_USES_IT);
        WRITE_FAIL(h, "/", "cgroup.subtree_control", "-cpu -memory", EBUSY, REASON_CHILD_USES_IT);
        WRITE_OK(h, "/", "cgroup.subtree_control", "-cpu");
        /* once the child lets go, the parent may */
        WRITE_OK(h, "A", "cgroup.subtree_control", "-memory");
        WRITE_OK(h, "/", "cgroup.subtree_control", "-memory");
        ASSERT_READ(h, "/", "cgroup.subtree_control", "");
}
END_TEST

/* ---- implicit and dependent controllers ---- */

START_TEST(test_implicit_controllers) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);
        Cgroup *a = MKDIR(h, "A");

        /*
         * perf_event and debug (cgroup_debug) are never listed; they reach the
         * children only once the root has propagated (its first change)
         */
        ASSERT_MASK(cgroup_get_subtree_ss_mask(hierarchy_root(h)), 0);
        ASSERT_MASK(cgroup_get_css_mask(h, a), 0);
        hierarchy_settle_root(h);
        ASSERT_MASK(cgroup_get_subtree_ss_mask(hierarchy_root(h)), M(PERF_EVENT) | M(DEBUG));
        ASSERT_MASK(cgroup_get_css_mask(h, a), M(PERF_EVENT) | M(DEBUG));
        ASSERT_READ(h, "/", "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
        ASSERT_READ(h, "A", "cgroup.controllers", "");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu");
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+perf_event", ENOENT, REASON_NOT_AVAILABLE);
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+debug", ENOENT, REASON_NOT_AVAILABLE);
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+cpu +debug", ENOENT, REASON_NOT_AVAILABLE);
        ASSERT_READ(h, "A", "cgroup.controllers", "cpu\n");
        ASSERT_MASK(cgroup_get_css_mask(h, a), M(CPU) | M(PERF_EVENT) | M(DEBUG));
        ASSERT_MASK(cgroup_get_subtree_ss_mask(a), M(PERF_EVENT) | M(DEBUG));
}
END_TEST

START_TEST(test_io_pulls_in_memory) {
        RuleSet rules = both_rules[_i];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);
        Cgroup *root = hierarchy_root(h), *a = MKDIR(h, "A");
        const char *tail = rules == RULES_BYPASS ? "subtree_bypass   : \nenable_ss_mask   : \n" : "";
        char expected[512];

        WRITE_OK(h, "/", "cgroup.subtree_control", "+io");
        /* kernel: cgroup_calc_subtree_ss_mask() closes over io's depends_on */
        ASSERT_MASK(cgroup_get_subtree_control(root), M(IO));
        ASSERT_MASK(cgroup_get_subtree_ss_mask(root), M(IO) | M(MEMORY) | M(PERF_EVENT) | M(DEBUG));
        ASSERT_MASK(cgroup_get_css_mask(h, a), M(IO) | M(MEMORY) | M(PERF_EVENT) | M(DEBUG));
        /* ... but memory is not visibly enabled on A */
        ASSERT_MASK(cgroup_get_controllers(h, a), M(IO));
        ASSERT_READ(h, "A", "cgroup.controllers", "io\n");
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+memory", ENOENT, REASON_NOT_AVAILABLE);
        snprintf(expected, sizeof(expected),
                 "subtree_control  : io\nsubtree_ss_mask  : io, memory, perf_event, debug\n%s", tail);
        ASSERT_READ(h, "/", "debug.masks", expected);

        /* A passes io on: its children get memory as well */
        WRITE_OK(h, "A", "cgroup.subtree_control", "+io");
        ASSERT_MASK(cgroup_get_subtree_ss_mask(a), M(IO) | M(MEMORY) | M(PERF_EVENT) | M(DEBUG));
        WRITE_OK(h, "A", "cgroup.subtree_control", "-io");

        /* enabling memory explicitly and dropping it again keeps it pulled in */
        WRITE_OK(h, "/", "cgroup.subtree_control", "+memory");
        WRITE_OK(h, "/", "cgroup.subtree_control", "-memory");
        ASSERT_MASK(cgroup_get_subtree_ss_mask(root), M(IO) | M(MEMORY) | M(PERF_EVENT) | M(DEBUG));
        WRITE_OK(h, "/", "cgroup.subtree_control", "-io");
        ASSERT_MASK(cgroup_get_subtree_ss_mask(root), M(PERF_EVENT) | M(DEBUG));
        ASSERT_MASK(cgroup_get_css_mask(h, a), M(PERF_EVENT) | M(DEBUG));
        snprintf(expected, sizeof(expected),
                 "subtree_control  : \nsubtree_ss_mask  : perf_event, debug\n%s", tail);
        ASSERT_READ(h, "/", "debug.masks", expected);
        hcheck(h);
}
END_TEST

/* ---- cgroup_vet_subtree_control_enable() ---- */

START_TEST(test_vet_domain_controller_with_processes) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);

        MKDIR(h, "A");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory +io +pids");
        SPAWN(h, "A");
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+memory", EBUSY, REASON_HAS_PROCESSES);
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+io", EBUSY, REASON_HAS_PROCESSES);
        /* one domain controller in the set is enough */
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+cpu +memory", EBUSY, REASON_HAS_PROCESSES);
        ck_assert_int_eq(cgroup_get_type(h, cg(h, "A")), CGROUP_TYPE_DOMAIN);
}
END_TEST

START_TEST(test_vet_threaded_controllers_when_can_be_thread_root) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);

        MKDIR(h, "A");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory +pids +cpuset");
        SPAWN(h, "A");
        /* threaded controllers handle internal competition: A becomes a thread root */
        WRITE_OK(h, "A", "cgroup.subtree_control", "+cpu");
        ASSERT_READ(h, "A", "cgroup.type", "domain threaded\n");
        WRITE_OK(h, "A", "cgroup.subtree_control", "+pids +cpuset");
        /* now a domain controller is refused as inside a thread subtree, not as busy */
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+memory", EOPNOTSUPP, REASON_THREAD_SUBTREE);
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "-cpu +memory", EOPNOTSUPP, REASON_THREAD_SUBTREE);
        WRITE_OK(h, "A", "cgroup.subtree_control", "-cpu -pids -cpuset");
        ASSERT_READ(h, "A", "cgroup.type", "domain\n");
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+memory", EBUSY, REASON_HAS_PROCESSES);
}
END_TEST

START_TEST(test_vet_cannot_be_thread_root) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);

        MKDIR(h, "A");
        MKDIR(h, "A/B");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory");
        SPAWN(h, "A");
        SPAWN(h, "A/B");
        /* a populated domain child: A can't become a thread root, so A's own process makes it busy */
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+cpu", EBUSY, REASON_HAS_PROCESSES);
}
END_TEST

START_TEST(test_vet_thread_root_without_processes) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(both_rules[_i], VM);

        MKDIR(h, "A");
        MKDIR(h, "A/T");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory");
        WRITE_OK(h, "A/T", "cgroup.type", "threaded");
        ASSERT_READ(h, "A", "cgroup.type", "domain threaded\n");
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+memory", EOPNOTSUPP, REASON_THREAD_SUBTREE);
        WRITE_OK(h, "A", "cgroup.subtree_control", "+cpu");
        /* a threaded cgroup: memory is not even available to it */
        WRITE_FAIL(h, "A/T", "cgroup.subtree_control", "+memory", ENOENT, REASON_NOT_AVAILABLE);
        WRITE_OK(h, "A/T", "cgroup.subtree_control", "+cpu");
}
END_TEST

START_TEST(test_vet_invalid_domain) {
        RuleSet rules = both_rules[_i];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);

        MKDIR(h, "A");
        MKDIR(h, "A/T");
        MKDIR(h, "A/X");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu");
        WRITE_OK(h, "A/T", "cgroup.type", "threaded");
        WRITE_OK(h, "A", "cgroup.subtree_control", "+cpu");
        ASSERT_READ(h, "A/X", "cgroup.type", "domain invalid\n");
        ASSERT_READ(h, "A/X", "cgroup.controllers", "cpu\n");
        WRITE_FAIL(h, "A/X", "cgroup.subtree_control", "+cpu", EOPNOTSUPP, REASON_INVALID_DOMAIN);
        if (rules == RULES_BYPASS) {
                WRITE_FAIL(h, "A/X", "cgroup.subtree_control", "#cpu", EOPNOTSUPP, REASON_INVALID_DOMAIN);
                /* '-' only: nothing to vet, nothing to do */
                WRITE_NOOP(h, "A/X", "cgroup.subtree_control", "-cpu");
        }
}
END_TEST

/* Decision (a): '#' is vetted like '+'. */
START_TEST(test_decision_a_bypass_vetted_like_enable) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(RULES_BYPASS, VM);

        MKDIR(h, "A");
        MKDIR(h, "B");
        MKDIR(h, "B/T");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory");
        SPAWN(h, "A");
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "#memory", EBUSY, REASON_HAS_PROCESSES);
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "#cpu #memory", EBUSY, REASON_HAS_PROCESSES);
        /* bypassing a threaded controller makes A a thread root, like enabling it */
        WRITE_OK(h, "A", "cgroup.subtree_control", "#cpu");
        ASSERT_READ(h, "A", "cgroup.type", "domain threaded\n");
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "#memory", EOPNOTSUPP, REASON_THREAD_SUBTREE);

        /* inside a thread subtree */
        WRITE_OK(h, "B/T", "cgroup.type", "threaded");
        WRITE_FAIL(h, "B", "cgroup.subtree_control", "#memory", EOPNOTSUPP, REASON_THREAD_SUBTREE);
        WRITE_OK(h, "B", "cgroup.subtree_control", "#cpu");
        /* no internal processes: A bypasses a domain controller only once empty */
        ck_assert_int_eq(hierarchy_kill(h, 1), 0);
        WRITE_OK(h, "A", "cgroup.subtree_control", "#memory");
        ASSERT_READ(h, "A", "cgroup.subtree_control", "#cpu #memory\n");
        ASSERT_FAIL(h, EBUSY, REASON_HAS_PROCESSES, hierarchy_spawn(h, cg(h, "A"), NULL, &rsn));
        hcheck(h);
}
END_TEST

START_TEST(test_root_is_mixable) {
        RuleSet rules = both_rules[_i];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);

        MKDIR(h, "T");
        MKDIR(h, "D");
        SPAWN(h, "/");
        WRITE_OK(h, "T", "cgroup.type", "threaded");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+memory +cpu");
        if (rules == RULES_BYPASS)
                WRITE_OK(h, "/", "cgroup.subtree_control", "#io #pids");
        SPAWN(h, "/");
        SPAWN(h, "T");
        ASSERT_READ(h, "T", "cgroup.controllers", rules == RULES_BYPASS ? "cpu #pids\n" : "cpu\n");
        ASSERT_READ(h, "D", "cgroup.controllers",
                    rules == RULES_BYPASS ? "cpu #io memory #pids\n" : "cpu memory\n");
        hcheck(h);
}
END_TEST

/* A failed vetting changes nothing even when other tokens of the write were fine. */
START_TEST(test_all_or_nothing_after_parse) {
        RuleSet rules = both_rules[_i];
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);

        MKDIR(h, "A");
        MKDIR(h, "A/B");
        MKDIR(h, "A/C");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+cpu +memory +pids");
        WRITE_OK(h, "A", "cgroup.subtree_control", "+pids +memory");
        WRITE_OK(h, "A/C", "cgroup.subtree_control", "+pids");
        SPAWN(h, "A/B");
        /* pids alone would pass (B can become a thread root); memory makes the whole write fail */
        WRITE_FAIL(h, "A/B", "cgroup.subtree_control", "+pids +memory", EBUSY, REASON_HAS_PROCESSES);
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+cpu -pids", EBUSY, REASON_CHILD_USES_IT);
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+cpu +io", ENOENT, REASON_NOT_AVAILABLE);
        ASSERT_READ(h, "A", "cgroup.subtree_control", "memory pids\n");
        ASSERT_READ(h, "A/B", "cgroup.subtree_control", "");
        WRITE_OK(h, "A/B", "cgroup.subtree_control", "+pids");
}
END_TEST

static Suite *control_suite(void) {
        Suite *s = suite_create("model-control");

        CHECK_TCASE(s, "parse", NULL, NULL, { test_parse, 2 * ELEMENTSOF(parse_cases) },
                    { test_parse_minus_unavailable, 2 * ELEMENTSOF(parse_cases_minus) }, { test_parse_at_child },
                    { test_empty_write }, { test_not_built_in, 2 }, { test_v1_only_are_unknown, 2 },
                    { test_write_longer_than_a_page, 2 });
        CHECK_TCASE(s, "order", NULL, NULL, { test_check_order, 2 * ELEMENTSOF(order_cases) },
                    { test_stock_disable_not_enabled_is_noop }, { test_bypass_disable_unavailable_is_enoent },
                    { test_ebusy_child_uses_it, ELEMENTSOF(child_cases) }, { test_stock_ebusy_child_enables_it },
                    { test_all_or_nothing_after_parse, 2 });
        CHECK_TCASE(s, "masks", NULL, NULL, { test_implicit_controllers, 2 }, { test_io_pulls_in_memory, 2 });
        CHECK_TCASE(s, "vet", NULL, NULL, { test_vet_domain_controller_with_processes, 2 },
                    { test_vet_threaded_controllers_when_can_be_thread_root, 2 }, { test_vet_cannot_be_thread_root, 2 },
                    { test_vet_thread_root_without_processes, 2 }, { test_vet_invalid_domain, 2 },
                    { test_decision_a_bypass_vetted_like_enable }, { test_root_is_mixable, 2 });
        return s;
}

int main(void) {
        return check_run(control_suite());
}
