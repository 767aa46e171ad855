/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tree: lifetime of the hierarchy and its cgroups, path lookup, mkdir and
 * rmdir (kernel: cgroup_mkdir(), cgroup_create(), cgroup_destroy_locked()).
 */
#include <limits.h>
#include <stdint.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/hash.h"
#include "model-internal.h"

static const char *const rules_table[_RULES_MAX] = {
        [RULES_STOCK] = "stock",
        [RULES_BYPASS] = "bypass",
};

const char *rules_to_string(RuleSet r) {
        if (r < 0 || r >= _RULES_MAX)
                return NULL;
        return rules_table[r];
}

RuleSet rules_from_string(const char *s) {
        for (RuleSet r = 0; r < _RULES_MAX; r++)
                if (streq_ptr(rules_table[r], s))
                        return r;
        return _RULES_INVALID;
}

static const char *const cgroup_type_table[_CGROUP_TYPE_MAX] = {
        [CGROUP_TYPE_DOMAIN] = "domain",
        [CGROUP_TYPE_DOMAIN_THREADED] = "domain threaded",
        [CGROUP_TYPE_DOMAIN_INVALID] = "domain invalid",
        [CGROUP_TYPE_THREADED] = "threaded",
};

const char *cgroup_type_to_string(CgroupType t) {
        if (t < 0 || t >= _CGROUP_TYPE_MAX)
                return NULL;
        return cgroup_type_table[t];
}

/* ---- child index: (parent, name) -> cgroup, so lookups do not scan siblings ---- */

/* the hash of the @len bytes at @name */
static size_t child_hash_n(const Cgroup *parent, const char *name, size_t len, size_t n_buckets) {
        uint64_t x = fnv1a64(name, len);

        x ^= (uint64_t) (uintptr_t) parent * 0x9e3779b97f4a7c15ULL;
        x ^= x >> 29;
        return (size_t) (x & (n_buckets - 1));
}

static size_t child_hash(const Cgroup *parent, const char *name, size_t n_buckets) {
        return child_hash_n(parent, name, strlen(name), n_buckets);
}

/* the child of @parent named by the @len bytes at @name (a path component: no copy to terminate it) */
static Cgroup *child_find_n(const Hierarchy *h, const Cgroup *parent, const char *name, size_t len) {
        for (Cgroup *c = h->buckets[child_hash_n(parent, name, len, h->n_buckets)]; c; c = c->hash_next)
                if (c->parent == parent && strncmp(c->name, name, len) == 0 && c->name[len] == '\0')
                        return c;
        return NULL;
}

static Cgroup *child_find(const Hierarchy *h, const Cgroup *parent, const char *name) {
        return child_find_n(h, parent, name, strlen(name));
}

Cgroup *cg_child_find(const Hierarchy *h, const Cgroup *parent, const char *name) {
        return child_find(h, parent, name);
}

void child_index_insert(Hierarchy *h, Cgroup *c) {
        size_t i = child_hash(c->parent, c->name, h->n_buckets);
        c->hash_next = h->buckets[i];
        h->buckets[i] = c;
}

static void child_index_remove(Hierarchy *h, Cgroup *c) {
        for (Cgroup **p = &h->buckets[child_hash(c->parent, c->name, h->n_buckets)]; *p; p = &(*p)->hash_next)
                if (*p == c) {
                        *p = c->hash_next;
                        return;
                }
}

static int child_index_grow(Hierarchy *h) {
        size_t n = h->n_buckets * 2;
        Cgroup **b = calloc(n, sizeof(Cgroup *));
        if (!b)
                return -ENOMEM;

        for (size_t i = 0; i < h->n_buckets; i++)
                for (Cgroup *c = h->buckets[i], *next; c; c = next) {
                        next = c->hash_next;
                        size_t j = child_hash(c->parent, c->name, n);
                        c->hash_next = b[j];
                        b[j] = c;
                }
        free(h->buckets);
        h->buckets = b;
        h->n_buckets = n;
        return 0;
}

/* ---- lifetime ---- */

Cgroup *cgroup_alloc(const char *name) {
        size_t n = strlen(name);
        Cgroup *c = malloc(sizeof(Cgroup) + n + 1);
        if (!c)
                return NULL;
        *c = (Cgroup) {};
        memcpy(c->name_buf, name, n + 1);
        c->name = c->name_buf;
        c->dom_cgrp = c;
        c->max_depth = INT_MAX;
        c->max_descendants = INT_MAX;
        return c;
}

