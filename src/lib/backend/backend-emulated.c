/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * emulated: bypass mode on a stock cgroup2 kernel. The model (bypass rules)
 * holds the truth and answers every operation; the kernel gets its
 * projection, the nearest configuration a stock kernel can hold:
 *
 *   kernel subtree_control(K) = subtree_control(K)
 *       ∪ (subtree_bypass(K) ∩ ⋃ over children C: enable_ss_mask(C) ∪ kernel subtree_control(C))
 *
 * A bypassed controller stays enabled in the kernel exactly where a cgroup
 * below it, through further bypassing levels, enables or re-enables it
 * (a "pass-through" level, whose own knobs stay at their defaults); an
 * unneeded bypass is simply not enabled. Because the formula only looks at
 * children, and the kernel already holds the projection of every cgroup an
 * operation does not touch, an operation recomputes its own cgroup and walks
 * up while the result changes: cost O(depth x siblings with bypass).
 *
 * What the kernel holds is mirrored in a stock-rules model ("the kernel
 * model"), kept in step with every kernel write. The bypass state itself
 * (subtree_bypass, enable_ss_mask) lives only in our model and in
 * STATE_DIR/emulated.state (backend_save()).
 */
#include <stdint.h>

#include "backend-internal.h"
#include "cgbypass/fileio.h"
#include "cgbypass/strbuf.h"
#include "cgroupfs.h"

#define EMU_STATE "emulated.state"

typedef struct Emulated {
        Hierarchy *kernel;      /* stock rules: the kernel as we left it */
        bool resync;            /* the kernel may differ from the projection: reload before the next operation */
        /* the mkdirs' parents, kept for an apply's mkdirs and subtree_control writes (cgroup2 has no
         * rename); dropped at every rmdir, reload and save, so they never pin removed cgroups for long */
        CgfsDirCache dirs;
} Emulated;

static Emulated *emu(Backend *b) {
        return b->data;
}

/* ---- kernel operations, in step with the kernel model ---- */

typedef enum KOpType {
        KOP_MKDIR,
        KOP_RMDIR,
        KOP_ENABLE,             /* "+a +b" to cgroup.subtree_control */
        KOP_DISABLE,            /* "-a -b" */
        KOP_WRITE,              /* @file, @value as given */
} KOpType;

typedef struct KOp {
        KOpType type;
        const char *path;
        char *owned;            /* @path when the list owns it (kops_add()) */
        CgMask mask;
        const char *file;
        const char *value;
} KOp;

typedef struct KOps {
        KOp *v;
        size_t n;
} KOps;

static void kops_done(KOps *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i].owned);
        free(l->v);
        *l = (KOps) {};
}

static int kops_add(KOps *l, KOpType type, const char *path, CgMask mask, const char *file, const char *value) {
        KOp *v = reallocarray(l->v, l->n + 1, sizeof(KOp));
        if (!v)
                return -ENOMEM;
        l->v = v;
        char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        v[l->n] = (KOp) { .type = type, .path = copy, .owned = copy, .mask = mask, .file = file, .value = value };
        l->n++;
        return 0;
}

static char *mask_tokens(char prefix, CgMask mask) {
        StrBuf b = STRBUF_INIT;
        char *s;

        /* not strbuf_printf(): its vsnprintf() per token cost more than the rest of a write's tokens */
        FOREACH_CONTROLLER_IN(c, mask) {
                if (b.len)
                        strbuf_putc(&b, ' ');
                strbuf_putc(&b, prefix);
                strbuf_append(&b, controller_to_string(c));
        }
        return strbuf_steal(&b, &s) < 0 ? NULL : s;
}

static void kernel_model_update(Backend *b, const KOp *op, const char *value) {
        Hierarchy *k = emu(b)->kernel;
        Cgroup *c;
        int r = 0;

        switch (op->type) {
        case KOP_MKDIR:
                r = hierarchy_mkdir(k, op->path, NULL, NULL);
                break;
        case KOP_RMDIR:
                r = hierarchy_rmdir(k, op->path, NULL);
                break;
        case KOP_ENABLE:
        case KOP_DISABLE:
                r = hierarchy_lookup(k, op->path, &c);
                if (r >= 0)
                        r = cgroup_write_subtree_control(k, c, value, NULL);
                break;
        case KOP_WRITE:
                if (!streq(op->file, "cgroup.type") && !startswith(op->file, "cgroup.max."))
                        return;
                r = hierarchy_lookup(k, op->path, &c);
                if (r >= 0)
                        r = cgroup_write(k, c, op->file, value, NULL);
                break;
        }
        if (r < 0) {
                /* the kernel took what the stock model refuses: our picture of the kernel is stale */
                log_debug("kernel model refused what the kernel did at '%s': %s", op->path, strerror(-r));
                emu(b)->resync = true;
        }
}

