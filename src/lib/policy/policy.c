/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * From the state we find to the state we want, in an order the kernel
 * accepts. Every operation is executed on a copy of the model as it is
 * planned, so refusals surface here, with the model's reason, and never
 * half-way through an apply.
 */
#include <stdarg.h>
#include <stdint.h>

#include "cgbypass/cftype.h"
#include "cgbypass/cfvalue.h"
#include "cgbypass/cgpath.h"
#include "cgbypass/policy.h"
#include "cgbypass/strbuf.h"
#include "cgbypass/strset.h"

typedef enum ControllerState {
        STATE_UNMANAGED,
        STATE_DISABLED,         /* subtree_control: neither enabled nor bypassed */
        STATE_ENABLED,
        STATE_BYPASSED,         /* subtree_control '#'; controllers: back in bypass */
        STATE_REENABLED,        /* controllers '+' */
} ControllerState;

static const char *const state_words[] = {
        [STATE_UNMANAGED] = "unmanaged",
        [STATE_DISABLED] = "disabled",
        [STATE_ENABLED] = "enabled",
        [STATE_BYPASSED] = "bypassed",
        [STATE_REENABLED] = "re-enabled",
};

/*
 * A ControllerState per controller, a byte each: the planner keeps six of these per managed cgroup,
 * and with int-sized states the items of 10,000 cgroups took 3.6 MB, whose first-touch page faults
 * and sort moves cost more than the loops over them.
 */
typedef uint8_t StateArray[_CONTROLLER_MAX];

/*
 * A cgroup's masks, read once for a loop over the controllers that writes nothing in between: the
 * getters are calls into the model, and the loops below ran them three times a controller a cgroup.
 */
typedef struct Masks {
        CgMask sc, sb, en;
} Masks;

/*
 * The lowest controller in a non-empty mask: the planner's loops take the set bits in order, as
 * FOREACH_CONTROLLER_IN() would, without testing all 15 for items that manage one or two.
 */
static Controller lowest(CgMask m) {
        return (Controller) __builtin_ctz(m);
}

/* Per managed cgroup: where it is, what it wants, what it drops first (the clearing). */
typedef struct Item Item;
struct Item {
        size_t desired;
        Cgroup *cgroup;          /* in the planning copy; NULL if it could not be made */
        char *path;              /* relative trace path */
        unsigned depth;
        StateArray sc_target, ctl_target;
        StateArray sc_orig, ctl_orig;
        StateArray sc_cleared, ctl_cleared;
        Masks orig;              /* the masks sc_orig and ctl_orig were read from */
        struct Item *cleared_for;  /* the item whose change forced this one to be cleared */
        bool failed;
};

typedef struct Planner {
        Hierarchy *h;
        const DesiredCgroup *want;
        size_t n_want;
        Item *items;
        size_t n_items;
        /*
         * Items by Cgroup pointer, open addressing (a power of two, at least twice the items): the
         * sorted array it replaces cost a qsort() per plan, since the cgroups made in pre-order are
         * not allocated at rising addresses once malloc() reuses chunks.
         */
        Item **by_cgroup;
        size_t n_slots;
        Plan *plan;
        size_t n_ops_alloc;      /* plan->ops grows by doubling: a realloc() per operation cost ~350 Ir */
        PolicyErrors *errors;
        bool oom;
} Planner;

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_ops; i++) {
                free(p->ops[i].path);
                free(p->ops[i].file);
                free(p->ops[i].value);
                free(p->ops[i].undo);
        }
        free(p->ops);
        free(p);
        return NULL;
}

void policy_errors_done(PolicyErrors *e) {
        for (size_t i = 0; i < e->n; i++)
                free(e->errors[i].message);
        free(e->errors);
        *e = (PolicyErrors) {};
}

static void add_error(Planner *p, Origin origin, const char *fmt, ...) _printf_(3, 4);
static void add_error(Planner *p, Origin origin, const char *fmt, ...) {
        PolicyError *n = realloc(p->errors->errors, (p->errors->n + 1) * sizeof(PolicyError));
        char *msg;
        va_list ap;

        if (!n) {
                p->oom = true;
                return;
        }
        p->errors->errors = n;
        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0) {
                va_end(ap);
                p->oom = true;
                return;
        }
        va_end(ap);
        n[p->errors->n++] = (PolicyError) { .origin = origin, .message = msg };
}

/* "/a/b" -> "a/b", "/" -> "." */
static char *trace_path(const char *abs) {
        return strdup(cgpath_relative(abs));
}

static Masks masks_of(const Cgroup *c) {
        return (Masks) { cgroup_get_subtree_control(c), cgroup_get_subtree_bypass(c), cgroup_get_enable_ss_mask(c) };
}

static ControllerState sc_of(Masks m, Controller x) {
        return m.sc & CGMASK(x) ? STATE_ENABLED : m.sb & CGMASK(x) ? STATE_BYPASSED : STATE_DISABLED;
}

