/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * An exact in-memory model of the Linux 6.1 cgroup v2 core (kernel/cgroup/
 * cgroup.c), stock or carrying the bypass series as this project ports it
 * (kernel/patches/, docs/bypass-semantics.md). Pure: no I/O, no logging.
 *
 * Every operation validates before it changes anything and returns the errno
 * the kernel's syscall returns, so a failed operation leaves the model
 * byte-identical (see hierarchy_dump()). Where one errno has several causes,
 * reterr_reason (may be NULL) tells which.
 *
 * Paths are relative to the cgroup root ("A/B"; "." or "" is the root) or
 * absolute cgroup paths ("/A/B"; "/" is the root).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgbypass/controller.h"
#include "cgbypass/macro.h"
#include "cgbypass/reason.h"

typedef enum RuleSet {
        RULES_STOCK,
        RULES_BYPASS,
        _RULES_MAX,
        _RULES_INVALID = -22,
} RuleSet;

const char *rules_to_string(RuleSet r);
RuleSet rules_from_string(const char *s);

typedef enum CgroupType {
        CGROUP_TYPE_DOMAIN,
        CGROUP_TYPE_DOMAIN_THREADED,
        CGROUP_TYPE_DOMAIN_INVALID,
        CGROUP_TYPE_THREADED,
        _CGROUP_TYPE_MAX,
        _CGROUP_TYPE_INVALID = -22,
} CgroupType;

/* as cgroup.type prints it: "domain", "domain threaded", "domain invalid", "threaded" */
const char *cgroup_type_to_string(CgroupType t);

typedef struct Hierarchy Hierarchy;
typedef struct Cgroup Cgroup;

/* A modeled process. The model numbers them from 1; 0 is never used. */
typedef uint32_t ProcId;

/* Longest cgroup name the model accepts (kernfs: NAME_MAX). */
#define CGROUP_NAME_MAX 255

/**
 * hierarchy_new() - a freshly booted kernel's cgroup2 hierarchy: only the root
 * @ret: the new hierarchy
 * @rules: RULES_STOCK or RULES_BYPASS
 * @builtin: the controllers the kernel was built with (CONTROLLER_DEBUG: booted
 *           with cgroup_debug)
 *
 * Return: 0, -EINVAL for bad arguments, -ENOMEM.
 */
int hierarchy_new(Hierarchy **ret, RuleSet rules, CgMask builtin);
Hierarchy *hierarchy_free(Hierarchy *h);
DEFINE_POINTER_CLEANUP(Hierarchy, hierarchy_free);

/**
 * hierarchy_settle_root() - the state after the root's first effective
 *                           cgroup.subtree_control write
 *
 * A freshly booted 6.1 has not propagated the root's masks yet: implicit
 * controllers (perf_event, debug) get csses below the root only after the
 * first write that changes the root's cgroup.subtree_control, and that never
 * goes back. A kernel that has run earlier traces is in this settled state.
 */
void hierarchy_settle_root(Hierarchy *h);

/**
 * hierarchy_clone() - deep copy, for trying a sequence of operations
 * @h: the hierarchy
 * @ret: the copy; ProcIds and paths are the same as in @h
 *
 * Return: 0 or -ENOMEM.
 */
int hierarchy_clone(const Hierarchy *h, Hierarchy **ret);

/**
 * hierarchy_clone_scope() - a copy of what operations on one subtree can see
 * @h: the hierarchy
 * @scope: an existing cgroup of @h
 * @ret: the copy: @scope's subtree whole, and its ancestors up to the root
 *      with their own state but without their other children
 *
 * A write, mkdir or value write on a cgroup of @scope's subtree looks at that
 * cgroup's ancestors (availability, limits, counters, thread roots) and its
 * descendants, never at a cousin: on the copy it meets the same rules as on
 * @h, at a cost in proportion to the subtree and its depth instead of the
 * whole hierarchy. The copy has no process table (the cgroups keep their
 * task counts, which is what the rules read); paths are the same as in @h.
 *
 * Return: 0, -ENOMEM; -EINVAL if @scope is not a cgroup of @h.
 */