/* process-wide, so that no two hierarchies, nor one before and after an rmdir, share a value */
static uint64_t next_epoch(void) {
        static uint64_t epoch;
        return __atomic_add_fetch(&epoch, 1, __ATOMIC_RELAXED);
}

static void cgroup_free_one(Cgroup *c) {
        cg_values_free(c);
        free(c);
}

void link_child(Cgroup *parent, Cgroup *c) {
        c->parent = parent;
        c->level = parent->level + 1;
        c->prev_sibling = parent->last_child;
        if (parent->last_child)
                parent->last_child->next_sibling = c;
        else
                parent->first_child = c;
        parent->last_child = c;
}

static void unlink_child(Cgroup *c) {
        Cgroup *parent = c->parent;

        if (c->prev_sibling)
                c->prev_sibling->next_sibling = c->next_sibling;
        else
                parent->first_child = c->next_sibling;
        if (c->next_sibling)
                c->next_sibling->prev_sibling = c->prev_sibling;
        else
                parent->last_child = c->prev_sibling;
        c->prev_sibling = c->next_sibling = NULL;
}

int hierarchy_new(Hierarchy **ret, RuleSet rules, CgMask builtin) {
        if (rules < 0 || rules >= _RULES_MAX || (builtin & ~CGMASK_ALL))
                return -EINVAL;

        Hierarchy *h = calloc(1, sizeof(Hierarchy));
        if (!h)
                return -ENOMEM;
        h->rules = rules;
        h->builtin = builtin;
        h->threaded_mask = controller_threaded_mask(builtin);
        h->implicit_mask = controller_implicit_mask(builtin);
        h->inhibit_mask = controller_inhibit_mask(builtin);
        h->n_buckets = 64;
        h->buckets = calloc(h->n_buckets, sizeof(Cgroup *));
        h->root = cgroup_alloc("");
        if (!h->buckets || !h->root) {
                hierarchy_free(h);
                return -ENOMEM;
        }
        h->count = 1;
        h->epoch = next_epoch();
        /*
         * No propagation yet: cgroup_init() binds the controllers to the root after
         * cgroup_setup_root(), so until the root's first cgroup_apply_control() (its
         * first effective cgroup.subtree_control write) its subtree_ss_mask is empty
         * and children get no implicit csses (no debug.* files).
         */
        *ret = h;
        return 0;
}

Hierarchy *hierarchy_free(Hierarchy *h) {
        if (!h)
                return NULL;
        if (h->root) {
                /* post-order, iteratively: trees can be deep */
                Cgroup *c = h->root;
                while (c) {
                        if (c->first_child) {
                                c = c->first_child;
                                continue;
                        }
                        Cgroup *parent = c->parent;
                        if (parent)
                                parent->first_child = c->next_sibling;
                        cgroup_free_one(c);
                        c = parent;
                }
        }
        free(h->buckets);
        free(h->procs);
        free(h->mkdir_parent_path);
        free(h);
        return NULL;
}

Cgroup *cgroup_next_descendant_pre(const Cgroup *pos, const Cgroup *root) {
        if (pos->first_child)
                return pos->first_child;
        for (; pos != root; pos = pos->parent)
                if (pos->next_sibling)
                        return pos->next_sibling;
        return NULL;
}

/* @c's own state into @copy; links and the child index are the caller's */
int cgroup_copy_state(Cgroup *copy, const Cgroup *c) {
        copy->subtree_control = c->subtree_control;
        copy->subtree_ss_mask = c->subtree_ss_mask;
        copy->subtree_bypass = c->subtree_bypass;
        copy->enable_ss_mask = c->enable_ss_mask;
        copy->dom_cgrp = c->dom_cgrp->clone;    /* self or an ancestor: already copied */
        copy->nr_threaded_children = c->nr_threaded_children;
        copy->nr_procs = c->nr_procs;
        copy->nr_populated_domain_children = c->nr_populated_domain_children;
        copy->nr_populated_threaded_children = c->nr_populated_threaded_children;
        copy->nr_descendants = c->nr_descendants;
        copy->max_descendants = c->max_descendants;
        copy->max_depth = c->max_depth;
        copy->limits_unread = c->limits_unread;
        return cg_values_copy(copy, c);
}

/* a copy of @c in @n, under its parent's copy (made before it) */
int cgroup_clone_under(Hierarchy *n, Cgroup *c) {
        Cgroup *copy = cgroup_alloc(c->name);

        if (!copy)
                return -ENOMEM;
        link_child(c->parent->clone, copy);
        child_index_insert(n, copy);
        c->clone = copy;
        n->count++;
        if (cg_name_is_knob(copy->name))
                n->n_knob_named++;
        return cgroup_copy_state(copy, c);
}

