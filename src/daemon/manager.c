/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <systemd/sd-daemon.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/log.h"
#include "adopt.h"
#include "callers.h"
#include "delegation.h"
#include "delegation-limits.h"
#include "ownership.h"
#include "manager.h"
#include "polkit.h"
#include "runtime-delegations.h"
#include "request.h"
#include "watch.h"

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        manager_flush(m);
        reload_calls_done(&m->reloads);
        read_views_done(&m->views);
        strv_freep(&m->over_limit);
        strv_freep(&m->owner_retry);
        watches_done(&m->watches);
        polkit_queries_done(&m->queries);
        sd_bus_slot_unref(m->callers_gone);
        caller_cache_done(&m->callers);
        bus_loop_detach(&m->bus_loop);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        backend_free(m->backend);
        client_changes_done(&m->changes);
        change_journal_done(&m->journal);
        desired_index_done(&m->desired_index);
        desired_set_done(&m->desired);
        config_free(m->config);
        free(m);
        return NULL;
}

int manager_new(const ManagerOptions *o, Manager **ret) {
        Manager *m = calloc(1, sizeof(Manager));
        if (!m)
                return -ENOMEM;
        m->options = *o;
        m->watches.fd = -1;
        *ret = m;
        return 0;
}

int manager_read_config(Manager *m, Config **ret, DesiredSet *ret_desired, ConfigErrors *errs) {
        _cleanup_(config_freep) Config *c = NULL;
        DesiredSet d = {};
        size_t before = config_errors_count(errs);
        int r;

        r = config_load(m->options.config_file ?: CONFIG_MAIN_FILE, m->options.config_dir ?: CONFIG_CONF_DIR,
                        &c, errs);
        if (r < 0)
                return r;
        /* command-line options override [daemon] */
        if (m->options.backend)
                (void) config_override_daemon(c, "backend", m->options.backend, "--backend", errs);
        if (m->options.cgroup_root)
                (void) config_override_daemon(c, "cgroup-root", m->options.cgroup_root, "--cgroup-root", errs);
        if (m->options.state_directory)
                (void) config_override_daemon(c, "state-directory", m->options.state_directory,
                                              "--state-directory", errs);
        if (config_errors_count(errs) > before)
                return -EINVAL;
        /* AddDelegation's, as if [delegate] sections: the configuration may not conflict with them */
        r = runtime_delegations_merge(c, errs);
        if (r < 0)
                return r;

        r = desired_from_config(c, &d);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        *ret_desired = d;
        return 0;
}

int manager_load_config(Manager *m, ConfigErrors *errs) {
        DesiredSet d = {};
        Config *c;
        int r;

        r = manager_read_config(m, &c, &d, errs);
        if (r < 0)
                return r;
        desired_set_done(&m->desired);
        config_free(m->config);
        m->desired = d;
        m->config = c;
        manager_gone_look_again(m);
        return 0;
}

static void on_disagreement(const char *op, int kernel_result, int model_result, void *userdata) {
        log_error("BUG: the kernel and the model disagree on '%s': kernel %s, model %s. "
                  "Please report this with the operation.",
                  op, kernel_result < 0 ? strerror(-kernel_result) : "success",
                  model_result < 0 ? strerror(-model_result) : "success");
}

const char *manager_state_dir(Manager *m) {
        return m->config->daemon.state_directory;
}

