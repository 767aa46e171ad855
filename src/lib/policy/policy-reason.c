/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgbypass/policy.h"

const char *policy_reason_text(int error, Reason reason) {
        switch (reason) {
        case REASON_PARSE:
                return "the kernel does not accept this value";
        case REASON_ROOT:
                return "not possible on the root cgroup";
        case REASON_NOT_AVAILABLE:
                return "the parent neither enables nor bypasses it";
        case REASON_NOT_BYPASSED_BY_PARENT:
                return "the parent does not bypass it";
        case REASON_CHILD_USES_IT:
                return "a child cgroup enables, bypasses or re-enabled it";
        case REASON_OWN_SUBTREE_USES_IT:
                return "its own cgroup.subtree_control enables or bypasses it";
        case REASON_HAS_PROCESSES:
                return "the cgroup has processes, and a domain controller cannot be given to its children";
        case REASON_POPULATED:
                return "the cgroup has processes";
        case REASON_HAS_CHILDREN:
                return "the cgroup has children";
        case REASON_INVALID_DOMAIN:
                return "the cgroup is an invalid domain (thread mode) and cannot host resources";
        case REASON_THREAD_SUBTREE:
                return "domain controllers cannot be given out inside a threaded subtree";
        case REASON_CANNOT_BE_THREADED:
                return "the cgroup cannot become threaded";
        case REASON_THREAD_MIGRATION:
                return "threads cannot move between resource domains";
        case REASON_NO_SUCH_CGROUP:
                return "no such cgroup";
        case REASON_NOT_A_DIRECTORY:
                return "a path component is not a cgroup";
        case REASON_EXISTS:
                return "it exists already";
        case REASON_NO_SUCH_FILE:
                return "the interface file does not exist in this cgroup";
        case REASON_READ_ONLY:
                return "the file cannot be written";
        case REASON_LIMIT:
                return "cgroup.max.depth or cgroup.max.descendants forbids another cgroup";
        case REASON_RANGE:
                return "the value is out of range";
        case REASON_NO_SUCH_PROCESS:
                return "no such process";
        case REASON_NOT_MODELED:
                return "not modeled";
        default:
                break;
        }
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
