/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Safe access to a hierarchy's files. The daemon runs as root and writes
 * files in subtrees that it hands to other users (delegation): a delegated
 * owner can put a symlink or a bind mount where we expect a cgroup, so
 * nothing below the root is ever resolved by following one.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/inotify.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <inttypes.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/fileio.h"
#include "cgbypass/hash.h"
#include "cgbypass/strbuf.h"
#include "cgroupfs.h"

/* cgroup.procs of a busy root is the largest file we read; nothing legitimate comes near this */
#define CGFS_READ_MAX (64u * 1024 * 1024)

static bool openat2_disabled;

void cgfs_set_openat2_disabled(bool b) {
        openat2_disabled = b;
}

bool cgfs_name_is_valid(const char *name) {
        return name && cgpath_name_is_valid(name, strlen(name));
}

bool cgfs_path_is_valid(const char *path) {
        return path && cgpath_verify(path, CGPATH_RELATIVE, NULL) == 0;
}

/* "PATH/FILE", or FILE for "." */
static char *join(const char *path, const char *file) {
        char *s;

        if (!file)
                return strdup(path);
        return cgpath_join(path, file, &s) < 0 ? NULL : s;
}

/* PATH/FILE beneath the root, from a cgroup's path and one of its file names, each checked */
static int file_rel(const char *path, const char *file, char **ret) {
        if (!cgfs_path_is_valid(path) || !cgfs_name_is_valid(file))
                return -EINVAL;
        *ret = join(path, file);
        return *ret ? 0 : -ENOMEM;
}

/* openat2(2) says ELOOP for a symlink where O_NOFOLLOW | O_DIRECTORY says ENOTDIR */
static int nofollow_error(int dirfd, const char *name) {
        struct stat st;
        int r = -errno;

        if (r == -ENOTDIR && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISLNK(st.st_mode))
                return -ELOOP;
        return r;
}

