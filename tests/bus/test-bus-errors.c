/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The error map shared by cgbypassd and cgbypassctl, and the words for refusals. */
#include <check.h>
#include <errno.h>

#include "../check-run.h"
#include "cgbypass/bus-errors.h"
#include "cgbypass/macro.h"

static const struct {
        const char *name;
        int error;
} names[] = {
        { BUS_ERROR_NOT_DELEGATED,            EPERM },
        { BUS_ERROR_CONTROLLER_NOT_DELEGATED, EPERM },
        { BUS_ERROR_ACCESS_DENIED,            EACCES },
        { BUS_ERROR_NOT_MANAGED,              EPERM },
        { BUS_ERROR_NO_SUCH_CGROUP,           ENOENT },
        { BUS_ERROR_INVALID_PATH,             EINVAL },
        { BUS_ERROR_UNKNOWN_CONTROLLER,       EINVAL },
        { BUS_ERROR_INVALID_ARGUMENT,         EINVAL },
        { BUS_ERROR_ROOT_CGROUP,              EINVAL },
        { BUS_ERROR_NOT_BYPASSED_BY_PARENT,   ENOENT },
        { BUS_ERROR_NOT_AVAILABLE,            ENOENT },
        { BUS_ERROR_IN_USE_BELOW,             EBUSY },
        { BUS_ERROR_IN_USE_BY_SUBTREE,        EBUSY },
        { BUS_ERROR_HAS_PROCESSES,            EBUSY },
        { BUS_ERROR_NOT_SUPPORTED,            EOPNOTSUPP },
        { BUS_ERROR_CONFIG_INVALID,           EINVAL },
        { BUS_ERROR_BUSY,                     EAGAIN },
        { BUS_ERROR_FAILED,                   EIO },
        { BUS_ERROR_DELEGATION_CONFLICT,      EEXIST },
        { BUS_ERROR_NO_SUCH_DELEGATION,       ENOENT },
        { BUS_ERROR_NOT_RUNTIME_DELEGATION,   EPERM },
        { BUS_ERROR_TOO_MANY_CGROUPS,         EDQUOT },
};

START_TEST(test_map_names_to_errnos) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        size_t n = 0;

        ck_assert_int_ge(sd_bus_error_add_map(cgbypass_bus_error_map), 0);
        ck_assert_int_eq(sd_bus_error_set(&e, names[_i].name, "x"), -names[_i].error);
        ck_assert_int_eq(sd_bus_error_get_errno(&e), names[_i].error);
        /* every name of the map is in this table, and the other way round */
        for (const sd_bus_error_map *m = cgbypass_bus_error_map; m->code != 0 || m->name; m++) {
                if (!m->name)
                        break;
                n++;
        }
        ck_assert_uint_eq(n, ELEMENTSOF(names));
}
END_TEST

static const struct {
        int error;
        Reason reason;
        const char *name;
} reasons[] = {
        { -ENOENT,     REASON_NOT_BYPASSED_BY_PARENT, BUS_ERROR_NOT_BYPASSED_BY_PARENT },
        { -ENOENT,     REASON_NOT_AVAILABLE,          BUS_ERROR_NOT_AVAILABLE },
        { -EBUSY,      REASON_CHILD_USES_IT,          BUS_ERROR_IN_USE_BELOW },
        { -EBUSY,      REASON_OWN_SUBTREE_USES_IT,    BUS_ERROR_IN_USE_BY_SUBTREE },
        { -EBUSY,      REASON_HAS_PROCESSES,          BUS_ERROR_HAS_PROCESSES },
        { -EOPNOTSUPP, REASON_INVALID_DOMAIN,         BUS_ERROR_NOT_SUPPORTED },
        { -EOPNOTSUPP, REASON_THREAD_SUBTREE,         BUS_ERROR_NOT_SUPPORTED },
        { -EINVAL,     REASON_ROOT,                   BUS_ERROR_ROOT_CGROUP },
        { -ENOENT,     REASON_NO_SUCH_CGROUP,         BUS_ERROR_NO_SUCH_CGROUP },
        { -ENOTDIR,    REASON_NOT_A_DIRECTORY,        BUS_ERROR_NO_SUCH_CGROUP },
        { -EINVAL,     REASON_PARSE,                  BUS_ERROR_INVALID_ARGUMENT },
        { -ENOENT,     REASON_NONE,                   BUS_ERROR_NO_SUCH_CGROUP },
        { -EACCES,     REASON_NONE,                   BUS_ERROR_FAILED },
        { -EEXIST,     REASON_NONE,                   BUS_ERROR_FAILED },
        { -ENOMEM,     REASON_NONE,                   SD_BUS_ERROR_NO_MEMORY },
};

START_TEST(test_reason_to_name) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        ck_assert_int_ge(sd_bus_error_add_map(cgbypass_bus_error_map), 0);
        ck_assert_str_eq(bus_error_name_from_model(reasons[_i].error, reasons[_i].reason), reasons[_i].name);
        r = bus_error_set_model(&e, reasons[_i].error, reasons[_i].reason, "/srv/a/b", "cgroup.subtree_control", "cpu");
        ck_assert_str_eq(e.name, reasons[_i].name);
        ck_assert_ptr_nonnull(e.message);
        ck_assert_int_lt(r, 0);
        ck_assert_int_eq(r, -sd_bus_error_get_errno(&e));
}
END_TEST

START_TEST(test_messages_say_what_to_do) {
        _cleanup_(sd_bus_error_free) sd_bus_error a = SD_BUS_ERROR_NULL, b = SD_BUS_ERROR_NULL,
                                     c = SD_BUS_ERROR_NULL, d = SD_BUS_ERROR_NULL;

        (void) bus_error_set_model(&a, -ENOENT, REASON_NOT_BYPASSED_BY_PARENT, "/srv/a/b", "cgroup.controllers", "cpu");
        ck_assert_str_eq(a.message, "/srv/a does not bypass cpu for its children; ask its owner, or change /srv/a's "
                         "subtree-control in the configuration");
        /* a top-level cgroup's parent is the root */
        (void) bus_error_set_model(&b, -ENOENT, REASON_NOT_BYPASSED_BY_PARENT, "/a", "cgroup.controllers", "io");
        ck_assert_str_eq(b.message, "/ does not bypass io for its children; ask its owner, or change /'s "
                         "subtree-control in the configuration");
        (void) bus_error_set_model(&c, -EBUSY, REASON_OWN_SUBTREE_USES_IT, "/x", "cgroup.controllers", "cpu");
        ck_assert_ptr_nonnull(strstr(c.message, "SetSubtreeControl /x -cpu"));
        (void) bus_error_set_model(&d, -EPERM, REASON_NONE, "/x", "cgroup.subtree_control", "memory");
        ck_assert_str_eq(d.name, BUS_ERROR_FAILED);
        ck_assert_ptr_nonnull(strstr(d.message, "nothing was changed"));
}
END_TEST

static Suite *bus_errors_suite(void) {
        Suite *s = suite_create("bus-errors");

        CHECK_TCASE(s, "map", NULL, NULL, { test_map_names_to_errnos, ELEMENTSOF(names) },
                    { test_reason_to_name, ELEMENTSOF(reasons) }, { test_messages_say_what_to_do });
        return s;
}

int main(void) {
        return check_run(bus_errors_suite());
}
