/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/strbuf.h"
#include "cgbypass/trace.h"
#include "trace-internal.h"

/*
 * Random traces for conformance runs. The generator keeps a model of the
 * rule set it generates for, so that it can steer toward states where the
 * rules meet (a bypassed controller over processes, bypass under a thread
 * root, re-enabling under re-enabling) instead of wandering among ENOENTs,
 * and so that move/kill only name processes that are alive.
 *
 * Determinism across machines: our own PRNG (xoshiro256** seeded through
 * splitmix64), integer arithmetic only, fixed iteration orders.
 */

typedef struct Rng {
        uint64_t s[4];
} Rng;

static uint64_t splitmix64(uint64_t *x) {
        uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) {
        return (x << k) | (x >> (64 - k));
}

static void rng_seed(Rng *r, uint64_t seed) {
        for (size_t i = 0; i < 4; i++)
                r->s[i] = splitmix64(&seed);
}

static uint64_t rng_next(Rng *r) {
        uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return result;
}

/* uniform enough for test generation; what matters is that it is the same everywhere */
static unsigned rng_below(Rng *r, unsigned n) {
        return n == 0 ? 0 : (unsigned) (rng_next(r) % n);
}

static bool rng_chance(Rng *r, unsigned percent) {
        return rng_below(r, 100) < percent;
}

/* index 0 is the root; every other path's parent comes before it (pre-order) */
static const char *const gen_paths[] = {
        ".", "A", "A/B", "A/B/C", "A/B/C/D", "A/E", "A/E/F", "G", "G/H", "G/H/I", "G/H/I/J", "K", "K/L",
};
#define N_PATHS ELEMENTSOF(gen_paths)

#define N_LABELS 6

typedef struct GenLabel {
        char name[4];
        ProcId id;
        bool alive;
} GenLabel;

typedef struct Gen {
        Rng rng;
        Hierarchy *h;
        RuleSet rules;
        CgMask builtin;
        bool nonroot;
        StrBuf out;
        unsigned n_ops;
        GenLabel labels[N_LABELS];
} Gen;

static Cgroup *gen_cg(const Gen *g, size_t i) {
        _cleanup_free_ char *p = trace_model_path(g->nonroot, gen_paths[i]);
        Cgroup *c;

        return p && hierarchy_lookup(g->h, p, &c) >= 0 ? c : NULL;
}

static size_t gen_parent(size_t i) {
        _cleanup_free_ char *parent = NULL;

        if (i == 0 || cgpath_parent(gen_paths[i], &parent) < 0)
                return 0;
        for (size_t j = 1; j < i; j++)
                if (streq(gen_paths[j], parent))
                        return j;
        return 0;
}

/* pick an index with probability proportional to its weight; -1 if all are 0 */
static int pick_weighted(Rng *r, const unsigned *w, size_t n) {
        unsigned total = 0;

        for (size_t i = 0; i < n; i++)
                total += w[i];
        if (total == 0)
                return -1;
        unsigned x = rng_below(r, total);
        for (size_t i = 0; i < n; i++) {
                if (x < w[i])
                        return (int) i;
                x -= w[i];
        }
        return -1;
}

static CgMask gen_offered(const Gen *g, const Cgroup *c) {
        return cgroup_get_controllers(g->h, c) | cgroup_get_bypassed(g->h, c);
}

static bool gen_interesting_type(const Gen *g, const Cgroup *c) {
        return cgroup_get_type(g->h, c) != CGROUP_TYPE_DOMAIN;
}

/* ---- controller names and tokens ---- */

static const char *const odd_names[] = {
        "perf_event", "debug", "cpuacct", "devices", "freezer", "net_cls", "net_prio", "bogus", "cpux", "",
};

