/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Private to src/lib/backend/. backend.c validates arguments and dispatches
 * to one BackendVTable per type; the backends share the state file
 * (backend-state.c), the kernel loader (kernel-scan.c) and the file layer
 * (cgroupfs.c).
 */

#include "cgbypass/backend.h"
#include "cgbypass/log.h"

typedef struct BackendVTable {
        int (*open)(Backend *b, const BackendOptions *opts, char **reterr_msg);
        void (*done)(Backend *b);
        int (*refresh)(Backend *b, char **reterr_msg);
        /* @path is normalized and valid; @file a valid name */
        int (*mkdir)(Backend *b, const char *path, Reason *reterr_reason);
        int (*rmdir)(Backend *b, const char *path, Reason *reterr_reason);
        int (*write)(Backend *b, const char *path, const char *file, const char *value, Reason *reterr_reason);
        int (*read)(Backend *b, const char *path, const char *file, char **ret);
        int (*chown)(Backend *b, const char *path, uid_t uid, gid_t gid, char *const *files);
        /* sim only (the kernel makes its files as the writer it sees) */
        int (*set_writes_by_dir_owner)(Backend *b, bool on);
        int (*save)(Backend *b);
        /* native, emulated: the model of what the kernel shows (stock rules for emulated) */
        const Hierarchy *(*kernel_view)(Backend *b);
} BackendVTable;

extern const BackendVTable backend_sim_vtable;
extern const BackendVTable backend_native_vtable;
extern const BackendVTable backend_emulated_vtable;

typedef struct DriftList {
        BackendDrift *v;
        size_t n;
} DriftList;

void drift_list_done(DriftList *l);
int drift_list_add(DriftList *l, const char *path, const char *what, const char *expected, const char *found);

struct Backend {
        BackendType type;
        const BackendVTable *vtable;
        char *root;             /* cgroup_root as given */
        char *root_real;        /* realpath() of it, recorded in state files */
        char *state_dir;
        int root_fd;            /* O_PATH | O_DIRECTORY */
        int state_fd;           /* O_PATH | O_DIRECTORY, -1 without a state directory */
        int lock_fd;            /* flock()ed while open */
        bool read_only;         /* BackendOptions.read_only */

        Hierarchy *model;       /* bypass rules; in step with every successful operation */

        BackendDisagreementFn disagreement_fn;
        void *disagreement_userdata;
        BackendFaultFn fault_fn;
        void *fault_userdata;

        DriftList drift;        /* what the last open or refresh found */

        void *data;             /* the backend's own */
};

/* A malloc'ed message into *@reterr_msg (if not NULL); returns @error. */
int backend_msg(char **reterr_msg, int error, const char *fmt, ...) _printf_(3, 4);

/* An operation in trace syntax: "mkdir A", "write A cgroup.subtree_control +cpu". NULL on OOM. */
char *backend_op_string(const char *verb, const char *path, const char *file, const char *value);

/* Ask the fault hook about a change. Return: 0 to go on, or the injected -errno. */
int backend_fault_check(Backend *b, const char *verb, const char *path, const char *file, const char *value);

/* Report a kernel/model disagreement to the handler. */
void backend_report_disagreement(Backend *b, const char *verb, const char *path, const char *file,
                                 const char *value, int kernel_result, int model_result);

/* Replace @b's drift list with @l (taken over). */
void backend_set_drift(Backend *b, DriftList *l);

/* "A/B" or "." from a model cgroup (malloc'ed). */
int backend_cgroup_relpath(const Cgroup *c, char **ret);

/* Mask names for messages and drift: "cpu io", "#cpu", "" (malloc'ed, NULL on OOM). */
char *backend_masks_to_string(CgMask enabled, CgMask bypassed);

/* ---- the state file (backend-state.c) ---- */

typedef struct BackendStateCgroup {
        char *path;             /* trace-relative, "." for the root */
        bool threaded;
        CgMask subtree_control, subtree_bypass, enable_ss_mask;
        int max_depth, max_descendants;  /* INT_MAX: "max" */
        char **values;          /* sim: file, shown, file, shown, ... (NULL-terminated) */
        size_t n_values;        /* pairs */
} BackendStateCgroup;

typedef struct BackendState {
        char *backend;          /* "sim", "emulated" */
        char *root;             /* the realpath of the cgroup root it describes */
        CgMask controllers;
        BackendStateCgroup *cgroups;   /* parents before children */
        size_t n;
} BackendState;

void state_done(BackendState *s);

