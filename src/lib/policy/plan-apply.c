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

static int op_undo(Backend *b, const PlanOp *op, const char *undo) {
        if (op->type == PLAN_OP_MKDIR)
                return backend_rmdir(b, op->path, NULL);
        return backend_write(b, op->path, op->file, undo, NULL);
}

int plan_apply(const Plan *p, Backend *b, ApplyFailure *reterr) {
        /* per operation: done, and a value write's undo (found when it ran) */
        _cleanup_free_ bool *done = calloc(p->n_ops + 1, sizeof(bool));
        _cleanup_free_ char **undo = calloc(p->n_ops + 1, sizeof(char *));
        int r = 0;
        size_t i;

        if (!done || !undo)
                return -ENOMEM;
        for (i = 0; i < p->n_ops; i++) {
                const PlanOp *op = &p->ops[i];
                Reason reason = REASON_NONE;

                r = 0;
                if (op->if_differs) {
                        r = value_prepare(b, op, &undo[i]);
                        if (r == 0)
                                continue;
                }
                if (r >= 0)
                        r = op_do(b, op, &reason);
                if (r >= 0) {
                        done[i] = true;
                        continue;
                }

                ApplyFailure f = { .index = i, .error = r, .reason = reason };
                /* back out in reverse: each undo restores the state the next one expects */
                for (size_t j = i; j-- > 0;) {
                        if (!done[j])
                                continue;
                        int q = op_undo(b, &p->ops[j], undo[j] ?: p->ops[j].undo);
                        if (q < 0) {
                                f.undo_error = q;
                                f.undo_index = j;
                                break;
                        }
                        f.undone++;
                }
                if (reterr)
                        *reterr = f;
                break;
        }
        for (size_t j = 0; j < p->n_ops; j++)
                free(undo[j]);
        return r < 0 ? r : 0;
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