/* real cgroup2 controllers, the ones that matter most listed twice */
static const Controller real_ctrls[] = {
        CONTROLLER_CPU, CONTROLLER_CPU, CONTROLLER_MEMORY, CONTROLLER_MEMORY, CONTROLLER_IO,
        CONTROLLER_IO, CONTROLLER_PIDS, CONTROLLER_PIDS, CONTROLLER_CPUSET, CONTROLLER_HUGETLB,
        CONTROLLER_RDMA, CONTROLLER_MISC,
};

static const char *gen_random_name(Gen *g) {
        if (rng_chance(&g->rng, 85)) {
                for (unsigned tries = 0; tries < 8; tries++) {
                        Controller c = real_ctrls[rng_below(&g->rng, ELEMENTSOF(real_ctrls))];
                        if (g->builtin & CGMASK(c))
                                return controller_to_string(c);
                }
        }
        return odd_names[rng_below(&g->rng, ELEMENTSOF(odd_names))];
}

static const char *gen_name_from(Gen *g, CgMask m) {
        unsigned n = 0;
        Controller v[_CONTROLLER_MAX];

        FOREACH_CONTROLLER_IN(c, m)
                v[n++] = c;
        if (n == 0)
                return gen_random_name(g);
        return controller_to_string(v[rng_below(&g->rng, n)]);
}

/* one cgroup.subtree_control token for @c */
static void gen_stc_token(Gen *g, const Cgroup *c, StrBuf *b) {
        static const char bad[] = { '!', '=', '~', 'x' };
        unsigned w[4] = { 40, 20, g->rules == RULES_BYPASS ? 30 : 8, 10 };  /* + - # bad */
        int k = pick_weighted(&g->rng, w, 4);
        const char *name;

        if (c && k == 1 && rng_chance(&g->rng, 75))
                name = gen_name_from(g, cgroup_get_subtree_control(c) | cgroup_get_subtree_bypass(c));
        else if (c && rng_chance(&g->rng, 70))
                name = gen_name_from(g, gen_offered(g, c));
        else
                name = gen_random_name(g);

        char prefix = k == 0 ? '+' : k == 1 ? '-' : k == 2 ? '#' : bad[rng_below(&g->rng, ELEMENTSOF(bad))];
        strbuf_printf(b, "%c%s", prefix, name);
}

/* ---- emitting: one line of text plus the same operation on our model ---- */

static int gen_emit(Gen *g, const char *line) {
        strbuf_append(&g->out, line);
        strbuf_putc(&g->out, '\n');
        g->n_ops++;
        return g->out.oom ? -ENOMEM : 0;
}

static int gen_mkdir(Gen *g, size_t i) {
        _cleanup_free_ char *line = trace_strdupf("mkdir %s", gen_paths[i]);
        _cleanup_free_ char *p = trace_model_path(g->nonroot, gen_paths[i]);
        if (!line || !p)
                return -ENOMEM;
        (void) hierarchy_mkdir(g->h, p, NULL, NULL);
        return gen_emit(g, line);
}

static int gen_rmdir(Gen *g, size_t i) {
        _cleanup_free_ char *line = trace_strdupf("rmdir %s", gen_paths[i]);
        _cleanup_free_ char *p = trace_model_path(g->nonroot, gen_paths[i]);
        if (!line || !p)
                return -ENOMEM;
        if (i != 0)     /* rmdir "." is EINVAL from the VFS */
                (void) hierarchy_rmdir(g->h, p, NULL);
        return gen_emit(g, line);
}

/* returns 0 without emitting when the model does not implement the file */
static int gen_write(Gen *g, size_t i, const char *file, const char *content) {
        _cleanup_free_ char *line = *content ? trace_strdupf("write %s %s %s", gen_paths[i], file, content) :
                                               trace_strdupf("write %s %s", gen_paths[i], file);
        Cgroup *c = gen_cg(g, i);

        if (!line)
                return -ENOMEM;
        if (c && cgroup_write(g->h, c, file, content, NULL) == -ENOSYS)
                return 0;
        return gen_emit(g, line);
}