int hierarchy_clone(const Hierarchy *h, Hierarchy **ret) {
        _cleanup_(hierarchy_freep) Hierarchy *n = NULL;
        int r;

        r = hierarchy_new(&n, h->rules, h->builtin);
        if (r < 0)
                return r;

        free(n->buckets);
        n->n_buckets = h->n_buckets;
        n->buckets = calloc(n->n_buckets, sizeof(Cgroup *));
        if (!n->buckets)
                return -ENOMEM;

        n->limits_maybe_unread = h->limits_maybe_unread;
        n->values_maybe_stored = h->values_maybe_stored;
        h->root->clone = n->root;
        for (Cgroup *c = h->root; c; c = cgroup_next_descendant_pre(c, h->root)) {
                r = c == h->root ? cgroup_copy_state(n->root, c) : cgroup_clone_under(n, c);
                if (r < 0)
                        return r;
        }

        if (h->n_procs > 0) {
                n->procs = calloc(h->n_procs, sizeof(Proc));
                if (!n->procs)
                        return -ENOMEM;
                for (size_t i = 0; i < h->n_procs; i++)
                        n->procs[i] = (Proc) {
                                .id = h->procs[i].id,
                                .cgroup = h->procs[i].cgroup ? h->procs[i].cgroup->clone : NULL,
                        };
        }
        n->n_procs = h->n_procs;
        n->n_alive = h->n_alive;

        *ret = TAKE_PTR(n);
        return 0;
}

void hierarchy_settle_root(Hierarchy *h) {
        cg_propagate_control(h, h->root);
}

RuleSet hierarchy_rules(const Hierarchy *h) {
        return h->rules;
}

CgMask hierarchy_builtin(const Hierarchy *h) {
        return h->builtin;
}

Cgroup *hierarchy_root(const Hierarchy *h) {
        return h->root;
}

size_t hierarchy_count(const Hierarchy *h) {
        return h->count;
}

uint64_t hierarchy_epoch(const Hierarchy *h) {
        return h->epoch;
}

CgMask hierarchy_threaded_mask(const Hierarchy *h) {
        return h->threaded_mask;
}

/* ---- paths ---- */

/*
 * Walk @path from the root. On success *ret is the cgroup named by all
 * components but the last when @want_parent, and *ret_last the last one.
 */
static int path_walk(const Hierarchy *h, const char *path, bool want_parent,
                     Cgroup **ret, const char **ret_last) {
        Cgroup *c = h->root;
        const char *p = cgpath_relative(path);

        if (strlen(path) >= PATH_MAX)
                return -ENAMETOOLONG;
        if (cgpath_is_root(p)) {
                if (want_parent)
                        return -EEXIST; /* mkdir of the root */
                *ret = c;
                return 0;
        }

        for (;;) {
                const char *end = strchrnul(p, '/');
                size_t n = (size_t) (end - p);

                if (n > CGROUP_NAME_MAX)
                        return -ENAMETOOLONG;
                if (!cgpath_cut_name_is_valid(p, n))
                        return -EINVAL; /* "//", a trailing '/', "." or ".." */

                if (!*end && want_parent) {
                        *ret = c;
                        *ret_last = p;
                        return 0;
                }

                Cgroup *child = child_find_n(h, c, p, n);
                if (!child) {
                        char name[CGROUP_NAME_MAX + 1];

                        memcpy(name, p, n);
                        name[n] = '\0';
                        return cgroup_has_file(h, c, name) ? -ENOTDIR : -ENOENT;
                }
                c = child;
                if (!*end)
                        break;
                p = end + 1;
        }
        *ret = c;
        return 0;
}

/*
 * A path below the last mkdir's parent is one step from it, not a walk from the root: a cold apply looks
 * up every cgroup before it makes it. That prefix was valid and found then, and only an rmdir (which
 * forgets it) removes a cgroup, so only the last name is left to check, in path_walk()'s order.
 */
int hierarchy_lookup(const Hierarchy *h, const char *path, Cgroup **ret) {
        const char *p = cgpath_relative(path), *slash = h->mkdir_parent ? strrchr(p, '/') : NULL;

        if (slash && (size_t) (slash - p) == h->mkdir_parent_len && memcmp(p, h->mkdir_parent_path, h->mkdir_parent_len) == 0) {
                const char *name = slash + 1;
                size_t n = strlen(name);

                if (strlen(path) >= PATH_MAX || n > CGROUP_NAME_MAX)
                        return -ENAMETOOLONG;
                if (!cgpath_cut_name_is_valid(name, n))
                        return -EINVAL;
                Cgroup *c = child_find_n(h, h->mkdir_parent, name, n);
                if (!c)
                        return cgroup_has_file(h, h->mkdir_parent, name) ? -ENOTDIR : -ENOENT;
                *ret = c;
                return 0;
        }
        return path_walk(h, path, false, ret, NULL);
}

