/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who may make a request (src/daemon/delegation.c: delegation_authorize()),
 * one table: the caller's uid, the cgroup and the change, against one
 * configuration; the polkit action asked for, whether the change counts as
 * an administrator's, and what a "no" from polkit says.
 */
#include <check.h>
#include <ftw.h>

#include "../check-run.h"
#include "cgbypass/bus-errors.h"
#include "bus-manager.h"
#include "delegation.h"

#define ALICE 1000
#define BOB 1001
#define CAROL 1002

static const char conf_text[] =
        "[daemon]\n"
        "backend = sim\n"
        "\n"
        "[cgroup]\n"
        "path = /srv\n"
        "subtree-control = +cpu +io +memory\n"
        "\n"
        "[cgroup]\n"
        "path = /srv/shared\n"
        "\n"
        "[delegate]\n"
        "path = /srv/alice\n"
        "user = 1000\n"
        "controllers = cpu io\n"
        "\n"
        "[delegate]\n"
        "path = /srv/carol\n"
        "user = 1002\n"
        "controllers =\n";

static char *dir;
static Config *config;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static void setup(void) {
        _cleanup_free_ char *file = NULL;
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        FILE *f;

        dir = strdup("/tmp/cgb-test-delegation-XXXXXX");
        ck_assert_ptr_nonnull(dir);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(asprintf(&file, "%s/cgbypassd.conf", dir), 0);
        f = fopen(file, "we");
        ck_assert_ptr_nonnull(f);
        fputs(conf_text, f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_msg(config_load(file, NULL, &config, &errs) == 0, "the test's configuration: %s",
                      config_errors_count(&errs) > 0 ? config_errors_get(&errs, 0) : "?");
        config_errors_done(&errs);
}

static void teardown(void) {
        config = config_free(config);
        (void) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(dir);
}

static const struct {
        uid_t uid;
        const char *cgroup, *change;
        /* refused before polkit */
        const char *error, *text;
        /* otherwise: what polkit is asked, and its "no" */
        const char *action;
        bool admin;
        const char *deny_name, *deny_text;
} cases[] = {
        /* root: anything managed or delegated, without polkit */
        { 0, "/srv", "+cpu", NULL, NULL, NULL, true, NULL, NULL },
        { 0, "/srv/alice/job", "+memory", NULL, NULL, NULL, true, NULL, NULL },
        /* nobody, outside what the configuration names */
        { 0, "/elsewhere", "+cpu", BUS_ERROR_NOT_MANAGED, "outside what cgbypassd manages", NULL, false, NULL, NULL },
        { ALICE, "/elsewhere", "+cpu", BUS_ERROR_NOT_MANAGED, "no [delegate] section covers it", NULL, false,
          NULL, NULL },
        { ALICE, "/srv/alicex", "+cpu", BUS_ERROR_NOT_MANAGED, "/srv/alicex is outside", NULL, false, NULL, NULL },
        { ALICE, "/srv/shared/below", "+cpu", BUS_ERROR_NOT_MANAGED, "outside", NULL, false, NULL, NULL },
        /* the owner, with the delegated controllers: org.cgbypass1.manage-delegated */
        { ALICE, "/srv/alice", "+cpu", NULL, NULL, POLKIT_ACTION_MANAGE_DELEGATED, false,
          BUS_ERROR_ACCESS_DENIED, "although /srv/alice is delegated to you" },
        { ALICE, "/srv/alice/a/b", "+cpu #io", NULL, NULL, POLKIT_ACTION_MANAGE_DELEGATED, false,
          BUS_ERROR_ACCESS_DENIED, "switch cpu io in /srv/alice/a/b" },
        /* ... with others: an administrator's change */
        { ALICE, "/srv/alice/job", "+memory", NULL, NULL, POLKIT_ACTION_MANAGE, true,
          BUS_ERROR_CONTROLLER_NOT_DELEGATED, "covers cpu io, not memory" },
        { ALICE, "/srv/alice", "+cpu -memory", NULL, NULL, POLKIT_ACTION_MANAGE, true,
          BUS_ERROR_CONTROLLER_NOT_DELEGATED, "not memory" },
        { CAROL, "/srv/carol", "+pids", NULL, NULL, POLKIT_ACTION_MANAGE, true,
          BUS_ERROR_CONTROLLER_NOT_DELEGATED, "covers no controller, not pids" },
        /* someone else's delegation, a managed cgroup: administrators only */
        { BOB, "/srv/alice/job", "+cpu", NULL, NULL, POLKIT_ACTION_MANAGE, true,
          BUS_ERROR_NOT_DELEGATED, "delegated to uid 1000, not to you (uid 1001)" },
        { ALICE, "/srv", "+cpu", NULL, NULL, POLKIT_ACTION_MANAGE, true,
          BUS_ERROR_NOT_DELEGATED, "/srv is not delegated to you (uid 1000)" },
        { ALICE, "/srv/shared", "#io", NULL, NULL, POLKIT_ACTION_MANAGE, true,
          BUS_ERROR_NOT_DELEGATED, "only an administrator may change it (polkit action org.cgbypass1.manage)" },
};

START_TEST(test_authorize) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(change_request_done) ChangeRequest req = {};
        _cleanup_(authorization_done) Authorization a = {};
        int r;

        _cleanup_(refusal_done) Refusal f = {};

        ck_assert_int_eq(request_parse(CGMASK_VM_KERNEL, CHANGE_SUBTREE, cases[_i].cgroup, cases[_i].change,
                                       &req, &f), 0);
        r = delegation_authorize(config, cases[_i].uid, &req, &a, &f);
        if (r < 0) {
                ck_assert_int_eq(f.kind, REFUSAL_REQUEST);
                r = bus_error_from_refusal(&e, r, &f);
        }
        if (cases[_i].error) {
                ck_assert_int_eq(r, -EPERM);
                ck_assert_str_eq(strempty(e.name), cases[_i].error);
                ck_assert_msg(strstr(strempty(e.message), cases[_i].text), "'%s' lacks '%s'", e.message,
                              cases[_i].text);
                return;
        }
        ck_assert_msg(r == 0, "uid %u %s: %d %s", (unsigned) cases[_i].uid, cases[_i].cgroup, r,
                      strempty(e.message));
        ck_assert_msg(!sd_bus_error_is_set(&e), "error set: %s", e.name);
        ck_assert_pstr_eq(a.action, cases[_i].action);
        ck_assert_int_eq(a.admin, cases[_i].admin);
        ck_assert_pstr_eq(reason_bus_error(a.deny_reason), cases[_i].deny_name);
        if (cases[_i].deny_text)
                ck_assert_msg(a.deny_message && strstr(a.deny_message, cases[_i].deny_text), "'%s' lacks '%s'",
                              strempty(a.deny_message), cases[_i].deny_text);
        else
                ck_assert_ptr_null(a.deny_message);
}
END_TEST

int main(void) {
        if (sd_bus_error_add_map(cgbypass_bus_error_map) < 0)
                return EXIT_FAILURE;
        return check_run(CHECK_SUITE_TABLE("delegation", "authorize", setup, teardown,
                                           { test_authorize, ELEMENTSOF(cases) }));
}