/* gen_write() of what @b holds (taken, even on failure) */
static int gen_write_buf(Gen *g, size_t i, const char *file, StrBuf *b) {
        _cleanup_free_ char *content = NULL;
        int r = strbuf_steal(b, &content);

        return r < 0 ? r : gen_write(g, i, file, content);
}

static int gen_line(Gen *g, const char *fmt, ...) _printf_(2, 3);
static int gen_line(Gen *g, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        _cleanup_free_ char *line = trace_vstrdupf(fmt, ap);
        va_end(ap);
        return line ? gen_emit(g, line) : -ENOMEM;
}

/* ---- choosing targets ---- */

enum {
        PICK_ROOT = 1u << 0,            /* the root may be chosen */
        PICK_MISSING = 1u << 1,         /* sometimes a path that does not exist */
};

typedef unsigned (*WeightFn)(const Gen *g, size_t i, const Cgroup *c);

static int pick_path(Gen *g, WeightFn fn, unsigned flags) {
        unsigned w[N_PATHS];

        if ((flags & PICK_MISSING) && rng_chance(&g->rng, 8))
                return (int) rng_below(&g->rng, N_PATHS - 1) + 1;
        for (size_t i = 0; i < N_PATHS; i++) {
                const Cgroup *c = gen_cg(g, i);
                w[i] = !c || (i == 0 && !(flags & PICK_ROOT)) ? 0 : fn(g, i, c);
        }
        return pick_weighted(&g->rng, w, N_PATHS);
}

/* subtree_control writes: where something is offered, or processes or threads complicate it */
static unsigned weight_stc(const Gen *g, size_t i, const Cgroup *c) {
        unsigned w = 1;

        if (i == 0)
                w += 4;
        if (gen_offered(g, c))
                w += 4;
        if (cgroup_nr_procs(c) > 0)
                w += 2;
        if (gen_interesting_type(g, c))
                w += 2;
        if (cgroup_get_subtree_bypass(c) || cgroup_get_enable_ss_mask(c))
                w += 2;
        return w;
}

/* cgroup.controllers writes: where the parent bypasses something (re-enable below re-enable) */
static unsigned weight_controllers(const Gen *g, size_t i, const Cgroup *c) {
        unsigned w = 1;

        if (cgroup_get_bypassed(g->h, c))
                w += 8;
        if (cgroup_get_enable_ss_mask(c))
                w += 3;
        return w;
}

/* processes: into bypassing cgroups, leaves, thread subtrees */
static unsigned weight_procs(const Gen *g, size_t i, const Cgroup *c) {
        unsigned w = i == 0 ? 1 : 2;

        if (i == 0)
                return w;
        if (cgroup_get_subtree_bypass(c) || cgroup_get_bypassed(g->h, c))
                w += 3;
        if (!cgroup_first_child(c))
                w += 2;
        if (gen_interesting_type(g, c))
                w += 3;
        if (cgroup_get_subtree_control(c))
                w += 1;
        return w;
}

static unsigned weight_type(const Gen *g, size_t i, const Cgroup *c) {
        Cgroup *p = cgroup_parent(c);
        unsigned w = 1;

        if (p && (cgroup_get_type(g->h, p) != CGROUP_TYPE_DOMAIN || cgroup_nr_procs(p) > 0))
                w += 3;
        if (cgroup_get_type(g->h, c) == CGROUP_TYPE_DOMAIN_INVALID)
                w += 3;
        return w;
}

static unsigned weight_any(const Gen *g, size_t i, const Cgroup *c) {
        return 1;
}

static unsigned weight_leaf(const Gen *g, size_t i, const Cgroup *c) {
        return cgroup_first_child(c) ? 1 : 5;
}

/* ---- operations ---- */

