/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "cgbypass/macro.h"

/*
 * A growing string. Appends never fail visibly: on OOM the buffer is marked
 * failed, and strbuf_steal() reports it once, at the end.
 */
typedef struct StrBuf {
        char *s;
        size_t len;
        size_t cap;
        bool oom;
} StrBuf;

#define STRBUF_INIT ((StrBuf) {})

void strbuf_append(StrBuf *b, const char *s);
void strbuf_append_n(StrBuf *b, const char *s, size_t n);
void strbuf_putc(StrBuf *b, char c);
/* @n copies of @c */
void strbuf_fill(StrBuf *b, char c, size_t n);
void strbuf_printf(StrBuf *b, const char *fmt, ...) _printf_(2, 3);
void strbuf_truncate(StrBuf *b, size_t len);

/**
 * strbuf_steal() - hand over the string and reset @b
 * @ret: the malloc'ed string ("" if nothing was appended)
 *
 * Return: 0, or -ENOMEM if any append failed (then @b is freed).
 */
int strbuf_steal(StrBuf *b, char **ret);
void strbuf_done(StrBuf *b);