int cgroup_path(const Cgroup *c, char **ret) {
        size_t len = 0;

        if (!c->parent)
                return (*ret = strdup("/")) ? 0 : -ENOMEM;

        for (const Cgroup *i = c; i->parent; i = i->parent)
                len += 1 + strlen(i->name);
        char *s = malloc(len + 1);
        if (!s)
                return -ENOMEM;
        s[len] = '\0';
        for (const Cgroup *i = c; i->parent; i = i->parent) {
                size_t n = strlen(i->name);
                len -= n;
                memcpy(s + len, i->name, n);
                s[--len] = '/';
        }
        *ret = s;
        return 0;
}

/* kernel: cgroup_check_hierarchy_limits() */
static bool check_hierarchy_limits(const Cgroup *parent) {
        int level = 0;

        for (const Cgroup *c = parent; c; c = c->parent) {
                if (c->nr_descendants >= (unsigned) c->max_descendants)
                        return false;
                if (level >= c->max_depth)
                        return false;
                level++;
        }
        return true;
}

int cg_create(Hierarchy *h, Cgroup *parent, const char *name, Cgroup **ret) {
        if (h->count >= h->n_buckets && child_index_grow(h) < 0)
                return -ENOMEM;

        Cgroup *c = cgroup_alloc(name);
        if (!c)
                return -ENOMEM;
        link_child(parent, c);
        child_index_insert(h, c);
        h->count++;
        if (cg_name_is_knob(name))
                h->n_knob_named++;
        for (Cgroup *a = parent; a; a = a->parent)
                a->nr_descendants++;

        /* kernel: cgroup_create() -> cgroup_propagate_control(cgrp) */
        cg_propagate_control(h, c);
        *ret = c;
        return 0;
}

int cg_path_parent(const Hierarchy *h, const char *path, Cgroup **ret_parent, const char **ret_name) {
        return path_walk(h, path, true, ret_parent, ret_name);
}

/*
 * The same answers as path_walk(@want_parent) when @parent is the cgroup that @path's components but the
 * last name: those were valid and found when @parent was, so only the last is left to check, in
 * path_walk()'s order (length, then the name).
 */
int cg_path_parent_at(const Hierarchy *h, Cgroup *parent, const char *path, Cgroup **ret_parent,
                      const char **ret_name) {
        const char *p = cgpath_relative(path), *name;
        size_t n;

        if (!parent)
                return path_walk(h, path, true, ret_parent, ret_name);
        if (strlen(path) >= PATH_MAX)
                return -ENAMETOOLONG;
        if (cgpath_is_root(p))
                return -EEXIST;
        name = strrchr(p, '/');
        name = name ? name + 1 : p;
        n = strlen(name);
        if (n > CGROUP_NAME_MAX)
                return -ENAMETOOLONG;
        if (!cgpath_cut_name_is_valid(name, n))
                return -EINVAL;
        *ret_parent = parent;
        *ret_name = name;
        return 0;
}

static void mkdir_parent_forget(Hierarchy *h) {
        h->mkdir_parent = NULL;
        free(h->mkdir_parent_path);
        h->mkdir_parent_path = NULL;
        h->mkdir_parent_len = 0;
}

/*
 * path_walk(@want_parent) for a mkdir, through the parent the last one found when @path names a child
 * of it: that prefix was valid and found then, and nothing renames or removes a cgroup but an rmdir,
 * which forgets it. So only the last name is left to check, in path_walk()'s order.
 */
static int mkdir_walk(Hierarchy *h, const char *path, Cgroup **ret_parent, const char **ret_name) {
        const char *p = cgpath_relative(path), *slash = strrchr(p, '/');
        size_t len = slash ? (size_t) (slash - p) : 0;
        int r;

        if (h->mkdir_parent && slash && len == h->mkdir_parent_len && memcmp(p, h->mkdir_parent_path, len) == 0)
                return cg_path_parent_at(h, h->mkdir_parent, path, ret_parent, ret_name);

        r = path_walk(h, path, true, ret_parent, ret_name);
        if (r < 0 || !slash)
                return r;       /* below the root the walk is one step: nothing to keep */
        char *copy = strndup(p, len);
        if (copy) {
                free(h->mkdir_parent_path);
                h->mkdir_parent_path = copy;
                h->mkdir_parent_len = len;
                h->mkdir_parent = *ret_parent;
        }
        return r;
}

