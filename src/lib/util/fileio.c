/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cgbypass/fileio.h"
#include "cgbypass/macro.h"
#include "cgbypass/strbuf.h"

static int write_atomic(int dir_fd, const char *name, const char *text, bool durable) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1, dfd = -1;
        size_t len = strlen(text), off = 0;
        int r;

        if (asprintf(&tmp, ".%s.tmp", name) < 0)
                return -ENOMEM;
        (void) unlinkat(dir_fd, tmp, 0);
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        while (off < len) {
                ssize_t n = write(fd, text + off, len - off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        goto fail;
                }
                off += (size_t) n;
        }
        if ((durable && fsync(fd) < 0) || close(TAKE_FD(fd)) < 0 || renameat(dir_fd, tmp, dir_fd, name) < 0) {
                r = -errno;
                goto fail;
        }
        if (!durable)
                return 0;
        /* the rename itself must survive a crash */
        dfd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd) < 0)
                return -errno;
        return 0;
fail:
        (void) unlinkat(dir_fd, tmp, 0);
        return r;
}

int file_write_atomic_at(int dir_fd, const char *name, const char *text) {
        return write_atomic(dir_fd, name, text, true);
}

int file_replace_at(int dir_fd, const char *name, const char *text) {
        return write_atomic(dir_fd, name, text, false);
}

/* whether @name is a regular file of exactly @text */
static bool holds(int dir_fd, const char *name, const char *text) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        size_t len = strlen(text), off = 0;
        struct stat st;
        char buf[65536];

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t) st.st_size != len)
                return false;
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 || (size_t) n > len - off || memcmp(buf, text + off, (size_t) n) != 0)
                        return false;
                if (n == 0)
                        return off == len;
                off += (size_t) n;
        }
}

/* @name holds @text: nothing to write, but a temporary a killed writer left goes, as a write would remove it */
static int kept(int dir_fd, const char *name) {
        _cleanup_free_ char *tmp = NULL;

        if (asprintf(&tmp, ".%s.tmp", name) < 0)
                return -ENOMEM;
        (void) unlinkat(dir_fd, tmp, 0);
        return 0;
}

int file_write_atomic_changed_at(int dir_fd, const char *name, const char *text) {
        return holds(dir_fd, name, text) ? kept(dir_fd, name) : file_write_atomic_at(dir_fd, name, text);
}

/* @dir, made (0755) if missing, opened: its fd or -errno */
static int open_dir_made(const char *dir) {
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static int write_changed(const char *dir, const char *name, const char *text, bool durable) {
        _cleanup_close_ int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dir_fd >= 0 && holds(dir_fd, name, text))
                return kept(dir_fd, name);
        if (dir_fd < 0) {
                dir_fd = open_dir_made(dir);
                if (dir_fd < 0)
                        return dir_fd;
        }
        return write_atomic(dir_fd, name, text, durable);
}

int file_write_atomic_changed(const char *dir, const char *name, const char *text) {
        return write_changed(dir, name, text, true);
}

int file_replace_changed(const char *dir, const char *name, const char *text) {
        return write_changed(dir, name, text, false);
}

int file_absent_at(int dir_fd, const char *name) {
        if (faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) >= 0)
                return 0;
        if (errno != ENOENT)
                return -errno;
        int r = kept(dir_fd, name);
        return r < 0 ? r : 1;
}

int file_absent(const char *dir, const char *name) {
        _cleanup_close_ int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dir_fd < 0)
                return errno == ENOENT ? 1 : -errno;
        return file_absent_at(dir_fd, name);
}

int file_write_atomic(const char *dir, const char *name, const char *text) {
        _cleanup_close_ int dir_fd = open_dir_made(dir);

        if (dir_fd < 0)
                return dir_fd;
        return file_write_atomic_at(dir_fd, name, text);
}

int file_read_fd(int fd, size_t max, unsigned flags, char **ret) {
        return file_read_fd_len(fd, max, flags, ret, NULL);
}

int file_read_fd_len(int fd, size_t max, unsigned flags, char **ret, size_t *ret_len) {
        StrBuf b = STRBUF_INIT;
        char buf[8192];
        int r;

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        r = -errno;
                else if (n == 0)
                        break;
                else if ((flags & FILE_READ_NO_NUL) && memchr(buf, '\0', (size_t) n))
                        r = -EBADMSG;
                else if ((size_t) n > max - b.len)
                        r = -EFBIG;
                else {
                        strbuf_append_n(&b, buf, (size_t) n);
                        continue;
                }
                strbuf_done(&b);
                return r;
        }
        size_t len = b.len;
        r = strbuf_steal(&b, ret);
        if (r >= 0 && ret_len)
                *ret_len = len;
        return r;
}
