/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers shared by the backend tests (header-only: each test is one binary). */

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgbypass/backend.h"
#include "cgbypass/macro.h"
#include "cgbypass/policy.h"
#include "cgbypass/strbuf.h"

static inline char *test_strdupf(const char *fmt, ...) _printf_(1, 2);
static inline char *test_strdupf(const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        ck_assert_ptr_nonnull(s);
        return s;
}

/* The file's contents, or NULL (errno set) */
/* A child process that waits until the returned fd is closed (or this process dies); its pid in @ret_pid. */
static inline int test_spawn_waiter(pid_t *ret_pid) {
        int pipefd[2];
        pid_t pid;

        ck_assert_int_eq(pipe(pipefd), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                char c;
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                (void) close(pipefd[1]);
                (void) read(pipefd[0], &c, 1);
                _exit(0);
        }
        (void) close(pipefd[0]);
        *ret_pid = pid;
        return pipefd[1];
}

static inline char *test_read_file(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        StrBuf b = STRBUF_INIT;
        char buf[4096], *s;

        if (fd < 0)
                return NULL;
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0) {
                        strbuf_done(&b);
                        return NULL;
                }
                if (n == 0)
                        break;
                strbuf_append_n(&b, buf, (size_t) n);
        }
        return strbuf_steal(&b, &s) < 0 ? NULL : s;
}

/* One write(2), as the kernel wants it. Return: 0 or -errno. */
static inline int test_write_file(const char *path, const char *value) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, value, strlen(value));
        return n < 0 ? -errno : 0;
}

static int test_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) (flag == FTW_DP ? rmdir(path) : unlink(path));
        return 0;
}

