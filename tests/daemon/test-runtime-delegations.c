/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The record of run-time delegations (src/daemon/runtime-delegations.c:
 * runtime_delegations_merge()), one table: what STATE_DIR/delegations holds,
 * against one configuration; what joins the Config, or the FILE:LINE
 * problems, naming both places for a conflict.
 */
#include <check.h>
#include <ftw.h>

#include "../check-run.h"
#include "runtime-delegations.h"

static const char conf_fmt[] =
        "[daemon]\n"
        "backend = sim\n"
        "state-directory = %s/state\n"
        "\n"
        "[delegate]\n"
        "path = /srv/alice\n"
        "user = 1000\n"
        "controllers = cpu io\n";

#define HEADER "# cgbypassd run-time delegations v1; written by cgbypassd, do not edit\n"

static const struct {
        const char *record;     /* NULL: no file */
        int result;
        size_t n_runtime;       /* delegations added */
        const char *error;      /* a text the first problem holds ("@" stands for the record's path) */
        const char *error2;
} cases[] = {
        { NULL, 0, 0, NULL, NULL },
        { HEADER, 0, 0, NULL, NULL },
        { HEADER "delegate /rt/a uid=1001 controllers=cpu,io lifetime=cgroup create=no\n"
                 "delegate /rt/b uid=4000123 controllers= lifetime=persistent create=yes\n", 0, 2, NULL, NULL },
        /* conflicts with the configuration, both places named */
        { HEADER "delegate /srv/alice/x uid=1001 controllers=cpu lifetime=cgroup create=no\n", -EINVAL, 1,
          "@:2: /srv/alice/x is inside the delegation of /srv/alice at ", "cgbypassd.conf:6" },
        { HEADER "delegate /srv uid=1001 controllers=cpu lifetime=persistent create=no\n", -EINVAL, 1,
          "cgbypassd.conf:6: /srv/alice is inside the delegation of /srv at @:2", NULL },
        { HEADER "delegate /srv/alice uid=1001 controllers=cpu lifetime=cgroup create=no\n", -EINVAL, 1,
          "/srv/alice is also delegated at ", NULL },
        /* between records */
        { HEADER "delegate /rt/a uid=1001 controllers=cpu lifetime=cgroup create=no\n"
                 "delegate /rt/a/b uid=1002 controllers=cpu lifetime=cgroup create=no\n", -EINVAL, 2,
          "@:3: /rt/a/b is inside the delegation of /rt/a at @:2", NULL },
        /* not what cgbypassd writes */
        { "delegate /rt/a uid=1001 controllers=cpu lifetime=cgroup create=no\n", -EINVAL, 0, "@:1: not a run-time", NULL },
        { HEADER "delegate /rt/a uid=1001 controllers=nosuch lifetime=cgroup create=no\n", -EINVAL, 0, "@:2: not a", NULL },
        { HEADER "delegate /rt/a uid=0 controllers=cpu lifetime=cgroup create=no\n", -EINVAL, 0, "@:2: not a", NULL },
        { HEADER "delegate /rt/a uid=1001 controllers=cpu lifetime=forever create=no\n", -EINVAL, 0, "@:2: not a", NULL },
        { HEADER "delegate / uid=1001 controllers=cpu lifetime=cgroup create=no\n", -EINVAL, 0, "@:2: not a", NULL },
        { HEADER "delegate /rt/../a uid=1001 controllers=cpu lifetime=cgroup create=no\n", -EINVAL, 0, "@:2: not a", NULL },
        { HEADER "delegate /rt/a controllers=cpu lifetime=cgroup\n", -EINVAL, 0, "@:2: not a", NULL },
        { HEADER "delegate /rt/a uid=1001 controllers=cpu lifetime=cgroup color=red\n", -EINVAL, 0, "@:2: not a", NULL },
};

static char *dir;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

/* @text with "@" replaced by @path */
static char *expand(const char *text, const char *path) {
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);

        ck_assert_ptr_nonnull(f);
        for (const char *p = text; *p; p++)
                if (*p == '@')
                        fputs(path, f);
                else
                        fputc(*p, f);
        ck_assert_int_eq(fclose(f), 0);
        return s;
}

START_TEST(test_merge) {
        _cleanup_free_ char *conf = NULL, *text = NULL, *state = NULL, *record = NULL;
        _cleanup_(config_freep) Config *c = NULL;
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        size_t before, added = 0;
        int r;

        dir = strdup("/tmp/cgb-test-rtdeleg-XXXXXX");
        ck_assert_ptr_nonnull(dir);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(asprintf(&conf, "%s/cgbypassd.conf", dir), 0);
        ck_assert_int_ge(asprintf(&text, conf_fmt, dir), 0);
        write_file(conf, text);
        ck_assert_int_ge(asprintf(&state, "%s/state", dir), 0);
        ck_assert_int_eq(mkdir(state, 0755), 0);
        ck_assert_int_ge(asprintf(&record, "%s/" RUNTIME_DELEGATIONS_FILE_NAME, state), 0);
        if (cases[_i].record)
                write_file(record, cases[_i].record);

        ck_assert_int_eq(config_load(conf, NULL, &c, &errs), 0);
        before = c->n_delegates;
        r = runtime_delegations_merge(c, &errs);
        ck_assert_int_eq(r, cases[_i].result);
        for (size_t i = before; i < c->n_delegates; i++) {
                ck_assert(c->delegates[i].runtime);
                added++;
        }
        ck_assert_uint_eq(added, cases[_i].n_runtime);
        if (cases[_i].error) {
                _cleanup_free_ char *want = expand(cases[_i].error, record);
                const char *got;

                ck_assert_uint_ge(config_errors_count(&errs), 1);
                got = config_errors_get(&errs, 0);
                ck_assert_msg(strstr(got, want), "'%s' lacks '%s'", got, want);
                if (cases[_i].error2)
                        ck_assert_msg(strstr(got, cases[_i].error2), "'%s' lacks '%s'", got, cases[_i].error2);
        } else
                ck_assert_uint_eq(config_errors_count(&errs), 0);
        if (r == 0 && added == 2) {
                const DelegateSpec *a = &c->delegates[before], *b = &c->delegates[before + 1];

                ck_assert_str_eq(a->path, "/rt/a");
                ck_assert_uint_eq(a->uid, 1001);
                ck_assert_uint_eq(a->controllers, CGMASK(CONTROLLER_CPU) | CGMASK(CONTROLLER_IO));
                ck_assert(!a->persistent && !a->create);
                ck_assert_str_eq(b->path, "/rt/b");
                ck_assert_uint_eq(b->uid, 4000123);
                ck_assert_ptr_null(b->user);    /* no passwd entry needed */
                ck_assert_uint_eq(b->controllers, 0);
                ck_assert(b->persistent && b->create);
        }
        config_errors_done(&errs);
        (void) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(dir);
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE_TABLE("runtime-delegations", "merge", NULL, NULL,
                                           { test_merge, ELEMENTSOF(cases) }));
}
