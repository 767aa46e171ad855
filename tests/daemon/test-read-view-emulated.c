/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reads on the emulated backend, on the host's cgroup2 in a scratch cgroup:
 * an owner's mkdir (one, and mkdir -p) and rmdir right before a read are in
 * the answer without the event loop having run and without the hierarchy
 * being read again (Manager.rereads); a write of another root writer that
 * inotify does not report is not seen by reads, and is by the check a
 * change request makes first (docs/backends.md, "What the daemon knows").
 * Skips without root, a writable cgroup2 mount or a domain controller.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager-test.h"

static char *mnt, *scratch, *dir;
static const char *X;
static pid_t run_pid;            /* the runner; each test runs in a child of it */

static char *xstrdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xstrdupf(const char *fmt, ...) {
        char *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                abort();
        va_end(ap);
        return s;
}

static char *read_text(const char *path) {
        char buf[4096];
        ssize_t n;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return NULL;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n < 0)
                return NULL;
        buf[n] = '\0';
        return strdup(buf);
}

static int write_text(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

        if (fd < 0)
                return -errno;
        if (write(fd, text, strlen(text)) < 0)
                r = -errno;
        close(fd);
        return r;
}

static bool has_word(const char *text, const char *word) {
        size_t n = strlen(word);

        for (const char *p = text; (p = strstr(p, word)); p += n)
                if ((p == text || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
                        return true;
        return false;
}

static char *find_cgroup2(void) {
        char *mp = NULL;
        return backend_find_cgroup2_mount("/proc/self/mountinfo", &mp) < 0 ? NULL : mp;
}

static void rmdir_below(const char *path) {
        DIR *d = opendir(path);

        for (struct dirent *de; d && (de = readdir(d));)
                if (de->d_type == DT_DIR && de->d_name[0] != '.') {
                        _cleanup_free_ char *p = xstrdupf("%s/%s", path, de->d_name);
                        rmdir_below(p);
                }
        if (d)
                closedir(d);
        (void) rmdir(path);
}

static Manager *start(void) {
        _cleanup_free_ char *conf = xstrdupf("%s/c.conf", dir), *none = xstrdupf("%s/none", dir);
        _cleanup_free_ char *state = xstrdupf("%s/state", dir);
        Manager *m;
        FILE *f;

        (void) mkdir(none, 0755);
        f = fopen(conf, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "[daemon]\nbackend = emulated\ncgroup-root = %s\nstate-directory = %s\n\n"
                "[cgroup]\npath = /\nsubtree-control = +%s\n\n"
                "[delegate]\npath = /alice\nuser = 65534\ncontrollers = %s\n", scratch, state, X, X);
        ck_assert_int_eq(fclose(f), 0);

        m = test_manager_start(conf, none);
        test_manager_watch(m);
        return m;
}

static bool tree_has(Manager *m, const char *member) {
        const EffectiveView *v;
        size_t n = strlen(member);

        ck_assert_int_eq(read_view_prepare(m, NULL), 0);
        ck_assert_int_eq(read_view_get(m, controller_from_string(X), &v), 0);
        for (const char *p = v->tree; (p = strstr(p, member)); p += n)
                if (p[n] == '|' || p[n] == '\n' || p[n] == '\0' || p[n] == ' ')
                        return true;
        return false;
}

/* As GetCgroup looks a cgroup up */
static bool knows(Manager *m, const char *path) {
        Cgroup *c;

        ck_assert_int_eq(read_view_prepare(m, path), 0);
        return hierarchy_lookup(backend_get_model(m->backend), path, &c) >= 0;
}

static void kmkdir(const char *rel) {
        _cleanup_free_ char *p = xstrdupf("%s/%s", scratch, rel);
        ck_assert_msg(mkdir(p, 0755) == 0, "mkdir %s: %m", p);
}

static void krmdir(const char *rel) {
        _cleanup_free_ char *p = xstrdupf("%s/%s", scratch, rel);
        ck_assert_msg(rmdir(p) == 0, "rmdir %s: %m", p);
}

START_TEST(test_owner_mkdir_rmdir_without_reread) {
        Manager *m = start();
        unsigned long rereads = m->rereads;

        ck_assert(tree_has(m, "/alice"));
        for (unsigned i = 0; i < 20; i++) {
                _cleanup_free_ char *rel = xstrdupf("alice/c%u", i), *path = xstrdupf("/%s", rel);

                kmkdir(rel);
                ck_assert_msg(knows(m, path), "%s unknown right after its mkdir", path);
                ck_assert(tree_has(m, path));
        }
        /* mkdir -p: the levels below the first are made before any watch */
        kmkdir("alice/p");
        kmkdir("alice/p/q");
        kmkdir("alice/p/q/r");
        ck_assert(tree_has(m, "/alice/p/q/r"));
        ck_assert(knows(m, "/alice/p/q"));

        krmdir("alice/c3");
        ck_assert(!knows(m, "/alice/c3"));
        ck_assert(!tree_has(m, "/alice/c3"));
        krmdir("alice/p/q/r");
        krmdir("alice/p/q");
        ck_assert(!tree_has(m, "/alice/p/q"));
        ck_assert(!knows(m, "/alice/p/q/r"));
        ck_assert(knows(m, "/alice/p"));
        /* a cgroup that is not there: answered without a look at the kernel beyond its directory */
        ck_assert(!knows(m, "/nowhere"));
        ck_assert_uint_eq(m->rereads, rereads);

        /* another root writer (crun, systemd): unseen by reads, seen by the check before a change */
        _cleanup_free_ char *sc = xstrdupf("%s/alice/cgroup.subtree_control", scratch);
        _cleanup_free_ char *plus = xstrdupf("+%s", X);
        Snapshot before;
        Cgroup *c;

        ck_assert_int_ge(write_text(sc, plus), 0);
        ck_assert(knows(m, "/alice"));
        ck_assert_int_eq(hierarchy_lookup(backend_get_model(m->backend), "/alice", &c), 0);
        ck_assert_uint_eq(cgroup_get_subtree_control(c), 0);
        ck_assert_uint_eq(m->rereads, rereads);
        /* what manager_change() does first */
        ck_assert_int_eq(manager_refresh_for(m, "/alice", &before), 0);
        snapshot_done(&before);
        ck_assert_int_eq(hierarchy_lookup(backend_get_model(m->backend), "/alice", &c), 0);
        ck_assert_uint_eq(cgroup_get_subtree_control(c), CGMASK(controller_from_string(X)));
        ck_assert_uint_eq(m->rereads, rereads + 1);
        manager_free(m);
}
END_TEST

static void setup(void) {
        char tmpl[] = "/tmp/cgb-rve-XXXXXX";

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        dir = strdup(tmpl);
        scratch = xstrdupf("%s/cgb-rve-%d-%d", mnt, (int) run_pid, (int) getpid());
        ck_assert_msg(mkdir(scratch, 0755) == 0, "mkdir %s: %m", scratch);
}

static void teardown(void) {
        _cleanup_free_ char *cmd = xstrdupf("rm -rf '%s'", dir);

        rmdir_below(scratch);
        (void) system(cmd);
        free(scratch);
        free(dir);
}

int main(void) {
        _cleanup_free_ char *ctl_path = NULL, *sc_path = NULL, *ctl = NULL, *rootsc = NULL;
        bool added = false;
        Suite *s;
        TCase *tc;
        SRunner *sr;
        int failed;

        mnt = getenv("CGB_TEST_CGROUP2") ? strdup(getenv("CGB_TEST_CGROUP2")) : find_cgroup2();
        if (geteuid() != 0 || !mnt) {
                printf("1..0 # SKIP needs root and a cgroup2 mount\n");
                return 0;
        }
        ctl_path = xstrdupf("%s/cgroup.controllers", mnt);
        sc_path = xstrdupf("%s/cgroup.subtree_control", mnt);
        ctl = read_text(ctl_path);
        if (!ctl || access(sc_path, W_OK) < 0) {
                printf("1..0 # SKIP %s is not a writable cgroup2 mount\n", mnt);
                return 0;
        }
        X = getenv("CGB_TEST_CONTROLLER") ?: has_word(ctl, "hugetlb") ? "hugetlb" : NULL;
        if (!X || !has_word(ctl, X)) {
                printf("1..0 # SKIP %s does not offer hugetlb (CGB_TEST_CONTROLLER)\n", mnt);
                return 0;
        }
        rootsc = read_text(sc_path);
        if (rootsc && !has_word(rootsc, X)) {
                _cleanup_free_ char *plus = xstrdupf("+%s", X);
                if (write_text(sc_path, plus) < 0) {
                        printf("1..0 # SKIP cannot enable %s in %s\n", X, mnt);
                        return 0;
                }
                added = true;
        }

        run_pid = getpid();
        s = suite_create("read-view-emulated");
        tc = tcase_create("core");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_owner_mkdir_rmdir_without_reread);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        /* a failed test exits before its teardown: what it left */
        _cleanup_free_ char *left = xstrdupf("%s/cgb-rve-%d-", mnt, (int) run_pid);
        DIR *d = opendir(mnt);
        for (struct dirent *de; d && (de = readdir(d));) {
                _cleanup_free_ char *p = xstrdupf("%s/%s", mnt, de->d_name);
                if (strncmp(p, left, strlen(left)) == 0)
                        rmdir_below(p);
        }
        if (d)
                closedir(d);
        if (added) {
                _cleanup_free_ char *minus = xstrdupf("-%s", X);
                (void) write_text(sc_path, minus);
        }
        free(mnt);
        return failed == 0 ? 0 : 1;
}
