/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "cgbypass/strbuf.h"

static bool strbuf_reserve(StrBuf *b, size_t extra) {
        if (b->oom)
                return false;
        if (b->len + extra + 1 <= b->cap)
                return true;

        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + extra + 1)
                cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
                b->oom = true;
                return false;
        }
        b->s = s;
        b->cap = cap;
        return true;
}

void strbuf_append_n(StrBuf *b, const char *s, size_t n) {
        if (!strbuf_reserve(b, n))
                return;
        memcpy(b->s + b->len, s, n);
        b->len += n;
        b->s[b->len] = '\0';
}

void strbuf_append(StrBuf *b, const char *s) {
        strbuf_append_n(b, s, strlen(s));
}

void strbuf_putc(StrBuf *b, char c) {
        strbuf_append_n(b, &c, 1);
}

void strbuf_fill(StrBuf *b, char c, size_t n) {
        if (!strbuf_reserve(b, n))
                return;
        memset(b->s + b->len, c, n);
        b->len += n;
        b->s[b->len] = '\0';
}

void strbuf_printf(StrBuf *b, const char *fmt, ...) {
        va_list ap;

        /* format into the room there is, and only a second time when it did not fit:
         * measuring first doubled the cost of every line of the state files */
        if (!strbuf_reserve(b, 64))
                return;
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
                b->s[b->len] = '\0';
                b->oom = true;
                return;
        }
        if ((size_t) n >= room) {
                if (!strbuf_reserve(b, (size_t) n)) {
                        b->s[b->len] = '\0';
                        return;
                }
                va_start(ap, fmt);
                (void) vsnprintf(b->s + b->len, (size_t) n + 1, fmt, ap);
                va_end(ap);
        }
        b->len += (size_t) n;
}

void strbuf_truncate(StrBuf *b, size_t len) {
        if (len < b->len) {
                b->len = len;
                b->s[len] = '\0';
        }
}

void strbuf_done(StrBuf *b) {
        free(b->s);
        *b = STRBUF_INIT;
}

int strbuf_steal(StrBuf *b, char **ret) {
        if (b->oom) {
                strbuf_done(b);
                return -ENOMEM;
        }
        if (!b->s) {
                char *e = strdup("");
                if (!e)
                        return -ENOMEM;
                *ret = e;
                return 0;
        }
        *ret = b->s;
        *b = STRBUF_INIT;
        return 0;
}
