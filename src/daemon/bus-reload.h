/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reload on the bus: the calls that arrive together share one reload. The
 * OCI hook asks for one at every container start, and a reload reads the
 * whole hierarchy again (~0.1 s at 10,000 cgroups here), so a burst of
 * starts would otherwise queue one reload per container. Each call is
 * answered by a reload that begins after the call was received, which is
 * what the caller asked for: the first call defers it to after every
 * message that is ready (the group commit's way), and the calls read
 * meanwhile join it. SIGHUP reloads at once, alone.
 */

#include <stddef.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "callers.h"

#define RELOAD_CALLS_MAX 256    /* calls waiting for one reload, at most: the next one runs it at once */

typedef struct ReloadCall {
        sd_bus_message *msg;
        Caller caller;
} ReloadCall;

typedef struct ReloadCalls {
        ReloadCall *v;
        size_t n, cap;
        sd_event_source *defer; /* the shared reload, while calls wait for it */
} ReloadCalls;

typedef struct Manager Manager;

/*
 * Answer @msg (an authorized Reload of @caller) with the next reload. Return:
 * 1 (the reply comes from that reload), or -errno (nothing queued; the method
 * handler's error).
 */
int bus_reload_queue(Manager *m, sd_bus_message *msg, const Caller *caller);

/* Run the waiting calls' reload now and answer them. */
void bus_reload_run(Manager *m);

/* At exit: every waiting call is answered that no reload came. */
void reload_calls_done(ReloadCalls *q);
