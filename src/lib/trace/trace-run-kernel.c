/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/fileio.h"
#include "cgbypass/strbuf.h"
#include "trace-internal.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/*
 * Runs a trace on a real cgroup2 directory. Every operation is one system
 * call (or one open plus one read/write) relative to a directory fd of DIR,
 * so the errno printed is the kernel's own. Afterwards the directory is left
 * as it was found, so thousands of traces can run in one boot.
 */

typedef struct Dirent {
        char *path;             /* relative to DIR, "." for DIR */
        ino_t ino;              /* kernfs node ids are never reused: a re-created name is new */
        unsigned depth;
        size_t parent;          /* index in the list, (size_t) -1 for "." */
} Dirent;

typedef struct DirList {
        Dirent *v;
        size_t n;
} DirList;

typedef struct KernelRun {
        int dirfd;              /* O_PATH of DIR */
        int pipe_r, pipe_w;     /* children block reading pipe_r; they get EOF when we die */
        pid_t *children;
        size_t n_children;
        DirList before;
        char *saved_subtree_control;
        char *saved_max_depth;
        char *saved_max_descendants;
} KernelRun;

static volatile sig_atomic_t caught_signal;

int trace_kernel_caught_signal(void) {
        return caught_signal;
}

static void on_signal(int sig) {
        caught_signal = sig;
}

static bool kernel_interrupted(void *userdata) {
        return caught_signal != 0;
}

/* "PATH/FILE", or "FILE" for "." */
static char *join(const char *path, const char *file) {
        char *s;

        return cgpath_join(path, file, &s) < 0 ? NULL : s;
}

static int read_at(int dirfd, const char *rel, char **ret) {
        _cleanup_close_ int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return file_read_fd(fd, SIZE_MAX, 0, ret);
}

/* one open(2) and exactly one write(2), as the trace format promises */
static int write_at(int dirfd, const char *rel, const char *content) {
        _cleanup_close_ int fd = openat(dirfd, rel, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        do
                n = write(fd, content, strlen(content));
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : 0;
}

static void dirlist_done(DirList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i].path);
        free(l->v);
        *l = (DirList) {};
}

static int dirent_ino_cmp(const void *a, const void *b) {
        const Dirent *x = a, *y = b;
        return (x->ino > y->ino) - (x->ino < y->ino);
}

/*
 * Every cgroup below DIR in pre-order, children in creation order: kernfs
 * hands out increasing inode numbers, and the model keeps children in
 * creation order, so both walk the same way.
 */
static int dirlist_walk(int dirfd, size_t self, DirList *l) {
        _cleanup_free_ Dirent *kids = NULL;
        size_t nkids = 0;
        const char *path = l->v[self].path;
        int fd;

        fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        DIR *d = fdopendir(fd);
        if (!d) {
                int r = -errno;
                (void) close(fd);
                return r;
        }
        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                Dirent *v = reallocarray(kids, nkids + 1, sizeof(Dirent));
                if (!v)
                        goto oom;
                kids = v;
                kids[nkids] = (Dirent) {
                        .path = join(path, de->d_name),
                        .ino = de->d_ino,
                        .depth = l->v[self].depth + 1,
                        .parent = self,
                };
                if (!kids[nkids].path)
                        goto oom;
                nkids++;
        }
        if (errno != 0) {
                int r = -errno;
                (void) closedir(d);
                for (size_t i = 0; i < nkids; i++)
                        free(kids[i].path);
                return r;
        }
        (void) closedir(d);

        if (nkids > 1)
                qsort(kids, nkids, sizeof(Dirent), dirent_ino_cmp);
        for (size_t i = 0; i < nkids; i++) {
                Dirent *v = reallocarray(l->v, l->n + 1, sizeof(Dirent));
                if (!v) {
                        for (size_t j = i; j < nkids; j++)
                                free(kids[j].path);
                        return -ENOMEM;
                }
                l->v = v;
                l->v[l->n] = kids[i];
                int r = dirlist_walk(dirfd, l->n++, l);
                if (r < 0) {
                        for (size_t j = i + 1; j < nkids; j++)
                                free(kids[j].path);
                        return r;
                }
        }
        return 0;

oom:
        (void) closedir(d);
        for (size_t i = 0; i < nkids; i++)
                free(kids[i].path);
        return -ENOMEM;
}