static int op_mkdir(Gen *g) {
        unsigned w[N_PATHS];

        for (size_t i = 0; i < N_PATHS; i++) {
                bool exists = gen_cg(g, i), parent = i > 0 && gen_cg(g, gen_parent(i));
                w[i] = i == 0 ? 1 : !exists && parent ? 30 : exists ? 2 : 1;
        }
        int i = pick_weighted(&g->rng, w, N_PATHS);
        return gen_mkdir(g, (size_t) i);
}

static int op_rmdir(Gen *g) {
        if (rng_chance(&g->rng, 3))
                return gen_rmdir(g, 0);
        int i = pick_path(g, weight_leaf, PICK_MISSING);
        return i < 0 ? op_mkdir(g) : gen_rmdir(g, (size_t) i);
}

static int op_subtree_control(Gen *g) {
        int i = pick_path(g, weight_stc, PICK_ROOT | PICK_MISSING);
        StrBuf b = STRBUF_INIT;

        if (i < 0)
                return op_mkdir(g);
        const Cgroup *c = gen_cg(g, (size_t) i);
        if (!rng_chance(&g->rng, 4)) {
                unsigned n = 1 + rng_below(&g->rng, 3);
                for (unsigned k = 0; k < n; k++) {
                        if (k > 0)
                                strbuf_putc(&b, ' ');
                        gen_stc_token(g, c, &b);
                }
        }
        return gen_write_buf(g, (size_t) i, "cgroup.subtree_control", &b);
}

static int op_controllers(Gen *g) {
        int i = pick_path(g, weight_controllers, rng_chance(&g->rng, 5) ? PICK_ROOT : 0);
        StrBuf b = STRBUF_INIT;

        if (i < 0)
                return op_mkdir(g);
        const Cgroup *c = gen_cg(g, (size_t) i);
        unsigned n = 1 + rng_below(&g->rng, 2);
        for (unsigned k = 0; k < n; k++) {
                unsigned w[3] = { 55, 35, 10 };
                int p = pick_weighted(&g->rng, w, 3);
                const char *name = c && rng_chance(&g->rng, 75) ?
                        gen_name_from(g, cgroup_get_bypassed(g->h, c)) : gen_random_name(g);
                strbuf_printf(&b, "%s%c%s", k ? " " : "", p == 0 ? '+' : p == 1 ? '#' : '-', name);
        }
        return gen_write_buf(g, (size_t) i, "cgroup.controllers", &b);
}

static int op_type(Gen *g) {
        static const char *const junk[] = { "domain", "domain threaded", "thread", "threaded x", "" };
        int i = pick_path(g, weight_type, PICK_MISSING);

        if (i < 0)
                return op_mkdir(g);
        const char *v = rng_chance(&g->rng, 80) ? "threaded" : junk[rng_below(&g->rng, ELEMENTSOF(junk))];
        return gen_write(g, (size_t) i, "cgroup.type", v);
}

static int op_limits(Gen *g) {
        static const char *const values[] = { "0", "1", "2", "3", "max", "-1", "x" };
        int i = pick_path(g, weight_any, PICK_ROOT);

        if (i < 0)
                return op_mkdir(g);
        const char *file = rng_chance(&g->rng, 50) ? "cgroup.max.depth" : "cgroup.max.descendants";
        return gen_write(g, (size_t) i, file, values[rng_below(&g->rng, ELEMENTSOF(values))]);
}

static GenLabel *pick_label(Gen *g, bool alive) {
        unsigned w[N_LABELS];

        for (size_t i = 0; i < N_LABELS; i++)
                w[i] = g->labels[i].alive == alive;
        int k = pick_weighted(&g->rng, w, N_LABELS);
        return k < 0 ? NULL : &g->labels[k];
}