static int kop_exec(Backend *b, const KOp *op, bool faultable) {
        _cleanup_free_ char *tokens = NULL;
        const char *verb = "write", *file = op->file, *value = op->value;
        int r;

        if (op->type == KOP_ENABLE || op->type == KOP_DISABLE) {
                tokens = mask_tokens(op->type == KOP_ENABLE ? '+' : '-', op->mask);
                if (!tokens)
                        return -ENOMEM;
                file = "cgroup.subtree_control";
                value = tokens;
        } else if (op->type == KOP_MKDIR)
                verb = "mkdir";
        else if (op->type == KOP_RMDIR)
                verb = "rmdir";

        if (faultable) {
                r = backend_fault_check(b, verb, op->path, file, value);
                if (r < 0)
                        return r;
        }
        if (op->type == KOP_MKDIR)
                r = cgfs_mkdir_cached(b->root_fd, &emu(b)->dirs, op->path, 0755);
        else if (op->type == KOP_RMDIR) {
                cgfs_dir_cache_done(&emu(b)->dirs);
                r = cgfs_rmdir(b->root_fd, op->path);
        }
        else
                r = cgfs_write_kernfs_cached(b->root_fd, &emu(b)->dirs, op->path, file, value);
        if (r < 0) {
                log_debug("kernel refused %s %s %s %s: %s", verb, op->path, strempty(file),
                              strempty(value), strerror(-r));
                return r;
        }
        kernel_model_update(b, op, value);
        return 0;
}

/* Run @ops in order; on a failure take back the ones done, newest first. */
static int kops_run(Backend *b, const KOps *ops) {
        for (size_t i = 0; i < ops->n; i++) {
                int r = kop_exec(b, &ops->v[i], true);
                if (r >= 0)
                        continue;
                for (size_t j = i; j > 0; j--) {
                        KOp undo = ops->v[j - 1];
                        if (undo.type == KOP_ENABLE)
                                undo.type = KOP_DISABLE;
                        else if (undo.type == KOP_DISABLE)
                                undo.type = KOP_ENABLE;
                        else if (undo.type == KOP_MKDIR)
                                undo.type = KOP_RMDIR;
                        else
                                continue;       /* rmdir and knob writes are only ever the first operation */
                        if (kop_exec(b, &undo, false) < 0)
                                emu(b)->resync = true;
                }
                return r;
        }
        return 0;
}

/* ---- the projection ---- */

static CgMask kernel_sc(Backend *b, const Cgroup *mc) {
        _cleanup_free_ char *p = NULL;
        Cgroup *kc;

        if (cgroup_path(mc, &p) < 0 || hierarchy_lookup(emu(b)->kernel, p, &kc) < 0) {
                emu(b)->resync = true;
                return 0;
        }
        return cgroup_get_subtree_control(kc);
}

/*
 * What the kernel should enable in @k, the kernel holding the projection of
 * its children already; except @child (may be NULL), whose enable_ss_mask |
 * kernel subtree_control is @child_contrib.
 */
static CgMask projection(Backend *b, const Cgroup *k, const Cgroup *child, CgMask child_contrib) {
        CgMask p = cgroup_get_subtree_control(k), want = cgroup_get_subtree_bypass(k);

        for (const Cgroup *c = cgroup_first_child(k); c && want; c = cgroup_next_sibling(c)) {
                CgMask contrib = c == child ? child_contrib : cgroup_get_enable_ss_mask(c) | kernel_sc(b, c);
                p |= want & contrib;
                want &= ~contrib;
        }
        return p;
}

/*
 * The kernel writes that follow a change of the model at @k (with @child as
 * for projection()): walking up while a cgroup's projection changes.
 * Removals bottom-up, then additions top-down: a stock kernel needs a
 * controller gone from the children before the parent drops it, and enabled
 * in the parent before a child enables it.
 */