static ControllerState ctl_of(Masks m, Controller x) {
        return m.en & CGMASK(x) ? STATE_REENABLED : STATE_BYPASSED;
}

static ControllerState sc_state(const Cgroup *c, Controller x) {
        return sc_of(masks_of(c), x);
}

static ControllerState ctl_state(const Cgroup *c, Controller x) {
        return ctl_of(masks_of(c), x);
}

/* the controllers @d says something about, in either file */
static CgMask desired_managed(const DesiredCgroup *d) {
        return d->sc_enable | d->sc_bypass | d->sc_disable | d->ctl_enable | d->ctl_bypass;
}

static bool uses(ControllerState s) {
        return s == STATE_ENABLED || s == STATE_BYPASSED || s == STATE_REENABLED;
}

static char token(ControllerState s) {
        return s == STATE_ENABLED || s == STATE_REENABLED ? '+' : s == STATE_BYPASSED ? '#' : '-';
}

static size_t slot_of(const Planner *p, const Cgroup *c) {
        uint64_t x = (uint64_t) (uintptr_t) c * 0x9e3779b97f4a7c15ULL;
        return (size_t) (x >> 32) & (p->n_slots - 1);
}

/* distinct paths are distinct cgroups (twins were refused), so each cgroup is in one item at most */
static void index_item(Planner *p, Item *it) {
        size_t i = slot_of(p, it->cgroup);

        while (p->by_cgroup[i])
                i = (i + 1) & (p->n_slots - 1);
        p->by_cgroup[i] = it;
}

static Item *item_of(const Planner *p, const Cgroup *c) {
        for (size_t i = slot_of(p, c); p->by_cgroup[i]; i = (i + 1) & (p->n_slots - 1))
                if (p->by_cgroup[i]->cgroup == c)
                        return p->by_cgroup[i];
        return NULL;
}

static int emit(Planner *p, PlanOpType type, const char *path, const char *file, const char *value,
                const char *undo, size_t desired) {
        if (p->plan->n_ops == p->n_ops_alloc) {
                size_t n = p->n_ops_alloc ? p->n_ops_alloc * 2 : 16;
                PlanOp *ops = realloc(p->plan->ops, n * sizeof(PlanOp));
                if (!ops)
                        return -ENOMEM;
                p->plan->ops = ops;
                p->n_ops_alloc = n;
        }
        PlanOp *op = &p->plan->ops[p->plan->n_ops];
        *op = (PlanOp) { .type = type, .desired = desired };
        op->path = strdup(path);
        op->file = file ? strdup(file) : NULL;
        op->value = value ? strdup(value) : NULL;
        op->undo = undo ? strdup(undo) : NULL;
        if (!op->path || (file && !op->file) || (value && !op->value) || (undo && !op->undo)) {
                free(op->path);
                free(op->file);
                free(op->value);
                free(op->undo);
                return -ENOMEM;
        }
        p->plan->n_ops++;
        return 0;
}

/* ---- the cgroups ---- */

static int cmp_items_preorder(const void *a, const void *b) {
        const Item *x = a, *y = b;
        if (x->depth != y->depth)
                return x->depth < y->depth ? -1 : 1;
        return strcmp(x->path, y->path);
}

/* Whether @n elements of @size at @base are in @cmp's order already: a configuration usually lists its
 * cgroups parents first, level by level, and the cgroups a plan makes are allocated in that order. */
static bool sorted_already(const void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
        for (size_t i = 1; i < n; i++)
                if (cmp((const char *) base + (i - 1) * size, (const char *) base + i * size) > 0)
                        return false;
        return true;
}

static int make_cgroups(Planner *p) {
        for (size_t i = 0; i < p->n_items; i++) {
                Item *it = &p->items[i];
                const DesiredCgroup *d = &p->want[it->desired];
                Reason reason = REASON_NONE;
                int r;

                r = hierarchy_lookup(p->h, it->path, &it->cgroup);
                if (r == 0)
                        continue;
                if (r != -ENOENT) {
                        add_error(p, d->origin, "%s: %s", d->path, policy_reason_text(r, REASON_NOT_A_DIRECTORY));
                        it->failed = true;
                        continue;
                }
                if (!d->create) {
                        add_error(p, d->origin, "%s: the cgroup does not exist (set create = yes to make it)",
                                  d->path);
                        it->failed = true;
                        continue;
                }

                /*
                 * Items are in pre-order, so the parent is usually there already: one mkdir, not a
                 * lookup of every prefix. Any failure is left to the walk below, which makes
                 * missing parents and names the prefix that fails (a failed mkdir changes nothing).
                 */
                Cgroup *made;
                r = hierarchy_mkdir(p->h, it->path, &made, &reason);
                if (r >= 0) {
                        r = emit(p, PLAN_OP_MKDIR, it->path, NULL, NULL, NULL, it->desired);
                        if (r < 0)
                                return r;
                        it->cgroup = made;
                        continue;
                }
                if (r == -ENOMEM)
                        return r;
                reason = REASON_NONE;

                /* missing parents are made too: a new cgroup changes no one's settings */
                _cleanup_free_ char *prefix = strdup(it->path);
                if (!prefix)
                        return -ENOMEM;
                for (char *s = prefix;; s++) {
                        if (*s != '/' && *s != '\0')
                                continue;
                        char saved = *s;
                        *s = '\0';
                        Cgroup *c;
                        r = hierarchy_lookup(p->h, prefix, &c);
                        if (r == -ENOENT) {
                                r = hierarchy_mkdir(p->h, prefix, &c, &reason);
                                if (r >= 0)
                                        r = emit(p, PLAN_OP_MKDIR, prefix, NULL, NULL, NULL, it->desired);
                                if (r == -ENOMEM)
                                        return r;
                        }
                        if (r < 0) {
                                add_error(p, d->origin, "%s: cannot create /%s: %s", d->path, prefix,
                                          policy_reason_text(r, reason));
                                it->failed = true;
                                break;
                        }
                        if (saved == '\0') {
                                it->cgroup = c;
                                break;
                        }
                        *s = saved;
                }
        }
        return 0;
}