static int load_client_changes(Manager *m) {
        ClientChanges c = {};
        int r;

        r = change_journal_load(&m->journal, manager_state_dir(m), &c);
        if (r == -EBADMSG) {
                /* the offline modes change nothing here: the next change of a client replaces it */
                log_warning("'%s/%s' is malformed; going on without client changes.", manager_state_dir(m),
                            CLIENT_CHANGES_FILE_NAME);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read the client changes in '%s': %m", manager_state_dir(m));
        (void) client_changes_prune(&c, m->config);
        client_changes_done(&m->changes);
        m->changes = c;
        runtime_delegations_forget_gone(m);
        return 0;
}

static void log_backend_drift(Manager *m);

int manager_open_backend(Manager *m) {
        const BackendOptions opts = { .read_only = m->options.read_only };
        _cleanup_free_ char *why = NULL;
        Backend *b;
        int r;

        r = backend_open_with(m->config->daemon.backend, m->config->daemon.cgroup_root,
                              m->config->daemon.state_directory, &opts, &b, &why);
        if (r < 0)
                return log_error_errno(r, "Failed to open the %s backend on '%s': %s",
                                       backend_type_to_string(m->config->daemon.backend),
                                       m->config->daemon.cgroup_root, why ? why : strerror(-r));
        backend_set_disagreement_handler(b, on_disagreement, m);
        backend_free(m->backend);
        m->backend = b;
        log_backend_drift(m);
        if (!m->options.read_only)
                delegation_limits_recheck(m);
        log_debug("Using the %s backend on '%s'.", backend_type_to_string(backend_get_type(b)),
                  backend_get_root(b));
        return load_client_changes(m);
}

bool manager_has_cgroup(const Manager *m, const char *path) {
        Cgroup *c;
        return hierarchy_lookup(backend_get_model(m->backend), path, &c) >= 0;
}

char *manager_known_ancestor(const Manager *m, const char *path) {
        char *top;
        Cgroup *c;

        if (!path)
                return NULL;
        top = strdup(path);
        while (top && !cgpath_is_root(top) && hierarchy_lookup(backend_get_model(m->backend), top, &c) < 0) {
                char *parent = NULL;

                (void) cgpath_parent(top, &parent);
                free(top);
                top = parent;
        }
        return top;
}

/* ---- learning what changed behind our back ---- */

/* Client changes of cgroups that are gone (their owners removed them) go too. */
static bool change_is_gone(Manager *m, const char *path) {
        Cgroup *c;

        if (hierarchy_lookup(backend_get_model(m->backend), path, &c) >= 0)
                return false;
        for (size_t j = 0; j < m->desired.n; j++)
                if (streq(m->desired.items[j].path, path) && m->desired.items[j].create)
                        return false;   /* the next apply makes it again */
        return true;
}

static void forget_gone_changes(Manager *m) {
        bool dropped = false, any = false;
        int r;

        for (size_t i = 0; i < m->changes.n && !any; i++)
                any = change_is_gone(m, m->changes.items[i].path);
        if (!any)
                return;
        /* requests still committing keep their entries until they are told */
        (void) manager_commit_changes(m);
        for (size_t i = m->changes.n; i-- > 0;) {
                const char *path = m->changes.items[i].path;

                if (!change_is_gone(m, path))
                        continue;
                log_info("Forgetting the client change of %s: the cgroup is gone.", path);
                client_changes_remove(&m->changes, i);
                dropped = true;
        }
        if (dropped) {
                r = manager_save_changes(m, &m->changes);
                if (r < 0)
                        log_warning_errno(r, "Failed to save the client changes in '%s', ignoring: %m",
                                          manager_state_dir(m));
        }
}

/* What the backend's last open or refresh repaired, and what it left alone (an owner's files in a sim). */
static void log_backend_drift(Manager *m) {
        size_t n;
        const BackendDrift *d = backend_get_drift(m->backend, &n);

        for (size_t i = 0; i < n; i++) {
                char q[REQUEST_QUOTE_SIZE];
                const char *path = streq(d[i].path, ".") ? "" : d[i].path;

                if (d[i].left_alone)
                        log_notice("Left alone in /%s: '%s', a %s that cgbypassd did not make.", path,
                                   request_quote(d[i].found, q), d[i].what);
                else
                        log_notice("Drift fixed: /%s %s: expected '%s', found '%s'.", path, d[i].what,
                                   d[i].expected, d[i].found);
        }
}

/*
 * Client changes and run-time delegations of cgroups that are gone. Only a
 * cgroup that leaves the model (its epoch), or a new configuration or desired
 * state (manager_gone_look_again()), can make one gone: a request on a
 * quiet hierarchy does not look at each of them.
 */
static void forget_gone(Manager *m) {
        if (m->gone_looked && m->gone_epoch == hierarchy_epoch(backend_get_model(m->backend)))
                return;
        forget_gone_changes(m);
        runtime_delegations_forget_gone(m);
        m->gone_epoch = hierarchy_epoch(backend_get_model(m->backend));
        m->gone_looked = true;
}

void manager_gone_look_again(Manager *m) {
        m->gone_looked = false;
}

/*
 * @full: backend_refresh(): native and emulated re-read the whole kernel, a
 * sim re-renders its directory from its model. A sim's model is its kernel:
 * between reloads, only what owners do in their delegations (mkdir, rmdir)
 * is news; re-rendering on every request would race with them and undo
 * their rmdir.
 */
int manager_refresh_quiet(Manager *m, bool full, const char *scope, char **reterr_why) {
        _cleanup_free_ char *why = NULL;
        int r;

        r = adopt_in_delegations(m, scope);
        if (r < 0)
                log_warning_errno(r, "Failed to look for cgroups made in delegations, ignoring: %m");
        if (!full) {
                forget_gone(m);
                return 0;
        }
        m->rereads++;
        r = backend_refresh(m->backend, &why);
        if (r < 0) {
                if (!m->refresh_warned)
                        log_warning_errno(r, "Failed to re-read the hierarchy, going on with what cgbypassd knows: %s",
                                          why ? why : strerror(-r));
                m->refresh_warned = true;
                if (reterr_why)
                        *reterr_why = TAKE_PTR(why);
                return r;
        }
        m->refresh_warned = false;
        forget_gone(m);
        log_backend_drift(m);
        delegation_limits_recheck(m);
        return 0;
}

/*
 * Before serving a call on @scope (NULL: everything): a snapshot of what may
 * change into @before, then the refresh. A sim learns what owners did in
 * the delegations below @scope (adopt_in_delegations()); native and emulated read
 * the kernel's files of @scope's subtree, and the whole hierarchy only when
 * that differs from what they left.
 */
int manager_refresh_for(Manager *m, const char *scope, Snapshot *before) {
        /* what the refresh may change (adopt_in_delegations()): that cgroup's subtree */
        _cleanup_free_ char *top = manager_known_ancestor(m, scope);
        bool whole = false;

        /* a delegation over its limit is not read again for its requests: they are refused */
        if (backend_get_type(m->backend) != BACKEND_SIM && !delegation_over_limit(m, scope))
                whole = !top || backend_check_below(m->backend, top) <= 0;
        manager_snapshot_for_signals(m, whole ? NULL : top, before);
        return manager_refresh_quiet(m, whole, scope, NULL);
}

int manager_refresh_for_change(Manager *m, const char *scope, Snapshot *before) {
        /*
         * A sim's directory changes by the daemon's writes and by the owners' mkdir and
         * rmdir alone, which the watches report: with every delegated cgroup watched and
         * the events taken in, the adoption scan would find nothing. Where a cgroup can
         * appear unseen (no watch on it, no inotify), it scans as before.
         */
        if (backend_get_type(m->backend) == BACKEND_SIM && watch_catch_up(m) > 0) {
                _cleanup_free_ char *top = manager_known_ancestor(m, scope);

                manager_snapshot_for_signals(m, top, before);
                return 0;
        }
        return manager_refresh_for(m, scope, before);
}

int manager_refresh(Manager *m, const char *scope) {
        Snapshot before;
        int r;

        r = manager_refresh_for(m, scope, &before);
        manager_emit_changes(m, &before);
        snapshot_done(&before);
        return r;
}

/* ---- the whole desired state: configuration and client changes ---- */

static void remove_changes(ClientChanges *c, const bool *drop) {
        for (size_t i = c->n; i-- > 0;)
                if (drop[i])
                        client_changes_remove(c, i);
}

/*
 * Plan @desired with @changes over it. Client changes for cgroups that are
 * gone, or that the state cannot reach any more (the configuration changed
 * under them), are dropped from @changes, each logged; the configuration's
 * own problems are errors.
 */
static int plan_with(Manager *m, const DesiredSet *desired, ClientChanges *changes, Plan **ret, ConfigErrors *errs) {
        const Hierarchy *h = backend_get_model(m->backend);

        for (;;) {
                _cleanup_free_ size_t *gone = NULL;
                _cleanup_free_ bool *drop = NULL;
                PolicyErrors pe = {};
                DesiredSet merged = {};
                bool config_problem = false, dropped = false;
                size_t n_gone = 0;
                int r;

                /* without client changes the merge is a copy of @desired: 10,000 items to allocate and touch */
                const DesiredSet *want = desired;
                if (changes->n > 0) {
                        r = client_changes_merge(desired, changes, h, NULL, &merged, &gone, &n_gone);
                        if (r < 0)
                                return r;
                        want = &merged;
                }
                drop = calloc(changes->n + 1, sizeof(bool));
                if (!drop) {
                        desired_set_done(&merged);
                        return -ENOMEM;
                }
                if (n_gone > 0) {
                        for (size_t i = 0; i < n_gone; i++) {
                                log_info("Forgetting the client change of %s: the cgroup is gone.",
                                         changes->items[gone[i]].path);
                                drop[gone[i]] = true;
                        }
                        desired_set_done(&merged);
                        remove_changes(changes, drop);
                        continue;
                }

                r = policy_plan(h, want->items, want->n, ret, &pe);
                desired_set_done(&merged);
                if (r >= 0) {
                        /* a mkdir below a cgroup whose limits the scan left unread: plan again knowing them */
                        int k = plan_load_limits(*ret, m->backend);
                        if (k != 0)
                                *ret = plan_free(*ret);
                        if (k > 0) {
                                policy_errors_done(&pe);
                                continue;
                        }
                        if (k < 0)
                                r = k;
                }
                if (r != -EINVAL) {
                        policy_errors_done(&pe);
                        return r;
                }
                for (size_t i = 0; i < pe.n; i++)
                        if (pe.errors[i].origin.file != client_change_origin)
                                config_problem = true;
                for (size_t i = 0; i < pe.n; i++) {
                        const PolicyError *e = &pe.errors[i];
                        if (config_problem && e->origin.file != client_change_origin) {
                                ConfigLocation loc = { .file = e->origin.file, .line = e->origin.line };
                                if (config_errors_add(errs, &loc, "%s", e->message) < 0)
                                        r = -ENOMEM;
                        } else if (!config_problem && e->origin.line >= 1 && e->origin.line <= changes->n) {
                                log_warning("Dropping the client change of %s: %s",
                                            changes->items[e->origin.line - 1].path, e->message);
                                drop[e->origin.line - 1] = true;
                                dropped = true;
                        }
                }
                policy_errors_done(&pe);
                if (config_problem || !dropped)
                        return r;
                remove_changes(changes, drop);
        }
}

int manager_plan(Manager *m, Plan **ret, ConfigErrors *errs) {
        int r = plan_with(m, &m->desired, &m->changes, ret, errs);
        return r < 0 ? r : plan_drop_in_sync(*ret, m->backend);
}

int manager_log_drift(Manager *m) {
        DesiredSet applied = {}, merged = {};
        ClientChanges saved = {};
        Drift *d;
        size_t n;
        int r;

        /*
         * Drift is what changed behind our back since the last apply: compare with
         * the applied configuration and the client changes as saved, not with the
         * configuration now (a new configuration is no drift).
         */
        r = state_file_load(m->config->daemon.state_directory, &applied);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_warning_errno(r, "Failed to read the applied state in '%s', ignoring: %m",
                                         m->config->daemon.state_directory);
        ChangeJournal journal = {};
        if (change_journal_load(&journal, manager_state_dir(m), &saved) < 0)
                saved = (ClientChanges) {};     /* load_client_changes() said so already */
        change_journal_done(&journal);
        /* as in plan_with(): no client change, no copy */
        const DesiredSet *want = &applied;
        r = 0;
        if (saved.n > 0) {
                r = client_changes_merge(&applied, &saved, NULL, NULL, &merged, NULL, NULL);
                want = &merged;
        }
        if (r >= 0)
                r = policy_drift(backend_get_model(m->backend), want->items, want->n, &d, &n);
        desired_set_done(&merged);
        client_changes_done(&saved);
        desired_set_done(&applied);
        if (r < 0)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                if (!d[i].file)
                        log_notice("Drift: %s does not exist; the configuration wants it.", d[i].path);
                else
                        log_notice("Drift: %s %s %s: expected %s, found %s.", d[i].path, d[i].file,
                                   controller_to_string(d[i].controller), d[i].expected, d[i].found);
        }
        drift_free_array(d, n);
        return (int) n;
}

