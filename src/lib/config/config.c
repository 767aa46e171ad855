/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the configuration with inih. This is the only file that includes
 * ini.h (style.md section 10). The line format and how lines reach inih are
 * config-reader.c's; the values are config-validate.c's.
 */
#include <assert.h>
#include <dirent.h>
#include <ini.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>

#include "cgbypass/config.h"
#include "cgbypass/parse.h"
#include "cgbypass/strbuf.h"
#include "config-internal.h"
#include "config-parser.h"

/* ---- errors ---- */

void config_errors_done(ConfigErrors *e) {
        for (size_t i = 0; i < e->n; i++)
                free(e->items[i].text);
        free(e->items);
        *e = CONFIG_ERRORS_INIT;
}

size_t config_errors_count(const ConfigErrors *e) {
        return e->n;
}

const char *config_errors_get(const ConfigErrors *e, size_t i) {
        return i < e->n ? e->items[i].text : NULL;
}

void config_errors_print(const ConfigErrors *e, FILE *f) {
        for (size_t i = 0; i < e->n; i++)
                fprintf(f, "%s\n", e->items[i].text);
}

static int config_errors_addv(ConfigErrors *e, size_t rank, const ConfigLocation *loc,
                              const char *fmt, va_list ap) {
        StrBuf b = STRBUF_INIT;
        char *text;

        if (e->n == e->cap) {
                size_t cap = e->cap ? e->cap * 2 : 16;
                ConfigError *items = realloc(e->items, cap * sizeof(*items));
                if (!items) {
                        e->oom = true;
                        return -ENOMEM;
                }
                e->items = items;
                e->cap = cap;
        }

        if (loc && loc->file) {
                strbuf_append(&b, loc->file);
                if (loc->line > 0)
                        strbuf_printf(&b, ":%u", loc->line);
                strbuf_append(&b, ": ");
        }
        char *reason = NULL;
        if (vasprintf(&reason, fmt, ap) < 0) {
                strbuf_done(&b);
                e->oom = true;
                return -ENOMEM;
        }
        strbuf_append(&b, reason);
        free(reason);
        if (strbuf_steal(&b, &text) < 0) {
                e->oom = true;
                return -ENOMEM;
        }

        e->items[e->n] = (ConfigError) {
                .text = text,
                .rank = rank,
                .line = loc ? loc->line : 0,
                .seq = e->n,
        };
        e->n++;
        return 0;
}

int config_errors_add(ConfigErrors *e, const ConfigLocation *loc, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = config_errors_addv(e, SIZE_MAX, loc, fmt, ap);
        va_end(ap);
        return r;
}

static size_t config_file_rank(const Config *c, const char *file) {
        for (size_t i = 0; i < c->n_files; i++)
                if (c->files[i] == file)
                        return i;
        return SIZE_MAX;
}

int config_error(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                 const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = config_errors_addv(errs, config_file_rank(c, loc->file), loc, fmt, ap);
        va_end(ap);
        return r < 0 ? r : -EINVAL;
}

