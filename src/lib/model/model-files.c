/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The interface files of a cgroup directory: which exist (kernel:
 * css_populate_dir(), css_clear_dir(), css_visible(), cgroup_addrm_files()),
 * which take writes, what reads print, and the write dispatch.
 */
#include <stdio.h>

#include "cgbypass/cftype.h"
#include "cgbypass/parse.h"
#include "cgbypass/strbuf.h"
#include "model-internal.h"

/* kernel: cgroup_kf_ops.atomic_write_len */
#define KERNFS_WRITE_MAX 4096

/* kernel: css_visible() for a controller's css on @c; false if @c has no such css */
static bool css_visible(const Hierarchy *h, const Cgroup *c, Controller ctrl) {
        CgMask bit = CGMASK(ctrl);

        if (cg_control(h, c, false) & bit)
                return true;
        if (!(cg_ss_mask(h, c, false) & bit))
                return false;
        return h->implicit_mask & bit;
}

static bool cftype_applies(const Hierarchy *h, const CfType *t, const Cgroup *c) {
        if ((t->flags & CFT_DEBUG) && !(h->builtin & CGMASK(CONTROLLER_DEBUG)))
                return false;
        if ((t->flags & CFT_NOT_ON_ROOT) && !c->parent)
                return false;
        if ((t->flags & CFT_ONLY_ON_ROOT) && c->parent)
                return false;
        return true;
}

static const CfType *file_find(const Hierarchy *h, const Cgroup *c, const char *file) {
        for (const CfType *t = cftype_lookup(file); t; t = cftype_lookup_next(t)) {
                if (!cftype_applies(h, t, c))
                        continue;
                if (t->controller < 0)
                        return t;
                if ((h->builtin & CGMASK(t->controller)) && css_visible(h, c, t->controller))
                        return t;
        }
        return NULL;
}

bool cg_name_is_knob(const char *name) {
        if (!strchr(name, '.'))
                return false;   /* every interface file name has one */
        return cftype_lookup(name);
}

CgMask cg_visible_mask(const Hierarchy *h, const Cgroup *c) {
        return cg_control(h, c, false) | (cg_ss_mask(h, c, false) & h->implicit_mask);
}

bool cg_files_collide(const Hierarchy *h, const Cgroup *c, Controller ctrl) {
        for (const Cgroup *k = c->first_child; k; k = k->next_sibling) {
                if (!cg_name_is_knob(k->name))
                        continue;
                for (const CfType *t = cftype_lookup(k->name); t; t = cftype_lookup_next(t))
                        if (t->controller == (int) ctrl && cftype_applies(h, t, c))
                                return true;
        }
        return false;
}

bool cgroup_has_file(const Hierarchy *h, const Cgroup *c, const char *file) {
        return file_find(h, c, file);
}

static bool found_writable(const Hierarchy *h, const CfType *t) {
        if (!t)
                return false;
        /* patch 004 gives cgroup.controllers a write handler */
        if (streq(t->name, "cgroup.controllers"))
                return h->rules == RULES_BYPASS;
        return t->flags & CFT_WRITABLE;
}

bool cgroup_file_writable(const Hierarchy *h, const Cgroup *c, const char *file) {
        return found_writable(h, file_find(h, c, file));
}