int hierarchy_clone_scope(const Hierarchy *h, const Cgroup *scope, Hierarchy **ret);

RuleSet hierarchy_rules(const Hierarchy *h);
CgMask hierarchy_builtin(const Hierarchy *h);
Cgroup *hierarchy_root(const Hierarchy *h);
size_t hierarchy_count(const Hierarchy *h);    /* live cgroups, root included */
/*
 * A value that changes whenever a cgroup leaves @h (rmdir), and that no other
 * hierarchy has: equal values mean every cgroup there was then is still there.
 */
uint64_t hierarchy_epoch(const Hierarchy *h);
CgMask hierarchy_threaded_mask(const Hierarchy *h);

/**
 * hierarchy_lookup() - find a cgroup by path
 *
 * Return: 0; -ENOENT if a component does not exist; -ENOTDIR if a component
 * names an interface file; -EINVAL for "..", "//" and the like (the model
 * only takes normalized paths); -ENAMETOOLONG.
 */
int hierarchy_lookup(const Hierarchy *h, const char *path, Cgroup **ret);

/**
 * hierarchy_mkdir() - mkdir(2) of a cgroup (kernel: cgroup_mkdir())
 *
 * Return: 0; -EEXIST (a cgroup or file of that name exists; "." names the
 * root); -ENOENT/-ENOTDIR (parent lookup); -EINVAL (newline in the name);
 * -EOPNOTSUPP (bypass rules: the parent is an invalid domain, patch 002);
 * -EAGAIN (cgroup.max.depth or cgroup.max.descendants); -ENAMETOOLONG; -ENOMEM.
 */
int hierarchy_mkdir(Hierarchy *h, const char *path, Cgroup **ret, Reason *reterr_reason);

/**
 * hierarchy_rmdir() - rmdir(2) of a cgroup (kernel: cgroup_destroy_locked())
 *
 * Return: 0; -ENOENT/-ENOTDIR; -EINVAL for the root ("."); -EBUSY when
 * populated or when it has children.
 */
int hierarchy_rmdir(Hierarchy *h, const char *path, Reason *reterr_reason);

/**
 * cgroup_write() - open(2) FILE in @c for writing, then write(2) @buf to it
 * @buf: the bytes of one write(2), NUL-terminated, without a newline added
 *
 * The caller is root, as the daemon and the trace tool are. Dispatches to the
 * write handlers below. Return: -E2BIG for more than 4096 bytes (kernfs'
 * atomic_write_len); 0 for an empty write (no handler runs); the
 * handler's result; -ENOENT when @c has no such file; -EINVAL when the file
 * has no write handler (cgroup.controllers on a stock kernel: root may open
 * a 0444 cgroup file for writing); -ENOSYS when the file exists and is
 * writable but the model does not implement it.
 */
int cgroup_write(Hierarchy *h, Cgroup *c, const char *file, const char *buf, Reason *reterr_reason);

/*
 * kernel: cgroup_subtree_control_write(). -EINVAL, -ENOENT, -EBUSY, -EOPNOTSUPP;
 * -EEXIST when a file that would appear collides with a child cgroup of that name.
 */
int cgroup_write_subtree_control(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason);

/* bypass rules: cgroup_controllers_write() of the series. -EINVAL, -ENOENT, -EBUSY, -EEXIST; stock: -EINVAL. */
int cgroup_write_controllers(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason);

/* kernel: cgroup_type_write(). -EINVAL (not "threaded"), -EOPNOTSUPP, -EEXIST. */
int cgroup_write_type(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason);

/**
 * hierarchy_spawn() - a new single-threaded process, placed in @dst
 *
 * The process starts outside the modeled tree (in the tracer's cgroup) and is
 * written to @dst's cgroup.procs; if that migration fails, the process exits
 * again and nothing changes. Return: 0 or the migration's errno.
 */
