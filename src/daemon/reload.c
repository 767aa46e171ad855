/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A reload: the new configuration, checked, applied with the client changes, or the running one kept. */
#include <systemd/sd-daemon.h>

#include "cgbypass/log.h"
#include "delegation.h"
#include "ownership.h"
#include "runtime-delegations.h"
#include "manager.h"
#include "systemd-managed.h"

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

int manager_reload(Manager *m, ConfigErrors *errs, Refusal *ret_refusal) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *why = NULL;
        DesiredSet d = {};
        ClientChanges next = {};
        Snapshot before = {};
        ApplyOutcome outcome = APPLY_REFUSED;
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
        if (r >= 0)
                r = manager_check_systemd_managed(m, c, errs);
        if (r == -EINVAL) {
                for (size_t i = 0; i < config_errors_count(errs); i++)
                        log_error("%s", config_errors_get(errs, i));
                log_error("The configuration has %zu problem(s); kept the running one.", config_errors_count(errs));
                r = refusal_set_detail(ret_refusal, REFUSAL_CONFIG_INVALID, NULL) ?: -EINVAL;
                goto finish;
        }
        if (r < 0)
                goto finish;

        manager_snapshot_for_signals(m, NULL, &before);
        /* a plan from a hierarchy that could not be read is no answer to give */
        r = manager_refresh_quiet(m, true, NULL, &why);
        if (r < 0) {
                r = refusal_set_detail(ret_refusal, REFUSAL_REREAD_FAILED, why ? why : strerror(-r)) ?: r;
                goto finish;
        }
        r = client_changes_copy(&m->changes, &next);
        if (r < 0)
                goto finish;
        (void) client_changes_prune(&next, c);

        r = manager_apply_with(m, &d, &next, errs, &writes, &outcome);
        /* -EINVAL without problems recorded is the kernel's refusal of a write (a value, say) */
        if (r == -EINVAL && config_errors_count(errs) > 0) {
                for (size_t i = 0; i < config_errors_count(errs); i++)
                        log_error("%s", config_errors_get(errs, i));
                log_error("The configuration cannot be applied (%zu problem(s)); kept the running one.",
                          config_errors_count(errs));
                r = refusal_set_detail(ret_refusal, REFUSAL_CONFIG_INVALID, NULL) ?: -EINVAL;
                goto finish;
        }
        if (r < 0) {
                r = refusal_set_detail(ret_refusal, outcome == APPLY_LEFT_BETWEEN ? REFUSAL_APPLY_LEFT :
                                       outcome == APPLY_NOT_RECORDED ? REFUSAL_NOT_RECORDED :
                                       REFUSAL_APPLY_FAILED, NULL) ?: r;
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
        manager_gone_look_again(m);
        next = (ClientChanges) {};
        /* the record was read before the refresh: a delegation whose cgroup went meanwhile ends now */
        runtime_delegations_forget_gone(m);
        (void) delegation_chown_all(m, old);
        config_free(old);
        log_info("Reloaded the configuration: %zu operation(s).", writes);
        r = 0;
finish:
        read_views_invalidate(&m->views);       /* a failed reload may have taken back what it applied */
        if (before.v)
                manager_emit_changes(m, &before);
        snapshot_done(&before);
        client_changes_done(&next);
        desired_set_done(&d);   /* before c, which it points into */
        config_free(TAKE_PTR(c));
        manager_notify_ready(m);
        return r;
}