/* spawn (a label not alive) or @move (an alive one) into a path; without a label or a path, something else */
static int op_proc(Gen *g, bool move) {
        GenLabel *l = pick_label(g, move);
        int i = pick_path(g, weight_procs, PICK_ROOT | PICK_MISSING);
        Cgroup *c;

        if (!l || i < 0)
                return move ? op_proc(g, false) : op_mkdir(g);
        c = gen_cg(g, (size_t) i);
        if (c && move)
                (void) hierarchy_move(g->h, l->id, c, true, NULL);
        else if (c && hierarchy_spawn(g->h, c, &l->id, NULL) >= 0)
                l->alive = true;
        return gen_line(g, "%s %s %s", move ? "move" : "spawn", l->name, gen_paths[i]);
}

static int op_spawn(Gen *g) {
        return op_proc(g, false);
}

static int op_move(Gen *g) {
        return op_proc(g, true);
}

static int op_kill(Gen *g) {
        GenLabel *l = pick_label(g, true);

        if (!l)
                return op_spawn(g);
        (void) hierarchy_kill(g->h, l->id);
        l->alive = false;
        return gen_line(g, "kill %s", l->name);
}

static int op_read(Gen *g) {
        static const char *const files[] = {
                "cgroup.controllers", "cgroup.controllers", "cgroup.subtree_control", "cgroup.subtree_control",
                "cgroup.type", "cgroup.type", "cgroup.events", "cgroup.procs", "cgroup.threads", "debug.masks",
        };
        int i = pick_path(g, weight_stc, PICK_ROOT | PICK_MISSING);

        if (i < 0)
                return op_mkdir(g);
        const char *file = files[rng_below(&g->rng, ELEMENTSOF(files))];
        /* the root lists every process of the machine */
        if (i == 0 && (streq(file, "cgroup.procs") || streq(file, "cgroup.threads")))
                file = "cgroup.subtree_control";
        if (streq(file, "debug.masks") && !(g->builtin & CGMASK(CONTROLLER_DEBUG)))
                file = "cgroup.controllers";
        return gen_line(g, "read %s %s", gen_paths[i], file);
}

static int op_exists(Gen *g) {
        static const char *const files[] = {
                "cgroup.type", "cgroup.events", "cgroup.freeze", "cgroup.stat", "cgroup.max.depth", "cpu.stat",
                "cpu.weight", "cpu.max", "memory.max", "memory.current", "memory.stat", "io.stat", "io.max",
                "pids.max", "pids.current", "cpuset.cpus", "cpuset.cpus.effective", "hugetlb.2MB.max",
                "rdma.max", "misc.max", "debug.masks", "debug.csses",
        };
        int i = pick_path(g, weight_stc, PICK_ROOT | PICK_MISSING);

        if (i < 0)
                return op_mkdir(g);
        return gen_line(g, "exists %s %s", gen_paths[i], files[rng_below(&g->rng, ELEMENTSOF(files))]);
}

static int op_tree(Gen *g) {
        static const Controller ctrls[] = {
                CONTROLLER_CPU, CONTROLLER_CPU, CONTROLLER_MEMORY, CONTROLLER_IO, CONTROLLER_PIDS,
                CONTROLLER_CPUSET, CONTROLLER_HUGETLB, CONTROLLER_RDMA, CONTROLLER_MISC,
                CONTROLLER_PERF_EVENT, CONTROLLER_DEBUG,
        };
        Controller c = ctrls[rng_below(&g->rng, ELEMENTSOF(ctrls))];

        if (!(g->builtin & CGMASK(c)))
                c = CONTROLLER_DEBUG;
        return gen_line(g, "tree %s", controller_to_string(c));
}

