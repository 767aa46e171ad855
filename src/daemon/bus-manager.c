/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus face of the daemon. Every changing method: read the arguments,
 * validate them, resolve the delegation, ask polkit (asynchronously), then
 * plan and apply through the manager, which emits CgroupChanged; then reply.
 * Each change and each refusal is logged with the caller's uid and pid, the
 * cgroup, the change and the decision.
 */
#include <inttypes.h>
#include <signal.h>
#include <systemd/sd-daemon.h>

#include "adopt.h"
#include "bus-manager.h"
#include "callers.h"
#include "cgbypass/bus-errors.h"
#include "cgbypass/log.h"
#include "cgbypass/strbuf.h"
#include "decision-log.h"
#include "delegation.h"
#include "polkit.h"
#include "delegation-request.h"
#include "runtime-delegations.h"

static void log_decision(int level, const Caller *caller, const char *method, const char *cgroup, const char *arg,
                         bool refused, const char *error, const char *detail) {
        decision_log(&(Decision) { .priority = level, .method = method, .cgroup = cgroup, .argument = arg,
                                   .caller = caller, .refused = refused, .error = error, .detail = detail });
}

/* Log a refusal and hand the error to sd-bus, which replies with it. */
static int refuse(const Caller *caller, const char *method, const char *cgroup, const char *arg, int r,
                  sd_bus_error *error) {
        if (sd_bus_error_is_set(error))
                log_decision(LOG_NOTICE, caller, method, cgroup, arg, true, error->name, error->message);
        else
                log_decision(LOG_NOTICE, caller, method, cgroup, arg, true, NULL, strerror(-r));
        return r;
}

static int no_such_cgroup(sd_bus_error *error, const char *path) {
        return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_CGROUP, "%s does not exist", path);
}

int bus_error_from_refusal(sd_bus_error *error, int r, const Refusal *f) {
        if (f->kind == REFUSAL_REQUEST && reason_bus_error(f->reason))
                return sd_bus_error_set(error, reason_bus_error(f->reason), f->detail);
        return r;
}

/* A directory an owner made beyond a limit is there, but no cgroup cgbypassd manages: say why. */
static int no_such_cgroup_or_limit(Manager *m, sd_bus_error *error, const char *path) {
        _cleanup_free_ char *why = NULL;
        int r;

        r = adopt_refusal(m, path, &why);
        if (r == -EDQUOT)
                return sd_bus_error_setf(error, BUS_ERROR_TOO_MANY_CGROUPS, "cgbypassd did not take on %s: %s",
                                         path, why);
        if (r < 0)
                return r;
        return no_such_cgroup(error, path);
}

int bus_error_from_change(sd_bus_error *error, int r, const Refusal *f, const ChangeRequest *req) {
        switch (f->kind) {
        case REFUSAL_NO_SUCH_CGROUP:
                return no_such_cgroup(error, req->cgroup);
        case REFUSAL_MODEL:
                return bus_error_set_model(error, r, f->reason, f->cgroup, f->file, f->controller);
        case REFUSAL_BREAKS_BELOW:
                return sd_bus_error_setf(error, BUS_ERROR_IN_USE_BELOW,
                                         "Changing %s in %s would break what is asked for below it: %s",
                                         req->names, req->cgroup, f->detail);
        case REFUSAL_NOT_RECORDED:
                return sd_bus_error_setf(error, BUS_ERROR_FAILED,
                                         "cgbypassd could not record the change in its state directory (%s); "
                                         "it was taken back: the hierarchy is as before", strerror(-r));
        case REFUSAL_NOT_RECORDED_LEFT:
                return sd_bus_error_setf(error, BUS_ERROR_FAILED,
                                         "cgbypassd could not record the change in its state directory (%s), "
                                         "and taking it back failed: the hierarchy is between the old and the "
                                         "new state until the next reload (see the journal)", strerror(-r));
        default:
                return bus_error_from_refusal(error, r, f);
        }
}

