/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Values of controller files in the policy: where the planner puts their
 * writes, why it refuses a file the cgroup will not have, and on the sim
 * backend: apply, re-apply (zero writes), a changed value (one write), a
 * value the (simulated) kernel refuses (the apply fails as a whole and is
 * undone), and values that outlive a restart but not their css.
 */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

#include "../check-run.h"
#include "policy-test.h"
#include "cgbypass/backend.h"
#include "cgbypass/policy.h"
#include "cgbypass/strbuf.h"

#define CPU CGMASK(CONTROLLER_CPU)
#define MEMORY CGMASK(CONTROLLER_MEMORY)
#define PIDS CGMASK(CONTROLLER_PIDS)
#define MISC CGMASK(CONTROLLER_MISC)


static char *file_text(const char *rel, const char *file) {
        _cleanup_free_ char *path = NULL;
        char *s = NULL;
        size_t n = 0;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/%s/%s", root, rel, file), 0);
        f = fopen(path, "re");
        ck_assert_msg(f, "%s: %m", path);
        ck_assert_int_ge(getdelim(&s, &n, '\0', f), 0);
        fclose(f);
        return s;
}

static const DesiredValue w_values[] = {
        { "memory.max", "4G", { "t.conf", 10 } },
        { "cpu.weight", "50", { "t.conf", 11 } },
        { "cpu.max", "max", { "t.conf", 12 } },
};
static const DesiredValue a_values[] = {
        { "memory.high", "1G", { "t.conf", 20 } },
};

static const DesiredCgroup tree[] = {
        { .path = "/", .sc_enable = CPU | MEMORY },
        { .path = "/w", .create = true, .sc_enable = CPU | MEMORY, .values = w_values, .n_values = 3 },
        { .path = "/w/a", .create = true, .values = a_values, .n_values = 1 },
};

/* a sim backend with the tree applied */
static Backend *open_with_tree(void) {
        Backend *b = scratch_open_sim();
        _cleanup_(plan_freep) Plan *p = test_plan_in_sync(b, tree, ELEMENTSOF(tree));
        ApplyFailure f = {};

        ck_assert_int_eq(plan_apply(p, b, &f), 0);
        return b;
}

START_TEST(test_plan_writes_values_after_their_files_appear) {
        _cleanup_(backend_freep) Backend *b = scratch_open_sim();
        _cleanup_(plan_freep) Plan *p = test_plan_in_sync(b, tree, ELEMENTSOF(tree));
        _cleanup_free_ char *text = plan_text(p);

        /* a new cgroup's files are new: its values stay in the plan even where they are the default */
        ck_assert_str_eq(text,
                         "mkdir w\n"
                         "mkdir w/a\n"
                         "write . cgroup.subtree_control +cpu +memory\n"
                         "write w cgroup.subtree_control +cpu +memory\n"
                         "write w memory.max 4G\n"
                         "write w cpu.weight 50\n"
                         "write w cpu.max max\n"
                         "write w/a memory.high 1G\n");
}
END_TEST

