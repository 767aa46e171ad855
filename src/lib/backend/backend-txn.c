/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A model operation that can be taken back, for the backends that change the
 * model first and something else (a directory, the kernel) second. Copying
 * the model would make every operation cost the whole tree; instead each
 * operation records its inverse: mkdir <-> rmdir, and for a control write
 * the write that puts the cgroup's masks back. The inverse is legal under
 * the kernel's rules because the forward write was: it changed only this
 * cgroup's masks (children that used a controller made it EBUSY), so the
 * checks the inverse meets are the ones the old state already passed.
 * cgroup.type has no inverse ("threaded" is one-way): it runs on a copy.
 */
#include <limits.h>

#include "backend-internal.h"
#include "cgbypass/strbuf.h"

int model_lookup(const Hierarchy *h, const char *path, Cgroup **ret, Reason *reterr_reason) {
        int r = hierarchy_lookup(h, path, ret);

        if (r < 0 && reterr_reason)
                *reterr_reason = r == -ENOTDIR ? REASON_NOT_A_DIRECTORY :
                                 r == -ENOENT ? REASON_NO_SUCH_CGROUP : REASON_PARSE;
        return r;
}

void model_txn_done(ModelTxn *txn) {
        free(txn->path);
        free(txn->undo_file);
        free(txn->undo_value);
        hierarchy_free(txn->clone);
        *txn = (ModelTxn) {};
}

static int read_limit(const Hierarchy *h, const Cgroup *c, const char *file, int *ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        r = cgroup_read(h, c, file, &s);
        if (r < 0)
                return r;
        if (startswith(s, "max")) {
                *ret = INT_MAX;
                return 0;
        }
        *ret = atoi(s);
        return 0;
}

int model_txn_mkdir(Hierarchy *h, const char *path, ModelTxn *txn, Reason *reterr_reason) {
        int r;

        *txn = (ModelTxn) {};
        txn->path = strdup(path);
        if (!txn->path)
                return -ENOMEM;
        r = hierarchy_mkdir(h, path, NULL, reterr_reason);
        if (r < 0) {
                model_txn_done(txn);
                return r;
        }
        txn->kind = TXN_MKDIR;
        return 0;
}

/* @txn empty but for @path, and the cgroup it names */
static int txn_begin(Hierarchy *h, const char *path, ModelTxn *txn, Cgroup **ret, Reason *reterr_reason) {
        int r;

        *txn = (ModelTxn) {};
        r = model_lookup(h, path, ret, reterr_reason);
        if (r < 0)
                return r;
        txn->path = strdup(path);
        return txn->path ? 0 : -ENOMEM;
}

int model_txn_rmdir(Hierarchy *h, const char *path, ModelTxn *txn, Reason *reterr_reason) {
        Cgroup *c;
        int r;

        r = txn_begin(h, path, txn, &c, reterr_reason);
        if (r < 0)
                return r;
        txn->threaded = cgroup_get_type(h, c) == CGROUP_TYPE_THREADED;
        txn->subtree_control = cgroup_get_subtree_control(c);
        txn->subtree_bypass = cgroup_get_subtree_bypass(c);
        txn->enable_ss_mask = cgroup_get_enable_ss_mask(c);
        r = read_limit(h, c, "cgroup.max.depth", &txn->max_depth);
        if (r >= 0)
                r = read_limit(h, c, "cgroup.max.descendants", &txn->max_descendants);
        if (r >= 0)
                r = hierarchy_rmdir(h, path, reterr_reason);
        if (r < 0) {
                model_txn_done(txn);
                return r;
        }
        txn->kind = TXN_RMDIR;
        return 0;
}

/* "+cpu #io -memory": the tokens that take @c's masks back from (sc1, sb1) to (sc0, sb0). */
static int inverse_subtree_control(CgMask sc0, CgMask sb0, CgMask sc1, CgMask sb1, char **ret) {
        StrBuf b = STRBUF_INIT;

        /* not strbuf_printf(): a vsnprintf() per token, for every control write of an apply */
        FOREACH_CONTROLLER_IN(x, (sc0 ^ sc1) | (sb0 ^ sb1)) {
                if (b.len)
                        strbuf_putc(&b, ' ');
                strbuf_putc(&b, (sc0 & CGMASK(x)) ? '+' : (sb0 & CGMASK(x)) ? '#' : '-');
                strbuf_append(&b, controller_to_string(x));
        }
        return strbuf_steal(&b, ret);
}

static int inverse_controllers(CgMask en0, CgMask en1, char **ret) {
        StrBuf b = STRBUF_INIT;

        FOREACH_CONTROLLER_IN(x, en0 ^ en1) {
                if (b.len)
                        strbuf_putc(&b, ' ');
                strbuf_putc(&b, (en0 & CGMASK(x)) ? '+' : '#');
                strbuf_append(&b, controller_to_string(x));
        }
        return strbuf_steal(&b, ret);
}