/*
 * Load STATE_DIR/@name. Return: 0; -ENOENT when there is none; -EUCLEAN for
 * a file that cannot be parsed (message with FILE:LINE); -errno.
 */
int state_load(int state_fd, const char *state_dir, const char *name, BackendState *ret, char **reterr_msg);

/*
 * Write STATE_DIR/@name atomically: temporary file, rename. @durable: with
 * fsync of the file and of the directory, so that a power loss keeps it too.
 */
int state_save(int state_fd, const char *name, const BackendState *s, bool durable);

/*
 * The model as a BackendState: every cgroup (@only_bypass false), or only those
 * with bypass state (subtree_bypass or enable_ss_mask), in pre-order.
 */
int state_from_model(const Hierarchy *h, bool only_bypass, BackendState *ret);
/* The same for @top alone, or for @top and its subtree (@subtree), in pre-order. */
int state_from_region(const Hierarchy *h, const Cgroup *top, bool subtree, bool only_bypass, BackendState *ret);

/*
 * The journal of a state file (sim): regions appended as things change, so
 * that a save costs what changed; replayed over the state file at load.
 * Appending @n regions (records NULL or none: the region is gone) costs one
 * write(2), no fsync. Replay: 0 also when there is no journal; @ret_bytes its size.
 */
typedef struct StateRegion {
        const char *path;
        bool subtree;
        const BackendState *records;
} StateRegion;
int state_journal_append(int state_fd, const char *name, const StateRegion *regions, size_t n, size_t *ret_bytes);
int state_journal_replay(int state_fd, const char *state_dir, const char *name, BackendState *s, size_t *ret_bytes,
                         char **reterr_msg);

/* Set a cgroup's cgroup.max.depth and cgroup.max.descendants in the model (INT_MAX: leave "max"). */
int state_apply_limits(Hierarchy *h, Cgroup *c, int max_depth, int max_descendants);

/* ---- the kernel loader (kernel-scan.c) ---- */

#define KERNEL_SCAN_MAX_DEPTH 256
#define KERNEL_SCAN_MAX_CGROUPS 1000000

typedef struct KernelCgroup {
        char *path;             /* "." or "A/B" */
        size_t parent;          /* index of the parent; SIZE_MAX for "." */
        unsigned level;         /* "." is 0 */
        bool gone;              /* vanished while being read: skip it and its descendants */
        bool threaded;          /* cgroup.type says "threaded" */
        char *type;             /* cgroup.type, stripped; NULL on the mount's root */
        CgMask subtree_control; /* cgroup.subtree_control: names */
        CgMask subtree_bypass;  /* ... and '#'names */
        CgMask controllers;     /* cgroup.controllers: names */
        CgMask bypassed;        /* ... and '#'names */
        unsigned nr_procs;      /* lines of cgroup.procs (threaded: cgroup.threads) */
        int max_depth, max_descendants;
        bool limits_unread;     /* below the scan's top: the two limits were not read ("max") */
        bool childless;         /* known before it is read: its parent's cgroup.stat counted no grandchild */
        bool children_childless;        /* ... what its cgroup.stat says of its own children */
        char *debug_masks;      /* debug.masks, NULL when absent */
        bool unpopulated;       /* cgroup.events: no process in it or below (not read: false) */
        int dir_fd;             /* while its children's level is read, or -1: they are opened by name from it */
} KernelCgroup;

typedef struct KernelScan {
        KernelCgroup *cgroups;  /* parents before children, siblings in creation order */
        size_t n, cap;
        CgMask builtin;         /* the controllers the model of this kernel has */
        bool mount_root;        /* "." is the root of the cgroup2 mount */
} KernelScan;

void kernel_scan_done(KernelScan *s);

/*
 * Read the hierarchy beneath @root_fd. Return: 0; -ENOMEDIUM (not cgroup2);
 * -E2BIG (limits above); -EBUSY/-EUCLEAN ("." is a cgroup below the mount
 * with processes, or not a plain domain); -errno of reading.
 */
int kernel_scan(int root_fd, const char *root, KernelScan *ret, char **reterr_msg);

/*
 * Levels of at least @min_cgroups cgroups are read by up to @threads threads
 * (default 4, at most the CPUs we may run on, from 32 cgroups): for tests.
 */
void kernel_scan_set_parallel(unsigned threads, size_t min_cgroups);

/* cgroup.max.depth and cgroup.max.descendants of the cgroup @dir_fd ("max": INT_MAX) */
int kernel_read_limits(int dir_fd, int *ret_max_depth, int *ret_max_descendants);

