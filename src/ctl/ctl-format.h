/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Output for people: aligned "Label: value" fields and column tables. */

#include <stdio.h>
#include <sys/types.h>

#include "cgbypass/macro.h"

typedef struct Field {
        const char *label;
        char *value;            /* owned */
} Field;

typedef struct Fields {
        Field *fields;
        size_t n;
        bool oom;
} Fields;

/* Takes @value (a NULL @value is a failed allocation, reported by fields_print()). */
void fields_add(Fields *f, const char *label, char *value);
void fields_done(Fields *f);

/**
 * fields_print() - the fields, labels right-aligned as hostnamectl does
 *
 * Return: 0, -ENOMEM (an add failed; nothing printed), -EIO.
 */
int fields_print(const Fields *f, FILE *out);

typedef struct Table {
        size_t n_columns;
        char **cells;           /* row-major, the header first; owned */
        size_t n_cells;
        bool oom;
} Table;

/* @header: n_columns names, in capitals as systemctl's tables have them */
void table_init(Table *t, size_t n_columns, const char *const *header);
/* Takes @value; a NULL @value is a failed allocation. Cells fill rows left to right. */
void table_add(Table *t, char *value);
void table_done(Table *t);

/**
 * table_print() - the header and the rows, columns separated by two spaces
 *
 * The last column is not padded. Return: 0, -ENOMEM (an add failed), -EIO.
 */
int table_print(const Table *t, FILE *out);

/* "alice (1000)", or "1000" for a uid without a name; NULL on OOM. */
char *format_uid(uid_t uid);
/* A malloc'ed copy of the strings of @strv joined by @sep, @empty if there are none; NULL on OOM. */
char *format_strv(char **strv, const char *sep, const char *empty);
