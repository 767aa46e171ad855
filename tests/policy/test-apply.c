/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan_apply() is all or nothing: for every k, make the k-th operation of a
 * realistic plan fail (the backend's fault hook), and the hierarchy's files,
 * the backend's model and the saved state must be exactly as before.
 */
#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>

#include "../check-run.h"
#include "policy-test.h"
#include "cgbypass/backend.h"
#include "cgbypass/policy.h"
#include "cgbypass/strbuf.h"

#define CPU CGMASK(CONTROLLER_CPU)
#define PIDS CGMASK(CONTROLLER_PIDS)


/* the hierarchy's files, the saved state and the model */
static char *snapshot(Backend *be) {
        return scratch_snapshot(be, scratch_base, false);
}

typedef struct Fault {
        unsigned calls, fail_at;
} Fault;

static int fail_kth(const char *op, void *userdata) {
        Fault *f = userdata;
        return ++f->calls == f->fail_at ? -EIO : 0;
}

static Plan *plan_for(Backend *be, const DesiredCgroup *d, size_t n) {
        PolicyErrors e = {};
        Plan *plan = NULL;
        ck_assert_int_eq(policy_plan(backend_get_model(be), d, n, &plan, &e), 0);
        return plan;
}

static const DesiredCgroup before[] = DOC_EXAMPLE_DESIRED;

/* a sim backend with the documentation example applied and saved */
static Backend *open_before(void) {
        Backend *be = scratch_open_sim();
        Plan *plan = plan_for(be, before, ELEMENTSOF(before));

        ck_assert_int_eq(plan_apply(plan, be, NULL), 0);
        plan_free(plan);
        ck_assert_int_eq(backend_save(be), 0);
        return be;
}

/* the plan from there to: A switches from bypass to enable, pids is given out, a new cgroup (mkdirs and writes) */
static Plan *plan_the_change(Backend *be) {
        DesiredCgroup after[ELEMENTSOF(before) + 1];

        memcpy(after, before, sizeof(before));
        after[0].sc_enable = CPU | PIDS;
        after[1].sc_bypass = 0;
        after[1].sc_enable = CPU | PIDS;
        after[ELEMENTSOF(before)] = (DesiredCgroup) { .path = "/A/H/I", .create = true };
        return plan_for(be, after, ELEMENTSOF(after));
}

/* each test's backend with the documentation example applied, the plan of the change, and the state before it */
static Backend *b;
static Plan *p;
static char *start;

static void setup(void) {
        scratch_setup();
        b = open_before();
        p = plan_the_change(b);
        start = snapshot(b);
}

static void teardown(void) {
        free(start);
        start = NULL;
        p = plan_free(p);
        b = backend_free(b);
        scratch_teardown();
}

/* the state must be @start's again; FMT... says when */
#define ASSERT_AS_START(fmt, ...) do {                                          \
                _cleanup_free_ char *_now = snapshot(b);                        \
                ck_assert_msg(streq(_now, start), fmt ":\n%s\n--- before:\n%s", __VA_ARGS__, _now, start); \
        } while (0)

START_TEST(test_kth_failure_changes_nothing) {
        _cleanup_free_ char *tree = NULL;

        ck_assert_uint_ge(p->n_ops, 10);
        for (unsigned k = 1; k <= p->n_ops; k++) {
                Fault f = { .fail_at = k };
                ApplyFailure af = {};

                ck_assert_int_eq(test_apply_hooked(p, b, fail_kth, &f, &af), -EIO);
                ck_assert_uint_eq(af.index, k - 1);
                ck_assert_uint_eq(af.undone, k - 1);
                ck_assert_int_eq(af.undo_error, 0);
                ck_assert_int_eq(hierarchy_check(backend_get_model(b), NULL), 0);
                ASSERT_AS_START("k=%u: the hierarchy changed", k);
        }

        /* and without a fault it goes through */
        ck_assert_int_eq(plan_apply(p, b, NULL), 0);
        ck_assert_int_eq(hierarchy_effective_tree(backend_get_model(b), CONTROLLER_CPU, &tree), 0);
        ck_assert_str_eq(tree, "/\n  /A\n    /A/B|/A/B/C|/A/B/C/D\n      /A/B/C/D/E|/A/B/C/D/E/F\n      /A/B/G\n"
                               "    /A/H|/A/H/I\n");
}
END_TEST

/*
 * plan_unapply(): a plan made in full is taken back by its own inverses, to
 * the byte; with the k-th undo failing, it says which and how many were
 * undone before it.
 */
START_TEST(test_unapply) {
        ck_assert_uint_ge(p->n_ops, 4);
        for (unsigned k = 1; k <= p->n_ops; k++) {
                Fault f = { .fail_at = k };
                ApplyFailure af = {};

                ck_assert_int_eq(plan_apply(p, b, NULL), 0);
                backend_set_fault_hook(b, fail_kth, &f);
                ck_assert_int_eq(plan_unapply(p, b, &af), -EIO);
                backend_set_fault_hook(b, NULL, NULL);
                ck_assert_uint_eq(af.undone, k - 1);
                ck_assert_uint_eq(af.undo_index, p->n_ops - k);
                /* the rest, by hand, in reverse, for the next round */
                for (size_t j = p->n_ops - k + 1; j-- > 0;) {
                        const PlanOp *op = &p->ops[j];
                        ck_assert_int_eq(op->type == PLAN_OP_MKDIR ? backend_rmdir(b, op->path, NULL) :
                                         backend_write(b, op->path, op->file, op->undo, NULL), 0);
                }
                ASSERT_AS_START("k=%u: not back", k);
        }

        ck_assert_int_eq(plan_apply(p, b, NULL), 0);
        ApplyFailure af = {};
        ck_assert_int_eq(plan_unapply(p, b, &af), 0);
        ck_assert_uint_eq(af.undone, p->n_ops);
        ASSERT_AS_START("%s", "not back");
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE("apply", "rollback", setup, teardown,
                                     test_kth_failure_changes_nothing, test_unapply));
}
