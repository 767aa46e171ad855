/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The twins check's string set (strset.h) and the one string hash (hash.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check-run.h"
#include "cgbypass/hash.h"
#include "cgbypass/strset.h"

/* FNV-1a's published vectors: a record hashed by an older journal still checks */
START_TEST(test_fnv1a) {
        ck_assert_uint_eq(fnv1a64("", 0), 0xcbf29ce484222325ULL);
        ck_assert_uint_eq(fnv1a64("a", 1), 0xaf63dc4c8601ec8cULL);
        ck_assert_uint_eq(fnv1a64_str("foobar"), 0x85944171f73967e8ULL);
        ck_assert_uint_eq(fnv1a64_more(fnv1a64("foo", 3), "bar", 3), fnv1a64("foobar", 6));
}
END_TEST

/* 10,000 names, all new; then each again is a twin, and so is an equal string at another address */
/* SipHash-2-4's published vector for 8 bytes (key 00..0f, message 00..07) */
START_TEST(test_siphash) {
        const uint64_t key[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };

        ck_assert_uint_eq(siphash24_u64(key, 0x0706050403020100ULL), 0x93f5f5799a932462ULL);
        ck_assert_uint_ne(siphash24_u64(key, 1), siphash24_u64(key, 2));
}
END_TEST

START_TEST(test_twins) {
        enum { N = 10000 };
        char (*names)[16] = calloc(N, sizeof(*names));
        StrSet set;

        ck_assert_ptr_nonnull(names);
        ck_assert_int_eq(strset_init(&set, 2 * N), 0);
        for (int i = 0; i < N; i++) {
                (void) snprintf(names[i], sizeof(names[i]), "/a/n%d", i);
                ck_assert_int_eq(strset_add(&set, names[i]), 0);
        }
        for (int i = 0; i < N; i += 97) {
                char again[16];
                (void) snprintf(again, sizeof(again), "/a/n%d", i);
                ck_assert_int_eq(strset_add(&set, again), 1);
        }
        ck_assert_int_eq(strset_add(&set, "/a/n"), 0);
        strset_done(&set);
        ck_assert_ptr_null(set.slots);
        free(names);
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE("strset", "strset", NULL, NULL, test_fnv1a, test_siphash, test_twins));
}
