/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read methods' views (src/daemon/read-view.c) on a sim with a
 * delegation of 200 cgroups its owner made: reads walk neither the model
 * nor the delegation's directories while nothing changes (Manager.walks
 * counts both), and still see an owner's mkdir and rmdir made just before
 * the read, without the event loop having run.
 */
#include <check.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check-run.h"
#include "manager-test.h"

#define N_OWNER_CGROUPS 200

static char dir[] = "/tmp/cgb-read-view-XXXXXX";

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static char *at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *at(const char *fmt, ...) {
        char *rel = NULL, *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        ck_assert_int_ge(vasprintf(&rel, fmt, ap), 0);
        va_end(ap);
        ck_assert_int_ge(asprintf(&s, "%s/%s", dir, rel), 0);
        free(rel);
        return s;
}

/* what the owner makes below its delegation: mkdir of /srv/alice/NAME; its path */
static char *owner_mkdir(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *owner_mkdir(const char *fmt, ...) {
        _cleanup_free_ char *name = NULL;
        va_list ap;
        char *p;

        va_start(ap, fmt);
        ck_assert_int_ge(vasprintf(&name, fmt, ap), 0);
        va_end(ap);
        p = at("root/srv/alice/%s", name);
        ck_assert_int_eq(mkdir(p, 0755), 0);
        return p;
}

static Manager *start(bool watches) {
        Manager *mgr;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        mgr = test_manager_start_alice(dir, (unsigned) getuid());
        for (unsigned i = 0; i < N_OWNER_CGROUPS; i++)
                free(owner_mkdir("d%u", i));
        if (watches)
                test_manager_watch(mgr);
        return mgr;
}

static void stop(Manager *mgr) {
        manager_free(mgr);
        ck_assert_int_eq(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
        strcpy(dir, "/tmp/cgb-read-view-XXXXXX");
}

/* each test's daemon: with watches (an event loop's), or without */
static Manager *m;

static void setup_watched(void) {
        m = start(true);
}

static void setup_unwatched(void) {
        m = start(false);
}

static void teardown(void) {
        stop(m);
        m = NULL;
}

static bool tree_has(Manager *mgr, const char *member) {
        const EffectiveView *v;
        size_t n = strlen(member);

        ck_assert_int_eq(read_view_prepare(mgr, NULL), 0);
        ck_assert_int_eq(read_view_get(mgr, CONTROLLER_CPU, &v), 0);
        for (const char *p = v->tree; (p = strstr(p, member)); p += n)
                if (p[n] == '|' || p[n] == '\n' || p[n] == '\0')
                        return true;
        return false;
}

START_TEST(test_reads_walk_nothing) {
        unsigned long before;
        Cgroup *c;

        ck_assert(tree_has(m, "/srv/alice/d199"));
        before = m->walks;
        for (unsigned i = 0; i < 100; i++) {
                const EffectiveView *v;

                ck_assert_int_eq(read_view_prepare(m, NULL), 0);
                ck_assert_int_eq(read_view_get(m, CONTROLLER_CPU, &v), 0);
                ck_assert_uint_eq(v->n_nodes, 3);       /* /, /srv, /srv/alice with its children */
                ck_assert_int_eq(read_view_get(m, CONTROLLER_MEMORY, &v), 0);
                ck_assert_int_eq(read_view_prepare(m, "/srv/alice/d7"), 0);
                ck_assert_int_eq(hierarchy_lookup(backend_get_model(m->backend), "/srv/alice/d7", &c), 0);
        }
        /* memory's view, built once */
        ck_assert_uint_eq(m->walks - before, 1);
}
END_TEST

START_TEST(test_reads_see_owner_changes) {
        _cleanup_free_ char *p = NULL;
        unsigned long before;
        Cgroup *c;

        ck_assert(tree_has(m, "/srv/alice/d0"));
        ck_assert(!tree_has(m, "/srv/alice/new"));
        /* the owner's mkdir, then at once its read: the event loop has not run */
        p = owner_mkdir("new");
        before = m->walks;
        ck_assert(tree_has(m, "/srv/alice/new"));
        ck_assert_int_eq(read_view_prepare(m, "/srv/alice/new/x"), 0);
        ck_assert_int_eq(hierarchy_lookup(backend_get_model(m->backend), "/srv/alice/new", &c), 0);
        /* a refresh of the one delegation (and one more where new watches were added), one view */
        ck_assert_uint_le(m->walks - before, 3);
        before = m->walks;
        ck_assert(tree_has(m, "/srv/alice/new"));
        ck_assert_uint_eq(m->walks, before);

        /* a sim's cgroup directory holds its files: the owner's rm -r */
        ck_assert_int_eq(nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
        ck_assert(!tree_has(m, "/srv/alice/new"));
        ck_assert_int_lt(hierarchy_lookup(backend_get_model(m->backend), "/srv/alice/new", &c), 0);
}
END_TEST

/* No watches (no event loop): every read refreshes, and is as right. */
START_TEST(test_without_watches_reads_refresh) {
        _cleanup_free_ char *p = NULL;
        unsigned long before;

        ck_assert(tree_has(m, "/srv/alice/d5"));
        before = m->walks;
        ck_assert(tree_has(m, "/srv/alice/d5"));
        ck_assert_uint_gt(m->walks, before);
        p = owner_mkdir("new");
        ck_assert(tree_has(m, "/srv/alice/new"));
}
END_TEST

int main(void) {
        Suite *s = suite_create("read-view");

        CHECK_TCASE(s, "core", setup_watched, teardown, { test_reads_walk_nothing }, { test_reads_see_owner_changes });
        CHECK_TCASE(s, "without watches", setup_unwatched, teardown, { test_without_watches_reads_refresh });
        return check_run(s);
}
