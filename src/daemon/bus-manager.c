/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus face of the daemon. Every changing method: read the arguments,
 * validate them, resolve the delegation, ask polkit (asynchronously), then
 * plan and apply through the manager, which emits CgroupChanged; then reply.
 * Each change and each refusal is logged with the caller's uid and pid, the
 * cgroup, the change and the decision.
 */
#include <signal.h>
#include <systemd/sd-daemon.h>

#include "bus-manager.h"
#include "callers.h"
#include "cgbypass/bus-errors.h"
#include "cgbypass/log.h"
#include "delegation.h"
#include "polkit.h"

static void log_decision(int level, const Caller *caller, const char *method, const char *cgroup, const char *arg,
                         const char *decision, const char *detail) {
        char qc[REQUEST_QUOTE_SIZE], qa[REQUEST_QUOTE_SIZE], uid[16] = "?", pid[16] = "?";

        if (caller && caller->known) {
                (void) snprintf(uid, sizeof(uid), "%u", (unsigned) caller->uid);
                if (caller->pid > 0)
                        (void) snprintf(pid, sizeof(pid), "%d", (int) caller->pid);
        }
        (void) log_full_errno(level, 0, "%s%s%s%s%s by uid=%s pid=%s: %s%s%s", method,
                              cgroup ? " " : "", cgroup ? request_quote(cgroup, qc) : "",
                              arg ? " " : "", arg ? request_quote(arg, qa) : "",
                              uid, pid, decision, detail ? ": " : "", strempty(detail));
}

/* Log a refusal and hand the error to sd-bus, which replies with it. */
static int refuse(const Caller *caller, const char *method, const char *cgroup, const char *arg, int r,
                  sd_bus_error *error) {
        _cleanup_free_ char *detail = NULL;

        if (sd_bus_error_is_set(error))
                r = asprintf(&detail, "%s: %s", error->name, strempty(error->message)) < 0 ? -ENOMEM : r;
        else if (asprintf(&detail, "%s", strerror(-r)) < 0)
                detail = NULL;
        log_decision(LOG_NOTICE, caller, method, cgroup, arg, "refused", detail);
        return r;
}

static const char *const methods[_CHANGE_KIND_MAX] = {
        [CHANGE_ENABLE] = "EnableController",
        [CHANGE_BYPASS] = "BypassController",
        [CHANGE_SUBTREE] = "SetSubtreeControl",
};

/*
 * Ask polkit when @action is set. Return: 1 go on; 0 the call was parked (or
 * dropped) and the handler returns 1 without a reply; <0 refused, @error set.
 */
static int authorize(Manager *m, sd_bus_message *msg, const Caller *caller, const char *action,
                     char *const *details, const char *deny_name, const char *deny_message, sd_bus_error *error) {
        _cleanup_free_ char *why = NULL;
        PolkitResult verdict;
        int r;

        if (!action)
                return 1;
        r = polkit_check(m, msg, action, details, caller->uid, caller->pid, &verdict, &why);
        if (r == -EBUSY)
                return sd_bus_error_set(error, BUS_ERROR_BUSY,
                                        "Too many requests are waiting for polkit's answer; try again later");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Failed to ask polkit: %m");
        switch (verdict) {
        case POLKIT_PENDING:
                return 0;
        case POLKIT_CALLER_GONE:
                log_notice("A caller (uid=%u) disconnected before polkit answered; nothing was changed.",
                           (unsigned) caller->uid);
                return 0;
        case POLKIT_AUTHORIZED:
                return 1;
        case POLKIT_CHALLENGE:
                return sd_bus_error_setf(error, deny_name, "%s (polkit wants an administrator to authenticate%s)",
                                         deny_message,
                                         sd_bus_message_get_allow_interactive_authorization(msg) > 0 ?
                                         ", and no authentication agent did" :
                                         "; the call did not allow interactive authorization");
        case POLKIT_DENIED:
                return sd_bus_error_set(error, deny_name, deny_message);
        case POLKIT_FAILED:
        default:
                return sd_bus_error_setf(error, BUS_ERROR_ACCESS_DENIED,
                                         "polkit could not decide (%s), so the request is denied",
                                         why ? why : "no answer");
        }
}

