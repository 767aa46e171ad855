/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seeded random operation sequences over a dozen paths, both rule sets.
 * After every step: hierarchy_check() passes, a failed operation left a
 * byte-identical dump and one of its documented errnos, and a set of
 * invariants recomputed here from the public API holds. Every 50 steps the
 * hierarchy is cloned and the copy must replay the next steps identically.
 *
 * Deterministic: the default seeds are fixed. CGB_RANDOM_SEED=N runs one seed,
 * CGB_RANDOM_STEPS=N changes the number of steps; a failure prints the seed.
 *
 * Seed 2 (stock) reaches, at step 115, the nested-thread-root state of
 * test_threaded_switch_over_nested_thread_root in test-model-threaded.c.
 */
#include <inttypes.h>

#include "cgbypass/strbuf.h"
#include "model-test.h"

#define DEFAULT_STEPS 1300
#define CLONE_EVERY 50
#define SHADOW_STEPS 6

static const uint64_t default_seeds[] = { 1, 2, 3, 0xc0ffee, 20170721 };

static const char *const paths[] = {
        "A", "A/B", "A/B/C", "A/B/C/I", "A/D", "A/D/K",
        "E", "E/F", "E/F/G", "E/F/L", "E/H", "J",
};

/* weighted towards a mix of threaded (cpu, pids) and domain (memory, io) controllers */
static const char *const names[] = {
        "cpu", "cpu", "cpu", "memory", "memory", "memory", "io", "io", "pids", "pids",
        "cpuset", "hugetlb", "rdma", "misc",
};
/* names that exist but are never available (implicit), or are not cgroup2 controllers */
static const char *const odd_names[] = { "perf_event", "debug", "cpuacct", "bogus" };

/* ---- deterministic PRNG: splitmix64 ---- */

typedef struct Rng {
        uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r) {
        uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static unsigned rng_below(Rng *r, unsigned n) {
        return (unsigned) (rng_next(r) % n);
}

/* ---- operations, as data so that a clone can replay them ---- */

typedef enum OpKind {
        OP_MKDIR,
        OP_RMDIR,
        OP_SUBTREE_CONTROL,
        OP_CONTROLLERS,
        OP_TYPE,
        OP_LIMIT,
        OP_SPAWN,
        OP_MOVE,
        OP_KILL,
        OP_READ,
        OP_TREE,
        _OP_MAX,
} OpKind;

static const unsigned op_weight[_OP_MAX] = {
        [OP_MKDIR] = 16, [OP_RMDIR] = 7, [OP_SUBTREE_CONTROL] = 24, [OP_CONTROLLERS] = 12,
        [OP_TYPE] = 6, [OP_LIMIT] = 1, [OP_SPAWN] = 7, [OP_MOVE] = 9, [OP_KILL] = 7,
        [OP_READ] = 4, [OP_TREE] = 3,
};

typedef struct Op {
        OpKind kind;
        char path[64];          /* "/" for the root */
        char file[32];
        char text[96];
        ProcId pid;
        bool threadgroup;
        Controller ctrl;
} Op;

typedef struct Run {
        uint64_t seed;
        RuleSet rules;
        unsigned step;
        char desc[256];
} Run;

#define RCHECK(run, cond, ...) do {                                             \
                if (!(cond)) {                                                  \
                        char *_m = NULL;                                        \
                        if (asprintf(&_m, __VA_ARGS__) < 0)                     \
                                _m = NULL;                                      \
                        ck_abort_msg("seed=%" PRIu64 " rules=%s step=%u op=[%s]: %s " \
                                     "(rerun: CGB_RANDOM_SEED=%" PRIu64 ")",    \
                                     (run)->seed, rules_to_string((run)->rules), (run)->step, \
                                     (run)->desc, _m ? _m : "?", (run)->seed);  \
                }                                                               \
        } while (0)

/* existing cgroups, pre-order */
static size_t collect(const Hierarchy *h, Cgroup **out, size_t max) {
        size_t n = 0;
        for (Cgroup *c = hierarchy_root(h); c && n < max; c = cgroup_next_descendant_pre(c, hierarchy_root(h)))
                out[n++] = c;
        return n;
}

