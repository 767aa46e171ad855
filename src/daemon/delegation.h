/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who may change what. A request (request.h, checked already) names a
 * cgroup and controllers; the configuration decides: outside every managed
 * or delegated cgroup, nobody;
 * uid 0, anything else; the owner of a delegation, the delegated
 * controllers on the delegation's root and below, through the polkit action
 * org.cgbypass1.manage-delegated; everyone else, org.cgbypass1.manage.
 */

#include "manager.h"

#define POLKIT_ACTION_MANAGE_DELEGATED  "org.cgbypass1.manage-delegated"
#define POLKIT_ACTION_MANAGE            "org.cgbypass1.manage"
#define POLKIT_ACTION_DELEGATE          "org.cgbypass1.delegate"        /* AddDelegation, RemoveDelegation */

typedef struct Authorization {
        const char *action;             /* the polkit action to ask for; NULL: allowed (uid 0) */
        bool admin;                     /* the change counts as an administrator's */
        Reason deny_reason;             /* why, when polkit says no */
        char *deny_message;             /* ... and its message (owned) */
} Authorization;

void authorization_done(Authorization *a);

/**
 * delegation_authorize() - what a caller needs for a request
 * @uid: the caller's effective uid, from the bus
 *
 * Return: 0 and @ret; -EPERM with @reterr REASON_NOT_MANAGED when the cgroup is
 * outside what the configuration manages or delegates (for every caller);
 * -ENOMEM.
 */
int delegation_authorize(const Config *c, uid_t uid, const ChangeRequest *req, Authorization *ret,
                         Refusal *reterr);
