/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* FNV-1a, 64 bits: the one string hash (the model's child index, configuration paths, journal records). */

#include <stddef.h>
#include <stdint.h>

#define FNV1A64_INIT 0xcbf29ce484222325ULL

/* @h carried on over the @n bytes at @p (start with FNV1A64_INIT) */
static inline uint64_t fnv1a64_more(uint64_t h, const void *p, size_t n) {
        const unsigned char *c = p;

        for (size_t i = 0; i < n; i++)
                h = (h ^ c[i]) * 0x100000001b3ULL;
        return h;
}

static inline uint64_t fnv1a64(const void *p, size_t n) {
        return fnv1a64_more(FNV1A64_INIT, p, n);
}

static inline uint64_t fnv1a64_str(const char *s) {
        uint64_t h = FNV1A64_INIT;

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 0x100000001b3ULL;
        return h;
}
