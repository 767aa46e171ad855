/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * polkit's org.freedesktop.PolicyKit1.Authority.CheckAuthorization, asked
 * asynchronously, as systemd's bus_verify_polkit_async() does: the answer
 * re-queues the method call, whose handler then finds the verdict here.
 */
#include <inttypes.h>

#include "cgbypass/bus-names.h"
#include "cgbypass/log.h"
#include "cgbypass/macro.h"
#include "cgbypass/strbuf.h"
#include "polkit.h"

#define POLKIT_NAME      "org.freedesktop.PolicyKit1"
#define POLKIT_PATH      "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"

/* CheckAuthorization flags */
#define POLKIT_ALLOW_USER_INTERACTION 1u

struct PolkitQuery {
        PolkitQueries *queries; /* the registry it is in */
        PolkitQuery *prev, *next;
        sd_bus_message *call;   /* the method call waiting for the verdict */
        char *action;
        char *details;          /* "key=value\n..." to recognize the same question on the second pass */
        uid_t uid;              /* the caller, as the bus vouched for it on the first pass */
        pid_t pid;
        char cancel_id[64];
        sd_bus_slot *slot;      /* CheckAuthorization, while pending */
        bool answered;
        bool caller_gone;       /* disconnected after the answer, before the call ran again */
        PolkitResult result;
        char *error;            /* POLKIT_FAILED: why */
};

static PolkitQuery *polkit_query_free(PolkitQuery *q) {
        PolkitQueries *qs;

        if (!q)
                return NULL;
        qs = q->queries;
        if (q->prev)
                q->prev->next = q->next;
        else
                qs->first = q->next;
        if (q->next)
                q->next->prev = q->prev;
        qs->n--;
        sd_bus_slot_unref(q->slot);     /* cancels a pending callback */
        sd_bus_message_unref(q->call);
        free(q->action);
        free(q->details);
        free(q->error);
        free(q);
        return NULL;
}

void polkit_queries_done(PolkitQueries *qs) {
        while (qs->first)
                polkit_query_free(qs->first);
}

static PolkitQuery *polkit_query_find(const PolkitQueries *qs, sd_bus_message *call) {
        for (PolkitQuery *q = qs->first; q; q = q->next)
                if (q->call == call)
                        return q;
        return NULL;
}

static unsigned polkit_queries_of(const PolkitQueries *qs, uid_t uid) {
        unsigned n = 0;

        for (PolkitQuery *q = qs->first; q; q = q->next)
                if (q->uid == uid && !q->answered)
                        n++;
        return n;
}

static void query_caller_gone(PolkitQuery *q) {
        if (q->answered) {
                /* the call is queued to run again: it must find out, and not run */
                q->caller_gone = true;
                return;
        }
        log_notice("Caller uid=%u (%s) disconnected while polkit was asked about %s; request dropped.",
                   (unsigned) q->uid, strempty(sd_bus_message_get_sender(q->call)), q->action);
        /* polkit may be showing an authentication dialog for it */
        (void) sd_bus_call_method_async(sd_bus_message_get_bus(q->call), NULL, POLKIT_NAME, POLKIT_PATH,
                                        POLKIT_INTERFACE,
                                        "CancelCheckAuthorization", NULL, NULL, "s", q->cancel_id);
        polkit_query_free(q);
}

void polkit_caller_gone(PolkitQueries *qs, const char *name) {
        PolkitQuery *next;

        for (PolkitQuery *q = qs->first; q; q = next) {
                next = q->next;
                if (streq_ptr(sd_bus_message_get_sender(q->call), name))
                        query_caller_gone(q);
        }
}

bool polkit_query_caller(const PolkitQueries *qs, sd_bus_message *call, uid_t *ret_uid, pid_t *ret_pid) {
        for (PolkitQuery *q = qs->first; q; q = q->next)
                if (q->call == call) {
                        *ret_uid = q->uid;
                        *ret_pid = q->pid;
                        return true;
                }
        return false;
}

static int parse_verdict(sd_bus_message *reply, PolkitResult *ret) {
        int authorized, challenge, r;

        r = sd_bus_message_enter_container(reply, SD_BUS_TYPE_STRUCT, "bba{ss}");
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r < 0)
                return r;
        *ret = authorized ? POLKIT_AUTHORIZED : challenge ? POLKIT_CHALLENGE : POLKIT_DENIED;
        return 0;
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        PolkitQuery *q = userdata;
        const sd_bus_error *e;
        int r;

        q->slot = sd_bus_slot_unref(q->slot);
        q->answered = true;

        e = sd_bus_message_get_error(reply);
        if (e) {
                /* polkit not running, a timeout, polkit's own refusal to answer */
                q->result = POLKIT_FAILED;
                if (asprintf(&q->error, "%s: %s", strempty(e->name), strempty(e->message)) < 0)
                        q->error = NULL;
        } else {
                r = parse_verdict(reply, &q->result);
                if (r < 0) {
                        q->result = POLKIT_FAILED;
                        q->error = strdup("polkit's answer could not be parsed");
                }
        }

        /* run the method again: its handler finds the verdict */
        r = sd_bus_enqueue_for_read(sd_bus_message_get_bus(q->call), q->call);
        if (r < 0) {
                log_error_errno(r, "Failed to queue the call of uid=%u again after polkit's answer, dropping it: %m",
                                (unsigned) q->uid);
                (void) sd_bus_reply_method_errorf(q->call, SD_BUS_ERROR_FAILED,
                                                  "cgbypassd could not continue the request");
                polkit_query_free(q);
        }
        return 0;
}

