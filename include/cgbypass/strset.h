/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A set of strings it does not own, sized once: for "is any of these named
 * twice?", which a sort answers in n log n comparisons and this in n probes.
 */

#include <stddef.h>

typedef struct StrSet {
        const char **slots;
        size_t mask;
} StrSet;

/* Room for @n strings. Return: 0 or -ENOMEM. */
int strset_init(StrSet *s, size_t n);

/* @str into @s, which must have room left. Return: 1 it was there already, 0 added. */
int strset_add(StrSet *s, const char *str);

void strset_done(StrSet *s);