int hierarchy_spawn(Hierarchy *h, Cgroup *dst, ProcId *ret, Reason *reterr_reason);

/**
 * hierarchy_move() - write a process's pid to @dst's cgroup.procs (@threadgroup)
 *                    or cgroup.threads (!@threadgroup)
 *
 * Return: 0; -ESRCH unknown process; -EOPNOTSUPP (@dst cannot host resources,
 * or a thread moved across resource domains); -EBUSY (no internal processes).
 */
int hierarchy_move(Hierarchy *h, ProcId pid, Cgroup *dst, bool threadgroup, Reason *reterr_reason);

/* The process exits and is reaped. Return: 0 or -ESRCH. */
int hierarchy_kill(Hierarchy *h, ProcId pid);

Cgroup *hierarchy_proc_cgroup(const Hierarchy *h, ProcId pid); /* NULL if unknown */

/**
 * cgroup_read() - the contents of an interface file, exactly as the kernel prints it
 * @ret: malloc'ed text (newline-terminated lines, "" for an empty file)
 *
 * cgroup.procs and cgroup.threads list ProcIds, sorted. Return: 0; -ENOENT
 * when the file does not exist in @c; -EINVAL for a write-only file
 * (cgroup.kill); -EOPNOTSUPP for cgroup.procs of a threaded cgroup; -ENOSYS
 * for files the model does not implement; -ENOMEM.
 */
int cgroup_read(const Hierarchy *h, const Cgroup *c, const char *file, char **ret);

/**
 * cgroup_get_procs() - the processes cgroup.procs (@threadgroup) or
 *                      cgroup.threads lists, sorted
 *
 * Return: 0, -EOPNOTSUPP (cgroup.procs of a threaded cgroup), -ENOMEM.
 */
int cgroup_get_procs(const Hierarchy *h, const Cgroup *c, bool threadgroup, ProcId **ret, size_t *ret_n);

/* Whether @c's directory holds FILE (core files and visible controller files). */
bool cgroup_has_file(const Hierarchy *h, const Cgroup *c, const char *file);

/* Whether FILE in @c has a write handler (its mode is 0644). False if absent. */
bool cgroup_file_writable(const Hierarchy *h, const Cgroup *c, const char *file);

/* cgroup_file_writable() into @ret_writable and cgroup_read(), with one lookup of FILE: the sim renders every file */
int cgroup_read_file(const Hierarchy *h, const Cgroup *c, const char *file, bool *ret_writable, char **ret);

/**
 * cgroup_list_files() - the interface files in @c's directory, sorted by name
 *
 * Return: 0 or -ENOMEM; @ret is a NULL-terminated strv.
 */
int cgroup_list_files(const Hierarchy *h, const Cgroup *c, char ***ret);

/* cgroup_list_files() without copies: the names are cftype_table[]'s, NULL-terminated; free() the array alone */
int cgroup_list_file_names(const Hierarchy *h, const Cgroup *c, const char ***ret);

/*
 * Values of controller files (model-values.c). The model keeps, per
 * cgroup, what each written controller file shows, with the kernel's syntax
 * and normalization (cfvalue.h); a file never written shows its default. A
 * value lives as long as the cgroup's css of that controller: when the css
 * goes (the controller is disabled or bypassed above), so does the value.
 * cgroup_write() leaves these files alone (-ENOSYS), so traces and the
 * native and emulated backends, whose kernels keep the values, are unchanged;
 * the sim backend and the planner use these calls.
 */

/**
 * cgroup_value_write() - write(2) of a value to a controller file of @c
 * @value: the bytes of one write, without a newline
 *
 * Return: 0; -ENOENT (no such file in @c); -EINVAL (a read-only file, or a
 * value the kernel's syntax refuses); -ERANGE; -ENODEV (a device the model
 * does not have); -ENOSYS (a file whose syntax the model does not know);
 * -ENOMEM. Nothing changes on failure.
 */
int cgroup_value_write(Hierarchy *h, Cgroup *c, const char *file, const char *value, Reason *reterr_reason);