static inline void test_rm_rf(const char *path) {
        (void) nftw(path, test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline char *test_dump(const Hierarchy *h) {
        char *s = NULL;
        ck_assert_int_eq(hierarchy_dump(h, &s), 0);
        return s;
}

static inline char *test_relpath(const Cgroup *c) {
        char *p = NULL;
        ck_assert_int_eq(cgroup_path(c, &p), 0);
        if (streq(p, "/")) {
                free(p);
                return strdup(".");
        }
        memmove(p, p + 1, strlen(p));
        return p;
}

static int test_strcmp_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Names in directory DIR of one kind (regular files or directories), sorted, NULL-terminated. */
static inline char **test_list_dir(const char *dir, bool dirs) {
        DIR *d = opendir(dir);
        char **v = NULL;
        size_t n = 0;

        ck_assert_msg(d, "opendir(%s): %m", dir);
        for (struct dirent *de; (de = readdir(d));) {
                struct stat st;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                ck_assert_int_eq(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW), 0);
                if (dirs != !!S_ISDIR(st.st_mode))
                        continue;
                v = reallocarray(v, n + 2, sizeof(char *));
                ck_assert_ptr_nonnull(v);
                v[n++] = strdup(de->d_name);
                v[n] = NULL;
        }
        closedir(d);
        if (!v)
                v = calloc(1, sizeof(char *));
        if (n > 1)
                qsort(v, n, sizeof(char *), test_strcmp_ptr);
        return v;
}

static inline char *test_strv_join(char **v) {
        StrBuf b = STRBUF_INIT;
        char *s;
        for (char **i = v; *i; i++)
                strbuf_printf(&b, "%s%s", i == v ? "" : " ", *i);
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

/*
 * sim: the directory holds exactly the model: one directory per cgroup, in
 * each exactly cgroup_list_files(), readable ones with cgroup_read()'s text.
 */
static inline void test_check_sim_dir(Backend *b) {
        const Hierarchy *h = backend_get_model(b);
        Cgroup *root = hierarchy_root(h);

        for (Cgroup *c = root; c; c = cgroup_next_descendant_pre(c, root)) {
                _cleanup_free_ char *rel = test_relpath(c);
                _cleanup_free_ char *dir = test_strdupf("%s/%s", backend_get_root(b), rel);
                _cleanup_strv_free_ char **want = NULL, **have = test_list_dir(dir, false);
                _cleanup_strv_free_ char **subdirs = test_list_dir(dir, true);
                _cleanup_free_ char *ws = NULL, *hs = NULL;
                size_t nkids = 0, i = 0;

                ck_assert_int_eq(cgroup_list_files(h, c, &want), 0);
                ws = test_strv_join(want);
                hs = test_strv_join(have);
                ck_assert_msg(streq(ws, hs), "%s: files '%s', model '%s'", rel, hs, ws);

                for (char **f = want; *f; f++) {
                        _cleanup_free_ char *path = test_strdupf("%s/%s", dir, *f);
                        _cleanup_free_ char *text = NULL, *disk = NULL;
                        struct stat st;
                        mode_t mode;
                        int r;

                        ck_assert_int_eq(lstat(path, &st), 0);
                        r = cgroup_read(h, c, *f, &text);
                        mode = r == -EINVAL ? 0200 : cgroup_file_writable(h, c, *f) ? 0644 : 0444;
                        ck_assert_msg((st.st_mode & 07777) == mode, "%s: mode %o, want %o", path,
                                      st.st_mode & 07777, mode);
                        if (r < 0)
                                continue;
                        disk = test_read_file(path);
                        ck_assert_msg(disk, "read %s: %m", path);
                        ck_assert_msg(streq(disk, text), "%s: '%s', model '%s'", path, disk, text);
                }

                for (Cgroup *k = cgroup_first_child(c); k; k = cgroup_next_sibling(k))
                        nkids++;
                for (char **s = subdirs; *s; s++)
                        i++;
                ck_assert_msg(i == nkids, "%s: %zu directories, model %zu children", rel, i, nkids);
                for (char **s = subdirs; *s; s++) {
                        Cgroup *k;
                        _cleanup_free_ char *kp = streq(rel, ".") ? strdup(*s) : test_strdupf("%s/%s", rel, *s);
                        ck_assert_msg(hierarchy_lookup(h, kp, &k) == 0, "stray directory %s", kp);
                }
        }
}

/* Every path, mode and content below @root, for "nothing changed" checks. */
static inline void test_digest_into(StrBuf *b, const char *root, const char *rel) {
        _cleanup_free_ char *dir = streq(rel, "") ? strdup(root) : test_strdupf("%s/%s", root, rel);
        _cleanup_strv_free_ char **files = test_list_dir(dir, false), **dirs = test_list_dir(dir, true);

        for (char **f = files; *f; f++) {
                _cleanup_free_ char *path = test_strdupf("%s/%s", dir, *f), *text = NULL;
                struct stat st;
                ck_assert_int_eq(lstat(path, &st), 0);
                text = (st.st_mode & 0444) || geteuid() == 0 ? test_read_file(path) : NULL;
                strbuf_printf(b, "%s/%s %o %s\n", rel, *f, st.st_mode & 07777, text ? text : "?");
        }
        for (char **d = dirs; *d; d++) {
                _cleanup_free_ char *sub = streq(rel, "") ? strdup(*d) : test_strdupf("%s/%s", rel, *d);
                strbuf_printf(b, "%s/\n", sub);
                test_digest_into(b, root, sub);
        }
}

static inline char *test_digest(const char *root) {
        StrBuf b = STRBUF_INIT;
        char *s;
        test_digest_into(&b, root, "");
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

/* Fault hook: fail the k-th change (1-based) with -EIO; counts every call. */
typedef struct TestFault {
        unsigned calls;
        unsigned fail_at;
        const char *prefix;     /* only count changes starting with this ("write"), NULL: all */
} TestFault;

static inline int test_fault_fn(const char *op, void *userdata) {
        TestFault *f = userdata;
        if (f->prefix && !startswith(op, f->prefix))
                return 0;
        f->calls++;
        return f->calls == f->fail_at ? -EIO : 0;
}

/* backend_open() of @type on @root and @state, which must succeed */
static inline Backend *test_backend_open(BackendType type, const char *root, const char *state) {
        _cleanup_free_ char *msg = NULL;
        Backend *b = NULL;
        int r = backend_open(type, root, state, &b, &msg);

        ck_assert_msg(r == 0, "open: %d %s", r, strempty(msg));
        return b;
}

/* policy_plan() of @d, which must succeed, less what is in sync: the plan an apply runs */
static inline Plan *test_plan_in_sync(Backend *b, const DesiredCgroup *d, size_t n) {
        PolicyErrors e = {};
        Plan *p = NULL;
        int r = policy_plan(backend_get_model(b), d, n, &p, &e);

        ck_assert_msg(r == 0, "%d: %s", r, e.n ? e.errors[0].message : "");
        ck_assert_int_eq(plan_drop_in_sync(p, b), 0);
        return p;
}

/* a fault hook that fails nothing: it counts the changes in the unsigned at @userdata */
static inline int test_count_ops(const char *op, void *userdata) {
        (*(unsigned *) userdata)++;
        return 0;
}

/* plan_apply() with the fault hook @fn in place while it runs */
static inline int test_apply_hooked(Plan *p, Backend *b, BackendFaultFn fn, void *userdata, ApplyFailure *f) {
        int r;

        backend_set_fault_hook(b, fn, userdata);
        r = plan_apply(p, b, f);
        backend_set_fault_hook(b, NULL, NULL);
        return r;
}

/* the model's effective tree of cpu after the seeds' documentation example */
static inline void test_assert_doc_example_tree(Backend *b) {
        _cleanup_free_ char *tree = NULL;

        ck_assert_int_eq(hierarchy_effective_tree(backend_get_model(b), CONTROLLER_CPU, &tree), 0);
        ck_assert_str_eq(tree,
                         "/\n"
                         "  /A|/A/B|/A/B/C|/A/B/C/D\n"
                         "    /A/B/C/D/E|/A/B/C/D/E/F\n"
                         "    /A/B/G\n");
}
