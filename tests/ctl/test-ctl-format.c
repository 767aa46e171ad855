/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgbypassctl's output for people (aligned fields, tables) and for
 * programs (JSON through json-c, slashes unescaped).
 */
#include <check.h>

#include "../check-run.h"
#include "ctl-format.h"
#include "ctl-json.h"

/* runs @print into a string */
#define CAPTURE(out, print)                                             \
        do {                                                            \
                size_t _size = 0;                                       \
                FILE *_f = open_memstream(&(out), &_size);              \
                ck_assert_ptr_nonnull(_f);                              \
                ck_assert_int_eq(print(_f), 0);                         \
                ck_assert_int_eq(fclose(_f), 0);                        \
        } while (0)

START_TEST(test_fields_right_aligned) {
        _cleanup_free_ char *out = NULL;
        Fields f = {};

        fields_add(&f, "Cgroup", strdup("/A/B/G"));
        fields_add(&f, "Subtree control", strdup("(none)"));
        fields_add(&f, "Type", strdup("domain"));
#define PRINT(file) fields_print(&f, file)
        CAPTURE(out, PRINT);
#undef PRINT
        ck_assert_str_eq(out,
                         "         Cgroup: /A/B/G\n"
                         "Subtree control: (none)\n"
                         "           Type: domain\n");
        fields_done(&f);
}
END_TEST

START_TEST(test_fields_oom_is_reported) {
        Fields f = {};

        fields_add(&f, "Cgroup", strdup("/"));
        fields_add(&f, "Type", NULL);
        ck_assert_int_eq(fields_print(&f, stdout), -ENOMEM);
        fields_done(&f);
}
END_TEST

START_TEST(test_table_columns) {
        static const char *const header[] = { "CGROUP", "OWNER", "CONTROLLERS" };
        _cleanup_free_ char *out = NULL;
        Table t;

        table_init(&t, 3, header);
        table_add(&t, strdup("/work.slice/alice"));
        table_add(&t, strdup("alice (1000)"));
        table_add(&t, strdup("cpu io"));
        table_add(&t, strdup("/b"));
        table_add(&t, strdup("0"));
        table_add(&t, strdup("(none)"));
#define PRINT(file) table_print(&t, file)
        CAPTURE(out, PRINT);
#undef PRINT
        ck_assert_str_eq(out,
                         "CGROUP             OWNER         CONTROLLERS\n"
                         "/work.slice/alice  alice (1000)  cpu io\n"
                         "/b                 0             (none)\n");
        table_done(&t);
}
END_TEST

START_TEST(test_format_strv) {
        char *a[] = { (char *) "cpu", (char *) "#io", NULL }, *none[] = { NULL };
        _cleanup_free_ char *s = format_strv(a, " ", "(none)"), *e = format_strv(none, " ", "(none)");

        ck_assert_str_eq(s, "cpu #io");
        ck_assert_str_eq(e, "(none)");
}
END_TEST

START_TEST(test_format_uid) {
        _cleanup_free_ char *root = format_uid(0), *unknown = format_uid(4000000000u);

        ck_assert_str_eq(root, "root (0)");
        ck_assert_str_eq(unknown, "4000000000");
}
END_TEST

START_TEST(test_json_print_plain_and_pretty) {
        _cleanup_json_ json_object *o = json_object_new_object();
        _cleanup_free_ char *plain = NULL, *pretty = NULL;
        char *strv[] = { (char *) "/A/B", NULL };

        ck_assert_ptr_nonnull(o);
        ck_assert_int_eq(json_add(o, "cgroup", json_object_new_string("/A")), 0);
        ck_assert_int_eq(json_add(o, "members", json_new_strv(strv)), 0);
        ck_assert_int_eq(json_add_copy(o, "delegated_to", NULL), 0);
#define PRINT(file) json_print(o, false, file)
        CAPTURE(plain, PRINT);
#undef PRINT
#define PRINT(file) json_print(o, true, file)
        CAPTURE(pretty, PRINT);
#undef PRINT
        ck_assert_str_eq(plain, "{\"cgroup\":\"/A\",\"members\":[\"/A/B\"],\"delegated_to\":null}\n");
        ck_assert_str_eq(pretty,
                         "{\n"
                         "  \"cgroup\": \"/A\",\n"
                         "  \"members\": [\n"
                         "    \"/A/B\"\n"
                         "  ],\n"
                         "  \"delegated_to\": null\n"
                         "}\n");
}
END_TEST

/* a failed allocation (NULL) is reported, and the object stays usable */
START_TEST(test_json_add_null_is_oom) {
        _cleanup_json_ json_object *o = json_object_new_object(), *a = json_object_new_array();

        ck_assert_int_eq(json_add(o, "x", NULL), -ENOMEM);
        ck_assert_int_eq(json_append(a, NULL), -ENOMEM);
        ck_assert_int_eq(json_object_object_length(o), 0);
        ck_assert_uint_eq(json_object_array_length(a), 0);
}
END_TEST

static Suite *format_suite(void) {
        return CHECK_SUITE("ctl-format", "format", NULL, NULL, test_fields_right_aligned,
                           test_fields_oom_is_reported, test_table_columns, test_format_strv, test_format_uid,
                           test_json_print_plain_and_pretty, test_json_add_null_is_oom);
}

int main(void) {
        return check_run(format_suite());
}
