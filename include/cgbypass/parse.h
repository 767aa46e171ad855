/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/**
 * kstrtoint() - parse an int exactly as the kernel's kstrtoint() does
 * @s: the text (one trailing newline is accepted, nothing else)
 * @base: 0 (auto: 0x hex, 0 octal, else decimal), or 8, 10, 16
 * @ret: the value, set only on success
 *
 * Return: 0, -EINVAL (no digits, trailing junk), -ERANGE (overflow).
 */
int kstrtoint(const char *s, unsigned base, int *ret);
/* the same for unsigned long long (a leading '+' is taken) and long long */
int kstrtoull(const char *s, unsigned base, unsigned long long *ret);
int kstrtoll(const char *s, unsigned base, long long *ret);

/* kernel: strstrip(): cut leading and trailing isspace() characters in place. */
char *kstrstrip(char *s);
