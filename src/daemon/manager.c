/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgbypass/log.h"
#include "manager.h"

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        backend_free(m->backend);
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

int manager_load_config(Manager *m, ConfigErrors *errs) {
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
        desired_set_done(&m->desired);
        m->desired = d;
        config_free(m->config);
        m->config = TAKE_PTR(c);
        return 0;
}

static void on_disagreement(const char *op, int kernel_result, int model_result, void *userdata) {
        log_error("BUG: the kernel and the model disagree on '%s': kernel %s, model %s. "
                  "Please report this with the operation.",
                  op, kernel_result < 0 ? strerror(-kernel_result) : "success",
                  model_result < 0 ? strerror(-model_result) : "success");
}

int manager_open_backend(Manager *m) {
        _cleanup_free_ char *why = NULL;
        Backend *b;
        int r;

        r = backend_open(m->config->daemon.backend, m->config->daemon.cgroup_root,
                         m->config->daemon.state_directory, &b, &why);
        if (r < 0)
                return log_error_errno(r, "Failed to open the %s backend on '%s': %s",
                                       backend_type_to_string(m->config->daemon.backend),
                                       m->config->daemon.cgroup_root, why ? why : strerror(-r));
        backend_set_disagreement_handler(b, on_disagreement, m);
        backend_free(m->backend);
        m->backend = b;
        log_debug("Using the %s backend on '%s'.", backend_type_to_string(backend_get_type(b)),
                  backend_get_root(b));
        return 0;
}

int manager_plan(Manager *m, Plan **ret, ConfigErrors *errs) {
        PolicyErrors pe = {};
        int r;

        r = policy_plan(backend_get_model(m->backend), m->desired.items, m->desired.n, ret, &pe);
        for (size_t i = 0; i < pe.n; i++) {
                ConfigLocation loc = { .file = pe.errors[i].origin.file, .line = pe.errors[i].origin.line };
                if (config_errors_add(errs, &loc, "%s", pe.errors[i].message) < 0)
                        r = -ENOMEM;
        }
        policy_errors_done(&pe);
        return r;
}

int manager_log_drift(Manager *m) {
        DesiredSet applied = {};
        Drift *d;
        size_t n;
        int r;

        /*
         * Drift is what changed behind our back since the last apply: compare with
         * the applied state, not the configuration (a new configuration is no drift).
         */
        r = state_file_load(m->config->daemon.state_directory, &applied);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_warning_errno(r, "Failed to read the applied state in '%s', ignoring: %m",
                                         m->config->daemon.state_directory);
        r = policy_drift(backend_get_model(m->backend), applied.items, applied.n, &d, &n);
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

int manager_apply(Manager *m, ConfigErrors *errs, size_t *ret_writes) {
        _cleanup_(plan_freep) Plan *p = NULL;
        ApplyFailure f = {};
        int r;

        r = manager_plan(m, &p, errs);
        if (r < 0)
                return r;

        r = plan_apply(p, m->backend, &f);
        if (r < 0) {
                const PlanOp *op = &p->ops[f.index];
                log_error_errno(r, "Failed to %s %s%s%s%s%s: %m. %zu operation(s) before it undone.",
                                op->type == PLAN_OP_MKDIR ? "mkdir" : "write", op->path,
                                op->file ? "/" : "", strempty(op->file), op->value ? " " : "",
                                strempty(op->value), f.undone);
                if (f.undo_error < 0)
                        log_error_errno(f.undo_error, "Failed to undo operation %zu (%s %s): %m. "
                                        "The hierarchy is left between the old and the new state.",
                                        f.undo_index, p->ops[f.undo_index].path,
                                        strempty(p->ops[f.undo_index].file));
                return r;
        }

        r = backend_save(m->backend);
        if (r >= 0)
                r = state_file_save(m->config->daemon.state_directory, &m->desired);
        if (r < 0)
                return log_error_errno(r, "Failed to save the applied state in '%s': %m",
                                       m->config->daemon.state_directory);
        if (ret_writes)
                *ret_writes = p->n_ops;
        return 0;
}
