/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Thread mode: which cgroups are thread roots, valid or invalid domains, and
 * the switch to "threaded" (kernel: cgroup_enable_threaded()).
 */
#include "cgbypass/parse.h"
#include "model-internal.h"

/* kernel: cgroup_can_be_thread_root(), with patch 003's subtree_bypass */
bool cg_can_be_thread_root(const Hierarchy *h, const Cgroup *c) {
        if (cg_is_mixable(c))
                return true;
        if (cg_is_threaded(c))
                return false;
        if (c->nr_populated_domain_children)
                return false;
        if (cg_subtree_mask(c) & ~h->threaded_mask)
                return false;
        return true;
}

/* kernel: cgroup_is_thread_root(), with patch 003's subtree_bypass */
bool cg_is_thread_root(const Hierarchy *h, const Cgroup *c) {
        if (cg_is_threaded(c))
                return false;
        if (c->nr_threaded_children)
                return true;
        /* a domain with tasks and threaded controllers enabled is a thread root */
        if (cg_has_tasks(c) && (cg_subtree_mask(c) & h->threaded_mask))
                return true;
        return false;
}

/* kernel: cgroup_is_valid_domain() */
bool cg_is_valid_domain(const Hierarchy *h, const Cgroup *c) {
        if (cg_is_threaded(c))
                return false;
        while ((c = c->parent)) {
                if (!cg_is_mixable(c) && cg_is_thread_root(h, c))
                        return false;
                if (cg_is_threaded(c))
                        return false;
        }
        return true;
}

/* kernel: cgroup_type_show() */
CgroupType cgroup_get_type(const Hierarchy *h, const Cgroup *c) {
        if (cg_is_threaded(c))
                return CGROUP_TYPE_THREADED;
        if (!cg_is_valid_domain(h, c))
                return CGROUP_TYPE_DOMAIN_INVALID;
        if (cg_is_thread_root(h, c))
                return CGROUP_TYPE_DOMAIN_THREADED;
        return CGROUP_TYPE_DOMAIN;
}

/* kernel: cgroup_enable_threaded() */
static int enable_threaded(Hierarchy *h, Cgroup *c, Reason *reterr) {
        Cgroup *dom = c->parent->dom_cgrp;
        ControlSave save;
        int r;

        if (cg_is_threaded(c))
                return 0;

        /* decision (b): its bypassed and re-enabled domain controllers count like enabled ones */
        if (cg_is_populated(c) || ((cg_subtree_mask(c) | c->enable_ss_mask) & ~h->threaded_mask)) {
                reason_set(reterr, REASON_CANNOT_BE_THREADED);
                return -EOPNOTSUPP;
        }

        /* joining the parent's domain: it must be valid and able to be a thread root */
        if (!cg_is_valid_domain(h, dom) || !cg_can_be_thread_root(h, dom)) {
                reason_set(reterr, REASON_CANNOT_BE_THREADED);
                return -EOPNOTSUPP;
        }

        r = cg_save_control(h, c, &save);
        if (r < 0)
                return r;
        /* @c joins the parent's domain, with every threaded descendant */
        for (Cgroup *d = c; d; d = cgroup_next_descendant_pre(d, c))
                if (d == c || cg_is_threaded(d))
                        d->dom_cgrp = dom;
        r = cg_apply_control(h, &save);
        if (r >= 0)
                c->parent->nr_threaded_children++;
        cg_finalize_control(&save, r);
        if (r < 0)
                reason_set(reterr, r == -EEXIST ? REASON_EXISTS : r == -EBUSY ? REASON_CHILD_USES_IT : REASON_NONE);
        return r;
}

int cgroup_write_type(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason) {
        _cleanup_free_ char *copy = strdup(buf);

        if (!copy)
                return -ENOMEM;
        /* only the switch to threaded exists */
        if (!streq(kstrstrip(copy), "threaded")) {
                reason_set(reterr_reason, REASON_PARSE);
                return -EINVAL;
        }
        if (!c->parent) {
                /* cgroup.type does not exist on the root; cgroup_write() already said ENOENT */
                reason_set(reterr_reason, REASON_NO_SUCH_FILE);
                return -ENOENT;
        }
        return enable_threaded(h, c, reterr_reason);
}
