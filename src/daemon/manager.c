/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <systemd/sd-daemon.h>

#include "cgbypass/bus-errors.h"
#include "cgbypass/bus-names.h"
#include "cgbypass/log.h"
#include "cgbypass/strbuf.h"
#include "adopt.h"
#include "callers.h"
#include "delegation.h"
#include "manager.h"
#include "polkit.h"
#include "request.h"

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        manager_flush(m);
        polkit_queries_free_all(m);
        sd_bus_slot_unref(m->callers_gone);
        callers_free_all(m);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        backend_free(m->backend);
        client_changes_done(&m->changes);
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
        return 0;
}

static void on_disagreement(const char *op, int kernel_result, int model_result, void *userdata) {
        log_error("BUG: the kernel and the model disagree on '%s': kernel %s, model %s. "
                  "Please report this with the operation.",
                  op, kernel_result < 0 ? strerror(-kernel_result) : "success",
                  model_result < 0 ? strerror(-model_result) : "success");
}

static const char *state_dir(Manager *m) {
        return m->config->daemon.state_directory;
}

static int load_client_changes(Manager *m) {
        ClientChanges c = {};
        int r;

        r = client_changes_load(state_dir(m), &c);
        if (r == -EBADMSG) {
                /* the offline modes change nothing here: the next change of a client replaces it */
                log_warning("'%s/%s' is malformed; going on without client changes.", state_dir(m),
                            CLIENT_CHANGES_FILE_NAME);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read the client changes in '%s': %m", state_dir(m));
        (void) client_changes_prune(&c, m->config);
        client_changes_done(&m->changes);
        m->changes = c;
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
        log_debug("Using the %s backend on '%s'.", backend_type_to_string(backend_get_type(b)),
                  backend_get_root(b));
        return load_client_changes(m);
}

/* ---- snapshots: which cgroups changed ---- */

void snapshot_done(Snapshot *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i].path);
        free(s->v);
        free(s->scope);
        *s = (Snapshot) {};
}

static int snapshot_entry_cmp(const void *a, const void *b) {
        return strcmp(((const SnapshotEntry *) a)->path, ((const SnapshotEntry *) b)->path);
}

static int snapshot_add(Snapshot *s, size_t *cap, const Hierarchy *h, Cgroup *c) {
        SnapshotEntry *e;
        int r;

        if (s->n == *cap) {
                size_t n = *cap ? *cap * 2 : 16;
                SnapshotEntry *v = reallocarray(s->v, n, sizeof(SnapshotEntry));
                if (!v)
                        return -ENOMEM;
                s->v = v;
                *cap = n;
        }
        e = &s->v[s->n];
        r = cgroup_path(c, &e->path);
        if (r < 0)
                return r;
        s->n++;
        e->controllers = cgroup_get_controllers(h, c);
        e->bypassed = cgroup_get_bypassed(h, c);
        e->subtree_control = cgroup_get_subtree_control(c);
        e->subtree_bypass = cgroup_get_subtree_bypass(c);
        e->css = cgroup_get_css_mask(h, c);
        e->type = cgroup_get_type(h, c);
        return 0;
}

int snapshot_take(const Hierarchy *h, const char *scope, Snapshot *ret) {
        Cgroup *top = hierarchy_root(h);
        Snapshot s = {};
        size_t cap = 0;
        int r = 0;

        if (scope) {
                s.scope = strdup(scope);
                if (!s.scope)
                        return -ENOMEM;
                /* a scope that does not exist (yet, or any more) has nothing to compare */
                if (hierarchy_lookup(h, scope, &top) < 0)
                        top = NULL;
                else if (cgroup_parent(top))
                        r = snapshot_add(&s, &cap, h, cgroup_parent(top));
        }
        for (Cgroup *c = top; c && r >= 0; c = cgroup_next_descendant_pre(c, top))
                r = snapshot_add(&s, &cap, h, c);
        if (r < 0) {
                snapshot_done(&s);
                return r;
        }
        if (s.n > 0)    /* a scope that is gone leaves s.v NULL, which qsort() must not get */
                qsort(s.v, s.n, sizeof(SnapshotEntry), snapshot_entry_cmp);
        *ret = s;
        return 0;
}