int cgroup_list_file_names(const Hierarchy *h, const Cgroup *c, const char ***ret) {
        size_t n = 0, cap = 0;
        _cleanup_free_ const char **l = NULL;

        /* in name order already: two renders of the cgroup's directory per sim write list it */
        for (const CfType *const *tp = cftype_by_name(), *t; (t = *tp); tp++) {
                if (!cftype_applies(h, t, c))
                        continue;
                if (t->controller >= 0 &&
                    (!(h->builtin & CGMASK(t->controller)) || !css_visible(h, c, t->controller)))
                        continue;
                if (n + 2 > cap) {
                        cap = cap ? cap * 2 : 32;
                        const char **nl = realloc(l, cap * sizeof(char *));
                        if (!nl)
                                return -ENOMEM;
                        l = nl;
                }
                l[n] = t->name;
                l[++n] = NULL;
        }
        if (!l) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int cgroup_list_files(const Hierarchy *h, const Cgroup *c, char ***ret) {
        _cleanup_free_ const char **names = NULL;
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;
        int r;

        r = cgroup_list_file_names(h, c, &names);
        if (r < 0)
                return r;
        while (names[n])
                n++;
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!(l[i] = strdup(names[i])))
                        return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

/* kernel: cgroup_print_ss_mask() with the series' '#' for bypassed controllers */
static void print_ss_mask(StrBuf *b, CgMask ss_mask, CgMask bypass_mask) {
        bool printed = false;

        FOREACH_CONTROLLER_IN(c, ss_mask | bypass_mask) {
                if (printed)
                        strbuf_putc(b, ' ');
                if (!(ss_mask & CGMASK(c)))
                        strbuf_putc(b, '#');
                strbuf_append(b, controller_to_string(c));
                printed = true;
        }
        if (printed)
                strbuf_putc(b, '\n');
}

/* kernel/cgroup/debug.c: cgroup_masks_read_one() */
static void print_debug_mask(StrBuf *b, const char *name, CgMask mask) {
        bool first = true;

        size_t n = strlen(name);

        /* "%-17s: " without printf: a sim renders this file twice per write */
        strbuf_append_n(b, name, n);
        if (n < 17)
                strbuf_fill(b, ' ', 17 - n);
        strbuf_append_n(b, ": ", 2);
        FOREACH_CONTROLLER_IN(c, mask) {
                if (!first)
                        strbuf_append(b, ", ");
                strbuf_append(b, controller_to_string(c));
                first = false;
        }
        strbuf_putc(b, '\n');
}

static void print_limit(StrBuf *b, int v) {
        if (v == INT_MAX)
                strbuf_append(b, "max\n");
        else
                strbuf_printf(b, "%d\n", v);
}

/* cgroup_read() of the file @t that file_find() found (NULL: none) */
static int read_found(const Hierarchy *h, const Cgroup *c, const CfType *t, char **ret) {
        StrBuf b = STRBUF_INIT;

        if (!t)
                return -ENOENT;
        const char *file = t->name;
        /* kernel: cgroup_seqfile_show() without a show handler */
        if (t->flags & CFT_NO_READ)
                return -EINVAL;
        /* the controllers' files (all but debug.masks) have no show handler here: no chain of names for them */
        if (!startswith(file, "cgroup.") && !streq(file, "debug.masks"))
                return -ENOSYS;

        if (streq(file, "cgroup.controllers"))
                print_ss_mask(&b, cg_control(h, c, false), cg_bypass_mask(h, c));
        else if (streq(file, "cgroup.subtree_control"))
                print_ss_mask(&b, c->subtree_control, c->subtree_bypass);
        else if (streq(file, "cgroup.type"))
                strbuf_printf(&b, "%s\n", cgroup_type_to_string(cgroup_get_type(h, c)));
        else if (streq(file, "cgroup.events"))
                /* the freezer is not modeled: nothing is ever frozen */
                strbuf_printf(&b, "populated %d\nfrozen 0\n", cg_is_populated(c));
        else if (streq(file, "cgroup.procs") || streq(file, "cgroup.threads")) {
                _cleanup_free_ ProcId *ids = NULL;
                size_t n;
                int r = cgroup_get_procs(h, c, streq(file, "cgroup.procs"), &ids, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++)
                        strbuf_printf(&b, "%u\n", ids[i]);
        } else if (streq(file, "cgroup.max.depth"))
                print_limit(&b, c->max_depth);
        else if (streq(file, "cgroup.max.descendants"))
                print_limit(&b, c->max_descendants);
        else if (streq(file, "debug.masks")) {
                print_debug_mask(&b, "subtree_control", c->subtree_control);
                print_debug_mask(&b, "subtree_ss_mask", c->subtree_ss_mask);
                if (h->rules == RULES_BYPASS) {
                        print_debug_mask(&b, "subtree_bypass", c->subtree_bypass);
                        print_debug_mask(&b, "enable_ss_mask", c->enable_ss_mask);
                }
        } else
                return -ENOSYS;

        return strbuf_steal(&b, ret);
}

int cgroup_read(const Hierarchy *h, const Cgroup *c, const char *file, char **ret) {
        return read_found(h, c, file_find(h, c, file), ret);
}

int cgroup_read_file(const Hierarchy *h, const Cgroup *c, const char *file, bool *ret_writable, char **ret) {
        const CfType *t = file_find(h, c, file);

        *ret_writable = found_writable(h, t);
        return read_found(h, c, t, ret);
}

static int write_file(Hierarchy *h, Cgroup *c, const CfType *t, const char *buf, Reason *reterr_reason) {
        if (!t) {
                reason_set(reterr_reason, REASON_NO_SUCH_FILE);
                return -ENOENT;
        }
        /* kernfs_fop_write_iter(): cgroup files take at most atomic_write_len = PAGE_SIZE at once */
        if (strlen(buf) > KERNFS_WRITE_MAX) {
                reason_set(reterr_reason, REASON_RANGE);
                return -E2BIG;
        }
        /* kernel: cgroup_file_write() returns before any handler runs */
        if (buf[0] == '\0')
                return 0;
        /*
         * cgroupfs has no open-time mode check (no KERNFS_ROOT_EXTRA_OPEN_PERM_CHECK),
         * so root opens a 0444 file for writing and cgroup_file_write() finds no handler.
         */
        if (!cgroup_file_writable(h, c, t->name)) {
                reason_set(reterr_reason, REASON_READ_ONLY);
                return -EINVAL;
        }
        /* kernel: cgroup_file_write() calls the cftype's handler */
        if (t->write)
                return t->write(h, c, buf, reterr_reason);
        reason_set(reterr_reason, REASON_NOT_MODELED);
        return -ENOSYS;
}

int cgroup_write(Hierarchy *h, Cgroup *c, const char *file, const char *buf, Reason *reterr_reason) {
        const CfType *t = file_find(h, c, file);
        int r = write_file(h, c, t, buf, reterr_reason);

        /* a css that went took its values with it (model-values.c); cgroup.type reaches the siblings */
        if (r >= 0 && t && (t->flags & CFT_MOVES_CSS))
                hierarchy_values_prune(h, c->parent ?: c);
        return r;
}
