/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "cgbypass/macro.h"
#include "refusal.h"

void refusal_done(Refusal *f) {
        free(f->cgroup);
        free(f->file);
        free(f->controller);
        free(f->detail);
        *f = (Refusal) {};
}

int refusal_set_model(Refusal *f, Reason reason, const char *cgroup, const char *file, const char *controller) {
        refusal_done(f);
        f->cgroup = strdup(cgroup);
        f->file = file ? strdup(file) : NULL;
        f->controller = controller ? strdup(controller) : NULL;
        if (!f->cgroup || (file && !f->file) || (controller && !f->controller)) {
                refusal_done(f);
                return -ENOMEM;
        }
        f->kind = REFUSAL_MODEL;
        f->reason = reason;
        return 0;
}

int refusal_set_detail(Refusal *f, RefusalKind kind, const char *detail) {
        refusal_done(f);
        if (detail) {
                f->detail = strdup(detail);
                if (!f->detail)
                        return -ENOMEM;
        }
        f->kind = kind;
        return 0;
}

int refusal_set_request(Refusal *f, Reason reason, const char *fmt, ...) {
        va_list ap;
        int r;

        refusal_done(f);
        va_start(ap, fmt);
        r = vasprintf(&f->detail, fmt, ap);
        va_end(ap);
        if (r < 0) {
                f->detail = NULL;
                return -ENOMEM;
        }
        f->kind = REFUSAL_REQUEST;
        f->reason = reason;
        return -reason_errno(reason);
}