void manager_log_apply_failure(const Plan *p, int r, const ApplyFailure *f) {
        const PlanOp *op = &p->ops[f->index];

        log_error_errno(r, "Failed to %s %s%s%s%s%s: %m. %zu operation(s) before it undone.",
                        op->type == PLAN_OP_MKDIR ? "mkdir" : "write", op->path,
                        op->file ? "/" : "", strempty(op->file), op->value ? " " : "",
                        strempty(op->value), f->undone);
        if (f->undo_error < 0)
                log_error_errno(f->undo_error, "Failed to undo operation %zu (%s %s): %m. "
                                "The hierarchy is left between the old and the new state.",
                                f->undo_index, p->ops[f->undo_index].path, strempty(p->ops[f->undo_index].file));
}

static void save_backend_now(Manager *m) {
        int r = backend_save(m->backend);
        if (r < 0)
                log_warning_errno(r, "Failed to save the simulated hierarchy in '%s'; a restart may lose its "
                                  "last changes (client changes are kept): %m", manager_state_dir(m));
}

static int on_sim_save_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->sim_save = sd_event_source_disable_unref(m->sim_save);
        save_backend_now(m);
        return 0;
}

void manager_flush(Manager *m) {
        (void) manager_commit_changes(m);
        if (!m->sim_save)
                return;
        m->sim_save = sd_event_source_disable_unref(m->sim_save);
        save_backend_now(m);
}

