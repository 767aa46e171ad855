/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one table of org.cgbypass1.Error.* names and their errnos. cgbypassd
 * links the same table (through this library), so what the daemon sends and
 * what a client decodes cannot drift apart; org.cgbypass1(5) documents it,
 * and tests/lib checks the page against it.
 */
#include <errno.h>

#include "cgbypass/cgbypass.h"
#include "libcgbypass-internal.h"

_public_ const sd_bus_error_map cgbypass_error_map[] = {
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_NOT_DELEGATED,            EPERM),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_CONTROLLER_NOT_DELEGATED, EPERM),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_ACCESS_DENIED,            EACCES),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_NOT_MANAGED,              EPERM),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_NO_SUCH_CGROUP,           ENOENT),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_INVALID_PATH,             EINVAL),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_UNKNOWN_CONTROLLER,       EINVAL),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_INVALID_ARGUMENT,         EINVAL),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_ROOT_CGROUP,              EINVAL),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_NOT_BYPASSED_BY_PARENT,   ENOENT),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_NOT_AVAILABLE,            ENOENT),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_IN_USE_BELOW,             EBUSY),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_IN_USE_BY_SUBTREE,        EBUSY),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_HAS_PROCESSES,            EBUSY),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_NOT_SUPPORTED,            EOPNOTSUPP),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_CONFIG_INVALID,           EINVAL),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_BUSY,                     EAGAIN),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_FAILED,                   EIO),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_DELEGATION_CONFLICT,      EEXIST),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_NO_SUCH_DELEGATION,       ENOENT),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_NOT_RUNTIME_DELEGATION,   EPERM),
        SD_BUS_ERROR_MAP(CGBYPASS_ERROR_TOO_MANY_CGROUPS,         EDQUOT),
        SD_BUS_ERROR_MAP_END
};

/*
 * At load time, so that a client gets the errnos without a call of its own.
 * sd-bus keeps the pointer (a second registration of it is a no-op); it can
 * only fail for lack of memory, and then the errors decode as EIO, as before.
 */
__attribute__((constructor)) static void cgbypass_register_error_map(void) {
        (void) sd_bus_error_add_map(cgbypass_error_map);
}