static bool snapshot_entry_equal(const SnapshotEntry *a, const SnapshotEntry *b) {
        return a->controllers == b->controllers && a->bypassed == b->bypassed &&
                a->subtree_control == b->subtree_control && a->subtree_bypass == b->subtree_bypass &&
                a->css == b->css && a->type == b->type;
}

static void emit_cgroup_changed(Manager *m, const char *path) {
        int r = sd_bus_emit_signal(m->bus, CGBYPASS_BUS_PATH, CGBYPASS_BUS_INTERFACE, "CgroupChanged", "s", path);
        if (r < 0)
                log_warning_errno(r, "Failed to emit CgroupChanged for %s, ignoring: %m", path);
}

void manager_emit_changes(Manager *m, const Snapshot *before) {
        Snapshot after = {};
        size_t i = 0, j = 0;

        if (!m->bus || (!before->v && !before->scope))
                return;
        if (snapshot_take(backend_get_model(m->backend), before->scope, &after) < 0) {
                log_oom();
                return;
        }
        /* both sorted by path: cgroups that appeared, went, or changed */
        while (i < before->n || j < after.n) {
                int cmp = i == before->n ? 1 : j == after.n ? -1 : strcmp(before->v[i].path, after.v[j].path);

                if (cmp < 0)
                        emit_cgroup_changed(m, before->v[i++].path);
                else if (cmp > 0)
                        emit_cgroup_changed(m, after.v[j++].path);
                else {
                        if (!snapshot_entry_equal(&before->v[i], &after.v[j]))
                                emit_cgroup_changed(m, after.v[j].path);
                        i++;
                        j++;
                }
        }
        snapshot_done(&after);
}

char *manager_known_ancestor(const Manager *m, const char *path) {
        char *top;
        Cgroup *c;

        if (!path)
                return NULL;
        top = strdup(path);
        if (!top)
                return NULL;
        while (hierarchy_lookup(backend_get_model(m->backend), top, &c) < 0) {
                char *slash = strrchr(top, '/');
                if (!slash)
                        break;
                slash[slash == top] = '\0';
        }
        return top;
}

/*
 * A snapshot for manager_emit_changes(); without a bus there is no one to tell.
 * @scope: the subtree that may change (NULL: all).
 */
static void snapshot_for_signals(Manager *m, const char *scope, Snapshot *s) {
        *s = (Snapshot) {};
        if (m->bus && snapshot_take(backend_get_model(m->backend), scope, s) < 0)
                log_oom();
}

/* ---- learning what changed behind our back ---- */

