/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/**
 * file_write_atomic_at() - replace @name in @dir_fd with @text, crash-safe
 *
 * A temporary ".NAME.tmp" beside it (the caller makes sure no one else
 * writes that name), fsync, rename over NAME, fsync of the directory.
 * Return: 0 or -errno; on failure NAME is as before and no temporary is left.
 */
int file_write_atomic_at(int dir_fd, const char *name, const char *text);

/**
 * file_replace_at() - file_write_atomic_at() without the two fsync()s
 *
 * Readers see the old file or the new one, whole, and so does the next start
 * after the writer crashed; after a power loss, possibly the old one. For
 * what stands for state a kernel keeps in memory. Return: 0 or -errno.
 */
int file_replace_at(int dir_fd, const char *name, const char *text);

/* The same in the directory @dir, which is made (0755) if missing. */
int file_write_atomic(const char *dir, const char *name, const char *text);

/**
 * file_write_atomic_changed_at() - file_write_atomic_at() unless @name
 * already holds exactly @text (return 0 without writing)
 *
 * For records rewritten after every apply (state a kernel keeps in memory,
 * the applied configuration, the client changes' snapshot): an apply that
 * changed nothing pays one read instead of two flushes. The bytes found were
 * made durable by the write that put them there, up to the crash window of
 * that write's own directory fsync. A ".NAME.tmp" that a writer killed
 * before its rename left is removed either way, as a write removes it.
 */
int file_write_atomic_changed_at(int dir_fd, const char *name, const char *text);
int file_write_atomic_changed(const char *dir, const char *name, const char *text);
/* file_write_atomic_changed() with file_replace_at()'s write: no fsync() */
int file_replace_changed(const char *dir, const char *name, const char *text);
/*
 * Whether @dir has no @name (a missing @dir has none), for a writer whose file's absence says what the
 * file would: its ".NAME.tmp" goes as a write would remove it. Return: 1 absent, 0 there, -errno.
 */
int file_absent(const char *dir, const char *name);
int file_absent_at(int dir_fd, const char *name);

#define FILE_READ_NO_NUL (1u << 0)      /* a text format: a NUL byte is -EBADMSG */

/**
 * file_read_fd() - what @fd reads until end of file, as a string
 * @max: -EFBIG when there is more than this; SIZE_MAX for no limit
 * @flags: FILE_READ_NO_NUL
 *
 * Return: 0 and @ret (malloc'ed), or -errno; EINTR is retried.
 */
int file_read_fd(int fd, size_t max, unsigned flags, char **ret);
/* file_read_fd(), and its length in @ret_len (may be NULL): the text may hold NUL bytes */
int file_read_fd_len(int fd, size_t max, unsigned flags, char **ret, size_t *ret_len);
