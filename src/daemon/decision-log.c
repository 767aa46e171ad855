/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The log of every change applied or refused, with journal fields. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>
#define SD_JOURNAL_SUPPRESS_LOCATION    /* CODE_FILE= and CODE_LINE= of this file would say nothing */
#include <systemd/sd-journal.h>

#include "cgbypass/log.h"
#include "decision-log.h"
#include "request.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

void decision_fields_done(DecisionFields *f) {
        for (size_t i = 0; i < f->n; i++)
                free(f->v[i]);
        *f = (DecisionFields) {};
}

static const char *message_id(const Decision *d) {
        if (d->refused)
                return DECISION_MESSAGE_REFUSED;
        if (streq_ptr(d->method, "Reload"))
                return DECISION_MESSAGE_RELOADED;
        if (streq_ptr(d->method, "AddDelegation") || streq_ptr(d->method, "RemoveDelegation"))
                return DECISION_MESSAGE_DELEGATION;
        return DECISION_MESSAGE_CHANGE_APPLIED;
}

_printf_(2, 3)
static int add(DecisionFields *f, const char *fmt, ...) {
        va_list ap;
        int r;

        assert(f->n < DECISION_FIELDS_MAX);
        va_start(ap, fmt);
        r = vasprintf(&f->v[f->n], fmt, ap);
        va_end(ap);
        if (r < 0) {
                f->v[f->n] = NULL;
                return -ENOMEM;
        }
        f->n++;
        return 0;
}

/* @all: every field; else MESSAGE= alone, what a log line shows */
static int build_fields(const Decision *d, bool all, DecisionFields *ret) {
        char qc[REQUEST_QUOTE_SIZE], qa[REQUEST_QUOTE_SIZE], uid[16] = "?", pid[16] = "?";
        const char *cgroup = d->cgroup ? request_quote(d->cgroup, qc) : NULL;
        const char *arg = d->argument ? request_quote(d->argument, qa) : NULL;
        const char *result = d->refused ? "refused" : "applied";
        bool known = d->caller && d->caller->known;
        DecisionFields f = {};
        int r;

        if (known) {
                (void) snprintf(uid, sizeof(uid), "%u", (unsigned) d->caller->uid);
                if (d->caller->pid > 0)
                        (void) snprintf(pid, sizeof(pid), "%d", (int) d->caller->pid);
        }
        r = add(&f, "MESSAGE=%s%s%s%s%s by uid=%s pid=%s: %s%s%s%s%s", d->method, cgroup ? " " : "",
                strempty(cgroup), arg ? " " : "", strempty(arg), uid, pid, result,
                d->error || d->detail ? ": " : "", strempty(d->error), d->error && d->detail ? ": " : "",
                strempty(d->detail));
        if (r >= 0 && all)
                r = add(&f, "PRIORITY=%d", d->priority);
        if (r >= 0 && all)
                r = add(&f, "MESSAGE_ID=%s", message_id(d));
        if (r >= 0 && all)
                r = add(&f, "CGBYPASS_METHOD=%s", d->method);
        if (r >= 0 && all && cgroup)
                r = add(&f, "CGBYPASS_CGROUP=%s", cgroup);
        if (r >= 0 && all && arg)
                r = add(&f, "CGBYPASS_ARGUMENT=%s", arg);
        if (r >= 0 && all && known)
                r = add(&f, "CGBYPASS_CALLER_UID=%s", uid);
        if (r >= 0 && all && known && d->caller->pid > 0)
                r = add(&f, "CGBYPASS_CALLER_PID=%s", pid);
        if (r >= 0 && all)
                r = add(&f, "CGBYPASS_RESULT=%s", result);
        if (r >= 0 && all && d->refused && d->error)
                r = add(&f, "CGBYPASS_ERROR=%s", d->error);
        if (r < 0) {
                decision_fields_done(&f);
                return r;
        }
        *ret = f;
        return 0;
}

int decision_fields(const Decision *d, DecisionFields *ret) {
        return build_fields(d, true, ret);
}

/* sd_journal_sendv() drops the entry, successfully, when journald's socket is not there */
static bool to_journal(void) {
        return log_to_journal() && access(JOURNAL_SOCKET, F_OK) >= 0;
}

/* @journal: to_journal() */
static void send_fields(int priority, const DecisionFields *f, bool journal) {
        struct iovec iov[DECISION_FIELDS_MAX];
        int r = -EINVAL;

        if (journal) {
                for (size_t i = 0; i < f->n; i++)
                        iov[i] = (struct iovec) { .iov_base = f->v[i], .iov_len = strlen(f->v[i]) };
                r = sd_journal_sendv(iov, (int) f->n);
        }
        /* not the journal, or it failed: the line is what stays */
        if (r < 0)
                (void) log_full_errno(priority, 0, "%s", f->v[0] + strlen("MESSAGE="));
}

void decision_log(const Decision *d) {
        DecisionFields f;
        bool journal;

        if (d->priority > log_get_max_level())
                return;
        /* a line on stderr shows MESSAGE= alone: the other fields, one allocation each, only for the journal */
        journal = to_journal();
        if (build_fields(d, journal, &f) < 0) {
                (void) log_oom();
                return;
        }
        send_fields(d->priority, &f, journal);
        decision_fields_done(&f);
}

void decision_log_adopted(size_t adopted, size_t forgotten, const char *scope) {
        DecisionFields f = {};
        int r;

        if (adopted + forgotten == 0 || LOG_INFO > log_get_max_level())
                return;
        r = add(&f, "MESSAGE=Adopted %zu cgroup(s) owners made in their delegations, forgot %zu they removed%s%s.",
                adopted, forgotten, scope ? ", below " : "", strempty(scope));
        if (r >= 0)
                r = add(&f, "PRIORITY=%d", LOG_INFO);
        if (r >= 0)
                r = add(&f, "MESSAGE_ID=%s", DECISION_MESSAGE_ADOPTED);
        if (r >= 0)
                r = add(&f, "CGBYPASS_ADOPTED=%zu", adopted);
        if (r >= 0)
                r = add(&f, "CGBYPASS_FORGOTTEN=%zu", forgotten);
        if (r >= 0 && scope)
                r = add(&f, "CGBYPASS_CGROUP=%s", scope);
        if (r < 0)
                (void) log_oom();
        else
                send_fields(LOG_INFO, &f, to_journal());
        decision_fields_done(&f);
}
