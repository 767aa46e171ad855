/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reason table against libcgbypass's public error map (the one map the
 * daemon and its clients share) and the ERRORS section of org.cgbypass1(5):
 * every reason has its words and a name of the map, every name of the map
 * has a reason with its errno, and the page lists exactly the map's names,
 * each with its errno. The messages' templates name only what
 * bus_error_set_model() fills in.
 *
 * Usage: test-reason-table MAN_PAGE
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check-run.h"
#include "cgbypass/bus-errors.h"
#include "cgbypass/cgbypass.h"
#include "cgbypass/macro.h"
#include "cgbypass/reason.h"

#define MAX_DOCUMENTED 64

static const char *man_page;
static struct {
        char name[128];
        char error[32];
} documented[MAX_DOCUMENTED];
static size_t n_documented;

static size_t map_size(void) {
        size_t n = 0;

        while (cgbypass_error_map[n].name)
                n++;
        return n;
}

/* The entries of the ERRORS section: '.BR org.cgbypass1.Error.Name " (ERRNO)"'. */
static void load_man_page(void) {
        _cleanup_fclose_ FILE *f = fopen(man_page, "re");
        char line[512];
        bool in_errors = false;

        ck_assert_msg(f, "cannot open %s: %s", man_page, strerror(errno));
        n_documented = 0;
        while (fgets(line, sizeof(line), f)) {
                if (startswith(line, ".SH ")) {
                        in_errors = streq(line, ".SH ERRORS\n");
                        continue;
                }
                if (!in_errors || !startswith(line, ".BR " BUS_ERROR_PREFIX))
                        continue;
                ck_assert_uint_lt(n_documented, MAX_DOCUMENTED);
                ck_assert_msg(sscanf(line, ".BR %127s \" (%31[A-Z0-9])\"", documented[n_documented].name,
                                     documented[n_documented].error) == 2,
                              "%s: ERRORS: cannot read '%s'", man_page, line);
                n_documented++;
        }
}

START_TEST(test_every_reason_has_words_and_a_name) {
        Reason r = (Reason) _i;
        const char *name = reason_bus_error(r);
        bool mapped = false;

        ck_assert_ptr_nonnull(reason_to_string(r));
        ck_assert_ptr_nonnull(reason_text(r));
        ck_assert_int_gt(reason_errno(r), 0);
        ck_assert_ptr_nonnull(name);
        for (const sd_bus_error_map *m = cgbypass_error_map; m->name; m++)
                mapped = mapped || streq(m->name, name);
        ck_assert_msg(mapped, "%s: %s is not in cgbypass_error_map", reason_to_string(r), name);
        for (Reason q = 0; q < r; q++)
                ck_assert_str_ne(reason_to_string(q), reason_to_string(r));
}
END_TEST

/* a misspelt placeholder would reach the client as it is */
START_TEST(test_messages_use_known_placeholders) {
        static const char *const keys[] = { "{cgroup}", "{parent}", "{controller}", "{file}" };

        for (int controllers = 0; controllers <= 1; controllers++) {
                const char *t = reason_bus_message((Reason) _i, controllers);

                for (const char *p = t ? strchr(t, '{') : NULL; p; p = strchr(p + 1, '{')) {
                        bool known = false;

                        for (size_t k = 0; k < ELEMENTSOF(keys); k++)
                                known = known || startswith(p, keys[k]);
                        ck_assert_msg(known, "%s: unknown placeholder in '%s'", reason_to_string((Reason) _i), t);
                }
                ck_assert_msg(!t || !strchr(t, '%'), "%s: '%%' in '%s'", reason_to_string((Reason) _i), t);
        }
}
END_TEST

START_TEST(test_reason_none_is_decided_by_the_errno) {
        ck_assert_str_eq(reason_to_string(REASON_NONE), "none");
        ck_assert_ptr_null(reason_text(REASON_NONE));
        ck_assert_ptr_null(reason_bus_error(REASON_NONE));
        ck_assert_ptr_null(reason_bus_message(REASON_NONE, false));
        ck_assert_int_eq(reason_errno(REASON_NONE), 0);
        ck_assert_ptr_null(reason_to_string(_REASON_MAX));
        ck_assert_ptr_null(reason_bus_error(_REASON_INVALID));
}
END_TEST

START_TEST(test_every_name_has_a_reason_with_its_errno) {
        const sd_bus_error_map *m = &cgbypass_error_map[_i];
        bool found = false;

        for (Reason r = 1; r < _REASON_MAX; r++)
                found = found || (streq_ptr(reason_bus_error(r), m->name) && reason_errno(r) == m->code);
        ck_assert_msg(found, "no reason names %s with errno %d", m->name, m->code);
}
END_TEST

START_TEST(test_man_page_lists_the_map) {
        const sd_bus_error_map *m = &cgbypass_error_map[_i];
        size_t hits = 0;

        load_man_page();
        for (size_t j = 0; j < n_documented; j++) {
                if (!streq(documented[j].name, m->name))
                        continue;
                hits++;
                ck_assert_msg(streq(documented[j].error, strerrorname_np(m->code)),
                              "%s: %s is documented as %s, but maps to %s", man_page, m->name,
                              documented[j].error, strerrorname_np(m->code));
        }
        ck_assert_msg(hits == 1, "%s: ERRORS lists %s %zu times", man_page, m->name, hits);
}
END_TEST

START_TEST(test_man_page_lists_nothing_else) {
        load_man_page();
        ck_assert_uint_eq(n_documented, map_size());
}
END_TEST

static Suite *reason_table_suite(void) {
        Suite *s = suite_create("reason-table");

        CHECK_TCASE(s, "table", NULL, NULL, { test_every_reason_has_words_and_a_name, _REASON_MAX, 1 },
                    { test_messages_use_known_placeholders, _REASON_MAX }, { test_reason_none_is_decided_by_the_errno },
                    { test_every_name_has_a_reason_with_its_errno, (int) map_size() },
                    { test_man_page_lists_the_map, (int) map_size() }, { test_man_page_lists_nothing_else });
        return s;
}

int main(int argc, char *argv[]) {
        if (argc != 2) {
                fprintf(stderr, "Usage: %s MAN_PAGE\n", argv[0]);
                return EXIT_FAILURE;
        }
        man_page = argv[1];
        return check_run(reason_table_suite());
}