static int method_change(sd_bus_message *msg, Manager *m, ChangeKind kind, sd_bus_error *error) {
        _cleanup_(change_request_done) ChangeRequest req = {};
        _cleanup_(authorization_done) Authorization auth = {};
        const char *cgroup, *arg, *method = methods[kind];
        Caller caller;
        size_t ops = 0;
        int r;

        r = sd_bus_message_read(msg, "ss", &cgroup, &arg);
        if (r < 0)
                return r;
        r = caller_identify(m, msg, &caller, error);
        if (r < 0)
                return refuse(&caller, method, cgroup, arg, r, error);
        r = request_parse(m, kind, cgroup, arg, &req, error);
        if (r < 0)
                return refuse(&caller, method, cgroup, arg, r, error);
        r = delegation_authorize(m->config, caller.uid, &req, &auth, error);
        if (r < 0)
                return refuse(&caller, method, cgroup, arg, r, error);

        char *details[] = {
                (char *) "cgroup", (char *) req.cgroup,
                (char *) "controller", req.names,
                (char *) "change", req.value,
                (char *) "file", (char *) req.file,
                NULL,
        };
        r = authorize(m, msg, &caller, auth.action, details, auth.deny_name, auth.deny_message, error);
        if (r < 0)
                return refuse(&caller, method, cgroup, arg, r, error);
        if (r == 0)
                return 1;       /* answered later, or never (caller gone) */

        r = manager_change(m, &req, auth.admin, caller.uid, &ops, error);
        if (r < 0)
                return refuse(&caller, method, cgroup, arg, r, error);

        char detail[256];
        (void) snprintf(detail, sizeof(detail), "%zu operation(s); %s", ops,
                        !auth.action ? "uid 0" :
                        auth.admin ? "administrator, polkit " POLKIT_ACTION_MANAGE :
                        "owner of the delegation, polkit " POLKIT_ACTION_MANAGE_DELEGATED);
        log_decision(LOG_INFO, &caller, method, cgroup, arg, "applied", detail);
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_enable_controller(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return method_change(msg, userdata, CHANGE_ENABLE, error);
}

static int method_bypass_controller(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return method_change(msg, userdata, CHANGE_BYPASS, error);
}

static int method_set_subtree_control(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return method_change(msg, userdata, CHANGE_SUBTREE, error);
}

static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        Caller caller;
        int r;

        r = caller_identify(m, msg, &caller, error);
        if (r < 0)
                return refuse(&caller, "Reload", NULL, NULL, r, error);
        char *details[] = { (char *) "operation", (char *) "reload", NULL };
        r = authorize(m, msg, &caller, caller.uid == 0 ? NULL : POLKIT_ACTION_MANAGE, details,
                      BUS_ERROR_ACCESS_DENIED, "Only an administrator may reload cgbypassd's configuration",
                      error);
        if (r < 0)
                return refuse(&caller, "Reload", NULL, NULL, r, error);
        if (r == 0)
                return 1;

        r = manager_reload(m, &errs, error);
        config_errors_done(&errs);
        if (r < 0)
                return refuse(&caller, "Reload", NULL, NULL, r, error);
        log_decision(LOG_INFO, &caller, "Reload", NULL, NULL, "done", NULL);
        return sd_bus_reply_method_return(msg, NULL);
}

