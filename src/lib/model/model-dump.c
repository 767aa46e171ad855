/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The whole state as text, and the invariants that every reachable state
 * satisfies. Tests compare dumps to prove that failed operations change
 * nothing, and run hierarchy_check() after every step of random sequences.
 */
#include <stdarg.h>

#include "cgbypass/strbuf.h"
#include "model-internal.h"

static void dump_mask(StrBuf *b, const char *key, CgMask m) {
        _cleanup_free_ char *s = controller_mask_to_string(m, ",");
        strbuf_printf(b, " %s=%s", key, s ? s : "?");
        if (!s)
                b->oom = true;
}

int hierarchy_dump(const Hierarchy *h, char **ret) {
        StrBuf b = STRBUF_INIT;

        strbuf_printf(&b, "rules=%s cgroups=%zu procs=%zu alive=%zu knob_named=%zu\n",
                      rules_to_string(h->rules), h->count, h->n_procs, h->n_alive, h->n_knob_named);
        for (const Cgroup *c = h->root; c; c = cgroup_next_descendant_pre(c, h->root)) {
                _cleanup_free_ char *path = NULL, *dom = NULL;

                if (cgroup_path(c, &path) < 0 || cgroup_path(c->dom_cgrp, &dom) < 0) {
                        strbuf_done(&b);
                        return -ENOMEM;
                }
                strbuf_append(&b, path);
                dump_mask(&b, "control", c->subtree_control);
                dump_mask(&b, "ss", c->subtree_ss_mask);
                dump_mask(&b, "bypass", c->subtree_bypass);
                dump_mask(&b, "enable", c->enable_ss_mask);
                strbuf_printf(&b, " dom=%s threaded_children=%u procs=%u pop_domain=%u pop_threaded=%u"
                              " descendants=%u max_depth=%d max_descendants=%d\n",
                              dom, c->nr_threaded_children, c->nr_procs,
                              c->nr_populated_domain_children, c->nr_populated_threaded_children,
                              c->nr_descendants, c->max_depth, c->max_descendants);
                for (size_t i = 0; i < c->n_values; i++) {
                        _cleanup_free_ char *q = NULL;
                        if (cgroup_value_escape(c->values[i].shown, &q) < 0) {
                                strbuf_done(&b);
                                return -ENOMEM;
                        }
                        strbuf_printf(&b, "value %s %s %s\n", path, c->values[i].file, q);
                }
        }
        for (size_t i = 0; i < h->n_procs; i++) {
                _cleanup_free_ char *path = NULL;

                if (!h->procs[i].cgroup)
                        continue;
                if (cgroup_path(h->procs[i].cgroup, &path) < 0) {
                        strbuf_done(&b);
                        return -ENOMEM;
                }
                strbuf_printf(&b, "proc %u %s\n", h->procs[i].id, path);
        }
        return strbuf_steal(&b, ret);
}

static int violation(char **reterr_msg, const Cgroup *c, const char *fmt, ...) _printf_(3, 4);
static int violation(char **reterr_msg, const Cgroup *c, const char *fmt, ...) {
        _cleanup_free_ char *path = NULL, *what = NULL;
        va_list ap;

        if (!reterr_msg)
                return -EUCLEAN;
        (void) cgroup_path(c, &path);
        va_start(ap, fmt);
        if (vasprintf(&what, fmt, ap) < 0)
                what = NULL;
        va_end(ap);
        if (asprintf(reterr_msg, "%s: %s", path ? path : "?", what ? what : "?") < 0)
                *reterr_msg = NULL;
        return -EUCLEAN;
}