static void random_path_of_existing(Rng *r, const Hierarchy *h, char *buf, size_t size) {
        Cgroup *all[64];
        size_t n = collect(h, all, ELEMENTSOF(all));
        _cleanup_free_ char *p = NULL;

        ck_assert_int_eq(cgroup_path(all[rng_below(r, (unsigned) n)], &p), 0);
        snprintf(buf, size, "%s", p);
}

/* @prefixes: the usual prefixes; @rare: a prefix that appears once in a while (parse errors) */
static bool path_parent_exists(const Hierarchy *h, const char *p) {
        char parent[64];
        const char *slash = strrchr(p, '/');
        Cgroup *c;

        if (!slash)
                return true;
        snprintf(parent, sizeof(parent), "%.*s", (int) (slash - p), p);
        return hierarchy_lookup(h, parent, &c) == 0;
}

static void random_tokens(Rng *r, const char *prefixes, char rare, CgMask likely, char *buf, size_t size) {
        unsigned n = 1 + rng_below(r, 3);
        size_t len = 0;

        buf[0] = '\0';
        if (rng_below(r, 10) == 0)
                len += (size_t) snprintf(buf + len, size - len, " ");
        for (unsigned i = 0; i < n && len < size; i++) {
                char prefix = prefixes[rng_below(r, (unsigned) strlen(prefixes))];
                const char *sep = i == 0 ? "" : rng_below(r, 60) == 0 ? "\t" : rng_below(r, 8) == 0 ? "  " : " ";
                const char *name = rng_below(r, 30) == 0 ? odd_names[rng_below(r, ELEMENTSOF(odd_names))] :
                                                           names[rng_below(r, ELEMENTSOF(names))];

                /* half of the time a controller the cgroup has: the writes get past ENOENT */
                if (likely && rng_below(r, 2)) {
                        Controller pick[_CONTROLLER_MAX];
                        unsigned m = 0;
                        FOREACH_CONTROLLER_IN(k, likely)
                                pick[m++] = k;
                        name = controller_to_string(pick[rng_below(r, m)]);
                }

                if (rng_below(r, 40) == 0)
                        prefix = rare;
                len += (size_t) snprintf(buf + len, size - len, "%s%c%s", sep, prefix, name);
        }
        if (rng_below(r, 6) == 0 && len < size)
                snprintf(buf + len, size - len, "\n");
}

static void random_op(Rng *r, const Hierarchy *h, ProcId max_pid, Op *op) {
        unsigned total = 0, pick;

        memset(op, 0, sizeof(*op));
        for (unsigned k = 0; k < _OP_MAX; k++)
                total += op_weight[k];
        pick = rng_below(r, total);
        for (op->kind = 0; pick >= op_weight[op->kind]; op->kind++)
                pick -= op_weight[op->kind];

        switch (op->kind) {
        case OP_MKDIR:
        case OP_RMDIR: {
                /* half of the time a path where the operation can work: parent present, or a leaf */
                unsigned start = rng_below(r, ELEMENTSOF(paths));
                snprintf(op->path, sizeof(op->path), "%s", paths[start]);
                if (rng_below(r, 2))
                        break;
                for (unsigned k = 0; k < ELEMENTSOF(paths); k++) {
                        const char *p = paths[(start + k) % ELEMENTSOF(paths)];
                        Cgroup *c = NULL;
                        bool exists = hierarchy_lookup(h, p, &c) == 0;
                        if (op->kind == OP_RMDIR ? exists && !cgroup_first_child(c) :
                                                   !exists && path_parent_exists(h, p)) {
                                snprintf(op->path, sizeof(op->path), "%s", p);
                                break;
                        }
                }
                break;
        }
        case OP_SUBTREE_CONTROL: {
                random_path_of_existing(r, h, op->path, sizeof(op->path));
                Cgroup *c = cg(h, op->path);
                CgMask likely = cgroup_get_controllers(h, c) | cgroup_get_bypassed(h, c);
                if (hierarchy_rules(h) == RULES_BYPASS)
                        random_tokens(r, "+++--##", 'x', likely, op->text, sizeof(op->text));
                else
                        random_tokens(r, "+++--", '#', likely, op->text, sizeof(op->text));
                break;
        }
        case OP_CONTROLLERS: {
                random_path_of_existing(r, h, op->path, sizeof(op->path));
                Cgroup *c = cg(h, op->path);
                random_tokens(r, "+++###", '-', cgroup_get_bypassed(h, c) | cgroup_get_enable_ss_mask(c),
                              op->text, sizeof(op->text));
                break;
        }
        case OP_TYPE: {
                static const char *const t[] = { "threaded", "threaded", "threaded", "threaded\n", "domain", "" };
                random_path_of_existing(r, h, op->path, sizeof(op->path));
                snprintf(op->text, sizeof(op->text), "%s", t[rng_below(r, ELEMENTSOF(t))]);
                break;
        }
        case OP_LIMIT: {
                static const char *const v[] = { "max", "max", "max", "max", "max", "0", "2", "5", "-1", "x", "0x3" };
                random_path_of_existing(r, h, op->path, sizeof(op->path));
                snprintf(op->file, sizeof(op->file), "%s",
                         rng_below(r, 2) ? "cgroup.max.depth" : "cgroup.max.descendants");
                snprintf(op->text, sizeof(op->text), "%s", v[rng_below(r, ELEMENTSOF(v))]);
                break;
        }
        case OP_SPAWN:
        case OP_READ:
                random_path_of_existing(r, h, op->path, sizeof(op->path));
                break;
        case OP_MOVE:
                random_path_of_existing(r, h, op->path, sizeof(op->path));
                op->threadgroup = rng_below(r, 3) != 0;
                __attribute__((__fallthrough__));
        case OP_KILL: {
                /* mostly a known process, sometimes a dead or unknown one */
                ProcId best = 0;
                unsigned tries = 8;
                while (tries-- > 0 && best == 0) {
                        ProcId p = 1 + rng_below(r, max_pid + 2);
                        if (hierarchy_proc_cgroup(h, p))
                                best = p;
                }
                /* 0 and max_pid + 2 are never valid */
                op->pid = best ? best : rng_below(r, max_pid + 3);
                break;
        }
        case OP_TREE:
                op->ctrl = (Controller) rng_below(r, _CONTROLLER_MAX);
                break;
        default:
                break;
        }
}