/* ---- targets ---- */

static void set_targets(Planner *p) {
        for (size_t i = 0; i < p->n_items; i++) {
                Item *it = &p->items[i];
                const DesiredCgroup *d = &p->want[it->desired];
                const CgMask sc_managed = d->sc_enable | d->sc_bypass | d->sc_disable,
                             ctl_managed = d->ctl_enable | d->ctl_bypass;

                /* the items are zeroed: STATE_UNMANAGED where the description says nothing */
                for (CgMask m = sc_managed; m; m &= m - 1) {
                        Controller x = lowest(m);
                        CgMask b = CGMASK(x);
                        it->sc_target[x] = d->sc_enable & b ? STATE_ENABLED :
                                           d->sc_bypass & b ? STATE_BYPASSED : STATE_DISABLED;
                }
                for (CgMask m = ctl_managed; m; m &= m - 1) {
                        Controller x = lowest(m);
                        it->ctl_target[x] = d->ctl_enable & CGMASK(x) ? STATE_REENABLED : STATE_BYPASSED;
                }
                if (!it->cgroup)
                        continue;

                /* as found: disabled and bypassed but for the set bits, which few controllers have */
                Masks now = masks_of(it->cgroup);
                it->orig = now;
                memset(it->sc_orig, STATE_DISABLED, sizeof(it->sc_orig));
                memset(it->ctl_orig, STATE_BYPASSED, sizeof(it->ctl_orig));
                for (CgMask m = now.sc | now.sb; m; m &= m - 1)
                        it->sc_orig[lowest(m)] = sc_of(now, lowest(m));
                for (CgMask m = now.en; m; m &= m - 1)
                        it->ctl_orig[lowest(m)] = STATE_REENABLED;
                memcpy(it->sc_cleared, it->sc_orig, sizeof(it->sc_cleared));
                memcpy(it->ctl_cleared, it->ctl_orig, sizeof(it->ctl_cleared));

                /* the clearing only takes away: a removal or a switch between enabled and bypassed */
                for (CgMask m = sc_managed; m; m &= m - 1) {
                        Controller x = lowest(m);
                        ControllerState sc = it->sc_orig[x];
                        if (it->sc_target[x] != sc && uses(sc))
                                it->sc_cleared[x] = it->sc_target[x];
                }
                for (CgMask m = ctl_managed; m; m &= m - 1) {
                        Controller x = lowest(m);
                        if (it->ctl_target[x] == STATE_BYPASSED && it->ctl_orig[x] == STATE_REENABLED)
                                it->ctl_cleared[x] = STATE_BYPASSED;
                }
        }
}

/* ---- the clearing: what must go before anything changes ---- */

static bool teardown(Planner *p, Item *cause, Cgroup *d, Controller x);

/* Every child of @c must stop using @x before @c's state of @x changes (kernel: EBUSY). */
static bool clear_children(Planner *p, Item *cause, Cgroup *c, Controller x) {
        bool changed = false;

        for (Cgroup *k = cgroup_first_child(c); k; k = cgroup_next_sibling(k)) {
                Item *ki = item_of(p, k);
                bool in_use = ki ? uses(ki->sc_cleared[x]) || ki->ctl_cleared[x] == STATE_REENABLED
                                 : uses(sc_state(k, x)) || ctl_state(k, x) == STATE_REENABLED;
                /* blame the change that started the chain, not a cgroup cleared on its behalf */
                if (in_use)
                        changed |= teardown(p, cause->cleared_for ? cause->cleared_for : cause, k, x);
        }
        return changed;
}

/*
 * @d must not use @x once cleared (plan_clearing()); plan_targets() sets it
 * up again. Only a cgroup whose desired state says what it does with @x may
 * be cleared: the planner never invents a state for anything the
 * configuration left alone.
 */
