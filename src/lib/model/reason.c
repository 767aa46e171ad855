/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>

#include "cgbypass/reason.h"

static const char *const reason_table[_REASON_MAX] = {
        [REASON_NONE]                   = "none",
        [REASON_PARSE]                  = "parse",
        [REASON_ROOT]                   = "root",
        [REASON_NOT_AVAILABLE]          = "not-available",
        [REASON_NOT_BYPASSED_BY_PARENT] = "not-bypassed-by-parent",
        [REASON_CHILD_USES_IT]          = "child-uses-it",
        [REASON_OWN_SUBTREE_USES_IT]    = "own-subtree-uses-it",
        [REASON_HAS_PROCESSES]          = "has-processes",
        [REASON_POPULATED]              = "populated",
        [REASON_HAS_CHILDREN]           = "has-children",
        [REASON_INVALID_DOMAIN]         = "invalid-domain",
        [REASON_THREAD_SUBTREE]         = "thread-subtree",
        [REASON_CANNOT_BE_THREADED]     = "cannot-be-threaded",
        [REASON_THREAD_MIGRATION]       = "thread-migration",
        [REASON_NO_SUCH_CGROUP]         = "no-such-cgroup",
        [REASON_NOT_A_DIRECTORY]        = "not-a-directory",
        [REASON_EXISTS]                 = "exists",
        [REASON_NO_SUCH_FILE]           = "no-such-file",
        [REASON_READ_ONLY]              = "read-only",
        [REASON_LIMIT]                  = "limit",
        [REASON_RANGE]                  = "range",
        [REASON_NO_SUCH_PROCESS]        = "no-such-process",
        [REASON_NOT_MODELED]            = "not-modeled",
};

const char *reason_to_string(Reason r) {
        if (r < 0 || r >= _REASON_MAX)
                return NULL;
        return reason_table[r];
}
