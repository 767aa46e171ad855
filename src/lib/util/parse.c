/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "cgbypass/parse.h"

/* The kernel's isspace() (lib/ctype.c): ASCII whitespace plus 0xa0 (nbsp in latin1). */
static bool kisspace(unsigned char c) {
        return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

char *kstrstrip(char *s) {
        size_t n = strlen(s);

        while (n > 0 && kisspace((unsigned char) s[n - 1]))
                n--;
        s[n] = '\0';
        while (kisspace((unsigned char) *s))
                s++;
        return s;
}

const char *kparse_integer_fixup_radix(const char *s, unsigned *base) {
        if (*base == 0) {
                if (s[0] == '0') {
                        if (tolower((unsigned char) s[1]) == 'x' && isxdigit((unsigned char) s[2]))
                                *base = 16;
                        else
                                *base = 8;
                } else
                        *base = 10;
        }
        if (*base == 16 && s[0] == '0' && tolower((unsigned char) s[1]) == 'x')
                s += 2;
        return s;
}

size_t kparse_integer(const char *s, unsigned base, unsigned long long *ret, bool *ret_overflow) {
        unsigned long long v = 0;
        bool overflow = false;
        size_t n = 0;

        for (;; s++, n++) {
                unsigned c = (unsigned char) tolower((unsigned char) *s), d;

                if (c >= '0' && c <= '9')
                        d = c - '0';
                else if (c >= 'a' && c <= 'f')
                        d = c - 'a' + 10;
                else
                        break;
                if (d >= base)
                        break;
                if (v > (ULLONG_MAX - d) / base)
                        overflow = true;
                v = v * base + d;
        }
        *ret = v;
        if (ret_overflow)
                *ret_overflow = overflow;
        return n;
}

/* kernel: lib/kstrtox.c _kstrtoull() */
static int parse_ull(const char *s, unsigned base, unsigned long long *ret) {
        unsigned long long v;
        bool overflow;
        size_t n;

        s = kparse_integer_fixup_radix(s, &base);
        n = kparse_integer(s, base, &v, &overflow);
        s += n;
        if (overflow)
                return -ERANGE;
        if (n == 0)
                return -EINVAL;
        if (*s == '\n')
                s++;
        if (*s)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* kernel: kstrtoull() takes a leading '+', _kstrtoull() (after a '-') does not */
int kstrtoull(const char *s, unsigned base, unsigned long long *ret) {
        return parse_ull(s[0] == '+' ? s + 1 : s, base, ret);
}

int kstrtoll(const char *s, unsigned base, long long *ret) {
        unsigned long long u;
        int r;

        if (s[0] == '-') {
                r = parse_ull(s + 1, base, &u);
                if (r < 0)
                        return r;
                if ((long long) -u > 0)
                        return -ERANGE;
                *ret = (long long) -u;
        } else {
                r = kstrtoull(s, base, &u);
                if (r < 0)
                        return r;
                if ((long long) u < 0)
                        return -ERANGE;
                *ret = (long long) u;
        }
        return 0;
}

int kstrtoint(const char *s, unsigned base, int *ret) {
        long long v;
        int r;

        r = kstrtoll(s, base, &v);
        if (r < 0)
                return r;
        if (v != (int) v)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}