START_TEST(test_apply_reapply_change_and_restart) {
        _cleanup_(backend_freep) Backend *b = open_with_tree();
        ApplyFailure f = {};
        Plan *p;
        _cleanup_free_ char *mm = file_text("w", "memory.max"), *cw = file_text("w", "cpu.weight"),
                            *nice = file_text("w", "cpu.weight.nice"), *cm = file_text("w", "cpu.max"),
                            *mh = file_text("w/a", "memory.high");
        ck_assert_str_eq(mm, "4294967296\n");   /* the kernel reads back bytes */
        ck_assert_str_eq(cw, "50\n");
        ck_assert_str_eq(nice, "3\n");          /* the same share */
        ck_assert_str_eq(cm, "max 100000\n");
        ck_assert_str_eq(mh, "1073741824\n");

        /* re-apply: in sync, zero writes, "4G" against "4294967296", "max" against "max 100000" */
        p = test_plan_in_sync(b, tree, ELEMENTSOF(tree));
        ck_assert_uint_eq(p->n_ops, 0);
        plan_free(p);

        /* a control change that leaves the values' csses alone keeps them out of the plan */
        DesiredCgroup tp[ELEMENTSOF(tree)];
        memcpy(tp, tree, sizeof(tree));
        tp[0].sc_enable |= PIDS;
        p = test_plan_in_sync(b, tp, ELEMENTSOF(tp));
        _cleanup_free_ char *tptext = plan_text(p);
        ck_assert_str_eq(tptext, "write . cgroup.subtree_control +pids\n");
        plan_free(p);
        /*
         * One that replaces the memory css of /w/a (bypassed by /w, re-enabled by
         * /w/a: a new css, with the defaults) keeps its value in the plan, and
         * the apply writes it again.
         */
        tp[0].sc_enable &= ~PIDS;
        tp[1].sc_enable = CPU;
        tp[1].sc_bypass = MEMORY;
        tp[2].ctl_enable = MEMORY;
        p = test_plan_in_sync(b, tp, ELEMENTSOF(tp));
        _cleanup_free_ char *tptext2 = plan_text(p);
        ck_assert_str_eq(tptext2, "write w cgroup.subtree_control #memory\n"
                                  "write w/a cgroup.controllers +memory\n"
                                  "write w/a memory.high 1G\n");
        ck_assert_int_eq(plan_apply(p, b, &f), 0);
        plan_free(p);
        _cleanup_free_ char *mh0 = file_text("w/a", "memory.high");
        ck_assert_str_eq(mh0, "1073741824\n");
        /* and back: the same again the other way */
        DesiredCgroup tb[ELEMENTSOF(tree)];
        memcpy(tb, tree, sizeof(tree));
        tb[2].ctl_bypass = MEMORY;
        p = test_plan_in_sync(b, tb, ELEMENTSOF(tb));
        ck_assert_int_eq(plan_apply(p, b, &f), 0);
        plan_free(p);
        _cleanup_free_ char *mh1 = file_text("w/a", "memory.high");
        ck_assert_str_eq(mh1, "1073741824\n");

        /* a reload with one value changed and one taken out: one write, the rest left */
        DesiredValue changed[] = { { "memory.max", "8G", { "t.conf", 10 } }, { "cpu.weight", "50", { "t.conf", 11 } } };
        DesiredCgroup t2[ELEMENTSOF(tree)];
        memcpy(t2, tree, sizeof(tree));
        t2[1].values = changed;
        t2[1].n_values = 2;
        t2[2].n_values = 0;
        p = test_plan_in_sync(b, t2, ELEMENTSOF(t2));
        _cleanup_free_ char *text = plan_text(p);
        ck_assert_str_eq(text, "write w memory.max 8G\n");
        ck_assert_int_eq(plan_apply(p, b, &f), 0);
        plan_free(p);
        _cleanup_free_ char *mm2 = file_text("w", "memory.max"), *mh2 = file_text("w/a", "memory.high");
        ck_assert_str_eq(mm2, "8589934592\n");
        ck_assert_str_eq(mh2, "1073741824\n");

        /* a restart keeps the simulated kernel's values */
        ck_assert_int_eq(backend_save(b), 0);
        b = backend_free(b);
        b = scratch_open_sim();
        _cleanup_free_ char *r1 = NULL;
        ck_assert_int_eq(backend_read(b, "w", "memory.max", &r1), 0);
        ck_assert_str_eq(r1, "8589934592\n");
        p = test_plan_in_sync(b, t2, ELEMENTSOF(t2));
        ck_assert_uint_eq(p->n_ops, 0);
        plan_free(p);
}
END_TEST

/* the hierarchy's files with their modes, and the model */
static char *snapshot(Backend *b) {
        return scratch_snapshot(b, root, true);
}

