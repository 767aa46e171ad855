/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration's values and the relations between its sections. Each
 * problem is one "FILE:LINE: KEY: reason" that says what to write instead.
 * Whether the desired state is reachable under the kernel's rules is not
 * checked here (the policy module runs the plan on the model).
 */
#include <ctype.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <strings.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/config.h"
#include "cgbypass/strbuf.h"
#include "cgbypass/strset.h"
#include "config-internal.h"

/*
 * The [daemon] backend names. backend.h owns BackendType and its string
 * functions (the backend module defines them); the loader keeps its own
 * table so that it does not depend on that module.
 */
static const char *const backend_names[_BACKEND_TYPE_MAX] = {
        [BACKEND_AUTO]          = "auto",
        [BACKEND_NATIVE]        = "native",
        [BACKEND_EMULATED]      = "emulated",
        [BACKEND_SIM]           = "sim",
};

int config_parse_boolean(const char *s, bool *ret) {
        static const char *const yes[] = { "yes", "true", "on", "1" };
        static const char *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

/* a daemon directory is checked by the cgroup path rule: the same normalization and limits */
int config_path_verify(const char *path, const char **reterr_why) {
        return cgpath_verify(path, CGPATH_LIMITS, reterr_why);
}

int config_cgroup_path_verify(const char *path, const char **reterr_why) {
        return cgpath_verify(path, CGPATH_MANAGED, reterr_why);
}

/* "KEY: reason", or only the reason when the location already names the key (an option) */
_printf_(5, 6)
static int value_error(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                       const char *key, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&reason, fmt, ap);
        va_end(ap);
        if (n < 0) {
                errs->oom = true;
                return -ENOMEM;
        }
        return config_error(c, errs, loc, "%s%s%s", key ?: "", key ? ": " : "", reason);
}