/**
 * cgroup_value_read() - what a controller file of @c shows
 *
 * Return: 0 with a malloc'ed text; -ENOENT (no such file in @c); -ENOSYS
 * (syntax not known); -ENOMEM.
 */
int cgroup_value_read(const Hierarchy *h, const Cgroup *c, const char *file, char **ret);

/* Set what FILE shows as saved earlier (no checks beyond the file's presence). -ENOENT, -ENOMEM. */
int cgroup_value_restore(Hierarchy *h, Cgroup *c, const char *file, const char *shown);

/* The @i-th value kept for @c (file order of writing). Return: 0, -ENOENT past the end. */
int cgroup_value_get(const Hierarchy *h, const Cgroup *c, size_t i, const char **ret_file, const char **ret_shown);

/* Forget the values whose css is gone, in @top's subtree. Call after a successful control write. */
void hierarchy_values_prune(Hierarchy *h, Cgroup *top);

/* A shown text on one line without spaces ("\n", "\s", "\\"), and back. */
int cgroup_value_escape(const char *shown, char **ret);
int cgroup_value_unescape(const char *text, char **ret);

/* Tree navigation. Children are kept in creation order. */
const char *cgroup_name(const Cgroup *c);        /* "" for the root */
Cgroup *cgroup_parent(const Cgroup *c);
Cgroup *cgroup_first_child(const Cgroup *c);
Cgroup *cgroup_next_sibling(const Cgroup *c);
unsigned cgroup_level(const Cgroup *c);           /* root: 0 */
unsigned cgroup_nr_descendants(const Cgroup *c);  /* kernel: cgroup->nr_descendants (live ones) */
/* pre-order successor of @pos within @root's subtree, or NULL (kernel: css_next_descendant_pre()) */
Cgroup *cgroup_next_descendant_pre(const Cgroup *pos, const Cgroup *root);

/**
 * cgroup_path() - the absolute cgroup path
 * @ret: malloc'ed "/A/B", or "/" for the root
 *
 * Return: 0 or -ENOMEM.
 */
int cgroup_path(const Cgroup *c, char **ret);

/* The masks of struct cgroup (bypass-only masks are 0 under stock rules). */
CgMask cgroup_get_subtree_control(const Cgroup *c);
CgMask cgroup_get_subtree_ss_mask(const Cgroup *c);
CgMask cgroup_get_subtree_bypass(const Cgroup *c);
CgMask cgroup_get_enable_ss_mask(const Cgroup *c);

/* What cgroup.controllers shows: enabled for @c (kernel: cgroup_control(cgrp, false)) ... */
CgMask cgroup_get_controllers(const Hierarchy *h, const Cgroup *c);
/* ... and what it shows with '#': in bypass mode for @c (decision (d)). */
CgMask cgroup_get_bypassed(const Hierarchy *h, const Cgroup *c);

/* Controllers for which @c has its own css (kernel: cgroup_ss_mask(cgrp, false)). */
CgMask cgroup_get_css_mask(const Hierarchy *h, const Cgroup *c);

/* The cgroup whose css @c's processes use for @ctrl: @c or its nearest ancestor with a css. */
Cgroup *cgroup_effective_css_owner(const Hierarchy *h, const Cgroup *c, Controller ctrl);

CgroupType cgroup_get_type(const Hierarchy *h, const Cgroup *c);
bool cgroup_is_populated(const Cgroup *c);
unsigned cgroup_nr_procs(const Cgroup *c);        /* processes directly in @c */

/*
 * Whether @c's cgroup.max.depth and cgroup.max.descendants are not known
 * yet (the model then says "max"): a kernel scan leaves them unread in a
 * cgroup without children, where they matter only to a mkdir below it.
 */
bool cgroup_limits_unread(const Cgroup *c);
void cgroup_set_limits_unread(Hierarchy *h, Cgroup *c, bool unread);
/* false: no cgroup of @h (or of what it was cloned from) was ever set unread, so none is (a walk saved) */
bool hierarchy_limits_maybe_unread(const Hierarchy *h);