/* "cpu", "#io", ... in the kernel's order: the way cgroup.controllers prints them */
static int append_mask(sd_bus_message *reply, CgMask enabled, CgMask bypassed) {
        int r;

        r = sd_bus_message_open_container(reply, SD_BUS_TYPE_ARRAY, "s");
        if (r < 0)
                return r;
        FOREACH_CONTROLLER_IN(x, enabled | bypassed) {
                char name[64];

                (void) snprintf(name, sizeof(name), "%s%s", bypassed & CGMASK(x) ? "#" : "", controller_to_string(x));
                r = sd_bus_message_append(reply, "s", name);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int lookup_cgroup(Manager *m, const char *path, Cgroup **ret, sd_bus_error *error) {
        int r;

        r = request_path_verify(path, error);
        if (r < 0)
                return r;
        /* a child its owner just made is known only after this */
        (void) manager_refresh(m, path);
        r = hierarchy_lookup(backend_get_model(m->backend), path, ret);
        if (r < 0)
                return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_CGROUP, "%s does not exist", path);
        return 0;
}

static int method_get_cgroup(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        const Hierarchy *h;
        const DelegateSpec *d;
        const char *path;
        Cgroup *c;
        int r;

        r = sd_bus_message_read(msg, "s", &path);
        if (r < 0)
                return r;
        r = lookup_cgroup(m, path, &c, error);
        if (r < 0)
                return r;
        h = backend_get_model(m->backend);
        d = config_find_delegation(m->config, path);

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r < 0)
                return r;

#define OPEN_ENTRY(key, sig)                                                            \
        do {                                                                            \
                r = sd_bus_message_open_container(reply, SD_BUS_TYPE_DICT_ENTRY, "sv"); \
                if (r >= 0)                                                             \
                        r = sd_bus_message_append(reply, "s", key);                     \
                if (r >= 0)                                                             \
                        r = sd_bus_message_open_container(reply, SD_BUS_TYPE_VARIANT, sig); \
                if (r < 0)                                                              \
                        return r;                                                       \
        } while (0)
#define CLOSE_ENTRY()                                                                   \
        do {                                                                            \
                r = sd_bus_message_close_container(reply);                              \
                if (r >= 0)                                                             \
                        r = sd_bus_message_close_container(reply);                      \
                if (r < 0)                                                              \
                        return r;                                                       \
        } while (0)

        OPEN_ENTRY("controllers", "as");
        r = append_mask(reply, cgroup_get_controllers(h, c), cgroup_get_bypassed(h, c));
        if (r < 0)
                return r;
        CLOSE_ENTRY();

        OPEN_ENTRY("subtree_control", "as");
        r = append_mask(reply, cgroup_get_subtree_control(c), cgroup_get_subtree_bypass(c));
        if (r < 0)
                return r;
        CLOSE_ENTRY();

        OPEN_ENTRY("type", "s");
        r = sd_bus_message_append(reply, "s", cgroup_type_to_string(cgroup_get_type(h, c)));
        if (r < 0)
                return r;
        CLOSE_ENTRY();

        OPEN_ENTRY("delegated_to", "u");
        r = sd_bus_message_append(reply, "u", d ? (uint32_t) d->uid : UINT32_MAX);
        if (r < 0)
                return r;
        CLOSE_ENTRY();

        OPEN_ENTRY("delegation", "s");
        r = sd_bus_message_append(reply, "s", d ? d->path : "");
        if (r < 0)
                return r;
        CLOSE_ENTRY();

        OPEN_ENTRY("delegated_controllers", "as");
        r = append_mask(reply, d ? d->controllers : 0, 0);
        if (r < 0)
                return r;
        CLOSE_ENTRY();

        OPEN_ENTRY("managed", "b");
        r = sd_bus_message_append(reply, "b",
                                  config_find_cgroup(m->config, path) || (d && streq(d->path, path)));
        if (r < 0)
                return r;
        CLOSE_ENTRY();

        OPEN_ENTRY("populated", "b");
        r = sd_bus_message_append(reply, "b", cgroup_is_populated(c));
        if (r < 0)
                return r;
        CLOSE_ENTRY();

        /* per controller the cgroup has or bypasses: whose css its processes use */
        OPEN_ENTRY("effective", "a{ss}");
        r = sd_bus_message_open_container(reply, SD_BUS_TYPE_ARRAY, "{ss}");
        if (r < 0)
                return r;
        FOREACH_CONTROLLER_IN(x, cgroup_get_controllers(h, c) | cgroup_get_bypassed(h, c)) {
                _cleanup_free_ char *owner = NULL;
                Cgroup *o = cgroup_effective_css_owner(h, c, x);

                if (!o || cgroup_path(o, &owner) < 0)
                        continue;
                r = sd_bus_message_append(reply, "{ss}", controller_to_string(x), owner);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        CLOSE_ENTRY();

        OPEN_ENTRY("children", "as");
        r = sd_bus_message_open_container(reply, SD_BUS_TYPE_ARRAY, "s");
        if (r < 0)
                return r;
        for (Cgroup *k = cgroup_first_child(c); k; k = cgroup_next_sibling(k)) {
                _cleanup_free_ char *kp = NULL;
                if (cgroup_path(k, &kp) < 0)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "s", kp);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        CLOSE_ENTRY();
#undef OPEN_ENTRY
#undef CLOSE_ENTRY

        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_get_effective_tree(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *tree = NULL;
        Manager *m = userdata;
        const char *name;
        Controller x;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        x = controller_from_string(name);
        if (x < 0) {
                char q[REQUEST_QUOTE_SIZE];
                return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_CONTROLLER, "There is no controller named '%s'",
                                         request_quote(name, q));
        }
        (void) manager_refresh(m, NULL);
        r = hierarchy_effective_tree(backend_get_model(m->backend), x, &tree);
        if (r == -EINVAL)
                return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_CONTROLLER,
                                         "The controller '%s' has no hierarchy here: not built into this kernel, "
                                         "or not a cgroup2 controller", name);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "s", tree);
}

