/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rule for a systemd host (src/daemon/systemd-managed.c): a configuration may
 * name only subtrees systemd delegates. systemd's answers come from a table here, as
 * GetUnitByControlGroup gives them (the unit whose cgroup holds the path, found by
 * walking up); the VM test asks the real systemd. AddDelegation's cgroups go through the
 * same rule (systemd_managed_check_delegation()).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check-run.h"
#include "systemd-managed.h"

/* systemd's units in this test, deepest first: the first whose cgroup holds the path answers */
static const struct {
        const char *cgroup, *id;
        bool delegate;
} units[] = {
        { "/fail", NULL, false },       /* the lookup fails */
        { "/system.slice/host.service", "host.service", true },
        { "/system.slice/plain.service", "plain.service", false },
        { "/user.slice/user-1000.slice/user@1000.service", "user@1000.service", true },
        { "/user.slice/user-1000.slice", "user-1000.slice", false },
        { "/user.slice", "user.slice", false },
        { "/system.slice", "system.slice", false },
        { "/", "-.slice", false },
};

static unsigned lookups;

static int fake_lookup(const char *path, SystemdUnit *ret, void *userdata) {
        ck_assert_ptr_eq(userdata, &lookups);
        lookups++;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                size_t n = strlen(units[i].cgroup);
                if (!streq(units[i].cgroup, "/") &&
                    (strncmp(path, units[i].cgroup, n) != 0 || (path[n] != '\0' && path[n] != '/')))
                        continue;
                if (!units[i].id)
                        return -EIO;
                ret->id = strdup(units[i].id);
                ret->cgroup = strdup(units[i].cgroup);
                ck_assert(ret->id && ret->cgroup);
                ret->delegate = units[i].delegate;
                return 0;
        }
        ck_abort_msg("no unit for %s", path);
        return -ENOENT;
}

static const struct {
        const char *conf;       /* after the header comment line: line 2 is the first section */
        const char *error;      /* a piece of the one error, at line 3 (the path= line); NULL: accepted */
        const char *error2;
} cases[] = {
        /* the old container-host example: the root and a slice are systemd's */
        { "[cgroup]\npath = /\nsubtree-control = +cpu\n",
          "/ is managed by systemd (it is in / of -.slice, which has no Delegate=yes)", "Delegate=yes, started before" },
        { "[cgroup]\npath = /system.slice\nsubtree-control = #cpu\n",
          "/system.slice is managed by systemd (it is in /system.slice of system.slice", "rewrites" },
        { "[cgroup]\npath = /containers.slice\nsubtree-control = #cpu\n",
          "/containers.slice is managed by systemd (it is in / of -.slice", NULL },
        /* a service without Delegate=yes, and a cgroup below it */
        { "[cgroup]\npath = /system.slice/plain.service/x\nsubtree-control = #cpu\n",
          "/system.slice/plain.service/x is managed by systemd (it is in /system.slice/plain.service of "
          "plain.service", NULL },
        /* a name that only starts like the delegated unit's */
        { "[cgroup]\npath = /system.slice/host.service2\nsubtree-control = #cpu\n",
          "/system.slice/host.service2 is managed by systemd", NULL },
        /* the delegated unit's own cgroup: its subtree_control is cgbypassd's */
        { "[cgroup]\npath = /system.slice/host.service\nsubtree-control = #cpu +memory\n", NULL, NULL },
        { "[cgroup]\npath = /system.slice/host.service/a/b\ncontrollers = +cpu\ncpu.weight = 50\n", NULL, NULL },
        /* ... but not its own controllers or values */
        { "[cgroup]\npath = /system.slice/host.service\ncontrollers = +cpu\n",
          "/system.slice/host.service is the cgroup of host.service (Delegate=yes): its own controllers are "
          "systemd's", "e.g. /system.slice/host.service/NAME" },
        { "[cgroup]\npath = /system.slice/host.service\ncreate = no\ncpu.weight = 50\n",
          "its own values are systemd's", NULL },
        { "[cgroup]\npath = /system.slice/host.service\ncontrollers = #cpu\ncpu.weight = 50\n",
          "its own controllers and values are systemd's", NULL },
        /* [delegate]: at or below a delegated unit */
        { "[delegate]\npath = /system.slice/host.service\nuser = 4242\ncontrollers = cpu\n", NULL, NULL },
        /* delegated to the user's own systemd, which manages it */
        { "[delegate]\npath = /user.slice/user-1000.slice/user@1000.service/app.slice/x\nuser = 1000\n"
          "controllers = cpu\n", "/user.slice/user-1000.slice/user@1000.service/app.slice/x is in "
          "/user.slice/user-1000.slice/user@1000.service of user@1000.service, which the user's own systemd manages",
          "systemd-run --user --scope -p Delegate=yes" },
        { "[delegate]\npath = /user.slice/user-1000.slice/x\nuser = 1000\ncontrollers = cpu\n",
          "/user.slice/user-1000.slice/x is managed by systemd (it is in /user.slice/user-1000.slice of "
          "user-1000.slice", NULL },
        /* systemd cannot be asked */
        { "[cgroup]\npath = /fail/x\nsubtree-control = #cpu\n",
          "/fail/x: cannot ask systemd which unit manages it (Input/output error)", NULL },
};