int model_txn_write(Hierarchy *h, const char *path, const char *file, const char *value,
                    ModelTxn *txn, Reason *reterr_reason) {
        bool control = streq(file, "cgroup.subtree_control") || streq(file, "cgroup.controllers");
        bool limit = streq(file, "cgroup.max.depth") || streq(file, "cgroup.max.descendants");
        Cgroup *c;
        int r, old_limit = 0;

        r = txn_begin(h, path, txn, &c, reterr_reason);
        if (r < 0)
                return r;

        if (streq(file, "cgroup.type") && !isempty(value)) {
                Cgroup *cc;

                r = hierarchy_clone(h, &txn->clone);
                if (r >= 0)
                        r = hierarchy_lookup(txn->clone, path, &cc);
                if (r >= 0)
                        r = cgroup_write(txn->clone, cc, file, value, reterr_reason);
                if (r < 0) {
                        model_txn_done(txn);
                        return r;
                }
                txn->kind = TXN_CLONE;
                return 0;
        }

        txn->subtree_control = cgroup_get_subtree_control(c);
        txn->subtree_bypass = cgroup_get_subtree_bypass(c);
        txn->enable_ss_mask = cgroup_get_enable_ss_mask(c);
        if (limit && cgroup_has_file(h, c, file)) {
                r = read_limit(h, c, file, &old_limit);
                if (r < 0) {
                        model_txn_done(txn);
                        return r;
                }
        }

        r = cgroup_write(h, c, file, value, reterr_reason);
        if (r < 0) {
                model_txn_done(txn);
                return r;
        }

        if (control) {
                if (streq(file, "cgroup.subtree_control"))
                        r = inverse_subtree_control(txn->subtree_control, txn->subtree_bypass,
                                                    cgroup_get_subtree_control(c),
                                                    cgroup_get_subtree_bypass(c), &txn->undo_value);
                else
                        r = inverse_controllers(txn->enable_ss_mask, cgroup_get_enable_ss_mask(c),
                                                &txn->undo_value);
        } else if (limit) {
                if (old_limit == INT_MAX)
                        txn->undo_value = strdup("max");
                else if (asprintf(&txn->undo_value, "%d", old_limit) < 0)
                        txn->undo_value = NULL;
                r = txn->undo_value ? 0 : -ENOMEM;
        } else {
                /* an empty write, or a file whose writes the model does not keep */
                txn->kind = TXN_NONE;
                return 0;
        }
        if (r >= 0) {
                txn->undo_file = strdup(file);
                if (!txn->undo_file)
                        r = -ENOMEM;
        }
        if (r < 0) {
                /* cannot record the inverse: take the write back now, while we still can */
                txn->kind = TXN_WRITE;
                (void) model_txn_rollback(txn, h);
                model_txn_done(txn);
                return r;
        }
        txn->kind = TXN_WRITE;
        return 0;
}

Hierarchy *model_txn_result(const ModelTxn *txn, Hierarchy *h) {
        return txn->kind == TXN_CLONE ? txn->clone : h;
}

void model_txn_commit(ModelTxn *txn, Hierarchy **h) {
        if (txn->kind == TXN_CLONE) {
                hierarchy_free(*h);
                *h = TAKE_PTR(txn->clone);
        }
        txn->kind = TXN_NONE;
}

int model_txn_rollback(ModelTxn *txn, Hierarchy *h) {
        Cgroup *c;
        int r = 0;

        switch (txn->kind) {
        case TXN_NONE:
        case TXN_CLONE:
                break;
        case TXN_MKDIR:
                r = hierarchy_rmdir(h, txn->path, NULL);
                break;
        case TXN_RMDIR:
                r = hierarchy_import(h, txn->path, txn->threaded, txn->subtree_control,
                                     txn->subtree_bypass, txn->enable_ss_mask, 0, NULL);
                if (r >= 0)
                        r = hierarchy_lookup(h, txn->path, &c);
                if (r >= 0)
                        r = state_apply_limits(h, c, txn->max_depth, txn->max_descendants);
                break;
        case TXN_WRITE:
                r = hierarchy_lookup(h, txn->path, &c);
                if (r >= 0 && !isempty(txn->undo_value))
                        r = cgroup_write(h, c, txn->undo_file, txn->undo_value, NULL);
                if (r >= 0 && (cgroup_get_subtree_control(c) != txn->subtree_control ||
                               cgroup_get_subtree_bypass(c) != txn->subtree_bypass ||
                               cgroup_get_enable_ss_mask(c) != txn->enable_ss_mask))
                        r = -EUCLEAN;
                break;
        }
        if (r < 0) {
                log_debug("Failed to take back a model operation on '%s': %s", strempty(txn->path), strerror(-r));
                r = -EUCLEAN;
        }
        txn->kind = TXN_NONE;
        return r;
}

int model_txn_finish(ModelTxn *txn, Hierarchy **h, int r) {
        if (r < 0)
                (void) model_txn_rollback(txn, *h);
        else
                model_txn_commit(txn, h);
        model_txn_done(txn);
        return r;
}