/* Per-component walk for kernels (or seccomp filters) without openat2(2). */
static int walk_open(int root_fd, const char *path, int flags, mode_t mode) {
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_close_ int cur = -1;
        struct stat st_root, st;
        char *save = NULL, *comp, *next;
        int fd;

        if (!copy)
                return -ENOMEM;
        if (fstat(root_fd, &st_root) < 0)
                return -errno;

        comp = strtok_r(copy, "/", &save);
        if (!comp || streq(path, ".")) {
                fd = openat(root_fd, ".", flags | O_CLOEXEC, mode);
                return fd < 0 ? -errno : fd;
        }
        for (;;) {
                int dirfd = cur >= 0 ? cur : root_fd;

                next = strtok_r(NULL, "/", &save);
                if (!next)
                        break;
                fd = openat(dirfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return nofollow_error(dirfd, comp);
                if (cur >= 0)
                        (void) close(cur);
                cur = fd;
                comp = next;
        }
        fd = openat(cur >= 0 ? cur : root_fd, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return nofollow_error(cur >= 0 ? cur : root_fd, comp);
        if (fstat(fd, &st) < 0) {
                int r = -errno;
                (void) close(fd);
                return r;
        }
        /* O_PATH | O_NOFOLLOW opens a symlink itself; RESOLVE_NO_SYMLINKS would refuse it */
        if (S_ISLNK(st.st_mode) || st.st_dev != st_root.st_dev) {
                (void) close(fd);
                return S_ISLNK(st.st_mode) ? -ELOOP : -EXDEV;
        }
        return fd;
}

/* Open @rel (already validated) beneath @root_fd. Returns the fd or -errno. */
static int open_beneath(int root_fd, const char *rel, int flags, mode_t mode) {
        if (!openat2_disabled) {
                struct open_how how = {
                        .flags = (uint64_t) (flags | O_CLOEXEC),
                        .mode = (flags & O_CREAT) ? mode : 0,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
                };

                /* EAGAIN: a concurrent rename raced the lookup; the kernel asks us to retry */
                for (int i = 0; i < 16; i++) {
                        long fd = syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
                        if (fd >= 0)
                                return (int) fd;
                        if (errno != EAGAIN)
                                break;
                }
                if (errno != ENOSYS && errno != EPERM)
                        return -errno;
                /* ENOSYS: kernel before 5.6; EPERM: a seccomp filter that does not know openat2 */
        }
        return walk_open(root_fd, rel, flags, mode);
}

int cgfs_open_root(const char *path, int *ret_fd) {
        int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

int cgfs_open_dir(int root_fd, const char *path, int flags, int *ret_fd) {
        int fd;

        if (!cgfs_path_is_valid(path))
                return -EINVAL;
        /* O_DIRECTORY refuses a FIFO before opening it; O_NONBLOCK all the same, as for every open here
         * (openat2(2) refuses it with O_PATH, which never blocks). No O_NOFOLLOW: RESOLVE_NO_SYMLINKS
         * (or the walk's own) refuses a symlink with ELOOP, where O_NOFOLLOW | O_DIRECTORY says ENOTDIR */
        if (!(flags & O_PATH))
                flags |= O_NONBLOCK;
        fd = open_beneath(root_fd, path, flags | O_DIRECTORY, 0);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

int cgfs_add_watch(int inotify_fd, int root_fd, const char *path, uint32_t mask) {
        _cleanup_close_ int fd = -1;
        char proc[64];
        int wd, r;

        r = cgfs_open_dir(root_fd, path, O_PATH, &fd);
        if (r < 0)
                return r;
        /* the directory that was vetted, by its fd: a path could be swapped under us */
        (void) snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        wd = inotify_add_watch(inotify_fd, proc, mask);
        return wd < 0 ? -errno : wd;
}

/* The parent directory of @path, which must name one below the root, and @path's last component. */
static int parent_path(const char *path, char **ret_dir, const char **ret_name) {
        const char *slash = strrchr(path, '/');

        if (!cgfs_path_is_valid(path) || streq(path, "."))
                return -EINVAL;
        *ret_name = slash ? slash + 1 : path;
        return cgpath_parent(path, ret_dir);
}

/* The directory holding the last component of @path (O_PATH), and that component. */
static int open_parent(int root_fd, const char *path, int *ret_fd, const char **ret_name) {
        _cleanup_free_ char *dir = NULL;
        int r = parent_path(path, &dir, ret_name);

        if (r >= 0)
                r = open_beneath(root_fd, dir, O_PATH | O_DIRECTORY, 0);
        if (r < 0)
                return r;
        *ret_fd = r;
        return 0;
}

/*
 * The one rule for a name where the kernel has a regular file: a directory
 * is -EISDIR, anything else that is not a regular file (a FIFO, a socket, a
 * device, a symlink) -ELOOP, as O_NOFOLLOW says for a symlink.
 */
static int file_type_error(const struct stat *st) {
        return S_ISDIR(st->st_mode) ? -EISDIR : -ELOOP;
}

int cgfs_check_cgroup2(int fd, bool *ret_writable) {
        struct statfs sfs;

        if (fstatfs(fd, &sfs) < 0)
                return -errno;
        if (sfs.f_type != CGROUP2_SUPER_MAGIC)
                return -ENOMEDIUM;
        if (ret_writable)
                *ret_writable = !(sfs.f_flags & ST_RDONLY) &&
                        faccessat(fd, "cgroup.subtree_control", W_OK, AT_EACCESS) == 0;
        return 0;
}

/*
 * Open PATH/FILE for reading or writing as a regular file only. O_NONBLOCK:
 * an owner can put a FIFO where a file was (renameat2(RENAME_EXCHANGE) in
 * its delegation), and open(2) of a FIFO waits for the other end; the type
 * is then decided on the fd, not by the name.
 */
static int open_regular_rel(int at_fd, const char *rel, int flags) {
        struct stat st;
        int fd, r;

        fd = open_beneath(at_fd, rel, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
        if (fd < 0)
                return fd == -ENXIO ? -ELOOP : fd;     /* ENXIO: a FIFO without a reader, opened to write */
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = file_type_error(&st);
        else
                return fd;
        (void) close(fd);
        return r;
}

static int open_regular(int root_fd, const char *path, const char *file, int flags) {
        _cleanup_free_ char *rel = NULL;
        int r;

        r = file_rel(path, file, &rel);
        if (r < 0)
                return r;
        return open_regular_rel(root_fd, rel, flags);
}

int cgfs_read(int root_fd, const char *path, const char *file, char **ret) {
        _cleanup_close_ int fd = open_regular(root_fd, path, file, O_RDONLY);

        if (fd < 0)
                return fd;
        return file_read_fd(fd, CGFS_READ_MAX, 0, ret);
}

int cgfs_read_at(int dir_fd, const char *file, char **ret) {
        _cleanup_close_ int fd = cgfs_name_is_valid(file) ? open_regular_rel(dir_fd, file, O_RDONLY) : -EINVAL;

        if (fd < 0)
                return fd;
        return file_read_fd(fd, CGFS_READ_MAX, 0, ret);
}

/*
 * seq_file (every cgroup file) fills a page with every record that fits: a
 * read that returned less than half of a page-sized buffer had no further
 * record to add, as no cgroup record is half a page long. Larger contents
 * (cgroup.procs of a busy cgroup) are read on until such a short read.
 */
static int read_kernfs(int at_fd, const char *rel, char **ret) {
        _cleanup_close_ int fd = -1;
        StrBuf b = STRBUF_INIT;
        char buf[4096];

        fd = open_beneath(at_fd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
        if (fd < 0)
                return fd;
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0) {
                        int r = -errno;
                        if (r == -EINTR)
                                continue;
                        strbuf_done(&b);
                        return r;
                }
                if (b.len + (size_t) n > CGFS_READ_MAX) {
                        strbuf_done(&b);
                        return -EFBIG;
                }
                strbuf_append_n(&b, buf, (size_t) n);
                if ((size_t) n < sizeof(buf) / 2)
                        break;
        }
        return strbuf_steal(&b, ret);
}

int cgfs_read_kernfs(int dir_fd, const char *file, char **ret) {
        if (!cgfs_name_is_valid(file))
                return -EINVAL;
        return read_kernfs(dir_fd, file, ret);
}

int cgfs_read_kernfs_below(int root_fd, const char *path, const char *file, char **ret) {
        _cleanup_free_ char *rel = NULL;
        int r;

        r = file_rel(path, file, &rel);
        if (r < 0)
                return r;
        return read_kernfs(root_fd, rel, ret);
}

/* one write(2): cgroupfs parses each write as a whole */
static int write_once(int fd, const char *value) {
        size_t len = strlen(value);
        ssize_t n;

        do
                n = write(fd, value, len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return (size_t) n == len ? 0 : -EIO;
}

int cgfs_write(int root_fd, const char *path, const char *file, const char *value) {
        _cleanup_close_ int fd = open_regular(root_fd, path, file, O_WRONLY);

        return fd < 0 ? fd : write_once(fd, value);
}

int cgfs_write_kernfs(int root_fd, const char *path, const char *file, const char *value) {
        _cleanup_free_ char *rel = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        r = file_rel(path, file, &rel);
        if (r < 0)
                return r;
        fd = open_beneath(root_fd, rel, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
        return fd < 0 ? fd : write_once(fd, value);
}

int cgfs_exists(int root_fd, const char *path, const char *file) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (!cgfs_path_is_valid(path) || !cgfs_name_is_valid(file))
                return -EINVAL;
        fd = open_beneath(root_fd, path, O_PATH | O_DIRECTORY, 0);
        if (fd < 0)
                return fd;
        if (fstatat(fd, file, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        return 1;
}

/* mkdir(2) of @path with @mode, or with @rmdir its rmdir(2), in the parent opened beneath @root_fd */
static int mkdir_or_rmdir(int root_fd, const char *path, bool rmdir, mode_t mode) {
        _cleanup_close_ int fd = -1;
        const char *name;
        int r;

        r = open_parent(root_fd, path, &fd, &name);
        if (r < 0)
                return r;
        r = rmdir ? unlinkat(fd, name, AT_REMOVEDIR) : mkdirat(fd, name, mode);
        return r < 0 ? -errno : 0;
}

int cgfs_mkdir(int root_fd, const char *path, mode_t mode) {
        return mkdir_or_rmdir(root_fd, path, false, mode);
}

void cgfs_dir_cache_done(CgfsDirCache *c) {
        for (size_t i = 0; c->slots && i <= c->mask; i++)
                if (c->slots[i].path) {
                        free(c->slots[i].path);
                        (void) close(c->slots[i].fd);
                }
        free(c->slots);
        *c = (CgfsDirCache) CGFS_DIR_CACHE_INIT;
}

/* the slot of the @n bytes at @path (a prefix of a longer path: nothing is copied to look) */
static CgfsDir *dir_cache_slot(const CgfsDirCache *c, const char *path, size_t n) {
        if (!c->slots)
                return NULL;
        for (size_t i = fnv1a64(path, n) & c->mask;; i = (i + 1) & c->mask)
                if (!c->slots[i].path || (strncmp(c->slots[i].path, path, n) == 0 && !c->slots[i].path[n]))
                        return &c->slots[i];
}

static int dir_cache_find(const CgfsDirCache *c, int root_fd, const char *path, size_t n) {
        if (n == 1 && path[0] == '.')
                return root_fd;
        CgfsDir *d = dir_cache_slot(c, path, n);
        return d && d->path ? d->fd : -1;
}

size_t cgfs_fd_budget(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
                return 512;
        return rl.rlim_cur > 128 ? (rl.rlim_cur - 128) / 2 : 0;
}

/* @path's fd kept in @c, which takes @path and @fd; where it is full, false: the caller keeps both */
static bool dir_cache_add(CgfsDirCache *c, char *path, int fd) {
        if (!c->slots) {
                c->max = cgfs_fd_budget();
                if (c->max == 0)
                        return false;
        }
        if (c->n >= c->max)
                return false;
        /* at most half full, for short probes */
        if (!c->slots || 2 * (c->n + 1) > c->mask + 1) {
                CgfsDirCache g = { .mask = c->slots ? 2 * c->mask + 1 : 63, .n = c->n, .max = c->max };

                g.slots = calloc(g.mask + 1, sizeof(CgfsDir));
                if (!g.slots)
                        return false;
                for (size_t i = 0; c->slots && i <= c->mask; i++)
                        if (c->slots[i].path)
                                *dir_cache_slot(&g, c->slots[i].path, strlen(c->slots[i].path)) = c->slots[i];
                free(c->slots);
                *c = g;
        }
        *dir_cache_slot(c, path, strlen(path)) = (CgfsDir) { .path = path, .fd = fd };
        c->n++;
        return true;
}

/*
 * Directory @dir, its first @n bytes (O_PATH): kept in @c, else opened by its
 * name from its kept parent (or by path) and kept. *@ret_close: the caller
 * closes it (@c full). *@ret_cached: it, or the parent it was opened from,
 * was kept by an earlier call, so an ENOENT may only mean a kept one is stale.
 */
static int dir_cache_open(int root_fd, CgfsDirCache *c, const char *dir, size_t n, bool *ret_close,
                          bool *ret_cached) {
        _cleanup_free_ char *copy = NULL;
        const char *up;
        size_t up_n;
        int fd, at;

        *ret_close = false;
        *ret_cached = true;
        fd = dir_cache_find(c, root_fd, dir, n);
        if (fd >= 0)
                return fd;
        copy = strndup(dir, n);
        if (!copy)
                return -ENOMEM;
        up_n = cgpath_parent_span(copy, n, &up);
        at = dir_cache_find(c, root_fd, up, up_n);
        *ret_cached = at >= 0 && at != root_fd;
        fd = at >= 0 ? open_beneath(at, copy + (up == copy ? up_n + 1 : 0), O_PATH | O_DIRECTORY, 0) :
                       open_beneath(root_fd, copy, O_PATH | O_DIRECTORY, 0);
        if (fd < 0)
                return fd;
        if (dir_cache_add(c, copy, fd))
                TAKE_PTR(copy);
        else
                *ret_close = true;
        return fd;
}

int cgfs_mkdir_cached(int root_fd, CgfsDirCache *c, const char *path, mode_t mode) {
        const char *dir, *name;
        size_t dir_n;
        int r = -EINVAL;

        if (!cgfs_path_is_valid(path) || streq(path, "."))
                return -EINVAL;
        /* siblings in a row: their parent is found without a copy of it */
        dir_n = cgpath_parent_span(path, strlen(path), &dir);
        name = dir == path ? path + dir_n + 1 : path;
        for (int attempt = 0; attempt < 2; attempt++) {
                bool close_it, cached;
                int fd = dir_cache_open(root_fd, c, dir, dir_n, &close_it, &cached);

                if (fd >= 0) {
                        r = mkdirat(fd, name, mode) < 0 ? -errno : 0;
                        if (close_it)
                                (void) close(fd);
                } else
                        r = fd;
                /* a kept directory went (and maybe came back) since it was opened: look it up again, once */
                if (r != -ENOENT || !cached)
                        return r;
                cgfs_dir_cache_done(c);
        }
        return r;
}

int cgfs_write_kernfs_cached(int root_fd, CgfsDirCache *c, const char *path, const char *file, const char *value) {
        int at = dir_cache_find(c, root_fd, path, strlen(path));

        if (at >= 0 && at != root_fd && cgfs_name_is_valid(file)) {
                _cleanup_close_ int fd = open_beneath(at, file, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
                if (fd >= 0)
                        return write_once(fd, value);
                if (fd != -ENOENT)
                        return fd;
                cgfs_dir_cache_done(c);         /* gone since it was kept: by path, as without */
        }
        return cgfs_write_kernfs(root_fd, path, file, value);
}

int cgfs_rmdir(int root_fd, const char *path) {
        return mkdir_or_rmdir(root_fd, path, true, 0);
}

/*
 * What the daemon may change the owner of, decided on the opened inode: a
 * regular file with one link (a hard link renamed over a cgroup's file would
 * hand over a file from elsewhere), on the hierarchy's device, owned by root
 * or by one of @from (who may own it now). Returns 0 or -errno.
 */
static int vet_owned(const struct stat *st, dev_t dev, const uid_t *from, size_t n_from) {
        if (!S_ISREG(st->st_mode))
                return file_type_error(st);
        if (st->st_nlink != 1)
                return -EMLINK;
        if (st->st_dev != dev)
                return -EXDEV;
        if (st->st_uid == 0)
                return 0;
        for (size_t i = 0; i < n_from; i++)
                if (st->st_uid == from[i])
                        return 0;
        return -EUCLEAN;
}

/* @name in @dfd as O_PATH, never following it and never blocking (an O_PATH open does not open a FIFO). */
static int open_entry(int dfd, const char *name) {
        int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* One close_range() for each run of consecutive fds: the O_PATH opens of a pass are usually one run. */
static void close_fds(int *fds, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t j = i + 1;

                if (fds[i] < 0) {
                        i++;
                        continue;
                }
                while (j < n && fds[j] == fds[j - 1] + 1)
                        j++;
                if (j - i == 1 || close_range((unsigned) fds[i], (unsigned) fds[j - 1], 0) < 0)
                        for (size_t k = i; k < j; k++)
                                (void) close(fds[k]);
                i = j;
        }
        free(fds);
}

/*
 * Vet @name in @dfd, and open it (O_PATH) when its owner is to change:
 * @ret_fd, or -1 for a file that passes and has that owner already. A file
 * that keeps its owner is looked at by name only (fstatat() sees what
 * open_entry() would open: no symlink followed, mounts crossed alike); one
 * that changes is vetted again on its fd, the inode fchownat() gets.
 */
static int vet_entry(int dfd, const char *name, dev_t dev, const uid_t *from, size_t n_from, uid_t uid, gid_t gid,
                     bool likely_changes, int *ret_fd) {
        struct stat st;
        int fd, r;

        *ret_fd = -1;
        /* (a file named because it just appeared is root's: the look by name would only cost) */
        if (!likely_changes) {
                if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                r = vet_owned(&st, dev, from, n_from);
                if (r < 0 || (st.st_uid == uid && st.st_gid == gid))
                        return r;
        }
        fd = open_entry(dfd, name);
        if (fd < 0)
                return fd;
        r = fstat(fd, &st) < 0 ? -errno : vet_owned(&st, dev, from, n_from);
        if (r < 0 || (st.st_uid == uid && st.st_gid == gid)) {   /* (someone gave it that owner since) */
                (void) close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

/*
 * Vet @files (NULL: every regular file in @dfd) first, then change owners
 * only by fd: nothing changes unless every file passes.
 */
static int chown_in_dir(int dfd, const struct stat *dst, char *const *files, bool all, bool likely_changes,
                        uid_t uid, gid_t gid, size_t *ret_changed) {
        _cleanup_strv_free_ char **names = NULL;
        int *fds = NULL;
        size_t n = 0, changed = 0;
        uid_t from[2] = { dst->st_uid, uid };
        int r = 0;

        if (all) {
                CgfsEntry *e;
                size_t ne;
                _cleanup_close_ int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                if (rfd < 0)
                        return -errno;
                r = cgfs_list_at(rfd, &e, &ne);
                if (r < 0)
                        return r;
                names = calloc(ne + 1, sizeof(char *));
                for (size_t i = 0; names && i < ne; i++)
                        if (e[i].type == CGFS_ENTRY_FILE)
                                names[n++] = TAKE_PTR(e[i].name);
                cgfs_entries_free(e, ne);
                if (!names)
                        return -ENOMEM;
                files = names;
        } else
                for (char *const *f = files; f && *f; f++)
                        n++;

        fds = malloc((n ? n : 1) * sizeof(int));
        if (!fds)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                fds[i] = -1;
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (!cgfs_name_is_valid(files[i])) {
                        r = -EINVAL;
                        break;
                }
                r = vet_entry(dfd, files[i], dst->st_dev, from, ELEMENTSOF(from), uid, gid, likely_changes, &fds[i]);
        }
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (fds[i] < 0)
                        continue;
                if (fchownat(fds[i], "", uid, gid, AT_EMPTY_PATH) < 0)
                        r = -errno;
                else
                        changed++;
        }
        close_fds(fds, n);
        if (r >= 0 && ret_changed)
                *ret_changed = changed;
        return r;
}

/* Directory @path beneath @root_fd as O_PATH, vetted on the fd: a directory on the root's device. */
static int open_owned_dir(int root_fd, const char *path, struct stat *ret_st) {
        struct stat st_root;
        int fd, r;

        r = cgfs_open_dir(root_fd, path, O_PATH, &fd);
        if (r < 0)
                return r;
        if (fstat(fd, ret_st) < 0 || fstat(root_fd, &st_root) < 0) {
                r = -errno;
                (void) close(fd);
                return r;
        }
        if (!S_ISDIR(ret_st->st_mode) || ret_st->st_dev != st_root.st_dev) {
                (void) close(fd);
                return S_ISDIR(ret_st->st_mode) ? -EXDEV : -ENOTDIR;
        }
        return fd;
}

static int chown_dir(int root_fd, const char *path, char *const *files, bool all, uid_t uid, gid_t gid) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        fd = open_owned_dir(root_fd, path, &st);
        if (fd < 0)
                return fd;
        r = chown_in_dir(fd, &st, files, all, false, uid, gid, NULL);
        if (r < 0)
                return r;
        if ((st.st_uid != uid || st.st_gid != gid) && fchownat(fd, "", uid, gid, AT_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

int cgfs_chown(int root_fd, const char *path, char *const *files, uid_t uid, gid_t gid) {
        return chown_dir(root_fd, path, files, false, uid, gid);
}

int cgfs_chown_all(int root_fd, const char *path, uid_t uid, gid_t gid) {
        return chown_dir(root_fd, path, NULL, true, uid, gid);
}

int cgfs_chown_to_dir_owner(int root_fd, const char *path, char *const *files, size_t *ret_changed) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        fd = open_owned_dir(root_fd, path, &st);
        if (fd < 0)
                return fd;
        return chown_in_dir(fd, &st, files, !files, !!files, st.st_uid, st.st_gid, ret_changed);
}

void cgfs_entries_free(CgfsEntry *e, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(e[i].name);
        free(e);
}

static int entry_ino_cmp(const void *a, const void *b) {
        const CgfsEntry *x = a, *y = b;
        if (x->ino != y->ino)
                return x->ino < y->ino ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* the largest record getdents64(2) can return: a name of NAME_MAX bytes */
#define DIRENT64_MAX ((offsetof(struct dirent64, d_name) + NAME_MAX + 1 + 7) / 8 * 8)

/*
 * @kernfs: kernfs_fop_readdir() fills the buffer until a record does not
 * fit, so a result with room left for the largest record was the last one:
 * one getdents64(2) for a cgroup instead of two. @dirs_only: the scan needs
 * the child cgroups, not the ~25 file names it would copy and sort.
 */
static int list_at(int dir_fd, bool kernfs, bool dirs_only, CgfsEntry **ret, size_t *ret_n) {
        CgfsEntry *v = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        /* getdents64(2) straight: fdopendir(3) costs an fstat(2) and an fcntl(2) per directory */
        union {
                struct dirent64 de;
                char raw[16384];
        } buf;

        for (;;) {
                ssize_t got = getdents64(dir_fd, buf.raw, sizeof(buf.raw));
                if (got < 0) {
                        r = -errno;
                        break;
                }
                if (got == 0)
                        break;
                for (ssize_t off = 0; off < got && r >= 0;) {
                        struct dirent64 *de = (struct dirent64 *) (buf.raw + off);
                        struct stat st;

                        off += de->d_reclen;
                        if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                                continue;
                        unsigned char t = de->d_type;
                        if (t == DT_UNKNOWN) {
                                if (fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                                        if (errno != ENOENT)
                                                r = -errno;
                                        continue;
                                }
                                t = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_LNK;
                        }
                        if (dirs_only && t != DT_DIR)
                                continue;
                        if (n == cap) {
                                CgfsEntry *nv = reallocarray(v, cap = cap ? cap * 2 : 32, sizeof(CgfsEntry));
                                if (!nv) {
                                        r = -ENOMEM;
                                        break;
                                }
                                v = nv;
                        }
                        v[n] = (CgfsEntry) {
                                .name = strdup(de->d_name),
                                .ino = de->d_ino,
                                .type = t == DT_REG ? CGFS_ENTRY_FILE : t == DT_DIR ? CGFS_ENTRY_DIR :
                                                                                      CGFS_ENTRY_OTHER,
                        };
                        if (!v[n].name) {
                                r = -ENOMEM;
                                break;
                        }
                        n++;
                }
                if (r < 0)
                        break;
                if (kernfs && (size_t) got + DIRENT64_MAX <= sizeof(buf.raw))
                        break;
        }
        if (r < 0) {
                cgfs_entries_free(v, n);
                return r;
        }
        if (n > 1)
                qsort(v, n, sizeof(CgfsEntry), entry_ino_cmp);
        *ret = v;
        *ret_n = n;
        return 0;
}

int cgfs_list_at(int dir_fd, CgfsEntry **ret, size_t *ret_n) {
        return list_at(dir_fd, false, false, ret, ret_n);
}

int cgfs_list_kernfs_dirs_at(int dir_fd, CgfsEntry **ret, size_t *ret_n) {
        return list_at(dir_fd, true, true, ret, ret_n);
}

int cgfs_list_dirs_at(int dir_fd, CgfsEntry **ret, size_t *ret_n) {
        return list_at(dir_fd, false, true, ret, ret_n);
}

int cgfs_list(int root_fd, const char *path, CgfsEntry **ret, size_t *ret_n) {
        _cleanup_close_ int fd = -1;
        int r;

        r = cgfs_open_dir(root_fd, path, O_RDONLY, &fd);
        if (r < 0)
                return r;
        return cgfs_list_at(fd, ret, ret_n);
}

static int write_all(int fd, const char *s) {
        size_t len = strlen(s);

        while (len > 0) {
                ssize_t n = write(fd, s, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                s += n;
                len -= (size_t) n;
        }
        return 0;
}

bool cgfs_is_tmp_name(const char *name) {
        size_t n = strlen(CGFS_TMP_PREFIX);

        if (!startswith(name, CGFS_TMP_PREFIX) || strlen(name) != n + 16)
                return false;
        return strspn(name + n, "0123456789abcdef") == 16;
}

/*
 * A new temporary file in @dfd, under a name of our own: a fixed name can be
 * taken by the directory's owner (a directory of that name, a FIFO), and the
 * replacement of a file must not depend on what the owner left.
 */
static int open_tmp(int dfd, char name[static CGFS_TMP_NAME_MAX]) {
        /* names from a counter under a random key: one getrandom(2) per process, not one per name */
        static uint64_t counter, key[2];
        static bool keyed;

        if (!keyed)
                keyed = getrandom(key, sizeof(key), GRND_NONBLOCK) == (ssize_t) sizeof(key);
        for (int i = 0; i < 64; i++) {
                uint64_t x;
                int fd;

                ++counter;
                if (keyed)
                        x = siphash24_u64(key, counter);
                else if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t) sizeof(x))
                        x = ((uint64_t) getpid() << 32) ^ (uint64_t) time(NULL) ^ (counter * 0x9e3779b97f4a7c15u);
                (void) snprintf(name, CGFS_TMP_NAME_MAX, CGFS_TMP_PREFIX "%016" PRIx64, x);
                fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd >= 0 || errno != EEXIST)
                        return fd < 0 ? -errno : fd;
        }
        return -EEXIST;
}

/* who we are does not change while we run; a rewrite of every file would ask each time */
bool cgfs_running_as_root(void) {
        static int root = -1;

        if (root < 0)
                root = geteuid() == 0;
        return root;
}

int cgfs_put_file_at(int dfd, const struct stat *st_dir, const char *file, const char *content, mode_t mode,
                     unsigned flags) {
        _cleanup_close_ int fd = -1;
        char tmp[CGFS_TMP_NAME_MAX];
        struct stat old;
        bool replace = false;
        /* kernfs: a new file is the writer's (cgroup_kn_set_ugid(): its fsuid), a rewritten one keeps
         * its owner; below a delegation root the daemon gives the files to the owner (ownership.c), or
         * has them made as its (CGFS_PUT_DIR_OWNER). Only root changes owners (a sim run by a user owns
         * what it makes, and never could keep another's owner). */
        bool chown_to_old = false, chown_to_dir = false;
        int r;

        if (!cgfs_name_is_valid(file))
                return -EINVAL;
        /* a rewrite looks first, sparing the create that would fail; a file gone meanwhile is made anew */
        if (flags & CGFS_PUT_EXISTING) {
                if (fstatat(dfd, file, &old, AT_SYMLINK_NOFOLLOW) >= 0)
                        replace = true;
                else if (errno != ENOENT)
                        return -errno;
        }
        if (!replace) {
                /* 0600 and then fchmod(), not made with @mode: the umask, or a default ACL of the directory
                 * (its owner's, below a delegation), would narrow that */
                fd = openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0) {
                        if (errno != EEXIST)
                                return -errno;
                        replace = true;
                        if (fstatat(dfd, file, &old, AT_SYMLINK_NOFOLLOW) < 0)
                                return -errno;
                } else
                        /* by the fd of the file just made: no name to vet, no window for a planted link */
                        chown_to_dir = (flags & CGFS_PUT_DIR_OWNER) && cgfs_running_as_root() &&
                                       (st_dir->st_uid != 0 || st_dir->st_gid != getegid());
        }
        if (replace) {
                /* only a regular file of one link has an owner worth keeping: a hard link renamed
                 * over a cgroup's file would hand over the owner of a file from elsewhere */
                if (S_ISREG(old.st_mode) && old.st_nlink == 1 && old.st_dev == st_dir->st_dev && cgfs_running_as_root())
                        chown_to_old = old.st_uid != 0 || old.st_gid != getegid();
                fd = open_tmp(dfd, tmp);
                if (fd < 0)
                        return fd;
        }
        r = write_all(fd, content);
        if (r >= 0 && fchmod(fd, mode) < 0)
                r = -errno;
        /* by the fd: the name may be an owner's by now. Interface files have no set-id bits for
         * fchown() to drop. */
        if (r >= 0 && chown_to_old && fchown(fd, old.st_uid, old.st_gid) < 0)
                r = -errno;     /* (after the fchmod: that of another's file needs CAP_FOWNER, which the unit lacks) */
        if (r >= 0 && chown_to_dir && fchown(fd, st_dir->st_uid, st_dir->st_gid) < 0)
                r = -errno;
        if (r >= 0 && replace && renameat(dfd, tmp, dfd, file) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dfd, replace ? tmp : file, 0);
        return r;
}

int cgfs_file_stat_at(int dfd, const char *file, struct stat *ret) {
        if (!cgfs_name_is_valid(file))
                return -EINVAL;
        return fstatat(dfd, file, ret, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int cgfs_unlink_at(int dfd, const char *file) {
        if (!cgfs_name_is_valid(file))
                return -EINVAL;
        return unlinkat(dfd, file, 0) < 0 ? -errno : 0;
}