int config_parse_path(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                      const char *key, const char *value, bool cgroup, char **ret) {
        const char *why;

        if (isempty(value))
                return value_error(c, errs, loc, key, "empty value; give an absolute path");
        if ((cgroup ? config_cgroup_path_verify : config_path_verify)(value, &why) < 0) {
                _cleanup_free_ char *q = config_quote(value);
                if (!q)
                        return -ENOMEM;
                return value_error(c, errs, loc, key, "'%s' %s", q, why);
        }
        char *s = strdup(value);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int config_parse_backend(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                         const char *key, const char *value, BackendType *ret) {
        BackendType t = _BACKEND_TYPE_INVALID;

        for (BackendType i = 0; i < _BACKEND_TYPE_MAX; i++)
                if (streq(backend_names[i], value))
                        t = i;
        if (t < 0) {
                _cleanup_free_ char *q = config_quote(value);
                if (!q)
                        return -ENOMEM;
                return value_error(c, errs, loc, key,
                                   "unknown backend '%s'; use auto, native, emulated or sim", q);
        }
        *ret = t;
        return 0;
}

int config_parse_bool(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                      const char *key, const char *value, bool *ret) {
        if (isempty(value))
                return value_error(c, errs, loc, key, "empty value; use yes or no");
        if (config_parse_boolean(value, ret) < 0) {
                _cleanup_free_ char *q = config_quote(value);
                if (!q)
                        return -ENOMEM;
                return value_error(c, errs, loc, key, "'%s' is not a boolean; use yes or no", q);
        }
        return 0;
}

/* The cgroup2 controller called @name, or an error that says why there is none. */
static int controller_lookup(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                             const char *key, const char *name, Controller *ret) {
        CgMask v1_only = controller_inhibit_mask(CGMASK_ALL);
        Controller ctl = controller_from_string(name);
        _cleanup_free_ char *q = NULL, *known = NULL;

        if (ctl >= 0 && (v1_only & CGMASK(ctl)))
                return value_error(c, errs, loc, key, "cgroup2 has no %s controller (it exists only "
                                   "in cgroup v1)", controller_to_string(ctl));
        if (ctl < 0) {
                q = config_quote(name);
                known = controller_mask_to_string(CGMASK_ALL & ~v1_only, " ");
                if (!q || !known)
                        return -ENOMEM;
                return value_error(c, errs, loc, key, "unknown controller '%s'; cgroup2 controllers "
                                   "are %s", q, known);
        }
        *ret = ctl;
        return 0;
}

static bool is_sep(char ch, bool comma) {
        return ch == ' ' || ch == '\t' || (comma && ch == ',');
}

/*
 * Splits @value into tokens at blanks (and commas when @comma), calling
 * @fn on each. Keeps going after a bad token so that every one is reported.
 */
typedef int (*TokenFn)(void *userdata, const char *token);

static int for_each_token(const char *value, bool comma, TokenFn fn, void *userdata) {
        _cleanup_free_ char *copy = strdup(value);
        int ret = 0;

        if (!copy)
                return -ENOMEM;
        for (char *p = copy; *p;) {
                while (*p && is_sep(*p, comma))
                        p++;
                if (!*p)
                        break;
                char *t = p;
                while (*p && !is_sep(*p, comma))
                        p++;
                if (*p)
                        *p++ = '\0';
                int r = fn(userdata, t);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        ret = r;
        }
        return ret;
}

typedef struct TokenState {
        const Config *c;
        ConfigErrors *errs;
        const ConfigLocation *loc;
        const char *key;
        bool allow_disable;
        CgMask seen;
        /* the token that named each controller first, in for_each_token()'s copy (alive while it runs,
         * and only token_seen() reads it): quoted only for a message, not for every token */
        const char *first[_CONTROLLER_MAX];
        ControllerChange change;
        CgMask list;
} TokenState;

/* for_each_token() with @s, which it leaves with the result */
static int parse_tokens(const char *value, bool comma, TokenFn fn, TokenState *s) {
        int r = for_each_token(value, comma, fn, s);

        return r < 0 ? r : 0;
}

/* Same controller twice in one value: name both tokens. */
static int token_seen(TokenState *s, Controller ctl, const char *token) {
        if (s->seen & CGMASK(ctl)) {
                _cleanup_free_ char *q = config_quote(token), *qfirst = config_quote(s->first[ctl]);
                if (!q || !qfirst)
                        return -ENOMEM;
                return value_error(s->c, s->errs, s->loc, s->key, "controller %s appears twice "
                                   "('%s' and '%s'); keep one", controller_to_string(ctl),
                                   qfirst, q);
        }
        s->first[ctl] = token;
        s->seen |= CGMASK(ctl);
        return 0;
}

static int change_token(void *userdata, const char *token) {
        TokenState *s = userdata;
        const char *prefixes = s->allow_disable ? "+-#" : "+#";
        const char *how = s->allow_disable ? "'+' (enable), '-' (disable) or '#' (bypass)" :
                "'+' (re-enable) or '#' (bypass)";
        _cleanup_free_ char *q = NULL;
        Controller ctl;
        int r;

        /* @token quoted only for a message: a good file has none, and it has a token per controller */
        bool no_prefix = isalnum((unsigned char) token[0]) || token[0] == '_',
             minus = token[0] == '-' && token[1] && !s->allow_disable,
             bad_prefix = !strchr(prefixes, token[0]) || (token[1] && strchr("+-#", token[1])),
             no_name = token[1] == '\0';
        if (no_prefix || minus || bad_prefix || no_name) {
                q = config_quote(token);
                if (!q)
                        return -ENOMEM;
        }
        if (no_prefix)
                return value_error(s->c, s->errs, s->loc, s->key, "'%s' has no prefix; start it "
                                   "with %s", q, how);
        if (minus)
                return value_error(s->c, s->errs, s->loc, s->key, "'%s': cgroup.controllers takes "
                                   "only '+' (re-enable) and '#' (bypass); to leave %s alone, omit it",
                                   q, q + 1);
        if (bad_prefix)
                return value_error(s->c, s->errs, s->loc, s->key, "'%s' has a bad prefix; start it "
                                   "with %s", q, how);
        if (no_name)
                return value_error(s->c, s->errs, s->loc, s->key, "'%s' names no controller", q);

        r = controller_lookup(s->c, s->errs, s->loc, s->key, token + 1, &ctl);
        if (r < 0)
                return r;
        r = token_seen(s, ctl, token);
        if (r < 0)
                return r;

        switch (token[0]) {
        case '+':
                s->change.enable |= CGMASK(ctl);
                break;
        case '-':
                s->change.disable |= CGMASK(ctl);
                break;
        default:
                s->change.bypass |= CGMASK(ctl);
                break;
        }
        return 0;
}

int config_parse_change(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                        const char *key, const char *value, bool allow_disable,
                        ControllerChange *ret) {
        TokenState s = { .c = c, .errs = errs, .loc = loc, .key = key, .allow_disable = allow_disable };
        int r = parse_tokens(value, false, change_token, &s);

        if (r >= 0)
                *ret = s.change;
        return r;
}

static int list_token(void *userdata, const char *token) {
        TokenState *s = userdata;
        Controller ctl;
        int r;

        if (strchr("+-#", token[0])) {
                _cleanup_free_ char *q = config_quote(token);
                if (!q)
                        return -ENOMEM;
                return value_error(s->c, s->errs, s->loc, s->key, "'%s' has a prefix; list "
                                   "controller names only, such as 'cpu io'", q);
        }
        r = controller_lookup(s->c, s->errs, s->loc, s->key, token, &ctl);
        if (r < 0)
                return r;
        r = token_seen(s, ctl, token);
        if (r < 0)
                return r;
        s->list |= CGMASK(ctl);
        return 0;
}

int config_parse_controller_list(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                                 const char *key, const char *value, CgMask *ret) {
        TokenState s = { .c = c, .errs = errs, .loc = loc, .key = key };
        int r = parse_tokens(value, true, list_token, &s);

        if (r >= 0)
                *ret = s.list;
        return r;
}

/* getpwnam_r()/getpwuid_r() with a buffer that grows. Return: 1 found, 0 not found, -errno. */
static int lookup_passwd(const char *name, uid_t uid, uid_t *ret_uid, char **ret_name) {
        long l = sysconf(_SC_GETPW_R_SIZE_MAX);
        size_t size = l > 0 ? (size_t) l : 1024;

        for (;;) {
                _cleanup_free_ char *buf = malloc(size);
                struct passwd pw, *result = NULL;
                int r;

                if (!buf)
                        return -ENOMEM;
                if (name)
                        r = getpwnam_r(name, &pw, buf, size, &result);
                else
                        r = getpwuid_r(uid, &pw, buf, size, &result);
                if (r == ERANGE && size < 1024 * 1024) {
                        size *= 2;
                        continue;
                }
                /* getpwnam(3): ENOENT, ESRCH, EBADF and EPERM also mean "not found" */
                if (r == 0 && !result)
                        return 0;
                if (r == ENOENT || r == ESRCH || r == EBADF || r == EPERM)
                        return 0;
                if (r > 0)
                        return -r;
                if (ret_uid)
                        *ret_uid = pw.pw_uid;
                if (ret_name) {
                        *ret_name = strdup(pw.pw_name);
                        if (!*ret_name)
                                return -ENOMEM;
                }
                return 1;
        }
}

int config_parse_user(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                      const char *key, const char *value, uid_t *ret_uid, char **ret_name) {
        _cleanup_free_ char *q = config_quote(value), *name = NULL;
        uid_t uid;
        int r;

        if (!q)
                return -ENOMEM;
        if (isempty(value))
                return value_error(c, errs, loc, key, "empty value; give a user name or a numeric uid");

        if (strspn(value, "0123456789") == strlen(value)) {
                /* a numeric uid needs no passwd entry: the owner may come from elsewhere */
                errno = 0;
                unsigned long long v = strtoull(value, NULL, 10);
                if (errno == ERANGE || v >= UINT32_MAX)
                        return value_error(c, errs, loc, key, "uid '%s' is out of range (0 to %u)",
                                           q, UINT32_MAX - 1);
                uid = (uid_t) v;
                r = lookup_passwd(NULL, uid, NULL, &name);
                if (r == -ENOMEM)
                        return r;
        } else {
                r = lookup_passwd(value, 0, &uid, &name);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return value_error(c, errs, loc, key, "cannot look up user '%s': %s", q,
                                           strerror(-r));
                if (r == 0)
                        return value_error(c, errs, loc, key, "user '%s' does not exist; give an "
                                           "existing user name or a numeric uid", q);
        }
        free(*ret_name);
        *ret_name = TAKE_PTR(name);
        *ret_uid = uid;
        return 0;
}

/* ---- cross-section checks ---- */

/* strcmp() with '/' below every other byte: a subtree sorts right after its root. */
static int path_cmp(const char *a, const char *b) {
        /* equal bytes decide nothing: skip them plainly (the sort compares ~130,000 pairs at 10,000 paths) */
        while (*a && *a == *b) {
                a++;
                b++;
        }
        unsigned x = !*a ? 0 : *a == '/' ? 1 : (unsigned char) *a + 1u;
        unsigned y = !*b ? 0 : *b == '/' ? 1 : (unsigned char) *b + 1u;
        return x < y ? -1 : x > y;
}

/* @inner is below @outer (not equal) */
static bool path_is_below(const char *inner, const char *outer) {
        return cgpath_is_at_or_below(inner, outer) && !streq(inner, outer);
}

/* An entry to sort: its path, where it was set, and its place in reading order. */
typedef struct PathRef {
        const char *path;
        const ConfigLocation *loc;
        size_t index;
} PathRef;

static int path_ref_cmp(const void *a, const void *b) {
        const PathRef *x = a, *y = b;
        int r = path_cmp(x->path, y->path);

        if (r != 0)
                return r;
        return x->index < y->index ? -1 : x->index > y->index;
}

static char *loc_string(const ConfigLocation *loc) {
        char *s = NULL;

        if (asprintf(&s, "%s:%u", loc->file, loc->line) < 0)
                return NULL;
        return s;
}

/*
 * Whether two of @refs name the same path: a hash set, for the check that only looks for twins. The
 * sort that reports them costs ~130,000 comparisons at 10,000 sections, for the usual answer "none".
 * Return: 1 twins, 0 none, -ENOMEM.
 */
static int refs_have_twins(const PathRef *refs, size_t n) {
        StrSet set;
        int r = strset_init(&set, n);

        for (size_t i = 0; r == 0 && i < n; i++)
                r = strset_add(&set, refs[i].path);
        strset_done(&set);
        return r;
}

/*
 * Sorts @refs; reports each path named again (at the later place, naming the
 * first) and, when @no_nesting, each path below another one.
 */
static int check_paths(const Config *c, ConfigErrors *errs, PathRef *refs, size_t n,
                       const char *again, const char *section, bool no_nesting) {
        int ret = 0, r;

        if (n == 0)
                return 0;
        if (!no_nesting) {
                r = refs_have_twins(refs, n);
                if (r <= 0)
                        return r;
        }
        qsort(refs, n, sizeof(*refs), path_ref_cmp);

        /* the chain of entries that contain refs[i], outermost first */
        _cleanup_free_ size_t *stack = calloc(n, sizeof(*stack));
        size_t depth = 0;
        if (!stack)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                if (i > 0 && streq(refs[i].path, refs[i - 1].path)) {
                        size_t f = i - 1;
                        while (f > 0 && streq(refs[f - 1].path, refs[i].path))
                                f--;
                        _cleanup_free_ char *where = loc_string(refs[f].loc);
                        if (!where)
                                return -ENOMEM;
                        r = config_error(c, errs, refs[i].loc, "%s is also %s at %s; use one [%s] "
                                         "section per cgroup", refs[i].path, again, where, section);
                        if (r == -ENOMEM)
                                return r;
                        ret = -EINVAL;
                        continue;
                }
                if (!no_nesting)
                        continue;
                while (depth > 0 && !path_is_below(refs[i].path, refs[stack[depth - 1]].path))
                        depth--;
                if (depth > 0) {
                        size_t top = stack[depth - 1];
                        _cleanup_free_ char *where = loc_string(refs[top].loc);
                        if (!where)
                                return -ENOMEM;
                        r = config_error(c, errs, refs[i].loc, "%s is inside the delegation of %s at "
                                         "%s; delegations cannot nest", refs[i].path, refs[top].path,
                                         where);
                        if (r == -ENOMEM)
                                return r;
                        ret = -EINVAL;
                }
                stack[depth++] = i;
        }
        return ret;
}