/* a small tree with controllers enabled at the root */
static int gen_prefix(Gen *g, unsigned budget) {
        bool want[N_PATHS] = { [1] = true };
        int r;

        for (size_t i = 2; i < N_PATHS; i++)
                want[i] = rng_chance(&g->rng, 45);
        for (size_t i = N_PATHS; i-- > 1;)
                if (want[i])
                        want[gen_parent(i)] = true;
        for (size_t i = 1; i < N_PATHS && g->n_ops < budget; i++)
                if (want[i]) {
                        r = gen_mkdir(g, i);
                        if (r < 0)
                                return r;
                }
        if (g->n_ops >= budget)
                return 0;

        StrBuf b = STRBUF_INIT;
        CgMask used = 0;
        unsigned n = 1 + rng_below(&g->rng, 3);
        for (unsigned k = 0; k < n; k++) {
                Controller c = real_ctrls[rng_below(&g->rng, ELEMENTSOF(real_ctrls))];
                if (!(g->builtin & CGMASK(c)) || (used & CGMASK(c)))
                        continue;
                used |= CGMASK(c);
                bool bypass = g->rules == RULES_BYPASS && rng_chance(&g->rng, 25);
                strbuf_printf(&b, "%s%c%s", b.len ? " " : "", bypass ? '#' : '+', controller_to_string(c));
        }
        _cleanup_free_ char *content = NULL;
        r = strbuf_steal(&b, &content);
        if (r < 0)
                return r;
        if (*content) {
                r = gen_write(g, 0, "cgroup.subtree_control", content);
                if (r < 0)
                        return r;
        }

        /* one level further down, often as bypass */
        if (g->n_ops < budget && rng_chance(&g->rng, 70)) {
                const Cgroup *a = gen_cg(g, 1);
                CgMask offered = a ? gen_offered(g, a) : 0;
                if (offered) {
                        const char *name = gen_name_from(g, offered);
                        bool bypass = g->rules == RULES_BYPASS && rng_chance(&g->rng, 60);
                        _cleanup_free_ char *tok = trace_strdupf("%c%s", bypass ? '#' : '+', name);
                        if (!tok)
                                return -ENOMEM;
                        r = gen_write(g, 1, "cgroup.subtree_control", tok);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

typedef int (*OpFn)(Gen *g);

int trace_generate(uint64_t seed, unsigned length, const TraceModelOptions *opts, char **ret) {
        RuleSet rules = opts->rules;
        CgMask builtin = opts->builtin;
        static const OpFn ops[] = {
                op_mkdir, op_rmdir, op_subtree_control, op_controllers, op_type, op_limits,
                op_spawn, op_move, op_kill, op_read, op_exists, op_tree,
        };
        unsigned weights[ELEMENTSOF(ops)] = {
                10, 5, 20, rules == RULES_BYPASS ? 9 : 2, 5, 1, 7, 6, 3, 16, 8,
                (builtin & CGMASK(CONTROLLER_DEBUG)) ? 3 : 0,
        };
        Gen g = { .rules = rules, .builtin = builtin, .nonroot = opts->nonroot };
        int r;

        if (length == 0)
                return -EINVAL;
        r = trace_model_hierarchy_new(opts, &g.h, NULL);
        if (r < 0)
                return r;
        rng_seed(&g.rng, seed);
        for (size_t i = 0; i < N_LABELS; i++)
                (void) snprintf(g.labels[i].name, sizeof(g.labels[i].name), "p%zu", i + 1);

        _cleanup_free_ char *ctrls = controller_mask_to_string(builtin, ",");
        if (!ctrls) {
                r = -ENOMEM;
                goto finish;
        }
        strbuf_printf(&g.out, "# cgbypass-tracegen --seed %" PRIu64 " --length %u --rules %s --controllers %s%s\n",
                      seed, length, rules_to_string(rules), ctrls, opts->nonroot ? " --nonroot" : "");

        r = gen_prefix(&g, length / 3 + 1 < length ? length / 3 + 1 : length);
        /* a write the model does not implement emits nothing: bound the attempts */
        for (unsigned tries = 0; r >= 0 && g.n_ops < length && tries < length * 8; tries++) {
                int k = pick_weighted(&g.rng, weights, ELEMENTSOF(ops));
                r = ops[k](&g);
        }
        if (r >= 0)
                r = strbuf_steal(&g.out, ret);

finish:
        strbuf_done(&g.out);
        hierarchy_free(g.h);
        return r < 0 ? r : 0;
}