/* What manager_add_delegation() and manager_remove_delegation() refused: their reason, else Failed. */
static int bus_error_from_delegation(sd_bus_error *error, int r, const Refusal *f) {
        if (r == -ENOMEM || f->kind == REFUSAL_REQUEST)
                return bus_error_from_refusal(error, r, f);
        return sd_bus_error_set(error, BUS_ERROR_FAILED, strerror(-r));
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

int bus_error_from_reload(sd_bus_error *error, int r, const Refusal *f, const ConfigErrors *errs) {
        switch (f->kind) {
        case REFUSAL_CONFIG_INVALID:
                return config_invalid_error(error, errs);
        case REFUSAL_APPLY_FAILED:
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "Applying the configuration failed (%s); the "
                                         "hierarchy is as before", strerror(-r));
        case REFUSAL_REREAD_FAILED:
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "Re-reading the hierarchy failed: %s; nothing was "
                                         "changed, the running configuration is kept", f->detail);
        case REFUSAL_NOT_RECORDED:
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "The configuration was applied but could not be "
                                         "recorded in the state directory (%s); it was taken back: the hierarchy "
                                         "is as before and the running configuration is kept", strerror(-r));
        case REFUSAL_APPLY_LEFT:
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "Applying the configuration failed (%s), and "
                                         "taking it back failed too: the hierarchy is between the old and the "
                                         "new configuration until the next reload (see the journal)",
                                         strerror(-r));
        default:
                return r;
        }
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
        r = polkit_check(&m->queries, msg, action, details, caller->uid, caller->pid, &verdict, &why);
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

/*
 * AddDelegation (@names: its controllers) or RemoveDelegation (@names NULL) of @cgroup, owned by @uid ("" where
 * none): org.cgbypass1.delegate for anyone but root. Return: as authorize(), a refusal (< 0) logged.
 */
static int authorize_delegate(Manager *m, sd_bus_message *msg, const Caller *caller, const char *cgroup,
                              const char *uid, char *names, const char *arg, sd_bus_error *error) {
        const char *method = names ? "AddDelegation" : "RemoveDelegation";
        _cleanup_free_ char *deny = NULL;
        char *details[9] = { (char *) "cgroup", (char *) cgroup, (char *) "uid", (char *) uid };
        size_t n = 4;
        int r;

        if (names) {
                details[n++] = (char *) "controller";
                details[n++] = names;
        }
        details[n++] = (char *) "operation";
        details[n] = (char *) (names ? "add" : "remove");
        if (asprintf(&deny, "polkit does not allow you to %s %s (action %s)",
                     names ? "delegate" : "end the delegation of", cgroup, POLKIT_ACTION_DELEGATE) < 0)
                r = -ENOMEM;
        else
                r = authorize(m, msg, caller, caller->uid == 0 ? NULL : POLKIT_ACTION_DELEGATE, details,
                              BUS_ERROR_ACCESS_DENIED, deny, error);
        return r < 0 ? refuse(caller, method, cgroup, arg, r, error) : r;
}

/* The end of AddDelegation and RemoveDelegation: @r of the change, logged, and the reply */
static int delegation_done(sd_bus_message *msg, const Caller *caller, const char *method, const char *cgroup,
                           const char *arg, int r, const Refusal *refusal, const char *how, sd_bus_error *error) {
        if (r < 0)
                return refuse(caller, method, cgroup, arg, bus_error_from_delegation(error, r, refusal), error);
        log_decision(LOG_INFO, caller, method, cgroup, arg, false, NULL, how);
        return sd_bus_reply_method_return(msg, NULL);
}

/* A change request whose reply waits for its record's commit. */
typedef struct ChangeCall {
        sd_bus_message *msg;    /* holds the strings below */
        ChangeRequest req;
        Caller caller;
        const char *method, *cgroup, *arg, *how;
} ChangeCall;

static void change_call_free(ChangeCall *c) {
        sd_bus_message_unref(c->msg);
        change_request_done(&c->req);
        free(c);
}

/* a directory that is there but was not taken on (a limit) is said as such */
static int change_error(Manager *m, sd_bus_error *error, int r, const Refusal *f, const ChangeRequest *req) {
        if (f->kind == REFUSAL_NO_SUCH_CGROUP)
                return no_such_cgroup_or_limit(m, error, req->cgroup);
        return bus_error_from_change(error, r, f, req);
}

