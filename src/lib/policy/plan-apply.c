/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Executing a plan: all of it, or nothing. */
#include "cgbypass/backend.h"
#include "cgbypass/policy.h"

static int op_do(Backend *b, const PlanOp *op, Reason *reason) {
        if (op->type == PLAN_OP_MKDIR)
                return backend_mkdir(b, op->path, reason);
        return backend_write(b, op->path, op->file, op->value, reason);
}

static int op_undo(Backend *b, const PlanOp *op) {
        if (op->type == PLAN_OP_MKDIR)
                return backend_rmdir(b, op->path, NULL);
        return backend_write(b, op->path, op->file, op->undo, NULL);
}

/* Undo p->ops[0..n) in reverse; each undo restores the state the next one expects. */
static void undo_first(const Plan *p, size_t n, Backend *b, ApplyFailure *f) {
        for (size_t j = n; j-- > 0;) {
                int q = op_undo(b, &p->ops[j]);
                if (q < 0) {
                        f->undo_error = q;
                        f->undo_index = j;
                        return;
                }
                f->undone++;
        }
}

int plan_unapply(const Plan *p, Backend *b, ApplyFailure *reterr) {
        ApplyFailure f = { .index = p->n_ops };

        undo_first(p, p->n_ops, b, &f);
        if (reterr)
                *reterr = f;
        return f.undo_error;
}

int plan_apply(const Plan *p, Backend *b, ApplyFailure *reterr) {
        for (size_t i = 0; i < p->n_ops; i++) {
                Reason reason = REASON_NONE;
                int r = op_do(b, &p->ops[i], &reason);
                if (r >= 0)
                        continue;

                ApplyFailure f = { .index = i, .error = r, .reason = reason };
                undo_first(p, i, b, &f);
                if (reterr)
                        *reterr = f;
                return r;
        }
        return 0;
}