static bool teardown(Planner *p, Item *cause, Cgroup *d, Controller x) {
        Item *di = item_of(p, d);
        bool changed = false;

        bool sc_used = di ? uses(di->sc_cleared[x]) : uses(sc_state(d, x));
        bool ctl_used = di ? di->ctl_cleared[x] == STATE_REENABLED : ctl_state(d, x) == STATE_REENABLED;
        bool described = di && (!sc_used || di->sc_target[x] != STATE_UNMANAGED) &&
                         (!ctl_used || di->ctl_target[x] != STATE_UNMANAGED);
        if (!described) {
                _cleanup_free_ char *path = NULL;
                if (cause->failed)
                        return false;       /* reported already */
                (void) cgroup_path(d, &path);
                const DesiredCgroup *cd = &p->want[cause->desired];
                if (di)
                        add_error(p, cd->sc_origin.file ? cd->sc_origin : cd->origin,
                                  "%s: %s cannot change while %s uses it; say what %s does with %s in its own "
                                  "section", cd->path, controller_to_string(x), path ? path : "?",
                                  path ? path : "?", controller_to_string(x));
                else
                        add_error(p, cd->sc_origin.file ? cd->sc_origin : cd->origin,
                                  "%s: %s cannot change while %s uses it, and the configuration does not "
                                  "manage %s", cd->path, controller_to_string(x), path ? path : "?",
                                  path ? path : "?");
                cause->failed = true;
                return false;
        }
        if (di->sc_cleared[x] != STATE_DISABLED) {
                di->sc_cleared[x] = STATE_DISABLED;
                changed = true;
        }
        if (di->ctl_cleared[x] == STATE_REENABLED) {
                di->ctl_cleared[x] = STATE_BYPASSED;
                changed = true;
        }
        if (!di->cleared_for)
                di->cleared_for = cause;
        return changed;
}

static int resolve_clearing(Planner *p) {
        bool changed = true;

        /* teardowns can require further teardowns below them: repeat until nothing moves */
        while (changed && !p->oom) {
                changed = false;
                for (size_t i = 0; i < p->n_items; i++) {
                        Item *it = &p->items[i];
                        if (!it->cgroup || it->failed)
                                continue;
                        Masks now = masks_of(it->cgroup);        /* the clearing writes nothing */
                        /*
                         * Only what it manages: an unmanaged controller's cleared states stay as found
                         * (set_targets(), and teardown() changes only a controller the item describes),
                         * and its ctl_final is ctl_orig.
                         */
                        const CgMask managed = desired_managed(&p->want[it->desired]);
                        for (CgMask m = managed; m; m &= m - 1) {
                                Controller x = lowest(m);
                                ControllerState sc = sc_of(now, x);
                                if (it->sc_cleared[x] != sc)
                                        changed |= clear_children(p, it, it->cgroup, x);
                                /* switching its own css needs its subtree_control clear of @x (kernel: EBUSY) */
                                ControllerState ctl_final = it->ctl_target[x] != STATE_UNMANAGED ? it->ctl_target[x] : it->ctl_orig[x];
                                if (ctl_final != it->ctl_orig[x] && uses(it->sc_cleared[x])) {
                                        it->sc_cleared[x] = STATE_DISABLED;
                                        changed = true;
                                }
                        }
                }
        }
        /* a cgroup cleared for a change that cannot happen is left alone too */
        for (size_t i = 0; i < p->n_items; i++)
                if (p->items[i].cleared_for && p->items[i].cleared_for->failed)
                        p->items[i].failed = true;
        return p->oom ? -ENOMEM : 0;
}

/* ---- emitting writes ---- */

typedef ControllerState (*ControllerStateFn)(const Cgroup *c, Controller x);

/* One write of several tokens; on refusal, find which controllers the kernel refuses, and why. */
static int write_tokens(Planner *p, Item *it, const char *file, const StateArray to,
                        CgMask which, ControllerStateFn now, Origin origin, const char *key) {
        StrBuf value = STRBUF_INIT, undo = STRBUF_INIT;
        _cleanup_free_ char *v = NULL, *u = NULL;
        Reason reason = REASON_NONE;
        int r;

        if (!which)
                return 0;
        FOREACH_CONTROLLER_IN(x, which) {
                if (value.len) {
                        strbuf_putc(&value, ' ');
                        strbuf_putc(&undo, ' ');
                }
                /* not strbuf_printf(): a vsnprintf() per token cost more than the rest of the write */
                strbuf_putc(&value, token(to[x]));
                strbuf_append(&value, controller_to_string(x));
                strbuf_putc(&undo, token(now(it->cgroup, x)));
                strbuf_append(&undo, controller_to_string(x));
        }
        if (strbuf_steal(&value, &v) < 0 || strbuf_steal(&undo, &u) < 0) {
                strbuf_done(&undo);
                return -ENOMEM;
        }

        r = cgroup_write(p->h, it->cgroup, file, v, &reason);
        if (r == -ENOMEM)
                return r;
        if (r >= 0)
                return emit(p, PLAN_OP_WRITE, it->path, file, v, u, it->desired);

        /* which token? each alone, on the planning copy; the ones that pass stay applied */
        const DesiredCgroup *d = &p->want[it->desired];
        FOREACH_CONTROLLER_IN(x, which) {
                char one[64];
                snprintf(one, sizeof(one), "%c%s", token(to[x]), controller_to_string(x));
                reason = REASON_NONE;
                r = cgroup_write(p->h, it->cgroup, file, one, &reason);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        add_error(p, origin.file ? origin : d->origin, "%s: %s %s: %s", d->path, key, one,
                                  policy_reason_text(r, reason));
        }
        it->failed = true;
        return 0;
}

