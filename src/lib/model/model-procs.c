/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Processes: migration vetting (kernel: cgroup_migrate_vet_dst(),
 * cgroup_attach_permissions()), populated accounting, cgroup.procs listings.
 * Every modeled process has one thread.
 */
#include "cgbypass/parse.h"
#include "model-internal.h"

void cg_update_populated(Cgroup *c, bool populated) {
        Cgroup *child = NULL;
        int adj = populated ? 1 : -1;

        do {
                bool was_populated = cg_is_populated(c);

                if (!child)
                        c->nr_procs += adj;
                else if (cg_is_threaded(child))
                        c->nr_populated_threaded_children += adj;
                else
                        c->nr_populated_domain_children += adj;

                if (was_populated == cg_is_populated(c))
                        break;
                child = c;
                c = c->parent;
        } while (c);
}

static void proc_set_cgroup(Proc *p, Cgroup *dst) {
        if (p->cgroup == dst)
                return;
        if (p->cgroup) {
                /* nr_procs counts processes; the kernel's counters flip on none <-> some */
                if (p->cgroup->nr_procs == 1)
                        cg_update_populated(p->cgroup, false);
                else
                        p->cgroup->nr_procs--;
        }
        if (dst) {
                if (dst->nr_procs == 0)
                        cg_update_populated(dst, true);
                else
                        dst->nr_procs++;
        }
        p->cgroup = dst;
}

/* kernel: cgroup_migrate_vet_dst(), with patch 003's subtree_bypass */
static int migrate_vet_dst(const Hierarchy *h, const Cgroup *dst, Reason *reterr) {
        if (!cg_is_valid_domain(h, dst->dom_cgrp)) {
                reason_set(reterr, REASON_INVALID_DOMAIN);
                return -EOPNOTSUPP;
        }
        if (cg_can_be_thread_root(h, dst) || cg_is_threaded(dst))
                return 0;
        /* no internal processes */
        if (cg_subtree_mask(dst)) {
                reason_set(reterr, REASON_HAS_PROCESSES);
                return -EBUSY;
        }
        return 0;
}

static Proc *proc_find(const Hierarchy *h, ProcId pid) {
        if (pid == 0 || pid > h->n_procs)
                return NULL;
        Proc *p = &h->procs[pid - 1];
        return p->cgroup ? p : NULL;
}

Cgroup *hierarchy_proc_cgroup(const Hierarchy *h, ProcId pid) {
        Proc *p = proc_find(h, pid);
        return p ? p->cgroup : NULL;
}

Proc *cg_proc_new(Hierarchy *h) {
        Proc *procs = realloc(h->procs, (h->n_procs + 1) * sizeof(Proc));
        if (!procs)
                return NULL;
        h->procs = procs;
        Proc *p = &h->procs[h->n_procs];
        *p = (Proc) { .id = (ProcId) (h->n_procs + 1) };
        h->n_procs++;
        h->n_alive++;
        return p;
}

int hierarchy_spawn(Hierarchy *h, Cgroup *dst, ProcId *ret, Reason *reterr_reason) {
        int r;

        /* it starts in the tracer's cgroup, outside the model: only the destination is vetted */
        r = migrate_vet_dst(h, dst, reterr_reason);
        if (r < 0)
                return r;
        if (h->n_procs >= UINT32_MAX - 1)
                return -EAGAIN;

        Proc *p = cg_proc_new(h);
        if (!p)
                return -ENOMEM;
        proc_set_cgroup(p, dst);
        if (ret)
                *ret = p->id;
        return 0;
}

int hierarchy_move(Hierarchy *h, ProcId pid, Cgroup *dst, bool threadgroup, Reason *reterr_reason) {
        Proc *p = proc_find(h, pid);
        int r;

        if (!p) {
                reason_set(reterr_reason, REASON_NO_SUCH_PROCESS);
                return -ESRCH;
        }

        /* kernel: cgroup_attach_permissions(); the caller is root, so permission passes */
        r = migrate_vet_dst(h, dst, reterr_reason);
        if (r < 0)
                return r;
        if (!threadgroup && p->cgroup->dom_cgrp != dst->dom_cgrp) {
                reason_set(reterr_reason, REASON_THREAD_MIGRATION);
                return -EOPNOTSUPP;
        }

        proc_set_cgroup(p, dst);
        return 0;
}

int hierarchy_kill(Hierarchy *h, ProcId pid) {
        Proc *p = proc_find(h, pid);

        if (!p)
                return -ESRCH;
        proc_set_cgroup(p, NULL);
        h->n_alive--;
        return 0;
}

int cgroup_get_procs(const Hierarchy *h, const Cgroup *c, bool threadgroup, ProcId **ret, size_t *ret_n) {
        size_t n = 0;

        /* kernel: __cgroup_procs_start(): all processes of a threaded subtree belong to its domain */
        if (threadgroup && cg_is_threaded(c))
                return -EOPNOTSUPP;

        ProcId *ids = malloc((h->n_alive ? h->n_alive : 1) * sizeof(ProcId));
        if (!ids)
                return -ENOMEM;
        for (size_t i = 0; i < h->n_procs; i++) {
                const Cgroup *pc = h->procs[i].cgroup;

                if (!pc)
                        continue;
                /* cgroup.procs of a domain also walks the threaded csets of its domain */
                if (pc == c || (threadgroup && cg_is_threaded(pc) && pc->dom_cgrp == c))
                        ids[n++] = h->procs[i].id;
        }
        *ret = ids;
        *ret_n = n;
        return 0;
}

/* kernel: cgroup_procs_write_start(): "kstrtoint(strstrip(buf), 0, &pid) || pid < 0" */
int cg_write_procs(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr) {
        _cleanup_free_ char *copy = strdup(buf);
        int pid;

        if (!copy)
                return -ENOMEM;
        if (kstrtoint(kstrstrip(copy), 0, &pid) < 0 || pid < 0) {
                reason_set(reterr, REASON_PARSE);
                return -EINVAL;
        }
        /* real pids mean nothing to the model; moves go through hierarchy_move() */
        reason_set(reterr, REASON_NOT_MODELED);
        return -ENOSYS;
}