/**
 * hierarchy_effective_tree() - a controller's effective hierarchy as text
 *
 * One line per css of @ctrl: two spaces per depth, then the member cgroups'
 * absolute paths in pre-order joined by '|' (interfaces.md, GetEffectiveTree).
 * Return: 0, -EINVAL (controller not built in or without css on cgroup2), -ENOMEM.
 */
int hierarchy_effective_tree(const Hierarchy *h, Controller ctrl, char **ret);

/* Called per effective node: its depth and its member cgroups' paths (NULL-terminated). */
typedef int (*EffectiveNodeFunc)(unsigned depth, const char *const *members, size_t n_members, void *userdata);

/**
 * hierarchy_effective_nodes() - the effective hierarchy, node by node
 *
 * Calls @f once per line that hierarchy_effective_tree() prints, in that
 * order, with the same members (GetEffectiveNodes); stops at @f's first
 * negative return.
 * Return: 0, -EINVAL (as hierarchy_effective_tree()), -ENOMEM, or @f's error.
 */
int hierarchy_effective_nodes(const Hierarchy *h, Controller ctrl, EffectiveNodeFunc f, void *userdata);

/**
 * hierarchy_dump() - the complete state as deterministic text
 *
 * Two hierarchies with equal dumps behave the same for every operation.
 * Return: 0 or -ENOMEM.
 */
int hierarchy_dump(const Hierarchy *h, char **ret);

/**
 * hierarchy_check() - verify the model's internal invariants
 * @reterr_msg: on failure, a malloc'ed description of the first violation
 *
 * Masks consistent with each other and with their parents, counters equal to
 * a recount, css parents the nearest ancestors with a css.
 * Return: 0, -EUCLEAN on a violation, -ENOMEM.
 */
int hierarchy_check(const Hierarchy *h, char **reterr_msg);

/**
 * hierarchy_import() - set a cgroup's state as observed on a real kernel
 * @h: the hierarchy
 * @path: the cgroup; its parent must exist (import parents first, pre-order)
 *        and it must not exist yet, except the root
 * @threaded: cgroup.type says "threaded"
 * @subtree_control: enabled in cgroup.subtree_control
 * @subtree_bypass: bypassed ('#') in cgroup.subtree_control
 * @enable_ss_mask: re-enabled for itself while the parent bypasses it
 * @nr_procs: processes directly in it
 * @ret_first: the ProcId of its first process (the rest follow consecutively)
 *
 * Backends load the hierarchy they find with this, bypassing the write
 * rules, then call hierarchy_check(). Return: 0; -EEXIST, -ENOENT (parent);
 * -EUCLEAN when the state cannot exist under @h's rules (masks beyond what
 * the parent offers, bypass state under stock rules, a threaded cgroup under
 * a parent that cannot be a thread root); -ENOMEM.
 */
int hierarchy_import(Hierarchy *h, const char *path, bool threaded, CgMask subtree_control,
                     CgMask subtree_bypass, CgMask enable_ss_mask, unsigned nr_procs, ProcId *ret_first);
/* hierarchy_import(), and the cgroup in *@ret (a loader sets its limits next, without a walk of @path) */
int hierarchy_import_cgroup(Hierarchy *h, const char *path, bool threaded, CgMask subtree_control,
                            CgMask subtree_bypass, CgMask enable_ss_mask, unsigned nr_procs, ProcId *ret_first,
                            Cgroup **ret);
/*
 * hierarchy_import_cgroup() by a loader that holds the parent already (@parent_hint, the cgroup that
 * names all of @path but its last name; NULL: walk @path): no walk from the root per cgroup.
 */
int hierarchy_import_below(Hierarchy *h, Cgroup *parent_hint, const char *path, bool threaded,
                           CgMask subtree_control, CgMask subtree_bypass, CgMask enable_ss_mask,
                           unsigned nr_procs, ProcId *ret_first, Cgroup **ret);