static int chain(Backend *b, const Cgroup *k, const Cgroup *child, CgMask child_contrib, KOps *ret) {
        KOps add = {};
        int r = 0;

        for (; k && r >= 0; child = k, k = cgroup_parent(k)) {
                _cleanup_free_ char *path = NULL;
                CgMask old = kernel_sc(b, k), new = projection(b, k, child, child_contrib);

                if (old == new)
                        break;
                r = backend_cgroup_relpath(k, &path);
                if (r >= 0 && (old & ~new))
                        r = kops_add(ret, KOP_DISABLE, path, old & ~new, NULL, NULL);
                if (r >= 0 && (new & ~old))
                        r = kops_add(&add, KOP_ENABLE, path, new & ~old, NULL, NULL);
                child_contrib = cgroup_get_enable_ss_mask(k) | new;
        }
        for (size_t i = add.n; i > 0 && r >= 0; i--)
                r = kops_add(ret, KOP_ENABLE, add.v[i - 1].path, add.v[i - 1].mask, NULL, NULL);
        kops_done(&add);
        return r;
}

/*
 * The whole projection against the kernel model: every difference is drift
 * (someone wrote the kernel behind our back, or an earlier fix failed); fix
 * it, removals bottom-up, additions top-down.
 */
static int reconcile(Backend *b, DriftList *drift, char **reterr_msg) {
        size_t n = hierarchy_count(b->model), i = 0, depth_cap = 0;
        _cleanup_free_ const Cgroup **nodes = calloc(n, sizeof(Cgroup *));
        _cleanup_free_ size_t *parent = calloc(n, sizeof(size_t));
        _cleanup_free_ CgMask *proj = calloc(n, sizeof(CgMask)), *under = calloc(n, sizeof(CgMask));
        _cleanup_free_ CgMask *found = calloc(n, sizeof(CgMask));
        _cleanup_free_ size_t *stack = NULL;
        Cgroup *root = hierarchy_root(b->model);
        KOps ops = {};
        int r = 0;

        if (!nodes || !parent || !proj || !under || !found)
                return -ENOMEM;
        for (const Cgroup *c = root; c; c = cgroup_next_descendant_pre(c, root), i++) {
                unsigned level = cgroup_level(c);
                if (level >= depth_cap) {
                        size_t *s = reallocarray(stack, level + 16, sizeof(size_t));
                        if (!s)
                                return -ENOMEM;
                        stack = s;
                        depth_cap = level + 16;
                }
                stack[level] = i;
                nodes[i] = c;
                parent[i] = level ? stack[level - 1] : SIZE_MAX;
        }
        for (i = n; i > 0; i--) {
                const Cgroup *c = nodes[i - 1];
                proj[i - 1] = cgroup_get_subtree_control(c) | (cgroup_get_subtree_bypass(c) & under[i - 1]);
                if (parent[i - 1] != SIZE_MAX)
                        under[parent[i - 1]] |= cgroup_get_enable_ss_mask(c) | proj[i - 1];
        }

        for (i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *path = NULL, *want = NULL, *have = NULL;

                found[i] = kernel_sc(b, nodes[i]);
                if (found[i] == proj[i])
                        continue;
                r = backend_cgroup_relpath(nodes[i], &path);
                if (r < 0)
                        break;
                want = backend_masks_to_string(proj[i], 0);
                have = backend_masks_to_string(found[i], 0);
                r = want && have ? drift_list_add(drift, path, "cgroup.subtree_control", want, have) : -ENOMEM;
        }
        for (i = n; i > 0 && r >= 0; i--)
                if (found[i - 1] & ~proj[i - 1]) {
                        _cleanup_free_ char *path = NULL;
                        r = backend_cgroup_relpath(nodes[i - 1], &path);
                        if (r >= 0)
                                r = kops_add(&ops, KOP_DISABLE, path, found[i - 1] & ~proj[i - 1], NULL, NULL);
                }
        for (i = 0; i < n && r >= 0; i++)
                if (proj[i] & ~found[i]) {
                        _cleanup_free_ char *path = NULL;
                        r = backend_cgroup_relpath(nodes[i], &path);
                        if (r >= 0)
                                r = kops_add(&ops, KOP_ENABLE, path, proj[i] & ~found[i], NULL, NULL);
                }
        if (r >= 0) {
                r = kops_run(b, &ops);
                if (r < 0)
                        r = backend_msg(reterr_msg, r, "Failed to give the kernel below '%s' the configuration "
                                        "of the bypass model: %s", b->root, strerror(-r));
        }
        kops_done(&ops);
        return r;
}