static int dirlist_get(int dirfd, DirList *ret) {
        DirList l = {};
        struct stat st;
        int r;

        if (fstat(dirfd, &st) < 0)
                return -errno;
        l.v = calloc(1, sizeof(Dirent));
        if (!l.v)
                return -ENOMEM;
        l.v[0] = (Dirent) { .path = strdup("."), .ino = st.st_ino, .parent = (size_t) -1 };
        l.n = 1;
        if (!l.v[0].path) {
                dirlist_done(&l);
                return -ENOMEM;
        }
        r = dirlist_walk(dirfd, 0, &l);
        if (r < 0) {
                dirlist_done(&l);
                return r;
        }
        *ret = l;
        return 0;
}

/* deepest first */
static int dirent_depth_cmp(const void *a, const void *b) {
        const Dirent *x = *(Dirent *const *) a, *y = *(Dirent *const *) b;
        return (x->depth < y->depth) - (x->depth > y->depth);
}

static bool dirlist_has(const DirList *l, const Dirent *e) {
        for (size_t i = 0; i < l->n; i++)
                if (l->v[i].ino == e->ino && streq(l->v[i].path, e->path))
                        return true;
        return false;
}

/* ---- processes ---- */

static int child_add(KernelRun *k, pid_t pid) {
        pid_t *v = reallocarray(k->children, k->n_children + 1, sizeof(pid_t));
        if (!v)
                return -ENOMEM;
        v[k->n_children++] = pid;
        k->children = v;
        return 0;
}

static void child_reap(KernelRun *k, pid_t pid) {
        (void) kill(pid, SIGKILL);
        /* the kernel updates the populated state in do_exit(), before wait returns */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        for (size_t i = 0; i < k->n_children; i++)
                if (k->children[i] == pid) {
                        k->children[i] = k->children[--k->n_children];
                        break;
                }
}

