/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* AddDelegation's arguments, read from the message and checked. */
#include "cgbypass/bus-errors.h"
#include "delegation-request.h"

/* The variant of option @key, which holds @contents, into @ret: it must be of @type. */
static int read_option(sd_bus_message *msg, const char *key, const char *contents, const char *type, void *ret,
                       sd_bus_error *error) {
        char q[REQUEST_QUOTE_SIZE];

        if (!streq(contents, type))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT, "The option %s is a %s (%s), not '%s'",
                                         key, streq(type, "b") ? "boolean" : "string", type,
                                         request_quote(contents, q));
        return sd_bus_message_read(msg, "v", type, ret);
}

int delegation_request_read_options(sd_bus_message *msg, bool *create, bool *persistent, sd_bus_error *error) {
        bool seen_create = false, seen_lifetime = false;
        int r;

        r = sd_bus_message_enter_container(msg, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(msg, SD_BUS_TYPE_DICT_ENTRY, "sv")) > 0) {
                char q[REQUEST_QUOTE_SIZE];
                const char *key, *contents;

                r = sd_bus_message_read(msg, "s", &key);
                if (r < 0)
                        return r;
                r = sd_bus_message_peek_type(msg, NULL, &contents);
                if (r < 0)
                        return r;
                if (streq(key, "create") && !seen_create) {
                        int b;

                        r = read_option(msg, key, contents, "b", &b, error);
                        if (r < 0)
                                return r;
                        *create = b;
                        seen_create = true;
                } else if (streq(key, "lifetime") && !seen_lifetime) {
                        const char *v;

                        r = read_option(msg, key, contents, "s", &v, error);
                        if (r < 0)
                                return r;
                        if (!streq(v, "cgroup") && !streq(v, "persistent"))
                                return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
                                                         "The option lifetime is 'cgroup' (until the cgroup is "
                                                         "removed) or 'persistent' (until RemoveDelegation), not '%s'",
                                                         request_quote(v, q));
                        *persistent = streq(v, "persistent");
                        seen_lifetime = true;
                } else
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
                                                 "%s option '%s'; AddDelegation takes create (b) and lifetime (s)",
                                                 streq(key, "create") || streq(key, "lifetime") ? "A repeated" :
                                                 "An unknown", request_quote(key, q));
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

int delegation_request_read_controllers(sd_bus_message *msg, CgMask available, CgMask *ret, char **ret_names,
                                        sd_bus_error *error) {
        CgMask mask = 0;
        const char *name;
        int r;

        r = sd_bus_message_enter_container(msg, SD_BUS_TYPE_ARRAY, "s");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(msg, "s", &name)) > 0) {
                Controller x = controller_from_string(name);
                char q[REQUEST_QUOTE_SIZE];

                if (x < 0)
                        return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_CONTROLLER,
                                                 "There is no controller named '%s'", request_quote(name, q));
                if (!(available & CGMASK(x)))
                        return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_CONTROLLER,
                                                 "The controller '%s' has no hierarchy here: not built into this "
                                                 "kernel, or not a cgroup2 controller", name);
                mask |= CGMASK(x);
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;
        *ret_names = controller_mask_to_string(mask, " ");
        if (!*ret_names)
                return -ENOMEM;
        *ret = mask;
        return 0;
}