int hierarchy_check(const Hierarchy *h, char **reterr_msg) {
        size_t count = 0;

        for (const Cgroup *c = h->root; c; c = cgroup_next_descendant_pre(c, h->root)) {
                unsigned procs = 0, pop_dom = 0, pop_thr = 0, thr = 0, desc = 0;
                /* every load checks every cgroup: its css mask (with bypass) once, not once a test */
                const CgMask ss = cg_ss_mask(h, c, true);
                count++;

                if (c->subtree_control & c->subtree_bypass)
                        return violation(reterr_msg, c, "a controller both enabled and bypassed");
                if (h->rules == RULES_STOCK && (c->subtree_bypass || c->enable_ss_mask))
                        return violation(reterr_msg, c, "bypass state under stock rules");
                if (cg_subtree_mask(c) & ~cg_control(h, c, true))
                        return violation(reterr_msg, c, "subtree_control/bypass names an unavailable controller");
                if (c->parent && (c->enable_ss_mask & ~c->parent->subtree_bypass))
                        return violation(reterr_msg, c, "re-enabled a controller the parent does not bypass");
                if (!c->parent && c->enable_ss_mask)
                        return violation(reterr_msg, c, "the root re-enabled a controller");
                if (c->subtree_ss_mask & ~ss)
                        return violation(reterr_msg, c, "subtree_ss_mask beyond what the cgroup has");
                if ((c->subtree_control & ss) & ~c->subtree_ss_mask)
                        return violation(reterr_msg, c, "subtree_ss_mask misses an enabled controller");
                /* the root is unpropagated until its first change (hierarchy_settle_root()) */
                bool cold_root = !c->parent && c->subtree_control == 0 && c->subtree_ss_mask == 0;
                if (!cold_root && ((h->implicit_mask & ss) & ~c->subtree_ss_mask))
                        return violation(reterr_msg, c, "subtree_ss_mask misses an implicit controller");
                FOREACH_CONTROLLER_IN(s, c->subtree_ss_mask)
                        if (controller_depends_on(s, h->builtin) & ss & ~c->subtree_ss_mask)
                                return violation(reterr_msg, c, "subtree_ss_mask not closed over depends_on");

                if (c->parent) {
                        /*
                         * A threaded cgroup's domain is a non-threaded proper ancestor: its
                         * parent's when the parent is threaded. Not always the parent's
                         * domain otherwise: cgroup_enable_threaded() moves only threaded
                         * descendants, so a domain between them keeps its own.
                         */
                        if (cg_is_threaded(c)) {
                                bool ancestor = false;
                                for (const Cgroup *a = c->parent; a; a = a->parent)
                                        ancestor = ancestor || a == c->dom_cgrp;
                                if (!ancestor || cg_is_threaded(c->dom_cgrp) ||
                                    (cg_is_threaded(c->parent) && c->dom_cgrp != c->parent->dom_cgrp))
                                        return violation(reterr_msg, c, "threaded, but its domain is wrong");
                        }
                        if (cg_is_threaded(c) && (cg_subtree_mask(c) & ~h->threaded_mask))
                                return violation(reterr_msg, c, "threaded with a domain controller in its subtree");
                        /* a css's parent is the nearest ancestor with a css of that controller */
                        const CgMask css = cg_ss_mask(h, c, false);     /* the macro evaluates its mask per controller */
                        FOREACH_CONTROLLER_IN(s, css) {
                                const Cgroup *owner = cgroup_effective_css_owner(h, c->parent, s);
                                if (!owner || !(cg_ss_mask(h, owner, false) & CGMASK(s)))
                                        return violation(reterr_msg, c, "css of %s without a parent css",
                                                         controller_to_string(s));
                        }
                } else if (cg_is_threaded(c))
                        return violation(reterr_msg, c, "the root is threaded");

                for (size_t i = 0; i < h->n_procs; i++)
                        if (h->procs[i].cgroup == c)
                                procs++;
                for (const Cgroup *k = c->first_child; k; k = k->next_sibling) {
                        if (cg_is_threaded(k))
                                thr++;
                        if (cg_is_populated(k)) {
                                if (cg_is_threaded(k))
                                        pop_thr++;
                                else
                                        pop_dom++;
                        }
                }
                for (const Cgroup *d = cgroup_next_descendant_pre(c, c); d; d = cgroup_next_descendant_pre(d, c))
                        desc++;
                if (procs != c->nr_procs || pop_dom != c->nr_populated_domain_children ||
                    pop_thr != c->nr_populated_threaded_children || thr != c->nr_threaded_children ||
                    desc != c->nr_descendants)
                        return violation(reterr_msg, c, "counters differ from a recount");

                /* no internal processes outside thread subtrees and the root */
                if (c->parent && cg_has_tasks(c) && (cg_subtree_mask(c) & ~h->threaded_mask) &&
                    !cg_is_threaded(c))
                        return violation(reterr_msg, c, "processes beside enabled domain controllers");
        }
        if (count != h->count)
                return violation(reterr_msg, h->root, "cgroup count differs from a recount");
        return 0;
}
