/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "cgbypass/policy.h"

const char *policy_reason_text(int error, Reason reason) {
        const char *text = reason_text(reason);

        if (text)
                return text;
        /* the kernel refused without saying why */
        switch (-error) {
        case ENOMEM:
                return "out of memory";
        case EACCES:
        case EPERM:
                return "permission denied";
        default:
                return "refused by the kernel";
        }
}