/*
 * A sim's state stands for a kernel's memory: saving it (the whole model)
 * waits MANAGER_SIM_SAVE_DELAY_USEC, after the reply is on its way, and the
 * requests of that time share one save. What a restart must keep of a
 * request is in client-changes, written before the reply.
 */
static int save_backend(Manager *m) {
        int r;

        if (backend_get_type(m->backend) != BACKEND_SIM || !m->event)
                return backend_save(m->backend);
        if (m->sim_save)
                return 0;
        r = sd_event_add_time_relative(m->event, &m->sim_save, CLOCK_MONOTONIC, MANAGER_SIM_SAVE_DELAY_USEC, 0,
                                       on_sim_save_timer, m);
        if (r < 0) {
                m->sim_save = sd_event_source_disable_unref(m->sim_save);
                return backend_save(m->backend);
        }
        return 0;
}

/*
 * Everything that a restart needs: the backend's state, the applied
 * configuration (@desired; NULL when only client changes changed, which
 * leaves it as it is) and the client changes.
 */
int manager_save_state(Manager *m, const DesiredSet *desired, const ClientChanges *changes) {
        int r;

        r = save_backend(m);
        if (r >= 0 && desired)
                r = state_file_save(manager_state_dir(m), desired);
        if (r >= 0)
                r = manager_save_changes(m, changes);
        return r;
}