static void change_answer(Manager *m, int r, const Refusal *f, size_t ops, void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        ChangeCall *c = userdata;

        if (r < 0) {
                r = refuse(&c->caller, c->method, c->cgroup, c->arg, change_error(m, &error, r, f, &c->req), &error);
                if (sd_bus_error_is_set(&error))
                        (void) sd_bus_reply_method_error(c->msg, &error);
                else
                        (void) sd_bus_reply_method_errno(c->msg, r, NULL);
        } else {
                char detail[256];

                (void) snprintf(detail, sizeof(detail), "%zu operation(s); %s", ops, c->how);
                log_decision(LOG_INFO, &c->caller, c->method, c->cgroup, c->arg, false, NULL, detail);
                (void) sd_bus_reply_method_return(c->msg, NULL);
        }
        change_call_free(c);
}

static int method_change(sd_bus_message *msg, Manager *m, ChangeKind kind, sd_bus_error *error) {
        _cleanup_(change_request_done) ChangeRequest req = {};
        _cleanup_(authorization_done) Authorization auth = {};
        _cleanup_(refusal_done) Refusal refusal = {};
        const char *cgroup, *arg, *method = methods[kind];
        ChangeCall *call;
        Caller caller;
        size_t ops = 0;
        int r;

        r = sd_bus_message_read(msg, "ss", &cgroup, &arg);
        if (r < 0)
                return r;
        r = caller_identify(m, msg, &caller, error);
        if (r < 0)
                return refuse(&caller, method, cgroup, arg, r, error);
        r = request_parse(hierarchy_builtin(backend_get_model(m->backend)), kind, cgroup, arg, &req, &refusal);
        if (r >= 0)
                r = delegation_authorize(m->config, caller.uid, &req, &auth, &refusal);
        if (r < 0)
                return refuse(&caller, method, cgroup, arg, bus_error_from_refusal(error, r, &refusal), error);

        char *details[] = {
                (char *) "cgroup", (char *) req.cgroup,
                (char *) "controller", req.names,
                (char *) "change", req.value,
                (char *) "file", (char *) req.file,
                NULL,
        };
        r = authorize(m, msg, &caller, auth.action, details, reason_bus_error(auth.deny_reason), auth.deny_message,
                      error);
        if (r < 0)
                return refuse(&caller, method, cgroup, arg, r, error);
        if (r == 0)
                return 1;       /* answered later, or never (caller gone) */

        /* the reply waits for the record's commit, which the requests arriving meanwhile share */
        call = calloc(1, sizeof(ChangeCall));
        if (!call)
                return -ENOMEM;
        *call = (ChangeCall) {
                .msg = sd_bus_message_ref(msg), .req = req, .caller = caller, .method = method,
                .cgroup = cgroup, .arg = arg,
                .how = !auth.action ? "uid 0" :
                       auth.admin ? "administrator, polkit " POLKIT_ACTION_MANAGE :
                       "owner of the delegation, polkit " POLKIT_ACTION_MANAGE_DELEGATED,
        };
        req = (ChangeRequest) {};
        r = manager_change(m, &call->req, auth.admin, caller.uid, &ops, &refusal, change_answer, call);
        if (r == 0)
                change_answer(m, 0, &refusal, ops, call);       /* committed at once: no event loop */
        if (r < 0) {
                r = refuse(&caller, method, cgroup, arg, change_error(m, error, r, &refusal, &call->req), error);
                change_call_free(call);
                return r;
        }
        return 1;       /* answered by change_answer() */
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
        /* answered by the reload that the calls arriving with it share */
        r = bus_reload_queue(m, msg, &caller);
        if (r < 0)
                return refuse(&caller, "Reload", NULL, NULL, r, error);
        return 1;
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
        _cleanup_(refusal_done) Refusal refusal = {};
        int r;

        r = request_path_verify(path, &refusal);
        if (r < 0)
                return bus_error_from_refusal(error, r, &refusal);
        /* a child its owner just made is known only after this */
        (void) read_view_prepare(m, path);
        r = hierarchy_lookup(backend_get_model(m->backend), path, ret);
        if (r < 0)
                return no_such_cgroup_or_limit(m, error, path);
        return 0;
}

/* What GetCgroup tells of one cgroup: one helper per key, each appending its variant's value. */
typedef struct CgroupInfo {
        const Manager *m;
        const Hierarchy *h;
        Cgroup *c;
        const char *path;
        const DelegateSpec *d;  /* the delegation that covers it, or NULL */
} CgroupInfo;

