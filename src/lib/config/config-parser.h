/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The reading state shared by config.c (sections, keys) and config-reader.c (lines). */

#include <stdio.h>

#include "cgbypass/config.h"

/* Debian's libinih 55: MAX_SECTION is 50, a private #define in ini.c; names keep 49 bytes. */
#define INI_SECTION_NAME_MAX 49

/* Raw bytes kept per line. Longer lines are errors, so only their length matters. */
#define RAW_LINE_MAX 4096

/* at least the number of keys in config.c's key table */
#define CONFIG_KEYS_MAX 16

typedef struct KeyInfo KeyInfo;

typedef enum SectionKind {
        SECTION_NONE,           /* before the first header */
        SECTION_IGNORED,        /* after a bad header: its problem is reported once */
        SECTION_DAEMON,
        SECTION_CGROUP,
        SECTION_DELEGATE,
} SectionKind;

typedef struct SectionInfo {
        const char *name;
        SectionKind kind;
} SectionInfo;

typedef struct Parser {
        Config *config;
        ConfigErrors *errs;
        FILE *f;
        const char *file;               /* in config->files */
        unsigned line;
        bool eof;
        int r;                          /* -ENOMEM once anything ran out of memory */

        const SectionInfo *section;     /* NULL unless kind is a known section */
        SectionKind kind;
        unsigned section_line;          /* the current section's header */
        unsigned daemon_line;           /* this file's [daemon] header */
        unsigned key_line[CONFIG_KEYS_MAX]; /* where the current section set each key (by table index) */
        bool damaged;                   /* a line of the current section was rejected */

        char raw[RAW_LINE_MAX + 1];

        /* what was read from @f and not yet cut into lines: the reader finds newlines with memchr() */
        char in[65536];
        size_t in_pos, in_len;
} Parser;

/* config-reader.c: inih's ini_reader, one line at a time (@stream is the Parser) */
char *parser_reader(char *str, int num, void *stream);
/* inih's lskip(): the first non-space byte of @s */
char *skip_space(char *s);
/* inih's find_chars_or_comment() */
char *find_chars_or_comment(char *s, const char *chars);

/* config.c: a header line, and a rejected line */
void parser_header(Parser *p, char *s);
void parser_reject(Parser *p, const char *fmt, ...) _printf_(2, 3);
