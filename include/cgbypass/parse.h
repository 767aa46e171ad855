/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/**
 * kstrtoint() - parse an int exactly as the kernel's kstrtoint() does
 * @s: the text (one trailing newline is accepted, nothing else)
 * @base: 0 (auto: 0x hex, 0 octal, else decimal), or 8, 10, 16
 * @ret: the value, set only on success
 *
 * Return: 0, -EINVAL (no digits, trailing junk), -ERANGE (overflow).
 */
int kstrtoint(const char *s, unsigned base, int *ret);

/*
 * kernel: lib/kstrtox.c _parse_integer_fixup_radix(): base 0 becomes 16 ("0x" and a hex digit), 8 (a
 * leading "0") or 10; returns @s past the "0x" of base 16.
 */
const char *kparse_integer_fixup_radix(const char *s, unsigned *base);
/*
 * kernel: _parse_integer(): the digits of @base at @s into *@ret, wrapping as the kernel's does; returns how
 * many there were, and in *@ret_overflow (may be NULL) whether the value wrapped.
 */
size_t kparse_integer(const char *s, unsigned base, unsigned long long *ret, bool *ret_overflow);
/* the same for unsigned long long (a leading '+' is taken) and long long */
int kstrtoull(const char *s, unsigned base, unsigned long long *ret);
int kstrtoll(const char *s, unsigned base, long long *ret);

/* kernel: strstrip(): cut leading and trailing isspace() characters in place. */
char *kstrstrip(char *s);
