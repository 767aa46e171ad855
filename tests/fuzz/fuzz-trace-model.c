/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trace parser and the model. Input: a trace (design/trace-format.md).
 *
 * Checked: a refused trace says where; an accepted one runs on both rule
 * sets, twice with the same output on the bypass rules; and step by step,
 * after every operation the model is consistent (hierarchy_check()), and an
 * operation that fails leaves it byte-identical (hierarchy_dump()), as the
 * kernel's write(2), mkdir(2) and rmdir(2) do.
 */
#include <errno.h>
#include <stdint.h>

#include "cgbypass/trace.h"
#include "fuzz-common.h"

/* keeps each input's run short: a dump per operation costs what the tree holds */
#define OPS_MAX 256
#define LABELS_MAX 64

static char *run_model(const Trace *t, RuleSet rules, bool nonroot) {
        TraceModelOptions opts = {
                .rules = rules,
                .builtin = CGMASK_VM_KERNEL,
                .nonroot = nonroot,
                .settled = true,
        };
        _cleanup_free_ char *msg = NULL;
        char *out = NULL;
        size_t len = 0;
        FILE *f;
        int r;

        f = open_memstream(&out, &len);
        if (!f)
                return NULL;
        r = trace_run_model(t, &opts, f, &msg);
        (void) fclose(f);
        if (r == -EBADMSG && (!msg || strchr(msg, '\n')))
                fuzz_fail("a malformed run is not one line", msg);
        if (r < 0 && r != -EBADMSG && r != -ENOMEM)
                fuzz_fail("trace_run_model() failed", strerror(-r));
        return out;
}

typedef struct Label {
        const char *name;
        ProcId pid;
} Label;

static ProcId *label_find(Label *v, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i].name, name))
                        return &v[i].pid;
        return NULL;
}

static void step_by_step(const Trace *t) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        Label labels[LABELS_MAX];
        size_t n_labels = 0;

        if (hierarchy_new(&h, RULES_BYPASS, CGMASK_VM_KERNEL) < 0)
                return;
        hierarchy_settle_root(h);
        for (size_t i = 0; i < t->n_ops && i < OPS_MAX; i++) {
                _cleanup_free_ char *before = NULL, *after = NULL, *msg = NULL;
                const TraceOp *op = &t->ops[i];
                ProcId *pid = NULL;
                Cgroup *c = NULL;
                int r;

                if (hierarchy_dump(h, &before) < 0)
                        return;
                if (op->path && hierarchy_lookup(h, op->path, &c) < 0)
                        c = NULL;
                if (op->label)
                        pid = label_find(labels, n_labels, op->label);
                switch (op->type) {
                case TRACE_MKDIR:
                        r = hierarchy_mkdir(h, op->path, NULL, NULL);
                        break;
                case TRACE_RMDIR:
                        r = hierarchy_rmdir(h, op->path, NULL);
                        break;
                case TRACE_WRITE:
                        r = c ? cgroup_write(h, c, op->file, op->content, NULL) : -ENOENT;
                        break;
                case TRACE_SPAWN:
                        if (!c || (!pid && n_labels == LABELS_MAX))
                                continue;
                        if (!pid) {
                                labels[n_labels] = (Label) { .name = op->label };
                                pid = &labels[n_labels++].pid;
                        }
                        r = hierarchy_spawn(h, c, pid, NULL);
                        break;
                case TRACE_MOVE:
                        r = c && pid && *pid ? hierarchy_move(h, *pid, c, true, NULL) : -ESRCH;
                        break;
                case TRACE_KILL:
                        r = pid && *pid ? hierarchy_kill(h, *pid) : -ESRCH;
                        if (r >= 0)
                                *pid = 0;
                        break;
                default:
                        continue;       /* reads change nothing; trace_run_model() ran them */
                }
                if (r == -ENOMEM)
                        return;
                if (hierarchy_check(h, &msg) < 0)
                        fuzz_fail("the model is inconsistent after an operation", op->text);
                if (r >= 0)
                        continue;
                if (hierarchy_dump(h, &after) < 0)
                        return;
                if (!streq(before, after))
                        fuzz_fail("a failed operation changed the model", op->text);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(trace_freep) Trace *t = NULL;
        _cleanup_free_ char *text = NULL, *msg = NULL, *out1 = NULL, *out2 = NULL, *out3 = NULL;
        int r;

        if (size > FUZZ_INPUT_MAX)
                return 0;
        text = fuzz_string(data, size);
        if (!text)
                return 0;
        r = trace_parse(text, "fuzz", &t, &msg);
        if (r == -EBADMSG) {
                if (!msg || !startswith(msg, "fuzz:") || strchr(msg, '\n'))
                        fuzz_fail("a malformed trace is not refused with one 'NAME:LINE: reason'", msg);
                return 0;
        }
        if (r < 0)
                return 0;

        out1 = run_model(t, RULES_BYPASS, false);
        out2 = run_model(t, RULES_BYPASS, false);
        if (out1 && out2 && !streq(out1, out2))
                fuzz_fail("two runs of one trace differ", NULL);
        out3 = run_model(t, RULES_STOCK, size % 2);
        step_by_step(t);
        return 0;
}
