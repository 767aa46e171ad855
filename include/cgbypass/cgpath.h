/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Cgroup paths: the one rule for what names a cgroup, and the conversions
 * between its two spellings.
 *
 *   absolute  "/" or "/a/b"   the configuration, the bus, /proc/PID/cgroup
 *   relative  "." or "a/b"    traces and backends (beneath the mount's fd)
 *
 * A normalized path has components that are not empty, "." or "..", so it
 * has no "//" and no trailing '/'. The kernel allows any other byte in a
 * name; a path the daemon is given by a person (CGPATH_LIMITS) has no
 * control character and fits the VFS's limits, and a cgroup the daemon
 * manages (CGPATH_MANAGED) has no white space either: its state files and
 * its answers on the bus separate paths with spaces.
 */

#include <stdbool.h>
#include <stddef.h>

#define CGPATH_MAX      4095    /* bytes of a path we are given (PATH_MAX without the NUL) */
#define CGPATH_NAME_MAX 255     /* bytes of a component (NAME_MAX) */

typedef enum CgpathFlags {
        CGPATH_RELATIVE = 1u << 0,      /* spelled "." or "a/b"; else "/" or "/a/b" */
        CGPATH_LIMITS   = 1u << 1,      /* no control character; CGPATH_MAX, CGPATH_NAME_MAX */
        CGPATH_MANAGED  = 1u << 2,      /* CGPATH_LIMITS, and no space or tab */
} CgpathFlags;

/**
 * cgpath_verify() - whether @path is a normalized cgroup path
 * @path: the path
 * @flags: its spelling, and which of the daemon's limits apply
 * @reterr_why: on failure, what is wrong, as a static phrase to put after the
 *              quoted path ("contains a '..' component"); may be NULL
 *
 * Return: 0, or -EINVAL.
 */
int cgpath_verify(const char *path, CgpathFlags flags, const char **reterr_why);

/**
 * cgpath_name_is_valid() - whether the @n bytes at @name are one component
 * @name: the component, not necessarily NUL-terminated
 * @n: its length
 *
 * Return: true unless it is empty, ".", ".." or contains '/'.
 */
bool cgpath_name_is_valid(const char *name, size_t n);

/* cgpath_name_is_valid() of a component already cut at '/' (it holds none): inline, for path walks */
static inline bool cgpath_cut_name_is_valid(const char *name, size_t n) {
        return n > 0 && !(n == 1 && name[0] == '.') && !(n == 2 && name[0] == '.' && name[1] == '.');
}

/**
 * cgpath_relative() - the relative spelling of @path
 * @path: either spelling; "" is the root
 *
 * "/a/b" and "a/b" give "a/b"; "/", "." and "" give ".". Nothing is checked.
 *
 * Return: a pointer into @path, or to a static ".".
 */
const char *cgpath_relative(const char *path);

/**
 * cgpath_absolute() - the absolute spelling of @path, newly allocated
 * @path: either spelling; "" is the root
 * @ret: "/a/b" for "a/b" and "/a/b"; "/" for ".", "/" and ""
 *
 * Return: 0 or -ENOMEM.
 */
int cgpath_absolute(const char *path, char **ret);

/**
 * cgpath_is_absolute() - whether @path is spelled absolute (starts with '/');
 *                        nothing else is checked
 * @path: the path
 */
bool cgpath_is_absolute(const char *path);

/**
 * cgpath_is_root() - whether @path names the root ("/", "." or "")
 * @path: either spelling
 */
bool cgpath_is_root(const char *path);

/**
 * cgpath_is_at_or_below() - whether @path is @top or a descendant of it
 * @path: a normalized path
 * @top: a normalized path in the same spelling
 *
 * "/a/b" is below "/a" and "/", "/ab" is not below "/a".
 */
bool cgpath_is_at_or_below(const char *path, const char *top);

/**
 * cgpath_depth() - the number of components of a normalized @path
 * @path: either spelling
 *
 * Return: 0 for the root, 2 for "/a/b" and "a/b".
 */
unsigned cgpath_depth(const char *path);

/**
 * cgpath_are_siblings() - whether @a and @b have the same parent
 * @a: a normalized path, not necessarily a different one from @b
 * @b: a normalized path in the same spelling
 *
 * "/a/x" and "/a/y" are siblings, "/a" and "/a/x" are not; the root is
 * nobody's sibling.
 */
bool cgpath_are_siblings(const char *a, const char *b);

/**
 * cgpath_parent() - the parent of a normalized @path, newly allocated, in
 *                   the same spelling
 * @path: either spelling, not the root
 * @ret: "/a" for "/a/b", "/" for "/a"; "a" for "a/b", "." for "a"
 *
 * Return: 0, -EINVAL for the root, or -ENOMEM.
 */
int cgpath_parent(const char *path, char **ret);

/*
 * cgpath_parent() of the first @n bytes of @path, without a copy: *@ret is
 * @path itself or the constant "." or "/"; returns the parent's length.
 * For lookups by a prefix of a longer path. @path is not the root.
 */
size_t cgpath_parent_span(const char *path, size_t n, const char **ret);

/**
 * cgpath_join() - the path of child @name of @path, newly allocated, in the
 *                 spelling of @path
 * @path: either spelling
 * @name: one component
 * @ret: "/a/b" for ("/a", "b"), "/b" for ("/", "b"); "b" for (".", "b")
 *
 * Return: 0 or -ENOMEM.
 */
int cgpath_join(const char *path, const char *name, char **ret);