static int child_spawn(KernelRun *k, pid_t *ret) {
        pid_t parent = getpid();
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                char c;

                /* async-signal-safe only from here on; never return into the caller */
                (void) close(k->pipe_w);
                (void) signal(SIGINT, SIG_DFL);
                (void) signal(SIGTERM, SIG_DFL);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(0);
                while (read(k->pipe_r, &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        int r = child_add(k, pid);
        if (r < 0) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return r;
        }
        *ret = pid;
        return 0;
}

static int parse_pids(const char *text, long **ret, size_t *ret_n) {
        _cleanup_free_ long *v = NULL;
        size_t n = 0;

        for (const char *s = text; *s;) {
                char *end;
                errno = 0;
                long p = strtol(s, &end, 10);
                if (errno != 0 || end == s || (*end != '\n' && *end != '\0'))
                        return -EBADMSG;
                long *w = reallocarray(v, n + 1, sizeof(long));
                if (!w)
                        return -ENOMEM;
                v = w;
                v[n++] = p;
                s = *end ? end + 1 : end;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

/* ---- tree ---- */

static int kernel_tree(KernelRun *k, Controller ctrl, TraceOutcome *o, char **reterr_msg) {
        _cleanup_free_ const char **paths = NULL;
        _cleanup_free_ int *parents = NULL, *ids = NULL, *pids = NULL;
        DirList l = {};
        int r;

        /*
         * Killed csses stay in debug.csses until they are offlined, which
         * happens asynchronously. A write that parses to nothing still goes
         * through cgroup_kn_lock_live(kn, true), whose
         * cgroup_lock_and_drain_offline() waits for every dying css below
         * DIR. (An empty write would not: cgroup_file_write() returns before
         * calling the handler when nbytes is 0.)
         */
        r = write_at(k->dirfd, "cgroup.subtree_control", " ");
        if (r < 0) {
                *reterr_msg = trace_strdupf("Failed to drain dying csses through cgroup.subtree_control: %s",
                                            strerror(-r));
                return r;
        }

        r = dirlist_get(k->dirfd, &l);
        if (r < 0) {
                *reterr_msg = trace_strdupf("Failed to list the cgroups: %s", strerror(-r));
                return r;
        }
        paths = calloc(l.n, sizeof(char *));
        parents = calloc(l.n, sizeof(int));
        ids = calloc(l.n, sizeof(int));
        pids = calloc(l.n, sizeof(int));
        if (!paths || !parents || !ids || !pids) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < l.n; i++) {
                _cleanup_free_ char *rel = join(l.v[i].path, "debug.csses"), *text = NULL;
                if (!rel) {
                        r = -ENOMEM;
                        goto finish;
                }
                r = read_at(k->dirfd, rel, &text);
                if (r < 0) {
                        *reterr_msg = trace_strdupf("Failed to read '%s' (tree needs the debug controller: "
                                                    "boot with cgroup_debug): %s", rel, strerror(-r));
                        goto finish;
                }
                r = trace_csses_find(text, controller_to_string(ctrl), &ids[i], &pids[i]);
                if (r < 0) {
                        *reterr_msg = trace_strdupf("Failed to parse '%s'", rel);
                        goto finish;
                }
                /* the runner's relative paths become absolute ones with "/" = DIR */
                char *abs;
                r = cgpath_absolute(l.v[i].path, &abs);
                if (r < 0)
                        goto finish;
                free(l.v[i].path);
                l.v[i].path = abs;
                paths[i] = l.v[i].path;
                parents[i] = i == 0 ? -1 : (int) l.v[i].parent;
        }

        r = trace_tree_from_csses(l.n, paths, parents, ids, pids, &o->text);
        if (r == -EINVAL) {
                o->error = EINVAL;      /* no css at all: not a cgroup2 controller here */
                r = 0;
        }

finish:
        dirlist_done(&l);
        return r;
}

/* ---- operations ---- */

static int kernel_run_op(void *userdata, const TraceOp *op, long proc, TraceOutcome *o, char **reterr_msg) {
        KernelRun *k = userdata;
        _cleanup_free_ char *rel = NULL, *procs_rel = NULL;
        int r = 0;

        if (op->file) {
                rel = join(op->path, op->file);
                if (!rel)
                        return -ENOMEM;
        }
        if (op->type == TRACE_SPAWN || op->type == TRACE_MOVE) {
                procs_rel = join(op->path, "cgroup.procs");
                if (!procs_rel)
                        return -ENOMEM;
        }

        switch (op->type) {
        case TRACE_MKDIR:
                r = mkdirat(k->dirfd, op->path, 0755) < 0 ? -errno : 0;
                break;
        case TRACE_RMDIR:
                /* "." gives EINVAL from the VFS, as the model says for its root */
                r = unlinkat(k->dirfd, op->path, AT_REMOVEDIR) < 0 ? -errno : 0;
                break;
        case TRACE_WRITE:
                r = write_at(k->dirfd, rel, op->content);
                break;
        case TRACE_READ: {
                _cleanup_free_ char *text = NULL;

                r = read_at(k->dirfd, rel, &text);
                if (r < 0)
                        break;
                if (streq(op->file, "cgroup.procs") || streq(op->file, "cgroup.threads")) {
                        r = parse_pids(text, &o->procs, &o->n_procs);
                        if (r < 0) {
                                *reterr_msg = trace_strdupf("Failed to parse '%s'", rel);
                                return r;
                        }
                        o->has_procs = true;
                } else
                        o->text = TAKE_PTR(text);
                break;
        }
        case TRACE_EXISTS: {
                struct stat st;

                /* interface files only: a child cgroup's directory is not a file of its parent */
                if (fstatat(k->dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT && errno != ENOTDIR)
                                r = -errno;
                } else
                        o->exists = S_ISREG(st.st_mode);
                break;
        }
        case TRACE_SPAWN: {
                pid_t pid = 0;
                char buf[32];

                r = child_spawn(k, &pid);
                if (r < 0) {
                        *reterr_msg = trace_strdupf("Failed to start a process: %s", strerror(-r));
                        return r;
                }
                (void) snprintf(buf, sizeof(buf), "%d", (int) pid);
                r = write_at(k->dirfd, procs_rel, buf);
                if (r < 0)
                        child_reap(k, pid);
                else
                        o->spawned = pid;
                break;
        }
        case TRACE_MOVE: {
                char buf[32];

                (void) snprintf(buf, sizeof(buf), "%ld", proc);
                r = write_at(k->dirfd, procs_rel, buf);
                break;
        }
        case TRACE_KILL:
                child_reap(k, (pid_t) proc);
                break;
        case TRACE_TREE:
                return kernel_tree(k, op->controller, o, reterr_msg);
        default:
                return -EINVAL;
        }

        o->error = r < 0 ? -r : 0;
        return 0;
}

static const TraceBackend kernel_backend = {
        .run = kernel_run_op,
        .interrupted = kernel_interrupted,
};

/* ---- setup and cleanup ---- */

static char *strip_newline(char *s) {
        size_t n = strlen(s);
        if (n > 0 && s[n - 1] == '\n')
                s[n - 1] = '\0';
        return s;
}

/* the next token at *@p, "name" (enabled) or "#name" (bypassed), blanks and newlines between them: false at
 * the end; else *@tok and *@len, the name without its '#' in *@name and *@name_len, and *@p past it */
static bool next_mask_token(const char **p, const char **tok, size_t *len, const char **name, size_t *name_len) {
        *p += strspn(*p, " \n");
        *len = strcspn(*p, " \n");
        if (*len == 0)
                return false;
        *tok = *p;
        *name = **p == '#' ? *p + 1 : *p;
        *name_len = *len - (size_t) (*name - *p);
        *p += *len;
        return true;
}

/* the one write that turns DIR's subtree_control from @now back into @want */
static char *subtree_control_restore_cmd(const char *now, const char *want) {
        StrBuf b = STRBUF_INIT;
        char *ret = NULL;

        /* compare whole tokens */
        for (int pass = 0; pass < 2; pass++) {
                const char *from = pass == 0 ? now : want, *other = pass == 0 ? want : now, *tok, *name;
                size_t n, nlen;

                for (const char *s = from; next_mask_token(&s, &tok, &n, &name, &nlen);) {
                        const char *ttok, *tname;
                        bool same = false, named = false;
                        size_t m, tnlen;

                        for (const char *t = other; next_mask_token(&t, &ttok, &m, &tname, &tnlen);)
                                if (tnlen == nlen && strncmp(tname, name, nlen) == 0) {
                                        named = true;
                                        same = m == n && strncmp(ttok, tok, n) == 0;
                                }
                        if (pass == 0 && !named)
                                strbuf_printf(&b, "%s-%.*s", b.len ? " " : "", (int) nlen, name);
                        else if (pass == 1 && !same)
                                strbuf_printf(&b, "%s%c%.*s", b.len ? " " : "", *tok == '#' ? '#' : '+',
                                              (int) nlen, name);
                }
        }
        if (strbuf_steal(&b, &ret) < 0)
                return NULL;
        return ret;
}

static int kernel_cleanup(KernelRun *k, char **reterr_msg) {
        DirList now = {};
        int r, ret = 0;

        while (k->n_children > 0)
                child_reap(k, k->children[k->n_children - 1]);

        r = dirlist_get(k->dirfd, &now);
        if (r < 0) {
                if (reterr_msg && !*reterr_msg)
                        *reterr_msg = trace_strdupf("Failed to list the cgroups for cleanup: %s", strerror(-r));
                return r;
        }
        /* deepest first, so children go before their parents */
        _cleanup_free_ Dirent **gone = calloc(now.n, sizeof(Dirent *));
        size_t ngone = 0;
        if (!gone) {
                dirlist_done(&now);
                return -ENOMEM;
        }
        for (size_t i = 1; i < now.n; i++)
                if (!dirlist_has(&k->before, &now.v[i]))
                        gone[ngone++] = &now.v[i];
        qsort(gone, ngone, sizeof(Dirent *), dirent_depth_cmp);
        for (size_t i = 0; i < ngone; i++)
                if (unlinkat(k->dirfd, gone[i]->path, AT_REMOVEDIR) < 0 && errno != ENOENT && ret == 0) {
                        ret = -errno;
                        if (reterr_msg && !*reterr_msg)
                                *reterr_msg = trace_strdupf("Failed to remove '%s' during cleanup: %s",
                                                            gone[i]->path, strerror(-ret));
                }
        dirlist_done(&now);

        if (k->saved_subtree_control) {
                _cleanup_free_ char *cur = NULL, *cmd = NULL;
                r = read_at(k->dirfd, "cgroup.subtree_control", &cur);
                if (r >= 0) {
                        cmd = subtree_control_restore_cmd(cur, k->saved_subtree_control);
                        if (!cmd)
                                r = -ENOMEM;
                        else if (*cmd)
                                r = write_at(k->dirfd, "cgroup.subtree_control", cmd);
                }
                if (r < 0 && ret == 0) {
                        ret = r;
                        if (reterr_msg && !*reterr_msg)
                                *reterr_msg = trace_strdupf("Failed to restore cgroup.subtree_control ('%s'): %s",
                                                            strempty(cmd), strerror(-r));
                }
        }
        const struct {
                const char *file, *value;
        } knobs[] = {
                { "cgroup.max.depth", k->saved_max_depth },
                { "cgroup.max.descendants", k->saved_max_descendants },
        };
        for (size_t i = 0; i < ELEMENTSOF(knobs); i++) {
                if (!knobs[i].value)
                        continue;
                r = write_at(k->dirfd, knobs[i].file, knobs[i].value);
                if (r < 0 && ret == 0) {
                        ret = r;
                        if (reterr_msg && !*reterr_msg)
                                *reterr_msg = trace_strdupf("Failed to restore %s: %s", knobs[i].file,
                                                            strerror(-r));
                }
        }
        return ret;
}

int trace_kernel_root_settled(const char *dir) {
        _cleanup_close_ int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *masks = NULL, *sc = NULL;
        struct stat st;
        int r;

        if (dirfd < 0)
                return -errno;
        /* not the root: its parent has enabled something, as the --nonroot model's has */
        if (fstatat(dirfd, "cgroup.type", &st, 0) >= 0)
                return 1;
        r = read_at(dirfd, "debug.masks", &masks);
        if (r >= 0) {
                /* kernel/cgroup/debug.c: "%-17s: " then the names; cgroup_debug makes debug implicit */
                const char *p = strstr(masks, "subtree_ss_mask");
                if (!p || !(p = strchr(p, ':')))
                        return -EBADMSG;
                return p[1] == ' ' && p[2] != '\n' && p[2] != '\0';
        }
        if (r != -ENOENT)
                return r;
        r = read_at(dirfd, "cgroup.subtree_control", &sc);
        if (r < 0)
                return r;
        return !streq(sc, "") && !streq(sc, "\n");
}

int trace_run_kernel(const Trace *t, const char *dir, FILE *out, char **reterr_msg) {
        KernelRun k = { .dirfd = -1, .pipe_r = -1, .pipe_w = -1 };
        struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART }, old_int, old_term;
        _cleanup_free_ char *msg = NULL;
        struct statfs sfs;
        int pipefd[2], r;

        caught_signal = 0;

        k.dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (k.dirfd < 0) {
                r = -errno;
                msg = trace_strdupf("Failed to open '%s': %s", dir, strerror(-r));
                goto out_nocleanup;
        }
        if (fstatfs(k.dirfd, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
                r = -ENOTDIR;
                msg = trace_strdupf("'%s' is not a directory of a cgroup2 file system", dir);
                goto out_nocleanup;
        }
        r = dirlist_get(k.dirfd, &k.before);
        if (r < 0) {
                msg = trace_strdupf("Failed to list the cgroups in '%s': %s", dir, strerror(-r));
                goto out_nocleanup;
        }
        r = read_at(k.dirfd, "cgroup.subtree_control", &k.saved_subtree_control);
        if (r < 0) {
                msg = trace_strdupf("Failed to read '%s/cgroup.subtree_control': %s", dir, strerror(-r));
                goto out_nocleanup;
        }
        if (read_at(k.dirfd, "cgroup.max.depth", &k.saved_max_depth) >= 0)
                strip_newline(k.saved_max_depth);
        if (read_at(k.dirfd, "cgroup.max.descendants", &k.saved_max_descendants) >= 0)
                strip_newline(k.saved_max_descendants);
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                r = -errno;
                msg = trace_strdupf("Failed to create a pipe: %s", strerror(-r));
                goto out_nocleanup;
        }
        k.pipe_r = pipefd[0];
        k.pipe_w = pipefd[1];

        (void) sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGINT, &sa, &old_int);
        (void) sigaction(SIGTERM, &sa, &old_term);

        r = trace_execute(t, &kernel_backend, &k, out, &msg);

        char *cleanup_msg = NULL;
        int q = kernel_cleanup(&k, &cleanup_msg);
        if (q < 0 && (r >= 0 || r == -EINTR)) {
                free(msg);
                msg = cleanup_msg;
                r = q;
        } else
                free(cleanup_msg);

        (void) sigaction(SIGINT, &old_int, NULL);
        (void) sigaction(SIGTERM, &old_term, NULL);
        if (r == -EINTR && !msg)
                msg = trace_strdupf("Interrupted by %s", strsignal(caught_signal));

out_nocleanup:
        if (k.pipe_r >= 0)
                (void) close(k.pipe_r);
        if (k.pipe_w >= 0)
                (void) close(k.pipe_w);
        if (k.dirfd >= 0)
                (void) close(k.dirfd);
        dirlist_done(&k.before);
        free(k.children);
        free(k.saved_subtree_control);
        free(k.saved_max_depth);
        free(k.saved_max_descendants);
        if (r < 0 && reterr_msg)
                *reterr_msg = TAKE_PTR(msg);
        return r < 0 ? r : 0;
}