static void describe(const Op *op, char *buf, size_t size) {
        static const char *const kinds[_OP_MAX] = {
                "mkdir", "rmdir", "subtree_control", "controllers", "type", "limit",
                "spawn", "move", "kill", "read", "tree",
        };
        snprintf(buf, size, "%s path=%s file=%s text='%s' pid=%u tg=%d ctrl=%d",
                 kinds[op->kind], op->path, op->file, op->text, op->pid, op->threadgroup, op->ctrl);
}

/* The errnos each operation may return (negative), 0-terminated. */
static bool errno_documented(const Op *op, RuleSet rules, int r) {
        static const int mkdir_e[] = { EEXIST, ENOENT, ENOTDIR, EINVAL, EOPNOTSUPP, EAGAIN, 0 };
        static const int rmdir_e[] = { ENOENT, ENOTDIR, EINVAL, EBUSY, 0 };
        static const int sc_e[] = { EINVAL, ENOENT, EBUSY, EOPNOTSUPP, 0 };
        static const int ctl_bypass_e[] = { EINVAL, ENOENT, EBUSY, 0 };
        static const int ctl_stock_e[] = { EINVAL, 0 };
        static const int type_e[] = { EINVAL, EOPNOTSUPP, ENOENT, 0 };
        static const int limit_e[] = { EINVAL, ERANGE, 0 };
        static const int spawn_e[] = { EOPNOTSUPP, EBUSY, 0 };
        static const int move_e[] = { ESRCH, EOPNOTSUPP, EBUSY, 0 };
        static const int kill_e[] = { ESRCH, 0 };
        static const int tree_e[] = { EINVAL, 0 };
        const int *set = NULL;

        switch (op->kind) {
        case OP_MKDIR: set = mkdir_e; break;
        case OP_RMDIR: set = rmdir_e; break;
        case OP_SUBTREE_CONTROL: set = sc_e; break;
        case OP_CONTROLLERS: set = rules == RULES_BYPASS ? ctl_bypass_e : ctl_stock_e; break;
        case OP_TYPE: set = type_e; break;
        case OP_LIMIT: set = limit_e; break;
        case OP_SPAWN: set = spawn_e; break;
        case OP_MOVE: set = move_e; break;
        case OP_KILL: set = kill_e; break;
        case OP_TREE: set = tree_e; break;
        default: return false;
        }
        for (; *set; set++)
                if (r == -*set)
                        return true;
        return false;
}

