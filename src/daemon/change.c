/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One authorized request: vet it on a copy of its subtree, record it over the desired state, plan, apply, save. */
#include "cgbypass/cgpath.h"
#include "cgbypass/log.h"
#include "delegation-limits.h"
#include "manager.h"
#include "ownership.h"
#include "watch.h"

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
        r = hierarchy_lookup(h, req->cgroup, &c);
        if (r < 0) {
                *ret_reason = REASON_NO_SUCH_CGROUP;
                return r;
        }
        /* the write sees the cgroup's ancestors and subtree: a copy of those is enough */
        r = hierarchy_clone_scope(h, c, &copy);
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

/* Plan @cgroup and its subtree with @changes over the configuration: the subtree's entries, not all. */
static int plan_subtree(Manager *m, const char *cgroup, ClientChanges *changes, Plan **ret, PolicyErrors *pe) {
        const Hierarchy *h = backend_get_model(m->backend);
        DesiredSet subset = {};
        int r;

        for (;;) {
                _cleanup_free_ size_t *gone = NULL;
                size_t n_gone = 0;

                r = client_changes_merge_below(&m->desired, &m->desired_index, changes, h, cgroup, &subset, &gone,
                                               &n_gone);
                if (r < 0)
                        return r;
                if (n_gone == 0)
                        break;
                /* changes for cgroups below that are gone: forget them */
                desired_set_done(&subset);
                for (size_t i = n_gone; i-- > 0;)
                        client_changes_remove(changes, gone[i]);
        }
        r = policy_plan_scope(h, cgroup, subset.items, subset.n, ret, pe);
        desired_set_done(&subset);
        return r;
}

/* An applied request waiting for its record's commit, and what takes it back. */
struct ChangeCommit {
        ChangeCommit *next, *prev;
        Plan *plan;
        ClientChange before;    /* the entry before the request (path owned); */
        bool had;               /* ... if there was one */
        size_t ops;
        ChangeDone done;
        void *userdata;
};

static void commit_free(ChangeCommit *c) {
        plan_free(c->plan);
        free(c->before.path);
        free(c);
}

/* The entry of @path as before the request: the in-memory side of a take-back. */
static void restore_entry(Manager *m, const char *path, const ClientChange *before, bool had) {
        ClientChange *x = client_changes_find(&m->changes, path);

        if (!x)
                return;
        if (had) {
                char *keep = x->path;
                *x = *before;
                x->path = keep;
        } else
                client_changes_remove(&m->changes, (size_t) (x - m->changes.items));
}

static int on_commit(sd_event_source *s, void *userdata) {
        (void) manager_commit_changes(userdata);
        return 0;
}

int manager_commit_changes(Manager *m) {
        ChangeCommit *list = m->commits;
        int r;

        m->commit = sd_event_source_disable_unref(m->commit);
        if (!list && m->journal.n_batch == 0)
                return 0;
        m->commits = m->commits_last = NULL;
        m->n_commits = 0;
        r = change_journal_commit(&m->journal);
        if (r >= 0) {
                while (list) {
                        ChangeCommit *c = list;
                        list = c->next;
                        c->done(m, 0, &(Refusal) {}, c->ops, c->userdata);
                        commit_free(c);
                }
                if (change_journal_wants_compaction(&m->journal)) {
                        int q = change_journal_snapshot(&m->journal, &m->changes);
                        if (q < 0)
                                log_warning_errno(q, "Failed to compact the journal of client changes in '%s', "
                                                  "going on with it: %m", manager_state_dir(m));
                }
                return 0;
        }
        /* newest first: each was planned over the ones before it */
        ChangeCommit *last = list;
        size_t n = list ? 1 : 0;
        for (; last && last->next; n++)
                last = last->next;
        log_error_errno(r, "Failed to record %zu change(s) in '%s', taking them back: %m", n, manager_state_dir(m));
        while (last) {
                ChangeCommit *c = last;
                Refusal f = {};
                const char *path;

                last = c->prev;
                path = c->before.path;
                restore_entry(m, path, &c->before, c->had);
                (void) refusal_set_detail(&f, manager_take_back(m, c->plan, "the change") < 0 ?
                                          REFUSAL_NOT_RECORDED_LEFT : REFUSAL_NOT_RECORDED, NULL);
                c->done(m, r, &f, 0, c->userdata);
                refusal_done(&f);
                commit_free(c);
        }
        return r;
}

/* Queue @p's record; the caller is told by @done. Return: 0 or -errno (nothing queued then). */
static int commit_later(Manager *m, const char *path, Plan *p, const ClientChange *before, bool had,
                        ChangeDone done, void *userdata) {
        ChangeCommit *c;
        int r;

        c = calloc(1, sizeof(ChangeCommit));
        if (!c)
                return -ENOMEM;
        c->before = had ? *before : (ClientChange) {};
        c->before.path = strdup(path);
        if (!c->before.path) {
                free(c);
                return -ENOMEM;
        }
        r = change_journal_add(&m->journal, client_changes_find(&m->changes, path));
        if (r < 0) {
                free(c->before.path);
                free(c);
                return r;
        }
        c->had = had;
        c->plan = p;
        c->ops = p->n_ops;
        c->done = done;
        c->userdata = userdata;
        c->prev = m->commits_last;
        if (m->commits_last)
                m->commits_last->next = c;
        else
                m->commits = c;
        m->commits_last = c;
        m->n_commits++;
        if (m->n_commits >= MANAGER_COMMIT_MAX)
                return manager_commit_changes(m) < 0 ? 0 : 0;  /* told through @done either way */
        if (!m->commit) {
                /* after every message that is ready: they share the commit */
                r = sd_event_add_defer(m->event, &m->commit, on_commit, m);
                if (r >= 0)
                        r = sd_event_source_set_priority(m->commit, SD_EVENT_PRIORITY_IDLE);
                if (r < 0) {
                        m->commit = sd_event_source_disable_unref(m->commit);
                        (void) manager_commit_changes(m);
                }
        }
        return 0;
}