static int cgroup_controllers(sd_bus_message *reply, const CgroupInfo *i) {
        return append_mask(reply, cgroup_get_controllers(i->h, i->c), cgroup_get_bypassed(i->h, i->c));
}

static int cgroup_subtree_control(sd_bus_message *reply, const CgroupInfo *i) {
        return append_mask(reply, cgroup_get_subtree_control(i->c), cgroup_get_subtree_bypass(i->c));
}

static int cgroup_type(sd_bus_message *reply, const CgroupInfo *i) {
        return sd_bus_message_append(reply, "s", cgroup_type_to_string(cgroup_get_type(i->h, i->c)));
}

static int cgroup_delegated_to(sd_bus_message *reply, const CgroupInfo *i) {
        return sd_bus_message_append(reply, "u", i->d ? (uint32_t) i->d->uid : UINT32_MAX);
}

static int cgroup_delegation(sd_bus_message *reply, const CgroupInfo *i) {
        return sd_bus_message_append(reply, "s", i->d ? i->d->path : "");
}

static int cgroup_delegated_controllers(sd_bus_message *reply, const CgroupInfo *i) {
        return append_mask(reply, i->d ? i->d->controllers : 0, 0);
}

static int cgroup_delegation_kind(sd_bus_message *reply, const CgroupInfo *i) {
        return sd_bus_message_append(reply, "s", !i->d ? "" : i->d->runtime ? "runtime" : "config");
}

static int cgroup_managed(sd_bus_message *reply, const CgroupInfo *i) {
        return sd_bus_message_append(reply, "b", config_find_cgroup(i->m->config, i->path) ||
                                                 (i->d && streq(i->d->path, i->path)));
}

static int cgroup_populated(sd_bus_message *reply, const CgroupInfo *i) {
        return sd_bus_message_append(reply, "b", cgroup_is_populated(i->c));
}

