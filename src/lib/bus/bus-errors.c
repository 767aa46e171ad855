/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The org.cgbypass1.Error.* name and the words for a refused change: which
 * cgroup to look at and what to change there. (The names and their errnos
 * are libcgbypass's table, src/libcgbypass/cgbypass-errors.c.)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgbypass/bus-errors.h"
#include "cgbypass/macro.h"

const char *bus_error_name_from_model(int error, Reason reason) {
        if (error > 0)
                error = -error;
        switch (reason) {
        case REASON_NOT_BYPASSED_BY_PARENT:
                return BUS_ERROR_NOT_BYPASSED_BY_PARENT;
        case REASON_NOT_AVAILABLE:
                return BUS_ERROR_NOT_AVAILABLE;
        case REASON_CHILD_USES_IT:
                return BUS_ERROR_IN_USE_BELOW;
        case REASON_OWN_SUBTREE_USES_IT:
                return BUS_ERROR_IN_USE_BY_SUBTREE;
        case REASON_HAS_PROCESSES:
                return BUS_ERROR_HAS_PROCESSES;
        case REASON_INVALID_DOMAIN:
        case REASON_THREAD_SUBTREE:
        case REASON_CANNOT_BE_THREADED:
        case REASON_THREAD_MIGRATION:
                return BUS_ERROR_NOT_SUPPORTED;
        case REASON_ROOT:
                return BUS_ERROR_ROOT_CGROUP;
        case REASON_NO_SUCH_CGROUP:
        case REASON_NOT_A_DIRECTORY:
                return BUS_ERROR_NO_SUCH_CGROUP;
        case REASON_PARSE:
                return BUS_ERROR_INVALID_ARGUMENT;
        default:
                break;
        }
        switch (error) {
        case -ENOMEM:
                return SD_BUS_ERROR_NO_MEMORY;
        case -ENOENT:
        case -ENOTDIR:
                return BUS_ERROR_NO_SUCH_CGROUP;
        case -EOPNOTSUPP:
                return BUS_ERROR_NOT_SUPPORTED;
        case -EINVAL:
                return BUS_ERROR_INVALID_ARGUMENT;
        default:
                return BUS_ERROR_FAILED;
        }
}

/* "/a/b" -> "/a" (in @buf); "/a" -> "/" */
static const char *parent_of(const char *cgroup, char *buf, size_t size) {
        const char *slash = strrchr(cgroup, '/');
        size_t n;

        if (!slash || slash == cgroup)
                return "/";
        n = (size_t) (slash - cgroup);
        if (n >= size)
                return "its parent";
        memcpy(buf, cgroup, n);
        buf[n] = '\0';
        return buf;
}

int bus_error_set_model(sd_bus_error *e, int error, Reason reason, const char *cgroup, const char *file,
                        const char *controller) {
        const char *name = bus_error_name_from_model(error, reason);
        const char *x = controller ?: "the controller";
        bool for_itself = streq_ptr(file, "cgroup.controllers");
        char buf[4096];
        const char *parent;
        int r;

        if (error > 0)
                error = -error;
        cgroup = cgroup ?: "the cgroup";
        parent = parent_of(cgroup, buf, sizeof(buf));

        switch (reason) {
        case REASON_NOT_BYPASSED_BY_PARENT:
                r = sd_bus_error_setf(e, name,
                                      "%s does not bypass %s for its children; ask its owner, or change %s's "
                                      "subtree-control in the configuration",
                                      parent, x, parent);
                break;
        case REASON_NOT_AVAILABLE:
                if (for_itself)
                        r = sd_bus_error_setf(e, name,
                                              "%s neither enables nor bypasses %s for its children, so %s has "
                                              "nothing to re-enable; %s's subtree-control must bypass it first",
                                              parent, x, cgroup, parent);
                else
                        r = sd_bus_error_setf(e, name,
                                              "%s does not have %s: %s neither enables nor bypasses it for its "
                                              "children; change %s's subtree-control first",
                                              cgroup, x, parent, parent);
                break;
        case REASON_CHILD_USES_IT:
                r = sd_bus_error_setf(e, name,
                                      "a child of %s still enables, bypasses or re-enables %s; change the "
                                      "children first (GetCgroup shows each child's state)",
                                      cgroup, x);
                break;
        case REASON_OWN_SUBTREE_USES_IT:
                r = sd_bus_error_setf(e, name,
                                      "%s's own subtree_control still enables or bypasses %s; take it out "
                                      "there first (SetSubtreeControl %s -%s)",
                                      cgroup, x, cgroup, x);
                break;
        case REASON_HAS_PROCESSES:
                r = sd_bus_error_setf(e, name,
                                      "%s has processes of its own, and %s can only be given to the children "
                                      "of a cgroup without processes; move them into a child cgroup first",
                                      cgroup, x);
                break;
        case REASON_INVALID_DOMAIN:
                r = sd_bus_error_setf(e, name,
                                      "%s is an invalid domain (its parent is a thread root) and cannot host "
                                      "%s; make it threaded or change its parent",
                                      cgroup, x);
                break;
        case REASON_THREAD_SUBTREE:
                r = sd_bus_error_setf(e, name,
                                      "%s is inside a threaded subtree, where %s (a domain controller) cannot "
                                      "be given out; only threaded controllers can",
                                      cgroup, x);
                break;
        case REASON_CANNOT_BE_THREADED:
        case REASON_THREAD_MIGRATION:
                r = sd_bus_error_setf(e, name, "%s: the thread mode rules forbid this change of %s", cgroup, x);
                break;
        case REASON_ROOT:
                r = sd_bus_error_setf(e, name,
                                      "%s is the root cgroup: it has no parent that could bypass %s for it",
                                      cgroup, x);
                break;
        case REASON_NO_SUCH_CGROUP:
        case REASON_NOT_A_DIRECTORY:
                r = sd_bus_error_setf(e, name, "%s does not exist (any more)", cgroup);
                break;
        case REASON_PARSE:
                r = sd_bus_error_setf(e, name, "the kernel does not accept this %s change in %s",
                                      strempty(file), cgroup);
                break;
        default:
                if (error == -ENOMEM)
                        r = sd_bus_error_set(e, name, "Out of memory");
                else if (error == -ENOENT || error == -ENOTDIR)
                        r = sd_bus_error_setf(e, name, "%s does not exist (any more)", cgroup);
                else if (error == -EEXIST)
                        r = sd_bus_error_setf(e, name,
                                              "%s in %s would add interface files whose names a child cgroup "
                                              "of %s has; rename that child first",
                                              x, cgroup, cgroup);
                else
                        r = sd_bus_error_setf(e, name, "the kernel refused to change %s in %s's %s (%s); "
                                              "nothing was changed",
                                              x, cgroup, strempty(file), strerror(-error));
                break;
        }
        return r;
}
