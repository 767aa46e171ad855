/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reload calls that arrive together, answered by one reload (see bus-reload.h). */
#include <stdlib.h>
#include <syslog.h>

#include "bus-manager.h"
#include "bus-reload.h"
#include "cgbypass/bus-errors.h"
#include "cgbypass/log.h"
#include "decision-log.h"

static int on_reload(sd_event_source *s, void *userdata) {
        bus_reload_run(userdata);
        return 0;
}

int bus_reload_queue(Manager *m, sd_bus_message *msg, const Caller *caller) {
        ReloadCalls *q = &m->reloads;
        int r;

        if (q->n == q->cap) {
                size_t cap = q->cap ? 2 * q->cap : 4;
                ReloadCall *v = reallocarray(q->v, cap, sizeof(ReloadCall));
                if (!v)
                        return -ENOMEM;
                q->v = v;
                q->cap = cap;
        }
        q->v[q->n++] = (ReloadCall) { .msg = sd_bus_message_ref(msg), .caller = *caller };
        if (q->n >= RELOAD_CALLS_MAX) {
                bus_reload_run(m);
                return 1;
        }
        if (q->defer)
                return 1;
        r = sd_event_add_defer(m->event, &q->defer, on_reload, m);
        if (r >= 0)
                r = sd_event_source_set_priority(q->defer, SD_EVENT_PRIORITY_IDLE);
        if (r < 0) {
                /* no deferred reload: the waiting calls get theirs now */
                q->defer = sd_event_source_disable_unref(q->defer);
                bus_reload_run(m);
        }
        return 1;
}

/* The answer of one waiting call: the reload's result, logged per caller. */
static void answer(ReloadCall *c, int r, const sd_bus_error *error) {
        int q;

        if (r >= 0) {
                decision_log(&(Decision) { .priority = LOG_INFO, .method = "Reload", .caller = &c->caller });
                q = sd_bus_reply_method_return(c->msg, NULL);
        } else {
                decision_log(&(Decision) { .priority = LOG_NOTICE, .method = "Reload", .caller = &c->caller,
                                           .refused = true, .error = sd_bus_error_is_set(error) ? error->name : NULL,
                                           .detail = sd_bus_error_is_set(error) ? error->message : strerror(-r) });
                q = sd_bus_error_is_set(error) ? sd_bus_reply_method_error(c->msg, error) :
                        sd_bus_reply_method_errno(c->msg, r, NULL);
        }
        if (q < 0)
                (void) log_full_errno(LOG_DEBUG, q, "Failed to answer a Reload, ignoring: %m");
}

/* Answer every call of @calls alike, and let them go. */
static void answer_all(ReloadCalls *calls, int r, const sd_bus_error *error) {
        for (size_t i = 0; i < calls->n; i++) {
                answer(&calls->v[i], r, error);
                sd_bus_message_unref(calls->v[i].msg);
        }
        free(calls->v);
        calls->defer = sd_event_source_disable_unref(calls->defer);
        *calls = (ReloadCalls) {};
}

void bus_reload_run(Manager *m) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(refusal_done) Refusal refusal = {};
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        /* the calls received before it; any that arrive during it wait for the next one */
        ReloadCalls taken = m->reloads;
        int r;

        m->reloads = (ReloadCalls) {};
        taken.defer = sd_event_source_disable_unref(taken.defer);
        if (taken.n == 0)
                return;
        if (taken.n > 1)
                log_info("%zu Reload calls share this reload.", taken.n);
        r = manager_reload(m, &errs, &refusal);
        if (r < 0)
                r = bus_error_from_reload(&error, r, &refusal, &errs);
        config_errors_done(&errs);
        answer_all(&taken, r, &error);
}

void reload_calls_done(ReloadCalls *q) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        (void) sd_bus_error_set(&error, BUS_ERROR_FAILED, "cgbypassd is stopping; the configuration was not "
                                "reloaded");
        answer_all(q, -ESHUTDOWN, &error);
}