/* per controller the cgroup has or bypasses: whose css its processes use */
static int cgroup_effective(sd_bus_message *reply, const CgroupInfo *i) {
        int r;

        r = sd_bus_message_open_container(reply, SD_BUS_TYPE_ARRAY, "{ss}");
        if (r < 0)
                return r;
        FOREACH_CONTROLLER_IN(x, cgroup_get_controllers(i->h, i->c) | cgroup_get_bypassed(i->h, i->c)) {
                _cleanup_free_ char *owner = NULL;
                Cgroup *o = cgroup_effective_css_owner(i->h, i->c, x);

                if (!o || cgroup_path(o, &owner) < 0)
                        continue;
                r = sd_bus_message_append(reply, "{ss}", controller_to_string(x), owner);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int cgroup_children(sd_bus_message *reply, const CgroupInfo *i) {
        int r;

        r = sd_bus_message_open_container(reply, SD_BUS_TYPE_ARRAY, "s");
        if (r < 0)
                return r;
        for (Cgroup *k = cgroup_first_child(i->c); k; k = cgroup_next_sibling(k)) {
                _cleanup_free_ char *kp = NULL;
                if (cgroup_path(k, &kp) < 0)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "s", kp);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* GetCgroup's keys, in the order of org.cgbypass1(5) */
static const struct {
        const char *key;
        const char *signature;
        int (*append)(sd_bus_message *reply, const CgroupInfo *i);
} cgroup_keys[] = {
        { "controllers",           "as",    cgroup_controllers           },
        { "subtree_control",       "as",    cgroup_subtree_control       },
        { "type",                  "s",     cgroup_type                  },
        { "delegated_to",          "u",     cgroup_delegated_to          },
        { "delegation",            "s",     cgroup_delegation            },
        { "delegated_controllers", "as",    cgroup_delegated_controllers },
        { "delegation_kind",       "s",     cgroup_delegation_kind       },
        { "managed",               "b",     cgroup_managed               },
        { "populated",             "b",     cgroup_populated             },
        { "effective",             "a{ss}", cgroup_effective             },
        { "children",              "as",    cgroup_children              },
};

/* A method's reply that is an array of @contents, opened */
static int reply_array_open(sd_bus_message *msg, const char *contents, sd_bus_message **ret) {
        int r = sd_bus_message_new_method_return(msg, ret);

        return r < 0 ? r : sd_bus_message_open_container(*ret, SD_BUS_TYPE_ARRAY, contents);
}

/* Unless @r says filling it failed, closes the array of @reply and sends it */
static int reply_array_send(sd_bus_message *reply, int r) {
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static int method_get_cgroup(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        CgroupInfo i = { .m = m };
        int r;

        r = sd_bus_message_read(msg, "s", &i.path);
        if (r < 0)
                return r;
        r = lookup_cgroup(m, i.path, &i.c, error);
        if (r < 0)
                return r;
        i.h = backend_get_model(m->backend);
        i.d = config_find_delegation(m->config, i.path);

        r = reply_array_open(msg, "{sv}", &reply);
        if (r < 0)
                return r;
        for (size_t k = 0; k < ELEMENTSOF(cgroup_keys); k++) {
                r = sd_bus_message_open_container(reply, SD_BUS_TYPE_DICT_ENTRY, "sv");
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "s", cgroup_keys[k].key);
                if (r < 0)
                        return r;
                r = sd_bus_message_open_container(reply, SD_BUS_TYPE_VARIANT, cgroup_keys[k].signature);
                if (r < 0)
                        return r;
                r = cgroup_keys[k].append(reply, &i);
                if (r < 0)
                        return r;
                r = sd_bus_message_close_container(reply);      /* the variant */
                if (r < 0)
                        return r;
                r = sd_bus_message_close_container(reply);      /* the entry */
                if (r < 0)
                        return r;
        }
        return reply_array_send(reply, r);
}

/* The controller argument of the effective-tree reads, and a look at the hierarchy before answering. */
static int read_tree_controller(sd_bus_message *msg, Manager *m, const char **ret_name, Controller *ret,
                                sd_bus_error *error) {
        const char *name = NULL;
        Controller x = _CONTROLLER_INVALID;     /* with name: set by read_tree_controller(); -O3 cannot tell */
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
        (void) read_view_prepare(m, NULL);
        *ret_name = name;
        *ret = x;
        return 0;
}

static int no_tree(sd_bus_error *error, const char *name) {
        return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_CONTROLLER,
                                 "The controller '%s' has no hierarchy here: not built into this kernel, "
                                 "or not a cgroup2 controller", name);
}

/* The controller argument's view, kept until the model changes (read-view.c). */
static int read_tree_view(sd_bus_message *msg, Manager *m, const EffectiveView **ret, sd_bus_error *error) {
        const char *name = NULL;
        Controller x = _CONTROLLER_INVALID;     /* with name: set by read_tree_controller(); -O3 cannot tell */
        int r;

        r = read_tree_controller(msg, m, &name, &x, error);
        if (r < 0)
                return r;
        r = read_view_get(m, x, ret);
        if (r == -EINVAL)
                return no_tree(error, name);
        return r;
}

static int method_get_effective_tree(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        const EffectiveView *v;
        int r;

        r = read_tree_view(msg, userdata, &v, error);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "s", v->tree);
}

/* GetEffectiveTree's lines as data: a cgroup name may hold '|' or spaces, a line cannot say so */
static int method_get_effective_nodes(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const EffectiveView *v;
        int r;

        r = read_tree_view(msg, userdata, &v, error);
        if (r < 0)
                return r;
        r = reply_array_open(msg, "(uas)", &reply);
        /* -EINVAL here is sd-bus refusing a path that is not UTF-8 */
        for (size_t i = 0; r >= 0 && i < v->n_nodes; i++) {
                r = sd_bus_message_open_container(reply, SD_BUS_TYPE_STRUCT, "uas");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "u", (uint32_t) v->nodes[i].depth);
                if (r >= 0)
                        r = sd_bus_message_append_strv(reply, v->nodes[i].members);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        return reply_array_send(reply, r);
}

static int method_list_delegations(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        int r;

        r = reply_array_open(msg, "(suas)", &reply);
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
        return reply_array_send(reply, r);
}

static int method_add_delegation(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *names = NULL, *arg = NULL;
        _cleanup_(refusal_done) Refusal refusal = {};
        Manager *m = userdata;
        const char *cgroup;
        bool create = true, persistent = false;
        CgMask controllers = 0;
        uint32_t uid;
        Caller caller;
        int r;

        r = sd_bus_message_read(msg, "su", &cgroup, &uid);
        if (r < 0)
                return r;
        r = delegation_request_read_controllers(msg, hierarchy_builtin(backend_get_model(m->backend)), &controllers, &names, error);
        if (r >= 0)
                r = delegation_request_read_options(msg, &create, &persistent, error);
        if (r >= 0 && asprintf(&arg, "uid=%u controllers='%s'", (unsigned) uid, names) < 0)
                r = -ENOMEM;
        if (r >= 0)
                r = caller_identify(m, msg, &caller, error);
        else
                caller = (Caller) {};
        if (r >= 0) {
                r = request_path_verify(cgroup, &refusal);
                if (r < 0)
                        r = bus_error_from_refusal(error, r, &refusal);
        }
        if (r >= 0 && streq(cgroup, "/"))
                r = sd_bus_error_set(error, BUS_ERROR_ROOT_CGROUP, "The root cgroup cannot be delegated; "
                                     "delegate a cgroup below it");
        if (r >= 0 && (uid == 0 || uid == UINT32_MAX))
                r = sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT, "uid %" PRIu32 " cannot own a delegation%s",
                                      uid, uid == 0 ? ": root has every cgroup already" : "");
        if (r < 0)
                return refuse(&caller, "AddDelegation", cgroup, arg, r, error);

        char uidbuf[16];
        (void) snprintf(uidbuf, sizeof(uidbuf), "%" PRIu32, uid);
        r = authorize_delegate(m, msg, &caller, cgroup, uidbuf, names, arg, error);
        if (r <= 0)
                return r < 0 ? r : 1;

        r = manager_add_delegation(m, cgroup, uid, controllers, create, persistent, &refusal);
        return delegation_done(msg, &caller, "AddDelegation", cgroup, arg, r, &refusal,
                               persistent ? "lifetime persistent" : "lifetime cgroup", error);
}

