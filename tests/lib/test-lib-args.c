/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcgbypass refuses what it cannot send before it touches the bus: a
 * NULL argument, an unknown flag. Each is -EINVAL with the error set, so a
 * caller that prints the error has something to print.
 */
#include <cgbypass/cgbypass.h>
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "../check-run.h"

static sd_bus *bus;

/* a bus object that was never started: any use of it would fail differently (-ENOTCONN) */
static void setup(void) {
        ck_assert_int_ge(sd_bus_new(&bus), 0);
}

static void teardown(void) {
        bus = sd_bus_unref(bus);
}

static void assert_invalid(int r, sd_bus_error *e) {
        ck_assert_int_eq(r, -EINVAL);
        ck_assert(sd_bus_error_has_name(e, SD_BUS_ERROR_INVALID_ARGS));
        ck_assert_ptr_nonnull(e->message);
        sd_bus_error_free(e);
}

START_TEST(test_null_arguments) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL;
        char *s = NULL;

        assert_invalid(cgbypass_enable_controller(NULL, "/a", "cpu", &e), &e);
        assert_invalid(cgbypass_enable_controller(bus, NULL, "cpu", &e), &e);
        assert_invalid(cgbypass_bypass_controller(bus, "/a", NULL, &e), &e);
        assert_invalid(cgbypass_set_subtree_control(bus, "/a", NULL, &e), &e);
        assert_invalid(cgbypass_get_cgroup(bus, NULL, &m, &e), &e);
        assert_invalid(cgbypass_get_cgroup(bus, "/a", NULL, &e), &e);
        assert_invalid(cgbypass_get_effective_tree(bus, "cpu", NULL, &e), &e);
        assert_invalid(cgbypass_get_effective_tree(bus, NULL, &s, &e), &e);
        assert_invalid(cgbypass_get_effective_nodes(bus, NULL, &m, &e), &e);
        assert_invalid(cgbypass_list_delegations(bus, NULL, &e), &e);
        assert_invalid(cgbypass_list_delegations(NULL, &m, &e), &e);
        assert_invalid(cgbypass_reload(NULL, &e), &e);
        assert_invalid(cgbypass_add_delegation(bus, NULL, 1000, NULL, 0, &e), &e);
        assert_invalid(cgbypass_remove_delegation(bus, NULL, &e), &e);
        ck_assert_int_eq(cgbypass_match_cgroup_changed(bus, NULL, NULL, NULL), -EINVAL);
        ck_assert_ptr_null(m);
        ck_assert_ptr_null(s);
        /* without an error to fill, the errno alone */
        ck_assert_int_eq(cgbypass_reload(NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(test_unknown_flags) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        char *controllers[] = { (char *) "cpu", NULL };

        assert_invalid(cgbypass_add_delegation(bus, "/a", 1000, controllers, UINT64_C(1) << 2, &e), &e);
        assert_invalid(cgbypass_add_delegation(bus, "/a", 1000, controllers, UINT64_MAX, &e), &e);
}
END_TEST

/* a connection that is not open: the call fails, and says so in the error too */
START_TEST(test_not_connected) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = cgbypass_reload(bus, &e);

        ck_assert_int_lt(r, 0);
        ck_assert_int_ne(r, -EINVAL);
        ck_assert(sd_bus_error_is_set(&e));
        ck_assert_int_eq(sd_bus_error_get_errno(&e), -r);
        sd_bus_error_free(&e);
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE("lib-args", "args", setup, teardown, test_null_arguments, test_unknown_flags,
                                     test_not_connected));
}
