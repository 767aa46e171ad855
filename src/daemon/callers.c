/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "callers.h"
#include "cgbypass/bus-errors.h"
#include "manager.h"

struct CallerEntry {
        char *name;             /* the unique bus name */
        uid_t uid;
        pid_t pid;
};

void caller_cache_done(CallerCache *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->v[i].name);
        free(c->v);
        *c = (CallerCache) {};
}

static CallerEntry *cache_find(const CallerCache *c, const char *name) {
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->v[i].name, name))
                        return &c->v[i];
        return NULL;
}

static void cache_add(CallerCache *c, const char *name, uid_t uid, pid_t pid) {
        CallerEntry *e;
        char *copy = strdup(name);

        if (!copy)
                return;         /* only a cache */
        if (!c->v) {
                c->v = calloc(CALLERS_CACHE_MAX, sizeof(CallerEntry));
                if (!c->v) {
                        free(copy);
                        return;
                }
        }
        if (c->n < CALLERS_CACHE_MAX)
                e = &c->v[c->n++];
        else {
                /* full: the slots take turns */
                e = &c->v[c->next++ % CALLERS_CACHE_MAX];
                free(e->name);
        }
        *e = (CallerEntry) { .name = copy, .uid = uid, .pid = pid };
}

static void cache_remove(CallerCache *c, const char *name) {
        CallerEntry *e = cache_find(c, name);

        if (!e)
                return;
        free(e->name);
        *e = c->v[--c->n];
}

/* The bus sends a caller's NameOwnerChanged after every call it sent before it left. */
static int on_name_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(msg, "sss", &name, &old_owner, &new_owner) < 0 || name[0] != ':' ||
            !isempty(new_owner))
                return 0;
        cache_remove(&m->callers, name);
        polkit_caller_gone(&m->queries, name);
        return 0;
}

/* One match for all: an sd_bus_track per check cost an AddMatch, a blocking GetNameOwner and a RemoveMatch. */
int callers_watch(Manager *m) {
        return sd_bus_add_match(m->bus, &m->callers_gone,
                                "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''",
                                on_name_owner_changed, m);
}

int caller_identify(Manager *m, sd_bus_message *msg, Caller *ret, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *sender = sd_bus_message_get_sender(msg);
        CallerEntry *e;
        uid_t uid;
        pid_t pid = 0;
        int r;

        *ret = (Caller) { .uid = (uid_t) -1 };
        /* the second pass, after polkit's answer: the check kept it, even for a caller gone since */
        if (polkit_query_caller(&m->queries, msg, &uid, &pid)) {
                *ret = (Caller) { .uid = uid, .pid = pid, .known = true };
                return 0;
        }
        e = sender ? cache_find(&m->callers, sender) : NULL;
        if (e) {
                *ret = (Caller) { .uid = e->uid, .pid = e->pid, .known = true };
                return 0;
        }
        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID, &creds);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Failed to learn who the caller is: %m");
        if (sd_bus_creds_get_augmented_mask(creds) & SD_BUS_CREDS_EUID)
                return sd_bus_error_set(error, BUS_ERROR_ACCESS_DENIED,
                                        "The bus did not vouch for the caller's uid; refusing to guess it");
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return sd_bus_error_set(error, BUS_ERROR_ACCESS_DENIED, "The bus did not tell the caller's uid");
        (void) sd_bus_creds_get_pid(creds, &pid);
        /* only a unique name is the connection's for good */
        if (sender && sender[0] == ':')
                cache_add(&m->callers, sender, uid, pid);
        *ret = (Caller) { .uid = uid, .pid = pid, .known = true };
        return 0;
}
