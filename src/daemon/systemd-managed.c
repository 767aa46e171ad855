/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* On a systemd host: only subtrees systemd delegates (systemd-managed.h). */
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "cgbypass/log.h"
#include "manager.h"
#include "systemd-managed.h"

void systemd_unit_done(SystemdUnit *u) {
        free(u->id);
        free(u->cgroup);
        *u = (SystemdUnit) {};
}

/* @path is @top or below it */
static bool path_at_or_below(const char *path, const char *top) {
        size_t n = strlen(top);

        if (streq(top, "/"))
                return true;
        return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool has_suffix(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && streq(s + n - k, suffix);
}

/* Where a delegation of the user's own systemd may be delegated at run time: a scope or service
 * of hers (unit_cgroup's last name), not a slice, to that user. */
static bool user_unit_cgroup(const char *path, const char *manager_cgroup) {
        const char *last = strrchr(path, '/');

        return path_at_or_below(path, manager_cgroup) && !streq(path, manager_cgroup) && last &&
                (has_suffix(last, ".scope") || has_suffix(last, ".service"));
}

/*
 * The rule for one path. @runtime: an AddDelegation to @uid (the fix then says "delegate", and a
 * scope or service the user's own systemd made is allowed: cgbypassd cannot ask that systemd, whose
 * socket is in /run/user, which ProtectHome= hides; the caller answers for its Delegate=yes).
 * Return: 0 (allowed), -EINVAL with *ret_why, or -ENOMEM.
 */
static int rule(const char *path, bool strictly_below, const char *what, bool runtime, uid_t uid,
                SystemdUnitLookup lookup, void *userdata, char **ret_why) {
        _cleanup_(systemd_unit_done) SystemdUnit u = {};
        const char *fix = runtime ?
                "Delegate a subtree systemd delegates instead: the cgroup of a service or scope with Delegate=yes, "
                "or a cgroup below it (see cgbypassd(8), SYSTEMD)" :
                "Configure a subtree systemd delegates instead: the cgroup of a service or scope with Delegate=yes, "
                "started before cgbypassd, or below it (see cgbypassd(8), SYSTEMD)";
        int r;

        *ret_why = NULL;
        r = lookup(path, &u, userdata);
        if (r < 0)
                r = asprintf(ret_why, "%s: cannot ask systemd which unit manages it (%s); cgbypassd runs under "
                             "systemd and %s only subtrees systemd delegates", path, strerror(-r),
                             runtime ? "delegates" : "configures");
        else if (u.delegate && u.id && startswith(u.id, "user@")) {
                unsigned long owner;

                /* delegated, but to the user's own systemd, which rewrites it as PID 1 does its part */
                if (runtime && sscanf(u.id, "user@%lu.service", &owner) == 1 && owner == uid &&
                    user_unit_cgroup(path, strempty(u.cgroup)))
                        return 0;
                if (runtime)
                        r = asprintf(ret_why, "%s is in %s of %s, which the user's own systemd manages: only the "
                                     "cgroup of a scope or service of hers with Delegate=yes can be delegated, "
                                     "and to that user (uid %lu), e.g. of 'systemd-run --user --scope -p "
                                     "Delegate=yes'", path, strempty(u.cgroup), u.id,
                                     sscanf(u.id, "user@%lu.service", &owner) == 1 ? owner : 0UL);
                else
                        r = asprintf(ret_why, "%s is in %s of %s, which the user's own systemd manages: a "
                                     "configuration cannot name a login session's cgroups. Delegate a scope "
                                     "the user starts with 'systemd-run --user --scope -p Delegate=yes' at "
                                     "run time instead ('cgbypassctl delegate')", path, strempty(u.cgroup), u.id);
        } else if (u.delegate && u.cgroup && path_at_or_below(path, u.cgroup)) {
                if (!strictly_below || !streq(path, u.cgroup))
                        return 0;
                r = asprintf(ret_why, "%s is the cgroup of %s (Delegate=yes): its own %s are systemd's (from the "
                             "unit's settings and its slice's cgroup.subtree_control); configure them in a "
                             "cgroup below it, e.g. %s/NAME", path, u.id, what, path);
        } else
                r = asprintf(ret_why, "%s is managed by systemd (it is in %s of %s, which has no Delegate=yes): "
                             "systemd rewrites the cgroup.subtree_control of the cgroups it manages at every "
                             "daemon-reload and unit start or stop. %s",
                             path, strempty(u.cgroup), strempty(u.id), fix);
        if (r < 0) {
                *ret_why = NULL;
                return -ENOMEM;
        }
        return -EINVAL;
}

static int check_path(const char *path, bool strictly_below, const ConfigLocation *loc, const char *what,
                      SystemdUnitLookup lookup, void *userdata, ConfigErrors *errs) {
        _cleanup_free_ char *why = NULL;
        int r;

        r = rule(path, strictly_below, what, false, 0, lookup, userdata, &why);
        if (r != -EINVAL)
                return r;
        return config_errors_add(errs, loc, "%s", why) < 0 ? -ENOMEM : -EINVAL;
}

int systemd_managed_check_delegation(const char *path, uid_t uid, SystemdUnitLookup lookup, void *userdata,
                                     char **ret_why) {
        return rule(path, false, NULL, true, uid, lookup, userdata, ret_why);
}

int systemd_managed_check(const Config *c, SystemdUnitLookup lookup, void *userdata, ConfigErrors *errs) {
        int ret = 0, r;

        for (size_t i = 0; i < c->n_cgroups; i++) {
                const CgroupSpec *s = &c->cgroups[i];
                const ConfigLocation *loc = config_location_is_set(&s->path_loc) ? &s->path_loc : &s->section_loc;
                bool controllers = s->controllers.enable || s->controllers.bypass;

                r = check_path(s->path, controllers || s->n_values > 0, loc,
                               controllers && s->n_values > 0 ? "controllers and values" :
                               controllers ? "controllers" : "values", lookup, userdata, errs);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        ret = r;
        }
        for (size_t i = 0; i < c->n_delegates; i++) {
                const DelegateSpec *d = &c->delegates[i];
                const ConfigLocation *loc = config_location_is_set(&d->path_loc) ? &d->path_loc : &d->section_loc;

                if (d->runtime)
                        continue;
                r = check_path(d->path, false, loc, NULL, lookup, userdata, errs);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        ret = r;
        }
        return ret;
}

/* ---- systemd's answers, over D-Bus ---- */

static int systemd_bus(sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *b = NULL;
        int r;

        /* as systemctl does for root: no dbus-daemon needed (early boot) */
        if (geteuid() == 0) {
                r = sd_bus_new(&b);
                if (r < 0)
                        return r;
                r = sd_bus_set_address(b, "unix:path=/run/systemd/private");
                if (r >= 0)
                        r = sd_bus_start(b);
                if (r >= 0) {
                        *ret = TAKE_PTR(b);
                        return 0;
                }
                b = sd_bus_flush_close_unref(b);
        }
        return sd_bus_open_system(ret);
}

#define SPECIAL_ROOT_SLICE "-.slice"

static const char *unit_interface(const char *id) {
        static const struct {
                const char *suffix, *interface;
        } table[] = {
                { ".service", "org.freedesktop.systemd1.Service" },
                { ".scope",   "org.freedesktop.systemd1.Scope" },
                { ".slice",   "org.freedesktop.systemd1.Slice" },
                { ".socket",  "org.freedesktop.systemd1.Socket" },
                { ".mount",   "org.freedesktop.systemd1.Mount" },
                { ".swap",    "org.freedesktop.systemd1.Swap" },
        };
        const char *dot = strrchr(id, '.');

        for (size_t i = 0; dot && i < ELEMENTSOF(table); i++)
                if (streq(dot, table[i].suffix))
                        return table[i].interface;
        return NULL;
}

static int lookup_on_bus(const char *path, SystemdUnit *ret, void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(systemd_unit_done) SystemdUnit u = {};
        sd_bus *bus = userdata;
        const char *object, *interface;
        int r, delegate = 0;

        r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "GetUnitByControlGroup", &e, &reply, "s", path);
        if (r == -ENOENT) {
                /* systemd 252 finds no unit for "/" and for a top-level cgroup no unit has: the root
                 * slice's, whose cgroup.subtree_control systemd writes */
                log_debug("GetUnitByControlGroup %s: %s; taking it for -.slice's", path, e.message ?: strerror(-r));
                u.id = strdup(SPECIAL_ROOT_SLICE);
                u.cgroup = strdup("/");
                if (!u.id || !u.cgroup)
                        return -ENOMEM;
                *ret = u;
                u = (SystemdUnit) {};
                return 0;
        }
        if (r < 0) {
                log_debug("GetUnitByControlGroup %s: %s", path, e.message ?: strerror(-r));
                return r;
        }
        r = sd_bus_message_read(reply, "o", &object);
        if (r < 0)
                return r;
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", object, "org.freedesktop.systemd1.Unit",
                                       "Id", &e, &u.id);
        if (r < 0)
                return r;
        interface = unit_interface(u.id);
        if (!interface)
                return -EBADMSG;
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", object, interface, "ControlGroup", &e,
                                       &u.cgroup);
        if (r < 0)
                return r;
        if (!streq(interface, "org.freedesktop.systemd1.Slice")) {
                r = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", object, interface, "Delegate",
                                                &e, 'b', &delegate);
                if (r < 0)
                        return r;
        }
        u.delegate = delegate;
        *ret = u;
        u = (SystemdUnit) {};
        return 0;
}

static bool under_systemd(Manager *m) {
        return backend_get_type(m->backend) != BACKEND_SIM && sd_booted() > 0;
}

int manager_check_systemd_managed(Manager *m, const Config *c, ConfigErrors *errs) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (!under_systemd(m))
                return 0;
        r = systemd_bus(&bus);
        if (r < 0) {
                ConfigLocation none = {};
                errno = -r;
                return config_errors_add(errs, &none, "cgbypassd runs under systemd but cannot ask it which "
                                         "cgroups it manages (%m)") < 0 ? -ENOMEM : -EINVAL;
        }
        return systemd_managed_check(c, lookup_on_bus, bus, errs);
}

int manager_check_systemd_delegation(Manager *m, const char *path, uid_t uid, char **ret_why) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        *ret_why = NULL;
        if (!under_systemd(m))
                return 0;
        r = systemd_bus(&bus);
        if (r < 0)
                return asprintf(ret_why, "cgbypassd runs under systemd but cannot ask it which cgroups it manages "
                                "(%s)", strerror(-r)) < 0 ? -ENOMEM : -EINVAL;
        return systemd_managed_check_delegation(path, uid, lookup_on_bus, bus, ret_why);
}