START_TEST(test_kernel_refusal_undoes_the_apply) {
        _cleanup_(backend_freep) Backend *b = open_with_tree();
        ApplyFailure f = {};
        Plan *p;

        /*
         * misc.max takes "sev 10" by its syntax, and only the kernel knows that
         * this machine has no SEV: the simulated kernel refuses it as 6.1 does
         * (EINVAL). Everything before it in the plan is undone: the new cgroup,
         * the control writes, memory.max back to 4G.
         */
        DesiredValue v[] = { { "memory.max", "2G", { "t.conf", 10 } }, { "misc.max", "sev 10", { "t.conf", 13 } } };
        DesiredCgroup t2[] = {
                { .path = "/", .sc_enable = CPU | MEMORY | MISC },
                { .path = "/w", .sc_enable = CPU | MEMORY, .values = v, .n_values = 2 },
                { .path = "/w/new", .create = true },
        };
        _cleanup_free_ char *before = snapshot(b);
        p = test_plan_in_sync(b, t2, ELEMENTSOF(t2));
        _cleanup_free_ char *text = plan_text(p);
        ck_assert_str_eq(text,
                         "mkdir w/new\n"
                         "write . cgroup.subtree_control +misc\n"
                         "write w memory.max 2G\n"
                         "write w misc.max sev 10\n");
        ck_assert_int_eq(plan_apply(p, b, &f), -EINVAL);
        ck_assert_uint_eq(f.index, 3);
        ck_assert_uint_eq(f.undone, 3);
        ck_assert_int_eq(f.undo_error, 0);
        plan_free(p);
        _cleanup_free_ char *after = snapshot(b);
        ck_assert_str_eq(after, before);
        _cleanup_free_ char *mm = file_text("w", "memory.max");
        ck_assert_str_eq(mm, "4294967296\n");
}
END_TEST

static int refuse_values(const char *op, void *userdata) {
        return strstr(op, " cpu.weight ") ? -EINVAL : 0;
}

START_TEST(test_refused_value_between_values) {
        _cleanup_(backend_freep) Backend *b = open_with_tree();
        ApplyFailure f = {};
        Plan *p;

        /* memory.max changes, then the kernel refuses cpu.weight: memory.max goes back */
        DesiredValue v[] = { { "memory.max", "1G", { "t.conf", 10 } }, { "cpu.weight", "70", { "t.conf", 11 } } };
        DesiredCgroup t2[ELEMENTSOF(tree)];
        memcpy(t2, tree, sizeof(tree));
        t2[1].values = v;
        t2[1].n_values = 2;
        _cleanup_free_ char *before = snapshot(b);
        p = test_plan_in_sync(b, t2, ELEMENTSOF(t2));
        ck_assert_uint_eq(p->n_ops, 2);
        ck_assert_int_eq(test_apply_hooked(p, b, refuse_values, NULL, &f), -EINVAL);
        ck_assert_uint_eq(f.index, 1);
        ck_assert_uint_eq(f.undone, 1);
        plan_free(p);
        _cleanup_free_ char *after = snapshot(b);
        ck_assert_str_eq(after, before);
}
END_TEST

static const char *message_at(const PolicyErrors *e, unsigned line) {
        for (size_t i = 0; i < e->n; i++)
                if (e->errors[i].origin.line == line)
                        return e->errors[i].message;
        return NULL;
}

