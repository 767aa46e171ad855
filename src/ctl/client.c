/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgbypass/bus-errors.h"
#include "cgbypass/log.h"
#include "client.h"

static const char *const bus_type_table[_BUS_TYPE_MAX] = {
        [BUS_SYSTEM] = "system",
        [BUS_SESSION] = "session",
};

const char *bus_type_to_string(BusType t) {
        return t >= 0 && t < _BUS_TYPE_MAX ? bus_type_table[t] : NULL;
}

BusType bus_type_from_string(const char *s) {
        for (BusType t = 0; t < _BUS_TYPE_MAX; t++)
                if (streq(s, bus_type_table[t]))
                        return t;
        return _BUS_TYPE_INVALID;
}

void client_done(Client *c) {
        c->bus = sd_bus_flush_close_unref(c->bus);
        polkit_agent_close(&c->agent);
}

static int client_connect(Client *c);

int client_start_agent(Client *c) {
        int r;

        /* polkit is asked on the system bus; a session-bus daemon is a test or a demo */
        if (!c->ask_password || c->bus_type != BUS_SYSTEM)
                return 0;
        /* no agent (and none of its complaints) when the bus is not there at all */
        r = client_connect(c);
        if (r < 0)
                return r;
        polkit_agent_open(&c->agent);
        return 0;
}

static int log_unreachable(const Client *c, const char *why) {
        log_error("cannot reach " CGBYPASS_BUS_NAME " on the %s bus: %s; is cgbypassd running?",
                  bus_type_to_string(c->bus_type), why);
        return -ENOTCONN;
}

static int client_connect(Client *c) {
        int r;

        if (c->bus)
                return 0;

        r = c->bus_type == BUS_SYSTEM ? sd_bus_open_system(&c->bus) : sd_bus_open_user(&c->bus);
        if (r == -ENOMEDIUM)
                return log_unreachable(c, "no session bus address (DBUS_SESSION_BUS_ADDRESS and "
                                          "XDG_RUNTIME_DIR are unset)");
        if (r < 0) {
                errno = -r;
                return log_unreachable(c, strerror(-r));
        }
        r = sd_bus_set_allow_interactive_authorization(c->bus, c->ask_password);
        if (r >= 0)
                /* sd-bus's 25 s would cut off a person typing a password, or race
                 * the daemon's own 25 s wait for polkit */
                r = sd_bus_set_method_call_timeout(c->bus, (c->ask_password ?
                                                            CGBYPASS_POLKIT_INTERACTIVE_TIMEOUT_USEC :
                                                            CGBYPASS_POLKIT_TIMEOUT_USEC) +
                                                           CGBYPASS_CALL_MARGIN_USEC);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the bus connection: %m");
        return 0;
}

/* Errors that the bus (not the daemon) sends when nobody serves org.cgbypass1 */
static bool bus_error_is_unreachable(const sd_bus_error *e) {
        return sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                      SD_BUS_ERROR_DISCONNECTED, SD_BUS_ERROR_NO_SERVER) ||
               startswith(e->name, "org.freedesktop.DBus.Error.Spawn.") ||
               startswith(e->name, "org.freedesktop.systemd1.");
}

static int log_call_error(const Client *c, const sd_bus_error *e, int r) {
        _cleanup_free_ char *msg = NULL;
        size_t n;

        /* our connection to the bus is gone (or never came up): nothing the daemon said */
        if (!c->bus || sd_bus_is_open(c->bus) <= 0 || !sd_bus_error_is_set(e)) {
                errno = r < 0 ? -r : EIO;
                return log_unreachable(c, strerror(errno));
        }
        if (!startswith(e->name, BUS_ERROR_PREFIX) && bus_error_is_unreachable(e))
                return log_unreachable(c, e->message ?: e->name);

        /* interfaces.md: "cgbypassctl: MESSAGE (org.cgbypass1.Error.NAME)". A message of several
         * lines (Reload's FILE:LINE problems) keeps that form on its first line; the rest follow. */
        msg = strdup(!isempty(e->message) ? e->message : strerror(sd_bus_error_get_errno(e)));
        if (!msg)
                return log_oom();
        n = strlen(msg);
        while (n > 0 && msg[n - 1] == '\n')
                msg[--n] = '\0';
        n = strcspn(msg, "\n");
        if (msg[n] == '\n') {
                /* "... nothing was changed:" introduces the lines below; the name goes between */
                size_t first = n > 0 && msg[n - 1] == ':' ? n - 1 : n;
                fprintf(stderr, "cgbypassctl: %.*s (%s)\n%s\n", (int) first, msg, e->name, msg + n + 1);
        } else
                fprintf(stderr, "cgbypassctl: %s (%s)\n", msg, e->name);
        return r < 0 ? r : -EIO;
}

int client_bus(Client *c, sd_bus **ret) {
        int r = client_connect(c);

        if (r < 0)
                return r;
        *ret = c->bus;
        return 0;
}

int client_result(Client *c, int r, const sd_bus_error *e) {
        return r < 0 ? log_call_error(c, e, r) : 0;
}

int client_get_properties(Client *c, sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = client_connect(c);
        if (r < 0)
                return r;
        r = sd_bus_call_method(c->bus, CGBYPASS_BUS_NAME, CGBYPASS_BUS_PATH,
                               "org.freedesktop.DBus.Properties", "GetAll", &e, ret_reply,
                               "s", CGBYPASS_BUS_INTERFACE);
        if (r < 0)
                return log_call_error(c, &e, r);
        return 0;
}

int client_log_parse_error(const char *member, int r) {
        return log_error_errno(r, "Failed to parse the reply to %s: %m", member);
}
