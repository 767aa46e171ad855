/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Every change the daemon applies or refuses, logged once: a text line, and
 * when stderr is the journal, a journal entry with fields a program can
 * match on (sd_journal_send()): MESSAGE_ID per kind (cgbypassd(8) lists
 * them), CGBYPASS_METHOD, CGBYPASS_CGROUP, CGBYPASS_ARGUMENT,
 * CGBYPASS_CALLER_UID, CGBYPASS_CALLER_PID, CGBYPASS_RESULT, CGBYPASS_ERROR.
 */

#include <stddef.h>

#include "callers.h"

/* MESSAGE_ID of each kind, as in the journal (sd_id128 without dashes) */
#define DECISION_MESSAGE_CHANGE_APPLIED         "3aad8117271446a3ad383849fb296393"
#define DECISION_MESSAGE_REFUSED                "4bedc8f0252043418313b02bfe1e76d8"
#define DECISION_MESSAGE_RELOADED               "9f8dadb0acbd4a37aab2ba553292916b"
#define DECISION_MESSAGE_DELEGATION             "bee8857238d0402799429718ff1289f6"
#define DECISION_MESSAGE_ADOPTED                "14482f3dbc314e619a998715532b35ac"

typedef struct Decision {
        int priority;                   /* LOG_INFO, LOG_NOTICE, ... */
        const char *method;             /* a method of org.cgbypass1.Manager */
        const char *cgroup;             /* as the caller gave it; NULL: none */
        const char *argument;           /* the method's other string argument; NULL: none */
        const Caller *caller;           /* NULL or !known: not known */
        bool refused;
        const char *error;              /* refused: the bus error's name; NULL: none */
        const char *detail;             /* why, or what was done; NULL: nothing more */
} Decision;

#define DECISION_FIELDS_MAX 12

typedef struct DecisionFields {
        char *v[DECISION_FIELDS_MAX];   /* "KEY=value", MESSAGE= first */
        size_t n;
} DecisionFields;

void decision_fields_done(DecisionFields *f);

/* The journal fields of @d; strings of the caller quoted as request_quote() does. Return: 0 or -ENOMEM. */
int decision_fields(const Decision *d, DecisionFields *ret);

/* Log @d: the journal entry when stderr is the journal, else (or when that fails) its MESSAGE as a line. */
void decision_log(const Decision *d);

/*
 * One entry for many cgroups adopted (sim: owners' mkdir) or forgotten
 * (rmdir) in one look: MESSAGE_ID adopted, CGBYPASS_ADOPTED,
 * CGBYPASS_FORGOTTEN, CGBYPASS_CGROUP (the look's scope; none: everywhere).
 * Nothing for none.
 */
void decision_log_adopted(size_t adopted, size_t forgotten, const char *scope);
