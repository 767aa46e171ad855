/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The native backend on a kernel with the bypass series (the project's VM
 * kernel; see tests/backend/vm-backend.sh): the seeds' documentation example
 * through backend_*() calls, checked in the kernel's own files, and the
 * model in step with the kernel (no disagreement, reload gives the same
 * model). Skips where the kernel has no bypass mode.
 *
 * Environment: CGB_TEST_CGROUP2 (default /sys/fs/cgroup, the mount's root).
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../../src/lib/backend/backend-internal.h"
#include "../check-run.h"
#include "backend-test.h"
#include "cgbypass/policy.h"

static const char *mnt;
static char *state;
static unsigned disagreements;

static void on_disagreement(const char *op, int kernel_result, int model_result, void *userdata) {
        fprintf(stderr, "# DISAGREEMENT: '%s': kernel %d, model %d\n", op, kernel_result, model_result);
        disagreements++;
}

static char *kpath(const char *rel, const char *file) {
        return test_strdupf("%s/%s/%s", mnt, rel, file);
}

static void kassert(const char *rel, const char *file, const char *want) {
        _cleanup_free_ char *p = kpath(rel, file), *s = test_read_file(p);
        ck_assert_msg(s, "read %s: %m", p);
        ck_assert_msg(streq(s, want), "kernel %s/%s: '%s', want '%s'", rel, file, s, want);
}

static bool kexists(const char *rel, const char *file) {
        _cleanup_free_ char *p = kpath(rel, file);
        return access(p, F_OK) == 0;
}

static void setup(void) {
        char t[] = "/tmp/cgb-native-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(t));
        state = strdup(t);
        disagreements = 0;
}

static void teardown(void) {
        test_rm_rf(state);
        free(state);
}

static Backend *open_native(void) {
        Backend *b = test_backend_open(BACKEND_AUTO, mnt, state);

        ck_assert_int_eq(backend_get_type(b), BACKEND_NATIVE);
        backend_set_disagreement_handler(b, on_disagreement, NULL);
        return b;
}

static void ok(int r) {
        ck_assert_int_eq(r, 0);
}

/* the end of a test: rmdir of the NULL-terminated @dirs in turn, @root_sc at the root, and no disagreement */
static void clean_up(Backend *b, const char *root_sc, const char *const *dirs) {
        for (; *dirs; dirs++)
                ok(backend_rmdir(b, *dirs, NULL));
        ok(backend_write(b, ".", "cgroup.subtree_control", root_sc, NULL));
        ck_assert_uint_eq(disagreements, 0);
}
#define CLEAN_UP(b, root_sc, ...) clean_up((b), (root_sc), (const char *const[]) { __VA_ARGS__, NULL })

static void check_reload(Backend *b) {
        _cleanup_free_ char *dump = test_dump(backend_get_model(b)), *dump2 = NULL, *msg = NULL;
        int r = backend_refresh(b, &msg);
        ck_assert_msg(r == 0, "refresh: %d %s", r, strempty(msg));
        dump2 = test_dump(backend_get_model(b));
        /* the model kept in step equals the model loaded from the kernel */
        ck_assert_str_eq(dump, dump2);
}

/* every cgroup has exactly the cpu knobs the model says */
static void check_cpu_knobs(Backend *b) {
        const Hierarchy *h = backend_get_model(b);
        Cgroup *a;

        ck_assert_int_eq(hierarchy_lookup(h, "A", &a), 0);
        for (Cgroup *c = a; c; c = cgroup_next_descendant_pre(c, a)) {
                _cleanup_free_ char *rel = test_relpath(c);
                ck_assert_msg(cgroup_has_file(h, c, "cpu.weight") == kexists(rel, "cpu.weight"),
                              "%s: cpu.weight model %d kernel %d", rel, cgroup_has_file(h, c, "cpu.weight"),
                              kexists(rel, "cpu.weight"));
        }
}

START_TEST(test_documentation_example) {
        static const char *const dirs[] = { "A", "A/B", "A/B/C", "A/B/C/D", "A/B/C/D/E", "A/B/C/D/E/F", "A/B/G" };
        _cleanup_(backend_freep) Backend *b = open_native();
        Reason reason = REASON_NONE;

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                ok(backend_mkdir(b, dirs[i], NULL));
        ok(backend_write(b, ".", "cgroup.subtree_control", "+cpu", NULL));
        ok(backend_write(b, "A", "cgroup.subtree_control", "#cpu", NULL));
        ok(backend_write(b, "A/B", "cgroup.subtree_control", "#cpu", NULL));
        ok(backend_write(b, "A/B/C", "cgroup.subtree_control", "#cpu", NULL));
        ok(backend_write(b, "A/B/C/D", "cgroup.subtree_control", "#cpu", NULL));
        ok(backend_write(b, "A/B/C/D/E", "cgroup.controllers", "+cpu", NULL));
        ok(backend_write(b, "A/B/G", "cgroup.controllers", "+cpu", NULL));

        kassert("A", "cgroup.subtree_control", "#cpu\n");
        kassert("A", "cgroup.controllers", "cpu\n");
        kassert("A/B", "cgroup.controllers", "#cpu\n");
        kassert("A/B/C/D/E", "cgroup.controllers", "cpu\n");
        kassert("A/B/C/D/E/F", "cgroup.controllers", "");
        kassert("A/B/G", "cgroup.controllers", "cpu\n");
        kassert("A", "debug.masks", "subtree_control  : \nsubtree_ss_mask  : perf_event, debug\n"
                                    "subtree_bypass   : cpu\nenable_ss_mask   : \n");
        check_cpu_knobs(b);

        test_assert_doc_example_tree(b);
        check_reload(b);

        /* the kernel's subtree as the backend left it; a cgroup made behind its back shows */
        {
                _cleanup_free_ char *made = test_strdupf("%s/A/B/G/x", mnt);
                ck_assert_int_eq(backend_check_below(b, "/A/B"), 1);
                ck_assert_msg(mkdir(made, 0755) == 0, "mkdir %s: %m", made);
                ck_assert_int_eq(backend_check_below(b, "/A/B"), 0);
                ck_assert_int_eq(backend_check_below(b, "/A/B/C"), 1);
                ck_assert_msg(rmdir(made) == 0, "rmdir %s: %m", made);
                ck_assert_int_eq(backend_check_below(b, "/A/B"), 1);
        }

        /* refusals: the kernel's errno, the model's reason, both agree */
        ck_assert_int_eq(backend_write(b, "A/B/C/D", "cgroup.subtree_control", "-cpu", &reason), -EBUSY);
        ck_assert_int_eq(reason, REASON_CHILD_USES_IT);
        ck_assert_int_eq(backend_write(b, "A/B/C/D/E", "cgroup.controllers", "+memory", &reason), -ENOENT);
        ck_assert_int_eq(backend_write(b, "A/B/C/D/E/F", "cgroup.controllers", "+cpu", &reason), -ENOENT);
        ck_assert_int_eq(reason, REASON_NOT_BYPASSED_BY_PARENT);
        ck_assert_int_eq(backend_write(b, ".", "cgroup.controllers", "+cpu", &reason), -EINVAL);
        ck_assert_int_eq(backend_rmdir(b, "A/B", &reason), -EBUSY);

        ok(backend_write(b, "A/B/C/D/E", "cgroup.controllers", "#cpu", NULL));
        ck_assert(!kexists("A/B/C/D/E", "cpu.weight"));
        kassert("A/B/C/D/E", "cgroup.controllers", "#cpu\n");
        check_cpu_knobs(b);
        check_reload(b);

        /* clean up through the backend, deepest first */
        for (size_t i = ELEMENTSOF(dirs); i > 0; i--)
                ok(backend_rmdir(b, dirs[i - 1], NULL));
        ok(backend_write(b, ".", "cgroup.subtree_control", "-cpu", NULL));
        ck_assert_uint_eq(disagreements, 0);
}
END_TEST

/* the model's process counts are a snapshot: a stale one is not reported as a disagreement */
START_TEST(test_processes) {
        _cleanup_(backend_freep) Backend *b = open_native();
        _cleanup_free_ char *procs = kpath("P", "cgroup.procs"), *pid_s = NULL;
        Reason reason = REASON_NONE;
        int release;
        pid_t pid;

        ok(backend_mkdir(b, "P", NULL));
        ok(backend_mkdir(b, "P/c", NULL));
        ok(backend_write(b, ".", "cgroup.subtree_control", "+memory", NULL));

        release = test_spawn_waiter(&pid);
        pid_s = test_strdupf("%d", (int) pid);
        ck_assert_int_eq(test_write_file(procs, pid_s), 0);   /* behind the backend's back */

        /* decision (a): bypassing memory over processes is EBUSY; the model learns of the process */
        ck_assert_int_eq(backend_write(b, "P", "cgroup.subtree_control", "#memory", &reason), -EBUSY);
        ck_assert_int_eq(reason, REASON_HAS_PROCESSES);
        Cgroup *p;
        ck_assert_int_eq(hierarchy_lookup(backend_get_model(b), "P", &p), 0);
        ck_assert_uint_eq(cgroup_nr_procs(p), 1);
        check_reload(b);

        /* moved out through the backend: the model follows */
        ok(backend_write(b, ".", "cgroup.procs", pid_s, NULL));
        ok(backend_write(b, "P", "cgroup.subtree_control", "#memory", NULL));
        kassert("P", "cgroup.subtree_control", "#memory\n");
        kassert("P/c", "cgroup.controllers", "#memory\n");
        check_reload(b);

        (void) close(release);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        ok(backend_write(b, "P", "cgroup.subtree_control", "-memory", NULL));
        CLEAN_UP(b, "-memory", "P/c", "P");
}
END_TEST

/* the project's fixes, through the backend: threaded children see no bypassed domain controller */
START_TEST(test_threaded) {
        _cleanup_(backend_freep) Backend *b = open_native();
        Reason reason = REASON_NONE;

        ok(backend_write(b, ".", "cgroup.subtree_control", "+cpu #memory", NULL));
        ok(backend_mkdir(b, "T", NULL));
        ok(backend_write(b, "T", "cgroup.type", "threaded", NULL));
        kassert("T", "cgroup.controllers", "cpu\n");
        ck_assert_int_eq(backend_write(b, "T", "cgroup.controllers", "+memory", &reason), -ENOENT);
        ck_assert_int_eq(reason, REASON_NOT_BYPASSED_BY_PARENT);
        ok(backend_mkdir(b, "Q", NULL));
        ok(backend_write(b, "Q", "cgroup.controllers", "+memory", NULL));
        ck_assert_int_eq(backend_write(b, "Q", "cgroup.type", "threaded", &reason), -EOPNOTSUPP);
        ck_assert_int_eq(reason, REASON_CANNOT_BE_THREADED);
        check_reload(b);
        CLEAN_UP(b, "-cpu -memory", "Q", "T");
}
END_TEST

/* an injected failure reaches neither the kernel nor the model */
START_TEST(test_fault_hook) {
        _cleanup_(backend_freep) Backend *b = open_native();
        TestFault fault = { .fail_at = 1 };
        _cleanup_free_ char *dump = test_dump(backend_get_model(b)), *dump2 = NULL;

        backend_set_fault_hook(b, test_fault_fn, &fault);
        ck_assert_int_eq(backend_mkdir(b, "F", NULL), -EIO);
        ck_assert(!kexists("F", "cgroup.procs"));
        dump2 = test_dump(backend_get_model(b));
        ck_assert_str_eq(dump, dump2);
        ok(backend_mkdir(b, "F", NULL));
        ok(backend_rmdir(b, "F", NULL));
        ck_assert_uint_eq(disagreements, 0);
}
END_TEST

/*
 * Values through the policy on the kernel with the series: written after the
 * writes that make the files appear, in sync on re-apply (zero writes), and
 * a value the kernel itself refuses (misc.max of SEV on a machine without
 * SEV: EINVAL) fails the apply, which is undone.
 */
START_TEST(test_policy_values) {
        _cleanup_(backend_freep) Backend *b = open_native();
        _cleanup_free_ char *sc = kpath(".", "cgroup.subtree_control"), *before = test_read_file(sc);
        DesiredValue v[] = { { "memory.max", "4G", { "t.conf", 5 } }, { "cpu.max", "max", { "t.conf", 6 } } };
        DesiredCgroup d[] = {
                { .path = "/", .sc_enable = CGMASK(CONTROLLER_MEMORY) | CGMASK(CONTROLLER_CPU) },
                { .path = "/V", .create = true, .values = v, .n_values = 2 },
        };
        unsigned writes = 0;
        ApplyFailure f = {};
        Plan *p;

        ck_assert_ptr_nonnull(before);
        p = test_plan_in_sync(b, d, ELEMENTSOF(d));
        ok(plan_apply(p, b, &f));
        plan_free(p);
        kassert("V", "memory.max", "4294967296\n");
        kassert("V", "cpu.max", "max 100000\n");

        p = test_plan_in_sync(b, d, ELEMENTSOF(d));
        ck_assert_uint_eq(p->n_ops, 0);
        ok(test_apply_hooked(p, b, test_count_ops, &writes, &f));
        ck_assert_uint_eq(writes, 0);
        plan_free(p);

        DesiredValue v2[] = { { "memory.max", "8G", { "t.conf", 5 } }, { "misc.max", "sev 10", { "t.conf", 7 } } };
        DesiredCgroup d2[] = {
                { .path = "/", .sc_enable = CGMASK(CONTROLLER_MEMORY) | CGMASK(CONTROLLER_CPU) |
                                            CGMASK(CONTROLLER_MISC) },
                { .path = "/V", .create = true, .values = v2, .n_values = 2 },
                { .path = "/V2", .create = true },
        };
        _cleanup_free_ char *sc_before = test_read_file(sc);
        p = test_plan_in_sync(b, d2, ELEMENTSOF(d2));
        ck_assert_int_eq(plan_apply(p, b, &f), -EINVAL);
        ck_assert_uint_eq(f.index, p->n_ops - 1);
        ck_assert_uint_eq(f.undone, p->n_ops - 1);
        ck_assert_int_eq(f.undo_error, 0);
        plan_free(p);
        ck_assert(!kexists("V2", "cgroup.procs"));
        kassert("V", "memory.max", "4294967296\n");
        kassert(".", "cgroup.subtree_control", sc_before);
        ck_assert_uint_eq(disagreements, 0);

        ok(backend_rmdir(b, "V", NULL));
        /* through the backend: a write behind its back is drift, which check_reload() would see */
        if (!strstr(before, "memory"))
                ok(backend_write(b, ".", "cgroup.subtree_control", "-memory", NULL));
        check_reload(b);
}
END_TEST

int main(void) {
        mnt = getenv("CGB_TEST_CGROUP2") ?: "/sys/fs/cgroup";
        if (!kernel_has_bypass_feature()) {
                printf("1..0 # SKIP the kernel has no cgroup bypass mode (run it in the VM: tests/backend/vm-backend.sh)\n");
                return 0;
        }
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root\n");
                return 0;
        }

        Suite *s = suite_create("backend-native");
        TCase *tc = CHECK_TCASE(s, "native", setup, teardown, { test_documentation_example }, { test_processes },
                                { test_threaded }, { test_fault_hook }, { test_policy_values });

        tcase_set_timeout(tc, 120);
        /* the tests share the mount's root: one after the other, no forks to leave state behind */
        return check_run_forking(s, CK_NOFORK);
}
