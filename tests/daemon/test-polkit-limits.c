/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * polkit_may_ask(), the limits on pending polkit checks: below the bus's 128
 * pending replies of cgbypassd's connection, 32 per caller uid, and the last
 * 32 places for callers without a pending check, so that no callers can keep
 * a new one from being asked about.
 */
#include <check.h>

#include "../check-run.h"
#include "polkit.h"

static const struct {
        unsigned total, mine;
        bool ok;
} cases[] = {
        { 0, 0, true },
        { 31, 31, true },
        { 32, 32, false },                      /* the caller's own limit */
        { 64, 32, false },
        { 64, 0, true },                        /* two callers at their limit: a third is asked about */
        { 63, 31, true },                       /* 63 + 32 < 96 */
        { 64, 1, false },                       /* the last 32 places: only for callers with none */
        { 80, 0, true },
        { 95, 0, true },
        { 96, 0, false },                       /* all places taken */
        { 200, 0, false },
};

START_TEST(test_may_ask) {
        ck_assert_msg(polkit_may_ask(cases[_i].total, cases[_i].mine) == cases[_i].ok, "total %u mine %u",
                      cases[_i].total, cases[_i].mine);
}
END_TEST

/* the sizes: below the bus's 128, and room for two callers at their limit plus a third */
START_TEST(test_sizes) {
        ck_assert_uint_lt(POLKIT_QUERIES_MAX, 128);
        ck_assert_uint_ge(POLKIT_QUERIES_MAX, 3 * POLKIT_QUERIES_PER_UID_MAX);
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE_TABLE("polkit-limits", "limits", NULL, NULL,
                                           { test_may_ask, sizeof(cases) / sizeof(cases[0]) }, { test_sizes }));
}