/* Client changes of cgroups that are gone (their owners removed them) go too. */
static void forget_gone_changes(Manager *m) {
        const Hierarchy *h = backend_get_model(m->backend);
        bool dropped = false;
        int r;

        for (size_t i = m->changes.n; i-- > 0;) {
                const char *path = m->changes.items[i].path;
                bool created = false;
                Cgroup *c;

                if (hierarchy_lookup(h, path, &c) >= 0)
                        continue;
                for (size_t j = 0; j < m->desired.n; j++)
                        if (streq(m->desired.items[j].path, path) && m->desired.items[j].create)
                                created = true;
                if (created)
                        continue;       /* the next apply makes it again */
                log_info("Forgetting the client change of %s: the cgroup is gone.", path);
                client_changes_remove(&m->changes, i);
                dropped = true;
        }
        if (dropped) {
                r = client_changes_save(state_dir(m), &m->changes);
                if (r < 0)
                        log_warning_errno(r, "Failed to save the client changes in '%s', ignoring: %m", state_dir(m));
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
 * @full: backend_refresh(): native and emulated re-read the whole kernel, a
 * sim re-renders its directory from its model. A sim's model is its kernel:
 * between reloads, only what owners do in their delegations (mkdir, rmdir)
 * is news; re-rendering on every request would race with them and undo
 * their rmdir.
 */
static int refresh_quiet(Manager *m, bool full, const char *scope, char **reterr_why) {
        _cleanup_free_ char *why = NULL;
        int r;

        r = delegation_adopt(m, scope);
        if (r < 0)
                log_warning_errno(r, "Failed to look for cgroups made in delegations, ignoring: %m");
        if (!full) {
                forget_gone_changes(m);
                return 0;
        }
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
        forget_gone_changes(m);
        log_backend_drift(m);
        return 0;
}

/*
 * Before serving a call on @scope (NULL: everything): a snapshot of what may
 * change into @before, then the refresh. A sim learns what owners did in
 * the delegations below @scope (delegation_adopt()); native and emulated read
 * the kernel's files of @scope's subtree, and the whole hierarchy only when
 * that differs from what they left.
 */
static int refresh_for(Manager *m, const char *scope, Snapshot *before) {
        /* what the refresh may change (delegation_adopt()): that cgroup's subtree */
        _cleanup_free_ char *top = manager_known_ancestor(m, scope);
        bool whole = false;

        if (backend_get_type(m->backend) != BACKEND_SIM)
                whole = !top || backend_check_below(m->backend, top) <= 0;
        snapshot_for_signals(m, whole ? NULL : top, before);
        return refresh_quiet(m, whole, scope, NULL);
}

int manager_refresh(Manager *m, const char *scope) {
        Snapshot before;
        int r;

        r = refresh_for(m, scope, &before);
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

                r = client_changes_merge(desired, changes, h, NULL, &merged, &gone, &n_gone);
                if (r < 0)
                        return r;
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

                r = policy_plan(h, merged.items, merged.n, ret, &pe);
                desired_set_done(&merged);
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
        return plan_with(m, &m->desired, &m->changes, ret, errs);
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
        if (client_changes_load(state_dir(m), &saved) < 0)
                saved = (ClientChanges) {};     /* load_client_changes() said so already */
        r = client_changes_merge(&applied, &saved, NULL, NULL, &merged, NULL, NULL);
        if (r >= 0)
                r = policy_drift(backend_get_model(m->backend), merged.items, merged.n, &d, &n);
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

static void log_apply_failure(const Plan *p, int r, const ApplyFailure *f) {
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
                                  "last changes (client changes are kept): %m", state_dir(m));
}

static int on_sim_save_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->sim_save = sd_event_source_disable_unref(m->sim_save);
        save_backend_now(m);
        return 0;
}

void manager_flush(Manager *m) {
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
static int save_state(Manager *m, const DesiredSet *desired, const ClientChanges *changes) {
        int r;

        r = save_backend(m);
        if (r >= 0 && desired)
                r = state_file_save(state_dir(m), desired);
        if (r >= 0)
                r = client_changes_save(state_dir(m), changes);
        return r;
}

/* Plan @desired with @changes over it, apply, save. @changes may lose entries (plan_with()). */
static int apply_with(Manager *m, const DesiredSet *desired, ClientChanges *changes, ConfigErrors *errs,
                      size_t *ret_writes) {
        _cleanup_(plan_freep) Plan *p = NULL;
        ApplyFailure f = {};
        int r;

        r = plan_with(m, desired, changes, &p, errs);
        if (r < 0)
                return r;
        r = plan_apply(p, m->backend, &f);
        if (r < 0) {
                log_apply_failure(p, r, &f);
                return r;
        }
        r = save_state(m, desired, changes);
        if (r < 0)
                return log_error_errno(r, "Failed to save the applied state in '%s': %m", state_dir(m));
        if (ret_writes)
                *ret_writes = p->n_ops;
        return 0;
}

int manager_apply(Manager *m, ConfigErrors *errs, size_t *ret_writes) {
        Snapshot before;
        int r;

        snapshot_for_signals(m, NULL, &before);
        r = apply_with(m, &m->desired, &m->changes, errs, ret_writes);
        if (r >= 0)
                (void) delegation_chown_all(m, NULL);
        manager_emit_changes(m, &before);
        snapshot_done(&before);
        return r;
}

/* ---- one request ---- */

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
        /* the first token of the write: "+cpu #io" -> "cpu" */
        if (!op->value || !op->value[0])
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
                   sd_bus_error *error) {
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
        (void) refresh_for(m, req->cgroup, &before);

        r = hierarchy_lookup(backend_get_model(m->backend), req->cgroup, &c);
        if (r < 0) {
                r = sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_CGROUP, "%s does not exist", req->cgroup);
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
                        r = bus_error_set_model(error, vet, reason, req->cgroup, req->file,
                                                which >= 0 ? controller_to_string(which) : req->names);
                else
                        r = sd_bus_error_setf(error, BUS_ERROR_IN_USE_BELOW,
                                              "Changing %s in %s would break what is asked for below it: %s",
                                              req->names, req->cgroup, pe.n > 0 ? pe.errors[0].message : "?");
                goto finish;
        }
        if (r < 0)
                goto finish;

        r = plan_apply(p, m->backend, &f);
        if (r < 0) {
                const PlanOp *op = &p->ops[f.index];
                _cleanup_free_ char *path = NULL;
                char buf[64];

                log_apply_failure(p, r, &f);
                if (asprintf(&path, "/%s", streq(op->path, ".") ? "" : op->path) < 0) {
                        r = -ENOMEM;
                        goto finish;
                }
                r = bus_error_set_model(error, r, f.reason, path, op->file, op_controller(op, buf, sizeof(buf)));
                goto finish;
        }

        r = save_state(m, NULL, &next);
        if (r < 0) {
                _cleanup_(plan_freep) Plan *back = NULL;
                PolicyErrors ignored = {};

                log_error_errno(r, "Failed to record the change of %s in '%s', undoing it: %m", req->cgroup,
                                state_dir(m));
                /* back to what is recorded */
                if (plan_subtree(m, req->cgroup, &m->changes, &back, &ignored) < 0 ||
                    plan_apply(back, m->backend, &f) < 0)
                        log_error("Failed to undo the change of %s; the hierarchy differs from the recorded state "
                                  "until the next reload.", req->cgroup);
                policy_errors_done(&ignored);
                r = sd_bus_error_setf(error, BUS_ERROR_FAILED,
                                      "cgbypassd could not record the change in its state directory (%s); "
                                      "nothing was changed", strerror(-r));
                goto finish;
        }

        client_changes_done(&m->changes);
        m->changes = next;
        next = (ClientChanges) {};
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

/* ---- reload ---- */

static int daemon_settings_unchanged(const Config *old, const Config *new, ConfigErrors *errs) {
        const DaemonSettings *o = &old->daemon, *n = &new->daemon;
        int r = 0;

        if (!streq(o->cgroup_root, n->cgroup_root))
                r = config_errors_add(errs, &n->cgroup_root_loc, "cgroup-root cannot change while cgbypassd "
                                      "runs (it serves '%s'); restart cgbypassd for '%s'",
                                      o->cgroup_root, n->cgroup_root) < 0 ? -ENOMEM : -EINVAL;
        if (o->backend != n->backend)
                r = config_errors_add(errs, &n->backend_loc, "backend cannot change while cgbypassd runs; "
                                      "restart cgbypassd for '%s'", backend_type_to_string(n->backend)) < 0 ?
                        -ENOMEM : -EINVAL;
        if (!streq(o->state_directory, n->state_directory))
                r = config_errors_add(errs, &n->state_directory_loc, "state-directory cannot change while "
                                      "cgbypassd runs; restart cgbypassd for '%s'", n->state_directory) < 0 ?
                        -ENOMEM : -EINVAL;
        return r;
}

static int config_invalid_error(sd_bus_error *error, const ConfigErrors *errs) {
        StrBuf b = STRBUF_INIT;
        _cleanup_free_ char *text = NULL;
        size_t n = config_errors_count(errs);

        strbuf_printf(&b, "The configuration has %zu problem(s); nothing was changed:", n);
        for (size_t i = 0; i < n; i++)
                strbuf_printf(&b, "\n%s", config_errors_get(errs, i));
        if (strbuf_steal(&b, &text) < 0)
                return -ENOMEM;
        return sd_bus_error_set(error, BUS_ERROR_CONFIG_INVALID, text);
}

void manager_notify_ready(Manager *m) {
        (void) sd_notifyf(false, "READY=1\nSTATUS=Serving %s on the %s backend: %zu delegation(s), "
                          "%zu client change(s).", backend_get_root(m->backend),
                          backend_type_to_string(backend_get_type(m->backend)), m->config->n_delegates,
                          m->changes.n);
}

int manager_reload(Manager *m, ConfigErrors *errs, sd_bus_error *error) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *why = NULL;
        DesiredSet d = {};
        ClientChanges next = {};
        Snapshot before = {};
        size_t writes = 0;
        int r;

        /* MONOTONIC_USEC: systemd >= 253 (Type=notify-reload) takes RELOADING=1 as the answer to
         * its SIGHUP only with a timestamp later than the signal */
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        (void) sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading the configuration...\nMONOTONIC_USEC=%llu",
                          (unsigned long long) ts.tv_sec * 1000000ULL + (unsigned long long) ts.tv_nsec / 1000ULL);
        log_info("Reloading the configuration.");

        r = manager_read_config(m, &c, &d, errs);
        if (r >= 0)
                r = daemon_settings_unchanged(m->config, c, errs);
        if (r == -EINVAL) {
                for (size_t i = 0; i < config_errors_count(errs); i++)
                        log_error("%s", config_errors_get(errs, i));
                log_error("The configuration has %zu problem(s); kept the running one.", config_errors_count(errs));
                r = config_invalid_error(error, errs);
                goto finish;
        }
        if (r < 0)
                goto finish;

        snapshot_for_signals(m, NULL, &before);
        /* a plan from a hierarchy that could not be read is no answer to give */
        r = refresh_quiet(m, true, NULL, &why);
        if (r < 0) {
                r = sd_bus_error_setf(error, BUS_ERROR_FAILED, "Re-reading the hierarchy failed: %s; nothing was "
                                      "changed, the running configuration is kept", why ? why : strerror(-r));
                goto finish;
        }
        r = client_changes_copy(&m->changes, &next);
        if (r < 0)
                goto finish;
        (void) client_changes_prune(&next, c);

        r = apply_with(m, &d, &next, errs, &writes);
        if (r == -EINVAL) {
                for (size_t i = 0; i < config_errors_count(errs); i++)
                        log_error("%s", config_errors_get(errs, i));
                log_error("The configuration cannot be applied (%zu problem(s)); kept the running one.",
                          config_errors_count(errs));
                r = config_invalid_error(error, errs);
                goto finish;
        }
        if (r < 0) {
                r = sd_bus_error_setf(error, BUS_ERROR_FAILED, "Applying the configuration failed (%s); the "
                                      "hierarchy is as before", strerror(-r));
                goto finish;
        }

        /* the new configuration is the running one now */
        Config *old = m->config;
        desired_set_done(&m->desired);
        m->desired = d;
        d = (DesiredSet) {};
        m->config = TAKE_PTR(c);
        client_changes_done(&m->changes);
        m->changes = next;
        next = (ClientChanges) {};
        (void) delegation_chown_all(m, old);
        config_free(old);
        log_info("Reloaded the configuration: %zu operation(s).", writes);
        r = 0;
finish:
        if (before.v)
                manager_emit_changes(m, &before);
        snapshot_done(&before);
        client_changes_done(&next);
        desired_set_done(&d);   /* before c, which it points into */
        config_free(TAKE_PTR(c));
        manager_notify_ready(m);
        return r;
}