static int details_string(char *const *details, char **ret) {
        StrBuf b = STRBUF_INIT;

        /* appends, not strbuf_printf(): built on both passes of every request */
        for (char *const *d = details; d && d[0] && d[1]; d += 2) {
                strbuf_append(&b, d[0]);
                strbuf_putc(&b, '=');
                strbuf_append(&b, d[1]);
                strbuf_putc(&b, '\n');
        }
        return strbuf_steal(&b, ret);
}

static int polkit_send(PolkitQuery *q, char *const *details) {
        sd_bus *bus = sd_bus_message_get_bus(q->call);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        const char *sender = sd_bus_message_get_sender(q->call);
        bool interactive = sd_bus_message_get_allow_interactive_authorization(q->call) > 0;
        int r;

        if (!sender)
                return -EBADMSG;
        r = sd_bus_message_new_method_call(bus, &msg, POLKIT_NAME, POLKIT_PATH, POLKIT_INTERFACE,
                                           "CheckAuthorization");
        if (r < 0)
                return r;
        r = sd_bus_message_append(msg, "(sa{sv})s", "system-bus-name", 1, "name", "s", sender, q->action);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(msg, SD_BUS_TYPE_ARRAY, "{ss}");
        if (r < 0)
                return r;
        /* entry by entry: sd_bus_message_append() would parse its format for every pair */
        for (char *const *d = details; d && d[0] && d[1]; d += 2) {
                r = sd_bus_message_open_container(msg, SD_BUS_TYPE_DICT_ENTRY, "ss");
                if (r >= 0)
                        r = sd_bus_message_append_basic(msg, SD_BUS_TYPE_STRING, d[0]);
                if (r >= 0)
                        r = sd_bus_message_append_basic(msg, SD_BUS_TYPE_STRING, d[1]);
                if (r >= 0)
                        r = sd_bus_message_close_container(msg);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(msg);
        if (r < 0)
                return r;
        r = sd_bus_message_append(msg, "us", interactive ? POLKIT_ALLOW_USER_INTERACTION : 0u, q->cancel_id);
        if (r < 0)
                return r;
        return sd_bus_call_async(bus, &q->slot, msg, on_polkit_reply, q,
                                 interactive ? CGBYPASS_POLKIT_INTERACTIVE_TIMEOUT_USEC : CGBYPASS_POLKIT_TIMEOUT_USEC);
}

bool polkit_may_ask(unsigned total, unsigned mine) {
        if (total >= POLKIT_QUERIES_MAX || mine >= POLKIT_QUERIES_PER_UID_MAX)
                return false;
        /* the last places are for callers without a pending check */
        return mine == 0 || total + POLKIT_QUERIES_PER_UID_MAX < POLKIT_QUERIES_MAX;
}

int polkit_check(PolkitQueries *qs, sd_bus_message *call, const char *action, char *const *details, uid_t uid,
                 pid_t pid, PolkitResult *ret, char **reterr_message) {
        _cleanup_free_ char *key = NULL;
        PolkitQuery *q;
        int r;

        r = details_string(details, &key);
        if (r < 0)
                return r;

        q = polkit_query_find(qs, call);
        if (q) {
                if (!q->answered) {
                        *ret = POLKIT_PENDING;
                        return 0;
                }
                if (streq(q->action, action) && streq(q->details, key)) {
                        PolkitResult result = q->caller_gone ? POLKIT_CALLER_GONE : q->result;

                        if (result == POLKIT_FAILED && reterr_message)
                                *reterr_message = TAKE_PTR(q->error);
                        polkit_query_free(q);
                        *ret = result;
                        return 0;
                }
                /* the question changed between the passes (a reload): ask again */
                polkit_query_free(q);
        }

        if (!polkit_may_ask(qs->n, polkit_queries_of(qs, uid)))
                return -EBUSY;

        q = calloc(1, sizeof(PolkitQuery));
        if (!q)
                return -ENOMEM;
        q->queries = qs;
        q->next = qs->first;
        if (qs->first)
                qs->first->prev = q;
        qs->first = q;
        qs->n++;
        q->call = sd_bus_message_ref(call);
        q->uid = uid;
        q->pid = pid;
        q->details = TAKE_PTR(key);
        q->action = strdup(action);
        if (!q->action) {
                polkit_query_free(q);
                return -ENOMEM;
        }
        (void) snprintf(q->cancel_id, sizeof(q->cancel_id), "cgbypassd-%d-%" PRIu64, (int) getpid(),
                        ++qs->serial);

        r = polkit_send(q, details);
        if (r < 0) {
                polkit_query_free(q);
                return r;
        }
        *ret = POLKIT_PENDING;
        return 0;
}
