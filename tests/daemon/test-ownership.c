/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ownership.c after a request inside a delegation (sim, as root): the files
 * the request's writes made appear are the owner's; only those are looked
 * at; a cgroup whose pass failed (a planted hard link) is remembered and
 * looked at whole by the next request there. Needs root (chown); skips without.
 */
#include <check.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check-run.h"
#include "manager-test.h"
#include "ownership.h"
#include "request.h"

#define OWNER 4000321u

static char dir[] = "/tmp/cgb-ownership-XXXXXX";
static Manager *m;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static char *at(const char *rel) {
        char *s = NULL;
        ck_assert_int_ge(asprintf(&s, "%s/%s", dir, rel), 0);
        return s;
}

static uid_t uid_of(const char *rel) {
        _cleanup_free_ char *p = at(rel);
        struct stat st;

        ck_assert_int_eq(lstat(p, &st), 0);
        return st.st_uid;
}

static void set_owner(const char *rel, uid_t uid) {
        _cleanup_free_ char *p = at(rel);
        ck_assert_int_eq(lchown(p, uid, uid), 0);
}

/* a request as the owner would make it over the bus; 0 or the refusal's -errno */
static int request(ChangeKind kind, const char *cgroup, const char *arg) {
        ChangeRequest req = {};
        Refusal f = {};
        int r;

        ck_assert_int_eq(request_parse(hierarchy_builtin(backend_get_model(m->backend)), kind, cgroup, arg, &req,
                                       &f), 0);
        r = manager_change(m, &req, false, OWNER, NULL, &f, NULL, NULL);
        change_request_done(&req);
        refusal_done(&f);
        return r;
}

static void setup(void) {
        _cleanup_free_ char *c0 = NULL;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        m = test_manager_start_alice(dir, OWNER);

        /* the owner bypasses cpu for its children and makes one */
        ck_assert_int_eq(request(CHANGE_SUBTREE, "/srv/alice", "#cpu"), 0);
        c0 = at("root/srv/alice/c0");
        ck_assert_int_eq(mkdir(c0, 0755), 0);
        ck_assert_int_eq(chown(c0, OWNER, OWNER), 0);
}

static void teardown(void) {
        m = manager_free(m);
        ck_assert_int_eq(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
        strcpy(dir, "/tmp/cgb-ownership-XXXXXX");
}

START_TEST(test_appeared_only) {
        /* adopted: the files of the owner's mkdir are the owner's */
        ck_assert_int_eq(request(CHANGE_BYPASS, "/srv/alice/c0", "cpu"), 0);
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cgroup.type"), OWNER);

        /* root's again behind the daemon's back: a request that makes cpu.weight appear looks at that alone */
        set_owner("root/srv/alice/c0/cgroup.type", 0);
        ck_assert_int_eq(request(CHANGE_ENABLE, "/srv/alice/c0", "cpu"), 0);
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cpu.weight"), OWNER);
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cpu.max"), OWNER);
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cgroup.type"), 0);
        /* a rewritten file keeps its owner */
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cgroup.controllers"), OWNER);

        /* a restart's whole pass repairs it (delegation_chown_all()) */
        ck_assert_int_eq(delegation_chown_all(m, NULL), 0);
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cgroup.type"), OWNER);
}
END_TEST

START_TEST(test_retry_whole) {
        ck_assert_int_eq(request(CHANGE_BYPASS, "/srv/alice/c0", "cpu"), 0);
        set_owner("root/srv/alice/c0/cgroup.type", 0);
        /* as a failed pass leaves it: the next request there looks at every file, and then forgets it */
        m->owner_retry = calloc(2, sizeof(char *));
        ck_assert_ptr_nonnull(m->owner_retry);
        m->owner_retry[0] = strdup("/srv/alice/c0");
        ck_assert_int_eq(request(CHANGE_ENABLE, "/srv/alice/c0", "cpu"), 0);
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cgroup.type"), OWNER);
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cpu.weight"), OWNER);
        ck_assert_ptr_null(m->owner_retry[0]);
}
END_TEST

START_TEST(test_failed_pass_remembered) {
        _cleanup_free_ char *type = at("root/srv/alice/c0/cgroup.type"), *planted = at("planted");

        ck_assert_int_eq(request(CHANGE_BYPASS, "/srv/alice/c0", "cpu"), 0);
        ck_assert_ptr_null(m->owner_retry);
        /* a second link to one of c0's files: the whole pass of c0 that a write at the root makes refuses it */
        ck_assert_int_eq(link(type, planted), 0);
        ck_assert_int_eq(request(CHANGE_SUBTREE, "/srv/alice", "+cpu"), 0);
        ck_assert_ptr_nonnull(m->owner_retry);
        ck_assert_str_eq(m->owner_retry[0], "/srv/alice/c0");
        ck_assert_ptr_null(m->owner_retry[1]);
        /* all or nothing: the files that appeared stay root's */
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cpu.weight"), 0);

        /* the link gone, the next request there passes c0 whole, and forgets it */
        ck_assert_int_eq(unlink(planted), 0);
        ck_assert_int_eq(request(CHANGE_SUBTREE, "/srv/alice/c0", "+cpu"), 0);
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cpu.weight"), OWNER);
        ck_assert_uint_eq(uid_of("root/srv/alice/c0/cpu.max"), OWNER);
        ck_assert_ptr_null(m->owner_retry[0]);
}
END_TEST

int main(void) {
        Suite *s = suite_create("ownership");

        if (geteuid() != 0) {
                printf("1..0 # SKIP changing owners needs root\n");
                return 0;
        }
        CHECK_TCASE(s, "ownership", setup, teardown, { test_appeared_only }, { test_retry_whole },
                    { test_failed_pass_remembered });
        return check_run(s);
}