START_TEST(test_files_the_cgroup_will_not_have) {
        _cleanup_(backend_freep) Backend *b = scratch_open_sim();
        DesiredValue rv[] = { { "memory.max", "1G", { "t.conf", 3 } } };
        DesiredValue wv[] = {
                { "memory.max", "1G", { "t.conf", 7 } },        /* bypassed for /w */
                { "pids.max", "10", { "t.conf", 8 } },          /* not enabled by / */
                { "memory.swap.max", "0", { "t.conf", 9 } }, /* the VM kernel has no swap */
                { "cpu.idle", "1", { "t.conf", 10 } },
                { "cpu.weight", "20", { "t.conf", 11 } },       /* refused while idle */
        };
        DesiredCgroup d[] = {
                { .path = "/", .sc_enable = CPU, .sc_bypass = MEMORY, .values = rv, .n_values = 1 },
                { .path = "/w", .create = true, .values = wv, .n_values = ELEMENTSOF(wv) },
        };
        PolicyErrors e = {};
        Plan *p = NULL;

        ck_assert_int_eq(policy_plan(backend_get_model(b), d, ELEMENTSOF(d), &p, &e), -EINVAL);
        ck_assert_ptr_null(p);
        ck_assert_uint_eq(e.n, 5);
        ck_assert_str_eq(message_at(&e, 3), "/: memory.max: the root cgroup has no such file; set it on a cgroup below");
        ck_assert_str_eq(message_at(&e, 7), "/w: memory.max: memory is bypassed there, so the cgroup has no memory "
                                            "files; re-enable it ('controllers = +memory') to set them");
        ck_assert_str_eq(message_at(&e, 8), "/w: pids.max: pids is not enabled for the cgroup (its parent's "
                                            "subtree-control does not have +pids), so it has no pids files");
        ck_assert_str_eq(message_at(&e, 9), "/w: memory.swap.max: the kernel has no such file (cgbypassd models Linux 6.1 "
                                            "as kernel/config/ builds it)");
        ck_assert_str_eq(message_at(&e, 11), "/w: cpu.weight = 20: the kernel refuses it (EINVAL) with the cgroup's "
                                             "other values; it takes a weight from 1 to 10000");
        ck_assert_ptr_null(message_at(&e, 10));
        policy_errors_done(&e);

        /* re-enabled below a bypass, the files are there */
        DesiredCgroup ok2[] = {
                { .path = "/", .sc_enable = CPU, .sc_bypass = MEMORY },
                { .path = "/w", .create = true, .ctl_enable = MEMORY, .values = wv, .n_values = 1 },
        };
        ck_assert_int_eq(policy_plan(backend_get_model(b), ok2, ELEMENTSOF(ok2), &p, &e), 0);
        ck_assert_uint_eq(e.n, 0);
        _cleanup_free_ char *text = plan_text(p);
        ck_assert_str_eq(text, "mkdir w\n"
                               "write . cgroup.subtree_control +cpu #memory\n"
                               "write w cgroup.controllers +memory\n"
                               "write w memory.max 1G\n");
        plan_free(p);
}
END_TEST

START_TEST(test_values_go_with_their_css) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        _cleanup_free_ char *s1 = NULL, *s2 = NULL, *s3 = NULL;
        Cgroup *a;

        ck_assert_int_eq(hierarchy_new(&h, RULES_BYPASS, CGMASK_VM_KERNEL), 0);
        ck_assert_int_eq(hierarchy_mkdir(h, "A", &a, NULL), 0);
        ck_assert_int_eq(cgroup_write(h, hierarchy_root(h), "cgroup.subtree_control", "+memory", NULL), 0);
        ck_assert_int_eq(cgroup_value_write(h, a, "memory.max", "4G", NULL), 0);
        ck_assert_int_eq(cgroup_value_read(h, a, "memory.max", &s1), 0);
        ck_assert_str_eq(s1, "4294967296\n");
        /* a failed control write keeps them */
        ck_assert_int_eq(cgroup_write(h, hierarchy_root(h), "cgroup.subtree_control", "+nope", NULL), -EINVAL);
        ck_assert_int_eq(cgroup_value_read(h, a, "memory.max", &s2), 0);
        ck_assert_str_eq(s2, "4294967296\n");
        /* disabled and enabled again: a new css, the default */
        ck_assert_int_eq(cgroup_write(h, hierarchy_root(h), "cgroup.subtree_control", "-memory", NULL), 0);
        ck_assert_int_eq(cgroup_value_read(h, a, "memory.max", &s3), -ENOENT);
        ck_assert_int_eq(cgroup_write(h, hierarchy_root(h), "cgroup.subtree_control", "+memory", NULL), 0);
        free(s3);
        ck_assert_int_eq(cgroup_value_read(h, a, "memory.max", &s3), 0);
        ck_assert_str_eq(s3, "max\n");
        /* not on the root, not a read-only file */
        ck_assert_int_eq(cgroup_value_write(h, hierarchy_root(h), "memory.max", "1G", NULL), -ENOENT);
        ck_assert_int_eq(cgroup_value_write(h, a, "memory.current", "1", NULL), -EINVAL);
        /* traces and the kernel backends see no change: cgroup_write() leaves values alone */
        ck_assert_int_eq(cgroup_write(h, a, "memory.max", "1G", NULL), -ENOSYS);
}
END_TEST

