/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The refusal vocabulary: one row per Reason. The policy's error texts, the
 * bus error names (bus-errors.c) and the ERRORS section of org.cgbypass1(5)
 * (checked by tests/bus/test-reason-table.c) all come from here.
 *
 * A row's bus error is the name its errno gets today: model reasons that
 * sd-bus clients cannot act on differently (populated, limit, ...) share
 * Failed. Each name has one row whose errno is the errno the name maps to in
 * cgbypass_bus_error_map (the test checks it).
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
} ReasonInfo;

static const ReasonInfo reason_table[_REASON_MAX] = {
        [REASON_NONE] = { 0, "none", NULL, NULL },

        [REASON_PARSE] = {
                EINVAL, "parse", "the kernel does not accept this value",
                BUS_ERROR_INVALID_ARGUMENT },
        [REASON_ROOT] = {
                EINVAL, "root", "not possible on the root cgroup",
                BUS_ERROR_ROOT_CGROUP },
        [REASON_NOT_AVAILABLE] = {
                ENOENT, "not-available", "the parent neither enables nor bypasses it",
                BUS_ERROR_NOT_AVAILABLE },
        [REASON_NOT_BYPASSED_BY_PARENT] = {
                ENOENT, "not-bypassed-by-parent", "the parent does not bypass it",
                BUS_ERROR_NOT_BYPASSED_BY_PARENT },
        [REASON_CHILD_USES_IT] = {
                EBUSY, "child-uses-it", "a child cgroup enables, bypasses or re-enabled it",
                BUS_ERROR_IN_USE_BELOW },
        [REASON_OWN_SUBTREE_USES_IT] = {
                EBUSY, "own-subtree-uses-it", "its own cgroup.subtree_control enables or bypasses it",
                BUS_ERROR_IN_USE_BY_SUBTREE },
        [REASON_HAS_PROCESSES] = {
                EBUSY, "has-processes",
                "the cgroup has processes, and a domain controller cannot be given to its children",
                BUS_ERROR_HAS_PROCESSES },
        [REASON_POPULATED] = {
                EBUSY, "populated", "the cgroup has processes",
                BUS_ERROR_FAILED },
        [REASON_HAS_CHILDREN] = {
                EBUSY, "has-children", "the cgroup has children",
                BUS_ERROR_FAILED },
        [REASON_INVALID_DOMAIN] = {
                EOPNOTSUPP, "invalid-domain",
                "the cgroup is an invalid domain (thread mode) and cannot host resources",
                BUS_ERROR_NOT_SUPPORTED },
        [REASON_THREAD_SUBTREE] = {
                EOPNOTSUPP, "thread-subtree", "domain controllers cannot be given out inside a threaded subtree",
                BUS_ERROR_NOT_SUPPORTED },
        [REASON_CANNOT_BE_THREADED] = {
                EOPNOTSUPP, "cannot-be-threaded", "the cgroup cannot become threaded",
                BUS_ERROR_NOT_SUPPORTED },
        [REASON_THREAD_MIGRATION] = {
                EOPNOTSUPP, "thread-migration", "threads cannot move between resource domains",
                BUS_ERROR_NOT_SUPPORTED },
        [REASON_NO_SUCH_CGROUP] = {
                ENOENT, "no-such-cgroup", "no such cgroup",
                BUS_ERROR_NO_SUCH_CGROUP },
        [REASON_NOT_A_DIRECTORY] = {
                ENOTDIR, "not-a-directory", "a path component is not a cgroup",
                BUS_ERROR_NO_SUCH_CGROUP },
        [REASON_EXISTS] = {
                EEXIST, "exists", "it exists already",
                BUS_ERROR_FAILED },
        [REASON_NO_SUCH_FILE] = {
                ENOENT, "no-such-file", "the interface file does not exist in this cgroup",
                BUS_ERROR_NO_SUCH_CGROUP },
        [REASON_READ_ONLY] = {
                EINVAL, "read-only", "the file cannot be written",
                BUS_ERROR_INVALID_ARGUMENT },
        [REASON_LIMIT] = {
                EAGAIN, "limit", "cgroup.max.depth or cgroup.max.descendants forbids another cgroup",
                BUS_ERROR_FAILED },
        [REASON_RANGE] = {
                ERANGE, "range", "the value is out of range",
                BUS_ERROR_FAILED },
        [REASON_NO_SUCH_PROCESS] = {
                ESRCH, "no-such-process", "no such process",
                BUS_ERROR_FAILED },
        [REASON_NOT_MODELED] = {
                ENOSYS, "not-modeled", "not modeled",
                BUS_ERROR_FAILED },

        [REASON_NOT_DELEGATED] = {
                EPERM, "not-delegated", "no delegation of the caller covers the cgroup",
                BUS_ERROR_NOT_DELEGATED },
        [REASON_CONTROLLER_NOT_DELEGATED] = {
                EPERM, "controller-not-delegated", "the delegation does not include the controller",
                BUS_ERROR_CONTROLLER_NOT_DELEGATED },
        [REASON_ACCESS_DENIED] = {
                EACCES, "access-denied", "polkit refused, or could not be asked",
                BUS_ERROR_ACCESS_DENIED },
        [REASON_NOT_MANAGED] = {
                EPERM, "not-managed", "the configuration neither manages nor delegates the cgroup",
                BUS_ERROR_NOT_MANAGED },
        [REASON_INVALID_PATH] = {
                EINVAL, "invalid-path", "not a normalized absolute cgroup path",
                BUS_ERROR_INVALID_PATH },
        [REASON_UNKNOWN_CONTROLLER] = {
                EINVAL, "unknown-controller", "no such controller on this hierarchy",
                BUS_ERROR_UNKNOWN_CONTROLLER },
        [REASON_CONFIG_INVALID] = {
                EINVAL, "config-invalid", "the configuration has errors",
                BUS_ERROR_CONFIG_INVALID },
        [REASON_BUSY] = {
                EAGAIN, "busy", "too many requests are waiting for polkit",
                BUS_ERROR_BUSY },
        [REASON_FAILED] = {
                EIO, "failed", "the change failed and was undone",
                BUS_ERROR_FAILED },
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
