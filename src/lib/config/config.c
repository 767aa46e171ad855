/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the configuration with inih. This is the only file that includes
 * ini.h (style.md section 10).
 *
 * What the format accepts, on Debian 12's libinih 55 (measured: the library
 * is built with INI_USE_STACK, INI_MAX_LINE 200, MAX_SECTION 50, multi-line
 * values, a UTF-8 BOM and ';' inline comments on; the limits are compiled in,
 * and pkg-config passes no -D):
 *
 *   - One statement per line: "[section]", "key = value" (inih also takes
 *     "key: value"), a comment or a blank line. Leading whitespace is
 *     ignored. Lines end in "\n" or "\r\n".
 *   - A line holds at most 197 bytes, leading whitespace included and the
 *     line ending not (inih's 200-byte buffer must hold "\r\n\0"). inih
 *     would split a longer line in two without a word; it is an error here.
 *   - A section name holds at most 49 bytes (inih cuts longer ones without
 *     a word; an error here). Section names and keys are exact and
 *     case-sensitive. After ']' only a ';' comment may follow (inih ignores
 *     anything there; an error here).
 *   - Comments: a line whose first non-blank byte is ';' or '#', and an
 *     inline comment from a ';' that follows whitespace: "a ; b" is "a",
 *     "a;b" stays "a;b". '#' starts no inline comment: "a # b" is "a # b".
 *   - Values are trimmed. An empty value is allowed where it means
 *     something: an empty subtree-control or controllers manages nothing.
 *   - No multi-line values. inih appends an indented line to the previous
 *     key's value (INI_ALLOW_MULTILINE); that turns an indented "key = value"
 *     into part of the key above it. We strip leading whitespace before inih
 *     sees a line, so indentation is cosmetic and an indented line without
 *     '=' is an error.
 *   - One UTF-8 byte order mark at the start of a file is skipped, as inih
 *     does. A NUL byte is an error (inih would end the line there).
 *
 * Values (config-validate.c): paths are absolute and normalized; booleans
 * are yes/no, true/false, on/off, 1/0 in any case; subtree-control and
 * controllers are tokens separated by blanks, each a prefix ('+', '-', '#';
 * controllers takes no '-') and a cgroup2 controller name, each controller
 * at most once; [delegate] controllers are names separated by blanks or
 * commas; user is an existing user name or a numeric uid.
 *
 * Sections: [daemon] at most once per file, its keys merged over the files
 * (a later file wins); [cgroup] and [delegate] once per cgroup path.
 *
 * inih gets its lines from our reader (ini_parse_stream()), which numbers
 * them, keeps the raw text, tracks the current section and reports every
 * syntax error itself, then hands inih a blank line instead. inih splits
 * "key = value" and strips comments; its return value (the first bad line
 * only) is a fallback that the reader leaves nothing for.
 */
#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <ini.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "cgbypass/config.h"
#include "cgbypass/strbuf.h"
#include "config-internal.h"

/* Debian's libinih 55: MAX_SECTION is 50, a private #define in ini.c; names keep 49 bytes. */
#define INI_SECTION_NAME_MAX 49

/* Raw bytes kept per line. Longer lines are errors, so only their length matters. */
#define RAW_LINE_MAX 4096

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
        *ret = TAKE_PTR(c);
        return 0;
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;
        free(c->daemon.cgroup_root);
        free(c->daemon.state_directory);
        for (size_t i = 0; i < c->n_cgroups; i++)
                free(c->cgroups[i].path);
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

/* ---- sections and keys ---- */

typedef enum ConfigKey {
        KEY_CGROUP_ROOT,
        KEY_BACKEND,
        KEY_STATE_DIRECTORY,
        KEY_PATH,
        KEY_CREATE,
        KEY_SUBTREE_CONTROL,
        KEY_CONTROLLERS,
        KEY_USER,
        _KEY_MAX,
} ConfigKey;

static const char *const key_names[_KEY_MAX] = {
        [KEY_CGROUP_ROOT]       = "cgroup-root",
        [KEY_BACKEND]           = "backend",
        [KEY_STATE_DIRECTORY]   = "state-directory",
        [KEY_PATH]              = "path",
        [KEY_CREATE]            = "create",
        [KEY_SUBTREE_CONTROL]   = "subtree-control",
        [KEY_CONTROLLERS]       = "controllers",
        [KEY_USER]              = "user",
};

typedef enum SectionKind {
        SECTION_NONE,           /* before the first header */
        SECTION_IGNORED,        /* after a bad header: its problem is reported once */
        SECTION_DAEMON,
        SECTION_CGROUP,
        SECTION_DELEGATE,
} SectionKind;

#define K(k) (1u << (k))

typedef struct SectionInfo {
        const char *name;
        SectionKind kind;
        unsigned keys;          /* K() of the keys it takes */
        const char *keys_text;  /* for "unknown key" */
} SectionInfo;

static const SectionInfo section_info[] = {
        { "daemon", SECTION_DAEMON,
          K(KEY_CGROUP_ROOT) | K(KEY_BACKEND) | K(KEY_STATE_DIRECTORY),
          "cgroup-root, backend and state-directory" },
        { "cgroup", SECTION_CGROUP,
          K(KEY_PATH) | K(KEY_CREATE) | K(KEY_SUBTREE_CONTROL) | K(KEY_CONTROLLERS),
          "path, create, subtree-control and controllers" },
        { "delegate", SECTION_DELEGATE,
          K(KEY_PATH) | K(KEY_USER) | K(KEY_CONTROLLERS) | K(KEY_CREATE),
          "path, user, controllers and create" },
};

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
        unsigned key_line[_KEY_MAX];    /* where the current section set each key */
        bool damaged;                   /* a line of the current section was rejected */

        char raw[RAW_LINE_MAX + 1];
} Parser;

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
_printf_(2, 3)
static void parser_reject(Parser *p, const char *fmt, ...) {
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

/* inih's lskip() and isspace() test, so that we classify lines exactly as it does */
static char *skip_space(char *s) {
        while (*s && isspace((unsigned char) *s))
                s++;
        return s;
}

/*
 * inih's find_chars_or_comment(): the first of @chars, or the start of an
 * inline comment (';' after whitespace), or the end of the string.
 */
static char *find_chars_or_comment(char *s, const char *chars) {
        bool was_space = false;

        while (*s && (!chars || !strchr(chars, *s)) && !(was_space && *s == ';')) {
                was_space = isspace((unsigned char) *s);
                s++;
        }
        return s;
}

/*
 * Keys a section cannot do without, reported at its header. Not when one of
 * its lines was rejected: that line may have held the key.
 */
static void parser_end_section(Parser *p) {
        if (p->damaged)
                return;
        if ((p->kind == SECTION_CGROUP || p->kind == SECTION_DELEGATE) && p->key_line[KEY_PATH] == 0)
                parser_section_error(p, "[%s] section has no 'path' key; add "
                                     "'path = /absolute/cgroup/path'", p->section->name);
        if (p->kind == SECTION_DELEGATE && p->key_line[KEY_USER] == 0)
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
                CgroupSpec *a = grow_one(c->cgroups, c->n_cgroups, sizeof(*a));
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
static void parser_header(Parser *p, char *s) {
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
        for (size_t i = 0; i < ELEMENTSOF(section_info); i++)
                if (streq(section_info[i].name, s + 1))
                        info = &section_info[i];
        if (!info) {
                parser_error(p, "unknown section [%s]; known sections are [daemon], [cgroup] and "
                             "[delegate]", name);
                return;
        }
        parser_start_section(p, info);
}

/*
 * Reads one raw line of any length, keeps the first RAW_LINE_MAX bytes.
 * Return: 1 and the line's length without its ending in *ret_len; 0 at the
 * end of the file; -errno for a read error.
 */
static int parser_read_line(Parser *p, size_t *ret_len, bool *ret_nul) {
        size_t kept = 0, total = 0;
        bool nul = false, eol = false;
        int ch, last = EOF;

        while ((ch = getc(p->f)) != EOF) {
                if (ch == '\n') {
                        eol = true;
                        break;
                }
                if (ch == '\0')
                        nul = true;
                if (kept < RAW_LINE_MAX)
                        p->raw[kept++] = (char) ch;
                total++;
                last = ch;
        }
        if (ch == EOF && ferror(p->f))
                return errno > 0 ? -errno : -EIO;
        if (!eol && total == 0)
                return 0;

        if (last == '\r') {             /* CRLF */
                total--;
                if (kept > total)
                        kept = total;
        }
        p->raw[kept] = '\0';
        *ret_len = total;
        *ret_nul = nul;
        return 1;
}

/* inih's ini_reader: hands inih one line at a time, blank where we found a problem. */
static char *parser_reader(char *str, int num, void *stream) {
        Parser *p = stream;
        size_t len;
        bool nul;
        int r;

        if (p->eof)
                return NULL;
        r = parser_read_line(p, &len, &nul);
        if (r <= 0) {
                if (r < 0) {
                        p->line++;
                        parser_reject(p, "cannot read: %s", strerror(-r));
                }
                p->eof = true;
                return NULL;
        }
        p->line++;

        char *s = p->raw;
        if (p->line == 1 && startswith(s, "\xef\xbb\xbf")) {
                s += 3;
                len -= 3;
        }

        /* what inih's buffer of num bytes can hold with "\r\n\0" */
        size_t max = num > 3 ? (size_t) num - 3 : 0;
        const char *feed = "";

        if (nul)
                parser_reject(p, "line contains a NUL byte");
        else if (len > max)
                parser_reject(p, "line is longer than %zu bytes, which inih cannot hold; shorten it",
                              max);
        else {
                char *start = skip_space(s);

                if (*start == '\0' || *start == ';' || *start == '#')
                        ;
                else if (*start == '[')
                        parser_header(p, start);
                else {
                        char *end = find_chars_or_comment(start, "=:");
                        if (*end == '=' || *end == ':')
                                feed = start;
                        else if (start > s)
                                parser_reject(p, "indented line without '=': values cannot continue "
                                             "on the next line; put the whole value on one line");
                        else
                                parser_reject(p, "expected 'key = value', '[section]' or a comment");
                }
        }

        /* fits: strlen(feed) <= max */
        (void) snprintf(str, (size_t) num, "%s\n", feed);
        return str;
}

/* ---- values ---- */

static CgroupSpec *parser_cgroup(Parser *p) {
        return &p->config->cgroups[p->config->n_cgroups - 1];
}

static DelegateSpec *parser_delegate(Parser *p) {
        return &p->config->delegates[p->config->n_delegates - 1];
}

static void parser_set_daemon_string(Parser *p, const ConfigLocation *loc, const char *key,
                                     const char *value, char **field, ConfigLocation *field_loc) {
        char *v = NULL;
        int r = config_parse_path(p->config, p->errs, loc, key, value, false, &v);

        if (r < 0) {
                parser_oom(p, r);
                return;
        }
        free(*field);
        *field = v;
        *field_loc = *loc;
}

static void parser_set(Parser *p, ConfigKey key, const char *value) {
        const ConfigLocation loc = parser_loc(p);
        DaemonSettings *d = &p->config->daemon;
        const char *name = key_names[key];
        int r = 0;

        switch (p->kind) {
        case SECTION_DAEMON:
                switch (key) {
                case KEY_CGROUP_ROOT:
                        parser_set_daemon_string(p, &loc, name, value, &d->cgroup_root,
                                                 &d->cgroup_root_loc);
                        break;
                case KEY_STATE_DIRECTORY:
                        parser_set_daemon_string(p, &loc, name, value, &d->state_directory,
                                                 &d->state_directory_loc);
                        break;
                case KEY_BACKEND: {
                        BackendType t;
                        r = config_parse_backend(p->config, p->errs, &loc, name, value, &t);
                        if (r >= 0) {
                                d->backend = t;
                                d->backend_loc = loc;
                        }
                        break;
                }
                default:
                        assert(false);
                }
                break;

        case SECTION_CGROUP: {
                CgroupSpec *cg = parser_cgroup(p);
                switch (key) {
                case KEY_PATH:
                        cg->path_loc = loc;
                        r = config_parse_path(p->config, p->errs, &loc, name, value, true, &cg->path);
                        break;
                case KEY_CREATE:
                        cg->create_loc = loc;
                        r = config_parse_bool(p->config, p->errs, &loc, name, value, &cg->create);
                        break;
                case KEY_SUBTREE_CONTROL:
                        cg->subtree_control_loc = loc;
                        r = config_parse_change(p->config, p->errs, &loc, name, value, true,
                                                &cg->subtree_control);
                        break;
                case KEY_CONTROLLERS:
                        cg->controllers_loc = loc;
                        r = config_parse_change(p->config, p->errs, &loc, name, value, false,
                                                &cg->controllers);
                        break;
                default:
                        assert(false);
                }
                break;
        }

        case SECTION_DELEGATE: {
                DelegateSpec *dg = parser_delegate(p);
                switch (key) {
                case KEY_PATH: {
                        _cleanup_free_ char *path = NULL;
                        dg->path_loc = loc;
                        r = config_parse_path(p->config, p->errs, &loc, name, value, true, &path);
                        if (r >= 0 && streq(path, "/"))
                                r = config_error(p->config, p->errs, &loc,
                                                 "path: the root cgroup cannot be delegated; "
                                                 "delegate a cgroup below it");
                        if (r >= 0)
                                dg->path = TAKE_PTR(path);
                        break;
                }
                case KEY_USER:
                        dg->user_loc = loc;
                        r = config_parse_user(p->config, p->errs, &loc, name, value, &dg->uid,
                                              &dg->user);
                        break;
                case KEY_CONTROLLERS:
                        dg->controllers_loc = loc;
                        r = config_parse_controller_list(p->config, p->errs, &loc, name, value,
                                                         &dg->controllers);
                        break;
                case KEY_CREATE:
                        dg->create_loc = loc;
                        r = config_parse_bool(p->config, p->errs, &loc, name, value, &dg->create);
                        break;
                default:
                        assert(false);
                }
                break;
        }

        default:
                assert(false);
        }
        parser_oom(p, r);
}

/* inih's ini_handler: one "key = value" line. @section is unused: the reader tracks sections. */
static int parser_handler(void *user, const char *section, const char *name, const char *value) {
        Parser *p = user;
        _cleanup_free_ char *qname = NULL;

        (void) section;
        if (p->r < 0 || p->kind == SECTION_IGNORED)
                return 1;
        qname = config_quote(name);
        if (!qname) {
                p->r = -ENOMEM;
                return 1;
        }
        if (!*name) {
                parser_reject(p, "missing key name before '='");
                return 1;
        }
        if (p->kind == SECTION_NONE) {
                parser_error(p, "key '%s' is outside any section; put it under [daemon], [cgroup] or "
                             "[delegate]", qname);
                return 1;
        }

        ConfigKey key = _KEY_MAX;
        for (ConfigKey k = 0; k < _KEY_MAX; k++)
                if ((p->section->keys & K(k)) && streq(key_names[k], name))
                        key = k;
        if (key == _KEY_MAX) {
                parser_error(p, "unknown key '%s' in [%s]; known keys are %s", qname, p->section->name,
                             p->section->keys_text);
                return 1;
        }
        if (p->key_line[key] > 0) {
                parser_error(p, "duplicate key '%s' in [%s] (first set at line %u); keep one",
                             qname, p->section->name, p->key_line[key]);
                return 1;
        }
        p->key_line[key] = p->line;
        parser_set(p, key, value);
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
        *ret = TAKE_PTR(c);
        return 0;
}

int config_override_daemon(Config *c, const char *key, const char *value, const char *origin,
                           ConfigErrors *errs) {
        DaemonSettings *d = &c->daemon;
        const char *file;
        int r;

        r = config_add_file(c, origin, &file);
        if (r < 0)
                return r;
        const ConfigLocation loc = { file, 0 };

        if (streq(key, "cgroup-root") || streq(key, "state-directory")) {
                bool root = streq(key, "cgroup-root");
                char *v = NULL;

                r = config_parse_path(c, errs, &loc, NULL, value, false, &v);
                if (r < 0)
                        return r;
                free(root ? d->cgroup_root : d->state_directory);
                if (root) {
                        d->cgroup_root = v;
                        d->cgroup_root_loc = loc;
                } else {
                        d->state_directory = v;
                        d->state_directory_loc = loc;
                }
                return 0;
        }
        if (streq(key, "backend")) {
                BackendType t;

                r = config_parse_backend(c, errs, &loc, NULL, value, &t);
                if (r < 0)
                        return r;
                d->backend = t;
                d->backend_loc = loc;
                return 0;
        }
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
        return 0;
}

void config_remove_delegation(Config *c, size_t i) {
        if (i >= c->n_delegates)
                return;
        free(c->delegates[i].path);
        free(c->delegates[i].user);
        memmove(&c->delegates[i], &c->delegates[i + 1], (c->n_delegates - i - 1) * sizeof(DelegateSpec));
        c->n_delegates--;
}
