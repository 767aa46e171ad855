/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who may make a checked request (request.c). A request reaches the
 * hierarchy only through the model and the backend, which resolve paths beneath the cgroup root without
 * following symlinks (cgroupfs.c); the checks here make sure it names
 * something the configuration manages or delegates.
 */
#include "cgbypass/log.h"
#include "delegation.h"

void authorization_done(Authorization *a) {
        free(a->deny_message);
        *a = (Authorization) {};
}

int delegation_authorize(const Config *c, uid_t uid, const ChangeRequest *req, Authorization *ret,
                         Refusal *reterr) {
        const DelegateSpec *d = config_find_delegation(c, req->cgroup);
        bool managed = config_find_cgroup(c, req->cgroup) || (d && streq(d->path, req->cgroup));
        Authorization a = {};
        int r = 0;

        if (!managed && !d)
                return refusal_set_request(reterr, REASON_NOT_MANAGED,
                                          "%s is outside what cgbypassd manages: no [cgroup] section names it "
                                          "and no [delegate] section covers it", req->cgroup);
        if (uid == 0) {
                a.admin = true;
                *ret = a;
                return 0;
        }
        if (d && d->uid == uid && !(req->controllers & ~d->controllers)) {
                a.action = POLKIT_ACTION_MANAGE_DELEGATED;
                a.deny_reason = REASON_ACCESS_DENIED;
                r = asprintf(&a.deny_message, "polkit does not allow you to switch %s in %s (action %s), "
                             "although %s is delegated to you", req->names, req->cgroup,
                             POLKIT_ACTION_MANAGE_DELEGATED, d->path);
        } else if (d && d->uid == uid) {
                _cleanup_free_ char *have = controller_mask_to_string(d->controllers, " ");
                _cleanup_free_ char *lack = controller_mask_to_string(req->controllers & ~d->controllers, " ");

                a.action = POLKIT_ACTION_MANAGE;
                a.admin = true;
                a.deny_reason = REASON_CONTROLLER_NOT_DELEGATED;
                r = !have || !lack ? -1 :
                        asprintf(&a.deny_message, "The delegation of %s to you covers %s, not %s; ask an "
                                 "administrator to add it to the [delegate] section", d->path,
                                 isempty(have) ? "no controller" : have, lack);
        } else if (d) {
                a.action = POLKIT_ACTION_MANAGE;
                a.admin = true;
                a.deny_reason = REASON_NOT_DELEGATED;
                r = asprintf(&a.deny_message, "%s is delegated to uid %u, not to you (uid %u); only its owner "
                             "or an administrator may change it", d->path, (unsigned) d->uid, (unsigned) uid);
        } else {
                a.action = POLKIT_ACTION_MANAGE;
                a.admin = true;
                a.deny_reason = REASON_NOT_DELEGATED;
                r = asprintf(&a.deny_message, "%s is not delegated to you (uid %u); only an administrator may "
                             "change it (polkit action %s)", req->cgroup, (unsigned) uid, POLKIT_ACTION_MANAGE);
        }
        if (r < 0) {
                a.deny_message = NULL;
                return -ENOMEM;
        }
        *ret = a;
        return 0;
}
