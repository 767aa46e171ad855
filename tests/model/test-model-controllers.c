/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The series' writable cgroup.controllers (patch 004: cgroup_controllers_write(),
 * with decisions (c) and (d)), and how cgroup.controllers reads with '#'.
 */
#include "model-test.h"

/* root: "#cpu #memory +pids"; A and A/B below it; Z a sibling of A */
static Hierarchy *h;

static void setup(void) {
        h = hnew(RULES_BYPASS, VM);
        MKDIR(h, "A");
        MKDIR(h, "A/B");
        MKDIR(h, "Z");
        WRITE_OK(h, "/", "cgroup.subtree_control", "#cpu #memory +pids");
}

static void teardown(void) {
        h = hierarchy_free(h);
}

#define CTL(path, buf) cgroup_write_controllers(h, cg(h, path), (buf), &rsn)

START_TEST(test_root_einval) {
        WRITE_FAIL(h, "/", "cgroup.controllers", "+cpu", EINVAL, REASON_ROOT);
        WRITE_FAIL(h, "/", "cgroup.controllers", "#cpu", EINVAL, REASON_ROOT);
        WRITE_FAIL(h, "/", "cgroup.controllers", "+io", EINVAL, REASON_ROOT);
        /* whitespace is a write: it reaches the handler, which refuses the root */
        WRITE_FAIL(h, "/", "cgroup.controllers", " ", EINVAL, REASON_ROOT);
        WRITE_FAIL(h, "/", "cgroup.controllers", "\n", EINVAL, REASON_ROOT);
        /* parsing comes first */
        WRITE_FAIL(h, "/", "cgroup.controllers", "-cpu", EINVAL, REASON_PARSE);
        WRITE_FAIL(h, "/", "cgroup.controllers", "+bogus", EINVAL, REASON_PARSE);
        /* an empty write never reaches it */
        WRITE_NOOP(h, "/", "cgroup.controllers", "");
        ck_assert(cgroup_file_writable(h, hierarchy_root(h), "cgroup.controllers"));
}
END_TEST

