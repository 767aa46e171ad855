/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/macro.h"

bool cgpath_name_is_valid(const char *name, size_t n) {
        return !memchr(name, '/', n) && cgpath_cut_name_is_valid(name, n);
}

/*
 * The components after the spelling's prefix. When several are wrong, the
 * first of "//", a trailing '/', "..", "." is named, whatever their order.
 */
static const char *components_problem(const char *p) {
        bool empty = false, trailing = false, dotdot = false, dot = false;

        for (;;) {
                size_t n = (size_t) (strchrnul(p, '/') - p);  /* strcspn() of one byte, without its set */

                if (n == 0) {
                        if (p[0])
                                empty = true;
                        else
                                trailing = true;
                } else if (n == 2 && p[0] == '.' && p[1] == '.')
                        dotdot = true;
                else if (n == 1 && p[0] == '.')
                        dot = true;
                if (!p[n])
                        break;
                p += n + 1;
        }
        return empty ? "contains '//'" :
               trailing ? "ends with '/'" :
               dotdot ? "contains a '..' component" :
               dot ? "contains a '.' component" : NULL;
}

static const char *limits_problem(const char *path) {
        size_t comp = 0;

        if (strchr(path, '\n'))
                return "contains a newline";
        if (strlen(path) > CGPATH_MAX)
                return "is longer than 4095 bytes";
        for (const char *p = path; *p; p++) {
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return "contains a control character";
                comp = *p == '/' ? 0 : comp + 1;
                if (comp > CGPATH_NAME_MAX)
                        return "has a component longer than 255 bytes";
        }
        return NULL;
}

static const char *path_problem(const char *path, CgpathFlags flags) {
        bool relative = flags & CGPATH_RELATIVE;
        const char *why;

        if (!*path)
                return "is empty";
        if (!relative && !cgpath_is_absolute(path))
                return "is not absolute (it must start with '/')";
        if (relative && cgpath_is_absolute(path))
                return "is not relative (it must not start with '/')";
        if (flags & (CGPATH_LIMITS | CGPATH_MANAGED)) {
                why = limits_problem(path);
                if (why)
                        return why;
        }
        if (!cgpath_is_root(path)) {
                why = components_problem(relative ? path : path + 1);
                if (why)
                        return why;
        }
        if ((flags & CGPATH_MANAGED) && strpbrk(path, " \t"))
                return "contains white space; cgbypassd does not manage such cgroups";
        return NULL;
}

int cgpath_verify(const char *path, CgpathFlags flags, const char **reterr_why) {
        const char *why = path_problem(path, flags);

        if (!why)
                return 0;
        if (reterr_why)
                *reterr_why = why;
        return -EINVAL;
}

bool cgpath_is_absolute(const char *path) {
        return path[0] == '/';
}

bool cgpath_is_root(const char *path) {
        return streq(path, "/") || streq(path, ".") || streq(path, "");
}

const char *cgpath_relative(const char *path) {
        if (path[0] == '/')
                path++;
        return *path ? path : ".";
}

int cgpath_absolute(const char *path, char **ret) {
        const char *rel = cgpath_relative(path);
        char *s;

        if (streq(rel, "."))
                s = strdup("/");
        else if (asprintf(&s, "/%s", rel) < 0)
                s = NULL;
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

bool cgpath_is_at_or_below(const char *path, const char *top) {
        size_t n = strlen(top);

        if (streq(top, "/"))
                return cgpath_is_absolute(path);
        if (streq(top, "."))
                return !cgpath_is_absolute(path);
        return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

unsigned cgpath_depth(const char *path) {
        const char *rel = cgpath_relative(path);
        unsigned n = 1;

        if (streq(rel, "."))
                return 0;
        for (const char *p = rel; *p; p++)
                if (*p == '/')
                        n++;
        return n;
}

/* the length of @path's parent as a prefix of it: "/a/b" gives 2, "/a" and "a" 0 */
static size_t parent_prefix_len(const char *path) {
        const char *slash = strrchr(path, '/');
        return slash ? (size_t) (slash - path) : 0;
}

bool cgpath_are_siblings(const char *a, const char *b) {
        size_t n = parent_prefix_len(a);

        if (cgpath_is_root(a) || cgpath_is_root(b))
                return false;
        return n == parent_prefix_len(b) && strncmp(a, b, n) == 0 && cgpath_is_absolute(a) == cgpath_is_absolute(b);
}

size_t cgpath_parent_span(const char *path, size_t n, const char **ret) {
        const char *slash = memrchr(path, '/', n);

        if (!slash)
                *ret = ".";                             /* "a" */
        else if (slash == path)
                *ret = "/";                             /* "/a" */
        else {
                *ret = path;
                return (size_t) (slash - path);
        }
        return 1;
}

int cgpath_parent(const char *path, char **ret) {
        const char *p;
        size_t n;
        char *s;

        if (cgpath_is_root(path))
                return -EINVAL;
        n = cgpath_parent_span(path, strlen(path), &p);
        s = strndup(p, n);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int cgpath_join(const char *path, const char *name, char **ret) {
        char *s;

        if (streq(path, "."))
                s = strdup(name);
        else {
                /* two copies, not asprintf(): the scan joins a path per cgroup, and vasprintf() cost ~1,100 instructions a call */
                size_t a = streq(path, "/") ? 0 : strlen(path), b = strlen(name);

                s = malloc(a + 1 + b + 1);
                if (s) {
                        memcpy(s, path, a);
                        s[a] = '/';
                        memcpy(s + a + 1, name, b + 1);
                }
        }
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}
