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
static char *snapshot(Backend *b) {
        return scratch_snapshot(b, scratch_base, false);
}

typedef struct Fault {
        unsigned calls, fail_at;
} Fault;

static int fail_kth(const char *op, void *userdata) {
        Fault *f = userdata;
        return ++f->calls == f->fail_at ? -EIO : 0;
}

static Plan *plan_for(Backend *b, const DesiredCgroup *d, size_t n) {
        PolicyErrors e = {};
        Plan *p = NULL;
        ck_assert_int_eq(policy_plan(backend_get_model(b), d, n, &p, &e), 0);
        return p;
}

static const DesiredCgroup before[] = DOC_EXAMPLE_DESIRED;

/* a sim backend with the documentation example applied and saved */
static Backend *open_before(void) {
        Backend *b = scratch_open_sim();
        Plan *p = plan_for(b, before, ELEMENTSOF(before));

        ck_assert_int_eq(plan_apply(p, b, NULL), 0);
        plan_free(p);
        ck_assert_int_eq(backend_save(b), 0);
        return b;
}

/* the plan from there to: A switches from bypass to enable, pids is given out, a new cgroup (mkdirs and writes) */
static Plan *plan_the_change(Backend *b) {
        DesiredCgroup after[ELEMENTSOF(before) + 1];

        memcpy(after, before, sizeof(before));
        after[0].sc_enable = CPU | PIDS;
        after[1].sc_bypass = 0;
        after[1].sc_enable = CPU | PIDS;
        after[ELEMENTSOF(before)] = (DesiredCgroup) { .path = "/A/H/I", .create = true };
        return plan_for(b, after, ELEMENTSOF(after));
}

START_TEST(test_kth_failure_changes_nothing) {
        _cleanup_(backend_freep) Backend *b = open_before();
        _cleanup_free_ char *tree = NULL;
        Plan *p = plan_the_change(b);

        ck_assert_uint_ge(p->n_ops, 10);

        _cleanup_free_ char *start = snapshot(b);
        for (unsigned k = 1; k <= p->n_ops; k++) {
                Fault f = { .fail_at = k };
                ApplyFailure af = {};
                _cleanup_free_ char *now = NULL;

                ck_assert_int_eq(test_apply_hooked(p, b, fail_kth, &f, &af), -EIO);
                ck_assert_uint_eq(af.index, k - 1);
                ck_assert_uint_eq(af.undone, k - 1);
                ck_assert_int_eq(af.undo_error, 0);
                ck_assert_int_eq(hierarchy_check(backend_get_model(b), NULL), 0);
                now = snapshot(b);
                ck_assert_msg(streq(now, start), "k=%u: the hierarchy changed:\n%s\n--- before:\n%s", k, now, start);
        }

        /* and without a fault it goes through */
        ck_assert_int_eq(plan_apply(p, b, NULL), 0);
        plan_free(p);
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
        _cleanup_(backend_freep) Backend *b = open_before();
        Plan *p = plan_the_change(b);

        ck_assert_uint_ge(p->n_ops, 4);

        _cleanup_free_ char *start = snapshot(b);
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
                _cleanup_free_ char *now = snapshot(b);
                ck_assert_msg(streq(now, start), "k=%u: not back:\n%s\n--- before:\n%s", k, now, start);
        }

        ck_assert_int_eq(plan_apply(p, b, NULL), 0);
        ApplyFailure af = {};
        ck_assert_int_eq(plan_unapply(p, b, &af), 0);
        ck_assert_uint_eq(af.undone, p->n_ops);
        _cleanup_free_ char *now = snapshot(b);
        ck_assert_msg(streq(now, start), "not back:\n%s\n--- before:\n%s", now, start);
        plan_free(p);
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE("apply", "rollback", scratch_setup, scratch_teardown,
                                     test_kth_failure_changes_nothing, test_unapply));
}