/* Apply a mutating operation. Returns the result; *ret_reason as the model set it. */
static int apply(Hierarchy *h, const Op *op, Reason *ret_reason, ProcId *ret_pid) {
        Reason rsn = UNSET_REASON;
        Cgroup *c = NULL;
        int r = 0;

        if (op->kind != OP_MKDIR && op->kind != OP_RMDIR && op->kind != OP_KILL && op->kind != OP_TREE)
                ck_assert_int_eq(hierarchy_lookup(h, op->path, &c), 0);

        switch (op->kind) {
        case OP_MKDIR:
                r = hierarchy_mkdir(h, op->path, NULL, &rsn);
                break;
        case OP_RMDIR:
                r = hierarchy_rmdir(h, op->path, &rsn);
                break;
        case OP_SUBTREE_CONTROL:
                r = cgroup_write(h, c, "cgroup.subtree_control", op->text, &rsn);
                break;
        case OP_CONTROLLERS:
                r = cgroup_write(h, c, "cgroup.controllers", op->text, &rsn);
                break;
        case OP_TYPE:
                r = cgroup_write(h, c, "cgroup.type", op->text, &rsn);
                break;
        case OP_LIMIT:
                r = cgroup_write(h, c, op->file, op->text, &rsn);
                break;
        case OP_SPAWN:
                r = hierarchy_spawn(h, c, ret_pid, &rsn);
                break;
        case OP_MOVE:
                r = hierarchy_move(h, op->pid, c, op->threadgroup, &rsn);
                break;
        case OP_KILL:
                r = hierarchy_kill(h, op->pid);
                rsn = r < 0 ? REASON_NO_SUCH_PROCESS : UNSET_REASON;
                break;
        default:
                break;
        }
        *ret_reason = rsn;
        return r;
}

/* ---- invariants recomputed from the public API ---- */

static void print_mask(char *buf, size_t size, CgMask enabled, CgMask hashed) {
        size_t len = 0;
        bool first = true;

        buf[0] = '\0';
        FOREACH_CONTROLLER_IN(k, enabled | hashed) {
                len += (size_t) snprintf(buf + len, size - len, "%s%s%s", first ? "" : " ",
                                         (enabled & CGMASK(k)) ? "" : "#", controller_to_string(k));
                first = false;
        }
        if (!first)
                snprintf(buf + len, size - len, "\n");
}

