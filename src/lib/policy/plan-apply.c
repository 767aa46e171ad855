/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Executing a plan: all of it, or nothing. */
#include "cgbypass/backend.h"
#include "cgbypass/cfvalue.h"
#include "cgbypass/policy.h"

/*
 * A value write's turn: what the file shows decides. Return: 1 and the undo
 * to write (write needed), 0 (in sync: nothing to do), -errno of the read.
 */
static int value_prepare(Backend *b, const PlanOp *op, char **ret_undo) {
        _cleanup_free_ char *shown = NULL;
        int r;

        r = backend_read(b, op->path, op->file, &shown);
        if (r < 0)
                return r;
        if (cfvalue_in_sync(op->file, shown, op->value))
                return 0;
        r = cfvalue_undo(op->file, shown, op->value, ret_undo);
        return r < 0 ? r : 1;
}

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
                const PlanOp *op = &p->ops[j];
                int q;

                if (op->if_differs && !op->undo)
                        continue;       /* found in sync: nothing was written */
                q = op_undo(b, op);
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

int plan_apply(Plan *p, Backend *b, ApplyFailure *reterr) {
        for (size_t i = 0; i < p->n_ops; i++) {
                PlanOp *op = &p->ops[i];
                Reason reason = REASON_NONE;
                int r = 0;

                if (op->if_differs) {
                        /* the undo is what the file showed when the write's turn came (NULL: in sync) */
                        free(op->undo);
                        op->undo = NULL;
                        r = value_prepare(b, op, &op->undo);
                        if (r == 0)
                                continue;
                }
                if (r >= 0)
                        r = op_do(b, op, &reason);
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

/* Whether @path is @top or below it ("." is above everything). */
static bool path_at_or_below(const char *path, const char *top) {
        size_t n = strlen(top);

        if (streq(top, "."))
                return true;
        return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * Whether @op (earlier in the plan) may make or replace the css that the
 * value file @file of @path belongs to: a mkdir of it or above it, or a
 * control write above it (or its own cgroup.controllers) that names the
 * file's controller. Its own cgroup.subtree_control concerns its children.
 */
static bool op_touches(const PlanOp *op, const char *path, const char *file) {
        size_t n = strcspn(file, ".");

        if (op->if_differs || !path_at_or_below(path, op->path))
                return false;
        if (op->type == PLAN_OP_MKDIR)
                return true;
        if (streq(op->path, path) && streq(op->file, "cgroup.subtree_control"))
                return false;
        for (const char *s = op->value; s && *s;) {
                size_t len = strcspn(s, " ");
                if (len == n + 1 && strncmp(s + 1, file, n) == 0)
                        return true;
                s += len + (s[len] == ' ');
        }
        return false;
}

int plan_drop_in_sync(Plan *p, Backend *b) {
        size_t k = 0;

        for (size_t i = 0; i < p->n_ops; i++) {
                PlanOp *op = &p->ops[i];
                bool keep = true;

                if (op->if_differs) {
                        bool touched = false;
                        for (size_t j = 0; j < k && !touched; j++)
                                touched = op_touches(&p->ops[j], op->path, op->file);
                        _cleanup_free_ char *shown = NULL;
                        if (!touched) {
                                int r = backend_read(b, op->path, op->file, &shown);
                                if (r == -ENOMEM)
                                        return r;
                                keep = r < 0 || !cfvalue_in_sync(op->file, shown, op->value);
                        }
                }
                if (!keep) {
                        free(op->path);
                        free(op->file);
                        free(op->value);
                        free(op->undo);
                        continue;
                }
                p->ops[k++] = *op;
        }
        p->n_ops = k;
        return 0;
}

int plan_load_limits(const Plan *p, Backend *b) {
        int n = 0;

        for (size_t i = 0; i < p->n_ops; i++) {
                if (p->ops[i].type != PLAN_OP_MKDIR)
                        continue;
                int r = backend_load_limits_above(b, p->ops[i].path);
                if (r < 0)
                        return r;
                n += r;
        }
        return n;
}