static char *write_conf(const char *text) {
        char *dir = strdup("/tmp/cgb-test-sdmanaged-XXXXXX"), *path = NULL;
        FILE *f;

        ck_assert_ptr_nonnull(dir);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(asprintf(&path, "%s/cgbypassd.conf", dir), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "# test\n%s", text);
        ck_assert_int_eq(fclose(f), 0);
        free(dir);
        return path;
}

static void remove_conf(char *path) {
        char *slash = strrchr(path, '/');

        ck_assert_int_eq(unlink(path), 0);
        *slash = '\0';
        ck_assert_int_eq(rmdir(path), 0);
        free(path);
}

START_TEST(test_rule) {
        char *path = write_conf(cases[_i].conf);
        _cleanup_(config_freep) Config *c = NULL;
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        int r;

        r = config_load(path, NULL, &c, &errs);
        ck_assert_msg(r == 0, "config_load: %d, %s", r, strempty(config_errors_get(&errs, 0)));
        lookups = 0;
        r = systemd_managed_check(c, fake_lookup, &lookups, &errs);
        ck_assert_uint_eq(lookups, 1);
        if (!cases[_i].error) {
                ck_assert_int_eq(r, 0);
                ck_assert_uint_eq(config_errors_count(&errs), 0);
        } else {
                _cleanup_free_ char *at = NULL;
                const char *got;

                ck_assert_int_eq(r, -EINVAL);
                ck_assert_uint_eq(config_errors_count(&errs), 1);
                got = config_errors_get(&errs, 0);
                ck_assert_int_ge(asprintf(&at, "%s:3: ", path), 0);
                ck_assert_msg(strncmp(got, at, strlen(at)) == 0, "'%s' is not at '%s'", got, at);
                ck_assert_msg(strstr(got, cases[_i].error), "'%s' lacks '%s'", got, cases[_i].error);
                if (cases[_i].error2)
                        ck_assert_msg(strstr(got, cases[_i].error2), "'%s' lacks '%s'", got, cases[_i].error2);
        }
        config_errors_done(&errs);
        remove_conf(path);
}
END_TEST

/* every section is checked, each refusal reported; AddDelegation's are left to the bus */
START_TEST(test_all_sections) {
        char *path = write_conf("[cgroup]\npath = /\nsubtree-control = +cpu\n\n"
                                "[cgroup]\npath = /system.slice/host.service\nsubtree-control = #cpu\n\n"
                                "[delegate]\npath = /system.slice/plain.service/a\nuser = 4242\ncontrollers = cpu\n\n"
                                "[delegate]\npath = /system.slice/plain.service/b\nuser = 4243\ncontrollers = cpu\n");
        _cleanup_(config_freep) Config *c = NULL;
        ConfigErrors errs = CONFIG_ERRORS_INIT;

        ck_assert_int_eq(config_load(path, NULL, &c, &errs), 0);
        ck_assert_uint_eq(c->n_delegates, 2);
        c->delegates[1].runtime = true;
        lookups = 0;
        ck_assert_int_eq(systemd_managed_check(c, fake_lookup, &lookups, &errs), -EINVAL);
        ck_assert_uint_eq(lookups, 3);
        ck_assert_uint_eq(config_errors_count(&errs), 2);
        ck_assert_ptr_nonnull(strstr(config_errors_get(&errs, 0), ":3: / is managed by systemd"));
        ck_assert_ptr_nonnull(strstr(config_errors_get(&errs, 1), ":11: /system.slice/plain.service/a is managed"));
        config_errors_done(&errs);
        remove_conf(path);
}
END_TEST