static int method_remove_delegation(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(refusal_done) Refusal refusal = {};
        Manager *m = userdata;
        const char *cgroup;
        Caller caller;
        int r;

        r = sd_bus_message_read(msg, "s", &cgroup);
        if (r < 0)
                return r;
        r = caller_identify(m, msg, &caller, error);
        if (r >= 0) {
                r = request_path_verify(cgroup, &refusal);
                if (r < 0)
                        r = bus_error_from_refusal(error, r, &refusal);
        }
        if (r < 0)
                return refuse(&caller, "RemoveDelegation", cgroup, NULL, r, error);

        const DelegateSpec *d = config_find_delegation(m->config, cgroup);
        char uidbuf[16] = "";
        if (d && streq(d->path, cgroup))
                (void) snprintf(uidbuf, sizeof(uidbuf), "%u", (unsigned) d->uid);
        r = authorize_delegate(m, msg, &caller, cgroup, uidbuf, NULL, NULL, error);
        if (r <= 0)
                return r < 0 ? r : 1;

        r = manager_remove_delegation(m, cgroup, NULL, &refusal);
        return delegation_done(msg, &caller, "RemoveDelegation", cgroup, NULL, r, &refusal, NULL, error);
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
        SD_BUS_METHOD_WITH_ARGS("AddDelegation",
                                SD_BUS_ARGS("s", cgroup, "u", uid, "as", controllers, "a{sv}", options),
                                SD_BUS_NO_RESULT,
                                method_add_delegation,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemoveDelegation",
                                SD_BUS_ARGS("s", cgroup),
                                SD_BUS_NO_RESULT,
                                method_remove_delegation,
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
        Refusal refusal = {};

        log_info("Received SIGHUP.");
        (void) manager_reload(userdata, &errs, &refusal);   /* logged there */
        refusal_done(&refusal);
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
        /* the bus gone means no one can reach us: the loop exits, and the service manager decides */
        r = bus_loop_attach(&m->bus_loop, m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");

        r = watch_start(m);
        if (r < 0)
                log_warning_errno(r, "Failed to watch the delegations; owners' new cgroups are seen at the next "
                                  "call that concerns them: %m");
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