/* ---- loading: the kernel plus saved bypass state ---- */

static int state_cgroup_cmp(const void *a, const void *b) {
        return strcmp(((const BackendStateCgroup *) a)->path, ((const BackendStateCgroup *) b)->path);
}

static int drift_masks(DriftList *drift, const char *path, const char *what, char prefix, CgMask mask,
                       const char *why) {
        _cleanup_free_ char *want = mask_tokens(prefix, mask);
        return want ? drift_list_add(drift, path, what, want, why) : -ENOMEM;
}

/*
 * The bypass model from what the kernel has and the bypass state we kept:
 * subtree_control = kernel's minus the bypassed ones (those are
 * pass-through), bypass state kept where it still fits, dropped (as drift)
 * where the kernel changed under it.
 */
static int emu_load(Backend *b, BackendState *saved, Hierarchy **ret_model, Hierarchy **ret_kernel,
                    DriftList *drift, char **reterr_msg) {
        _cleanup_(hierarchy_freep) Hierarchy *model = NULL, *kernel = NULL;
        _cleanup_free_ CgMask *sc = NULL, *sb = NULL, *en = NULL, *zero = NULL;
        _cleanup_free_ bool *used = NULL, *threaded_children = NULL;
        KernelScan s = {};
        int r;

        r = kernel_scan(b->root_fd, b->root, &s, reterr_msg);
        if (r < 0)
                return r;

        sc = calloc(s.n, sizeof(CgMask));
        sb = calloc(s.n, sizeof(CgMask));
        en = calloc(s.n, sizeof(CgMask));
        zero = calloc(s.n, sizeof(CgMask));
        used = calloc(saved->n ? saved->n : 1, sizeof(bool));
        threaded_children = calloc(s.n, sizeof(bool));
        if (!sc || !sb || !en || !zero || !used || !threaded_children) {
                r = -ENOMEM;
                goto finish;
        }

        for (size_t i = 0; i < s.n; i++) {
                const KernelCgroup *kc = &s.cgroups[i];
                if (kc->gone)
                        continue;
                if (kc->subtree_bypass || kc->bypassed) {
                        r = backend_msg(reterr_msg, -EUCLEAN, "The cgroup '%s' below '%s' has controllers in "
                                        "bypass mode: this kernel has the bypass series; use the native backend",
                                        kc->path, b->root);
                        goto finish;
                }
                if (kc->threaded && i > 0)
                        threaded_children[kc->parent] = true;
        }

        r = hierarchy_new(&kernel, RULES_STOCK, s.builtin);
        if (r >= 0)
                r = kernel_scan_import(&s, kernel, NULL, NULL, zero, true, reterr_msg);
        if (r < 0)
                goto finish;

        if (saved->n > 1)
                qsort(saved->cgroups, saved->n, sizeof(BackendStateCgroup), state_cgroup_cmp);
        CgMask threaded_mask = controller_threaded_mask(s.builtin);
        CgMask root_offer = s.builtin & ~controller_implicit_mask(s.builtin) & ~controller_inhibit_mask(s.builtin);

        for (size_t i = 0; i < s.n && r >= 0; i++) {
                const KernelCgroup *kc = &s.cgroups[i];
                BackendStateCgroup key = { .path = kc->path };
                const BackendStateCgroup *st;
                CgMask want_sb = 0, want_en = 0, offer, tmask = kc->threaded ? threaded_mask : CGMASK_ALL;

                if (kc->gone)
                        continue;
                st = saved->n ? bsearch(&key, saved->cgroups, saved->n, sizeof(BackendStateCgroup), state_cgroup_cmp) : NULL;
                if (st) {
                        used[st - saved->cgroups] = true;
                        want_sb = st->subtree_bypass;
                        want_en = st->enable_ss_mask;
                }
                if (i == 0)
                        offer = root_offer;
                else
                        offer = (sc[kc->parent] | sb[kc->parent]) & tmask;

                en[i] = i == 0 ? 0 : want_en & sb[kc->parent] & tmask;
                if (want_en & ~en[i])
                        r = drift_masks(drift, kc->path, "cgroup.controllers", '+', want_en & ~en[i],
                                        "the parent no longer bypasses it");

                sb[i] = want_sb & offer;
                if (r >= 0 && (want_sb & ~sb[i]))
                        r = drift_masks(drift, kc->path, "bypass", '#', want_sb & ~sb[i],
                                        "the cgroup no longer has it");
                /* decision (a) and cgroup_can_be_thread_root(): processes or threaded children allow no domain bypass */
                if (r >= 0 && i > 0 && (kc->nr_procs || threaded_children[i]) && (sb[i] & ~threaded_mask)) {
                        r = drift_masks(drift, kc->path, "bypass", '#', sb[i] & ~threaded_mask,
                                        kc->nr_procs ? "the cgroup has processes" : "the cgroup has threaded children");
                        sb[i] &= threaded_mask;
                }
                sc[i] = kc->subtree_control & ~sb[i];
        }
        for (size_t j = 0; j < saved->n && r >= 0; j++)
                if (!used[j])
                        r = drift_list_add(drift, saved->cgroups[j].path, "cgroup", "exists with bypass state", "");
        if (r < 0)
                goto finish;

        r = hierarchy_new(&model, RULES_BYPASS, s.builtin);
        if (r >= 0)
                r = kernel_scan_import(&s, model, sc, sb, en, false, reterr_msg);
        if (r < 0)
                goto finish;

        *ret_model = TAKE_PTR(model);
        *ret_kernel = TAKE_PTR(kernel);
finish:
        kernel_scan_done(&s);
        return r;
}

