/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lookups by path, hashed: a request asks which [cgroup] names its cgroup
 * and which [delegate] covers it, and neither answer may cost in proportion
 * to the number of sections. An index stands for the array it was built
 * from (its address and length); any other array is searched linearly.
 */
#include <stddef.h>
#include <stdint.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/hash.h"
#include "config-internal.h"

typedef struct PathIndex {
        size_t *slots;          /* entry index + 1; 0: empty */
        size_t n_slots;         /* a power of two, at least twice the entries */
        const void *of;
        size_t n;
} PathIndex;

struct ConfigIndex {
        PathIndex cgroups, delegates;
};

static size_t hash_path(const char *p, size_t len) {
        uint64_t x = fnv1a64(p, len);
        return (size_t) (x ^ (x >> 32));
}

/* the path of entry @i of @array (CgroupSpec and DelegateSpec both start with it) */
static const char *entry_path(const void *array, size_t stride, size_t i) {
        return *(char *const *) ((const char *) array + i * stride);
}

static bool path_eq(const char *a, const char *b, size_t len) {
        return a && strncmp(a, b, len) == 0 && a[len] == '\0';
}

/* the first entry (reading order) whose path is @p[0..len), or -1 */
static ssize_t index_find(const PathIndex *x, const void *array, size_t stride, const char *p, size_t len) {
        for (size_t s = hash_path(p, len) & (x->n_slots - 1);; s = (s + 1) & (x->n_slots - 1)) {
                size_t i = x->slots[s];
                if (i == 0)
                        return -1;
                if (path_eq(entry_path(array, stride, i - 1), p, len))
                        return (ssize_t) (i - 1);
        }
}

static void index_done(PathIndex *x) {
        free(x->slots);
        *x = (PathIndex) {};
}

static int index_build(PathIndex *x, const void *array, size_t stride, size_t n) {
        size_t n_slots = 16;

        index_done(x);
        while (n_slots < 2 * n)
                n_slots *= 2;
        x->slots = calloc(n_slots, sizeof(size_t));
        if (!x->slots)
                return -ENOMEM;
        x->n_slots = n_slots;
        for (size_t i = 0; i < n; i++) {
                const char *p = entry_path(array, stride, i);
                if (!p || index_find(x, array, stride, p, strlen(p)) >= 0)
                        continue;       /* the first of twins answers, as the linear search does */
                size_t s = hash_path(p, strlen(p)) & (n_slots - 1);
                while (x->slots[s])
                        s = (s + 1) & (n_slots - 1);
                x->slots[s] = i + 1;
        }
        x->of = array;
        x->n = n;
        return 0;
}

static bool index_valid(const PathIndex *x, const void *array, size_t n) {
        return x->slots && x->of == array && x->n == n;
}

void config_index_free(Config *c) {
        if (!c->index)
                return;
        index_done(&c->index->cgroups);
        index_done(&c->index->delegates);
        free(c->index);
        c->index = NULL;
}

void config_index_update(Config *c) {
        if (!c->index) {
                c->index = calloc(1, sizeof(ConfigIndex));
                if (!c->index)
                        return;         /* lookups search linearly */
        }
        if (!index_valid(&c->index->cgroups, c->cgroups, c->n_cgroups))
                (void) index_build(&c->index->cgroups, c->cgroups, sizeof(CgroupSpec), c->n_cgroups);
        (void) index_build(&c->index->delegates, c->delegates, sizeof(DelegateSpec), c->n_delegates);
}

const CgroupSpec *config_find_cgroup(const Config *c, const char *path) {
        if (path && c->index && index_valid(&c->index->cgroups, c->cgroups, c->n_cgroups)) {
                ssize_t i = index_find(&c->index->cgroups, c->cgroups, sizeof(CgroupSpec), path, strlen(path));
                return i >= 0 ? &c->cgroups[i] : NULL;
        }
        for (size_t i = 0; i < c->n_cgroups; i++)
                if (streq_ptr(c->cgroups[i].path, path))
                        return &c->cgroups[i];
        return NULL;
}

const DelegateSpec *config_find_delegation(const Config *c, const char *path) {
        if (c->index && index_valid(&c->index->delegates, c->delegates, c->n_delegates)) {
                ssize_t best = -1;

                /* @path and each of its ancestors but "/" (never delegated): the first in reading order */
                for (size_t len = strlen(path); len > 1; ) {
                        ssize_t i = index_find(&c->index->delegates, c->delegates, sizeof(DelegateSpec), path, len);
                        if (i >= 0 && (best < 0 || i < best))
                                best = i;
                        while (len > 0 && path[len - 1] != '/')
                                len--;
                        if (len > 0)
                                len--;  /* the '/' before the last component */
                }
                return best >= 0 ? &c->delegates[best] : NULL;
        }
        for (size_t i = 0; i < c->n_delegates; i++) {
                const char *d = c->delegates[i].path;
                if (d && cgpath_is_at_or_below(path, d))
                        return &c->delegates[i];
        }
        return NULL;
}
