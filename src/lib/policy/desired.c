/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The desired state from the configuration, and the applied-state file. */
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/desired.h"
#include "cgbypass/fileio.h"
#include "cgbypass/strbuf.h"

void desired_set_done(DesiredSet *s) {
        for (size_t i = 0; i < s->n_strings; i++)
                free(s->strings[i]);
        free(s->strings);
        free(s->values);
        free(s->items);
        *s = (DesiredSet) {};
}

/* Room for element @n + 1 of an array that only this grows, from empty: 16, then doubling, not a realloc()
 * an element. NULL: out of memory. */
static void *grow_for_one(void *v, size_t n, size_t size) {
        if (n != 0 && (n < 16 || (n & (n - 1)) != 0))
                return v;
        return reallocarray(v, n ? n * 2 : 16, size);
}

/* desired_add() and desired_own() fill sets that desired_from_config() and state_file_load() start empty */
static DesiredCgroup *desired_add(DesiredSet *s) {
        DesiredCgroup *n = grow_for_one(s->items, s->n, sizeof(DesiredCgroup));
        if (!n)
                return NULL;
        s->items = n;
        n[s->n] = (DesiredCgroup) {};
        return &n[s->n++];
}

static const char *desired_own(DesiredSet *s, char *str) {
        char **n;

        if (!str)
                return NULL;
        n = grow_for_one(s->strings, s->n_strings, sizeof(char *));
        if (!n) {
                free(str);
                return NULL;
        }
        s->strings = n;
        n[s->n_strings++] = str;
        return str;
}

static Origin origin(const ConfigLocation *l) {
        return (Origin) { .file = l->file, .line = l->line };
}

int desired_from_config(const Config *c, DesiredSet *ret) {
        DesiredSet s = {};
        size_t n_values = 0, k = 0;

        for (size_t i = 0; i < c->n_cgroups; i++)
                n_values += c->cgroups[i].n_values;
        if (n_values > 0) {
                s.values = calloc(n_values, sizeof(DesiredValue));
                if (!s.values)
                        return -ENOMEM;
        }

        for (size_t i = 0; i < c->n_cgroups; i++) {
                const CgroupSpec *cs = &c->cgroups[i];
                DesiredCgroup *d = desired_add(&s);
                if (!d)
                        goto oom;
                *d = (DesiredCgroup) {
                        .path = cs->path,
                        .create = cs->create,
                        .sc_enable = cs->subtree_control.enable,
                        .sc_bypass = cs->subtree_control.bypass,
                        .sc_disable = cs->subtree_control.disable,
                        .ctl_enable = cs->controllers.enable,
                        .ctl_bypass = cs->controllers.bypass,
                        .origin = origin(&cs->section_loc),
                        .sc_origin = origin(cs->subtree_control_loc.line ? &cs->subtree_control_loc : &cs->section_loc),
                        .ctl_origin = origin(cs->controllers_loc.line ? &cs->controllers_loc : &cs->section_loc),
                        .values = cs->n_values ? &s.values[k] : NULL,
                        .n_values = cs->n_values,
                };
                for (size_t j = 0; j < cs->n_values; j++)
                        s.values[k++] = (DesiredValue) {
                                .file = cs->values[j].file,
                                .value = cs->values[j].value,
                                .origin = origin(&cs->values[j].loc),
                        };
        }
        for (size_t i = 0; i < c->n_delegates; i++) {
                const DelegateSpec *ds = &c->delegates[i];
                bool merged = false;

                /* a run-time delegation of a cgroup it does not make holds while the cgroup exists */
                if (ds->runtime && !ds->create)
                        continue;

                for (size_t j = 0; j < s.n; j++)
                        if (streq(s.items[j].path, ds->path)) {
                                s.items[j].create = s.items[j].create || ds->create;
                                merged = true;
                        }
                if (merged)
                        continue;
                DesiredCgroup *d = desired_add(&s);
                if (!d)
                        goto oom;
                *d = (DesiredCgroup) {
                        .path = ds->path,
                        .create = ds->create,
                        .origin = origin(&ds->section_loc),
                        .sc_origin = origin(&ds->section_loc),
                        .ctl_origin = origin(&ds->section_loc),
                };
        }
        *ret = s;
        return 0;
oom:
        desired_set_done(&s);
        return -ENOMEM;
}

/*
 * The state file: a header line, then one line per cgroup,
 *   cgroup PATH create=yes|no sc=+cpu,#io,-memory ctl=+io,#cpu
 * Paths never contain spaces or control characters (config_cgroup_path_verify()).
 */
#define STATE_HEADER "# cgbypassd applied state v1; written by cgbypassd, do not edit"

void desired_tokens_append(StrBuf *b, const char *key, CgMask plus, CgMask hash, CgMask minus) {
        char buf[256];
        size_t n = 0, k = strlen(key);

        /*
         * Put together here and appended once, the set bits only: this runs twice for every cgroup
         * of every saved apply, and a strbuf call per byte and a test of all 15 controllers cost
         * more than the text. A short key; flushed when a name would not fit (none comes close).
         */
        assert(k + 2 < sizeof(buf));
        buf[n++] = ' ';
        memcpy(buf + n, key, k);
        n += k;
        buf[n++] = '=';
        for (CgMask m = plus | hash | minus; m; m &= m - 1) {
                Controller x = (Controller) __builtin_ctz(m);
                const char *name = controller_to_string(x);
                size_t len = strlen(name);

                if (n + 2 + len > sizeof(buf)) {
                        strbuf_append_n(b, buf, n);
                        n = 0;
                }
                if (m != (plus | hash | minus))
                        buf[n++] = ',';
                buf[n++] = plus & CGMASK(x) ? '+' : hash & CGMASK(x) ? '#' : '-';
                memcpy(buf + n, name, len);
                n += len;
        }
        strbuf_append_n(b, buf, n);
}