/* Load with @saved, swap in, reconcile. On a load failure nothing changes. */
static int emu_reload_with(Backend *b, BackendState *saved, char **reterr_msg) {
        Hierarchy *model = NULL, *kernel = NULL;
        DriftList drift = {};
        int r;

        r = emu_load(b, saved, &model, &kernel, &drift, reterr_msg);
        if (r < 0) {
                drift_list_done(&drift);
                return r;
        }
        hierarchy_free(b->model);
        b->model = model;
        hierarchy_free(emu(b)->kernel);
        emu(b)->kernel = kernel;
        emu(b)->resync = false;
        if (b->read_only) {
                /* what reconcile() would repair stays in the drift list */
                backend_set_drift(b, &drift);
                return 0;
        }

        r = reconcile(b, &drift, reterr_msg);
        if (r < 0)
                emu(b)->resync = true;
        backend_set_drift(b, &drift);
        return r;
}

static int emu_refresh(Backend *b, char **reterr_msg) {
        BackendState saved = {};
        int r;

        cgfs_dir_cache_done(&emu(b)->dirs);
        r = state_from_model(b->model, true, &saved);
        if (r < 0)
                return r;
        r = emu_reload_with(b, &saved, reterr_msg);
        state_done(&saved);
        return r;
}

/* Before an operation: if an earlier one left the kernel in doubt, reload first. */
static int emu_prepare(Backend *b) {
        _cleanup_free_ char *msg = NULL;
        int r;

        if (!emu(b)->resync)
                return 0;
        r = emu_refresh(b, &msg);
        if (r < 0)
                log_debug("Failed to reload the kernel's state: %s", strempty(msg));
        return r;
}

static const Hierarchy *emu_kernel_view(Backend *b) {
        /* after an operation the kernel may have refused in doubt, nothing is known to agree */
        return emu(b)->resync ? NULL : emu(b)->kernel;
}

