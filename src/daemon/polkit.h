/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * polkit over D-Bus, asynchronously, without libpolkit. A method handler
 * calls polkit_check(); the first time, it sends CheckAuthorization for the
 * caller (subject system-bus-name) and returns POLKIT_PENDING, and the
 * handler returns without a reply. polkit's answer is stored and the call is
 * queued again with sd_bus_enqueue_for_read(); the handler runs a second
 * time, and polkit_check() hands it the verdict.
 *
 * polkit absent, an error or a timeout mean no. A caller that disconnects
 * while its check is pending is forgotten: the check is cancelled, the call
 * never runs again, nothing is applied.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/*
 * Limits on what callers hold, sized to the bus's own: each pending check is
 * a method call of cgbypassd's connection awaiting polkit's reply, and
 * dbus-daemon's system bus allows a connection 128 of those
 * (max_replies_per_connection); past that it fails the call with
 * LimitsExceeded, whoever it was for. So all checks together stay well below
 * 128, leaving room for cgbypassd's other calls, and one caller uid holds at
 * most POLKIT_QUERIES_PER_UID_MAX. A caller uid that holds checks already
 * never takes the last POLKIT_QUERIES_PER_UID_MAX places: those are kept for
 * callers with none, so no set of callers, however many checks each sends,
 * keeps a new caller from being asked about. Over its limit a caller is told
 * org.cgbypass1.Error.Busy at once; the others are served.
 */
#define POLKIT_QUERIES_MAX              96      /* checks pending at once, below the bus's 128 */
#define POLKIT_QUERIES_PER_UID_MAX      32      /* ... for one caller uid */

typedef struct PolkitQuery PolkitQuery;

/* The checks, pending or answered and not yet used: one registry per bus service. */
typedef struct PolkitQueries {
        PolkitQuery *first;
        unsigned n;
        uint64_t serial;        /* for CheckAuthorization's cancellation ids */
} PolkitQueries;

typedef enum PolkitResult {
        POLKIT_PENDING,         /* asked; the handler must return 1 without a reply */
        POLKIT_AUTHORIZED,
        POLKIT_DENIED,          /* polkit said no */
        POLKIT_CHALLENGE,       /* polkit said no, but authentication could say yes */
        POLKIT_FAILED,          /* polkit could not be asked or failed: no */
        POLKIT_CALLER_GONE,     /* the caller disconnected meanwhile: drop the call */
} PolkitResult;

/**
 * polkit_check() - may the sender of @call do @action?
 * @details: NULL-terminated key, value, key, value, ... for CheckAuthorization
 * @uid: the caller's uid, to limit pending checks per caller
 * @pid: the caller's pid (0: unknown), kept with @uid for polkit_query_caller()
 * @ret: the verdict
 * @reterr_message: for POLKIT_FAILED, what went wrong (malloc'ed, may be NULL)
 *
 * Interactive authorization is allowed only when @call allows it.
 * Return: 0; -EBUSY when too many checks are pending (polkit_may_ask());
 * -ENOMEM; another -errno when the query could not be sent.
 */
int polkit_check(PolkitQueries *qs, sd_bus_message *call, const char *action, char *const *details, uid_t uid,
                 pid_t pid, PolkitResult *ret, char **reterr_message);

/*
 * polkit_may_ask() - may one more check be sent for a caller uid that has
 * @mine pending, with @total pending in all? The rule of the limits above.
 */
bool polkit_may_ask(unsigned total, unsigned mine);

/**
 * polkit_query_caller() - the caller of @call as its check recorded it
 *
 * On the second pass the bus need not be asked again who sent @call.
 * Return: true and the uid and pid (0: unknown) when a check for @call exists.
 */
bool polkit_query_caller(const PolkitQueries *qs, sd_bus_message *call, uid_t *ret_uid, pid_t *ret_pid);

/*
 * polkit_caller_gone() - the connection @name left the bus (callers.c)
 *
 * Its pending checks are cancelled and dropped; an answered one whose call
 * is queued to run again is marked, so that it does not run.
 */
void polkit_caller_gone(PolkitQueries *qs, const char *name);

/* Forget every check (shutdown): their calls get no reply from us. */
void polkit_queries_done(PolkitQueries *qs);