/* The writes that clear, deepest first (the *_cleared states). */
static int plan_clearing(Planner *p) {
        /* deepest first: a cgroup's children are cleared before it changes */
        for (size_t i = p->n_items; i-- > 0;) {
                Item *it = &p->items[i];
                const DesiredCgroup *d = &p->want[it->desired];
                CgMask sc = 0, ctl = 0;
                int r;

                if (!it->cgroup || it->failed)
                        continue;
                Masks now = masks_of(it->cgroup);
                /*
                 * Only what it manages can differ from the cleared states: the rest were left as found
                 * (resolve_clearing()), and nothing written before it (its descendants, deepest first,
                 * and cgroups beside it) changes its own masks.
                 */
                const CgMask managed = desired_managed(d);
                for (CgMask m = managed; m; m &= m - 1) {
                        Controller x = lowest(m);
                        if (it->sc_cleared[x] != sc_of(now, x))
                                sc |= CGMASK(x);
                        if (it->ctl_cleared[x] != ctl_of(now, x))
                                ctl |= CGMASK(x);
                }
                r = write_tokens(p, it, "cgroup.subtree_control", it->sc_cleared, sc, sc_state,
                                 d->sc_origin, "subtree-control");
                if (r < 0)
                        return r;
                r = write_tokens(p, it, "cgroup.controllers", it->ctl_cleared, ctl, ctl_state,
                                 d->ctl_origin, "controllers");
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The writes that reach the targets, parents first. */
static int plan_targets(Planner *p) {
        /* parents first: a controller is given out from the top */
        for (size_t i = 0; i < p->n_items; i++) {
                Item *it = &p->items[i];
                const DesiredCgroup *d = &p->want[it->desired];
                StateArray sc_final, ctl_final;
                CgMask sc = 0, ctl = 0;
                int r;

                if (!it->cgroup || it->failed)
                        continue;
                Masks now = masks_of(it->cgroup);
                const CgMask sc_managed = d->sc_enable | d->sc_bypass | d->sc_disable,
                             ctl_managed = d->ctl_enable | d->ctl_bypass;

                /*
                 * Unmanaged settings were never cleared (teardown()), so their final state is as found
                 * (it->orig): those that differ from now, by the masks, not a loop over the controllers.
                 */
                sc = (((it->orig.sc ^ now.sc) | ((it->orig.sb & ~it->orig.sc) ^ (now.sb & ~now.sc))) & ~sc_managed);
                ctl = (it->orig.en ^ now.en) & ~ctl_managed;
                for (CgMask m = sc_managed; m; m &= m - 1)
                        if (it->sc_target[lowest(m)] != sc_of(now, lowest(m)))
                                sc |= CGMASK(lowest(m));
                for (CgMask m = ctl_managed; m; m &= m - 1)
                        if (it->ctl_target[lowest(m)] != ctl_of(now, lowest(m)))
                                ctl |= CGMASK(lowest(m));
                /* write_tokens() reads the final state of the controllers it writes only */
                for (CgMask m = sc; m; m &= m - 1) {
                        Controller x = lowest(m);
                        sc_final[x] = it->sc_target[x] != STATE_UNMANAGED ? it->sc_target[x] : it->sc_orig[x];
                }
                for (CgMask m = ctl; m; m &= m - 1) {
                        Controller x = lowest(m);
                        ctl_final[x] = it->ctl_target[x] != STATE_UNMANAGED ? it->ctl_target[x] : it->ctl_orig[x];
                }
                /* its own css first: the kernel refuses a change of it while its subtree_control names it */
                r = write_tokens(p, it, "cgroup.controllers", ctl_final, ctl, ctl_state, d->ctl_origin, "controllers");
                if (r < 0)
                        return r;
                if (it->failed)
                        continue;
                r = write_tokens(p, it, "cgroup.subtree_control", sc_final, sc, sc_state, d->sc_origin,
                                 "subtree-control");
                if (r < 0)
                        return r;
        }
        return 0;
}

static int check_reached(Planner *p) {
        for (size_t i = 0; i < p->n_items; i++) {
                Item *it = &p->items[i];
                if (!it->cgroup || it->failed)
                        continue;
                Masks now = masks_of(it->cgroup);
                /* only what it manages can miss its target (the rest stay STATE_UNMANAGED) */
                const CgMask managed = desired_managed(&p->want[it->desired]);
                for (CgMask m = managed; m; m &= m - 1) {
                        Controller x = lowest(m);
                        if ((it->sc_target[x] != STATE_UNMANAGED && it->sc_target[x] != sc_of(now, x)) ||
                            (it->ctl_target[x] != STATE_UNMANAGED && it->ctl_target[x] != ctl_of(now, x))) {
                                add_error(p, p->want[it->desired].origin,
                                          "%s: %s: the plan does not reach the desired state (a bug in cgbypassd)",
                                          p->want[it->desired].path, controller_to_string(x));
                                it->failed = true;
                                break;
                        }
                }
        }
        return p->oom ? -ENOMEM : 0;
}

/* ---- values of controller files ---- */

static int file_controller(const char *file) {
        const CfType *t = cftype_lookup(file);
        return t ? t->controller : -1;
}

/* Why @c will not have @file under the policy. */
static void value_file_missing(Planner *p, const Item *it, const DesiredValue *v) {
        const DesiredCgroup *d = &p->want[it->desired];
        int x = file_controller(v->file);

        if (x < 0)
                add_error(p, v->origin, "%s: %s: the kernel has no such file (cgbypassd models Linux 6.1 "
                          "as kernel/config/ builds it)", d->path, v->file);
        else if (!(hierarchy_builtin(p->h) & CGMASK(x)))
                add_error(p, v->origin, "%s: %s: the kernel has no %s controller", d->path, v->file,
                          controller_to_string(x));
        else if (!cgroup_parent(it->cgroup))
                add_error(p, v->origin, "/: %s: the root cgroup has no such file; set it on a cgroup below",
                          v->file);
        else if (cgroup_get_bypassed(p->h, it->cgroup) & CGMASK(x))
                add_error(p, v->origin, "%s: %s: %s is bypassed there, so the cgroup has no %s files; "
                          "re-enable it ('controllers = +%s') to set them", d->path, v->file,
                          controller_to_string(x), controller_to_string(x), controller_to_string(x));
        else
                add_error(p, v->origin, "%s: %s: %s is not enabled for the cgroup (its parent's "
                          "subtree-control does not have +%s), so it has no %s files", d->path, v->file,
                          controller_to_string(x), controller_to_string(x), controller_to_string(x));
}

/*
 * After every control write: the files exist now. Each value is tried on the
 * planning copy, which checks what the kernel checks across files (a burst
 * above the quota, a weight of an idle group); devices and SEV capacity are
 * the kernel's to check at apply time.
 */
static int plan_values(Planner *p) {
        for (size_t i = 0; i < p->n_items; i++) {
                Item *it = &p->items[i];
                const DesiredCgroup *d = &p->want[it->desired];

                if (!it->cgroup || it->failed)
                        continue;
                for (size_t j = 0; j < d->n_values; j++) {
                        const DesiredValue *v = &d->values[j];
                        Reason reason = REASON_NONE;
                        int r;

                        if (!cgroup_has_file(p->h, it->cgroup, v->file)) {
                                value_file_missing(p, it, v);
                                continue;
                        }
                        r = cgroup_value_write(p->h, it->cgroup, v->file, v->value, &reason);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0 && r != -ENODEV && !streq(v->file, "misc.max")) {
                                if (r == -ENOSYS)
                                        add_error(p, v->origin, "%s: %s: cgbypassd does not know how to "
                                                  "write this file", d->path, v->file);
                                else
                                        add_error(p, v->origin, "%s: %s = %s: the kernel refuses it (%s) "
                                                  "with the cgroup's other values; it takes %s", d->path,
                                                  v->file, v->value, r == -ERANGE ? "ERANGE" : "EINVAL",
                                                  strempty(cfvalue_syntax(v->file)));
                                continue;
                        }
                        r = emit(p, PLAN_OP_WRITE, it->path, v->file, v->value, NULL, it->desired);
                        if (r < 0)
                                return r;
                        p->plan->ops[p->plan->n_ops - 1].if_differs = true;
                }
        }
        return p->oom ? -ENOMEM : 0;
}

static int cmp_desired_path(const void *a, const void *b) {
        const DesiredCgroup *x = *(const DesiredCgroup *const *) a, *y = *(const DesiredCgroup *const *) b;
        int c = strcmp(strempty(x->path), strempty(y->path));
        return c ? c : (x < y ? -1 : x > y);
}

/*
 * Whether two of @want name the same path, by a hash set: the sort that reports twins costs ~130,000
 * comparisons at 10,000 cgroups, for the usual answer "none". Return: 1 twins, 0 none, -ENOMEM.
 */
static int desired_have_twins(const DesiredCgroup *want, size_t n) {
        StrSet set;
        int r = strset_init(&set, n);

        for (size_t i = 0; r == 0 && i < n; i++)
                if (want[i].path)       /* reported above; the sort never pairs it */
                        r = strset_add(&set, want[i].path);
        strset_done(&set);
        return r;
}

static int check_desired(Planner *p) {
        int r;

        for (size_t i = 0; i < p->n_want; i++) {
                const DesiredCgroup *d = &p->want[i];

                if (!d->path || !cgpath_is_absolute(d->path)) {
                        add_error(p, d->origin, "%s: not an absolute cgroup path", strempty(d->path));
                        continue;
                }
                if ((d->sc_enable & d->sc_bypass) || (d->sc_enable & d->sc_disable) || (d->sc_bypass & d->sc_disable))
                        add_error(p, d->sc_origin.file ? d->sc_origin : d->origin,
                                  "%s: subtree-control names a controller twice", d->path);
                if (d->ctl_enable & d->ctl_bypass)
                        add_error(p, d->ctl_origin.file ? d->ctl_origin : d->origin,
                                  "%s: controllers names a controller twice", d->path);
                if (streq(d->path, "/") && (d->ctl_enable | d->ctl_bypass))
                        add_error(p, d->ctl_origin.file ? d->ctl_origin : d->origin,
                                  "/: the root cgroup has no parent to bypass controllers for it");
        }

        /* duplicates: sorted by path (then index), so twins are neighbours; O(n log n), when there are any */
        r = desired_have_twins(p->want, p->n_want);
        if (r < 0)
                return r;
        if (r > 0) {
                const DesiredCgroup **sorted = malloc(p->n_want * sizeof(DesiredCgroup *));
                if (!sorted)
                        return -ENOMEM;
                for (size_t i = 0; i < p->n_want; i++)
                        sorted[i] = &p->want[i];
                qsort(sorted, p->n_want, sizeof(DesiredCgroup *), cmp_desired_path);
                for (size_t i = 1; i < p->n_want; i++)
                        if (sorted[i]->path && sorted[i - 1]->path && streq(sorted[i]->path, sorted[i - 1]->path))
                                add_error(p, sorted[i]->origin, "%s: described twice", sorted[i]->path);
                free(sorted);
        }
        return p->oom ? -ENOMEM : 0;
}

/* The planning copy: what @want can touch. Every entry at or below @scope: its subtree and ancestors. */
static int planning_copy(const Hierarchy *current, const char *scope, const DesiredCgroup *want, size_t n_want,
                         Hierarchy **ret) {
        Cgroup *top;

        if (!scope || hierarchy_lookup(current, scope, &top) < 0)
                return hierarchy_clone(current, ret);
        for (size_t i = 0; i < n_want; i++)
                if (!cgpath_is_at_or_below(want[i].path, scope))
                        return hierarchy_clone(current, ret);
        return hierarchy_clone_scope(current, top, ret);
}

static int plan_in(const Hierarchy *current, const char *scope, const DesiredCgroup *want, size_t n_want,
                   Plan **ret, PolicyErrors *errors) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        size_t n_errors = errors->n;
        Planner p = { .want = want, .n_want = n_want, .errors = errors };
        int r;

        r = check_desired(&p);
        if (r < 0)
                return r;
        if (errors->n > n_errors)
                return -EINVAL;

        r = planning_copy(current, scope, want, n_want, &h);
        if (r < 0)
                return r;
        plan = calloc(1, sizeof(Plan));
        p.items = calloc(n_want ? n_want : 1, sizeof(Item));
        for (p.n_slots = 4; p.n_slots < 2 * n_want; p.n_slots *= 2)
                ;
        p.by_cgroup = calloc(p.n_slots, sizeof(Item *));
        if (!plan || !p.items || !p.by_cgroup) {
                r = -ENOMEM;
                goto finish;
        }
        p.h = h;
        p.plan = plan;
        p.n_items = n_want;
        for (size_t i = 0; i < n_want; i++) {
                p.items[i].desired = i;
                p.items[i].path = trace_path(want[i].path);
                if (!p.items[i].path) {
                        r = -ENOMEM;
                        goto finish;
                }
                p.items[i].depth = cgpath_depth(p.items[i].path);
        }
        /* pre-order by depth then path; plan_clearing() walks it backwards */
        if (!sorted_already(p.items, p.n_items, sizeof(Item), cmp_items_preorder))
                qsort(p.items, p.n_items, sizeof(Item), cmp_items_preorder);

        r = make_cgroups(&p);
        if (r < 0)
                goto finish;
        for (size_t i = 0; i < p.n_items; i++)
                if (p.items[i].cgroup)
                        index_item(&p, &p.items[i]);

        set_targets(&p);
        r = resolve_clearing(&p);
        if (r >= 0)
                r = plan_clearing(&p);
        if (r >= 0)
                r = plan_targets(&p);
        if (r >= 0)
                r = check_reached(&p);
        if (r >= 0)
                r = plan_values(&p);
        if (r >= 0 && p.oom)
                r = -ENOMEM;
        if (r >= 0 && errors->n > n_errors)
                r = -EINVAL;
        if (r >= 0)
                *ret = TAKE_PTR(plan);
finish:
        for (size_t i = 0; i < p.n_items; i++)
                free(p.items[i].path);
        free(p.items);
        free(p.by_cgroup);
        return r < 0 ? r : 0;
}