static void check_cgroup(const Run *run, const Hierarchy *h, const Cgroup *c) {
        Cgroup *parent = cgroup_parent(c);
        CgMask ctl = cgroup_get_controllers(h, c), byp = cgroup_get_bypassed(h, c), css = cgroup_get_css_mask(h, c);
        CgMask builtin = hierarchy_builtin(h);
        _cleanup_free_ char *path = NULL, *text = NULL, *type = NULL;
        char expected[256];

        ck_assert_int_eq(cgroup_path(c, &path), 0);

        /* what cgroup.controllers prints */
        print_mask(expected, sizeof(expected), ctl, byp);
        RCHECK(run, cgroup_read(h, c, "cgroup.controllers", &text) == 0, "%s: cgroup.controllers unreadable", path);
        RCHECK(run, streq(text, expected), "%s: cgroup.controllers '%s', masks say '%s'", path, text, expected);
        RCHECK(run, !(ctl & byp), "%s: a controller both shown and bypassed", path);

        /* cgroup.subtree_control */
        free(text);
        text = NULL;
        print_mask(expected, sizeof(expected), cgroup_get_subtree_control(c), cgroup_get_subtree_bypass(c));
        RCHECK(run, cgroup_read(h, c, "cgroup.subtree_control", &text) == 0 && streq(text, expected),
               "%s: cgroup.subtree_control '%s', masks say '%s'", path, strempty(text), expected);
        /* a cgroup may only hand down what it has */
        RCHECK(run, !((cgroup_get_subtree_control(c) | cgroup_get_subtree_bypass(c)) & ~(ctl | byp)),
               "%s: subtree_control/bypass beyond cgroup.controllers", path);

        if (run->rules == RULES_STOCK)
                RCHECK(run, !byp && !cgroup_get_subtree_bypass(c) && !cgroup_get_enable_ss_mask(c),
                       "%s: bypass state under stock rules", path);

        /* shown controllers have a css; nothing outside the kernel's set */
        RCHECK(run, !(ctl & ~css), "%s: controllers without css", path);
        RCHECK(run, !(css & ~builtin), "%s: css of a controller not built in", path);
        RCHECK(run, parent || css == builtin, "/: the root has every css");
        if (cgroup_get_type(h, c) == CGROUP_TYPE_THREADED)
                RCHECK(run, !((ctl | byp | css) & ~hierarchy_threaded_mask(h)),
                       "%s: threaded with a domain controller", path);

        /* css owners: self, else the parent's owner */
        FOREACH_CONTROLLER_IN(k, builtin) {
                Cgroup *owner = cgroup_effective_css_owner(h, c, k);
                Cgroup *expect = (css & CGMASK(k)) ? (Cgroup *) c :
                                 parent ? cgroup_effective_css_owner(h, parent, k) : NULL;
                RCHECK(run, owner == expect, "%s: css owner of %s", path, controller_to_string(k));
        }

        /* cgroup.type */
        if (parent) {
                RCHECK(run, cgroup_read(h, c, "cgroup.type", &type) == 0, "%s: cgroup.type unreadable", path);
                snprintf(expected, sizeof(expected), "%s\n", cgroup_type_to_string(cgroup_get_type(h, c)));
                RCHECK(run, streq(type, expected), "%s: cgroup.type '%s' vs '%s'", path, type, expected);
        }

        /* files the rules allow (files certain to exist in 6.1 for a state) */
        RCHECK(run, cgroup_has_file(h, c, "cgroup.type") == !!parent, "%s: cgroup.type", path);
        RCHECK(run, cgroup_has_file(h, c, "cgroup.events") == !!parent, "%s: cgroup.events", path);
        RCHECK(run, cgroup_has_file(h, c, "cgroup.procs"), "%s: cgroup.procs", path);
        /* implicit debug: everywhere once the root has propagated, on the root only before */
        bool debug_css = (builtin & M(DEBUG)) && (!parent || (cgroup_get_subtree_ss_mask(parent) & M(DEBUG)));
        RCHECK(run, cgroup_has_file(h, c, "debug.masks") == debug_css, "%s: debug.masks", path);
        RCHECK(run, cgroup_has_file(h, c, "cpu.weight") == (parent && (ctl & M(CPU))), "%s: cpu.weight", path);
        RCHECK(run, cgroup_has_file(h, c, "memory.max") == (parent && (ctl & M(MEMORY))), "%s: memory.max", path);
        RCHECK(run, cgroup_file_writable(h, c, "cgroup.controllers") == (run->rules == RULES_BYPASS),
               "%s: cgroup.controllers writable", path);
}

static void check_files(const Run *run, const Hierarchy *h, const Cgroup *c) {
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ char *path = NULL;

        ck_assert_int_eq(cgroup_path(c, &path), 0);
        RCHECK(run, cgroup_list_files(h, c, &l) == 0, "%s: list", path);
        for (size_t k = 0; l[k]; k++) {
                _cleanup_free_ char *text = NULL;
                int r;

                RCHECK(run, cgroup_has_file(h, c, l[k]), "%s/%s listed but absent", path, l[k]);
                if (k > 0)
                        RCHECK(run, strcmp(l[k - 1], l[k]) < 0, "%s: listing not sorted", path);
                r = cgroup_read(h, c, l[k], &text);
                RCHECK(run, r == 0 || r == -ENOSYS || r == -EINVAL ||
                       (r == -EOPNOTSUPP && streq(l[k], "cgroup.procs") &&
                        cgroup_get_type(h, c) == CGROUP_TYPE_THREADED),
                       "%s/%s: read returned %d", path, l[k], r);
                if (r == 0)
                        RCHECK(run, text[0] == '\0' || text[strlen(text) - 1] == '\n',
                               "%s/%s: not newline-terminated", path, l[k]);
        }
}

