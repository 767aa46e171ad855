/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroupfs.c's owner changes on hostile ground (issue 13 item 3): what an
 * owner can put in its delegation (a hard link renamed over cgroup.procs, a
 * symlink, a FIFO, a file of someone else) is refused on the opened fd, and
 * nothing in the directory changes. A plain directory stands for a cgroup
 * (the sim's case; a cgroup2 mount refuses link(2) and symlink(2) itself).
 * Needs root (chown); skips without.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cgbypass/macro.h"
#include "../../src/lib/backend/cgroupfs.h"
#include "../check-run.h"

#define OWNER 4000321u

static char dir[] = "/tmp/cgb-cgfs-XXXXXX";
static int root_fd = -1;

static void at(const char *rel, char *buf, size_t size) {
        (void) snprintf(buf, size, "%s/%s", dir, rel);
}

static void put(const char *rel, uid_t uid) {
        char p[256];
        int fd;

        at(rel, p, sizeof(p));
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "x\n", 2), 2);
        ck_assert_int_eq(fchown(fd, uid, uid), 0);
        (void) close(fd);
}

static uid_t uid_of(const char *rel) {
        char p[256];
        struct stat st;

        at(rel, p, sizeof(p));
        ck_assert_int_eq(lstat(p, &st), 0);
        return st.st_uid;
}

/* @rel replaced by a link to root's "victim": @make_link is link(2) or symlink(2) */
static void link_victim(const char *rel, int (*make_link)(const char *, const char *)) {
        char v[256], p[256];

        at("victim", v, sizeof(v));
        at(rel, p, sizeof(p));
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(make_link(v, p), 0);
}

static void setup(void) {
        char p[256];

        ck_assert_ptr_nonnull(mkdtemp(dir));
        at("cg", p, sizeof(p));
        ck_assert_int_eq(mkdir(p, 0755), 0);
        put("cg/cgroup.procs", 0);
        put("cg/cgroup.threads", 0);
        put("cg/cpu.weight", 0);
        put("victim", 0);
        ck_assert_int_eq(cgfs_open_root(dir, &root_fd), 0);
}

/* the same without openat2(2): the per-component O_NOFOLLOW walk */
static void setup_walk(void) {
        cgfs_set_openat2_disabled(true);
        setup();
}

