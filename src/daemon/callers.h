/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who calls: each bus connection's uid and pid, as the bus vouches for them
 * (never /proc), asked once per connection and forgotten when it leaves. A
 * unique name is never given to another connection, and a connection's
 * credentials are those it had when it connected, so the answer holds for
 * as long as the name does.
 */

#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct Manager Manager;

typedef struct Caller {
        uid_t uid;
        pid_t pid;              /* 0: not known */
        bool known;
} Caller;

#define CALLERS_CACHE_MAX 256

typedef struct CallerEntry CallerEntry;

/* The bus's word on each connection that called; when full, the slots take turns. */
typedef struct CallerCache {
        CallerEntry *v;         /* CALLERS_CACHE_MAX slots, allocated on the first call */
        size_t n, next;
} CallerCache;

void caller_cache_done(CallerCache *c);

/**
 * callers_watch() - learn when callers disconnect
 *
 * One NameOwnerChanged match for all of them: their cached credentials go,
 * and their pending polkit checks are dropped (polkit_caller_gone()).
 * Call once, before serving. Return: 0 or -errno.
 */
int callers_watch(Manager *m);

/**
 * caller_identify() - the sender of @msg
 *
 * Return: 0; or a negative errno with @error set (AccessDenied when the bus
 * does not vouch for the uid).
 */
int caller_identify(Manager *m, sd_bus_message *msg, Caller *ret, sd_bus_error *error);
