/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One function per method of org.cgbypass1.Manager: marshal the arguments,
 * call, hand back the reply. The daemon is the authority on every argument;
 * the library refuses only what it cannot send (NULL).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/cgbypass.h"
#include "libcgbypass-internal.h"

#define KNOWN_DELEGATION_FLAGS (CGBYPASS_DELEGATION_NO_CREATE | CGBYPASS_DELEGATION_PERSISTENT)

static int invalid(sd_bus_error *ret_error, const char *what) {
        return sd_bus_error_setf(ret_error, SD_BUS_ERROR_INVALID_ARGS, "libcgbypass: %s", what);
}

static int new_call(sd_bus *bus, const char *member, sd_bus_message **ret) {
        return sd_bus_message_new_method_call(bus, ret, CGBYPASS_BUS_NAME, CGBYPASS_BUS_PATH,
                                              CGBYPASS_BUS_INTERFACE, member);
}

/* @m's reply, or its error; the timeout is the connection's. Takes @m. */
static int call(sd_bus *bus, sd_bus_message *m, int r, sd_bus_message **ret_reply, sd_bus_error *ret_error) {
        sd_bus_error e = SD_BUS_ERROR_NULL;

        if (r >= 0)
                r = sd_bus_call(bus, m, 0, ret_error ? ret_error : &e, ret_reply);
        else if (ret_error && !sd_bus_error_is_set(ret_error))
                /* building the call failed: say so in the error too */
                (void) sd_bus_error_set_errno(ret_error, r);
        sd_bus_error_free(&e);
        sd_bus_message_unref(m);
        return r < 0 ? r : 0;
}

static int call_ss(sd_bus *bus, const char *member, const char *a, const char *b, sd_bus_error *ret_error) {
        sd_bus_message *m = NULL;
        int r;

        if (!bus || !a || !b)
                return invalid(ret_error, "a NULL argument");
        r = new_call(bus, member, &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", a, b);
        return call(bus, m, r, NULL, ret_error);
}

/* a method of one string argument; @ret_reply NULL: no reply to read */
static int call_s(sd_bus *bus, const char *member, const char *a, sd_bus_message **ret_reply,
                  sd_bus_error *ret_error) {
        sd_bus_message *m = NULL;
        int r;

        if (!bus || !a)
                return invalid(ret_error, "a NULL argument");
        r = new_call(bus, member, &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", a);
        return call(bus, m, r, ret_reply, ret_error);
}

/* a method without arguments */
static int call_void(sd_bus *bus, const char *member, sd_bus_message **ret_reply, sd_bus_error *ret_error) {
        sd_bus_message *m = NULL;
        int r;

        if (!bus)
                return invalid(ret_error, "a NULL argument");
        r = new_call(bus, member, &m);
        return call(bus, m, r, ret_reply, ret_error);
}

_public_ int cgbypass_enable_controller(sd_bus *bus, const char *cgroup, const char *controller,
                                        sd_bus_error *ret_error) {
        return call_ss(bus, "EnableController", cgroup, controller, ret_error);
}

_public_ int cgbypass_bypass_controller(sd_bus *bus, const char *cgroup, const char *controller,
                                        sd_bus_error *ret_error) {
        return call_ss(bus, "BypassController", cgroup, controller, ret_error);
}

_public_ int cgbypass_set_subtree_control(sd_bus *bus, const char *cgroup, const char *change,
                                          sd_bus_error *ret_error) {
        return call_ss(bus, "SetSubtreeControl", cgroup, change, ret_error);
}

_public_ int cgbypass_get_cgroup(sd_bus *bus, const char *cgroup, sd_bus_message **ret_reply,
                                 sd_bus_error *ret_error) {
        if (!ret_reply)
                return invalid(ret_error, "a NULL argument");
        return call_s(bus, "GetCgroup", cgroup, ret_reply, ret_error);
}

_public_ int cgbypass_get_effective_tree(sd_bus *bus, const char *controller, char **ret_tree,
                                         sd_bus_error *ret_error) {
        sd_bus_message *reply = NULL;
        const char *text;
        char *copy;
        int r;

        if (!ret_tree)
                return invalid(ret_error, "a NULL argument");
        r = call_s(bus, "GetEffectiveTree", controller, &reply, ret_error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "s", &text);
        copy = r >= 0 ? strdup(text) : NULL;
        sd_bus_message_unref(reply);
        if (r < 0)
                return sd_bus_error_set_errnof(ret_error, r, "libcgbypass: GetEffectiveTree's reply: %m");
        if (!copy)
                return sd_bus_error_set_errno(ret_error, ENOMEM);
        *ret_tree = copy;
        return 0;
}

_public_ int cgbypass_get_effective_nodes(sd_bus *bus, const char *controller, sd_bus_message **ret_reply,
                                          sd_bus_error *ret_error) {
        if (!ret_reply)
                return invalid(ret_error, "a NULL argument");
        return call_s(bus, "GetEffectiveNodes", controller, ret_reply, ret_error);
}

_public_ int cgbypass_list_delegations(sd_bus *bus, sd_bus_message **ret_reply, sd_bus_error *ret_error) {
        if (!ret_reply)
                return invalid(ret_error, "a NULL argument");
        return call_void(bus, "ListDelegations", ret_reply, ret_error);
}

_public_ int cgbypass_reload(sd_bus *bus, sd_bus_error *ret_error) {
        return call_void(bus, "Reload", NULL, ret_error);
}

_public_ int cgbypass_add_delegation(sd_bus *bus, const char *cgroup, uint32_t uid, char **controllers,
                                     uint64_t flags, sd_bus_error *ret_error) {
        sd_bus_message *m = NULL;
        int r;

        if (!bus || !cgroup)
                return invalid(ret_error, "a NULL argument");
        if (flags & ~KNOWN_DELEGATION_FLAGS)
                return invalid(ret_error, "unknown CGBYPASS_DELEGATION_* flags");
        r = new_call(bus, "AddDelegation", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "su", cgroup, uid);
        if (r >= 0)
                r = sd_bus_message_append_strv(m, controllers);
        if (r >= 0)
                r = sd_bus_message_open_container(m, SD_BUS_TYPE_ARRAY, "{sv}");
        /* only what differs from the default: an older daemon's defaults are the same */
        if (r >= 0 && (flags & CGBYPASS_DELEGATION_NO_CREATE))
                r = sd_bus_message_append(m, "{sv}", "create", "b", 0);
        if (r >= 0 && (flags & CGBYPASS_DELEGATION_PERSISTENT))
                r = sd_bus_message_append(m, "{sv}", "lifetime", "s", "persistent");
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return call(bus, m, r, NULL, ret_error);
}

_public_ int cgbypass_remove_delegation(sd_bus *bus, const char *cgroup, sd_bus_error *ret_error) {
        return call_s(bus, "RemoveDelegation", cgroup, NULL, ret_error);
}

_public_ int cgbypass_match_cgroup_changed(sd_bus *bus, sd_bus_slot **ret_slot, sd_bus_message_handler_t callback,
                                           void *userdata) {
        if (!bus || !callback)
                return -EINVAL;
        return sd_bus_match_signal(bus, ret_slot, CGBYPASS_BUS_NAME, CGBYPASS_BUS_PATH, CGBYPASS_BUS_INTERFACE,
                                   "CgroupChanged", callback, userdata);
}
