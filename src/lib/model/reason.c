/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The refusal vocabulary: one row per Reason. The policy's error texts, the
 * bus error names (bus-errors.c) and the ERRORS section of org.cgbypass1(5)
 * (checked by tests/bus/test-reason-table.c) all come from here.
 *
 * A row's bus error is the name its errno gets today: model reasons that
 * sd-bus clients cannot act on differently (populated, limit, ...) share
 * Failed. Each name has one row whose errno is the errno the name maps to in
 * libcgbypass's cgbypass_error_map (the test checks it).
 */
#include <errno.h>
#include <stddef.h>

#include "cgbypass/bus-errors.h"
#include "cgbypass/reason.h"

typedef struct ReasonInfo {
        int error;
        const char *id;
        const char *text;
        const char *bus_error;
        /* what to change where; bus-errors.c fills in {cgroup}, {parent}, {controller}, {file} */
        const char *bus_message;
        const char *bus_message_controllers;    /* a write of cgroup.controllers, if different */
} ReasonInfo;

static const ReasonInfo reason_table[_REASON_MAX] = {
        [REASON_NONE] = { .id = "none" },

        [REASON_PARSE] = {
                .error = EINVAL, .id = "parse",
                .bus_error = BUS_ERROR_INVALID_ARGUMENT,
                .text = "the kernel does not accept this value",
                .bus_message =
                        "the kernel does not accept this {file} change in {cgroup}",
        },
        [REASON_ROOT] = {
                .error = EINVAL, .id = "root",
                .bus_error = BUS_ERROR_ROOT_CGROUP,
                .text = "not possible on the root cgroup",
                .bus_message =
                        "{cgroup} is the root cgroup: it has no parent that could bypass "
                        "{controller} for it",
        },
        [REASON_NOT_AVAILABLE] = {
                .error = ENOENT, .id = "not-available",
                .bus_error = BUS_ERROR_NOT_AVAILABLE,
                .text = "the parent neither enables nor bypasses it",
                .bus_message =
                        "{cgroup} does not have {controller}: {parent} neither enables nor "
                        "bypasses it for its children; change {parent}'s subtree-control first",
                .bus_message_controllers =
                        "{parent} neither enables nor bypasses {controller} for its children, so "
                        "{cgroup} has nothing to re-enable; {parent}'s subtree-control must "
                        "bypass it first",
        },
        [REASON_NOT_BYPASSED_BY_PARENT] = {
                .error = ENOENT, .id = "not-bypassed-by-parent",
                .bus_error = BUS_ERROR_NOT_BYPASSED_BY_PARENT,
                .text = "the parent does not bypass it",
                .bus_message =
                        "{parent} does not bypass {controller} for its children; ask its owner, "
                        "or change {parent}'s subtree-control in the configuration",
        },
        [REASON_CHILD_USES_IT] = {
                .error = EBUSY, .id = "child-uses-it",
                .bus_error = BUS_ERROR_IN_USE_BELOW,
                .text = "a child cgroup enables, bypasses or re-enabled it",
                .bus_message =
                        "a child of {cgroup} still enables, bypasses or re-enables {controller}; "
                        "change the children first (GetCgroup shows each child's state)",
        },
        [REASON_OWN_SUBTREE_USES_IT] = {
                .error = EBUSY, .id = "own-subtree-uses-it",
                .bus_error = BUS_ERROR_IN_USE_BY_SUBTREE,
                .text = "its own cgroup.subtree_control enables or bypasses it",
                .bus_message =
                        "{cgroup}'s own subtree_control still enables or bypasses {controller}; "
                        "take it out there first (SetSubtreeControl {cgroup} -{controller})",
        },
        [REASON_HAS_PROCESSES] = {
                .error = EBUSY, .id = "has-processes",
                .bus_error = BUS_ERROR_HAS_PROCESSES,
                .text =
                        "the cgroup has processes, and a domain controller cannot be given to its "
                        "children",
                .bus_message =
                        "{cgroup} has processes of its own, and {controller} can only be given to "
                        "the children of a cgroup without processes; move them into a child "
                        "cgroup first",
        },
        [REASON_POPULATED] = {
                .error = EBUSY, .id = "populated",
                .bus_error = BUS_ERROR_FAILED,
                .text = "the cgroup has processes",
        },
        [REASON_HAS_CHILDREN] = {
                .error = EBUSY, .id = "has-children",
                .bus_error = BUS_ERROR_FAILED,
                .text = "the cgroup has children",
        },
        [REASON_INVALID_DOMAIN] = {
                .error = EOPNOTSUPP, .id = "invalid-domain",
                .bus_error = BUS_ERROR_NOT_SUPPORTED,
                .text = "the cgroup is an invalid domain (thread mode) and cannot host resources",
                .bus_message =
                        "{cgroup} is an invalid domain (its parent is a thread root) and cannot "
                        "host {controller}; make it threaded or change its parent",
        },
        [REASON_THREAD_SUBTREE] = {
                .error = EOPNOTSUPP, .id = "thread-subtree",
                .bus_error = BUS_ERROR_NOT_SUPPORTED,
                .text = "domain controllers cannot be given out inside a threaded subtree",
                .bus_message =
                        "{cgroup} is inside a threaded subtree, where {controller} (a domain "
                        "controller) cannot be given out; only threaded controllers can",
        },
        [REASON_CANNOT_BE_THREADED] = {
                .error = EOPNOTSUPP, .id = "cannot-be-threaded",
                .bus_error = BUS_ERROR_NOT_SUPPORTED,
                .text = "the cgroup cannot become threaded",
                .bus_message =
                        "{cgroup}: the thread mode rules forbid this change of {controller}",
        },
        [REASON_THREAD_MIGRATION] = {
                .error = EOPNOTSUPP, .id = "thread-migration",
                .bus_error = BUS_ERROR_NOT_SUPPORTED,
                .text = "threads cannot move between resource domains",
                .bus_message =
                        "{cgroup}: the thread mode rules forbid this change of {controller}",
        },
        [REASON_NO_SUCH_CGROUP] = {
                .error = ENOENT, .id = "no-such-cgroup",
                .bus_error = BUS_ERROR_NO_SUCH_CGROUP,
                .text = "no such cgroup",
                .bus_message =
                        "{cgroup} does not exist (any more)",
        },
        [REASON_NOT_A_DIRECTORY] = {
                .error = ENOTDIR, .id = "not-a-directory",
                .bus_error = BUS_ERROR_NO_SUCH_CGROUP,
                .text = "a path component is not a cgroup",
                .bus_message =
                        "{cgroup} does not exist (any more)",
        },
        [REASON_EXISTS] = {
                .error = EEXIST, .id = "exists",
                .bus_error = BUS_ERROR_FAILED,
                .text = "it exists already",
        },
        [REASON_NO_SUCH_FILE] = {
                .error = ENOENT, .id = "no-such-file",
                .bus_error = BUS_ERROR_NO_SUCH_CGROUP,
                .text = "the interface file does not exist in this cgroup",
        },
        [REASON_READ_ONLY] = {
                .error = EINVAL, .id = "read-only",
                .bus_error = BUS_ERROR_INVALID_ARGUMENT,
                .text = "the file cannot be written",
        },
        [REASON_LIMIT] = {
                .error = EAGAIN, .id = "limit",
                .bus_error = BUS_ERROR_FAILED,
                .text = "cgroup.max.depth or cgroup.max.descendants forbids another cgroup",
        },
        [REASON_RANGE] = {
                .error = ERANGE, .id = "range",
                .bus_error = BUS_ERROR_FAILED,
                .text = "the value is out of range",
        },
        [REASON_NO_SUCH_PROCESS] = {
                .error = ESRCH, .id = "no-such-process",
                .bus_error = BUS_ERROR_FAILED,
                .text = "no such process",
        },
        [REASON_NOT_MODELED] = {
                .error = ENOSYS, .id = "not-modeled",
                .bus_error = BUS_ERROR_FAILED,
                .text = "not modeled",
        },

        [REASON_NOT_DELEGATED] = {
                .error = EPERM, .id = "not-delegated",
                .bus_error = BUS_ERROR_NOT_DELEGATED,
                .text = "no delegation of the caller covers the cgroup",
        },
        [REASON_CONTROLLER_NOT_DELEGATED] = {
                .error = EPERM, .id = "controller-not-delegated",
                .bus_error = BUS_ERROR_CONTROLLER_NOT_DELEGATED,
                .text = "the delegation does not include the controller",
        },
        [REASON_ACCESS_DENIED] = {
                .error = EACCES, .id = "access-denied",
                .bus_error = BUS_ERROR_ACCESS_DENIED,
                .text = "polkit refused, or could not be asked",
        },
        [REASON_NOT_MANAGED] = {
                .error = EPERM, .id = "not-managed",
                .bus_error = BUS_ERROR_NOT_MANAGED,
                .text = "the configuration neither manages nor delegates the cgroup",
        },
        [REASON_INVALID_PATH] = {
                .error = EINVAL, .id = "invalid-path",
                .bus_error = BUS_ERROR_INVALID_PATH,
                .text = "not a normalized absolute cgroup path",
        },
        [REASON_UNKNOWN_CONTROLLER] = {
                .error = EINVAL, .id = "unknown-controller",
                .bus_error = BUS_ERROR_UNKNOWN_CONTROLLER,
                .text = "no such controller on this hierarchy",
        },
        [REASON_CONFIG_INVALID] = {
                .error = EINVAL, .id = "config-invalid",
                .bus_error = BUS_ERROR_CONFIG_INVALID,
                .text = "the configuration has errors",
        },
        [REASON_BUSY] = {
                .error = EAGAIN, .id = "busy",
                .bus_error = BUS_ERROR_BUSY,
                .text = "too many requests are waiting for polkit",
        },
        [REASON_FAILED] = {
                .error = EIO, .id = "failed",
                .bus_error = BUS_ERROR_FAILED,
                .text = "the change failed and was undone",
        },
        [REASON_DELEGATION_CONFLICT] = {
                .error = EEXIST, .id = "delegation-conflict",
                .bus_error = BUS_ERROR_DELEGATION_CONFLICT,
                .text = "delegated already, or inside or above another delegation",
        },
        [REASON_NO_SUCH_DELEGATION] = {
                .error = ENOENT, .id = "no-such-delegation",
                .bus_error = BUS_ERROR_NO_SUCH_DELEGATION,
                .text = "the cgroup is not a delegation root",
        },
        [REASON_NOT_RUNTIME_DELEGATION] = {
                .error = EPERM, .id = "not-runtime-delegation",
                .bus_error = BUS_ERROR_NOT_RUNTIME_DELEGATION,
                .text = "a configured delegation; the configuration ends it",
        },
        [REASON_TOO_MANY_CGROUPS] = {
                .error = EDQUOT, .id = "too-many-cgroups",
                .bus_error = BUS_ERROR_TOO_MANY_CGROUPS,
                .text = "the delegation, or all delegations together, hold the most cgroups cgbypassd manages",
        },
};

static const ReasonInfo *reason_info(Reason r) {
        if (r < 0 || r >= _REASON_MAX)
                return NULL;
        return &reason_table[r];
}

const char *reason_to_string(Reason r) {
        const ReasonInfo *i = reason_info(r);
        return i ? i->id : NULL;
}

int reason_errno(Reason r) {
        const ReasonInfo *i = reason_info(r);
        return i ? i->error : 0;
}

const char *reason_text(Reason r) {
        const ReasonInfo *i = reason_info(r);
        return i ? i->text : NULL;
}

const char *reason_bus_error(Reason r) {
        const ReasonInfo *i = reason_info(r);
        return i ? i->bus_error : NULL;
}

const char *reason_bus_message(Reason r, bool controllers) {
        const ReasonInfo *i = reason_info(r);

        if (!i)
                return NULL;
        if (controllers && i->bus_message_controllers)
                return i->bus_message_controllers;
        return i->bus_message;
}
