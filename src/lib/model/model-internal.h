/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Private to the model. The fields mirror struct cgroup of the kernel (with
 * the series' subtree_bypass and enable_ss_mask); helpers named cg_*() mirror
 * the kernel function named in their comment.
 */

#include <limits.h>

#include "cgbypass/model.h"

typedef struct CgValue {
        char *file;
        char *shown;
} CgValue;

/* model-values.c: free @c's values; copy them to @dst */
void cg_values_free(Cgroup *c);
int cg_values_copy(Cgroup *dst, const Cgroup *src);

typedef struct Proc {
        ProcId id;
        Cgroup *cgroup;         /* NULL once reaped */
} Proc;

struct Cgroup {
        char *name;             /* name_buf: one allocation with the cgroup */
        Cgroup *parent;
        Cgroup *first_child, *last_child, *next_sibling, *prev_sibling;
        Cgroup *hash_next;      /* Hierarchy.buckets chain, keyed by (parent, name) */
        Cgroup *clone;          /* scratch for hierarchy_clone() */
        unsigned level;

        CgMask subtree_control;
        CgMask subtree_ss_mask;
        CgMask subtree_bypass;  /* bypass rules only */
        CgMask enable_ss_mask;  /* bypass rules only */

        Cgroup *dom_cgrp;       /* self, or the thread root whose domain it joined */
        unsigned nr_threaded_children;

        /* kernel: nr_populated_csets (we only need "has tasks") and the children counters */
        unsigned nr_procs;
        unsigned nr_populated_domain_children;
        unsigned nr_populated_threaded_children;

        unsigned nr_descendants;
        int max_descendants;    /* INT_MAX = "max" */
        int max_depth;
        bool limits_unread;     /* cgroup_limits_unread() */

        /* controller files written (model-values.c): what each shows; the rest show defaults */
        CgValue *values;
        size_t n_values;

        /* the name's bytes: a model allocates a cgroup per mkdir and per import, a strdup() more was a
         * second malloc() and free() each */
        char name_buf[];
};

struct Hierarchy {
        RuleSet rules;
        CgMask builtin;         /* kernel: cgrp_dfl_root.subsys_mask */
        CgMask threaded_mask;   /* cgrp_dfl_threaded_ss_mask */
        CgMask implicit_mask;   /* cgrp_dfl_implicit_ss_mask */
        CgMask inhibit_mask;    /* cgrp_dfl_inhibit_ss_mask */

        Cgroup *root;
        size_t count;
        uint64_t epoch;         /* hierarchy_epoch() */

        Cgroup **buckets;
        size_t n_buckets;

        /* children named like an interface file (mkdir before the file appeared) */
        size_t n_knob_named;

        /* some cgroup was set limits_unread (never cleared): without it, a mkdir has no limits to read */
        bool limits_maybe_unread;

        /* some cgroup was given a value (never cleared): without it, there are no values to prune */
        bool values_maybe_stored;

        /*
         * The parent the last mkdir walked to, and its relative path: siblings are made in a row, and
         * the walk from the root was most of a mkdir. Forgotten at every rmdir (no other operation
         * removes a cgroup or renames one).
         */
        Cgroup *mkdir_parent;
        char *mkdir_parent_path;
        size_t mkdir_parent_len;

        Proc *procs;            /* indexed by ProcId - 1 */
        size_t n_procs;
        size_t n_alive;
};

/* kernel: cgroup_is_threaded() */
static inline bool cg_is_threaded(const Cgroup *c) {
        return c->dom_cgrp != c;
}

/* kernel: cgroup_is_mixable() */
static inline bool cg_is_mixable(const Cgroup *c) {
        return !c->parent;
}

/* kernel: cgroup_has_tasks() */
static inline bool cg_has_tasks(const Cgroup *c) {
        return c->nr_procs > 0;
}

/* kernel: cgroup_is_populated() */
static inline bool cg_is_populated(const Cgroup *c) {
        return c->nr_procs + c->nr_populated_domain_children + c->nr_populated_threaded_children > 0;
}

/* What the no-internal-process and thread rules look at: enabled or (series) bypassed. */
static inline CgMask cg_subtree_mask(const Cgroup *c) {
        return c->subtree_control | c->subtree_bypass;
}

bool cg_can_be_thread_root(const Hierarchy *h, const Cgroup *c);
bool cg_is_thread_root(const Hierarchy *h, const Cgroup *c);
bool cg_is_valid_domain(const Hierarchy *h, const Cgroup *c);
CgMask cg_control(const Hierarchy *h, const Cgroup *c, bool show_bypass);
CgMask cg_ss_mask(const Hierarchy *h, const Cgroup *c, bool show_bypass);
CgMask cg_bypass_mask(const Hierarchy *h, const Cgroup *c);

/* kernel: cgroup_propagate_control(); the model has no css to create or kill, they derive from masks */
void cg_propagate_control(const Hierarchy *h, Cgroup *c);

/* model.c's tree primitives, for the copies model-scope.c makes: a new unlinked cgroup, linking, indexing */
Cgroup *cgroup_alloc(const char *name);
void link_child(Cgroup *parent, Cgroup *c);
void child_index_insert(Hierarchy *h, Cgroup *c);
int cgroup_copy_state(Cgroup *copy, const Cgroup *c);
int cgroup_clone_under(Hierarchy *n, Cgroup *c);

/* kernel: cgroup_create(): a new child, no rules checked */
int cg_create(Hierarchy *h, Cgroup *parent, const char *name, Cgroup **ret);

/* Split @path into its existing parent cgroup and the last component. */
int cg_path_parent(const Hierarchy *h, const char *path, Cgroup **ret_parent, const char **ret_name);
/* cg_path_parent() when the caller holds @path's parent already (@parent; NULL: walk): only the last name is checked */
int cg_path_parent_at(const Hierarchy *h, Cgroup *parent, const char *path, Cgroup **ret_parent,
                      const char **ret_name);
/* The child of @parent named @name, or NULL (the child index). */
Cgroup *cg_child_find(const Hierarchy *h, const Cgroup *parent, const char *name);

/* Whether @name is the name of some interface file (a child so named can block a file). */
bool cg_name_is_knob(const char *name);

/* Controllers whose files @c shows (kernel: the css_visible() ones). */
CgMask cg_visible_mask(const Hierarchy *h, const Cgroup *c);

/* Would showing @ctrl's files in @c run into a child directory of the same name? */
bool cg_files_collide(const Hierarchy *h, const Cgroup *c, Controller ctrl);

/*
 * A change of control masks or thread mode is the kernel's transaction
 * (model-control.c):
 *
 *      cg_save_control(h, c, &save);           kernel: cgroup_save_control()
 *      ... change @c's masks or dom_cgrp ...
 *      r = cg_apply_control(h, &save);         kernel: cgroup_apply_control()
 *      cg_finalize_control(&save, r);          kernel: cgroup_finalize_control()
 */
typedef struct SavedControl {
        Cgroup *cgroup;
        CgMask subtree_control, subtree_ss_mask, subtree_bypass, enable_ss_mask;
        Cgroup *dom_cgrp;
        CgMask visible, css;    /* not restored: what the vets compare the change with */
} SavedControl;

typedef struct ControlSave {
        Cgroup *top;
        SavedControl *saved;    /* @top and its descendants, in pre-order */
        size_t n;
} ControlSave;

/* kernel: cgroup_save_control(). Return: 0 or -ENOMEM (nothing saved). */
int cg_save_control(const Hierarchy *h, Cgroup *c, ControlSave *ret);

/*
 * kernel: cgroup_apply_control(): propagate the change through the subtree,
 * then refuse what cgroup_apply_control_enable() refuses: a css linked past
 * a new one or killed under a linked one (decision (k), -EBUSY), a file that
 * collides with a child directory (kernfs, -EEXIST). Return: 0, -EBUSY, -EEXIST.
 */
int cg_apply_control(Hierarchy *h, ControlSave *s);

/* kernel: cgroup_finalize_control(): on failure (@ret < 0) restore the saved masks; frees @s. */
void cg_finalize_control(ControlSave *s, int ret);

/* A new process, in no cgroup yet (kernel: copy_process()). Return: it, or NULL on OOM. */
Proc *cg_proc_new(Hierarchy *h);

/* kernel: cgroup_update_populated(), for a change of @c's own tasks between none and some */
void cg_update_populated(Cgroup *c, bool populated);

/* kernel: cgroup_max_descendants_write(), cgroup_max_depth_write() */
int cg_write_max_descendants(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason);
int cg_write_max_depth(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason);

/* kernel: cgroup_procs_write(), cgroup_threads_write(): the parse only; moves go through hierarchy_move() */
int cg_write_procs(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason);

/* the kernel's cgroup_subtree_control_write() parser, shared with cgroup.controllers */
int cg_parse_control_tokens(const Hierarchy *h, char *buf, const char *prefixes,
                            CgMask *ret_plus, CgMask *ret_minus, CgMask *ret_hash);

static inline void reason_set(Reason *r, Reason v) {
        if (r)
                *r = v;
}