static int append_effective_node(unsigned depth, const char *const *members, size_t n_members, void *userdata) {
        sd_bus_message *reply = userdata;
        int r;

        r = sd_bus_message_open_container(reply, SD_BUS_TYPE_STRUCT, "uas");
        if (r >= 0)
                r = sd_bus_message_append(reply, "u", (uint32_t) depth);
        if (r >= 0)
                r = sd_bus_message_append_strv(reply, (char **) members);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* GetEffectiveTree's lines as data: a cgroup name may hold '|' or spaces, a line cannot say so */
static int method_get_effective_nodes(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        const char *name;
        Controller x;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        x = controller_from_string(name);
        if (x < 0) {
                char q[REQUEST_QUOTE_SIZE];
                return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_CONTROLLER, "There is no controller named '%s'",
                                         request_quote(name, q));
        }
        (void) manager_refresh(m, NULL);
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, SD_BUS_TYPE_ARRAY, "(uas)");
        if (r >= 0)
                r = hierarchy_effective_nodes(backend_get_model(m->backend), x, append_effective_node, reply);
        if (r == -EINVAL)
                return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_CONTROLLER,
                                         "The controller '%s' has no hierarchy here: not built into this kernel, "
                                         "or not a cgroup2 controller", name);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_list_delegations(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, SD_BUS_TYPE_ARRAY, "(suas)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->config->n_delegates; i++) {
                const DelegateSpec *d = &m->config->delegates[i];

                r = sd_bus_message_open_container(reply, SD_BUS_TYPE_STRUCT, "suas");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "su", d->path, (uint32_t) d->uid);
                if (r >= 0)
                        r = append_mask(reply, d->controllers, 0);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PROJECT_VERSION);
}

static int property_get_backend(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", backend_type_to_string(backend_get_type(m->backend)));
}