/* Render the effective tree independently, from css masks and paths. */
static void render_tree(const Hierarchy *h, const Cgroup *owner, Controller k, unsigned depth,
                        char *buf, size_t size, size_t *len) {
        const Cgroup *root = owner;
        _cleanup_free_ char *p = NULL;
        const Cgroup *kids[64];
        char *kid_paths[64];
        size_t n = 0;

        for (unsigned i = 0; i < depth; i++)
                *len += (size_t) snprintf(buf + *len, size - *len, "  ");
        ck_assert_int_eq(cgroup_path(owner, &p), 0);
        *len += (size_t) snprintf(buf + *len, size - *len, "%s", p);
        /* members: pre-order descendants whose css owner is @owner; collect child nodes too */
        for (const Cgroup *d = cgroup_next_descendant_pre(owner, root); d; d = cgroup_next_descendant_pre(d, root)) {
                if (cgroup_effective_css_owner(h, d, k) == owner) {
                        _cleanup_free_ char *dp = NULL;
                        ck_assert_int_eq(cgroup_path(d, &dp), 0);
                        *len += (size_t) snprintf(buf + *len, size - *len, "|%s", dp);
                } else if (cgroup_effective_css_owner(h, cgroup_parent(d), k) == owner && d != owner) {
                        ck_assert_uint_lt(n, ELEMENTSOF(kids));
                        kids[n] = d;
                        ck_assert_int_eq(cgroup_path(d, &kid_paths[n]), 0);
                        n++;
                }
        }
        *len += (size_t) snprintf(buf + *len, size - *len, "\n");
        /* siblings sorted by path */
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && strcmp(kid_paths[j - 1], kid_paths[j]) > 0; j--) {
                        const Cgroup *tc = kids[j];
                        char *tp = kid_paths[j];
                        kids[j] = kids[j - 1];
                        kid_paths[j] = kid_paths[j - 1];
                        kids[j - 1] = tc;
                        kid_paths[j - 1] = tp;
                }
        for (size_t i = 0; i < n; i++) {
                render_tree(h, kids[i], k, depth + 1, buf, size, len);
                free(kid_paths[i]);
        }
}

/* hierarchy_effective_nodes() rendered as hierarchy_effective_tree() prints its lines */
static int nodes_render(unsigned depth, const char *const *members, size_t n_members, void *userdata) {
        StrBuf *b = userdata;

        for (unsigned i = 0; i < depth; i++)
                strbuf_append(b, "  ");
        for (size_t i = 0; i < n_members; i++) {
                if (i > 0)
                        strbuf_putc(b, '|');
                strbuf_append(b, members[i]);
        }
        strbuf_putc(b, '\n');
        return members[n_members] ? -EBADMSG : 0;
}

static void check_tree(const Run *run, const Hierarchy *h, Controller k) {
        _cleanup_free_ char *tree = NULL, *nodes = NULL;
        StrBuf b = STRBUF_INIT;
        char expected[8192];
        size_t len = 0;
        int r = hierarchy_effective_tree(h, k, &tree);

        if (!(hierarchy_builtin(h) & CGMASK(k))) {
                RCHECK(run, r == -EINVAL, "tree of %s (not built in): %d", controller_to_string(k), r);
                return;
        }
        RCHECK(run, r == 0, "tree of %s: %d", controller_to_string(k), r);
        render_tree(h, hierarchy_root(h), k, 0, expected, sizeof(expected), &len);
        RCHECK(run, streq(tree, expected), "tree of %s:\n%s--- expected\n%s", controller_to_string(k), tree, expected);
        /* GetEffectiveNodes: the same nodes, members and order */
        r = hierarchy_effective_nodes(h, k, nodes_render, &b);
        RCHECK(run, r == 0 && strbuf_steal(&b, &nodes) == 0, "nodes of %s: %d", controller_to_string(k), r);
        RCHECK(run, streq(nodes, tree), "nodes of %s:\n%s--- tree\n%s", controller_to_string(k), nodes, tree);
}