static void teardown(void) {
        char cmd[300];

        (void) close(root_fd);
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
        memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

static char *const files[] = { "cgroup.procs", "cgroup.threads", NULL };

START_TEST(test_hands_over_by_fd) {
        ck_assert_int_eq(cgfs_chown(root_fd, "cg", files, OWNER, OWNER), 0);
        ck_assert_uint_eq(uid_of("cg"), OWNER);
        ck_assert_uint_eq(uid_of("cg/cgroup.procs"), OWNER);
        ck_assert_uint_eq(uid_of("cg/cpu.weight"), 0);
        /* and back: files of the former owner may go to root */
        ck_assert_int_eq(cgfs_chown_all(root_fd, "cg", 0, 0), 0);
        ck_assert_uint_eq(uid_of("cg"), 0);
        ck_assert_uint_eq(uid_of("cg/cgroup.procs"), 0);
}
END_TEST

/* a hard link or a symlink to root's file where the owner's file was: refused, nothing changed */
static const struct {
        const char *file;
        int (*make_link)(const char *, const char *);
        int error;
        const char *unchanged[2];
} links[] = {
        { "cg/cgroup.procs",   link,    -EMLINK, { "cg", "cg/cgroup.threads" } },
        { "cg/cgroup.threads", symlink, -ELOOP,  { "cg/cgroup.procs" } },
};

START_TEST(test_link_over_file) {
        link_victim(links[_i].file, links[_i].make_link);
        ck_assert_int_eq(cgfs_chown(root_fd, "cg", files, OWNER, OWNER), links[_i].error);
        ck_assert_uint_eq(uid_of("victim"), 0);
        for (size_t k = 0; k < ELEMENTSOF(links[_i].unchanged) && links[_i].unchanged[k]; k++)
                ck_assert_uint_eq(uid_of(links[_i].unchanged[k]), 0);
}
END_TEST

START_TEST(test_fifo_never_blocks) {
        char p[256];
        char *s = NULL;

        at("cg/cpu.weight", p, sizeof(p));
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(mkfifo(p, 0644), 0);
        /* CK_DEFAULT_TIMEOUT fails the test if either blocks in open(2) */
        ck_assert_int_eq(cgfs_read(root_fd, "cg", "cpu.weight", &s), -ELOOP);
        ck_assert_int_eq(cgfs_write(root_fd, "cg", "cpu.weight", "5"), -ELOOP);
        char *const fifo[] = { "cpu.weight", NULL };
        /* the opener's rule (cgfs_read(), cgfs_write()): not a regular file is -ELOOP */
        ck_assert_int_eq(cgfs_chown(root_fd, "cg", fifo, OWNER, OWNER), -ELOOP);
        /* a walk of every file skips it */
        ck_assert_int_eq(cgfs_chown_all(root_fd, "cg", OWNER, OWNER), 0);
        ck_assert_uint_eq(uid_of("cg/cpu.weight"), 0);
        ck_assert_uint_eq(uid_of("cg/cgroup.procs"), OWNER);
}
END_TEST

/* the backends' writer on cgroup2 checks no type, yet still never blocks, follows no symlink, writes once */
START_TEST(test_write_kernfs) {
        char p[256], *s = NULL;

        at("cg/cpu.weight", p, sizeof(p));
        ck_assert_int_eq(truncate(p, 0), 0);
        ck_assert_int_eq(cgfs_write_kernfs(root_fd, "cg", "cpu.weight", "5"), 0);
        ck_assert_int_eq(cgfs_read(root_fd, "cg", "cpu.weight", &s), 0);
        ck_assert_str_eq(s, "5");
        free(s);
        ck_assert_int_eq(cgfs_write_kernfs(root_fd, "cg/..", "cpu.weight", "5"), -EINVAL);
        ck_assert_int_eq(cgfs_write_kernfs(root_fd, "cg", "../cg/cpu.weight", "5"), -EINVAL);

        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(symlink("cgroup.procs", p), 0);
        ck_assert_int_eq(cgfs_write_kernfs(root_fd, "cg", "cpu.weight", "5"), -ELOOP);
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(mkfifo(p, 0644), 0);
        /* (CK_DEFAULT_TIMEOUT fails the test if it blocks) */
        ck_assert_int_eq(cgfs_write_kernfs(root_fd, "cg", "cpu.weight", "5"), -ENXIO);
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(mkdir(p, 0755), 0);
        ck_assert_int_eq(cgfs_write_kernfs(root_fd, "cg", "cpu.weight", "5"), -EISDIR);
}
END_TEST

static char *read_rel(const char *rel) {
        char p[256], *s = NULL;
        size_t n = 0;
        FILE *f;

        at(rel, p, sizeof(p));
        f = fopen(p, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(getdelim(&s, &n, '\0', f), 0);
        (void) fclose(f);
        return s;
}

/*
 * Kept directories: mkdirs and writes by name from them, the same as by path;
 * one that went and came back is looked up again; room for none or one
 * (RLIMIT_NOFILE) changes nothing but the way; nothing stays open after.
 */
START_TEST(test_dir_cache) {
        static const rlim_t rooms[] = { 20000, 128, 130 };     /* (128 + 2 * room): all, none, one */
        struct rlimit rl, low;
        CgfsDirCache c = CGFS_DIR_CACHE_INIT;
        unsigned fds = check_open_fds();
        char p[256], *s;

        ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        low = (struct rlimit) { .rlim_cur = rooms[_i] < rl.rlim_max ? rooms[_i] : rl.rlim_max, .rlim_max = rl.rlim_max };
        ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);

        ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, "A", 0755), 0);
        ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, "A/B", 0755), 0);
        ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, "A/B/C", 0755), 0);
        ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, "A/B/D", 0755), 0);
        ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, "A/B/D", 0755), -EEXIST);
        ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, "A/X/Y", 0755), -ENOENT);
        put("A/B/f", 0);
        ck_assert_int_eq(cgfs_write_kernfs_cached(root_fd, &c, "A/B", "f", "1"), 0);
        s = read_rel("A/B/f");
        ck_assert_str_eq(s, "1\n");
        free(s);
        ck_assert_int_eq(cgfs_write_kernfs_cached(root_fd, &c, "A/B", "nofile", "1"), -ENOENT);
        /* a hundred parents kept: the table grows twice on the way */
        for (int i = 0; i < 100; i++) {
                char d[64], e[64];
                (void) snprintf(d, sizeof(d), "A/B/C/d%d", i);
                (void) snprintf(e, sizeof(e), "A/B/C/d%d/e", i);
                ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, d, 0755), 0);
                ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, e, 0755), 0);
        }
        at("A/B/C/d99/e", p, sizeof(p));
        ck_assert_int_eq(access(p, F_OK), 0);
        at("A/B/C/d0/e", p, sizeof(p));
        ck_assert_int_eq(access(p, F_OK), 0);

        /* A/B replaced behind our back: a kept fd of the old one would find nothing */
        {
                char cmd[300];
                (void) snprintf(cmd, sizeof(cmd), "rm -r '%s/A/B/C'", dir);
                ck_assert_int_eq(system(cmd), 0);
        }
        at("A/B/D", p, sizeof(p));
        ck_assert_int_eq(rmdir(p), 0);
        at("A/B/f", p, sizeof(p));
        ck_assert_int_eq(unlink(p), 0);
        at("A/B", p, sizeof(p));
        ck_assert_int_eq(rmdir(p), 0);
        ck_assert_int_eq(mkdir(p, 0755), 0);
        put("A/B/f", 0);
        ck_assert_int_eq(cgfs_write_kernfs_cached(root_fd, &c, "A/B", "f", "2"), 0);
        s = read_rel("A/B/f");
        ck_assert_str_eq(s, "2\n");
        free(s);
        ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, "A/B/E", 0755), 0);
        ck_assert_int_eq(cgfs_mkdir_cached(root_fd, &c, "A/B/E/F", 0755), 0);
        at("A/B/E/F", p, sizeof(p));
        ck_assert_int_eq(access(p, F_OK), 0);

        cgfs_dir_cache_done(&c);
        ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        ck_assert_uint_eq(check_open_fds(), fds);
}
END_TEST

