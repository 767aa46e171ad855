/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * FNV-1a, 64 bits: the one string hash (the model's child index, configuration paths, journal
 * records). SipHash-2-4 of a word: the one keyed hash, for names nobody may guess.
 */

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

static inline uint64_t rotl64(uint64_t x, int b) {
        return (x << b) | (x >> (64 - b));
}

/*
 * SipHash-2-4 of one 64-bit word (the 8 bytes of @m, little-endian) under the key @k: keyed, its
 * outputs tell nothing of the next ones without the key (cgroupfs.c's temporary names).
 */
static inline uint64_t siphash24_u64(const uint64_t k[2], uint64_t m) {
        uint64_t v0 = 0x736f6d6570736575ULL ^ k[0], v1 = 0x646f72616e646f6dULL ^ k[1];
        uint64_t v2 = 0x6c7967656e657261ULL ^ k[0], v3 = 0x7465646279746573ULL ^ k[1];
        const uint64_t last = (uint64_t) 8 << 56;       /* the length, 8 bytes, and no bytes left */

#define SIPROUND do { \
                v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32); \
                v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2; \
                v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0; \
                v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32); \
        } while (0)
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
        v3 ^= last;
        SIPROUND;
        SIPROUND;
        v0 ^= last;
        v2 ^= 0xff;
        for (int i = 0; i < 4; i++)
                SIPROUND;
#undef SIPROUND
        return v0 ^ v1 ^ v2 ^ v3;
}
