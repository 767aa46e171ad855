/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the bus layer makes of the daemon's refusals (bus-manager.c:
 * bus_error_from_change(), bus_error_from_reload()): one table of -errno
 * and Refusal, with the error name, a piece of its message and the errno
 * the handler hands to sd-bus. Several of these cannot be provoked on a
 * bus without breaking the machine under the daemon (a state directory
 * that fails between apply and record).
 */
#include <check.h>

#include "../check-run.h"
#include "bus-manager.h"
#include "cgbypass/bus-errors.h"

static const struct {
        bool reload;
        int r;
        Refusal refusal;
        const char *name, *text;        /* NULL: no error set */
        int ret;
} cases[] = {
        { false, -ENOENT, { .kind = REFUSAL_NO_SUCH_CGROUP }, BUS_ERROR_NO_SUCH_CGROUP, "/srv/a/b does not exist",
          -ENOENT },
        { false, -ENOENT, { .kind = REFUSAL_MODEL, .reason = REASON_NOT_BYPASSED_BY_PARENT,
                            .cgroup = (char *) "/srv/a/b", .file = (char *) "cgroup.controllers",
                            .controller = (char *) "cpu" },
          BUS_ERROR_NOT_BYPASSED_BY_PARENT, "/srv/a does not bypass cpu", -ENOENT },
        { false, -EBUSY, { .kind = REFUSAL_BREAKS_BELOW, .detail = (char *) "the planner's words" },
          BUS_ERROR_IN_USE_BELOW, "Changing cpu in /srv/a/b would break what is asked for below it: the "
          "planner's words", -EBUSY },
        { false, -EROFS, { .kind = REFUSAL_NOT_RECORDED }, BUS_ERROR_FAILED,
          "could not record the change in its state directory (Read-only file system); it was taken back: the "
          "hierarchy is as before", -EIO },
        { false, -ENOSPC, { .kind = REFUSAL_NOT_RECORDED_LEFT }, BUS_ERROR_FAILED,
          "(No space left on device), and taking it back failed: the hierarchy is between the old and the new "
          "state", -EIO },
        { false, -ENOMEM, { .kind = REFUSAL_NONE }, NULL, NULL, -ENOMEM },
        { true, -EINVAL, { .kind = REFUSAL_CONFIG_INVALID }, BUS_ERROR_CONFIG_INVALID,
          "The configuration has 2 problem(s); nothing was changed:\n/etc/x.conf:3: one\n/etc/x.conf:9: two", -EINVAL },
        { true, -EBUSY, { .kind = REFUSAL_APPLY_FAILED }, BUS_ERROR_FAILED,
          "Applying the configuration failed (Device or resource busy); the hierarchy is as before", -EIO },
        { true, -EROFS, { .kind = REFUSAL_NOT_RECORDED }, BUS_ERROR_FAILED,
          "could not be recorded in the state directory (Read-only file system); it was taken back: the "
          "hierarchy is as before", -EIO },
        { true, -EIO, { .kind = REFUSAL_APPLY_LEFT }, BUS_ERROR_FAILED,
          "taking it back failed too: the hierarchy is between the old and the new configuration", -EIO },
        { true, -ENOMEM, { .kind = REFUSAL_NONE }, NULL, NULL, -ENOMEM },
};

START_TEST(test_refusal) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(change_request_done) ChangeRequest req = {};
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        ConfigLocation l3 = { .file = "/etc/x.conf", .line = 3 }, l9 = { .file = "/etc/x.conf", .line = 9 };
        int r;

        ck_assert_int_eq(request_parse(CGMASK_VM_KERNEL, CHANGE_ENABLE, "/srv/a/b", "cpu", &req, &(Refusal) {}), 0);
        ck_assert_int_eq(config_errors_add(&errs, &l3, "one"), 0);
        ck_assert_int_eq(config_errors_add(&errs, &l9, "two"), 0);
        if (cases[_i].reload)
                r = bus_error_from_reload(&e, cases[_i].r, &cases[_i].refusal, &errs);
        else
                r = bus_error_from_change(&e, cases[_i].r, &cases[_i].refusal, &req);
        config_errors_done(&errs);

        ck_assert_int_eq(r, cases[_i].ret);
        if (!cases[_i].name) {
                ck_assert_msg(!sd_bus_error_is_set(&e), "error set: %s", e.name);
                return;
        }
        ck_assert_str_eq(strempty(e.name), cases[_i].name);
        ck_assert_msg(strstr(strempty(e.message), cases[_i].text), "'%s' lacks '%s'", strempty(e.message),
                      cases[_i].text);
}
END_TEST

int main(void) {
        if (sd_bus_error_add_map(cgbypass_bus_error_map) < 0)
                return EXIT_FAILURE;
        return check_run(CHECK_SUITE_TABLE("refusal", "bus errors", NULL, NULL, { test_refusal, ELEMENTSOF(cases) }));
}
