/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The only code that opens files of a managed hierarchy (a cgroup2 mount or
 * a sim directory). Every path is resolved beneath a directory fd of the
 * root with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV); ".." is refused before the kernel
 * sees it. Paths are trace-relative ("." or "A/B"); FILE is one name.
 * Every function returns 0 or a negative errno.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cgbypass/macro.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Whether @path is "." or names without "", ".", ".." or a leading or trailing '/'. */
bool cgfs_path_is_valid(const char *path);
/* Whether @name is one directory entry name (no '/', not "", ".", ".."). */
bool cgfs_name_is_valid(const char *name);

/* Open the root (the administrator's path, as given) as O_PATH | O_DIRECTORY. */
int cgfs_open_root(const char *path, int *ret_fd);

/* Open @path (a directory) beneath @root_fd with @flags (O_PATH, O_RDONLY, ...). */
int cgfs_open_dir(int root_fd, const char *path, int flags, int *ret_fd);

/*
 * inotify_add_watch(2) of directory @path beneath @root_fd, resolved as
 * cgfs_open_dir() does (no symlink, no other mount). Return: the watch
 * descriptor or -errno.
 */
int cgfs_add_watch(int inotify_fd, int root_fd, const char *path, uint32_t mask);

/* Whether @fd is on cgroup2 (-ENOMEDIUM if not), and writable by us (@ret_writable). */
int cgfs_check_cgroup2(int fd, bool *ret_writable);

/*
 * The whole contents of PATH/FILE (one open, reads until EOF). Opened with
 * O_NONBLOCK and checked on the fd: anything but a regular file (a FIFO an
 * owner put there) is -ELOOP, at once.
 */
int cgfs_read(int root_fd, const char *path, const char *file, char **ret);
/* The same for FILE, a valid name, in the directory @dir_fd (opened with cgfs_open_dir()). */
int cgfs_read_at(int dir_fd, const char *file, char **ret);

/*
 * The kernel scan's reader: FILE in the cgroup directory @dir_fd (from
 * cgfs_open_dir()), on a hierarchy checked to be cgroup2 (cgfs_check_cgroup2(),
 * and RESOLVE_NO_XDEV keeps it there). kernfs has no FIFOs and no symlinks,
 * so the type is not checked on the fd; a read shorter than half its buffer
 * is the end (see the definition). Three system calls for a small file.
 */
int cgfs_read_kernfs(int dir_fd, const char *file, char **ret);

/* cgfs_read_kernfs() of PATH/FILE beneath @root_fd, without a directory fd: one open(2) fewer */
int cgfs_read_kernfs_below(int root_fd, const char *path, const char *file, char **ret);

/* One open(2) and exactly one write(2) of @value to PATH/FILE, no newline added; -ELOOP as cgfs_read(). */
int cgfs_write(int root_fd, const char *path, const char *file, const char *value);

/* cgfs_write() on a hierarchy checked to be cgroup2, as cgfs_read_kernfs(): no type check on the fd (one fstat(2) fewer) */
int cgfs_write_kernfs(int root_fd, const char *path, const char *file, const char *value);

/* Whether PATH/FILE exists (lstat semantics). Return: 1, 0, or -errno. */
int cgfs_exists(int root_fd, const char *path, const char *file);

int cgfs_mkdir(int root_fd, const char *path, mode_t mode);
int cgfs_rmdir(int root_fd, const char *path);

/*
 * Directory fds kept for a run of operations on cgroup2 (an apply): a mkdir
 * opens its parent once, by name from the parent's own kept parent, so
 * siblings in a row cost one mkdirat(2) each; a write to a kept directory's
 * files opens them by name. kernfs refuses RCU path walks, so each path
 * component costs a locked lookup: by name is the cheaper open. At most half
 * of what the soft RLIMIT_NOFILE leaves above 128; beyond, by path. A kept
 * directory that went fails with ENOENT: the cache is emptied and the path
 * looked up again, once. Only where directories cannot be renamed (cgroup2
 * has no rename): a kept fd would follow a moved one.
 */
/*
 * How many directory fds a run may keep open (the scan's held parents, a
 * CgfsDirCache): half of what the soft RLIMIT_NOFILE leaves above the
 * daemon's own few dozen, 128.
 */
size_t cgfs_fd_budget(void);

typedef struct CgfsDir {
        char *path;     /* NULL: a free slot */
        int fd;
} CgfsDir;
typedef struct CgfsDirCache {
        CgfsDir *slots;         /* open addressing by fnv1a64_str() of the path, at most half full */
        size_t mask, n, max;
} CgfsDirCache;
#define CGFS_DIR_CACHE_INIT {}
void cgfs_dir_cache_done(CgfsDirCache *c);
int cgfs_mkdir_cached(int root_fd, CgfsDirCache *c, const char *path, mode_t mode);
/* cgfs_write_kernfs(), by name where @c keeps PATH */
int cgfs_write_kernfs_cached(int root_fd, CgfsDirCache *c, const char *path, const char *file, const char *value);