/* AddDelegation's cgroup: the same rule, the fix worded for a run-time delegation */
static const struct {
        const char *path;
        unsigned uid;
        const char *error;      /* a piece of the refusal; NULL: allowed */
        const char *error2;
} runtime_cases[] = {
        { "/system.slice", 4242, "/system.slice is managed by systemd (it is in /system.slice of system.slice, "
          "which has no Delegate=yes)", "Delegate a subtree systemd delegates instead: the cgroup of a service or "
          "scope with Delegate=yes, or a cgroup below it (see cgbypassd(8), SYSTEMD)" },
        { "/system.slice/plain.service/ctr", 4242, "/system.slice/plain.service/ctr is managed by systemd (it is in "
          "/system.slice/plain.service of plain.service", "Delegate a subtree" },
        { "/", 4242, "/ is managed by systemd (it is in / of -.slice", NULL },
        { "/system.slice/host.service2", 4242, "is managed by systemd", NULL },
        /* a Delegate=yes unit's cgroup and below it */
        { "/system.slice/host.service", 4242, NULL, NULL },
        { "/system.slice/host.service/ctr", 4242, NULL, NULL },
        /* inside the user's own systemd: a scope or service of hers, to her */
        { "/user.slice/user-1000.slice/user@1000.service/app.slice/apps.scope", 1000, NULL, NULL },
        { "/user.slice/user-1000.slice/user@1000.service/app.slice/x.service", 1000, NULL, NULL },
        { "/user.slice/user-1000.slice/user@1000.service/app.slice/apps.scope", 1001,
          "which the user's own systemd manages: only the cgroup of a scope or service of hers with Delegate=yes "
          "can be delegated, and to that user (uid 1000)", "systemd-run --user --scope -p Delegate=yes" },
        { "/user.slice/user-1000.slice/user@1000.service/app.slice", 1000, "which the user's own systemd manages",
          NULL },
        { "/user.slice/user-1000.slice/user@1000.service", 1000, "which the user's own systemd manages", NULL },
        { "/user.slice/user-1000.slice/user@1000.service/app.slice/apps.scope/sub", 1000,
          "which the user's own systemd manages", NULL },
        { "/user.slice/user-1000.slice/x.scope", 1000, "/user.slice/user-1000.slice/x.scope is managed by systemd "
          "(it is in /user.slice/user-1000.slice of user-1000.slice", NULL },
        { "/fail/x", 4242, "/fail/x: cannot ask systemd which unit manages it (Input/output error); cgbypassd runs "
          "under systemd and delegates only subtrees systemd delegates", NULL },
};

START_TEST(test_runtime) {
        _cleanup_free_ char *why = NULL;
        int r;

        lookups = 0;
        r = systemd_managed_check_delegation(runtime_cases[_i].path, runtime_cases[_i].uid, fake_lookup, &lookups,
                                             &why);
        ck_assert_uint_eq(lookups, 1);
        if (!runtime_cases[_i].error) {
                ck_assert_msg(r == 0, "%s refused: %d, %s", runtime_cases[_i].path, r, strempty(why));
                ck_assert_ptr_null(why);
                return;
        }
        ck_assert_int_eq(r, -EINVAL);
        ck_assert_ptr_nonnull(why);
        ck_assert_msg(strstr(why, runtime_cases[_i].error), "'%s' lacks '%s'", why, runtime_cases[_i].error);
        if (runtime_cases[_i].error2)
                ck_assert_msg(strstr(why, runtime_cases[_i].error2), "'%s' lacks '%s'", why, runtime_cases[_i].error2);
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE_TABLE("systemd-managed", "rule", NULL, NULL,
                                           { test_rule, sizeof(cases) / sizeof(cases[0]) }, { test_all_sections },
                                           { test_runtime, sizeof(runtime_cases) / sizeof(runtime_cases[0]) }));
}