/* manager_change() without a loop, or the caller waits: the record committed at once. */
static void done_now(Manager *m, int r, const Refusal *f, size_t ops, void *userdata) {
        struct { int r; Refusal *f; size_t ops; } *out = userdata;

        out->r = r;
        out->ops = ops;
        if (r < 0)
                (void) refusal_set_detail(out->f, f->kind, f->detail);
}

int manager_change(Manager *m, const ChangeRequest *req, bool admin, uid_t uid, size_t *ret_ops,
                   Refusal *ret_refusal, ChangeDone done, void *userdata) {
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(ownership_before_done) OwnershipBefore owned = {};
        struct { int r; Refusal *f; size_t ops; } now = { .f = ret_refusal };
        ClientChange before = {};
        ClientChange *x;
        PolicyErrors pe = {};
        ApplyFailure f = {};
        Reason reason = REASON_NONE;
        const DelegateSpec *d;
        bool had, changed = false, hand_over, as_owner;
        Controller which;
        Snapshot before_signals;
        Cgroup *c;
        int r;

        /* children the owner made, state the owner wrote: the kernel's word first */
        (void) manager_refresh_for_change(m, req->cgroup, &before_signals);

        r = hierarchy_lookup(backend_get_model(m->backend), req->cgroup, &c);
        /* a delegation over its limit (native, emulated): the bus says TooManyCgroups (adopt_refusal()) */
        if (r < 0 || delegation_over_limit(m, req->cgroup)) {
                r = refusal_set_detail(ret_refusal, REFUSAL_NO_SUCH_CGROUP, NULL) ?: -ENOENT;
                goto finish;
        }
        /* in place, and put back on refusal: a copy of all client changes would cost with their number */
        x = client_changes_find(&m->changes, req->cgroup);
        had = x;
        if (x)
                before = *x;
        r = client_changes_set(&m->changes, req->cgroup, req->kind == CHANGE_SUBTREE, &req->change, admin, uid);
        if (r < 0)
                goto finish;
        changed = true;

        r = plan_subtree(m, req->cgroup, &m->changes, &p, &pe);
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

        /* inside a delegation, only files that appear need an owner; at its root, hand_over() checks the root's too */
        d = config_find_delegation(m->config, req->cgroup);
        hand_over = p->n_ops > 0 && (plan_may_add_files(p) || !d || streq(d->path, req->cgroup));
        /* (the sim makes them the owner's as it writes them: nothing to hand over after) */
        as_owner = hand_over && ownership_writes_as_owner(m, req->cgroup);
        if (hand_over && !as_owner)
                (void) ownership_before(m, req->cgroup, &owned);

        r = plan_apply(p, m->backend, &f);
        if (as_owner)
                ownership_writes_done(m);
        if (r < 0) {
                const PlanOp *op = &p->ops[f.index];
                _cleanup_free_ char *path = NULL;
                char buf[64];

                manager_log_apply_failure(p, r, &f);
                r = cgpath_absolute(op->path, &path) ?:
                    refusal_set_model(ret_refusal, f.reason, path, op->file, op_controller(op, buf, sizeof(buf))) ?: r;
                goto finish;
        }

        /* the backend's own state (a sim's later); the client change goes to the journal */
        r = manager_save_backend(m);
        if (r >= 0)
                r = commit_later(m, req->cgroup, p, &before, had, done && m->event ? done : done_now,
                                 done && m->event ? userdata : &now);
        if (r < 0) {
                log_error_errno(r, "Failed to record the change of %s in '%s', taking it back: %m", req->cgroup,
                                manager_state_dir(m));
                r = refusal_set_detail(ret_refusal, manager_take_back(m, p, "the change") < 0 ?
                                       REFUSAL_NOT_RECORDED_LEFT : REFUSAL_NOT_RECORDED, NULL) ?: r;
                goto finish;
        }
        changed = false;        /* the commit owns the way back now */
        TAKE_PTR(p);
        /* files the writes made appear below a delegation root are the owner's */
        if (hand_over && !as_owner)
                (void) ownership_sync(m, req->cgroup, &owned);
        /* the inotify events of the sim's own files, read here: else a loop iteration of their own before the commit */
        if (backend_get_type(m->backend) == BACKEND_SIM)
                watch_drain(m);
        if (done && m->event) {
                r = 1;
                goto finish;
        }
        r = manager_commit_changes(m) < 0 || now.r < 0 ? now.r : 0;
        if (r >= 0 && ret_ops)
                *ret_ops = now.ops;
finish:
        if (changed)
                restore_entry(m, req->cgroup, &before, had);
        manager_emit_changes(m, &before_signals);
        snapshot_done(&before_signals);
        policy_errors_done(&pe);
        return r;
}
