/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Why the daemon's core refused or could not make a change or a reload, in
 * its own terms: manager_change() and manager_reload() return a -errno and
 * fill this in; bus-manager.c alone turns the two into a named bus error
 * and its message, as hostnamed maps a -errno. The core knows no bus.
 */

#include "cgbypass/macro.h"
#include "cgbypass/reason.h"

typedef enum RefusalKind {
        REFUSAL_NONE,           /* nothing beyond the -errno (-ENOMEM, ...) */
        REFUSAL_NO_SUCH_CGROUP, /* the request's cgroup does not exist */
        REFUSAL_MODEL,          /* the model or the kernel refused a write: reason, cgroup, file, controller */
        REFUSAL_BREAKS_BELOW,   /* the change would break what is asked for below: detail, the planner's words */
        REFUSAL_NOT_RECORDED,   /* applied, then undone: the state directory could not be written */
        REFUSAL_NOT_RECORDED_LEFT, /* not recorded, and the undo failed: the hierarchy is not as before */
        REFUSAL_CONFIG_INVALID, /* reload: the problems are in the caller's ConfigErrors */
        REFUSAL_APPLY_FAILED,   /* reload: a write failed; the hierarchy is as before */
        REFUSAL_REREAD_FAILED,  /* reload: the hierarchy could not be read again; detail, why */
        REFUSAL_APPLY_LEFT,     /* reload: a write or the record failed, and so did an undo */
        REFUSAL_REQUEST,        /* the request, or who made it: reason (the daemon's), detail (the caller's words) */
} RefusalKind;

typedef struct Refusal {
        RefusalKind kind;
        Reason reason;          /* REFUSAL_MODEL: the model's reason (REASON_NONE: not known); REFUSAL_REQUEST */
        char *cgroup;           /* REFUSAL_MODEL: the cgroup written, absolute */
        char *file;             /* REFUSAL_MODEL: the file written; NULL: a mkdir */
        char *controller;       /* REFUSAL_MODEL: the controller concerned; NULL: not known */
        char *detail;           /* REFUSAL_BREAKS_BELOW, REFUSAL_REREAD_FAILED, REFUSAL_REQUEST */
} Refusal;

void refusal_done(Refusal *f);

/* Return: 0, or -ENOMEM (@f then REFUSAL_NONE). */
int refusal_set_model(Refusal *f, Reason reason, const char *cgroup, const char *file, const char *controller);
int refusal_set_detail(Refusal *f, RefusalKind kind, const char *detail);

/*
 * refusal_set_request() - @f becomes REFUSAL_REQUEST for @reason, with the
 * words @fmt for the caller. Return: -reason_errno(@reason), or -ENOMEM.
 */
int refusal_set_request(Refusal *f, Reason reason, const char *fmt, ...) _printf_(3, 4);
