/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One authorized request: vet it on a copy, record it over the desired state, plan, apply, save. */
#include "cgbypass/cgpath.h"
#include "cgbypass/log.h"
#include "manager.h"
#include "ownership.h"

/*
 * What the kernel says to the request's write alone, on a copy of the model:
 * the words for a refusal. For a change of several controllers, the first
 * one the kernel refuses (the others applied on the copy first, as the
 * planner does).
 */
static int vet_write(const Hierarchy *h, const ChangeRequest *req, Reason *ret_reason, Controller *ret_controller) {
        _cleanup_(hierarchy_freep) Hierarchy *copy = NULL;
        Reason reason = REASON_NONE;
        Cgroup *c;
        int r;

        *ret_controller = _CONTROLLER_INVALID;
        r = hierarchy_clone(h, &copy);
        if (r < 0)
                return r;
        r = hierarchy_lookup(copy, req->cgroup, &c);
        if (r < 0) {
                *ret_reason = REASON_NO_SUCH_CGROUP;
                return r;
        }
        r = cgroup_write(copy, c, req->file, req->value, &reason);
        if (r >= 0 || r == -ENOMEM)
                return r;
        FOREACH_CONTROLLER_IN(x, req->controllers) {
                char one[64];
                int q;

                (void) snprintf(one, sizeof(one), "%c%s",
                                req->change.enable & CGMASK(x) ? '+' : req->change.bypass & CGMASK(x) ? '#' : '-',
                                controller_to_string(x));
                reason = REASON_NONE;
                q = cgroup_write(copy, c, req->file, one, &reason);
                if (q < 0) {
                        *ret_reason = reason;
                        *ret_controller = x;
                        return q;
                }
        }
        *ret_reason = reason;
        return r;
}

static const char *op_controller(const PlanOp *op, char *buf, size_t size) {
        /* the first token of the write: "+cpu #io" -> "cpu"; a controller file's value names none */
        if (op->if_differs || !op->value || !op->value[0])
                return NULL;
        (void) snprintf(buf, size, "%s", op->value + 1);
        buf[strcspn(buf, " ")] = '\0';
        return buf;
}

/* Plan @cgroup and its subtree with @changes over the configuration. */
static int plan_subtree(Manager *m, const char *cgroup, ClientChanges *changes, Plan **ret, PolicyErrors *pe) {
        const Hierarchy *h = backend_get_model(m->backend);
        DesiredSet subset = {};
        int r;

        for (;;) {
                _cleanup_free_ size_t *gone = NULL;
                size_t n_gone = 0;

                r = client_changes_merge(&m->desired, changes, h, cgroup, &subset, &gone, &n_gone);
                if (r < 0)
                        return r;
                if (n_gone == 0)
                        break;
                /* changes for cgroups below that are gone: forget them */
                desired_set_done(&subset);
                for (size_t i = n_gone; i-- > 0;)
                        client_changes_remove(changes, gone[i]);
        }
        r = policy_plan(h, subset.items, subset.n, ret, pe);
        desired_set_done(&subset);
        return r;
}

int manager_change(Manager *m, const ChangeRequest *req, bool admin, uid_t uid, size_t *ret_ops,
                   Refusal *ret_refusal) {
        _cleanup_(plan_freep) Plan *p = NULL;
        ClientChanges next = {};
        PolicyErrors pe = {};
        ApplyFailure f = {};
        Reason reason = REASON_NONE;
        Controller which;
        Snapshot before;
        Cgroup *c;
        int r;

        /* children the owner made, state the owner wrote: the kernel's word first */
        (void) manager_refresh_for(m, req->cgroup, &before);

        r = hierarchy_lookup(backend_get_model(m->backend), req->cgroup, &c);
        if (r < 0) {
                r = refusal_set_detail(ret_refusal, REFUSAL_NO_SUCH_CGROUP, NULL) ?: -ENOENT;
                goto finish;
        }
        r = client_changes_copy(&m->changes, &next);
        if (r < 0)
                goto finish;
        r = client_changes_set(&next, req->cgroup, req->kind == CHANGE_SUBTREE, &req->change, admin, uid);
        if (r < 0)
                goto finish;

        r = plan_subtree(m, req->cgroup, &next, &p, &pe);
        if (r == -EINVAL) {
                /* a refusal: the kernel's own words for it, from a copy of the model */
                int vet = vet_write(backend_get_model(m->backend), req, &reason, &which);
                if (vet == -ENOMEM)
                        r = vet;
                else if (vet < 0)
                        r = refusal_set_model(ret_refusal, reason, req->cgroup, req->file,
                                              which >= 0 ? controller_to_string(which) : req->names) ?: vet;
                else
                        r = refusal_set_detail(ret_refusal, REFUSAL_BREAKS_BELOW,
                                               pe.n > 0 ? pe.errors[0].message : "?") ?: -EBUSY;
                goto finish;
        }
        if (r < 0)
                goto finish;

        r = plan_apply(p, m->backend, &f);
        if (r < 0) {
                const PlanOp *op = &p->ops[f.index];
                _cleanup_free_ char *path = NULL;
                char buf[64];

                manager_log_apply_failure(p, r, &f);
                r = cgpath_absolute(op->path, &path) ?:
                    refusal_set_model(ret_refusal, f.reason, path, op->file, op_controller(op, buf, sizeof(buf))) ?: r;
                goto finish;
        }

        r = manager_save_state(m, NULL, &next);
        if (r < 0) {
                log_error_errno(r, "Failed to record the change of %s in '%s', taking it back: %m", req->cgroup,
                                manager_state_dir(m));
                r = refusal_set_detail(ret_refusal, manager_take_back(m, p, "the change") < 0 ?
                                       REFUSAL_NOT_RECORDED_LEFT : REFUSAL_NOT_RECORDED, NULL) ?: r;
                goto finish;
        }

        client_changes_done(&m->changes);
        m->changes = next;
        next = (ClientChanges) {};
        /* files the writes made appear below a delegation root are the owner's */
        if (p->n_ops > 0)
                (void) ownership_sync(m, req->cgroup);
        if (ret_ops)
                *ret_ops = p->n_ops;
        r = 0;
finish:
        manager_emit_changes(m, &before);
        snapshot_done(&before);
        client_changes_done(&next);
        policy_errors_done(&pe);
        return r;
}
