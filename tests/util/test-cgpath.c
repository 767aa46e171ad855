/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one rule for cgroup paths, and the conversions between the spellings. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../check-run.h"
#include "cgbypass/cgpath.h"
#include "cgbypass/macro.h"

#define ABS 0
#define REL CGPATH_RELATIVE
#define LIM CGPATH_LIMITS
#define MAN CGPATH_MANAGED

static const struct {
        const char *path;
        CgpathFlags flags;
        const char *why;        /* NULL: valid */
} cases[] = {
        { "/",                  ABS,       NULL },
        { "/a",                 ABS,       NULL },
        { "/a/b.c/..d/d..",     ABS,       NULL },
        { "/a b",               ABS | LIM, NULL },
        { "/a\x01",             ABS,       NULL },      /* the kernel allows it */
        { "",                   ABS,       "is empty" },
        { "",                   REL,       "is empty" },
        { "a",                  ABS,       "is not absolute (it must start with '/')" },
        { ".",                  ABS,       "is not absolute (it must start with '/')" },
        { "//",                 ABS,       "contains '//'" },
        { "/a//",               ABS,       "contains '//'" },
        { "/a/",                ABS,       "ends with '/'" },
        { "/a/../b",            ABS,       "contains a '..' component" },
        { "/..",                ABS,       "contains a '..' component" },
        { "/a/.",               ABS,       "contains a '.' component" },
        { "/./a/..",            ABS,       "contains a '..' component" },   /* ".." is named before "." */
        { "/a/./b//",           ABS,       "contains '//'" },               /* and "//" before both */
        { "/a\nb",              ABS | LIM, "contains a newline" },
        { "/a\x01",             ABS | LIM, "contains a control character" },
        { "/a\x7f",             ABS | LIM, "contains a control character" },
        { "/a\tb",              ABS | MAN, "contains a control character" },
        { "/a b",               ABS | MAN, "contains white space; cgbypassd does not manage such cgroups" },
        { "/a/../b c",          ABS | MAN, "contains a '..' component" },
        { ".",                  REL,       NULL },
        { "a/b",                REL,       NULL },
        { "a b/\x01",           REL,       NULL },
        { "/a",                 REL,       "is not relative (it must not start with '/')" },
        { "/",                  REL,       "is not relative (it must not start with '/')" },
        { "a//b",               REL,       "contains '//'" },
        { "a/",                 REL,       "ends with '/'" },
        { "..",                 REL,       "contains a '..' component" },
        { "./a",                REL,       "contains a '.' component" },
        { "a/.",                REL,       "contains a '.' component" },
};

START_TEST(test_verify) {
        const char *why = "(unset)";
        int r = cgpath_verify(cases[_i].path, cases[_i].flags, &why);

        if (!cases[_i].why) {
                ck_assert_msg(r == 0, "'%s': %s", cases[_i].path, why);
                ck_assert_str_eq(why, "(unset)");
        } else {
                ck_assert_int_eq(r, -EINVAL);
                ck_assert_str_eq(why, cases[_i].why);
        }
}
END_TEST

START_TEST(test_limits) {
        char p[CGPATH_MAX + 2];
        const char *why = NULL;

        memset(p, 'a', sizeof(p));
        p[0] = '/';
        p[CGPATH_NAME_MAX + 1] = '\0';
        ck_assert_int_eq(cgpath_verify(p, CGPATH_LIMITS, &why), 0);
        p[CGPATH_NAME_MAX + 1] = 'a';
        p[CGPATH_NAME_MAX + 2] = '\0';
        ck_assert_int_eq(cgpath_verify(p, CGPATH_LIMITS, &why), -EINVAL);
        ck_assert_str_eq(why, "has a component longer than 255 bytes");
        ck_assert_int_eq(cgpath_verify(p, 0, NULL), 0);

        /* "/a/a/.../aa" */
        memset(p, 'a', sizeof(p));
        for (size_t i = 0; i < CGPATH_MAX - 1; i += 2)
                p[i] = '/';
        p[CGPATH_MAX] = '\0';
        ck_assert_int_eq(cgpath_verify(p, CGPATH_MANAGED, NULL), 0);
        p[CGPATH_MAX] = 'a';
        p[CGPATH_MAX + 1] = '\0';
        ck_assert_int_eq(cgpath_verify(p, CGPATH_MANAGED, &why), -EINVAL);
        ck_assert_str_eq(why, "is longer than 4095 bytes");
}
END_TEST