static int property_get_cgroup_root(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", backend_get_root(m->backend));
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),

        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Backend", "s", property_get_backend, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("CgroupRoot", "s", property_get_cgroup_root, 0, SD_BUS_VTABLE_PROPERTY_CONST),

        /* every method checks its caller itself (delegation, polkit) or changes nothing */
        SD_BUS_METHOD_WITH_ARGS("EnableController",
                                SD_BUS_ARGS("s", cgroup, "s", controller),
                                SD_BUS_NO_RESULT,
                                method_enable_controller,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("BypassController",
                                SD_BUS_ARGS("s", cgroup, "s", controller),
                                SD_BUS_NO_RESULT,
                                method_bypass_controller,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetSubtreeControl",
                                SD_BUS_ARGS("s", cgroup, "s", change),
                                SD_BUS_NO_RESULT,
                                method_set_subtree_control,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetCgroup",
                                SD_BUS_ARGS("s", cgroup),
                                SD_BUS_RESULT("a{sv}", properties),
                                method_get_cgroup,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetEffectiveTree",
                                SD_BUS_ARGS("s", controller),
                                SD_BUS_RESULT("s", tree),
                                method_get_effective_tree,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetEffectiveNodes",
                                SD_BUS_ARGS("s", controller),
                                SD_BUS_RESULT("a(uas)", nodes),
                                method_get_effective_nodes,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListDelegations",
                                SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(suas)", delegations),
                                method_list_delegations,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Reload",
                                SD_BUS_NO_ARGS,
                                SD_BUS_NO_RESULT,
                                method_reload,
                                SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_SIGNAL_WITH_ARGS("CgroupChanged",
                                SD_BUS_ARGS("s", cgroup),
                                0),

        SD_BUS_VTABLE_END
};

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        log_info("Received %s, exiting.", si->ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        ConfigErrors errs = CONFIG_ERRORS_INIT;

        log_info("Received SIGHUP.");
        (void) manager_reload(userdata, &errs, NULL);
        config_errors_done(&errs);
        return 0;
}

int manager_run_service(Manager *m) {
        sigset_t mask;
        int r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");
        (void) sigemptyset(&mask);
        (void) sigaddset(&mask, SIGTERM);
        (void) sigaddset(&mask, SIGINT);
        (void) sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(-errno, "Failed to block signals: %m");
        r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch signals: %m");

        r = sd_bus_error_add_map(cgbypass_bus_error_map);
        if (r < 0)
                return log_error_errno(r, "Failed to register the error names: %m");
        if (streq_ptr(m->options.bus, "session"))
                r = sd_bus_open_user_with_description(&m->bus, "cgbypassd");
        else
                r = sd_bus_open_system_with_description(&m->bus, "cgbypassd");
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the %s bus: %m", m->options.bus ?: "system");

        /* the object first, then the name: a caller who sees the name finds the object */
        r = sd_bus_add_object_vtable(m->bus, NULL, CGBYPASS_BUS_PATH, CGBYPASS_BUS_INTERFACE, manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to register %s: %m", CGBYPASS_BUS_PATH);
        r = sd_bus_request_name(m->bus, CGBYPASS_BUS_NAME, 0);
        if (r == -EEXIST)
                return log_error_errno(r, "Another process owns %s already; is cgbypassd running?", CGBYPASS_BUS_NAME);
        if (r < 0)
                return log_error_errno(r, "Failed to take the name %s: %m", CGBYPASS_BUS_NAME);
        r = callers_watch(m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch for callers that disconnect: %m");
        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        /* the bus gone means no one can reach us: exit, and let the service manager decide */
        (void) sd_bus_set_exit_on_disconnect(m->bus, true);

        manager_notify_ready(m);
        log_info("Serving %s on the %s bus: %s backend on '%s', %zu delegation(s), %zu client change(s).",
                 CGBYPASS_BUS_NAME, m->options.bus ?: "system", backend_type_to_string(backend_get_type(m->backend)),
                 backend_get_root(m->backend), m->config->n_delegates, m->changes.n);

        r = sd_event_loop(m->event);
        (void) sd_notify(false, "STOPPING=1\nSTATUS=Exiting.");
        manager_flush(m);
        if (r < 0)
                return log_error_errno(r, "The event loop failed: %m");
        if (r > 0)
                return log_error_errno(-EPIPE, "Lost the connection to the bus.");
        return 0;
}
