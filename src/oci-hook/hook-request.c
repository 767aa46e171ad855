/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/macro.h"
#include "cgbypass/parse.h"
#include "hook-request.h"

int hook_request_parse(const OciAnnotation *a, size_t n, HookRequest *ret, char **reterr_why) {
        HookRequest req = {};

        for (size_t i = 0; i < n; i++) {
                if (!startswith(a[i].key, HOOK_ANNOTATION_PREFIX))
                        continue;
                if (streq(a[i].key, HOOK_ANNOTATION_ENABLE)) {
                        _cleanup_free_ char *bad = NULL;
                        CgMask mask = 0;
                        int r;

                        r = controller_mask_from_list(a[i].value, &mask, &bad);
                        if (r == -EINVAL) {
                                if (asprintf(reterr_why, "annotation %s: unknown controller '%s'", a[i].key,
                                             bad ? bad : "") < 0)
                                        *reterr_why = NULL;
                                return -EINVAL;
                        }
                        if (r < 0)
                                return r;
                        if (mask == 0) {
                                if (asprintf(reterr_why, "annotation %s names no controller (e.g. 'cpu,io')",
                                             a[i].key) < 0)
                                        *reterr_why = NULL;
                                return -EINVAL;
                        }
                        req.controllers = mask;
                } else if (streq(a[i].key, HOOK_ANNOTATION_OWNER)) {
                        req.owner = a[i].value;
                } else {
                        if (asprintf(reterr_why, "unknown annotation '%s' (cgbypass-oci-hook reads %s and %s)",
                                     a[i].key, HOOK_ANNOTATION_ENABLE, HOOK_ANNOTATION_OWNER) < 0)
                                *reterr_why = NULL;
                        return -EINVAL;
                }
        }
        *ret = req;
        return 0;
}

int hook_owner_resolve(const char *owner, uid_t *ret) {
        unsigned long long u;
        struct passwd *pw;

        if (isempty(owner))
                return -EINVAL;
        if (owner[0] >= '0' && owner[0] <= '9') {
                if (kstrtoull(owner, 10, &u) < 0 || u >= UINT32_MAX)
                        return -EINVAL;
                *ret = (uid_t) u;
                return 0;
        }
        errno = 0;
        pw = getpwnam(owner);
        if (!pw)
                return errno == 0 || errno == ENOENT ? -ESRCH : -errno;
        *ret = pw->pw_uid;
        return 0;
}