START_TEST(test_name) {
        ck_assert(cgpath_name_is_valid("a", 1));
        ck_assert(cgpath_name_is_valid("...", 3));
        ck_assert(cgpath_name_is_valid("a/b", 1));      /* only the first n bytes count */
        ck_assert(!cgpath_name_is_valid("", 0));
        ck_assert(!cgpath_name_is_valid(".", 1));
        ck_assert(!cgpath_name_is_valid("..", 2));
        ck_assert(!cgpath_name_is_valid("a/b", 3));
}
END_TEST

static const struct {
        const char *path, *relative, *absolute, *parent;
        unsigned depth;
} spellings[] = {
        { "/",          ".",    "/",    NULL,   0 },
        { ".",          ".",    "/",    NULL,   0 },
        { "",           ".",    "/",    NULL,   0 },
        { "/a",         "a",    "/a",   "/",    1 },
        { "a",          "a",    "/a",   ".",    1 },
        { "/a/b/c",     "a/b/c", "/a/b/c", "/a/b", 3 },
        { "a/b",        "a/b",  "/a/b", "a",    2 },
};

START_TEST(test_spellings) {
        _cleanup_free_ char *abs = NULL, *parent = NULL;

        ck_assert_str_eq(cgpath_relative(spellings[_i].path), spellings[_i].relative);
        ck_assert_int_eq(cgpath_absolute(spellings[_i].path, &abs), 0);
        ck_assert_str_eq(abs, spellings[_i].absolute);
        ck_assert_uint_eq(cgpath_depth(spellings[_i].path), spellings[_i].depth);
        ck_assert_int_eq(cgpath_is_root(spellings[_i].path), spellings[_i].depth == 0);
        if (spellings[_i].parent) {
                ck_assert_int_eq(cgpath_parent(spellings[_i].path, &parent), 0);
                ck_assert_str_eq(parent, spellings[_i].parent);
                /* the span is the same parent, without the copy */
                const char *span;
                size_t n = cgpath_parent_span(spellings[_i].path, strlen(spellings[_i].path), &span);
                ck_assert_uint_eq(n, strlen(parent));
                ck_assert_int_eq(strncmp(span, parent, n), 0);
        } else
                ck_assert_int_eq(cgpath_parent(spellings[_i].path, &parent), -EINVAL);
}
END_TEST

/* a prefix of a longer path: its parent is found within it */
START_TEST(test_parent_span) {
        const char *p = "a/bc/d/e", *span;

        ck_assert_uint_eq(cgpath_parent_span(p, 6, &span), 4);  /* "a/bc/d" has "a/bc" */
        ck_assert_ptr_eq(span, p);
        ck_assert_uint_eq(cgpath_parent_span(p, 1, &span), 1);  /* "a" has "." */
        ck_assert_str_eq(span, ".");
}
END_TEST

START_TEST(test_join) {
        static const char *const j[][3] = {
                { "/",    "b", "/b" },
                { "/a",   "b", "/a/b" },
                { ".",    "b", "b" },
                { "a",    "b", "a/b" },
                { "/a/bc", "def", "/a/bc/def" },
                { "/",    "", "/" },
        };

        for (size_t i = 0; i < ELEMENTSOF(j); i++) {
                _cleanup_free_ char *s = NULL;
                ck_assert_int_eq(cgpath_join(j[i][0], j[i][1], &s), 0);
                ck_assert_str_eq(s, j[i][2]);
        }
}
END_TEST

START_TEST(test_below) {
        ck_assert(cgpath_is_at_or_below("/a/b", "/a"));
        ck_assert(cgpath_is_at_or_below("/a", "/a"));
        ck_assert(cgpath_is_at_or_below("/a", "/"));
        ck_assert(cgpath_is_at_or_below("/", "/"));
        ck_assert(!cgpath_is_at_or_below("/ab", "/a"));
        ck_assert(!cgpath_is_at_or_below("/", "/a"));
        ck_assert(cgpath_is_at_or_below("a/b", "a"));
        ck_assert(cgpath_is_at_or_below("a", "."));
        ck_assert(!cgpath_is_at_or_below("/a", "."));
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE_TABLE("cgpath", "cgpath", NULL, NULL, { test_verify, ELEMENTSOF(cases) },
                                           { test_limits }, { test_name }, { test_spellings, ELEMENTSOF(spellings) },
                                           { test_parent_span }, { test_join }, { test_below }));
}