static void check_procs(const Run *run, const Hierarchy *h, ProcId max_pid, const char *dump) {
        Cgroup *all[64];
        size_t n = collect(h, all, ELEMENTSOF(all)), threads = 0, procs = 0, counted = 0;

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ ProcId *ids = NULL;
                size_t m = 0;
                RCHECK(run, cgroup_get_procs(h, all[i], false, &ids, &m) == 0, "threads of cgroup %zu", i);
                RCHECK(run, m == cgroup_nr_procs(all[i]), "cgroup.threads count vs nr_procs");
                for (size_t j = 0; j < m; j++) {
                        RCHECK(run, hierarchy_proc_cgroup(h, ids[j]) == all[i], "pid %u listed in the wrong cgroup", ids[j]);
                        if (j > 0)
                                RCHECK(run, ids[j - 1] < ids[j], "cgroup.threads not sorted");
                }
                threads += m;
                if (cgroup_get_type(h, all[i]) != CGROUP_TYPE_THREADED) {
                        _cleanup_free_ ProcId *pids = NULL;
                        RCHECK(run, cgroup_get_procs(h, all[i], true, &pids, &m) == 0, "cgroup.procs");
                        procs += m;
                }
        }
        /* every live process is listed once in cgroup.threads and once in some domain's cgroup.procs */
        RCHECK(run, !hierarchy_proc_cgroup(h, 0) && !hierarchy_proc_cgroup(h, max_pid + 1), "phantom pids");
        for (ProcId p = 1; p <= max_pid; p++)
                if (hierarchy_proc_cgroup(h, p))
                        counted++;
        RCHECK(run, threads == counted, "threads listed %zu, alive %zu", threads, counted);
        /* the dump's header agrees */
        size_t d_cgroups, d_procs, d_alive;
        RCHECK(run, sscanf(dump, "rules=%*s cgroups=%zu procs=%zu alive=%zu", &d_cgroups, &d_procs, &d_alive) == 3,
               "dump header");
        RCHECK(run, d_cgroups == n && d_procs == max_pid && d_alive == counted,
               "dump header: cgroups=%zu procs=%zu alive=%zu, counted %zu %u %zu",
               d_cgroups, d_procs, d_alive, n, max_pid, counted);
        RCHECK(run, procs == counted, "procs listed %zu, alive %zu", procs, counted);
        /* populated == some process at or below */
        for (size_t i = 0; i < n; i++) {
                bool pop = false;
                for (Cgroup *d = all[i]; d && !pop; d = cgroup_next_descendant_pre(d, all[i]))
                        pop = cgroup_nr_procs(d) > 0;
                RCHECK(run, cgroup_is_populated(all[i]) == pop, "populated flag of cgroup %zu", i);
        }
}

static void check_all(const Run *run, const Hierarchy *h, ProcId max_pid, const char *dump, bool deep) {
        _cleanup_free_ char *msg = NULL;
        Cgroup *all[64];
        size_t n;

        RCHECK(run, hierarchy_check(h, &msg) == 0, "hierarchy_check: %s", strempty(msg));
        n = collect(h, all, ELEMENTSOF(all));
        RCHECK(run, n == hierarchy_count(h), "count");
        for (size_t i = 0; i < n; i++) {
                check_cgroup(run, h, all[i]);
                if (deep)
                        check_files(run, h, all[i]);
        }
        check_procs(run, h, max_pid, dump);
}

static unsigned env_unsigned(const char *name, unsigned def) {
        const char *v = getenv(name);
        return v && *v ? (unsigned) strtoul(v, NULL, 0) : def;
}