int manager_save_changes(Manager *m, const ClientChanges *changes) {
        (void) manager_commit_changes(m);
        return change_journal_snapshot(&m->journal, changes);
}

int manager_save_backend(Manager *m) {
        return save_backend(m);
}

/*
 * The record of @p could not be written: take @p back by the inverse
 * operations it recorded itself, not by planning back to the record (a new
 * plan leaves alone what no configuration names, such as an owner's
 * controller). Return: 0, the hierarchy is as before @p; or the -errno of
 * the undo that failed, the hierarchy is then between the two.
 */
int manager_take_back(Manager *m, const Plan *p, const char *what) {
        ApplyFailure f = {};
        int r;

        r = plan_unapply(p, m->backend, &f);
        if (r < 0) {
                const PlanOp *op = &p->ops[f.undo_index];

                log_error_errno(r, "Failed to take back %s: the undo of operation %zu (%s %s%s%s) failed: %m. "
                                "%zu of %zu operation(s) undone; the hierarchy is between the old and the new "
                                "state until the next reload.", what, f.undo_index,
                                op->type == PLAN_OP_MKDIR ? "mkdir" : "write", op->path, op->file ? "/" : "",
                                strempty(op->file), f.undone, p->n_ops);
                return r;
        }
        /* a backend that saved its state before the failing record (emulated): the hierarchy as it is again */
        if (backend_get_type(m->backend) != BACKEND_SIM && p->n_ops > 0)
                (void) backend_save(m->backend);
        log_notice("Took back %s: %zu operation(s) undone; the hierarchy is as before.", what, p->n_ops);
        return 0;
}