int policy_plan(const Hierarchy *current, const DesiredCgroup *want, size_t n_want,
                Plan **ret, PolicyErrors *errors) {
        return plan_in(current, NULL, want, n_want, ret, errors);
}

int policy_plan_scope(const Hierarchy *current, const char *scope, const DesiredCgroup *want, size_t n_want,
                      Plan **ret, PolicyErrors *errors) {
        return plan_in(current, scope, want, n_want, ret, errors);
}

int plan_execute_model(const Plan *p, Hierarchy *h, size_t *reterr_index, Reason *reterr_reason) {
        for (size_t i = 0; i < p->n_ops; i++) {
                const PlanOp *op = &p->ops[i];
                Cgroup *c;
                int r;

                if (op->type == PLAN_OP_MKDIR)
                        r = hierarchy_mkdir(h, op->path, NULL, reterr_reason);
                else {
                        r = hierarchy_lookup(h, op->path, &c);
                        if (r >= 0)
                                r = cgroup_write(h, c, op->file, op->value, reterr_reason);
                }
                if (r < 0) {
                        if (reterr_index)
                                *reterr_index = i;
                        return r;
                }
        }
        return 0;
}

bool plan_may_add_files(const Plan *p) {
        for (size_t i = 0; i < p->n_ops; i++) {
                const PlanOp *op = &p->ops[i];

                if (op->type != PLAN_OP_WRITE || !op->value ||
                    !(streq(op->file, "cgroup.subtree_control") || streq(op->file, "cgroup.controllers")) ||
                    strchr(op->value, '+'))
                        return true;
        }
        return false;
}

