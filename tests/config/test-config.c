/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration loader: every problem it reports, with its exact file,
 * line and message; the values and locations of a good configuration with
 * drop-ins; the line-level format (CRLF, BOM, NUL, comments, line and
 * section-name limits of Debian's libinih 55).
 *
 * Expected messages write "@" for the directory of the files under test
 * (tests/data/config, or a scratch directory for files that need exact bytes).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check-run.h"
#include "cgbypass/config.h"
#include "cgbypass/macro.h"
#include "cgbypass/strbuf.h"

#ifndef CONFIG_TEST_DATA
#error "CONFIG_TEST_DATA must name tests/data/config"
#endif
#define DATA CONFIG_TEST_DATA

#define M(c) CGMASK(CONTROLLER_##c)

/* every "@" in @s replaced by @dir */
static char *expand(const char *s, const char *dir) {
        StrBuf b = STRBUF_INIT;
        char *r = NULL;

        for (; *s; s++)
                if (*s == '@')
                        strbuf_append(&b, dir);
                else
                        strbuf_putc(&b, *s);
        ck_assert_int_eq(strbuf_steal(&b, &r), 0);
        return r;
}

/* NULL when @e holds exactly @expected (NULL-terminated, "@" = @dir); else a report */
static char *errors_diff(const ConfigErrors *e, const char *dir, const char *const *expected) {
        StrBuf b = STRBUF_INIT;
        size_t n = 0;
        bool same = true;
        char *r = NULL;

        while (expected[n])
                n++;
        if (n != config_errors_count(e))
                same = false;
        for (size_t i = 0; same && i < n; i++) {
                _cleanup_free_ char *x = expand(expected[i], dir);
                if (!streq(x, config_errors_get(e, i)))
                        same = false;
        }
        if (same)
                return NULL;

        strbuf_printf(&b, "expected %zu errors:\n", n);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *x = expand(expected[i], dir);
                strbuf_printf(&b, "  %s\n", x);
        }
        strbuf_printf(&b, "got %zu:\n", config_errors_count(e));
        for (size_t i = 0; i < config_errors_count(e); i++)
                strbuf_printf(&b, "  %s\n", config_errors_get(e, i));
        ck_assert_int_eq(strbuf_steal(&b, &r), 0);
        return r;
}

/* @main and @dir relative to @base (NULL: none) */
static int load_in(const char *base, const char *main_file, const char *dir, Config **ret,
                   ConfigErrors *e) {
        _cleanup_free_ char *m = NULL, *d = NULL;

        if (main_file)
                ck_assert_int_ge(asprintf(&m, "%s/%s", base, main_file), 0);
        if (dir)
                ck_assert_int_ge(asprintf(&d, "%s/%s", base, dir), 0);
        return config_load(m, d, ret, e);
}

/* Loading fails with exactly these errors; a macro so that Check names the test's line. */
#define EXPECT_ERRORS_IN(base, main_file, dir, ...)                                     \
        do {                                                                            \
                static const char *const expected_[] = { __VA_ARGS__, NULL };           \
                ConfigErrors e_ = CONFIG_ERRORS_INIT;                                   \
                Config *c_ = NULL;                                                      \
                int r_ = load_in(base, main_file, dir, &c_, &e_);                       \
                _cleanup_free_ char *diff_ = errors_diff(&e_, base, expected_);         \
                ck_assert_msg(!diff_, "%s", diff_);                                     \
                ck_assert_int_eq(r_, -EINVAL);                                          \
                ck_assert_ptr_null(c_);                                                 \
                config_errors_done(&e_);                                                \
        } while (0)

#define EXPECT_ERRORS(main_file, ...) EXPECT_ERRORS_IN(DATA, main_file, NULL, __VA_ARGS__)

static Config *load_ok_in(const char *base, const char *main_file, const char *dir) {
        static const char *const none[] = { NULL };
        ConfigErrors e = CONFIG_ERRORS_INIT;
        Config *c = NULL;
        int r = load_in(base, main_file, dir, &c, &e);
        _cleanup_free_ char *diff = errors_diff(&e, base, none);

        ck_assert_msg(!diff, "%s", diff);
        ck_assert_int_eq(r, 0);
        ck_assert_ptr_nonnull(c);
        config_errors_done(&e);
        return c;
}

#define ck_assert_loc(l, f, n)                                                          \
        do {                                                                            \
                ck_assert_str_eq((l).file, (f));                                        \
                ck_assert_uint_eq((l).line, (n));                                       \
        } while (0)

#define ck_assert_loc_unset(l)                                                          \
        do {                                                                            \
                ck_assert_ptr_null((l).file);                                           \
                ck_assert_uint_eq((l).line, 0);                                         \
        } while (0)

/* ---- a scratch directory for files that need exact bytes ---- */

static char scratch[] = "/tmp/test-config-XXXXXX";