START_TEST(test_parent_must_bypass) {
        /* root enables pids, does not bypass it */
        WRITE_FAIL(h, "A", "cgroup.controllers", "+pids", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        WRITE_FAIL(h, "A", "cgroup.controllers", "#pids", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        /* root has io neither way */
        WRITE_FAIL(h, "A", "cgroup.controllers", "+io", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        /* implicit controllers are never bypassed */
        WRITE_FAIL(h, "A", "cgroup.controllers", "+perf_event", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        /* the grandparent's bypass does not count */
        WRITE_FAIL(h, "A/B", "cgroup.controllers", "+cpu", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        /* all or nothing */
        WRITE_FAIL(h, "A", "cgroup.controllers", "+cpu +io", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        WRITE_FAIL(h, "A", "cgroup.controllers", "+memory #pids +cpu", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        /* ENOENT comes before the no-op test: "#io" would change nothing */
        WRITE_FAIL(h, "A", "cgroup.controllers", "#io", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        /* once A bypasses cpu, A/B may */
        WRITE_OK(h, "A", "cgroup.subtree_control", "#cpu");
        WRITE_OK(h, "A/B", "cgroup.controllers", "+cpu");
}
END_TEST

START_TEST(test_parse) {
        /* '-' is not a prefix of cgroup.controllers, even for a bypassed controller */
        WRITE_FAIL(h, "A", "cgroup.controllers", "-cpu", EINVAL, REASON_PARSE);
        WRITE_FAIL(h, "A", "cgroup.controllers", "+cpu -cpu", EINVAL, REASON_PARSE);
        WRITE_FAIL(h, "A", "cgroup.controllers", "cpu", EINVAL, REASON_PARSE);
        WRITE_FAIL(h, "A", "cgroup.controllers", "+cpu\t#memory", EINVAL, REASON_PARSE);
        WRITE_FAIL(h, "A", "cgroup.controllers", "+cpu +cpuacct", EINVAL, REASON_PARSE);
        WRITE_FAIL(h, "A", "cgroup.controllers", "+cpu +bogus", EINVAL, REASON_PARSE);
        /* parse errors come before the ENOENT of a controller not bypassed */
        WRITE_FAIL(h, "A", "cgroup.controllers", "+io -io", EINVAL, REASON_PARSE);
        /* strstrip() and empty tokens as in cgroup.subtree_control */
        WRITE_OK(h, "A", "cgroup.controllers", " \t+cpu   +memory \n");
        ASSERT_READ(h, "A", "cgroup.controllers", "cpu memory pids\n");
}
END_TEST

START_TEST(test_ebusy_own_subtree_names_it) {
        /* A may enable or bypass what root bypasses in its own subtree_control ... */
        WRITE_OK(h, "A", "cgroup.subtree_control", "+cpu #memory");
        /* ... and then cannot change the controller's state in cgroup.controllers */
        WRITE_FAIL(h, "A", "cgroup.controllers", "+cpu", EBUSY, REASON_OWN_SUBTREE_USES_IT);
        WRITE_FAIL(h, "A", "cgroup.controllers", "+memory", EBUSY, REASON_OWN_SUBTREE_USES_IT);
        WRITE_FAIL(h, "A", "cgroup.controllers", "+memory +cpu", EBUSY, REASON_OWN_SUBTREE_USES_IT);
        /* "#cpu" is redundant (not re-enabled) and stripped before the EBUSY test */
        WRITE_NOOP(h, "A", "cgroup.controllers", "#cpu #memory");
        WRITE_OK(h, "A", "cgroup.subtree_control", "-cpu -memory");
        WRITE_OK(h, "A", "cgroup.controllers", "+cpu +memory");

        /* re-enabled first, then named in subtree_control: '#' is now busy */
        WRITE_OK(h, "A", "cgroup.subtree_control", "+cpu #memory");
        WRITE_FAIL(h, "A", "cgroup.controllers", "#cpu", EBUSY, REASON_OWN_SUBTREE_USES_IT);
        WRITE_FAIL(h, "A", "cgroup.controllers", "#memory", EBUSY, REASON_OWN_SUBTREE_USES_IT);
        WRITE_NOOP(h, "A", "cgroup.controllers", "+cpu +memory");
        hcheck(h);
}
END_TEST

START_TEST(test_hash_back_to_bypass) {
        _cleanup_free_ char *initial = hdump(h), *back = NULL;

        ASSERT_READ(h, "A", "cgroup.controllers", "#cpu #memory pids\n");
        WRITE_OK(h, "A", "cgroup.controllers", "+cpu");
        ASSERT_READ(h, "A", "cgroup.controllers", "cpu #memory pids\n");
        ASSERT_MASK(cgroup_get_enable_ss_mask(cg(h, "A")), M(CPU));
        ASSERT_MASK(cgroup_get_controllers(h, cg(h, "A")), M(CPU) | M(PIDS));
        ASSERT_MASK(cgroup_get_bypassed(h, cg(h, "A")), M(MEMORY));
        WRITE_OK(h, "A", "cgroup.controllers", "#cpu");
        ASSERT_READ(h, "A", "cgroup.controllers", "#cpu #memory pids\n");
        ASSERT_MASK(cgroup_get_enable_ss_mask(cg(h, "A")), 0);
        /* back to bypass is exactly the state before */
        back = hdump(h);
        ck_assert_str_eq(initial, back);
}
END_TEST

START_TEST(test_noop) {
        /* '#' of a controller that is not re-enabled */
        WRITE_NOOP(h, "A", "cgroup.controllers", "#cpu");
        WRITE_NOOP(h, "A", "cgroup.controllers", "#cpu #memory");
        /* last token wins */
        WRITE_NOOP(h, "A", "cgroup.controllers", "+cpu #cpu");
        WRITE_OK(h, "A", "cgroup.controllers", "#cpu +cpu");
        /* '+' of a re-enabled controller */
        WRITE_NOOP(h, "A", "cgroup.controllers", "+cpu");
        /* no tokens */
        WRITE_NOOP(h, "A", "cgroup.controllers", " ");
        WRITE_NOOP(h, "A", "cgroup.controllers", "");
        ASSERT_NOOP(h, CTL("A", ""));
}
END_TEST

/*
 * Stock 6.1: cgroup.controllers is 0444 and has no write handler. cgroupfs
 * checks no mode at open (no KERNFS_ROOT_EXTRA_OPEN_PERM_CHECK) and root has
 * CAP_DAC_OVERRIDE, so cgroup_file_write() runs: 0 for an empty write, else
 * no ->write: -EINVAL (kernel/cgroup/cgroup.c:4115, 4152).
 */
START_TEST(test_stock_no_write_handler) {
        _cleanup_(hierarchy_freep) Hierarchy *s = hnew(RULES_STOCK, VM);

        MKDIR(s, "A");
        WRITE_OK(s, "/", "cgroup.subtree_control", "+cpu");
        ck_assert(!cgroup_file_writable(s, cg(s, "A"), "cgroup.controllers"));
        ck_assert(!cgroup_file_writable(s, hierarchy_root(s), "cgroup.controllers"));
        ck_assert(cgroup_has_file(s, cg(s, "A"), "cgroup.controllers"));
        WRITE_FAIL(s, "A", "cgroup.controllers", "+cpu", EINVAL, REASON_READ_ONLY);
        WRITE_FAIL(s, "/", "cgroup.controllers", "+cpu", EINVAL, REASON_READ_ONLY);
        WRITE_FAIL(s, "A", "cgroup.controllers", "-bogus", EINVAL, REASON_READ_ONLY);
        WRITE_FAIL(s, "A", "cgroup.controllers", " ", EINVAL, REASON_READ_ONLY);
        /* the empty-write shortcut of cgroup_file_write() comes first */
        WRITE_NOOP(s, "A", "cgroup.controllers", "");
        ASSERT_FAIL(s, EINVAL, REASON_READ_ONLY, cgroup_write_controllers(s, cg(s, "A"), "+cpu", &rsn));
        /* other read-only files fail the same way, under both rule sets */
        WRITE_FAIL(s, "A", "cgroup.events", "x", EINVAL, REASON_READ_ONLY);
        WRITE_FAIL(h, "A", "cgroup.events", "x", EINVAL, REASON_READ_ONLY);
        WRITE_NOOP(h, "A", "cgroup.events", "");
        ck_assert(cgroup_file_writable(h, cg(h, "A"), "cgroup.controllers"));
}
END_TEST

/* Decision (d): a threaded cgroup shows and accepts only threaded controllers in the bypass part. */
START_TEST(test_decision_d_threaded_child_of_root) {
        MKDIR(h, "T");
        WRITE_OK(h, "T", "cgroup.type", "threaded");
        ASSERT_READ(h, "T", "cgroup.controllers", "#cpu pids\n");
        ASSERT_MASK(cgroup_get_bypassed(h, cg(h, "T")), M(CPU));
        ASSERT_READ(h, "Z", "cgroup.controllers", "#cpu #memory pids\n");
        WRITE_FAIL(h, "T", "cgroup.controllers", "+memory", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        WRITE_FAIL(h, "T", "cgroup.controllers", "#memory", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        WRITE_FAIL(h, "T", "cgroup.controllers", "+cpu +memory", ENOENT, REASON_NOT_BYPASSED_BY_PARENT);
        WRITE_OK(h, "T", "cgroup.controllers", "+cpu");
        ASSERT_READ(h, "T", "cgroup.controllers", "cpu pids\n");
        ASSERT_MASK(cgroup_get_css_mask(h, cg(h, "T")), M(CPU) | M(PIDS) | M(PERF_EVENT) | M(DEBUG));
        hcheck(h);
}
END_TEST

START_TEST(test_css_appears_in_reenabled_child) {
        Cgroup *root = hierarchy_root(h), *a = cg(h, "A"), *b = cg(h, "A/B"), *z = cg(h, "Z");
        _cleanup_free_ char *tree = NULL;

        /* bypassed: no css of its own, the processes use the root's */
        ck_assert(!(cgroup_get_css_mask(h, a) & M(CPU)));
        ck_assert_ptr_eq(cgroup_effective_css_owner(h, a, CONTROLLER_CPU), root);
        ck_assert_ptr_eq(cgroup_effective_css_owner(h, b, CONTROLLER_CPU), root);
        ASSERT_HAS_FILE(h, "A", "cpu.weight", false);

        WRITE_OK(h, "A", "cgroup.controllers", "+cpu");
        ASSERT_MASK(cgroup_get_css_mask(h, a), M(CPU) | M(PIDS) | M(PERF_EVENT) | M(DEBUG));
        ck_assert_ptr_eq(cgroup_effective_css_owner(h, a, CONTROLLER_CPU), a);
        ck_assert_ptr_eq(cgroup_effective_css_owner(h, b, CONTROLLER_CPU), a);
        ck_assert_ptr_eq(cgroup_effective_css_owner(h, z, CONTROLLER_CPU), root);
        ck_assert_ptr_eq(cgroup_effective_css_owner(h, a, CONTROLLER_MEMORY), root);
        /* the interface files belong to A itself now */
        ASSERT_HAS_FILE(h, "A", "cpu.weight", true);
        ASSERT_HAS_FILE(h, "A/B", "cpu.weight", false);
        ASSERT_HAS_FILE(h, "Z", "cpu.weight", false);
        ck_assert_int_eq(hierarchy_effective_tree(h, CONTROLLER_CPU, &tree), 0);
        ck_assert_str_eq(tree, "/|/Z\n  /A|/A/B\n");

        WRITE_OK(h, "A", "cgroup.controllers", "#cpu");
        ck_assert(!(cgroup_get_css_mask(h, a) & M(CPU)));
        ck_assert_ptr_eq(cgroup_effective_css_owner(h, b, CONTROLLER_CPU), root);
        ASSERT_HAS_FILE(h, "A", "cpu.weight", false);
        hcheck(h);
}
END_TEST

/* Nothing vets a re-enable: the processes stay in the cgroup's own css. */
START_TEST(test_reenable_with_processes) {
        ProcId p = SPAWN(h, "A");

        WRITE_OK(h, "A", "cgroup.controllers", "+memory");
        ck_assert_ptr_eq(hierarchy_proc_cgroup(h, p), cg(h, "A"));
        ck_assert_ptr_eq(cgroup_effective_css_owner(h, cg(h, "A"), CONTROLLER_MEMORY), cg(h, "A"));
        /* but A cannot hand memory down while it has processes */
        WRITE_FAIL(h, "A", "cgroup.subtree_control", "+memory", EBUSY, REASON_HAS_PROCESSES);
        hcheck(h);
}
END_TEST

START_TEST(test_reads_with_hash) {
        ASSERT_READ(h, "/", "cgroup.subtree_control", "#cpu #memory pids\n");
        ASSERT_READ(h, "/", "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
        ASSERT_READ(h, "A", "cgroup.controllers", "#cpu #memory pids\n");
        ASSERT_READ(h, "A/B", "cgroup.controllers", "");
        WRITE_OK(h, "A", "cgroup.subtree_control", "#cpu +pids");
        ASSERT_READ(h, "A", "cgroup.subtree_control", "#cpu pids\n");
        ASSERT_READ(h, "A/B", "cgroup.controllers", "#cpu pids\n");
        WRITE_OK(h, "A", "cgroup.controllers", "+memory");
        ASSERT_READ(h, "A", "cgroup.controllers", "#cpu memory pids\n");
        /* debug.masks: four lines with the series */
        ASSERT_READ(h, "A", "debug.masks",
                    "subtree_control  : pids\n"
                    "subtree_ss_mask  : perf_event, pids, debug\n"
                    "subtree_bypass   : cpu\n"
                    "enable_ss_mask   : memory\n");
        ASSERT_READ(h, "/", "debug.masks",
                    "subtree_control  : pids\n"
                    "subtree_ss_mask  : perf_event, pids, debug\n"
                    "subtree_bypass   : cpu, memory\n"
                    "enable_ss_mask   : \n");
}
END_TEST

/*
 * A bypassed controller keeps the parent from changing it while a child has
 * re-enabled it; that also holds for the root's "-x" and "+x".
 */
START_TEST(test_parent_held_by_reenable) {
        WRITE_OK(h, "A", "cgroup.controllers", "+memory");
        WRITE_FAIL(h, "/", "cgroup.subtree_control", "-memory", EBUSY, REASON_CHILD_USES_IT);
        WRITE_FAIL(h, "/", "cgroup.subtree_control", "+memory", EBUSY, REASON_CHILD_USES_IT);
        WRITE_OK(h, "/", "cgroup.subtree_control", "-cpu");
        ASSERT_READ(h, "A", "cgroup.controllers", "memory pids\n");
        WRITE_OK(h, "A", "cgroup.controllers", "#memory");
        WRITE_OK(h, "/", "cgroup.subtree_control", "+memory");
        ASSERT_READ(h, "A", "cgroup.controllers", "memory pids\n");
        ASSERT_MASK(cgroup_get_enable_ss_mask(cg(h, "A")), 0);
}
END_TEST

/*
 * Regression, decision (c): a cgroup.controllers write returns the error of
 * cgroup_apply_control(). Re-enabling cpu in A makes A's cpu css visible, and
 * cgroup_apply_control_enable() -> css_populate_dir() -> cgroup_addrm_files()
 * -> cgroup_add_file() (kernel/cgroup/cgroup.c:3291, 1794, 4314, 4254) fails
 * with -EEXIST in kernfs_link_sibling() (fs/kernfs/dir.c:381): A already has
 * a child directory "cpu.weight" (made while the file did not exist). The
 * port (kernel/patches/0007) returns it after cgroup_finalize_control() has
 * restored the masks.
 */
START_TEST(test_decision_c_apply_error_eexist) {
        MKDIR(h, "A/cpu.weight");
        WRITE_FAIL(h, "A", "cgroup.controllers", "+cpu", EEXIST, ANY_REASON);
        /* pids files are not affected: a different name */
        WRITE_OK(h, "A", "cgroup.controllers", "+memory");
}
END_TEST

/*
 * Decision (b), re-enable part: a cgroup that re-enabled a domain controller
 * cannot become threaded (it would keep an enable_ss_mask bit it can neither
 * use nor drop, holding the parent's state with EBUSY).
 */
START_TEST(test_decision_b_reenabled_domain_controller) {
        MKDIR(h, "G");
        WRITE_OK(h, "G", "cgroup.controllers", "+memory");
        WRITE_FAIL(h, "G", "cgroup.type", "threaded", EOPNOTSUPP, REASON_CANNOT_BE_THREADED);
        WRITE_OK(h, "G", "cgroup.controllers", "#memory +cpu");
        /* a re-enabled threaded controller does not count */
        WRITE_OK(h, "G", "cgroup.type", "threaded");
        ASSERT_READ(h, "G", "cgroup.controllers", "cpu pids\n");
        WRITE_OK(h, "G", "cgroup.controllers", "#cpu");
        ASSERT_READ(h, "G", "cgroup.controllers", "#cpu pids\n");
        WRITE_OK(h, "/", "cgroup.subtree_control", "-memory");
        hcheck(h);
}
END_TEST

/* Decision (f): cgroup_ss_mask() adds enable_ss_mask without depends_on: io re-enabled alone. */
START_TEST(test_reenable_does_not_pull_dependencies) {
        WRITE_OK(h, "/", "cgroup.subtree_control", "#io");
        WRITE_OK(h, "A", "cgroup.controllers", "+io");
        ASSERT_MASK(cgroup_get_css_mask(h, cg(h, "A")), M(IO) | M(PIDS) | M(PERF_EVENT) | M(DEBUG));
        ck_assert_ptr_eq(cgroup_effective_css_owner(h, cg(h, "A"), CONTROLLER_MEMORY), hierarchy_root(h));
        /* A's own subtree_control +io does pull memory in for A's children */
        WRITE_OK(h, "A", "cgroup.controllers", "#io");
        WRITE_OK(h, "A", "cgroup.subtree_control", "+io");
        ASSERT_MASK(cgroup_get_subtree_ss_mask(cg(h, "A")), M(IO) | M(MEMORY) | M(PERF_EVENT) | M(DEBUG));
        hcheck(h);
}
END_TEST

static Suite *controllers_suite(void) {
        return CHECK_SUITE("model-controllers", "controllers", setup, teardown, test_root_einval,
                           test_parent_must_bypass, test_parse, test_ebusy_own_subtree_names_it,
                           test_hash_back_to_bypass, test_noop, test_stock_no_write_handler,
                           test_decision_d_threaded_child_of_root, test_css_appears_in_reenabled_child,
                           test_reenable_with_processes, test_reads_with_hash, test_parent_held_by_reenable,
                           test_decision_c_apply_error_eexist, test_decision_b_reenabled_domain_controller,
                           test_reenable_does_not_pull_dependencies);
}

int main(void) {
        return check_run(controllers_suite());
}