static int emu_open(Backend *b, const BackendOptions *opts, char **reterr_msg) {
        _cleanup_free_ char *where = NULL;
        bool writable;
        BackendState saved = {};
        int r;

        r = cgfs_check_cgroup2(b->root_fd, &writable);
        if (r < 0)
                return backend_msg(reterr_msg, r, "'%s' is not a cgroup2 mount", b->root);
        if (!writable && !b->read_only)
                return backend_msg(reterr_msg, -EACCES, "'%s' is not writable for us", b->root);
        b->data = calloc(1, sizeof(Emulated));
        if (!b->data)
                return -ENOMEM;
        emu(b)->dirs = (CgfsDirCache) CGFS_DIR_CACHE_INIT;

        if (asprintf(&where, "%s/%s", b->state_dir, EMU_STATE) < 0)
                return -ENOMEM;
        r = state_load(b->state_fd, b->state_dir, EMU_STATE, &saved, reterr_msg);
        if (r == -ENOENT)
                r = 0;
        else if (r >= 0 && !streq(saved.backend, "emulated"))
                r = backend_msg(reterr_msg, -EUCLEAN, "%s belongs to the %s backend", where, saved.backend);
        else if (r >= 0 && !streq(saved.root, b->root_real))
                r = backend_msg(reterr_msg, -EUCLEAN, "%s describes '%s', not '%s'", where, saved.root, b->root_real);
        if (r >= 0)
                r = emu_reload_with(b, &saved, reterr_msg);
        state_done(&saved);
        return r;
}

static void emu_done(Backend *b) {
        if (b->data) {
                hierarchy_free(emu(b)->kernel);
                cgfs_dir_cache_done(&emu(b)->dirs);
        }
        free(b->data);
        b->data = NULL;
}

static int emu_mkdir(Backend *b, const char *path, Reason *reterr_reason) {
        /* one operation on @path, which outlives it: no list to allocate, no copy (a cold apply makes thousands) */
        KOp op = { .type = KOP_MKDIR, .path = path };
        ModelTxn txn;
        int r;

        r = emu_prepare(b);
        if (r >= 0)
                r = backend_load_limits_above(b, path);
        if (r < 0)
                return r;
        r = model_txn_mkdir(b->model, path, &txn, reterr_reason);
        if (r < 0)
                return r;
        /* a new cgroup enables nothing: its parent's projection stays */
        r = kops_run(b, &(KOps) { .v = &op, .n = 1 });
        (void) model_txn_finish(&txn, &b->model, r);
        return r;
}

static int emu_rmdir(Backend *b, const char *path, Reason *reterr_reason) {
        _cleanup_free_ char *parent_path = NULL;
        KOps ops = {}, cleanup = {};
        ModelTxn txn;
        Cgroup *c, *parent;
        int r;

        r = emu_prepare(b);
        if (r < 0)
                return r;
        r = model_lookup(b->model, path, &c, reterr_reason);
        if (r < 0)
                return r;
        if (cgroup_parent(c)) {
                r = backend_cgroup_relpath(cgroup_parent(c), &parent_path);
                if (r < 0)
                        return r;
        }
        r = model_txn_rmdir(b->model, path, &txn, reterr_reason);
        if (r < 0)
                return r;

        r = kops_add(&ops, KOP_RMDIR, path, 0, NULL, NULL);
        if (r >= 0)
                r = kops_run(b, &ops);
        if (r < 0) {
                /* the kernel keeps it (processes we did not know of?): put it back and reload in the kernel's order */
                (void) model_txn_rollback(&txn, b->model);
                emu(b)->resync = true;
                (void) emu_prepare(b);
                goto finish;
        }
        model_txn_commit(&txn, &b->model);

        /* the parent may no longer need a pass-through; failing to drop it is drift, not failure */
        if (hierarchy_lookup(b->model, parent_path, &parent) >= 0 &&
            (chain(b, parent, NULL, 0, &cleanup) < 0 || kops_run(b, &cleanup) < 0))
                emu(b)->resync = true;
finish:
        model_txn_done(&txn);
        kops_done(&ops);
        kops_done(&cleanup);
        return r;
}

static int emu_write_control(Backend *b, const char *path, const char *file, const char *value,
                             Reason *reterr_reason) {
        KOps ops = {};
        ModelTxn txn;
        Cgroup *c;
        int r;

        r = model_txn_write(b->model, path, file, value, &txn, reterr_reason);
        if (r < 0)
                return r;
        r = hierarchy_lookup(b->model, path, &c);
        if (r >= 0 && txn.kind != TXN_NONE) {
                if (streq(file, "cgroup.subtree_control"))
                        r = chain(b, c, NULL, 0, &ops);
                else
                        /* only the parent's need changes: the child's own kernel state is as before */
                        r = chain(b, cgroup_parent(c), c, cgroup_get_enable_ss_mask(c) | kernel_sc(b, c), &ops);
        }
        if (r >= 0)
                r = kops_run(b, &ops);
        (void) model_txn_finish(&txn, &b->model, r);
        kops_done(&ops);
        return r;
}