/*
 * Owners below a delegation: PATH is hostile ground. Each file is vetted
 * before any owner changes, one whose owner is to change on its fd (opened
 * O_PATH | O_NOFOLLOW), one that has it already by fstatat(2) with
 * AT_SYMLINK_NOFOLLOW: a regular file (-EISDIR for a directory, -ELOOP for
 * a symlink, FIFO, socket, ..., as for every open of a file here), one link
 * (-EMLINK: a hard link renamed over a cgroup's file), on the root's device
 * (-EXDEV), owned by root, the directory's owner or the new owner
 * (-EUCLEAN); then fchownat(fd, "", AT_EMPTY_PATH). Nothing in PATH changes
 * unless every file passes.
 */
/* Change the owner of each of @files (NULL-terminated) in PATH, then of PATH. */
int cgfs_chown(int root_fd, const char *path, char *const *files, uid_t uid, gid_t gid);
/* The same for every regular file in PATH, then PATH. */
int cgfs_chown_all(int root_fd, const char *path, uid_t uid, gid_t gid);
/* @files (NULL: every regular file) in PATH to the owner (uid and gid) of PATH; @ret_changed: how many changed. */
int cgfs_chown_to_dir_owner(int root_fd, const char *path, char *const *files, size_t *ret_changed);

typedef enum CgfsEntryType {
        CGFS_ENTRY_FILE,
        CGFS_ENTRY_DIR,
        CGFS_ENTRY_OTHER,       /* symlinks, devices, ...: never created by us */
} CgfsEntryType;

typedef struct CgfsEntry {
        char *name;
        CgfsEntryType type;
        ino_t ino;
} CgfsEntry;

void cgfs_entries_free(CgfsEntry *e, size_t n);

/* The entries of directory PATH (without "." and ".."), sorted by inode number (kernfs: creation order). */
int cgfs_list(int root_fd, const char *path, CgfsEntry **ret, size_t *ret_n);
/* The same for a directory opened (O_RDONLY, by cgfs_open_dir()) and not yet read. */
int cgfs_list_at(int dir_fd, CgfsEntry **ret, size_t *ret_n);
/* The subdirectories only, of a kernfs directory (one getdents64(2) where the entries fit). */
int cgfs_list_kernfs_dirs_at(int dir_fd, CgfsEntry **ret, size_t *ret_n);
/* The subdirectories only, of any directory (a sim's: d_type, or fstatat(2) where it is unknown). */
int cgfs_list_dirs_at(int dir_fd, CgfsEntry **ret, size_t *ret_n);

/* cgfs_put_file_at()'s @flags */
enum {
        /* the caller expects FILE there (a rewrite); a hint only, either way is right */
        CGFS_PUT_EXISTING = 1 << 0,
        /* a new file is the directory owner's, as kernfs makes it for a write by them (as root) */
        CGFS_PUT_DIR_OWNER = 1 << 1,
};
/*
 * sim only: make FILE in the directory @dfd (from cgfs_open_dir(); O_PATH is
 * enough; @st_dir its fstat(2)) a regular file with @content and @mode (umask
 * ignored). A new file is created in place; an existing one is replaced
 * atomically through a temporary file (a 0444 file cannot be reopened for
 * writing by its unprivileged owner). Owners as kernfs has them (as root):
 * a replaced regular file of one link keeps its owner, a new one is the
 * writer's; ownership.c gives the files below a delegation root to its owner.
 */
int cgfs_put_file_at(int dfd, const struct stat *st_dir, const char *file, const char *content, mode_t mode,
                     unsigned flags);

/* sim only: lstat(2) of FILE in the directory @dfd (from cgfs_open_dir()). */
int cgfs_file_stat_at(int dfd, const char *file, struct stat *ret);

/* sim only: unlink FILE in the directory @dfd (a file or a symlink, never followed). */
int cgfs_unlink_at(int dfd, const char *file);

/*
 * cgfs_put_file_at()'s temporary files: CGFS_TMP_PREFIX and 16 random hex
 * digits, made with O_EXCL, so no name an owner made can be taken for one.
 * The sim removes stray ones at open.
 */
#define CGFS_TMP_PREFIX ".cgb-tmp."
#define CGFS_TMP_NAME_MAX (sizeof(CGFS_TMP_PREFIX) + 16)
bool cgfs_is_tmp_name(const char *name);

/* geteuid() == 0, asked once: who the process is does not change while it runs */
bool cgfs_running_as_root(void);

/* For tests: resolve with per-component O_NOFOLLOW walks instead of openat2(2). */
void cgfs_set_openat2_disabled(bool b);
