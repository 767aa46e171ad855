/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The end of every Check test's main(): run @s (CK_VERBOSITY decides the output), its exit status. */

#include <check.h>
#include <stdlib.h>

static inline int check_run(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* A suite @name of the one test case @tcase: the tests of the NULL-terminated @tests, with the fixture
 * @setup/@teardown, run around each test in its fork (NULL: none). */
static inline Suite *check_suite(const char *name, const char *tcase, SFun setup, SFun teardown,
                                 const TTest *const *tests) {
        Suite *s = suite_create(name);
        TCase *tc = tcase_create(tcase);

        if (setup || teardown)
                tcase_add_checked_fixture(tc, setup, teardown);
        for (; *tests; tests++)
                tcase_add_test(tc, *tests);
        suite_add_tcase(s, tc);
        return s;
}

#define CHECK_SUITE(name, tcase, setup, teardown, ...) \
        check_suite((name), (tcase), (setup), (teardown), (const TTest *const[]) { __VA_ARGS__, NULL })
