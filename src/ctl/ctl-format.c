/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pwd.h>
#include <string.h>

#include "cgbypass/strbuf.h"
#include "ctl-format.h"

/* @array (@n elements of @size) with room for one more, for @value; NULL if @value is NULL or there is no
 * memory: then @value is freed and *@oom set, to be reported when printing */
static void *grow_for(void *array, size_t n, size_t size, char *value, bool *oom) {
        void *grown = value ? reallocarray(array, n + 1, size) : NULL;

        if (!grown) {
                free(value);
                *oom = true;
        }
        return grown;
}

void fields_add(Fields *f, const char *label, char *value) {
        Field *n = grow_for(f->fields, f->n, sizeof(*n), value, &f->oom);

        if (!n)
                return;
        f->fields = n;
        f->fields[f->n++] = (Field) { .label = label, .value = value };
}

void fields_done(Fields *f) {
        for (size_t i = 0; i < f->n; i++)
                free(f->fields[i].value);
        free(f->fields);
        *f = (Fields) {};
}

int fields_print(const Fields *f, FILE *out) {
        int width = 0;

        if (f->oom)
                return -ENOMEM;
        for (size_t i = 0; i < f->n; i++) {
                int l = (int) strlen(f->fields[i].label);
                if (l > width)
                        width = l;
        }
        for (size_t i = 0; i < f->n; i++)
                if (fprintf(out, "%*s: %s\n", width, f->fields[i].label, f->fields[i].value) < 0)
                        return -EIO;
        return 0;
}

void table_init(Table *t, size_t n_columns, const char *const *header) {
        *t = (Table) { .n_columns = n_columns };
        for (size_t i = 0; i < n_columns; i++)
                table_add(t, strdup(header[i]));
}

void table_add(Table *t, char *value) {
        char **n = grow_for(t->cells, t->n_cells, sizeof(*n), value, &t->oom);

        if (!n)
                return;
        t->cells = n;
        t->cells[t->n_cells++] = value;
}

void table_done(Table *t) {
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i]);
        free(t->cells);
        *t = (Table) {};
}

int table_print(const Table *t, FILE *out) {
        _cleanup_free_ size_t *width = NULL;

        if (t->oom || t->n_cells % t->n_columns != 0)
                return -ENOMEM;
        width = calloc(t->n_columns, sizeof(*width));
        if (!width)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_cells; i++) {
                size_t l = strlen(t->cells[i]);
                if (l > width[i % t->n_columns])
                        width[i % t->n_columns] = l;
        }
        for (size_t i = 0; i < t->n_cells; i++) {
                size_t col = i % t->n_columns;
                bool last = col + 1 == t->n_columns;
                int r = last ? fprintf(out, "%s\n", t->cells[i])
                             : fprintf(out, "%-*s  ", (int) width[col], t->cells[i]);
                if (r < 0)
                        return -EIO;
        }
        return 0;
}

char *format_uid(uid_t uid) {
        struct passwd pw, *result = NULL;
        char buf[4096], *s;

        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &result) == 0 && result)
                return asprintf(&s, "%s (%u)", result->pw_name, (unsigned) uid) < 0 ? NULL : s;
        return asprintf(&s, "%u", (unsigned) uid) < 0 ? NULL : s;
}

char *format_strv(char **strv, const char *sep, const char *empty) {
        StrBuf b = STRBUF_INIT;
        char *s;

        if (!strv || !*strv)
                return strdup(empty);
        for (char **i = strv; *i; i++) {
                if (i != strv)
                        strbuf_append(&b, sep);
                strbuf_append(&b, *i);
        }
        return strbuf_steal(&b, &s) < 0 ? NULL : s;
}