/* a copy of the model prunes the values it took over, and the ones set in it (hierarchy_values_prune()) */
START_TEST(test_values_go_with_their_css_in_copies) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL, *fresh = NULL, *copy = NULL, *scope = NULL;
        _cleanup_free_ char *s = NULL;
        Cgroup *a;

        ck_assert_int_eq(hierarchy_new(&h, RULES_BYPASS, CGMASK_VM_KERNEL), 0);
        ck_assert_int_eq(hierarchy_mkdir(h, "A", &a, NULL), 0);
        ck_assert_int_eq(cgroup_write(h, hierarchy_root(h), "cgroup.subtree_control", "+memory", NULL), 0);

        /* copied before any value: set in the copy */
        ck_assert_int_eq(hierarchy_clone(h, &fresh), 0);
        ck_assert_int_eq(hierarchy_lookup(fresh, "A", &a), 0);
        ck_assert_int_eq(cgroup_value_write(fresh, a, "memory.max", "4G", NULL), 0);
        ck_assert_int_eq(cgroup_write(fresh, hierarchy_root(fresh), "cgroup.subtree_control", "-memory", NULL), 0);
        ck_assert_int_eq(cgroup_write(fresh, hierarchy_root(fresh), "cgroup.subtree_control", "+memory", NULL), 0);
        ck_assert_int_eq(cgroup_value_read(fresh, a, "memory.max", &s), 0);
        ck_assert_str_eq(s, "max\n");
        free(s);
        s = NULL;

        /* set, then copied whole and by scope */
        ck_assert_int_eq(hierarchy_lookup(h, "A", &a), 0);
        ck_assert_int_eq(cgroup_value_restore(h, a, "memory.max", "4294967296\n"), 0);
        ck_assert_int_eq(hierarchy_clone(h, &copy), 0);
        ck_assert_int_eq(hierarchy_clone_scope(h, a, &scope), 0);
        Hierarchy *copies[] = { copy, scope };
        for (size_t i = 0; i < ELEMENTSOF(copies); i++) {
                Hierarchy *n = copies[i];
                ck_assert_int_eq(hierarchy_lookup(n, "A", &a), 0);
                ck_assert_int_eq(cgroup_value_read(n, a, "memory.max", &s), 0);
                ck_assert_str_eq(s, "4294967296\n");
                free(s);
                s = NULL;
                ck_assert_int_eq(cgroup_write(n, hierarchy_root(n), "cgroup.subtree_control", "-memory", NULL), 0);
                ck_assert_int_eq(cgroup_write(n, hierarchy_root(n), "cgroup.subtree_control", "+memory", NULL), 0);
                ck_assert_int_eq(cgroup_value_read(n, a, "memory.max", &s), 0);
                ck_assert_str_eq(s, "max\n");
                free(s);
                s = NULL;
        }
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE("policy-values", "values", scratch_setup, scratch_teardown,
                                     test_plan_writes_values_after_their_files_appear,
                                     test_apply_reapply_change_and_restart, test_kernel_refusal_undoes_the_apply,
                                     test_refused_value_between_values, test_files_the_cgroup_will_not_have,
                                     test_values_go_with_their_css, test_values_go_with_their_css_in_copies));
}