static void run_sequence(uint64_t seed, RuleSet rules, unsigned steps) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);
        _cleanup_(hierarchy_freep) Hierarchy *shadow = NULL;
        Run run = { .seed = seed, .rules = rules };
        Rng rng = { .s = seed * 2 + (uint64_t) rules };
        unsigned failures = 0, shadow_left = 0;
        ProcId max_pid = 0;

        for (run.step = 0; run.step < steps; run.step++) {
                _cleanup_free_ char *before = hdump(h), *after = NULL;
                Reason rsn;
                ProcId pid = 0;
                Op op;
                int r;

                if (run.step % CLONE_EVERY == 0) {
                        _cleanup_free_ char *copy = NULL;
                        shadow = hierarchy_free(shadow);
                        RCHECK(&run, hierarchy_clone(h, &shadow) == 0, "clone");
                        copy = hdump(shadow);
                        RCHECK(&run, streq(before, copy), "clone differs:\n%s--- clone\n%s", before, copy);
                        check_all(&run, shadow, max_pid, copy, false);
                        shadow_left = SHADOW_STEPS;
                }

                random_op(&rng, h, max_pid, &op);
                describe(&op, run.desc, sizeof(run.desc));

                if (op.kind == OP_READ) {
                        Cgroup *c = cg(h, op.path);
                        check_files(&run, h, c);
                        after = hdump(h);
                        RCHECK(&run, streq(before, after), "a read changed the state");
                        continue;
                }
                if (op.kind == OP_TREE) {
                        check_tree(&run, h, op.ctrl);
                        continue;
                }

                r = apply(h, &op, &rsn, &pid);
                after = hdump(h);
                RCHECK(&run, r <= 0, "returned %d", r);
                if (r < 0) {
                        failures++;
                        RCHECK(&run, errno_documented(&op, rules, r), "undocumented errno %d (%s)", r, strerror(-r));
                        RCHECK(&run, rsn != UNSET_REASON, "failed with %s but no reason", strerror(-r));
                        RCHECK(&run, streq(before, after), "failed with %s but changed the state:\n%s--- after\n%s",
                               strerror(-r), before, after);
                } else {
                        RCHECK(&run, rsn == UNSET_REASON, "succeeded but set reason %s", reason_str(rsn));
                        if (op.kind == OP_SPAWN) {
                                /* ProcIds are handed out in order, from 1 */
                                RCHECK(&run, pid == max_pid + 1 && hierarchy_proc_cgroup(h, pid) == cg(h, op.path),
                                       "spawned pid %u after %u", pid, max_pid);
                                max_pid = pid;
                        }
                }

                if (shadow_left > 0) {
                        _cleanup_free_ char *sd = NULL;
                        Reason srsn;
                        ProcId spid = 0;
                        int sr = apply(shadow, &op, &srsn, &spid);
                        sd = hdump(shadow);
                        RCHECK(&run, sr == r && srsn == rsn && spid == pid, "clone answered %d/%s, original %d/%s",
                               sr, reason_str(srsn), r, reason_str(rsn));
                        RCHECK(&run, streq(sd, after), "clone diverged:\n%s--- original\n%s", sd, after);
                        shadow_left--;
                }

                check_all(&run, h, max_pid, after, run.step % 25 == 0);
        }
        /* the sequence must have exercised failures and successes alike */
        RCHECK(&run, failures > steps / 20 && failures < steps - steps / 20, "only %u of %u failed", failures, steps);
}

START_TEST(test_random) {
        unsigned steps = env_unsigned("CGB_RANDOM_STEPS", DEFAULT_STEPS);
        const char *one = getenv("CGB_RANDOM_SEED");
        uint64_t seed = one && *one ? strtoull(one, NULL, 0) : default_seeds[_i / 2];

        if (one && *one && _i >= 2)
                return;
        run_sequence(seed, _i % 2 ? RULES_BYPASS : RULES_STOCK, steps);
}
END_TEST

/* The generator itself must reach the interesting states: bypass, re-enable, threaded, processes. */
START_TEST(test_random_coverage) {
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(RULES_BYPASS, VM);
        Rng rng = { .s = 7 };
        bool bypassed = false, reenabled = false, threaded = false, populated_threaded = false;
        ProcId max_pid = 0;

        for (unsigned step = 0; step < 3000; step++) {
                Reason rsn;
                ProcId pid;
                Op op;

                random_op(&rng, h, max_pid, &op);
                if (op.kind == OP_READ || op.kind == OP_TREE)
                        continue;
                pid = 0;
                if (apply(h, &op, &rsn, &pid) == 0 && pid > max_pid)
                        max_pid = pid;
                for (Cgroup *c = hierarchy_root(h); c; c = cgroup_next_descendant_pre(c, hierarchy_root(h))) {
                        bypassed |= cgroup_get_subtree_bypass(c) != 0;
                        reenabled |= cgroup_get_enable_ss_mask(c) != 0;
                        threaded |= cgroup_get_type(h, c) == CGROUP_TYPE_THREADED;
                        populated_threaded |= cgroup_get_type(h, c) == CGROUP_TYPE_THREADED && cgroup_nr_procs(c) > 0;
                }
        }
        ck_assert(bypassed);
        ck_assert(reenabled);
        ck_assert(threaded);
        ck_assert(populated_threaded);
}
END_TEST

static Suite *random_suite(void) {
        Suite *s = suite_create("model-random");

        CHECK_TCASE(s, "random", NULL, NULL, { test_random, 2 * ELEMENTSOF(default_seeds) }, { test_random_coverage });
        return s;
}

int main(void) {
        return check_run(random_suite());
}