static int config_error_cmp(const void *a, const void *b) {
        const ConfigError *x = a, *y = b;

        if (x->rank != y->rank)
                return x->rank < y->rank ? -1 : 1;
        if (x->line != y->line)
                return x->line < y->line ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void config_errors_sort_from(ConfigErrors *errs, size_t from) {
        if (from < errs->n)
                qsort(errs->items + from, errs->n - from, sizeof(errs->items[0]), config_error_cmp);
}

char *config_quote(const char *s) {
        StrBuf b = STRBUF_INIT;
        size_t n = 0;
        char *q;

        for (const unsigned char *p = (const unsigned char *) s; *p; p++, n++) {
                if (n == CONFIG_QUOTE_MAX) {
                        strbuf_append(&b, "...");
                        break;
                }
                if (*p == '\n')
                        strbuf_append(&b, "\\n");
                else if (*p == '\t')
                        strbuf_append(&b, "\\t");
                else if (*p == '\r')
                        strbuf_append(&b, "\\r");
                else if (*p < 0x20 || *p == 0x7f)
                        strbuf_printf(&b, "\\x%02x", *p);
                else
                        strbuf_putc(&b, (char) *p);
        }
        if (strbuf_steal(&b, &q) < 0)
                return NULL;
        return q;
}

/* ---- the Config ---- */

int config_new(Config **ret) {
        _cleanup_(config_freep) Config *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->daemon.cgroup_root = strdup(CONFIG_DEFAULT_CGROUP_ROOT);
        c->daemon.state_directory = strdup(CONFIG_DEFAULT_STATE_DIRECTORY);
        if (!c->daemon.cgroup_root || !c->daemon.state_directory)
                return -ENOMEM;
        c->daemon.backend = BACKEND_AUTO;
        c->daemon.max_cgroups_per_delegation = CONFIG_DEFAULT_MAX_CGROUPS_PER_DELEGATION;
        c->daemon.max_delegated_cgroups = CONFIG_DEFAULT_MAX_DELEGATED_CGROUPS;
        *ret = TAKE_PTR(c);
        return 0;
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;
        config_index_free(c);
        free(c->daemon.cgroup_root);
        free(c->daemon.state_directory);
        for (size_t i = 0; i < c->n_cgroups; i++) {
                free(c->cgroups[i].path);
                for (size_t j = 0; j < c->cgroups[i].n_values; j++) {
                        free(c->cgroups[i].values[j].file);
                        free(c->cgroups[i].values[j].value);
                }
                free(c->cgroups[i].values);
        }
        free(c->cgroups);
        for (size_t i = 0; i < c->n_delegates; i++) {
                free(c->delegates[i].path);
                free(c->delegates[i].user);
        }
        free(c->delegates);
        for (size_t i = 0; i < c->n_files; i++)
                free(c->files[i]);
        free(c->files);
        free(c);
        return NULL;
}

/* Registers @name as a file that locations may point to; *ret is the Config's copy. */
static int config_add_file(Config *c, const char *name, const char **ret) {
        char **files = realloc(c->files, (c->n_files + 1) * sizeof(*files));

        if (!files)
                return -ENOMEM;
        c->files = files;
        files[c->n_files] = strdup(name);
        if (!files[c->n_files])
                return -ENOMEM;
        *ret = files[c->n_files++];
        return 0;
}

/* config_error()'s result for a caller that keeps going: only -ENOMEM is a failure */
static int keep_going(int r) {
        return r == -ENOMEM ? r : 0;
}

static void *grow_one(void *array, size_t n, size_t size) {
        void *a = realloc(array, (n + 1) * size);

        if (a)
                memset((char *) a + n * size, 0, size);
        return a;
}

/*
 * The same for an array that only this grows (the [cgroup] sections): its
 * room is @n rounded up to a power of two, so a file of 10,000 sections
 * reallocates 14 times, not 10,000 (each a copy, or an mremap(2) once large).
 */
static void *grow_doubling(void *array, size_t n, size_t size) {
        void *a = array;

        if ((n & (n - 1)) == 0) {       /* full: 0, 1, 2, 4, ... */
                a = reallocarray(array, n ? 2 * n : 1, size);
                if (!a)
                        return NULL;
        }
        memset((char *) a + n * size, 0, size);
        return a;
}

/* ---- sections and keys ---- */

/*
 * A key's parser: @base is the section's struct (DaemonSettings, CgroupSpec,
 * DelegateSpec), @k says where in it the value and its location go. @name is
 * the key as messages name it (NULL for a command-line option).
 * Return: 0, -EINVAL (problem recorded), -ENOMEM.
 */
typedef int (*KeyParseFn)(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                          const char *name, const char *value, const KeyInfo *k, void *base);

struct KeyInfo {
        SectionKind section;
        const char *name;
        KeyParseFn parse;
        size_t offset;          /* of the value in @base */
        size_t loc_offset;      /* of its ConfigLocation */
};

#define FIELD(base, off, type) ((type *) (void *) ((char *) (base) + (off)))

static void key_set_loc(const KeyInfo *k, void *base, const ConfigLocation *loc) {
        *FIELD(base, k->loc_offset, ConfigLocation) = *loc;
}

/* [daemon] directories: the value and its location change only when the value is good */
static int key_daemon_path(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                           const char *name, const char *value, const KeyInfo *k, void *base) {
        char **field = FIELD(base, k->offset, char *);
        char *v = NULL;
        int r = config_parse_path(c, errs, loc, name, value, false, &v);

        if (r < 0)
                return r;
        free(*field);
        *field = v;
        key_set_loc(k, base, loc);
        return 0;
}

static int key_backend(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                       const char *name, const char *value, const KeyInfo *k, void *base) {
        BackendType t;
        int r = config_parse_backend(c, errs, loc, name, value, &t);

        if (r < 0)
                return r;
        *FIELD(base, k->offset, BackendType) = t;
        key_set_loc(k, base, loc);
        return 0;
}

/* [daemon] limits: a count from 1 to CONFIG_MAX_CGROUPS_LIMIT */
static int key_daemon_limit(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                            const char *name, const char *value, const KeyInfo *k, void *base) {
        unsigned long long v;

        if (kstrtoull(value, 10, &v) < 0 || v < 1 || v > CONFIG_MAX_CGROUPS_LIMIT)
                return config_error(c, errs, loc, "%s: '%s' is not a number of cgroups from 1 to %d", name, value,
                                    CONFIG_MAX_CGROUPS_LIMIT);
        *FIELD(base, k->offset, unsigned) = (unsigned) v;
        key_set_loc(k, base, loc);
        return 0;
}

static int key_cgroup_path(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                           const char *name, const char *value, const KeyInfo *k, void *base) {
        key_set_loc(k, base, loc);
        return config_parse_path(c, errs, loc, name, value, true, FIELD(base, k->offset, char *));
}

static int key_delegate_path(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                             const char *name, const char *value, const KeyInfo *k, void *base) {
        _cleanup_free_ char *path = NULL;
        int r;

        key_set_loc(k, base, loc);
        r = config_parse_path(c, errs, loc, name, value, true, &path);
        if (r >= 0 && streq(path, "/"))
                r = config_error(c, errs, loc, "path: the root cgroup cannot be delegated; "
                                 "delegate a cgroup below it");
        if (r >= 0)
                *FIELD(base, k->offset, char *) = TAKE_PTR(path);
        return r;
}

static int key_bool(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                    const char *name, const char *value, const KeyInfo *k, void *base) {
        key_set_loc(k, base, loc);
        return config_parse_bool(c, errs, loc, name, value, FIELD(base, k->offset, bool));
}

static int key_subtree_control(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                               const char *name, const char *value, const KeyInfo *k, void *base) {
        key_set_loc(k, base, loc);
        return config_parse_change(c, errs, loc, name, value, true,
                                   FIELD(base, k->offset, ControllerChange));
}

static int key_controllers(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                           const char *name, const char *value, const KeyInfo *k, void *base) {
        key_set_loc(k, base, loc);
        return config_parse_change(c, errs, loc, name, value, false,
                                   FIELD(base, k->offset, ControllerChange));
}

static int key_controller_list(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                               const char *name, const char *value, const KeyInfo *k, void *base) {
        key_set_loc(k, base, loc);
        return config_parse_controller_list(c, errs, loc, name, value, FIELD(base, k->offset, CgMask));
}

static int key_user(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                    const char *name, const char *value, const KeyInfo *k, void *base) {
        /* the uid, and the user's name beside it */
        key_set_loc(k, base, loc);
        return config_parse_user(c, errs, loc, name, value, FIELD(base, k->offset, uid_t),
                                 &((DelegateSpec *) base)->user);
}

#define KEY(s, n, fn, type, field) \
        { s, n, fn, offsetof(type, field), offsetof(type, field##_loc) }

/*
 * Every fixed key of every section, in the order "unknown key" messages list
 * them. A [cgroup] section also takes controller files ("memory.max"):
 * config-values.c.
 */
static const KeyInfo key_table[] = {
        KEY(SECTION_DAEMON,   "cgroup-root",     key_daemon_path,     DaemonSettings, cgroup_root),
        KEY(SECTION_DAEMON,   "backend",         key_backend,         DaemonSettings, backend),
        KEY(SECTION_DAEMON,   "state-directory", key_daemon_path,     DaemonSettings, state_directory),
        KEY(SECTION_DAEMON,   "max-cgroups-per-delegation", key_daemon_limit, DaemonSettings, max_cgroups_per_delegation),
        KEY(SECTION_DAEMON,   "max-delegated-cgroups", key_daemon_limit, DaemonSettings, max_delegated_cgroups),
        KEY(SECTION_CGROUP,   "path",            key_cgroup_path,     CgroupSpec,     path),
        KEY(SECTION_CGROUP,   "create",          key_bool,            CgroupSpec,     create),
        KEY(SECTION_CGROUP,   "subtree-control", key_subtree_control, CgroupSpec,     subtree_control),
        KEY(SECTION_CGROUP,   "controllers",     key_controllers,     CgroupSpec,     controllers),
        KEY(SECTION_DELEGATE, "path",            key_delegate_path,   DelegateSpec,   path),
        { SECTION_DELEGATE, "user", key_user, offsetof(DelegateSpec, uid), offsetof(DelegateSpec, user_loc) },
        KEY(SECTION_DELEGATE, "controllers",     key_controller_list, DelegateSpec,   controllers),
        KEY(SECTION_DELEGATE, "create",          key_bool,            DelegateSpec,   create),
};
static_assert(ELEMENTSOF(key_table) <= CONFIG_KEYS_MAX, "Parser.key_line holds every key");

static const KeyInfo *key_find(SectionKind section, const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(key_table); i++)
                if (key_table[i].section == section && streq(key_table[i].name, name))
                        return &key_table[i];
        return NULL;
}

/* "path, create, subtree-control and controllers", from the table */
static char *keys_text(SectionKind section) {
        StrBuf b = STRBUF_INIT;
        size_t n = 0, i = 0;
        char *s;

        for (size_t j = 0; j < ELEMENTSOF(key_table); j++)
                n += key_table[j].section == section;
        for (size_t j = 0; j < ELEMENTSOF(key_table); j++) {
                if (key_table[j].section != section)
                        continue;
                if (i > 0)
                        strbuf_append(&b, i + 1 == n ? " and " : ", ");
                strbuf_append(&b, key_table[j].name);
                i++;
        }
        return strbuf_steal(&b, &s) < 0 ? NULL : s;
}

static const SectionInfo section_info[] = {
        { "daemon", SECTION_DAEMON },
        { "cgroup", SECTION_CGROUP },
        { "delegate", SECTION_DELEGATE },
};

static ConfigLocation parser_loc(const Parser *p) {
        return (ConfigLocation) { p->file, p->line };
}

static void parser_errorv(Parser *p, unsigned line, const char *fmt, va_list ap) {
        ConfigLocation loc = { p->file, line };

        if (config_errors_addv(p->errs, config_file_rank(p->config, p->file), &loc, fmt, ap) < 0)
                p->r = -ENOMEM;
}

/* Records a problem on the current line; only -ENOMEM is remembered as a failure. */
_printf_(2, 3)
static void parser_error(Parser *p, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        parser_errorv(p, p->line, fmt, ap);
        va_end(ap);
}

/* A line that the reader rejects: whatever key it held is unknown. */
void parser_reject(Parser *p, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        parser_errorv(p, p->line, fmt, ap);
        va_end(ap);
        p->damaged = true;
}

_printf_(2, 3)
static void parser_section_error(Parser *p, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        parser_errorv(p, p->section_line, fmt, ap);
        va_end(ap);
}

static void parser_oom(Parser *p, int r) {
        if (r == -ENOMEM)
                p->r = r;
}


/*
 * Keys a section cannot do without, reported at its header. Not when one of
 * its lines was rejected: that line may have held the key.
 */
static void parser_end_section(Parser *p) {
        if (p->damaged)
                return;
        if ((p->kind == SECTION_CGROUP || p->kind == SECTION_DELEGATE) &&
            p->key_line[key_find(p->kind, "path") - key_table] == 0)
                parser_section_error(p, "[%s] section has no 'path' key; add "
                                     "'path = /absolute/cgroup/path'", p->section->name);
        if (p->kind == SECTION_DELEGATE && p->key_line[key_find(p->kind, "user") - key_table] == 0)
                parser_section_error(p, "[delegate] section has no 'user' key; add 'user = NAME' or "
                                     "'user = UID'");
}

static void parser_start_section(Parser *p, const SectionInfo *info) {
        Config *c = p->config;

        memset(p->key_line, 0, sizeof(p->key_line));
        p->damaged = false;
        p->section_line = p->line;
        p->section = NULL;
        p->kind = SECTION_IGNORED;
        if (!info)
                return;

        switch (info->kind) {
        case SECTION_DAEMON:
                if (p->daemon_line > 0) {
                        parser_error(p, "second [daemon] section in this file (the first is at "
                                     "line %u); merge them", p->daemon_line);
                        return;
                }
                p->daemon_line = p->line;
                break;
        case SECTION_CGROUP: {
                CgroupSpec *a = grow_doubling(c->cgroups, c->n_cgroups, sizeof(*a));
                if (!a) {
                        p->r = -ENOMEM;
                        return;
                }
                c->cgroups = a;
                a[c->n_cgroups++] = (CgroupSpec) {
                        .create = true,
                        .section_loc = parser_loc(p),
                };
                break;
        }
        case SECTION_DELEGATE: {
                DelegateSpec *a = grow_one(c->delegates, c->n_delegates, sizeof(*a));
                if (!a) {
                        p->r = -ENOMEM;
                        return;
                }
                c->delegates = a;
                a[c->n_delegates++] = (DelegateSpec) {
                        .uid = (uid_t) -1,
                        .create = true,
                        .section_loc = parser_loc(p),
                };
                break;
        }
        default:
                assert(false);
        }
        p->section = info;
        p->kind = info->kind;
}

/* A line that starts with '[' (after whitespace): a header, good or bad. */
void parser_header(Parser *p, char *s) {
        char *end = find_chars_or_comment(s + 1, "]");
        const SectionInfo *info = NULL;

        parser_end_section(p);
        parser_start_section(p, NULL);  /* whatever follows a bad header is skipped */

        if (*end != ']') {
                parser_error(p, "section header has no closing ']'");
                return;
        }
        char *rest = skip_space(end + 1);
        if (*rest && *rest != ';') {
                _cleanup_free_ char *q = config_quote(rest);
                if (!q)
                        p->r = -ENOMEM;
                else
                        parser_error(p, "unexpected text '%s' after ']'; only a ';' comment may follow "
                                     "a section header", q);
                return;
        }

        size_t len = (size_t) (end - (s + 1));
        *end = '\0';
        for (size_t i = 0; i < ELEMENTSOF(section_info); i++)
                if (len <= INI_SECTION_NAME_MAX && streq(section_info[i].name, s + 1))
                        info = &section_info[i];
        if (info) {
                parser_start_section(p, info);
                return;
        }
        /* quoted only for the message: every header of a good file ends above */
        _cleanup_free_ char *name = config_quote(s + 1);
        if (!name) {
                p->r = -ENOMEM;
                return;
        }
        if (len > INI_SECTION_NAME_MAX) {
                parser_error(p, "section name '%s' is longer than %d bytes, which inih cannot hold; "
                             "use [daemon], [cgroup] or [delegate]", name, INI_SECTION_NAME_MAX);
                return;
        }
        parser_error(p, "unknown section [%s]; known sections are [daemon], [cgroup] and [delegate]", name);
}


/* ---- values ---- */

/* The struct that the current section's keys go into. */
static void *parser_section_base(Parser *p) {
        Config *c = p->config;

        switch (p->kind) {
        case SECTION_DAEMON:
                return &c->daemon;
        case SECTION_CGROUP:
                return &c->cgroups[c->n_cgroups - 1];
        case SECTION_DELEGATE:
                return &c->delegates[c->n_delegates - 1];
        default:
                assert(false);
                return NULL;
        }
}

/* inih's ini_handler: one "key = value" line. @section is unused: the reader tracks sections. */
/* @name quoted for a message; made only when there is one to give, not for every line */
static bool quote_key(Parser *p, const char *name, char **ret) {
        *ret = config_quote(name);
        if (!*ret)
                p->r = -ENOMEM;
        return *ret;
}

static int parser_handler(void *user, const char *section, const char *name, const char *value) {
        Parser *p = user;
        _cleanup_free_ char *qname = NULL;

        (void) section;
        if (p->r < 0 || p->kind == SECTION_IGNORED)
                return 1;
        if (!*name) {
                parser_reject(p, "missing key name before '='");
                return 1;
        }
        if (p->kind == SECTION_NONE) {
                if (!quote_key(p, name, &qname))
                        return 1;
                parser_error(p, "key '%s' is outside any section; put it under [daemon], [cgroup] or "
                             "[delegate]", qname);
                return 1;
        }

        const KeyInfo *k = key_find(p->kind, name);
        if (!k && p->kind == SECTION_CGROUP && strchr(name, '.')) {
                /* an interface file: "memory.max = 4G" */
                const ConfigLocation loc = parser_loc(p);
                CgroupSpec *cg = parser_section_base(p);
                for (size_t i = 0; i < cg->n_values; i++)
                        if (streq(cg->values[i].file, name)) {
                                if (!quote_key(p, name, &qname))
                                        return 1;
                                parser_error(p, "duplicate key '%s' in [%s] (first set at line %u); keep one",
                                             qname, p->section->name, cg->values[i].loc.line);
                                return 1;
                        }
                parser_oom(p, config_parse_value(p->config, p->errs, &loc, name, value, cg));
                return 1;
        }
        if (!k) {
                if (!quote_key(p, name, &qname))
                        return 1;
                _cleanup_free_ char *known = keys_text(p->kind);
                if (!known)
                        p->r = -ENOMEM;
                else
                        parser_error(p, "unknown key '%s' in [%s]; known keys are %s%s", qname,
                                     p->section->name, known,
                                     p->kind == SECTION_CGROUP ? ", and the writable files of "
                                     "controllers (memory.max, cpu.weight, ...)" : "");
                return 1;
        }
        size_t i = (size_t) (k - key_table);
        if (p->key_line[i] > 0) {
                if (!quote_key(p, name, &qname))
                        return 1;
                parser_error(p, "duplicate key '%s' in [%s] (first set at line %u); keep one",
                             qname, p->section->name, p->key_line[i]);
                return 1;
        }
        p->key_line[i] = p->line;
        const ConfigLocation loc = parser_loc(p);
        parser_oom(p, k->parse(p->config, p->errs, &loc, k->name, value, k, parser_section_base(p)));
        return 1;
}

/* ---- files ---- */

/* Reads one file into @c; problems go to @errs. Return: 0 (problems or not), or -ENOMEM. */
static int config_parse_file(Config *c, const char *path, bool missing_ok, ConfigErrors *errs) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ Parser *p = NULL;
        const char *file;
        struct stat st;
        int r;

        f = fopen(path, "re");
        int open_errno = errno;
        if (!f && open_errno == ENOENT && missing_ok)
                return 0;
        r = config_add_file(c, path, &file);
        if (r < 0)
                return r;
        ConfigLocation loc = { file, 0 };
        if (!f)
                return keep_going(config_error(c, errs, &loc, "cannot open: %s", strerror(open_errno)));
        if (fstat(fileno(f), &st) < 0)
                return keep_going(config_error(c, errs, &loc, "cannot stat: %s", strerror(errno)));
        if (S_ISDIR(st.st_mode))
                return keep_going(config_error(c, errs, &loc,
                                               "is a directory, not a configuration file"));

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        *p = (Parser) {
                .config = c,
                .errs = errs,
                .f = f,
                .file = file,
                .kind = SECTION_NONE,
        };

        r = ini_parse_stream(parser_reader, p, parser_handler, p);
        parser_end_section(p);
        if (p->r < 0)
                return p->r;
        if (r == -2)
                return -ENOMEM;
        if (r > 0) {
                /* The reader hands inih nothing it could reject; keep inih's word if it does. */
                ConfigLocation at = { file, (unsigned) r };
                return keep_going(config_error(c, errs, &at, "syntax error"));
        }
        return 0;
}

static int strcmp_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static char *path_join(const char *dir, const char *name) {
        char *s = NULL;
        size_t n = strlen(dir);

        if (asprintf(&s, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", name) < 0)
                return NULL;
        return s;
}

/* Reads the drop-ins of @dir in strcmp() order. Return: 0 (problems or not), or -ENOMEM. */
static int config_parse_dir(Config *c, const char *dir, ConfigErrors *errs) {
        _cleanup_strv_free_ char **names = NULL;
        size_t n = 0;
        DIR *d;
        int r = 0;

        d = opendir(dir);
        if (!d) {
                const char *file;
                if (errno == ENOENT)
                        return 0;
                int e = errno;
                r = config_add_file(c, dir, &file);
                if (r < 0)
                        return r;
                ConfigLocation loc = { file, 0 };
                return keep_going(config_error(c, errs, &loc, "cannot read the directory: %s",
                                               strerror(e)));
        }

        for (;;) {
                errno = 0;
                struct dirent *de = readdir(d);
                if (!de) {
                        if (errno > 0) {
                                const char *file;
                                int e = errno;
                                r = config_add_file(c, dir, &file);
                                if (r >= 0) {
                                        ConfigLocation loc = { file, 0 };
                                        r = keep_going(config_error(c, errs, &loc,
                                                                    "cannot read the directory: %s",
                                                                    strerror(e)));
                                }
                        }
                        break;
                }
                size_t len = strlen(de->d_name);
                if (de->d_name[0] == '.' || len <= 5 || !streq(de->d_name + len - 5, ".conf"))
                        continue;
                char **a = realloc(names, (n + 2) * sizeof(*a));
                if (!a) {
                        r = -ENOMEM;
                        break;
                }
                names = a;
                names[n] = strdup(de->d_name);
                names[n + 1] = NULL;
                if (!names[n]) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        (void) closedir(d);
        if (r == -ENOMEM)
                return r;

        if (n > 0)
                qsort(names, n, sizeof(*names), strcmp_ptr);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = path_join(dir, names[i]);
                if (!path)
                        return -ENOMEM;
                r = config_parse_file(c, path, false, errs);
                if (r < 0)
                        return r;
        }
        return 0;
}

int config_load(const char *main_file, const char *conf_dir, Config **ret, ConfigErrors *errs) {
        _cleanup_(config_freep) Config *c = NULL;
        size_t first = errs->n;
        int r;

        r = config_new(&c);
        if (r < 0)
                return r;
        if (main_file) {
                r = config_parse_file(c, main_file, true, errs);
                if (r < 0)
                        return r;
        }
        if (conf_dir) {
                r = config_parse_dir(c, conf_dir, errs);
                if (r < 0)
                        return r;
        }
        r = config_validate(c, errs);
        if (r == -ENOMEM || errs->oom)
                return -ENOMEM;

        config_errors_sort_from(errs, first);
        if (errs->n > first)
                return -EINVAL;
        config_index_update(c);
        *ret = TAKE_PTR(c);
        return 0;
}

int config_override_daemon(Config *c, const char *key, const char *value, const char *origin,
                           ConfigErrors *errs) {
        const char *file;
        int r;

        r = config_add_file(c, origin, &file);
        if (r < 0)
                return r;
        const ConfigLocation loc = { file, 0 };

        const KeyInfo *k = key_find(SECTION_DAEMON, key);
        if (k)
                return k->parse(c, errs, &loc, NULL, value, k, &c->daemon);
        _cleanup_free_ char *q = config_quote(key);
        if (!q)
                return -ENOMEM;
        return config_error(c, errs, &loc, "unknown [daemon] key '%s'", q);
}

int config_add_runtime_delegation(Config *c, const char *where, unsigned line, const char *path, uid_t uid,
                                  CgMask controllers, bool create, bool persistent) {
        _cleanup_free_ char *p = strdup(path), *user = NULL;
        const char *file = NULL;
        struct passwd *pw = getpwuid(uid);
        DelegateSpec *a;
        int r;

        if (!p || (pw && !(user = strdup(pw->pw_name))))
                return -ENOMEM;
        for (size_t i = 0; i < c->n_files && !file; i++)
                if (streq(c->files[i], where))
                        file = c->files[i];
        if (!file) {
                r = config_add_file(c, where, &file);
                if (r < 0)
                        return r;
        }
        a = reallocarray(c->delegates, c->n_delegates + 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        c->delegates = a;
        ConfigLocation loc = { .file = file, .line = line };
        a[c->n_delegates++] = (DelegateSpec) {
                .path = TAKE_PTR(p),
                .uid = uid,
                .user = TAKE_PTR(user),
                .controllers = controllers,
                .create = create,
                .runtime = true,
                .persistent = persistent,
                .section_loc = loc,
                .path_loc = loc,
                .user_loc = loc,
                .controllers_loc = loc,
                .create_loc = loc,
        };
        config_index_update(c);
        return 0;
}

void config_remove_delegation(Config *c, size_t i) {
        if (i >= c->n_delegates)
                return;
        free(c->delegates[i].path);
        free(c->delegates[i].user);
        memmove(&c->delegates[i], &c->delegates[i + 1], (c->n_delegates - i - 1) * sizeof(DelegateSpec));
        c->n_delegates--;
        config_index_update(c);
}