int hierarchy_mkdir(Hierarchy *h, const char *path, Cgroup **ret, Reason *reterr_reason) {
        Cgroup *parent, *c;
        const char *name;
        int r;

        r = mkdir_walk(h, path, &parent, &name);
        if (r < 0) {
                reason_set(reterr_reason, r == -EEXIST ? REASON_EXISTS :
                                          r == -ENOTDIR ? REASON_NOT_A_DIRECTORY : REASON_NO_SUCH_CGROUP);
                return r;
        }

        /* the VFS finds an existing dentry, cgroup or interface file, before the kernel is asked */
        if (child_find(h, parent, name) || cgroup_has_file(h, parent, name)) {
                reason_set(reterr_reason, REASON_EXISTS);
                return -EEXIST;
        }

        /* kernel: cgroup_mkdir() keeps /proc/PID/cgroup parseable */
        if (strchr(name, '\n')) {
                reason_set(reterr_reason, REASON_PARSE);
                return -EINVAL;
        }

        /* patch 002, placed before the limit check (docs/bypass-semantics.md) */
        if (h->rules == RULES_BYPASS && !cg_is_threaded(parent) && !cg_is_valid_domain(h, parent)) {
                reason_set(reterr_reason, REASON_INVALID_DOMAIN);
                return -EOPNOTSUPP;
        }

        if (!check_hierarchy_limits(parent)) {
                reason_set(reterr_reason, REASON_LIMIT);
                return -EAGAIN;
        }

        r = cg_create(h, parent, name, &c);
        if (r < 0)
                return r;
        if (ret)
                *ret = c;
        return 0;
}

int hierarchy_rmdir(Hierarchy *h, const char *path, Reason *reterr_reason) {
        Cgroup *c;
        int r;

        r = hierarchy_lookup(h, path, &c);
        if (r < 0) {
                reason_set(reterr_reason, r == -ENOTDIR ? REASON_NOT_A_DIRECTORY : REASON_NO_SUCH_CGROUP);
                return r;
        }
        if (!c->parent) {
                /* the VFS refuses rmdir of "." */
                reason_set(reterr_reason, REASON_ROOT);
                return -EINVAL;
        }
        if (cg_is_populated(c)) {
                reason_set(reterr_reason, REASON_POPULATED);
                return -EBUSY;
        }
        if (c->first_child) {
                reason_set(reterr_reason, REASON_HAS_CHILDREN);
                return -EBUSY;
        }

        if (cg_is_threaded(c))
                c->parent->nr_threaded_children--;
        for (Cgroup *a = c->parent; a; a = a->parent)
                a->nr_descendants--;
        mkdir_parent_forget(h);
        child_index_remove(h, c);
        unlink_child(c);
        h->count--;
        h->epoch = next_epoch();
        if (cg_name_is_knob(c->name))
                h->n_knob_named--;
        cgroup_free_one(c);
        return 0;
}

/* ---- accessors ---- */

const char *cgroup_name(const Cgroup *c) {
        return c->name;
}

Cgroup *cgroup_parent(const Cgroup *c) {
        return c->parent;
}

Cgroup *cgroup_first_child(const Cgroup *c) {
        return c->first_child;
}

Cgroup *cgroup_next_sibling(const Cgroup *c) {
        return c->next_sibling;
}

unsigned cgroup_level(const Cgroup *c) {
        return c->level;
}

unsigned cgroup_nr_descendants(const Cgroup *c) {
        return c->nr_descendants;
}

CgMask cgroup_get_subtree_control(const Cgroup *c) {
        return c->subtree_control;
}

CgMask cgroup_get_subtree_ss_mask(const Cgroup *c) {
        return c->subtree_ss_mask;
}

CgMask cgroup_get_subtree_bypass(const Cgroup *c) {
        return c->subtree_bypass;
}

CgMask cgroup_get_enable_ss_mask(const Cgroup *c) {
        return c->enable_ss_mask;
}

bool cgroup_is_populated(const Cgroup *c) {
        return cg_is_populated(c);
}

unsigned cgroup_nr_procs(const Cgroup *c) {
        return c->nr_procs;
}

bool cgroup_limits_unread(const Cgroup *c) {
        return c->limits_unread;
}

void cgroup_set_limits_unread(Hierarchy *h, Cgroup *c, bool unread) {
        c->limits_unread = unread;
        if (unread)
                h->limits_maybe_unread = true;
}

bool hierarchy_limits_maybe_unread(const Hierarchy *h) {
        return h->limits_maybe_unread;
}