/* Plan @desired with @changes over it, apply, save. @changes may lose entries (plan_with()). */
int manager_apply_with(Manager *m, const DesiredSet *desired, ClientChanges *changes, ConfigErrors *errs,
                      size_t *ret_writes, ApplyOutcome *ret_outcome) {
        _cleanup_(plan_freep) Plan *p = NULL;
        ApplyOutcome dummy;
        ApplyFailure f = {};
        int r;

        if (!ret_outcome)
                ret_outcome = &dummy;
        *ret_outcome = APPLY_REFUSED;
        /* requests still committing are told first: a failed commit takes them back before this plans */
        (void) manager_commit_changes(m);
        r = plan_with(m, desired, changes, &p, errs);
        if (r >= 0)
                r = plan_drop_in_sync(p, m->backend);
        if (r < 0)
                return r;
        r = plan_apply(p, m->backend, &f);
        if (r < 0) {
                manager_log_apply_failure(p, r, &f);
                *ret_outcome = f.undo_error < 0 ? APPLY_LEFT_BETWEEN : APPLY_FAILED;
                return r;
        }
        r = manager_save_state(m, desired, changes);
        if (r < 0) {
                log_error_errno(r, "Failed to save the applied state in '%s', taking the configuration back: %m",
                                manager_state_dir(m));
                *ret_outcome = manager_take_back(m, p, "the configuration") < 0 ? APPLY_LEFT_BETWEEN :
                               APPLY_NOT_RECORDED;
                return r;
        }
        if (ret_writes)
                *ret_writes = p->n_ops;
        *ret_outcome = APPLY_DONE;
        return 0;
}

int manager_apply(Manager *m, ConfigErrors *errs, size_t *ret_writes, ApplyOutcome *ret_outcome) {
        Snapshot before;
        int r;

        manager_snapshot_for_signals(m, NULL, &before);
        r = manager_apply_with(m, &m->desired, &m->changes, errs, ret_writes, ret_outcome);
        if (r >= 0)
                (void) delegation_chown_all(m, NULL);
        manager_emit_changes(m, &before);
        snapshot_done(&before);
        return r;
}

void manager_notify_ready(Manager *m) {
        (void) sd_notifyf(false, "READY=1\nSTATUS=Serving %s on the %s backend: %zu delegation(s), "
                          "%zu client change(s).", backend_get_root(m->backend),
                          backend_type_to_string(backend_get_type(m->backend)), m->config->n_delegates,
                          m->changes.n);
}
