/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/*
 * Why an operation was refused. One errno often has several causes that a
 * person fixes differently. The words for each reason live in one table
 * (src/lib/model/reason.c): its errno, its id, its text for the policy's
 * errors, and the org.cgbypass1.Error name a client gets. The ERRORS section
 * of org.cgbypass1(5) is checked against it (tests/bus/test-reason-table.c).
 */
typedef enum Reason {
        REASON_NONE,
        /* the model's refusals: the kernel's rules */
        REASON_PARSE,
        REASON_ROOT,
        REASON_NOT_AVAILABLE,
        REASON_NOT_BYPASSED_BY_PARENT,
        REASON_CHILD_USES_IT,
        REASON_OWN_SUBTREE_USES_IT,
        REASON_HAS_PROCESSES,
        REASON_POPULATED,
        REASON_HAS_CHILDREN,
        REASON_INVALID_DOMAIN,
        REASON_THREAD_SUBTREE,
        REASON_CANNOT_BE_THREADED,
        REASON_THREAD_MIGRATION,
        REASON_NO_SUCH_CGROUP,
        REASON_NOT_A_DIRECTORY,
        REASON_EXISTS,
        REASON_NO_SUCH_FILE,
        REASON_READ_ONLY,
        REASON_LIMIT,
        REASON_RANGE,
        REASON_NO_SUCH_PROCESS,
        REASON_NOT_MODELED,
        /* the daemon's refusals: who may ask, and what it may ask for */
        REASON_NOT_DELEGATED,
        REASON_CONTROLLER_NOT_DELEGATED,
        REASON_ACCESS_DENIED,
        REASON_NOT_MANAGED,
        REASON_INVALID_PATH,
        REASON_UNKNOWN_CONTROLLER,
        REASON_CONFIG_INVALID,
        REASON_BUSY,
        REASON_FAILED,
        REASON_DELEGATION_CONFLICT,
        REASON_NO_SUCH_DELEGATION,
        REASON_NOT_RUNTIME_DELEGATION,
        REASON_TOO_MANY_CGROUPS,
        _REASON_MAX,
        _REASON_INVALID = -22,
} Reason;

/**
 * reason_to_string() - the id of a reason, as traces and logs print it
 * @r: the reason
 *
 * Return: "not-bypassed-by-parent" for REASON_NOT_BYPASSED_BY_PARENT, ...;
 * NULL for a value that is not a Reason.
 */
const char *reason_to_string(Reason r);

/**
 * reason_errno() - the errno that comes with a reason
 * @r: the reason
 *
 * The model returns a reason only with this errno; a daemon refusal's errno
 * is the one its bus error name maps to.
 *
 * Return: a positive errno; 0 for REASON_NONE and a value that is not a Reason.
 */
int reason_errno(Reason r);

/**
 * reason_text() - what is wrong, in a few words
 * @r: the reason
 *
 * Return: "the parent does not bypass it" (no path, no trailing period);
 * NULL for REASON_NONE and a value that is not a Reason.
 */
const char *reason_text(Reason r);

/**
 * reason_bus_error() - the org.cgbypass1.Error name a client gets
 * @r: the reason
 *
 * Return: the full error name ("org.cgbypass1.Error.NotBypassedByParent");
 * NULL for REASON_NONE and a value that is not a Reason, whose error name
 * the errno decides.
 */
const char *reason_bus_error(Reason r);

/**
 * reason_bus_message() - what a client is told to change where
 * @r: the reason
 * @controllers: whether the refused write was to cgroup.controllers
 *               (re-enabling for the cgroup itself) rather than giving a
 *               controller to its children
 *
 * A template in which bus_error_set_model() fills in {cgroup}, {parent},
 * {controller} and {file}: "{parent} does not bypass {controller} for its
 * children; ...".
 *
 * Return: the template; NULL when the errno decides the words (REASON_NONE,
 * the refusals the kernel gives no advice for, the daemon's own refusals).
 */
const char *reason_bus_message(Reason r, bool controllers);
