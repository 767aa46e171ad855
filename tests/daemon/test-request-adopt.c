/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Change requests on a sim with watches (manager_refresh_for_change()): they
 * do not scan the delegation for owner-made cgroups while the watches saw
 * every mkdir and rmdir (Manager.walks counts the scans), and still take on
 * what the owner made just before the request, mkdir -p too, without the
 * event loop having run. Where a cgroup can appear unseen (a delegated
 * cgroup without a watch, no inotify), a request scans as before.
 */
#include <check.h>
#include <ftw.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check-run.h"
#include "manager-test.h"
#include "request.h"

#define N_OWNER_CGROUPS 20

static char dir[] = "/tmp/cgb-request-adopt-XXXXXX";
static Manager *m;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

/* the owner's mkdir of /srv/alice/@name (may hold slashes: each level made, as mkdir -p) */
static void owner_mkdir(const char *name) {
        _cleanup_free_ char *p = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/root/srv/alice/%s", dir, name), 0);
        for (char *s = p + strlen(dir) + strlen("/root/srv/alice/"); (s = strchr(s, '/')); s++) {
                *s = '\0';
                ck_assert(mkdir(p, 0755) == 0 || errno == EEXIST);
                *s = '/';
        }
        ck_assert_int_eq(mkdir(p, 0755), 0);
}

static void owner_rmdir(const char *name) {
        _cleanup_free_ char *p = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/root/srv/alice/%s", dir, name), 0);
        /* a sim's cgroup directory holds its files: the owner's rm -r */
        ck_assert_int_eq(nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* a request as the owner would make it over the bus; 0 or the refusal's -errno */
static int request(ChangeKind kind, const char *cgroup, const char *arg) {
        _cleanup_(change_request_done) ChangeRequest req = {};
        Refusal f = {};
        int r;

        ck_assert_int_eq(request_parse(hierarchy_builtin(backend_get_model(m->backend)), kind, cgroup, arg, &req,
                                       &f), 0);
        r = manager_change(m, &req, false, getuid(), NULL, &f, NULL, NULL);
        refusal_done(&f);
        return r;
}

static bool known(const char *cgroup) {
        Cgroup *c;
        return hierarchy_lookup(backend_get_model(m->backend), cgroup, &c) >= 0;
}

static void start(bool watches) {
        char name[32];

        ck_assert_ptr_nonnull(mkdtemp(dir));
        m = test_manager_start_alice(dir, (unsigned) getuid());
        ck_assert_int_eq(request(CHANGE_SUBTREE, "/srv/alice", "#cpu"), 0);
        for (unsigned i = 0; i < N_OWNER_CGROUPS; i++) {
                snprintf(name, sizeof(name), "d%u", i);
                owner_mkdir(name);
        }
        if (watches)
                test_manager_watch(m);
        /* the first request takes them on (with watches: in the catch-up) */
        ck_assert_int_eq(request(CHANGE_ENABLE, "/srv/alice/d0", "cpu"), 0);
}

static void setup_watched(void) {
        start(true);
}

static void setup_unwatched(void) {
        start(false);
}

static void teardown(void) {
        m = manager_free(m);
        ck_assert_int_eq(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
        strcpy(dir, "/tmp/cgb-request-adopt-XXXXXX");
}

START_TEST(test_requests_scan_nothing) {
        unsigned long before = m->walks;

        for (unsigned i = 0; i < 50; i++) {
                ck_assert_int_eq(request(CHANGE_BYPASS, "/srv/alice/d7", "cpu"), 0);
                ck_assert_int_eq(request(CHANGE_ENABLE, "/srv/alice/d7", "cpu"), 0);
        }
        ck_assert_uint_eq(m->walks, before);
}
END_TEST

START_TEST(test_requests_see_owner_changes) {
        /* the owner's mkdir, then at once its request: the event loop has not run */
        owner_mkdir("new");
        ck_assert_int_eq(request(CHANGE_ENABLE, "/srv/alice/new", "cpu"), 0);
        /* mkdir -p: the levels below the first are made before any watch on them */
        owner_mkdir("p/q/r");
        ck_assert_int_eq(request(CHANGE_ENABLE, "/srv/alice/p", "cpu"), 0);
        ck_assert(known("/srv/alice/p/q/r"));
        /* and the rmdir: the cgroup is gone for the next request */
        owner_rmdir("new");
        ck_assert_int_eq(request(CHANGE_BYPASS, "/srv/alice/new", "cpu"), -ENOENT);
        ck_assert(!known("/srv/alice/new"));
}
END_TEST

/*
 * A cgroup made where no watch reports it: what a delegated cgroup without a
 * watch looks like (WATCH_MAX, fs.inotify.max_user_watches: watch.c sets
 * incomplete). The events are read away behind the daemon's back, so only
 * a scan can find the cgroup.
 */
START_TEST(test_unseen_cgroup_scanned) {
        char buf[4096];
        unsigned long before;

        /* as watch_sync() leaves it when a delegated cgroup cannot be watched */
        (void) watch_sync(m);
        m->watches.incomplete = true;
        owner_mkdir("unseen");
        while (read(m->watches.fd, buf, sizeof(buf)) > 0)
                ;
        ck_assert(!known("/srv/alice/unseen"));
        before = m->walks;
        ck_assert_int_eq(request(CHANGE_ENABLE, "/srv/alice/unseen", "cpu"), 0);
        ck_assert_uint_gt(m->walks, before);
        ck_assert(known("/srv/alice/unseen"));
}
END_TEST

/* No watches (no event loop): every request scans, and sees the owner's mkdir. */
START_TEST(test_without_watches_requests_scan) {
        unsigned long before = m->walks;

        ck_assert_int_eq(request(CHANGE_BYPASS, "/srv/alice/d3", "cpu"), 0);
        ck_assert_uint_gt(m->walks, before);
        owner_mkdir("new");
        ck_assert_int_eq(request(CHANGE_ENABLE, "/srv/alice/new", "cpu"), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("request-adopt");

        CHECK_TCASE(s, "watched", setup_watched, teardown, { test_requests_scan_nothing },
                    { test_requests_see_owner_changes }, { test_unseen_cgroup_scanned });
        CHECK_TCASE(s, "without watches", setup_unwatched, teardown, { test_without_watches_requests_scan });
        return check_run(s);
}
