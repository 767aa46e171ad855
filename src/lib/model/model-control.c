/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Controller masks and the writes that change them: cgroup.subtree_control
 * ('+', '-', and the series' '#') and the series' writable cgroup.controllers,
 * and the kernel's transaction every change of masks or thread mode goes
 * through: save, change, apply (propagate, vet, populate), finalize/restore.
 * The formulas are the series' (patches 003, 004); under stock rules
 * subtree_bypass and enable_ss_mask stay 0 and they reduce to stock 6.1.
 */
#include "cgbypass/parse.h"
#include "model-internal.h"

/* the two functions below for a child: what its parent gives it (@from_parent) and what it re-enabled */
static CgMask child_mask(const Hierarchy *h, const Cgroup *c, CgMask from_parent, bool show_bypass) {
        CgMask m = from_parent | c->enable_ss_mask;

        if (show_bypass)
                m |= c->parent->subtree_bypass;
        /* threaded cgroups can only have threaded controllers */
        if (cg_is_threaded(c))
                m &= h->threaded_mask;
        return m;
}

/* kernel: cgroup_control(): controllers visibly enabled on @c */
CgMask cg_control(const Hierarchy *h, const Cgroup *c, bool show_bypass) {
        if (c->parent)
                return child_mask(h, c, c->parent->subtree_control, show_bypass);
        return h->builtin & ~(h->inhibit_mask | h->implicit_mask);
}

/* kernel: cgroup_ss_mask(): controllers with a css on @c */
CgMask cg_ss_mask(const Hierarchy *h, const Cgroup *c, bool show_bypass) {
        if (c->parent)
                return child_mask(h, c, c->parent->subtree_ss_mask, show_bypass);
        return h->builtin;
}

/*
 * Decision (d): the bypass part of cgroup.controllers is filtered like the
 * rest, so a threaded cgroup never shows or re-enables a domain controller.
 */
CgMask cg_bypass_mask(const Hierarchy *h, const Cgroup *c) {
        if (!c->parent)
                return 0;
        CgMask m = c->parent->subtree_bypass;
        if (cg_is_threaded(c))
                m &= h->threaded_mask;
        return m;
}

/* kernel: cgroup_calc_subtree_ss_mask(): close over depends_on, add implicit controllers */
static CgMask calc_subtree_ss_mask(const Hierarchy *h, CgMask subtree_control, CgMask this_ss_mask) {
        CgMask cur = subtree_control | h->implicit_mask;

        for (;;) {
                CgMask next = cur;

                /* the set bits only: this runs for every cgroup a control write propagates to */
                for (CgMask left = cur; left; left &= left - 1)
                        next |= controller_depends_on((Controller) __builtin_ctz(left), h->builtin);
                next &= this_ss_mask;
                if (next == cur)
                        return cur;
                cur = next;
        }
}

void cg_propagate_control(const Hierarchy *h, Cgroup *c) {
        for (Cgroup *d = c; d; d = cgroup_next_descendant_pre(d, c)) {
                CgMask m = cg_control(h, d, true);

                d->subtree_control &= m;
                d->subtree_bypass &= m;
                d->subtree_ss_mask = calc_subtree_ss_mask(h, d->subtree_control, cg_ss_mask(h, d, true));
        }
}

/*
 * Whether a css that @d comes to show could find a child named like one of its files (populate_dirs()):
 * only when @d has children and some child in the hierarchy is named like an interface file. Most
 * control writes save a subtree without either, and the visible masks cost two mask walks a cgroup.
 */
static bool may_collide(const Hierarchy *h, const Cgroup *d) {
        return h->n_knob_named > 0 && d->first_child;
}

int cg_save_control(const Hierarchy *h, Cgroup *c, ControlSave *ret) {
        _cleanup_free_ SavedControl *saved = NULL;
        size_t n = 0, cap = 0;

        for (Cgroup *d = c; d; d = cgroup_next_descendant_pre(d, c)) {
                if (n == cap) {
                        /* a leaf's write saves one: a small request, which spares malloc_consolidate() */
                        cap = cap ? cap * 2 : 8;
                        SavedControl *ns = realloc(saved, cap * sizeof(SavedControl));
                        if (!ns)
                                return -ENOMEM;
                        saved = ns;
                }
                saved[n++] = (SavedControl) {
                        .cgroup = d,
                        .subtree_control = d->subtree_control,
                        .subtree_ss_mask = d->subtree_ss_mask,
                        .subtree_bypass = d->subtree_bypass,
                        .enable_ss_mask = d->enable_ss_mask,
                        .dom_cgrp = d->dom_cgrp,
                        .visible = may_collide(h, d) ? cg_visible_mask(h, d) : 0,
                        .css = cg_ss_mask(h, d, false),
                };
        }
        *ret = (ControlSave) { .top = c, .saved = TAKE_PTR(saved), .n = n };
        return 0;
}

/* kernel: cgroup_restore_control() (the port also restores dom_cgrp and the series' masks) */
static void cg_restore_control(ControlSave *s) {
        for (size_t i = 0; i < s->n; i++) {
                Cgroup *d = s->saved[i].cgroup;

                d->subtree_control = s->saved[i].subtree_control;
                d->subtree_ss_mask = s->saved[i].subtree_ss_mask;
                d->subtree_bypass = s->saved[i].subtree_bypass;
                d->enable_ss_mask = s->saved[i].enable_ss_mask;
                d->dom_cgrp = s->saved[i].dom_cgrp;
        }
}

/*
 * kernel/patches/0012 (decision (k)): saved[i] gains a css while a
 * descendant keeps one of its own, linked to a css above saved[i].
 */
static bool css_gained_above_descendant(const Hierarchy *h, const ControlSave *s, size_t i) {
        const Cgroup *d = s->saved[i].cgroup;
        CgMask gained = cg_ss_mask(h, d, false) & ~s->saved[i].css;

        for (size_t j = i + 1; gained && j < s->n && s->saved[j].cgroup->level > d->level; j++)
                if (s->saved[j].css & cg_ss_mask(h, s->saved[j].cgroup, false) & gained)
                        return true;
        return false;
}

/*
 * kernel/patches/0013 (decision (k)): saved[i] loses a css while a css
 * linked to it (the next css down) stays.
 */
static bool css_lost_under_linked_css(const Hierarchy *h, const ControlSave *s, size_t i) {
        const Cgroup *d = s->saved[i].cgroup;
        CgMask lost = d->parent ? s->saved[i].css & ~cg_ss_mask(h, d, false) : 0;

        /* most cgroups a write saves lose nothing: no loop over the controllers for them */
        if (!lost)
                return false;
        FOREACH_CONTROLLER_IN(x, lost) {
                unsigned shield = UINT_MAX; /* below a css of its own, csses link to that one */

                for (size_t j = i + 1; j < s->n && s->saved[j].cgroup->level > d->level; j++) {
                        const Cgroup *e = s->saved[j].cgroup;

                        if (e->level > shield)
                                continue;
                        shield = UINT_MAX;
                        if (!(s->saved[j].css & CGMASK(x)))
                                continue;
                        if (cg_ss_mask(h, e, false) & CGMASK(x))
                                return true;
                        shield = e->level;
                }
        }
        return false;
}

/* kernel: the vet kernel/patches/0012 and 0013 put first in cgroup_apply_control_enable() */
static int vet_css_links(const Hierarchy *h, const ControlSave *s) {
        for (size_t i = 0; i < s->n; i++)
                if (css_gained_above_descendant(h, s, i) || css_lost_under_linked_css(h, s, i))
                        return -EBUSY;
        return 0;
}

/*
 * kernel: css_populate_dir() in cgroup_apply_control_enable() adds the files
 * of every css that became visible; kernfs refuses a name a child directory
 * has (decision (h)).
 */
static int populate_dirs(const Hierarchy *h, const ControlSave *s) {
        for (size_t i = 0; i < s->n; i++) {
                const Cgroup *d = s->saved[i].cgroup;

                if (!may_collide(h, d))
                        continue;       /* saved[i].visible was not computed */
                CgMask shown = cg_visible_mask(h, d) & ~s->saved[i].visible;
                if (!shown)
                        continue;
                FOREACH_CONTROLLER_IN(x, shown)
                        if (cg_files_collide(h, d, x))
                                return -EEXIST;
        }
        return 0;
}

int cg_apply_control(Hierarchy *h, ControlSave *s) {
        int r;

        cg_propagate_control(h, s->top);

        /* kernel: cgroup_apply_control_enable() */
        r = vet_css_links(h, s);
        if (r < 0)
                return r;
        /* no cgroup_update_dfl_csses(): the model's processes follow the masks, nothing migrates */
        return populate_dirs(h, s);
}

void cg_finalize_control(ControlSave *s, int ret) {
        /*
         * The kernel propagates again after a restore; the saved masks were
         * propagated already. The model has no css to kill
         * (cgroup_apply_control_disable()): csses derive from the masks.
         */
        if (ret < 0)
                cg_restore_control(s);
        free(s->saved);
        *s = (ControlSave) {};
}

/* the end of both control write handlers, as in cgroup_subtree_control_write(): apply, then finalize (restore on
 * failure); decision (c): the apply error is the write's result */
static int cg_apply_and_finalize(Hierarchy *h, ControlSave *save, Reason *reterr_reason) {
        int r = cg_apply_control(h, save);

        cg_finalize_control(save, r);
        if (r == -EEXIST)
                reason_set(reterr_reason, REASON_EXISTS);
        else if (r == -EBUSY)
                reason_set(reterr_reason, REASON_CHILD_USES_IT);
        return r;
}

/*
 * kernel: the token loop of cgroup_subtree_control_write(). strstrip(), then
 * split at single spaces; every token is a prefix character and the name of
 * a controller cgroup2 knows (inhibited, i.e. v1-only, names are unknown).
 * A known name with a prefix outside @prefixes is -EINVAL, like an unknown
 * name. For each controller the last token wins.
 */
int cg_parse_control_tokens(const Hierarchy *h, char *buf, const char *prefixes,
                            CgMask *ret_plus, CgMask *ret_minus, CgMask *ret_hash) {
        CgMask plus = 0, minus = 0, hash = 0;
        char *tok;

        buf = kstrstrip(buf);
        while ((tok = strsep(&buf, " "))) {
                if (tok[0] == '\0')
                        continue;

                Controller c = controller_from_string(tok + 1);
                if (c < 0 || !(h->builtin & CGMASK(c)) || (h->inhibit_mask & CGMASK(c)))
                        return -EINVAL;
                if (!strchr(prefixes, tok[0]))
                        return -EINVAL;

                CgMask bit = CGMASK(c);
                plus &= ~bit;
                minus &= ~bit;
                hash &= ~bit;
                if (tok[0] == '+')
                        plus |= bit;
                else if (tok[0] == '-')
                        minus |= bit;
                else
                        hash |= bit;
        }
        *ret_plus = plus;
        *ret_minus = minus;
        *ret_hash = hash;
        return 0;
}

/* kernel: cgroup_vet_subtree_control_enable() */
static int vet_subtree_control_enable(const Hierarchy *h, const Cgroup *c, CgMask enable, Reason *reterr) {
        CgMask domain_enable = enable & ~h->threaded_mask;

        if (!enable)
                return 0;

        /* can @c host any resources? */
        if (!cg_is_valid_domain(h, c->dom_cgrp)) {
                reason_set(reterr, REASON_INVALID_DOMAIN);
                return -EOPNOTSUPP;
        }

        if (cg_is_mixable(c))
                return 0;

        if (domain_enable) {
                if (cg_is_thread_root(h, c) || cg_is_threaded(c)) {
                        reason_set(reterr, REASON_THREAD_SUBTREE);
                        return -EOPNOTSUPP;
                }
        } else if (cg_can_be_thread_root(h, c) || cg_is_threaded(c))
                /* threaded controllers handle internal competition */
                return 0;

        if (cg_has_tasks(c)) {
                reason_set(reterr, REASON_HAS_PROCESSES);
                return -EBUSY;
        }
        return 0;
}

static CgMask children_subtree_mask(const Cgroup *c, bool with_enable) {
        CgMask m = 0;

        for (const Cgroup *child = c->first_child; child; child = child->next_sibling) {
                m |= cg_subtree_mask(child);
                if (with_enable)
                        m |= child->enable_ss_mask;
        }
        return m;
}

/* Stock 6.1: per controller in ssid order, the first failing check decides. */
static int subtree_control_check_stock(const Hierarchy *h, const Cgroup *c,
                                       CgMask *enable, CgMask *disable, Reason *reterr) {
        FOREACH_CONTROLLER(ss) {
                CgMask bit = CGMASK(ss);

                if (*enable & bit) {
                        if (c->subtree_control & bit) {
                                *enable &= ~bit;
                                continue;
                        }
                        if (!(cg_control(h, c, false) & bit)) {
                                reason_set(reterr, REASON_NOT_AVAILABLE);
                                return -ENOENT;
                        }
                } else if (*disable & bit) {
                        if (!(c->subtree_control & bit)) {
                                *disable &= ~bit;
                                continue;
                        }
                        for (const Cgroup *child = c->first_child; child; child = child->next_sibling)
                                if (child->subtree_control & bit) {
                                        reason_set(reterr, REASON_CHILD_USES_IT);
                                        return -EBUSY;
                                }
                }
        }
        return 0;
}

int cgroup_write_subtree_control(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason) {
        _cleanup_free_ char *copy = strdup(buf);
        CgMask enable, disable, bypass;
        ControlSave save;
        int r;

        if (!copy)
                return -ENOMEM;

        r = cg_parse_control_tokens(h, copy, h->rules == RULES_BYPASS ? "+-#" : "+-",
                                    &enable, &disable, &bypass);
        if (r < 0) {
                reason_set(reterr_reason, REASON_PARSE);
                return r;
        }

        if (h->rules == RULES_STOCK) {
                r = subtree_control_check_stock(h, c, &enable, &disable, reterr_reason);
                if (r < 0)
                        return r;
                if (!enable && !disable)
                        return 0;
        } else {
                /* patch 003: every named controller must be available, '-' included */
                if (~cg_control(h, c, true) & (enable | disable | bypass)) {
                        reason_set(reterr_reason, REASON_NOT_AVAILABLE);
                        return -ENOENT;
                }

                enable &= ~c->subtree_control;
                bypass &= ~c->subtree_bypass;
                disable &= cg_subtree_mask(c);
                if (!(enable | bypass | disable))
                        return 0;

                /* no change of state while a child enables, bypasses or re-enabled it */
                CgMask child_enable = children_subtree_mask(c, true);
                if ((enable | bypass | disable) & child_enable) {
                        reason_set(reterr_reason, REASON_CHILD_USES_IT);
                        return -EBUSY;
                }

                /*
                 * Decision (j): nor may a controller that only depends_on kept in
                 * subtree_ss_mask go, while a child uses it (kernel/patches/0011).
                 */
                CgMask new_ss = calc_subtree_ss_mask(h, (c->subtree_control | enable) & ~(bypass | disable),
                                                     cg_ss_mask(h, c, true));
                if (c->subtree_ss_mask & ~new_ss & child_enable) {
                        reason_set(reterr_reason, REASON_CHILD_USES_IT);
                        return -EBUSY;
                }
        }

        /* decision (a): bypassing is vetted like enabling */
        r = vet_subtree_control_enable(h, c, enable | bypass, reterr_reason);
        if (r < 0)
                return r;

        r = cg_save_control(h, c, &save);
        if (r < 0)
                return r;
        c->subtree_control |= enable;
        c->subtree_control &= ~(bypass | disable);
        c->subtree_bypass |= bypass;
        c->subtree_bypass &= ~(enable | disable);
        return cg_apply_and_finalize(h, &save, reterr_reason);
}

int cgroup_write_controllers(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason) {
        _cleanup_free_ char *copy = NULL;
        CgMask enable, unused, bypass;
        ControlSave save;
        int r;

        /* stock: cgroup.controllers has no write handler */
        if (h->rules != RULES_BYPASS) {
                reason_set(reterr_reason, REASON_READ_ONLY);
                return -EINVAL;
        }

        copy = strdup(buf);
        if (!copy)
                return -ENOMEM;
        r = cg_parse_control_tokens(h, copy, "+#", &enable, &unused, &bypass);
        if (r < 0) {
                reason_set(reterr_reason, REASON_PARSE);
                return r;
        }

        if (!c->parent) {
                reason_set(reterr_reason, REASON_ROOT);
                return -EINVAL;
        }

        /* only controllers the parent bypasses may be named (with decision (d)) */
        if (~cg_bypass_mask(h, c) & (enable | bypass)) {
                reason_set(reterr_reason, REASON_NOT_BYPASSED_BY_PARENT);
                return -ENOENT;
        }

        enable &= ~c->enable_ss_mask;
        bypass &= c->enable_ss_mask;
        if (!(enable | bypass))
                return 0;

        if (cg_subtree_mask(c) & (enable | bypass)) {
                reason_set(reterr_reason, REASON_OWN_SUBTREE_USES_IT);
                return -EBUSY;
        }

        r = cg_save_control(h, c, &save);
        if (r < 0)
                return r;
        c->enable_ss_mask |= enable;
        c->enable_ss_mask &= ~bypass;
        return cg_apply_and_finalize(h, &save, reterr_reason);
}

/* kernel: cgroup_max_descendants_write(), cgroup_max_depth_write() */
static int write_limit(int *field, const char *buf, Reason *reterr) {
        _cleanup_free_ char *copy = strdup(buf);
        int v, r;

        if (!copy)
                return -ENOMEM;
        char *s = kstrstrip(copy);
        if (streq(s, "max"))
                v = INT_MAX;
        else {
                r = kstrtoint(s, 0, &v);
                if (r < 0) {
                        reason_set(reterr, r == -ERANGE ? REASON_RANGE : REASON_PARSE);
                        return r;
                }
        }
        if (v < 0) {
                reason_set(reterr, REASON_RANGE);
                return -ERANGE;
        }
        *field = v;
        return 0;
}

int cg_write_max_descendants(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason) {
        return write_limit(&c->max_descendants, buf, reterr_reason);
}

int cg_write_max_depth(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason) {
        return write_limit(&c->max_depth, buf, reterr_reason);
}

CgMask cgroup_get_controllers(const Hierarchy *h, const Cgroup *c) {
        return cg_control(h, c, false);
}

CgMask cgroup_get_bypassed(const Hierarchy *h, const Cgroup *c) {
        return cg_bypass_mask(h, c) & ~cg_control(h, c, false);
}

CgMask cgroup_get_css_mask(const Hierarchy *h, const Cgroup *c) {
        return cg_ss_mask(h, c, false);
}

Cgroup *cgroup_effective_css_owner(const Hierarchy *h, const Cgroup *c, Controller ctrl) {
        for (; c; c = c->parent)
                if (cg_ss_mask(h, c, false) & CGMASK(ctrl))
                        return (Cgroup *) c;
        return NULL;
}