int config_validate(Config *c, ConfigErrors *errs) {
        _cleanup_free_ PathRef *refs = NULL;
        size_t n = 0, max = c->n_cgroups > c->n_delegates ? c->n_cgroups : c->n_delegates;
        int ret = 0, r;

        refs = calloc(max + 1, sizeof(*refs));
        if (!refs)
                return -ENOMEM;

        for (size_t i = 0; i < c->n_cgroups; i++) {
                CgroupSpec *cg = &c->cgroups[i];

                if (!cg->path)
                        continue;       /* missing or bad: reported where it was read */
                if (streq(cg->path, "/")) {
                        if (config_location_is_set(&cg->create_loc) && cg->create) {
                                r = config_error(c, errs, &cg->create_loc, "create: the root cgroup "
                                                 "always exists; remove 'create = yes'");
                                if (r == -ENOMEM)
                                        return r;
                                ret = -EINVAL;
                        }
                        cg->create = false;
                }
                refs[n++] = (PathRef) { cg->path, &cg->path_loc, i };
        }
        r = check_paths(c, errs, refs, n, "configured", "cgroup", false);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                ret = r;

        n = 0;
        for (size_t i = 0; i < c->n_delegates; i++)
                if (c->delegates[i].path)
                        refs[n++] = (PathRef) { c->delegates[i].path, &c->delegates[i].path_loc, i };
        r = check_paths(c, errs, refs, n, "delegated", "delegate", true);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                ret = r;
        r = config_validate_values(c, errs);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                ret = r;
        return ret;
}

int controller_change_to_string(const ControllerChange *ch, char **ret) {
        StrBuf b = STRBUF_INIT;

        FOREACH_CONTROLLER(ctl) {
                char prefix = ch->enable & CGMASK(ctl) ? '+' :
                              ch->disable & CGMASK(ctl) ? '-' :
                              ch->bypass & CGMASK(ctl) ? '#' : 0;
                if (!prefix)
                        continue;
                if (b.len > 0)
                        strbuf_putc(&b, ' ');
                strbuf_putc(&b, prefix);
                strbuf_append(&b, controller_to_string(ctl));
        }
        return strbuf_steal(&b, ret);
}

bool config_path_is_below(const char *inner, const char *outer) {
        return path_is_below(inner, outer);
}

int config_validate_delegations(const Config *c, ConfigErrors *errs) {
        _cleanup_free_ PathRef *refs = calloc(c->n_delegates + 1, sizeof(PathRef));
        size_t n = 0;

        if (!refs)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_delegates; i++)
                if (c->delegates[i].path)
                        refs[n++] = (PathRef) { c->delegates[i].path, &c->delegates[i].path_loc, i };
        return check_paths(c, errs, refs, n, "delegated", "delegate", true);
}
