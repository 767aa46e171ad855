/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The end of every Check test's main(): run @s (CK_VERBOSITY decides the output), its exit status.
 * check_run_forking(): the same with the fork mode @fork (CK_NOFORK: tests that share state outside). */

#include <check.h>
#include <dirent.h>
#include <stdlib.h>

static inline int check_run_forking(Suite *s, enum fork_status fork) {
        SRunner *sr = srunner_create(s);
        int failed;

        if (fork != CK_FORK_GETENV)
                srunner_set_fork_status(sr, fork);
        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static inline int check_run(Suite *s) {
        return check_run_forking(s, CK_FORK_GETENV);
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

/* A row of a test case's table: @test once, or with @end > 0 as a loop test, _i = @start .. @end - 1. */
typedef struct CheckTest {
        const TTest *test;
        int end;
        int start;
} CheckTest;

/* Adds to @s the test case @name: the rows of @tests up to { NULL }, with the fixture @setup/@teardown
 * (NULL: none). Returns it, for a timeout. */
static inline TCase *check_tcase(Suite *s, const char *name, SFun setup, SFun teardown, const CheckTest *tests) {
        TCase *tc = tcase_create(name);

        if (setup || teardown)
                tcase_add_checked_fixture(tc, setup, teardown);
        for (; tests->test; tests++)
                if (tests->end > 0)
                        tcase_add_loop_test(tc, tests->test, tests->start, tests->end);
                else
                        tcase_add_test(tc, tests->test);
        suite_add_tcase(s, tc);
        return tc;
}

static inline Suite *check_suite_table(const char *name, const char *tcase, SFun setup, SFun teardown,
                                       const CheckTest *tests) {
        Suite *s = suite_create(name);

        check_tcase(s, tcase, setup, teardown, tests);
        return s;
}

/* The rows are { test }, { test, end } or { test, end, start }: what a row leaves out is 0, as meant. */
#define CHECK_WITH_ROWS_(call, ...) ({                                                                  \
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"") \
        const CheckTest _rows[] = { __VA_ARGS__, { NULL, 0, 0 } };                                         \
        _Pragma("GCC diagnostic pop")                                                                   \
        call;                                                                                           \
})
#define CHECK_TCASE(s, name, setup, teardown, ...) \
        CHECK_WITH_ROWS_(check_tcase((s), (name), (setup), (teardown), _rows), __VA_ARGS__)
#define CHECK_SUITE_TABLE(name, tcase, setup, teardown, ...) \
        CHECK_WITH_ROWS_(check_suite_table((name), (tcase), (setup), (teardown), _rows), __VA_ARGS__)

/* How many fds this process has open: a test that nothing it did stays open compares two counts. */
static inline unsigned check_open_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        ck_assert_ptr_nonnull(d);
        for (struct dirent *e; (e = readdir(d));)
                n += e->d_name[0] != '.';
        (void) closedir(d);
        return n - 1;   /* opendir()'s own */
}