static void scratch_setup(void) {
        ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void scratch_teardown(void) {
        _cleanup_free_ char *cmd = NULL;

        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", scratch), 0);
        ck_assert_int_eq(system(cmd), 0);
        strcpy(scratch, "/tmp/test-config-XXXXXX");
}

static void write_file(const char *name, const char *data, size_t len) {
        _cleanup_free_ char *path = NULL;
        _cleanup_fclose_ FILE *f = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/%s", scratch, name), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
}

#define WRITE(name, literal) write_file(name, literal, sizeof(literal) - 1)

static void make_dir(const char *name) {
        _cleanup_free_ char *path = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/%s", scratch, name), 0);
        ck_assert_int_eq(mkdir(path, 0755), 0);
}

/* ---- good configurations ---- */

START_TEST(test_good_with_drop_ins) {
        _cleanup_(config_freep) Config *c = load_ok_in(DATA, "good/cgbypassd.conf", "good/conf.d");
        const char *main_file = DATA "/good/cgbypassd.conf";
        const char *srv = DATA "/good/conf.d/10-srv.conf";
        const char *last = DATA "/good/conf.d/9-last.conf";

        /* read: main, then strcmp() order; README, .conf.disabled and dotfiles skipped */
        ck_assert_uint_eq(c->n_files, 4);
        ck_assert_str_eq(c->files[0], main_file);
        ck_assert_str_eq(c->files[1], srv);
        ck_assert_str_eq(c->files[2], DATA "/good/conf.d/20-backend.conf");
        ck_assert_str_eq(c->files[3], last);

        /* [daemon]: a later file wins, and the location says which */
        ck_assert_str_eq(c->daemon.cgroup_root, "/sys/fs/cgroup");
        ck_assert_loc(c->daemon.cgroup_root_loc, main_file, 5);
        ck_assert_int_eq(c->daemon.backend, BACKEND_SIM);
        ck_assert_loc(c->daemon.backend_loc, last, 3);
        ck_assert_str_eq(c->daemon.state_directory, "/run/cgbypassd;x");
        ck_assert_loc(c->daemon.state_directory_loc, last, 4);

        ck_assert_uint_eq(c->n_cgroups, 3);
        const CgroupSpec *root = &c->cgroups[0], *work = &c->cgroups[1], *s = &c->cgroups[2];

        ck_assert_str_eq(root->path, "/");
        ck_assert(!root->create);                       /* the root's default */
        ck_assert_loc_unset(root->create_loc);
        ck_assert_uint_eq(root->subtree_control.enable, M(CPU) | M(MEMORY) | M(IO));
        ck_assert_uint_eq(root->subtree_control.disable | root->subtree_control.bypass, 0);
        ck_assert_loc(root->section_loc, main_file, 9);
        ck_assert_loc(root->path_loc, main_file, 10);
        ck_assert_loc(root->subtree_control_loc, main_file, 11);
        ck_assert_loc_unset(root->controllers_loc);

        ck_assert_str_eq(work->path, "/work.slice");   /* indented keys */
        ck_assert(work->create);
        ck_assert_uint_eq(work->subtree_control.enable, M(CPU));
        ck_assert_uint_eq(work->subtree_control.disable, M(MEMORY));
        ck_assert_uint_eq(work->subtree_control.bypass, M(IO));
        ck_assert_uint_eq(work->controllers.enable | work->controllers.bypass, 0);
        ck_assert_loc(work->section_loc, main_file, 13);
        ck_assert_loc(work->create_loc, main_file, 15);
        ck_assert_loc(work->controllers_loc, main_file, 17);  /* empty, but set */

        ck_assert_str_eq(s->path, "/srv");             /* "path: /srv" */
        ck_assert(!s->create);                          /* "off" */
        ck_assert_uint_eq(s->subtree_control.bypass, M(CPU));
        ck_assert_uint_eq(s->subtree_control.enable, M(PIDS));
        ck_assert_uint_eq(s->controllers.enable, M(IO));
        ck_assert_uint_eq(s->controllers.bypass, M(MEMORY));
        ck_assert_uint_eq(s->controllers.disable, 0);
        ck_assert_loc(s->section_loc, srv, 2);
        ck_assert_loc(s->controllers_loc, srv, 6);

        ck_assert_uint_eq(c->n_delegates, 2);
        const DelegateSpec *alice = &c->delegates[0], *bob = &c->delegates[1];
        ck_assert_str_eq(alice->path, "/work.slice/alice");
        ck_assert_uint_eq(alice->uid, 0);
        ck_assert_str_eq(alice->user, "root");
        ck_assert_uint_eq(alice->controllers, M(CPU) | M(IO));
        ck_assert(alice->create);                       /* default */
        ck_assert_loc(alice->section_loc, main_file, 19);
        ck_assert_loc(alice->user_loc, main_file, 21);

        ck_assert_str_eq(bob->path, "/srv/bob");
        ck_assert_uint_eq(bob->uid, 4000000);           /* a uid needs no passwd entry */
        ck_assert_ptr_null(bob->user);
        ck_assert_uint_eq(bob->controllers, M(MEMORY) | M(PIDS));  /* "memory,pids" */
        ck_assert(!bob->create);
        ck_assert_loc(bob->create_loc, srv, 12);

        /* lookups */
        ck_assert_ptr_eq(config_find_cgroup(c, "/srv"), s);
        ck_assert_ptr_null(config_find_cgroup(c, "/srv/bob"));
        ck_assert_ptr_eq(config_find_delegation(c, "/work.slice/alice"), alice);
        ck_assert_ptr_eq(config_find_delegation(c, "/work.slice/alice/x/y"), alice);
        ck_assert_ptr_null(config_find_delegation(c, "/work.slice/alicex"));
        ck_assert_ptr_null(config_find_delegation(c, "/work.slice"));
        ck_assert_ptr_eq(config_find_delegation(c, "/srv/bob"), bob);
}
END_TEST

START_TEST(test_defaults_without_main_file) {
        ConfigErrors e = CONFIG_ERRORS_INIT;
        Config *c = NULL;

        /* a main file that does not exist, and no drop-in directory */
        ck_assert_int_eq(config_load(DATA "/no-such.conf", DATA "/no-such.d", &c, &e), 0);
        ck_assert_uint_eq(config_errors_count(&e), 0);
        ck_assert_str_eq(c->daemon.cgroup_root, "/sys/fs/cgroup");
        ck_assert_int_eq(c->daemon.backend, BACKEND_AUTO);
        ck_assert_str_eq(c->daemon.state_directory, "/var/lib/cgbypassd");
        ck_assert_loc_unset(c->daemon.cgroup_root_loc);
        ck_assert_loc_unset(c->daemon.backend_loc);
        ck_assert_loc_unset(c->daemon.state_directory_loc);
        ck_assert_uint_eq(c->n_cgroups, 0);
        ck_assert_uint_eq(c->n_delegates, 0);
        ck_assert_uint_eq(c->n_files, 0);
        c = config_free(c);

        ck_assert_int_eq(config_load(NULL, NULL, &c, &e), 0);
        ck_assert_int_eq(c->daemon.backend, BACKEND_AUTO);
        c = config_free(c);

        /* drop-ins without a main file */
        c = load_ok_in(DATA, "good/no-such.conf", "good/conf.d");
        ck_assert_uint_eq(c->n_files, 3);
        ck_assert_int_eq(c->daemon.backend, BACKEND_SIM);
        ck_assert_str_eq(c->daemon.cgroup_root, "/sys/fs/cgroup");
        ck_assert_uint_eq(c->n_cgroups, 1);
        c = config_free(c);

        ck_assert_int_eq(config_new(&c), 0);
        ck_assert_str_eq(c->daemon.cgroup_root, CONFIG_DEFAULT_CGROUP_ROOT);
        ck_assert_str_eq(c->daemon.state_directory, CONFIG_DEFAULT_STATE_DIRECTORY);
        config_free(c);
        config_errors_done(&e);
}
END_TEST

START_TEST(test_empty_values) {
        _cleanup_(config_freep) Config *c = load_ok_in(DATA, "empty-values.conf", NULL);

        ck_assert_uint_eq(c->n_cgroups, 1);
        ck_assert_uint_eq(c->cgroups[0].subtree_control.enable | c->cgroups[0].subtree_control.disable |
                          c->cgroups[0].subtree_control.bypass, 0);
        ck_assert_loc(c->cgroups[0].subtree_control_loc, DATA "/empty-values.conf", 3);
        ck_assert_loc(c->cgroups[0].controllers_loc, DATA "/empty-values.conf", 4);
        ck_assert_uint_eq(c->delegates[0].controllers, 0);
        ck_assert_loc(c->delegates[0].controllers_loc, DATA "/empty-values.conf", 9);
}
END_TEST

START_TEST(test_comments) {
        /* ';' after whitespace ends the value; "a;b" keeps it; '#' is no inline comment */
        EXPECT_ERRORS("comments.conf",
                      "@/comments.conf:4: subtree-control: '#' names no controller",
                      "@/comments.conf:4: subtree-control: 'not' has no prefix; start it with '+' "
                      "(enable), '-' (disable) or '#' (bypass)",
                      "@/comments.conf:4: subtree-control: 'a' has no prefix; start it with '+' "
                      "(enable), '-' (disable) or '#' (bypass)",
                      "@/comments.conf:4: subtree-control: 'comment' has no prefix; start it with '+' "
                      "(enable), '-' (disable) or '#' (bypass)");
}
END_TEST

START_TEST(test_inline_comment_keeps_semicolon_in_value) {
        WRITE("a.conf", "[cgroup]\npath = /a;b ; the comment\nsubtree-control = +cpu;\n");
        ConfigErrors e = CONFIG_ERRORS_INIT;
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *p = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/a.conf", scratch), 0);
        ck_assert_int_eq(config_load(p, NULL, &c, &e), -EINVAL);
        ck_assert_uint_eq(config_errors_count(&e), 1);
        /* "+cpu;" is one token: a ';' without whitespace before it is part of the value */
        _cleanup_free_ char *x = expand("@/a.conf:3: subtree-control: unknown controller 'cpu;'; "
                                        "cgroup2 controllers are cpuset cpu io memory perf_event "
                                        "hugetlb pids rdma misc debug", scratch);
        ck_assert_str_eq(config_errors_get(&e, 0), x);
        config_errors_done(&e);
}
END_TEST

/* ---- sections and keys ---- */

START_TEST(test_sections) {
        EXPECT_ERRORS("bad/sections.conf",
                      "@/bad/sections.conf:1: key 'backend' is outside any section; put it under "
                      "[daemon], [cgroup] or [delegate]",
                      "@/bad/sections.conf:3: unknown section [Daemon]; known sections are [daemon], "
                      "[cgroup] and [delegate]",
                      "@/bad/sections.conf:4: unknown section [cgroups]; known sections are [daemon], "
                      "[cgroup] and [delegate]",
                      "@/bad/sections.conf:6: unknown section [ cgroup ]; known sections are [daemon], "
                      "[cgroup] and [delegate]",
                      "@/bad/sections.conf:7: unknown section []; known sections are [daemon], "
                      "[cgroup] and [delegate]",
                      "@/bad/sections.conf:8: section header has no closing ']'",
                      "@/bad/sections.conf:10: unexpected text 'path = /x' after ']'; only a ';' "
                      "comment may follow a section header");
}
END_TEST

START_TEST(test_keys) {
        EXPECT_ERRORS("bad/keys.conf",
                      "@/bad/keys.conf:2: unknown key 'cgroup_root' in [daemon]; known keys are "
                      "cgroup-root, backend, state-directory, max-cgroups-per-delegation and max-delegated-cgroups",
                      "@/bad/keys.conf:3: unknown key 'Backend' in [daemon]; known keys are "
                      "cgroup-root, backend, state-directory, max-cgroups-per-delegation and max-delegated-cgroups",
                      "@/bad/keys.conf:4: unknown key 'path' in [daemon]; known keys are "
                      "cgroup-root, backend, state-directory, max-cgroups-per-delegation and max-delegated-cgroups",
                      "@/bad/keys.conf:7: unknown key 'user' in [cgroup]; known keys are "
                      "path, create, subtree-control and controllers, and the writable files of "
                      "controllers (memory.max, cpu.weight, ...)",
                      "@/bad/keys.conf:8: missing key name before '='",
                      "@/bad/keys.conf:12: unknown key 'subtree-control' in [delegate]; known keys are "
                      "path, user, controllers and create");
}
END_TEST

START_TEST(test_duplicate_keys) {
        EXPECT_ERRORS("bad/duplicates.conf",
                      "@/bad/duplicates.conf:3: duplicate key 'backend' in [daemon] (first set at "
                      "line 2); keep one",
                      "@/bad/duplicates.conf:7: duplicate key 'path' in [cgroup] (first set at "
                      "line 5); keep one",
                      "@/bad/duplicates.conf:8: duplicate key 'create' in [cgroup] (first set at "
                      "line 6); keep one",
                      "@/bad/duplicates.conf:12: duplicate key 'user' in [delegate] (first set at "
                      "line 11); keep one");
}
END_TEST

START_TEST(test_second_daemon_section) {
        EXPECT_ERRORS("bad/daemon-twice.conf",
                      "@/bad/daemon-twice.conf:4: second [daemon] section in this file (the first is "
                      "at line 1); merge them");
}
END_TEST

START_TEST(test_missing_keys) {
        EXPECT_ERRORS("bad/missing.conf",
                      "@/bad/missing.conf:1: [cgroup] section has no 'path' key; add "
                      "'path = /absolute/cgroup/path'",
                      "@/bad/missing.conf:4: [delegate] section has no 'path' key; add "
                      "'path = /absolute/cgroup/path'",
                      "@/bad/missing.conf:4: [delegate] section has no 'user' key; add 'user = NAME' "
                      "or 'user = UID'",
                      "@/bad/missing.conf:7: [delegate] section has no 'user' key; add 'user = NAME' "
                      "or 'user = UID'");
}
END_TEST

/* ---- values ---- */

START_TEST(test_values) {
        EXPECT_ERRORS("bad/values.conf",
                      "@/bad/values.conf:2: backend: unknown backend 'fast'; use auto, native, "
                      "emulated or sim",
                      "@/bad/values.conf:3: cgroup-root: 'sys/fs/cgroup' is not absolute (it must "
                      "start with '/')",
                      "@/bad/values.conf:4: state-directory: empty value; give an absolute path",
                      "@/bad/values.conf:8: create: 'maybe' is not a boolean; use yes or no",
                      "@/bad/values.conf:12: create: empty value; use yes or no");
}
END_TEST

START_TEST(test_paths) {
        EXPECT_ERRORS("bad/paths.conf",
                      "@/bad/paths.conf:2: path: 'a/b' is not absolute (it must start with '/')",
                      "@/bad/paths.conf:4: path: '/a/../b' contains a '..' component",
                      "@/bad/paths.conf:6: path: '/a/./b' contains a '.' component",
                      "@/bad/paths.conf:8: path: '/a//b' contains '//'",
                      "@/bad/paths.conf:10: path: '/a/b/' ends with '/'",
                      "@/bad/paths.conf:12: path: '/a/..' contains a '..' component",
                      "@/bad/paths.conf:14: path: '/.' contains a '.' component",
                      "@/bad/paths.conf:16: path: '/a\\tb' contains a control character",
                      "@/bad/paths.conf:18: path: empty value; give an absolute path",
                      "@/bad/paths.conf:22: path: '/a b' contains white space; cgbypassd does not manage "
                      "such cgroups");
}
END_TEST

START_TEST(test_root_cgroup) {
        EXPECT_ERRORS("bad/root.conf",
                      "@/bad/root.conf:3: create: the root cgroup always exists; remove 'create = yes'",
                      "@/bad/root.conf:6: / is also configured at @/bad/root.conf:2; use one [cgroup] "
                      "section per cgroup",
                      "@/bad/root.conf:10: path: the root cgroup cannot be delegated; delegate a "
                      "cgroup below it");
}
END_TEST

#define HOW_SUBTREE "start it with '+' (enable), '-' (disable) or '#' (bypass)"
#define KNOWN "cgroup2 controllers are cpuset cpu io memory perf_event hugetlb pids rdma misc debug"

START_TEST(test_controllers) {
        EXPECT_ERRORS("bad/controllers.conf",
                      "@/bad/controllers.conf:3: subtree-control: unknown controller 'bogus'; " KNOWN,
                      "@/bad/controllers.conf:3: subtree-control: cgroup2 has no cpuacct controller "
                      "(it exists only in cgroup v1)",
                      "@/bad/controllers.conf:3: subtree-control: cgroup2 has no devices controller "
                      "(it exists only in cgroup v1)",
                      "@/bad/controllers.conf:3: subtree-control: cgroup2 has no net_cls controller "
                      "(it exists only in cgroup v1)",
                      "@/bad/controllers.conf:6: subtree-control: 'cpu' has no prefix; " HOW_SUBTREE,
                      "@/bad/controllers.conf:6: subtree-control: '*io' has a bad prefix; " HOW_SUBTREE,
                      "@/bad/controllers.conf:6: subtree-control: '++memory' has a bad prefix; "
                      HOW_SUBTREE,
                      "@/bad/controllers.conf:6: subtree-control: '+' names no controller",
                      "@/bad/controllers.conf:6: subtree-control: '-' names no controller",
                      "@/bad/controllers.conf:9: subtree-control: controller cpu appears twice "
                      "('+cpu' and '#cpu'); keep one",
                      "@/bad/controllers.conf:9: subtree-control: controller memory appears twice "
                      "('-memory' and '+memory'); keep one",
                      "@/bad/controllers.conf:12: controllers: '-memory': cgroup.controllers takes "
                      "only '+' (re-enable) and '#' (bypass); to leave memory alone, omit it",
                      "@/bad/controllers.conf:12: controllers: unknown controller 'CPU'; " KNOWN,
                      "@/bad/controllers.conf:12: controllers: '-' has a bad prefix; start it with "
                      "'+' (re-enable) or '#' (bypass)",
                      "@/bad/controllers.conf:16: controllers: '+cpu' has a prefix; list controller "
                      "names only, such as 'cpu io'",
                      "@/bad/controllers.conf:16: controllers: cgroup2 has no freezer controller "
                      "(it exists only in cgroup v1)",
                      "@/bad/controllers.conf:16: controllers: controller io appears twice ('io' and "
                      "'io'); keep one",
                      "@/bad/controllers.conf:16: controllers: unknown controller 'bogus'; " KNOWN);
}
END_TEST

START_TEST(test_users) {
        EXPECT_ERRORS("bad/users.conf",
                      "@/bad/users.conf:3: user: user 'cgb:no-such-user' does not exist; give an "
                      "existing user name or a numeric uid",
                      "@/bad/users.conf:6: user: uid '4294967295' is out of range (0 to 4294967294)",
                      "@/bad/users.conf:9: user: uid '99999999999999999999999' is out of range "
                      "(0 to 4294967294)",
                      "@/bad/users.conf:12: user: empty value; give a user name or a numeric uid");
}
END_TEST

/* ---- the same cgroup twice, nested delegations ---- */

START_TEST(test_same_path_twice) {
        EXPECT_ERRORS("bad/same-path.conf",
                      "@/bad/same-path.conf:6: /a is also configured at @/bad/same-path.conf:2; use "
                      "one [cgroup] section per cgroup",
                      "@/bad/same-path.conf:8: /a is also configured at @/bad/same-path.conf:2; use "
                      "one [cgroup] section per cgroup",
                      "@/bad/same-path.conf:14: /a is also delegated at @/bad/same-path.conf:11; use "
                      "one [delegate] section per cgroup");
}
END_TEST

START_TEST(test_nested_delegations) {
        /* /a-b and /ab are not below /a; each nested one names its nearest enclosing delegation */
        EXPECT_ERRORS("bad/nested.conf",
                      "@/bad/nested.conf:2: /a/b/c is inside the delegation of /a/b at "
                      "@/bad/nested.conf:11; delegations cannot nest",
                      "@/bad/nested.conf:11: /a/b is inside the delegation of /a at "
                      "@/bad/nested.conf:8; delegations cannot nest",
                      "@/bad/nested.conf:17: /a/bc is inside the delegation of /a at "
                      "@/bad/nested.conf:8; delegations cannot nest");
}
END_TEST

START_TEST(test_errors_across_files) {
        /* every file read to its end; errors sorted by reading order and line */
        EXPECT_ERRORS_IN(DATA, "multi/cgbypassd.conf", "multi/conf.d",
                         "@/multi/cgbypassd.conf:2: backend: unknown backend 'turbo'; use auto, "
                         "native, emulated or sim",
                         "@/multi/conf.d/10-a.conf:2: /shared is also configured at "
                         "@/multi/cgbypassd.conf:5; use one [cgroup] section per cgroup",
                         "@/multi/conf.d/10-a.conf:3: create: 'perhaps' is not a boolean; use yes or no",
                         "@/multi/conf.d/20-b.conf:2: /home/alice is inside the delegation of /home at "
                         "@/multi/cgbypassd.conf:9; delegations cannot nest",
                         "@/multi/conf.d/20-b.conf:3: user: user 'cgb:nobody-here' does not exist; give "
                         "an existing user name or a numeric uid",
                         "@/multi/conf.d/20-b.conf:4: unknown section [mystery]; known sections are "
                         "[daemon], [cgroup] and [delegate]",
                         "@/multi/conf.d/30-c.conf:3: cgroup-root: '/srv/cgroup/' ends with '/'");
}
END_TEST

START_TEST(test_errors_accumulate) {
        /* a second load appends to the same list; the first errors stay first */
        ConfigErrors e = CONFIG_ERRORS_INIT;
        Config *c = NULL;

        ck_assert_int_eq(config_load(DATA "/bad/daemon-twice.conf", NULL, &c, &e), -EINVAL);
        ck_assert_int_eq(config_load(DATA "/bad/values.conf", NULL, &c, &e), -EINVAL);
        ck_assert_ptr_null(c);
        ck_assert_uint_eq(config_errors_count(&e), 6);
        ck_assert_str_eq(config_errors_get(&e, 0), DATA "/bad/daemon-twice.conf:4: second [daemon] "
                         "section in this file (the first is at line 1); merge them");
        ck_assert_str_eq(config_errors_get(&e, 1), DATA "/bad/values.conf:2: backend: unknown "
                         "backend 'fast'; use auto, native, emulated or sim");
        ck_assert_ptr_null(config_errors_get(&e, 6));

        ck_assert_int_eq(config_errors_add(&e, NULL, "no place %d", 1), 0);
        ConfigLocation loc = { "x.conf", 7 };
        ck_assert_int_eq(config_errors_add(&e, &loc, "policy says %s", "no"), 0);
        ck_assert_str_eq(config_errors_get(&e, 6), "no place 1");
        ck_assert_str_eq(config_errors_get(&e, 7), "x.conf:7: policy says no");

        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        ck_assert_ptr_nonnull(f);
        config_errors_print(&e, f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_ptr_nonnull(strstr(buf, "merge them\n" DATA "/bad/values.conf:2: "));
        ck_assert_ptr_nonnull(strstr(buf, "\nx.conf:7: policy says no\n"));

        config_errors_done(&e);
        ck_assert_uint_eq(config_errors_count(&e), 0);
}
END_TEST

/* ---- what inih cannot hold, and the line format ---- */

START_TEST(test_long_lines_and_section_names) {
        /* 197 bytes fit (lines 2 and 17); 198 do not, comments and indentation included */
        EXPECT_ERRORS("bad/long-lines.conf",
                      "@/bad/long-lines.conf:4: line is longer than 197 bytes, which inih cannot "
                      "hold; shorten it",
                      "@/bad/long-lines.conf:8: line is longer than 197 bytes, which inih cannot "
                      "hold; shorten it",
                      "@/bad/long-lines.conf:9: unknown section "
                      "[xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx]; known sections are "
                      "[daemon], [cgroup] and [delegate]",
                      "@/bad/long-lines.conf:11: section name "
                      "'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy' is longer than 49 bytes, "
                      "which inih cannot hold; use [daemon], [cgroup] or [delegate]",
                      "@/bad/long-lines.conf:13: line is longer than 197 bytes, which inih cannot "
                      "hold; shorten it",
                      "@/bad/long-lines.conf:15: line is longer than 197 bytes, which inih cannot "
                      "hold; shorten it");
}
END_TEST

START_TEST(test_long_line_value_is_not_cut) {
        /* the 197-byte line arrives whole: inih did not cut the value */
        _cleanup_free_ char *line = NULL;
        StrBuf b = STRBUF_INIT;
        strbuf_append(&b, "[cgroup]\npath = /");
        for (int i = 0; i < 197 - 8; i++)
                strbuf_putc(&b, 'p');
        strbuf_append(&b, "\r\n");     /* CRLF: 197 bytes plus "\r\n" still fit */
        ck_assert_int_eq(strbuf_steal(&b, &line), 0);
        write_file("a.conf", line, strlen(line));

        _cleanup_(config_freep) Config *c = load_ok_in(scratch, "a.conf", NULL);
        ck_assert_uint_eq(strlen(c->cgroups[0].path), 190);
}
END_TEST

START_TEST(test_syntax_errors) {
        EXPECT_ERRORS("bad/syntax.conf",
                      "@/bad/syntax.conf:3: expected 'key = value', '[section]' or a comment",
                      "@/bad/syntax.conf:5: indented line without '=': values cannot continue on the "
                      "next line; put the whole value on one line",
                      "@/bad/syntax.conf:6: expected 'key = value', '[section]' or a comment");
}
END_TEST

START_TEST(test_crlf) {
        WRITE("crlf.conf",
              "; written on Windows\r\n"
              "[daemon]\r\n"
              "backend = sim ; comment\r\n"
              "\r\n"
              "[cgroup] ; c\r\n"
              "path = /a\r\n"
              "subtree-control = +cpu #io\r\n"
              "[delegate]\r\n"
              "path = /a/u\r\n"
              "user = root\r\n");
        _cleanup_(config_freep) Config *c = load_ok_in(scratch, "crlf.conf", NULL);
        ck_assert_int_eq(c->daemon.backend, BACKEND_SIM);
        ck_assert_str_eq(c->cgroups[0].path, "/a");
        ck_assert_uint_eq(c->cgroups[0].subtree_control.enable, M(CPU));
        ck_assert_uint_eq(c->cgroups[0].subtree_control.bypass, M(IO));
        ck_assert_str_eq(c->delegates[0].user, "root");
        ck_assert_uint_eq(c->delegates[0].path_loc.line, 9);

        WRITE("bad.conf", "[cgroup]\r\npath = /a/\r\nnonsense\r\n");
        EXPECT_ERRORS_IN(scratch, "bad.conf", NULL,
                         "@/bad.conf:2: path: '/a/' ends with '/'",
                         "@/bad.conf:3: expected 'key = value', '[section]' or a comment");
}
END_TEST

static const CgroupSpec *find_cgroup_linear(const Config *c, const char *path) {
        for (size_t i = 0; i < c->n_cgroups; i++)
                if (streq(c->cgroups[i].path, path))
                        return &c->cgroups[i];
        return NULL;
}

static const DelegateSpec *find_delegation_linear(const Config *c, const char *path) {
        for (size_t i = 0; i < c->n_delegates; i++)
                if (cgpath_is_at_or_below(path, c->delegates[i].path))
                        return &c->delegates[i];
        return NULL;
}

/* the hashed lookups answer as a search of the arrays does, before and after run-time delegations */
static void check_lookups(const Config *c) {
        static const char *const extra[] = { "/", "/g", "/g1x", "/d3", "/d3/", "/d3x/y", "/d/3", "/g2/c1/x" };
        char path[64];

        for (unsigned g = 0; g < 12; g++)
                for (unsigned k = 0; k < 30; k++) {
                        snprintf(path, sizeof(path), "/g%u/c%u", g, k);
                        ck_assert_ptr_eq(config_find_cgroup(c, path), find_cgroup_linear(c, path));
                        snprintf(path, sizeof(path), "/d%u/c%u/x", k, g);
                        ck_assert_ptr_eq(config_find_delegation(c, path), find_delegation_linear(c, path));
                        snprintf(path, sizeof(path), "/d%u", k);
                        ck_assert_ptr_eq(config_find_delegation(c, path), find_delegation_linear(c, path));
                        ck_assert_ptr_eq(config_find_cgroup(c, path), find_cgroup_linear(c, path));
                }
        for (size_t i = 0; i < ELEMENTSOF(extra); i++) {
                ck_assert_ptr_eq(config_find_cgroup(c, extra[i]), find_cgroup_linear(c, extra[i]));
                if (!streq(extra[i], "/d3/"))
                        ck_assert_ptr_eq(config_find_delegation(c, extra[i]), find_delegation_linear(c, extra[i]));
        }
}

START_TEST(test_lookups_indexed) {
        StrBuf b = STRBUF_INIT;
        _cleanup_free_ char *text = NULL;
        Config *c;

        for (unsigned g = 0; g < 10; g++) {
                strbuf_printf(&b, "[cgroup]\npath = /g%u\n", g);
                for (unsigned k = 0; k < 25; k++)
                        strbuf_printf(&b, "[cgroup]\npath = /g%u/c%u\n", g, k);
        }
        for (unsigned k = 0; k < 20; k += 2)
                strbuf_printf(&b, "[delegate]\npath = /d%u\nuser = root\n", k);
        ck_assert_int_eq(strbuf_steal(&b, &text), 0);
        write_file("many.conf", text, strlen(text));
        c = load_ok_in(scratch, "many.conf", NULL);
        ck_assert_ptr_nonnull(config_find_cgroup(c, "/g9/c24"));
        ck_assert_ptr_null(config_find_cgroup(c, "/g10/c0"));
        check_lookups(c);

        ck_assert_int_eq(config_add_runtime_delegation(c, "run", 1, "/d3", 0, 0, true, false), 0);
        ck_assert_int_eq(config_add_runtime_delegation(c, "run", 2, "/d21/c1", 0, 0, true, false), 0);
        ck_assert_ptr_eq(config_find_delegation(c, "/d3/c1"), &c->delegates[c->n_delegates - 2]);
        check_lookups(c);
        config_remove_delegation(c, 0);
        config_remove_delegation(c, c->n_delegates - 2);
        ck_assert_ptr_null(config_find_delegation(c, "/d0/x"));
        ck_assert_ptr_null(config_find_delegation(c, "/d3/x"));
        check_lookups(c);
        config_free(c);
}
END_TEST

/* twins among many sections: found by the hash check, then reported as the sort finds them */
START_TEST(test_same_path_among_many) {
        StrBuf b = STRBUF_INIT;
        _cleanup_free_ char *text = NULL;

        for (unsigned k = 0; k < 300; k++)
                strbuf_printf(&b, "[cgroup]\npath = /g%u/c%u\n", k % 7, k);
        strbuf_printf(&b, "[cgroup]\npath = /g3/c3\n");      /* path at line 602: the twin of line 8 */
        strbuf_printf(&b, "[cgroup]\npath = /g0/c0\n");      /* path at line 604: the twin of line 2 */
        ck_assert_int_eq(strbuf_steal(&b, &text), 0);
        write_file("twins.conf", text, strlen(text));
        EXPECT_ERRORS_IN(scratch, "twins.conf", NULL,
                         "@/twins.conf:602: /g3/c3 is also configured at @/twins.conf:8; use one [cgroup] "
                         "section per cgroup",
                         "@/twins.conf:604: /g0/c0 is also configured at @/twins.conf:2; use one [cgroup] "
                         "section per cgroup");
}
END_TEST

START_TEST(test_bom_nul_and_last_line) {
        /* a BOM at the start is skipped; no newline at the end is fine */
        WRITE("bom.conf", "\xef\xbb\xbf[daemon]\nbackend = emulated");
        _cleanup_(config_freep) Config *c = load_ok_in(scratch, "bom.conf", NULL);
        ck_assert_int_eq(c->daemon.backend, BACKEND_EMULATED);

        /* a BOM elsewhere is text */
        WRITE("bom2.conf", "[daemon]\n\xef\xbb\xbf[cgroup]\n");
        EXPECT_ERRORS_IN(scratch, "bom2.conf", NULL,
                         "@/bom2.conf:2: expected 'key = value', '[section]' or a comment");

        /* a NUL byte: the line is rejected, and the section's missing path is not reported */
        WRITE("nul.conf", "[cgroup]\npath = /a\0b\n[daemon]\nbackend = x\n");
        EXPECT_ERRORS_IN(scratch, "nul.conf", NULL,
                         "@/nul.conf:2: line contains a NUL byte",
                         "@/nul.conf:4: backend: unknown backend 'x'; use auto, native, emulated or sim");
}
END_TEST

/* a file larger than the reader's buffer: lines across its edges, a NUL and a line longer than both */
START_TEST(test_large_file) {
        StrBuf b = STRBUF_INIT;
        _cleanup_free_ char *text = NULL;
        size_t len;

        for (unsigned k = 0; k < 5000; k++)
                if (k == 3000)
                        strbuf_append_n(&b, "[cgroup]\npath = /g3000\0z\n", 25);      /* the path at line 6002 */
                else
                        strbuf_printf(&b, "[cgroup]\npath = /g%u\n", k);
        for (unsigned i = 0; i < 100000; i++)                                         /* line 10001 */
                strbuf_putc(&b, 'x');
        strbuf_append(&b, "\n[daemon]\nbackend = x\r\n");                              /* line 10003 */
        len = b.len;
        ck_assert_int_eq(strbuf_steal(&b, &text), 0);
        ck_assert_uint_gt(len, 2 * 65536);
        write_file("large.conf", text, len);
        EXPECT_ERRORS_IN(scratch, "large.conf", NULL,
                         "@/large.conf:6002: line contains a NUL byte",
                         "@/large.conf:10001: line is longer than 197 bytes, which inih cannot hold; shorten it",
                         "@/large.conf:10003: backend: unknown backend 'x'; use auto, native, emulated or sim");

        /* the same without the errors: every section read */
        for (unsigned k = 0; k < 5000; k++)
                strbuf_printf(&b, "[cgroup]\npath = /g%u\n", k);
        free(text);
        len = b.len;
        ck_assert_int_eq(strbuf_steal(&b, &text), 0);
        write_file("large-ok.conf", text, len);
        _cleanup_(config_freep) Config *c = load_ok_in(scratch, "large-ok.conf", NULL);
        ck_assert_uint_eq(c->n_cgroups, 5000);
        ck_assert_str_eq(c->cgroups[4999].path, "/g4999");
        ck_assert_uint_eq(c->cgroups[4999].path_loc.line, 10000);
}
END_TEST

START_TEST(test_unreadable_files) {
        make_dir("main.conf");          /* the main file is a directory */
        make_dir("d");
        make_dir("d/20-dir.conf");
        WRITE("d/30-ok.conf", "[daemon]\nbackend = bogus\n");
        _cleanup_free_ char *link = NULL;
        ck_assert_int_ge(asprintf(&link, "%s/d/10-dangling.conf", scratch), 0);
        ck_assert_int_eq(symlink("/nonexistent/x.conf", link), 0);

        EXPECT_ERRORS_IN(scratch, "main.conf", "d",
                         "@/main.conf: is a directory, not a configuration file",
                         "@/d/10-dangling.conf: cannot open: No such file or directory",
                         "@/d/20-dir.conf: is a directory, not a configuration file",
                         "@/d/30-ok.conf:2: backend: unknown backend 'bogus'; use auto, native, "
                         "emulated or sim");

        /* a drop-in "directory" that is a file */
        WRITE("file", "");
        EXPECT_ERRORS_IN(scratch, NULL, "file",
                         "@/file: cannot read the directory: Not a directory");
}
END_TEST

/* ---- command-line overrides ---- */

START_TEST(test_override_daemon) {
        _cleanup_(config_freep) Config *c = load_ok_in(DATA, "good/cgbypassd.conf", NULL);
        ConfigErrors e = CONFIG_ERRORS_INIT;

        ck_assert_int_eq(config_override_daemon(c, "backend", "auto", "--backend", &e), 0);
        ck_assert_int_eq(c->daemon.backend, BACKEND_AUTO);
        ck_assert_int_eq(config_override_daemon(c, "backend", "emulated", "--backend", &e), 0);
        ck_assert_int_eq(c->daemon.backend, BACKEND_EMULATED);
        ck_assert_loc(c->daemon.backend_loc, "--backend", 0);
        ck_assert_int_eq(config_override_daemon(c, "cgroup-root", "/tmp/sim", "--cgroup-root", &e), 0);
        ck_assert_str_eq(c->daemon.cgroup_root, "/tmp/sim");
        ck_assert_int_eq(config_override_daemon(c, "state-directory", "/run/s", "--state-directory",
                                                &e), 0);
        ck_assert_str_eq(c->daemon.state_directory, "/run/s");
        ck_assert_loc(c->daemon.state_directory_loc, "--state-directory", 0);
        ck_assert_uint_eq(config_errors_count(&e), 0);

        /* bad values leave the setting alone */
        ck_assert_int_eq(config_override_daemon(c, "backend", "kernel", "--backend", &e), -EINVAL);
        ck_assert_int_eq(c->daemon.backend, BACKEND_EMULATED);
        ck_assert_int_eq(config_override_daemon(c, "cgroup-root", "rel", "--cgroup-root", &e), -EINVAL);
        ck_assert_int_eq(config_override_daemon(c, "user", "x", "--user", &e), -EINVAL);
        ck_assert_str_eq(c->daemon.cgroup_root, "/tmp/sim");

        /* too long for a path, or for one of its components (no config line can hold these) */
        char long_path[CONFIG_PATH_MAX + 2], long_name[CONFIG_NAME_MAX + 3];
        memset(long_path, 'a', sizeof(long_path) - 1);
        long_path[0] = '/';
        long_path[sizeof(long_path) - 1] = '\0';
        memset(long_name, 'b', sizeof(long_name) - 1);
        long_name[0] = '/';
        long_name[sizeof(long_name) - 1] = '\0';
        ck_assert_int_eq(config_override_daemon(c, "cgroup-root", long_path, "--cgroup-root", &e),
                         -EINVAL);
        ck_assert_int_eq(config_override_daemon(c, "state-directory", long_name, "--state-directory",
                                                &e), -EINVAL);
        ck_assert_int_eq(config_override_daemon(c, "state-directory", "/a\nb", "--state-directory",
                                                &e), -EINVAL);
        /* the daemon's own directories may have spaces; cgroup paths may not */
        ck_assert_int_eq(config_override_daemon(c, "state-directory", "/var/lib/my state", "--state-directory",
                                                &e), 0);

        ck_assert_uint_eq(config_errors_count(&e), 6);
        ck_assert_str_eq(config_errors_get(&e, 0),
                         "--backend: unknown backend 'kernel'; use auto, native, emulated or sim");
        ck_assert_str_eq(config_errors_get(&e, 1),
                         "--cgroup-root: 'rel' is not absolute (it must start with '/')");
        ck_assert_str_eq(config_errors_get(&e, 2), "--user: unknown [daemon] key 'user'");
        /* quoted values are cut at 100 bytes */
        _cleanup_free_ char *x3 = NULL, *x4 = NULL;
        ck_assert_int_ge(asprintf(&x3, "--cgroup-root: '%.100s...' is longer than 4095 bytes",
                                  long_path), 0);
        ck_assert_int_ge(asprintf(&x4, "--state-directory: '%.100s...' has a component longer than "
                                  "255 bytes", long_name), 0);
        ck_assert_str_eq(config_errors_get(&e, 3), x3);
        ck_assert_str_eq(config_errors_get(&e, 4), x4);
        ck_assert_str_eq(config_errors_get(&e, 5), "--state-directory: '/a\\nb' contains a newline");
        config_errors_done(&e);
}
END_TEST

/* ---- the value parsers on their own ---- */

typedef struct PathCase {
        const char *path;
        const char *why;        /* NULL: valid */
} PathCase;

static const PathCase path_cases[] = {
        { "/",                  NULL },
        { "/a",                 NULL },
        { "/a/b.c/d-e_f",       NULL },
        { "/a/...",             NULL },
        { "/.a/a./..b",         NULL },
        { "/a b/c;d#e",         NULL },
        { "/\xc3\xa9t\xc3\xa9", NULL },                /* UTF-8 is fine */
        { "",                   "is empty" },
        { "a",                  "is not absolute (it must start with '/')" },
        { "./a",                "is not absolute (it must start with '/')" },
        { "//",                 "contains '//'" },
        { "/a//",               "contains '//'" },
        { "/a/",                "ends with '/'" },
        { "/..",                "contains a '..' component" },
        { "/../a",              "contains a '..' component" },
        { "/a/../b",            "contains a '..' component" },
        { "/./a",               "contains a '.' component" },
        { "/a/.",               "contains a '.' component" },
        { "/a\n",               "contains a newline" },
        { "/a\x01",             "contains a control character" },
        { "/a\x7f",             "contains a control character" },
        { "/a\tb",              "contains a control character" },
};

START_TEST(test_path_verify) {
        const PathCase *t = &path_cases[_i];
        const char *why = NULL;
        int r = config_path_verify(t->path, &why);

        if (!t->why) {
                ck_assert_msg(r == 0, "'%s': %s", t->path, why);
                ck_assert_ptr_null(why);
        } else {
                ck_assert_int_eq(r, -EINVAL);
                ck_assert_str_eq(why, t->why);
        }
}
END_TEST

START_TEST(test_path_limits) {
        char p[CONFIG_PATH_MAX + 2];
        const char *why = NULL;

        /* 4095 bytes in components of 255 ("/" + 255) * 15 + "/" + 254 */
        p[0] = '\0';
        for (int i = 0; i < 15; i++) {
                strcat(p, "/");
                memset(p + strlen(p), 'x', 255);
                p[(i + 1) * 256] = '\0';
        }
        strcat(p, "/");
        memset(p + strlen(p), 'y', 254);
        p[CONFIG_PATH_MAX] = '\0';
        ck_assert_uint_eq(strlen(p), CONFIG_PATH_MAX);
        ck_assert_int_eq(config_path_verify(p, &why), 0);

        strcat(p, "y");
        ck_assert_int_eq(config_path_verify(p, &why), -EINVAL);
        ck_assert_str_eq(why, "is longer than 4095 bytes");

        p[256] = '\0';  /* "/" + 255 */
        ck_assert_int_eq(config_path_verify(p, NULL), 0);
        p[256] = 'x';   /* "/" + 256 + ... */
        p[257] = '\0';
        ck_assert_int_eq(config_path_verify(p, &why), -EINVAL);
        ck_assert_str_eq(why, "has a component longer than 255 bytes");
}
END_TEST

START_TEST(test_booleans) {
        static const char *const yes[] = { "yes", "YES", "true", "True", "on", "1" };
        static const char *const no[] = { "no", "No", "false", "FALSE", "off", "0" };
        static const char *const bad[] = { "", "y", "n", "2", "yes!", " yes", "enable" };
        bool b;

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                b = false;
                ck_assert_int_eq(config_parse_boolean(yes[i], &b), 0);
                ck_assert(b);
        }
        for (size_t i = 0; i < ELEMENTSOF(no); i++) {
                b = true;
                ck_assert_int_eq(config_parse_boolean(no[i], &b), 0);
                ck_assert(!b);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_int_eq(config_parse_boolean(bad[i], &b), -EINVAL);
}
END_TEST

START_TEST(test_change_to_string) {
        ControllerChange ch = { .enable = M(MEMORY) | M(CPU), .disable = M(PIDS), .bypass = M(IO) };
        _cleanup_free_ char *s = NULL, *empty = NULL;

        ck_assert_int_eq(controller_change_to_string(&ch, &s), 0);
        ck_assert_str_eq(s, "+cpu #io +memory -pids");          /* ssid order */
        ck_assert_int_eq(controller_change_to_string(&(ControllerChange) {}, &empty), 0);
        ck_assert_str_eq(empty, "");
}
END_TEST

static Suite *config_suite(void) {
        Suite *s = suite_create("config");

        CHECK_TCASE(s, "load", NULL, NULL, { test_good_with_drop_ins }, { test_defaults_without_main_file },
                    { test_empty_values }, { test_comments }, { test_sections }, { test_keys }, { test_duplicate_keys },
                    { test_second_daemon_section }, { test_missing_keys }, { test_values }, { test_paths },
                    { test_root_cgroup }, { test_controllers }, { test_users }, { test_same_path_twice },
                    { test_nested_delegations }, { test_errors_across_files }, { test_errors_accumulate },
                    { test_long_lines_and_section_names }, { test_syntax_errors }, { test_override_daemon });
        CHECK_TCASE(s, "bytes", scratch_setup, scratch_teardown, { test_inline_comment_keeps_semicolon_in_value },
                    { test_long_line_value_is_not_cut }, { test_crlf }, { test_lookups_indexed }, { test_same_path_among_many }, { test_large_file },
                    { test_bom_nul_and_last_line },
                    { test_unreadable_files });
        CHECK_TCASE(s, "values", NULL, NULL, { test_path_verify, ELEMENTSOF(path_cases) }, { test_path_limits },
                    { test_booleans }, { test_change_to_string });
        return s;
}

int main(void) {
        return check_run(config_suite());
}
