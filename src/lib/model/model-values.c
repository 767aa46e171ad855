/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What controller files show after writes (kernel: the state of a css, set
 * through its cftype write handlers). The syntax of each file is cfvalue.c's;
 * here is which cgroup keeps what, and that a css takes its settings with it
 * when it goes (kernel: css_killed_work_fn() frees the css; a new one starts
 * from the defaults).
 */
#include "cgbypass/cftype.h"
#include "cgbypass/cfvalue.h"
#include "cgbypass/strbuf.h"
#include "model-internal.h"

static int file_controller(const char *file) {
        const CfType *t = cftype_lookup(file);
        return t ? t->controller : -1;
}

/* Whether @c's value for @file is alive: @c has the css of its controller. */
static bool value_alive(const Hierarchy *h, const Cgroup *c, const char *file) {
        int ctrl = file_controller(file);

        return ctrl >= 0 && (cg_ss_mask(h, c, false) & CGMASK(ctrl));
}

static CgValue *value_find(const Cgroup *c, const char *file) {
        for (size_t i = 0; i < c->n_values; i++)
                if (streq(c->values[i].file, file))
                        return &c->values[i];
        return NULL;
}

void cg_values_free(Cgroup *c) {
        for (size_t i = 0; i < c->n_values; i++) {
                free(c->values[i].file);
                free(c->values[i].shown);
        }
        free(c->values);
        c->values = NULL;
        c->n_values = 0;
}

int cg_values_copy(Cgroup *dst, const Cgroup *src) {
        if (src->n_values == 0)
                return 0;
        dst->values = calloc(src->n_values, sizeof(CgValue));
        if (!dst->values)
                return -ENOMEM;
        for (size_t i = 0; i < src->n_values; i++) {
                dst->values[i].file = strdup(src->values[i].file);
                dst->values[i].shown = strdup(src->values[i].shown);
                dst->n_values++;
                if (!dst->values[i].file || !dst->values[i].shown)
                        return -ENOMEM;
        }
        return 0;
}

/* Set @file to @shown (taken over). */
static int value_store(Hierarchy *h, Cgroup *c, const char *file, char *shown) {
        CgValue *v = value_find(c, file);

        h->values_maybe_stored = true;

        if (v) {
                free(v->shown);
                v->shown = shown;
                return 0;
        }
        CgValue *n = realloc(c->values, (c->n_values + 1) * sizeof(CgValue));
        if (!n) {
                free(shown);
                return -ENOMEM;
        }
        c->values = n;
        n[c->n_values].file = strdup(file);
        if (!n[c->n_values].file) {
                free(shown);
                return -ENOMEM;
        }
        n[c->n_values++].shown = shown;
        return 0;
}

static void prune_one(const Hierarchy *h, Cgroup *c);

typedef struct Sibling {
        const Hierarchy *h;
        const Cgroup *c;
} Sibling;

static const char *sibling_shown(const char *file, void *userdata) {
        const Sibling *s = userdata;
        const CgValue *v = value_find(s->c, file);

        return v && value_alive(s->h, s->c, file) ? v->shown : NULL;
}