/*
 * Load @s into @h (pre-order, hierarchy_import()) with enable_ss_mask taken
 * from cgroup.controllers when @with_reenable, then hierarchy_check(), then
 * compare what the model derives (cgroup.controllers, cgroup.type,
 * debug.masks) with what the kernel showed. @subtree_control/@subtree_bypass/
 * @enable_ss_mask (may be NULL: the scan's) give each cgroup's masks.
 * Return: 0; -EUCLEAN with a message naming the cgroup; -ENOMEM.
 */
int kernel_scan_import(const KernelScan *s, Hierarchy *h, const CgMask *subtree_control,
                       const CgMask *subtree_bypass, const CgMask *enable_ss_mask,
                       bool verify, char **reterr_msg);

/*
 * kernel_scan() of @top ("A/B", @level components deep, known to exist) and
 * below it only; no check of the mount, no builtin mask. -ENOENT when @top
 * is gone.
 */
int kernel_scan_subtree(int root_fd, const char *root, const char *top, unsigned level, KernelScan *ret,
                        char **reterr_msg);

/*
 * Whether the cgroups of a kernel_scan_subtree() are exactly @h's below the
 * same top: none more, none less, each with the same cgroup.controllers,
 * cgroup.subtree_control, cgroup.type and number of processes.
 */
bool kernel_scan_agrees(const KernelScan *s, const Hierarchy *h);

/* Parse a cgroup.controllers / cgroup.subtree_control line: names, '#'names; unknown names ignored. */
void kernel_parse_masks(const char *s, CgMask *ret_enabled, CgMask *ret_bypassed);

/* Whether /sys/kernel/cgroup/features lists "bypass". */
bool kernel_has_bypass_feature(void);

/* ---- one model operation that can be taken back (backend-txn.c) ---- */

typedef enum TxnKind {
        TXN_NONE,               /* nothing changed */
        TXN_MKDIR,              /* undo: rmdir */
        TXN_RMDIR,              /* undo: import the cgroup again (it goes last among its siblings) */
        TXN_WRITE,              /* undo: the inverse write */
        TXN_CLONE,              /* cgroup.type has no inverse: the operation ran on a copy */
} TxnKind;

typedef struct ModelTxn {
        TxnKind kind;
        char *path;
        /* TXN_RMDIR: the state of the removed cgroup; TXN_WRITE: the masks before, to verify the undo */
        bool threaded;
        CgMask subtree_control, subtree_bypass, enable_ss_mask;
        int max_depth, max_descendants;
        /* TXN_WRITE */
        char *undo_file, *undo_value;
        /* TXN_CLONE: the model with the operation applied; the live one is unchanged */
        Hierarchy *clone;
} ModelTxn;

/*
 * Run an operation on @h (or, for cgroup.type, on a copy of it). On failure
 * nothing changed and the model's errno and reason are returned.
 */
int model_txn_mkdir(Hierarchy *h, const char *path, ModelTxn *txn, Reason *reterr_reason);
int model_txn_rmdir(Hierarchy *h, const char *path, ModelTxn *txn, Reason *reterr_reason);
int model_txn_write(Hierarchy *h, const char *path, const char *file, const char *value,
                    ModelTxn *txn, Reason *reterr_reason);
/* The model as it is after the operation: the copy, or @h. */
Hierarchy *model_txn_result(const ModelTxn *txn, Hierarchy *h);
/* Keep the operation (swapping in the copy). */
void model_txn_commit(ModelTxn *txn, Hierarchy **h);
/* Take it back. Return: 0, or -EUCLEAN when the model refused the undo (a bug). */
int model_txn_rollback(ModelTxn *txn, Hierarchy *h);
void model_txn_done(ModelTxn *txn);

/* Keep the operation if @r >= 0, take it back otherwise; then release @txn. Returns @r. */
int model_txn_finish(ModelTxn *txn, Hierarchy **h, int r);

/* Lookup with the model's reasons for failures. */
int model_lookup(const Hierarchy *h, const char *path, Cgroup **ret, Reason *reterr_reason);

#define BACKEND_MOUNTINFO "/proc/self/mountinfo"

/* -ENOMEDIUM and why, for a @cgroup_root that auto cannot use; names the cgroup2 mount of @mountinfo if elsewhere. */
int backend_not_cgroup2(const char *cgroup_root, const char *mountinfo, char **reterr_msg);
