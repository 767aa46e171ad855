/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Why the model refused an operation. One errno often has several causes that
 * a person fixes differently; the bus layer maps (errno, Reason) to an error
 * name and a message that says what to do.
 */
typedef enum Reason {
        REASON_NONE,
        REASON_PARSE,                   /* EINVAL: bad token, unknown controller, bad prefix */
        REASON_ROOT,                    /* EINVAL: the root's cgroup.controllers, rmdir of the root */
        REASON_NOT_AVAILABLE,           /* ENOENT: the parent neither enables nor bypasses it */
        REASON_NOT_BYPASSED_BY_PARENT,  /* ENOENT: cgroup.controllers names a controller the parent does not bypass */
        REASON_CHILD_USES_IT,           /* EBUSY: a child enables, bypasses or re-enabled it */
        REASON_OWN_SUBTREE_USES_IT,     /* EBUSY: cgroup.controllers change while own subtree_control names it */
        REASON_HAS_PROCESSES,           /* EBUSY: no-internal-process constraint */
        REASON_POPULATED,               /* EBUSY: rmdir of a populated cgroup */
        REASON_HAS_CHILDREN,            /* EBUSY: rmdir with live children */
        REASON_INVALID_DOMAIN,          /* EOPNOTSUPP: the cgroup cannot host resources */
        REASON_THREAD_SUBTREE,          /* EOPNOTSUPP: domain controller inside a thread subtree */
        REASON_CANNOT_BE_THREADED,      /* EOPNOTSUPP: cgroup.type "threaded" refused */
        REASON_THREAD_MIGRATION,        /* EOPNOTSUPP: thread moved across resource domains */
        REASON_NO_SUCH_CGROUP,          /* ENOENT */
        REASON_NOT_A_DIRECTORY,         /* ENOTDIR */
        REASON_EXISTS,                  /* EEXIST */
        REASON_NO_SUCH_FILE,            /* ENOENT: the interface file does not exist here */
        REASON_READ_ONLY,               /* EINVAL: the file has no write handler */
        REASON_LIMIT,                   /* EAGAIN: cgroup.max.depth / cgroup.max.descendants */
        REASON_RANGE,                   /* ERANGE */
        REASON_NO_SUCH_PROCESS,         /* ESRCH */
        REASON_NOT_MODELED,             /* ENOSYS: a file the model does not implement */
        _REASON_MAX,
        _REASON_INVALID = -22,
} Reason;

const char *reason_to_string(Reason r);