int cgroup_value_read(const Hierarchy *h, const Cgroup *c, const char *file, char **ret) {
        const CgValue *v;
        char *s;

        if (!cgroup_has_file(h, c, file))
                return -ENOENT;
        if (!cfvalue_known(file))
                return -ENOSYS;
        v = value_find(c, file);
        s = strdup(v && value_alive(h, c, file) ? v->shown : cfvalue_default(file));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int cgroup_value_write(Hierarchy *h, Cgroup *c, const char *file, const char *value, Reason *reterr_reason) {
        _cleanup_free_ char *now = NULL, *linked = NULL;
        Sibling sib = { h, c };
        char *shown = NULL;
        int r;

        if (!cgroup_has_file(h, c, file)) {
                reason_set(reterr_reason, REASON_NO_SUCH_FILE);
                return -ENOENT;
        }
        if (!cgroup_file_writable(h, c, file)) {
                reason_set(reterr_reason, REASON_READ_ONLY);
                return -EINVAL;
        }
        if (!cfvalue_known(file)) {
                reason_set(reterr_reason, REASON_NOT_MODELED);
                return -ENOSYS;
        }
        /* kernel: cgroup_file_write() returns before any handler runs */
        if (value[0] == '\0')
                return 0;
        /* blkg_conf_prep(): the modeled VM kernel has no block device to open */
        r = cfvalue_device(file, value);
        if (r != 0) {
                reason_set(reterr_reason, r > 0 ? REASON_NONE : REASON_PARSE);
                return r > 0 ? -ENODEV : r;
        }
        r = cgroup_value_read(h, c, file, &now);
        if (r < 0)
                return r;
        r = cfvalue_write(file, now, value, sibling_shown, &sib, &shown, NULL);
        if (r < 0) {
                reason_set(reterr_reason, r == -ERANGE ? REASON_RANGE : r == -EINVAL ? REASON_PARSE : REASON_NONE);
                return r;
        }
        const char *other = cfvalue_linked(file);
        if (other && cfvalue_linked_shown(file, shown, &linked) < 0) {
                free(shown);
                return -ENOMEM;
        }
        /* a dead css's value is gone: keep the list to what is alive */
        prune_one(h, c);
        r = value_store(h, c, file, shown);
        if (r >= 0 && other)
                r = value_store(h, c, other, TAKE_PTR(linked));
        return r;
}

int cgroup_value_restore(Hierarchy *h, Cgroup *c, const char *file, const char *shown) {
        char *s;

        if (!cgroup_has_file(h, c, file) || !cfvalue_known(file))
                return -ENOENT;
        s = strdup(shown);
        if (!s)
                return -ENOMEM;
        return value_store(h, c, file, s);
}

int cgroup_value_get(const Hierarchy *h, const Cgroup *c, size_t i, const char **ret_file, const char **ret_shown) {
        for (size_t j = 0; j < c->n_values; j++) {
                if (!value_alive(h, c, c->values[j].file))
                        continue;
                if (i-- > 0)
                        continue;
                *ret_file = c->values[j].file;
                *ret_shown = c->values[j].shown;
                return 0;
        }
        return -ENOENT;
}

static void prune_one(const Hierarchy *h, Cgroup *c) {
        size_t k = 0;

        for (size_t i = 0; i < c->n_values; i++) {
                if (value_alive(h, c, c->values[i].file)) {
                        c->values[k++] = c->values[i];
                        continue;
                }
                free(c->values[i].file);
                free(c->values[i].shown);
        }
        c->n_values = k;
        if (k == 0) {
                free(c->values);
                c->values = NULL;
        }
}

void hierarchy_values_prune(Hierarchy *h, Cgroup *top) {
        /*
         * A control write prunes the parent's whole subtree (cgroup.type reaches the siblings): in a
         * hierarchy that never held a value there is nothing to find, and a cold apply's walks cost
         * as much as the writes themselves.
         */
        if (!h->values_maybe_stored)
                return;
        for (Cgroup *c = top; c; c = cgroup_next_descendant_pre(c, top))
                if (c->n_values > 0)
                        prune_one(h, c);
}

/* a value's escapes: the character, and the letter after a backslash that stands for it */
static const char value_escapes[][2] = { { '\n', 'n' }, { ' ', 's' }, { '\\', '\\' } };

/* @c's escape letter, or 0 when it stands for itself */
static char escape_letter(char c) {
        for (size_t i = 0; i < ELEMENTSOF(value_escapes); i++)
                if (value_escapes[i][0] == c)
                        return value_escapes[i][1];
        return 0;
}

/* the character escape letter @l stands for, or 0 for none */
static char unescape_letter(char l) {
        for (size_t i = 0; i < ELEMENTSOF(value_escapes); i++)
                if (value_escapes[i][1] == l)
                        return value_escapes[i][0];
        return 0;
}

int cgroup_value_escape(const char *shown, char **ret) {
        StrBuf b = STRBUF_INIT;

        for (const char *s = shown; *s; s++) {
                char l = escape_letter(*s);

                if (l) {
                        strbuf_putc(&b, '\\');
                        strbuf_putc(&b, l);
                } else
                        strbuf_putc(&b, *s);
        }
        if (!*shown)
                strbuf_append(&b, "");
        return strbuf_steal(&b, ret);
}

int cgroup_value_unescape(const char *text, char **ret) {
        StrBuf b = STRBUF_INIT;

        for (const char *s = text; *s; s++) {
                char c = *s;

                if (c == '\\' && !(c = unescape_letter(*++s))) {
                        strbuf_done(&b);
                        return -EINVAL;
                }
                strbuf_putc(&b, c);
        }
        if (!*text)
                strbuf_append(&b, "");
        return strbuf_steal(&b, ret);
}
