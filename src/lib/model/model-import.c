/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loading a hierarchy as found on a kernel. The state is legal on the kernel
 * by construction, so it is set directly; then the model's own derivations
 * (propagation, thread domains, populated counts) must reproduce exactly what
 * was observed, or the model and the kernel disagree.
 */
#include "model-internal.h"

int hierarchy_import(Hierarchy *h, const char *path, bool threaded, CgMask subtree_control,
                     CgMask subtree_bypass, CgMask enable_ss_mask, unsigned nr_procs, ProcId *ret_first) {
        return hierarchy_import_cgroup(h, path, threaded, subtree_control, subtree_bypass, enable_ss_mask,
                                       nr_procs, ret_first, NULL);
}

int hierarchy_import_cgroup(Hierarchy *h, const char *path, bool threaded, CgMask subtree_control,
                            CgMask subtree_bypass, CgMask enable_ss_mask, unsigned nr_procs, ProcId *ret_first,
                            Cgroup **ret) {
        return hierarchy_import_below(h, NULL, path, threaded, subtree_control, subtree_bypass, enable_ss_mask,
                                      nr_procs, ret_first, ret);
}

int hierarchy_import_below(Hierarchy *h, Cgroup *parent_hint, const char *path, bool threaded,
                           CgMask subtree_control, CgMask subtree_bypass, CgMask enable_ss_mask,
                           unsigned nr_procs, ProcId *ret_first, Cgroup **ret) {
        Cgroup *c;
        int r;

        if (h->rules == RULES_STOCK && (subtree_bypass || enable_ss_mask))
                return -EUCLEAN;
        if (subtree_control & subtree_bypass)
                return -EUCLEAN;

        /* one walk to the parent, not a lookup that fails and a second walk: every cgroup of a load comes here */
        Cgroup *parent;
        const char *name;
        r = cg_path_parent_at(h, parent_hint, path, &parent, &name);
        if (r == -EEXIST)
                c = h->root;    /* the root: its state is imported, nothing is made */
        else if (r < 0)
                return r;
        else if (cg_child_find(h, parent, name))
                return -EEXIST;
        else if (cgroup_has_file(h, parent, name))
                return -ENOTDIR;
        else {
                /* no rules apply: the kernel already made this cgroup */
                r = cg_create(h, parent, name, &c);
                if (r < 0)
                        return r;
        }

        if (threaded) {
                if (!c->parent || !cg_can_be_thread_root(h, c->parent->dom_cgrp))
                        return -EUCLEAN;
                c->dom_cgrp = c->parent->dom_cgrp;
                c->parent->nr_threaded_children++;
        }
        if (c->parent && (enable_ss_mask & ~c->parent->subtree_bypass))
                return -EUCLEAN;
        c->enable_ss_mask = enable_ss_mask;
        c->subtree_control = subtree_control;
        c->subtree_bypass = subtree_bypass;
        cg_propagate_control(h, c);
        if (c->subtree_control != subtree_control || c->subtree_bypass != subtree_bypass)
                return -EUCLEAN;

        for (unsigned i = 0; i < nr_procs; i++) {
                /* placed without vetting: the kernel already accepted them */
                Proc *p = cg_proc_new(h);
                if (!p)
                        return -ENOMEM;
                if (i == 0 && ret_first)
                        *ret_first = p->id;
                if (c->nr_procs == 0)
                        cg_update_populated(c, true);
                else
                        c->nr_procs++;
                p->cgroup = c;
        }
        if (ret)
                *ret = c;
        return 0;
}
