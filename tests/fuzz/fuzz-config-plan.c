/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration loader and the planner. Input: a configuration file,
 * optionally after a trace and a line "%%" that set up the hierarchy the
 * plan starts from (mkdir, rmdir, write, spawn; failures ignored).
 *
 * Checked: the loader answers 0 with no problem or -EINVAL with at least
 * one, each one line; a refused plan names a reason; an accepted plan runs
 * on the model as it is (each step legal in order), leaves a consistent
 * model in which nothing desired drifts and a second plan is empty, and its
 * undo values, run in reverse, give back the hierarchy byte for byte (what
 * plan_apply() relies on when it backs out).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cgbypass/config.h"
#include "cgbypass/desired.h"
#include "cgbypass/log.h"
#include "cgbypass/policy.h"
#include "cgbypass/trace.h"
#include "fuzz-common.h"

static void setup_hierarchy(Hierarchy *h, const char *text) {
        _cleanup_(trace_freep) Trace *t = NULL;
        _cleanup_free_ char *msg = NULL;

        if (trace_parse(text, "prelude", &t, &msg) < 0)
                return;
        for (size_t i = 0; i < t->n_ops; i++) {
                const TraceOp *op = &t->ops[i];
                Cgroup *c;
                ProcId pid;

                switch (op->type) {
                case TRACE_MKDIR:
                        (void) hierarchy_mkdir(h, op->path, NULL, NULL);
                        break;
                case TRACE_RMDIR:
                        (void) hierarchy_rmdir(h, op->path, NULL);
                        break;
                case TRACE_WRITE:
                        if (hierarchy_lookup(h, op->path, &c) >= 0)
                                (void) cgroup_write(h, c, op->file, op->content, NULL);
                        break;
                case TRACE_SPAWN:
                        if (hierarchy_lookup(h, op->path, &c) >= 0)
                                (void) hierarchy_spawn(h, c, &pid, NULL);
                        break;
                default:
                        break;
                }
        }
}

static void check_errors(const ConfigErrors *errs, int r) {
        size_t n = config_errors_count(errs);

        if (r == -EINVAL && n == 0)
                fuzz_fail("config_load() refused the configuration without naming a problem", NULL);
        if (r == 0 && n != 0)
                fuzz_fail("config_load() accepted the configuration and named a problem", config_errors_get(errs, 0));
        for (size_t i = 0; i < n; i++)
                if (strchr(config_errors_get(errs, i), '\n'))
                        fuzz_fail("a configuration problem spans lines", config_errors_get(errs, i));
}

static void check_plan(const Hierarchy *h, const DesiredSet *want, const Plan *p) {
        _cleanup_(hierarchy_freep) Hierarchy *after = NULL;
        _cleanup_(plan_freep) Plan *again = NULL;
        _cleanup_free_ char *before_dump = NULL, *undone_dump = NULL, *msg = NULL;
        PolicyErrors pe = {};
        Drift *drift = NULL;
        size_t n_drift = 0, index = 0;
        int r;

        if (hierarchy_dump(h, &before_dump) < 0 || hierarchy_clone(h, &after) < 0)
                return;         /* out of memory: not a finding */
        r = plan_execute_model(p, after, &index, NULL);
        if (r < 0)
                fuzz_fail("a step of the plan is illegal where the plan puts it", p->ops[index].path);
        if (hierarchy_check(after, &msg) < 0)
                fuzz_fail("the plan leaves an inconsistent model", msg);
        if (policy_drift(after, want->items, want->n, &drift, &n_drift) < 0)
                return;
        drift_free_array(drift, n_drift);
        if (n_drift > 0)
                fuzz_fail("the plan's result differs from what was desired", NULL);
        r = policy_plan(after, want->items, want->n, &again, &pe);
        policy_errors_done(&pe);
        if (r == -ENOMEM)
                return;
        if (r < 0 || again->n_ops != 0)
                fuzz_fail("a second plan from the plan's result is not empty", NULL);

        /* back out in reverse, as plan_apply() does after a failure */
        for (size_t i = p->n_ops; i-- > 0;) {
                const PlanOp *op = &p->ops[i];
                Cgroup *c;

                if (op->type == PLAN_OP_MKDIR)
                        r = hierarchy_rmdir(after, op->path, NULL);
                else {
                        r = hierarchy_lookup(after, op->path, &c);
                        if (r >= 0)
                                r = cgroup_write(after, c, op->file, op->undo, NULL);
                }
                if (r < 0)
                        fuzz_fail("an undo of the plan is refused", op->path);
        }
        if (hierarchy_dump(after, &undone_dump) < 0)
                return;
        if (!streq(before_dump, undone_dump))
                fuzz_fail("the plan's undo does not give back the hierarchy it started from", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -1;
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        DesiredSet want = {};
        PolicyErrors pe = {};
        const char *conf;
        char path[64], *sep;
        int r;

        if (size > FUZZ_INPUT_MAX)
                return 0;
        text = fuzz_string(data, size);
        if (!text || hierarchy_new(&h, RULES_BYPASS, CGMASK_VM_KERNEL) < 0)
                return 0;
        hierarchy_settle_root(h);
        conf = text;
        sep = strstr(text, "\n%%\n");
        if (sep) {
                *sep = '\0';
                setup_hierarchy(h, text);
                conf = sep + 4;
        }

        /* the loader reads files: give it one that holds exactly the input (NULs included) */
        fd = memfd_create("fuzz.conf", MFD_CLOEXEC);
        if (fd < 0)
                fuzz_fail("memfd_create() failed", strerror(errno));
        size_t len = size - (size_t) (conf - text);
        if (write(fd, data + (conf - text), len) != (ssize_t) len)
                fuzz_fail("write() to the memfd failed", strerror(errno));
        (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

        r = config_load(path, NULL, &c, &errs);
        check_errors(&errs, r);
        config_errors_done(&errs);
        if (r < 0)
                return 0;

        if (desired_from_config(c, &want) < 0)
                return 0;
        r = policy_plan(h, want.items, want.n, &p, &pe);
        if (r == -EINVAL && pe.n == 0)
                fuzz_fail("the planner refused without naming a reason", NULL);
        for (size_t i = 0; i < pe.n; i++)
                if (!pe.errors[i].message || strchr(pe.errors[i].message, '\n'))
                        fuzz_fail("a planner error is empty or spans lines", pe.errors[i].message);
        policy_errors_done(&pe);
        if (r >= 0)
                check_plan(h, &want, p);
        desired_set_done(&want);        /* before c, which it points into */
        return 0;
}
