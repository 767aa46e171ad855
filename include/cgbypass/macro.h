/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((__cleanup__(f)))
#define _unused_ __attribute__((__unused__))
#define _printf_(a, b) __attribute__((__format__(printf, a, b)))
#define _warn_unused_result_ __attribute__((__warn_unused_result__))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd) {
        if (*fd >= 0)
                (void) close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

/* close(2) @fd if open; returns -1 to store back */
static inline int safe_close(int fd) {
        if (fd >= 0)
                (void) close(fd);
        return -1;
}

static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void *take_ptr(void *pp) {
        void **p = pp, *r = *p;
        *p = NULL;
        return r;
}
#define TAKE_PTR(p) take_ptr(&(p))

static inline int take_fd(int *fd) {
        int r = *fd;
        *fd = -1;
        return r;
}
#define TAKE_FD(fd) take_fd(&(fd))

/* Defines funcp() for a destructor func(type *) that accepts NULL or not. */
#define DEFINE_POINTER_CLEANUP(type, func)                              \
        static inline void func##p(type **p) {                          \
                if (*p)                                                 \
                        (void) func(*p);                                \
        }                                                               \
        struct cgb_trailing_semicolon_

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}

static inline bool isempty(const char *s) {
        return !s || !*s;
}

static inline const char *strempty(const char *s) {
        return s ?: "";
}

static inline bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static inline void strv_freep(char ***p) {
        if (*p) {
                for (char **i = *p; *i; i++)
                        free(*i);
                free(*p);
        }
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)