void plan_print(const Plan *p, FILE *f) {
        for (size_t i = 0; i < p->n_ops; i++) {
                const PlanOp *op = &p->ops[i];
                if (op->type == PLAN_OP_MKDIR)
                        fprintf(f, "mkdir %s\n", op->path);
                else
                        fprintf(f, "write %s %s %s\n", op->path, op->file, op->value);
        }
}

void drift_free_array(Drift *d, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(d[i].path);
        free(d);
}

static int drift_add(Drift **d, size_t *n, const char *path, const char *file, Controller x,
                     const char *expected, const char *found) {
        Drift *nd = realloc(*d, (*n + 1) * sizeof(Drift));
        if (!nd)
                return -ENOMEM;
        *d = nd;
        nd[*n] = (Drift) { .path = strdup(path), .file = file, .controller = x,
                           .expected = expected, .found = found };
        if (!nd[*n].path)
                return -ENOMEM;
        (*n)++;
        return 0;
}

int policy_drift(const Hierarchy *h, const DesiredCgroup *want, size_t n_want, Drift **ret, size_t *ret_n) {
        Drift *d = NULL;
        size_t n = 0;
        int r = 0;

        for (size_t i = 0; i < n_want && r >= 0; i++) {
                Cgroup *c;
                if (hierarchy_lookup(h, want[i].path, &c) < 0) {
                        r = drift_add(&d, &n, want[i].path, NULL, _CONTROLLER_INVALID, "exists", "missing");
                        continue;
                }
                Masks now = masks_of(c);
                /* an unmanaged controller is no drift: only the managed ones, not all 15 a cgroup */
                const CgMask managed = desired_managed(&want[i]);
                FOREACH_CONTROLLER_IN(x, managed) {
                        CgMask b = CGMASK(x);
                        ControllerState sc = want[i].sc_enable & b ? STATE_ENABLED : want[i].sc_bypass & b ? STATE_BYPASSED :
                                   want[i].sc_disable & b ? STATE_DISABLED : STATE_UNMANAGED;
                        ControllerState ctl = want[i].ctl_enable & b ? STATE_REENABLED :
                                    want[i].ctl_bypass & b ? STATE_BYPASSED : STATE_UNMANAGED;
                        if (sc != STATE_UNMANAGED && sc != sc_of(now, x))
                                r = drift_add(&d, &n, want[i].path, "cgroup.subtree_control", x,
                                              state_words[sc], state_words[sc_of(now, x)]);
                        if (r >= 0 && ctl != STATE_UNMANAGED && ctl != ctl_of(now, x))
                                r = drift_add(&d, &n, want[i].path, "cgroup.controllers", x,
                                              state_words[ctl], state_words[ctl_of(now, x)]);
                        if (r < 0)
                                break;
                }
        }
        if (r < 0) {
                drift_free_array(d, n);
                return r;
        }
        *ret = d;
        *ret_n = n;
        return 0;
}