/* a socket and a directory where files were: the same errnos as the opener's, nothing changed */
START_TEST(test_socket_and_directory) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int s = -1;
        char p[256];
        char *out = NULL;

        at("cg/cgroup.threads", p, sizeof(p));
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_uint_lt(strlen(p), sizeof(sa.sun_path));
        strcpy(sa.sun_path, p);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(s, 0);
        ck_assert_int_eq(bind(s, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(cgfs_read(root_fd, "cg", "cgroup.threads", &out), -ELOOP);
        ck_assert_int_eq(cgfs_chown(root_fd, "cg", files, OWNER, OWNER), -ELOOP);
        ck_assert_uint_eq(uid_of("cg/cgroup.procs"), 0);

        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(mkdir(p, 0755), 0);
        ck_assert_int_eq(cgfs_read(root_fd, "cg", "cgroup.threads", &out), -EISDIR);
        ck_assert_int_eq(cgfs_chown(root_fd, "cg", files, OWNER, OWNER), -EISDIR);
        ck_assert_uint_eq(uid_of("cg/cgroup.procs"), 0);
        ck_assert_uint_eq(uid_of("cg"), 0);
}
END_TEST

START_TEST(test_someone_elses_file) {
        put("cg/cgroup.procs", 4000999);
        ck_assert_int_eq(cgfs_chown(root_fd, "cg", files, OWNER, OWNER), -EUCLEAN);
        ck_assert_uint_eq(uid_of("cg/cgroup.procs"), 4000999);
        ck_assert_uint_eq(uid_of("cg"), 0);
}
END_TEST

START_TEST(test_to_dir_owner) {
        char p[256];
        size_t n = 0;

        at("cg", p, sizeof(p));
        ck_assert_int_eq(chown(p, OWNER, OWNER), 0);
        put("cg/cgroup.procs", OWNER);
        ck_assert_int_eq(cgfs_chown_to_dir_owner(root_fd, "cg", NULL, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(uid_of("cg/cpu.weight"), OWNER);
        ck_assert_uint_eq(uid_of("cg/cgroup.threads"), OWNER);
        ck_assert_int_eq(cgfs_chown_to_dir_owner(root_fd, "cg", NULL, &n), 0);
        ck_assert_uint_eq(n, 0);

        /* the owner renames a hard link of a root file over one of its files */
        put("cg/memory.max", 0);
        link_victim("cg/cpu.weight", link);
        ck_assert_int_eq(cgfs_chown_to_dir_owner(root_fd, "cg", NULL, &n), -EMLINK);
        ck_assert_uint_eq(uid_of("victim"), 0);
        ck_assert_uint_eq(uid_of("cg/memory.max"), 0);     /* all or nothing */
}
END_TEST

/* the names a write made appear: only those are looked at and changed */
START_TEST(test_to_dir_owner_named) {
        char *const appeared[] = { "cpu.weight", NULL }, *const gone[] = { "cpu.weight", "cpu.max", NULL };
        char p[256];
        size_t n = 0;

        at("cg", p, sizeof(p));
        ck_assert_int_eq(chown(p, OWNER, OWNER), 0);
        ck_assert_int_eq(cgfs_chown_to_dir_owner(root_fd, "cg", appeared, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(uid_of("cg/cpu.weight"), OWNER);
        ck_assert_uint_eq(uid_of("cg/cgroup.threads"), 0);      /* not named: not looked at */

        /* a named file that is not there: nothing changes */
        put("cg/cpu.weight", 0);
        ck_assert_int_eq(cgfs_chown_to_dir_owner(root_fd, "cg", gone, &n), -ENOENT);
        ck_assert_uint_eq(uid_of("cg/cpu.weight"), 0);

        /* vetted as every file is: a hard link of root's file refused, nothing changes */
        link_victim("cg/cpu.weight", link);
        ck_assert_int_eq(cgfs_chown_to_dir_owner(root_fd, "cg", appeared, &n), -EMLINK);
        ck_assert_uint_eq(uid_of("victim"), 0);
}
END_TEST

static char *content_of(const char *rel) {
        char p[256], buf[64] = "";
        FILE *f;

        at(rel, p, sizeof(p));
        f = fopen(p, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
        fclose(f);
        return strdup(buf);
}

/* a rewrite keeps a one-link file's owner, whether or not the caller said the file was there */
START_TEST(test_put_file_existing) {
        _cleanup_close_ int dfd = -1;
        _cleanup_free_ char *c1 = NULL, *c2 = NULL, *c3 = NULL;
        struct stat st;

        ck_assert_int_eq(cgfs_open_dir(root_fd, "cg", O_PATH, &dfd), 0);
        ck_assert_int_eq(fstat(dfd, &st), 0);
        put("cg/cpu.weight", OWNER);
        ck_assert_int_eq(cgfs_put_file_at(dfd, &st, "cpu.weight", "50\n", 0644, true), 0);
        ck_assert_str_eq(c1 = content_of("cg/cpu.weight"), "50\n");
        ck_assert_uint_eq(uid_of("cg/cpu.weight"), OWNER);
        ck_assert_int_eq(cgfs_put_file_at(dfd, &st, "cpu.weight", "60\n", 0644, false), 0);
        ck_assert_str_eq(c2 = content_of("cg/cpu.weight"), "60\n");
        ck_assert_uint_eq(uid_of("cg/cpu.weight"), OWNER);

        /* said to be there, but removed by the owner meanwhile: made anew, the writer's */
        char p[256];
        at("cg/cpu.weight", p, sizeof(p));
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(cgfs_put_file_at(dfd, &st, "cpu.weight", "70\n", 0644, true), 0);
        ck_assert_str_eq(c3 = content_of("cg/cpu.weight"), "70\n");
        ck_assert_uint_eq(uid_of("cg/cpu.weight"), 0);

        /* a hard link of root's file put there: replaced, its owner not kept, the file elsewhere untouched */
        put("victim", OWNER);
        link_victim("cg/cpu.weight", link);
        ck_assert_int_eq(cgfs_put_file_at(dfd, &st, "cpu.weight", "80\n", 0644, true), 0);
        ck_assert_uint_eq(uid_of("cg/cpu.weight"), 0);
        ck_assert_uint_eq(uid_of("victim"), OWNER);
        _cleanup_free_ char *v = content_of("victim");
        ck_assert_str_eq(v, "x\n");
}
END_TEST

START_TEST(test_directory_symlink) {
        char p[256];

        at("cg2", p, sizeof(p));
        ck_assert_int_eq(symlink("cg", p), 0);
        int r;

        /* openat2(2) says ENOTDIR (O_DIRECTORY | O_NOFOLLOW), the per-component walk ELOOP */
        r = cgfs_chown(root_fd, "cg2", files, OWNER, OWNER);
        ck_assert(r == -ENOTDIR || r == -ELOOP);
        r = cgfs_chown_to_dir_owner(root_fd, "cg2", NULL, NULL);
        ck_assert(r == -ENOTDIR || r == -ELOOP);
        ck_assert_uint_eq(uid_of("cg"), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("cgroupfs-owners");

        if (geteuid() != 0) {
                printf("1..0 # SKIP changing owners needs root\n");
                return 0;
        }
        for (int walk = 0; walk < 2; walk++)
                CHECK_TCASE(s, walk ? "owners-walk" : "owners", walk ? setup_walk : setup, teardown,
                            { test_hands_over_by_fd }, { test_link_over_file, ELEMENTSOF(links) },
                            { test_fifo_never_blocks }, { test_write_kernfs }, { test_dir_cache, 3 }, { test_socket_and_directory }, { test_someone_elses_file },
                            { test_to_dir_owner }, { test_to_dir_owner_named }, { test_put_file_existing },
                            { test_directory_symlink });
        return check_run(s);
}