int state_file_save(const char *dir, const DesiredSet *s) {
        _cleanup_free_ char *text = NULL;
        StrBuf b = STRBUF_INIT;

        strbuf_append(&b, STATE_HEADER "\n");
        for (size_t i = 0; i < s->n; i++) {
                const DesiredCgroup *d = &s->items[i];
                strbuf_append(&b, "cgroup ");
                strbuf_append(&b, d->path);
                strbuf_append(&b, d->create ? " create=yes" : " create=no");
                desired_tokens_append(&b, "sc", d->sc_enable, d->sc_bypass, d->sc_disable);
                desired_tokens_append(&b, "ctl", d->ctl_enable, d->ctl_bypass, 0);
                strbuf_putc(&b, '\n');
        }
        if (strbuf_steal(&b, &text) < 0)
                return -ENOMEM;
        /* Replaced, not synced: it describes the live hierarchy (for the drift report), which a machine
         * that loses the page cache loses as well; a process crash loses no written byte. A torn file after
         * a power loss is ignored with a warning (manager_log_drift()). */
        return file_replace_changed(dir, STATE_FILE_NAME, text);
}

int desired_tokens_parse(const char *value, bool allow_minus, CgMask *plus, CgMask *hash, CgMask *minus) {
        /* cut in place, not strdup() and strtok_r() (twice a line of the applied state); empty tokens are
         * skipped as strtok_r() skipped them */
        for (const char *t = value, *end; *t; t = *end ? end + 1 : end) {
                char name[64];

                end = strchrnul(t, ',');
                if (end == t)
                        continue;
                size_t n = (size_t) (end - t) - 1;
                if (n >= sizeof(name))
                        return -EBADMSG;        /* no controller has so long a name */
                memcpy(name, t + 1, n);
                name[n] = '\0';
                Controller x = controller_from_string(name);
                if (x < 0 || ((*plus | *hash | *minus) & CGMASK(x)))
                        return -EBADMSG;
                if (t[0] == '+')
                        *plus |= CGMASK(x);
                else if (t[0] == '#')
                        *hash |= CGMASK(x);
                else if (t[0] == '-' && allow_minus)
                        *minus |= CGMASK(x);
                else
                        return -EBADMSG;
        }
        return 0;
}

/* strtok_r(@*cursor, " ") without its strspn() and strpbrk() calls: a word, cut in place, or NULL */
static char *next_word(char **cursor) {
        char *s = *cursor, *e;

        while (*s == ' ')
                s++;
        if (!*s) {
                *cursor = s;
                return NULL;
        }
        for (e = s; *e && *e != ' '; e++)
                ;
        if (*e)
                *e++ = '\0';
        *cursor = e;
        return s;
}

int state_file_load(const char *dir, DesiredSet *ret) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        DesiredSet s = {};
        unsigned lineno = 0;
        char *text;
        size_t len;
        int r = 0;

        if (asprintf(&path, "%s/%s", dir, STATE_FILE_NAME) < 0)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /*
         * The whole file, owned by the set: its paths point into it, cut in place (a getline(), a
         * strdup() of the path and strtok_r()s a line was two thirds of a re-apply's drift report).
         */
        r = file_read_fd_len(fd, SIZE_MAX, 0, &text, &len);
        if (r < 0)
                return r;
        if (!desired_own(&s, text))
                return -ENOMEM;
        const char *file = desired_own(&s, strdup(path));
        if (!file) {
                desired_set_done(&s);
                return -ENOMEM;
        }

        for (char *line = text, *next; line < text + len; line = next) {
                DesiredCgroup *d;
                char *cursor, *word;

                /* a line ends at its newline, and (as a string) at a NUL byte before it */
                char *nl = memchr(line, '\n', (size_t) (text + len - line));
                next = nl ? nl + 1 : text + len;
                if (nl)
                        *nl = '\0';
                lineno++;
                if (lineno == 1) {
                        if (!streq(line, STATE_HEADER)) {
                                r = -EBADMSG;
                                break;
                        }
                        continue;
                }
                cursor = line;
                word = next_word(&cursor);
                if (!word || !streq(word, "cgroup") || !(word = next_word(&cursor)) || !cgpath_is_absolute(word)) {
                        r = -EBADMSG;
                        break;
                }
                d = desired_add(&s);
                if (!d) {
                        r = -ENOMEM;
                        break;
                }
                d->path = word;
                d->origin = d->sc_origin = d->ctl_origin = (Origin) { .file = file, .line = lineno };
                while (r >= 0 && (word = next_word(&cursor))) {
                        CgMask unused = 0;
                        if (startswith(word, "create="))
                                d->create = streq(word + 7, "yes");
                        else if (startswith(word, "sc="))
                                r = desired_tokens_parse(word + 3, true, &d->sc_enable, &d->sc_bypass, &d->sc_disable);
                        else if (startswith(word, "ctl="))
                                r = desired_tokens_parse(word + 4, false, &d->ctl_enable, &d->ctl_bypass, &unused);
                        else
                                r = -EBADMSG;
                }
                if (r < 0)
                        break;
        }
        if (r >= 0 && lineno == 0)
                r = -EBADMSG;
        if (r < 0) {
                desired_set_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}