/* cgroup.type, cgroup.max.*: the model decides, then the same write goes to the kernel */
static int emu_write_same(Backend *b, const char *path, const char *file, const char *value,
                          Reason *reterr_reason) {
        KOps ops = {};
        ModelTxn txn;
        int r;

        r = model_txn_write(b->model, path, file, value, &txn, reterr_reason);
        if (r < 0)
                return r;
        if (isempty(value)) {
                model_txn_done(&txn);
                return 0;
        }
        r = kops_add(&ops, KOP_WRITE, path, 0, file, value);
        if (r >= 0)
                r = kops_run(b, &ops);
        (void) model_txn_finish(&txn, &b->model, r);
        kops_done(&ops);
        return r;
}

static int emu_write(Backend *b, const char *path, const char *file, const char *value, Reason *reterr_reason) {
        KOps ops = {};
        Cgroup *c;
        int r;

        r = emu_prepare(b);
        if (r < 0)
                return r;
        if (streq(file, "cgroup.subtree_control") || streq(file, "cgroup.controllers"))
                return emu_write_control(b, path, file, value, reterr_reason);
        if (streq(file, "cgroup.type") || streq(file, "cgroup.max.depth") || streq(file, "cgroup.max.descendants"))
                return emu_write_same(b, path, file, value, reterr_reason);

        /* knobs and cgroup.procs: the model says whether the file is there, the kernel does the rest */
        r = model_lookup(b->model, path, &c, reterr_reason);
        if (r < 0)
                return r;
        r = cgroup_write(b->model, c, file, value, reterr_reason);
        if (r != -ENOSYS)
                return r;
        if (reterr_reason)
                *reterr_reason = REASON_NONE;
        r = kops_add(&ops, KOP_WRITE, path, 0, file, value);
        if (r >= 0)
                r = kops_run(b, &ops);
        kops_done(&ops);
        if (r >= 0 && (streq(file, "cgroup.procs") || streq(file, "cgroup.threads"))) {
                /* a process moved: the process counts of both models must follow */
                emu(b)->resync = true;
                (void) emu_prepare(b);
        }
        return r;
}

static int emu_read(Backend *b, const char *path, const char *file, char **ret) {
        Cgroup *c;
        int r;

        r = hierarchy_lookup(b->model, path, &c);
        if (r < 0)
                return r;
        /* pass-through levels have knobs in the kernel that the policy does not give them */
        if (!cgroup_has_file(b->model, c, file))
                return -ENOENT;
        if (streq(file, "cgroup.controllers") || streq(file, "cgroup.subtree_control") || streq(file, "debug.masks"))
                return cgroup_read(b->model, c, file, ret);
        return cgfs_read(b->root_fd, path, file, ret);
}

static int emu_chown(Backend *b, const char *path, uid_t uid, gid_t gid, char *const *files) {
        Cgroup *c;
        int r;

        r = hierarchy_lookup(b->model, path, &c);
        if (r < 0)
                return r;
        return cgfs_chown(b->root_fd, path, files, uid, gid);
}

static int emu_save(Backend *b) {
        BackendState st = {};
        int r;

        cgfs_dir_cache_done(&emu(b)->dirs);
        r = state_from_model(b->model, true, &st);
        if (r < 0)
                return r;
        /* no bypass state, and no file: its absence says the same to the loader (a cold --apply-once of
         * a configuration without bypass then makes two fsync()s fewer) */
        if (st.n == 0) {
                r = file_absent_at(b->state_fd, EMU_STATE);
                if (r != 0) {
                        state_done(&st);
                        return r < 0 ? r : 0;
                }
        }
        st.backend = strdup("emulated");
        st.root = strdup(b->root_real);
        r = st.backend && st.root ? state_save(b->state_fd, EMU_STATE, &st, true) : -ENOMEM;
        state_done(&st);
        return r;
}

const BackendVTable backend_emulated_vtable = {
        .open = emu_open,
        .done = emu_done,
        .refresh = emu_refresh,
        .mkdir = emu_mkdir,
        .rmdir = emu_rmdir,
        .write = emu_write,
        .read = emu_read,
        .chown = emu_chown,
        .save = emu_save,
        .kernel_view = emu_kernel_view,
};
