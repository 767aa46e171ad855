/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Desired state and the plan that reaches it. The planner works on a copy of
 * the model: every operation it emits has been executed there first, so a
 * plan is legal under the kernel's rules by construction, in the order it is
 * given, from the state it was computed from.
 *
 * Only what the desired state names is touched: per cgroup and controller,
 * a controller left out of a cgroup's description keeps whatever state it has.
 */

#include <stdio.h>

#include "cgbypass/model.h"

/* Where a desired setting came from, for messages: "FILE:LINE", or a bus caller. */
typedef struct Origin {
        const char *file;       /* NULL: no file (a D-Bus request) */
        unsigned line;
} Origin;

/* A controller file's desired value: "memory.max" = "4G". */
typedef struct DesiredValue {
        const char *file;
        const char *value;      /* as configured; written as it is */
        Origin origin;          /* the key */
} DesiredValue;

typedef struct DesiredCgroup {
        const char *path;       /* absolute cgroup path, normalized ("/a/b"; "/" is the root) */
        bool create;            /* mkdir it (and missing parents that are also desired) */
        /* cgroup.subtree_control: each controller in at most one of the three */
        CgMask sc_enable, sc_bypass, sc_disable;
        /* cgroup.controllers: re-enabled for itself ('+') or back to bypass ('#') */
        CgMask ctl_enable, ctl_bypass;
        Origin origin;          /* the section */
        Origin sc_origin;       /* the subtree-control key */
        Origin ctl_origin;      /* the controllers key */
        /* controller files to set, after the cgroup's controllers are as desired */
        const DesiredValue *values;
        size_t n_values;
} DesiredCgroup;

typedef enum PlanOpType {
        PLAN_OP_MKDIR,
        PLAN_OP_WRITE,
} PlanOpType;

typedef struct PlanOp {
        PlanOpType type;
        char *path;             /* relative to the cgroup root, as in traces: "a/b", "." */
        char *file;             /* PLAN_OP_WRITE: "cgroup.subtree_control" or "cgroup.controllers" */
        char *value;            /* PLAN_OP_WRITE: "+cpu #io" */
        char *undo;             /* PLAN_OP_WRITE: the write that restores the state before */
        size_t desired;         /* index of the DesiredCgroup this serves */
        /*
         * A value of a controller file (memory.max): written only when the file
         * shows something else when its turn comes; its undo is found then.
         */
        bool if_differs;
} PlanOp;

typedef struct Plan {
        PlanOp *ops;
        size_t n_ops;
} Plan;

Plan *plan_free(Plan *p);
DEFINE_POINTER_CLEANUP(Plan, plan_free);

/* One reason the desired state cannot be reached, tied to where it was asked for. */
typedef struct PolicyError {
        Origin origin;
        char *message;          /* "/srv/a: controllers +memory: the parent does not bypass memory" */
} PolicyError;

typedef struct PolicyErrors {
        PolicyError *errors;
        size_t n;
} PolicyErrors;

void policy_errors_done(PolicyErrors *e);

/**
 * policy_plan() - the operations that take @current to @want
 * @current: the hierarchy as it is now (bypass or stock rules)
 * @want: desired cgroups; parents before children is not required
 * @n_want: number of entries
 * @ret: the plan (empty when in sync), set only on success
 * @errors: every problem found (appended to), when it fails with -EINVAL
 *
 * Order: mkdir parents before children; changes that need a cgroup's
 * children clean (disabling, switching between enabled and bypassed, going
 * back to bypass) bottom-up; enabling, bypassing and re-enabling top-down.
 * A managed cgroup below a change may be cleared and set up again; a cgroup
 * the desired state does not name is never written, and if the change needs
 * it cleared, that is an error.
 *
 * Values of controller files come last, in pre-order, once every control
 * write has made the files appear; a file the cgroup will not have (its
 * controller bypassed or not enabled there, the root, a file the kernel
 * lacks) and a value the kernel refuses given the cgroup's other values are
 * errors at the value's origin. Value writes are PlanOp.if_differs.
 *
 * Return: 0; -EINVAL when @want cannot be reached (see @errors); -ENOMEM.
 */
int policy_plan(const Hierarchy *current, const DesiredCgroup *want, size_t n_want,
                Plan **ret, PolicyErrors *errors);

/**
 * policy_plan_scope() - policy_plan() for the entries of one subtree
 * @scope: an existing cgroup; every entry of @want is at or below it
 *
 * The same plan and errors as policy_plan(), vetted on a copy of @scope's
 * subtree and its ancestors only (hierarchy_clone_scope()), so its cost does
 * not grow with the rest of the hierarchy. If @scope does not exist or an
 * entry lies outside it, the whole hierarchy is copied.
 */
int policy_plan_scope(const Hierarchy *current, const char *scope, const DesiredCgroup *want, size_t n_want,
                      Plan **ret, PolicyErrors *errors);

/**
 * plan_execute_model() - run a plan on a model, as a check or to follow a backend
 *
 * Return: 0, or the first failing operation's -errno with its index in @reterr_index.
 */
int plan_execute_model(const Plan *p, Hierarchy *h, size_t *reterr_index, Reason *reterr_reason);

/*
 * Whether running @p can make interface files appear: a mkdir, or a '+' in a
 * write of cgroup.subtree_control or cgroup.controllers (a '#' or '-' only
 * takes files away); any other write counts as one that may.
 */
bool plan_may_add_files(const Plan *p);

/* Print the plan in the trace format (mkdir/write lines). */
void plan_print(const Plan *p, FILE *f);

typedef struct Backend Backend;

/**
 * plan_drop_in_sync() - leave out the value writes that would change nothing
 * @p: a plan from policy_plan()
 * @b: the backend it will run on
 *
 * A value write is dropped when its file shows that value already (read
 * through @b, compared as the kernel normalizes: "4G" is "4294967296") and
 * no earlier operation of @p may make or replace its css (a mkdir of the
 * cgroup or a parent, a control write above it naming the file's controller:
 * then plan_apply() decides when the write's turn comes). An empty plan then
 * means in sync.
 *
 * Return: 0, -ENOMEM.
 */
int plan_drop_in_sync(Plan *p, Backend *b);

/*
 * plan_load_limits() - backend_load_limits_above() for each mkdir of @p
 *
 * Return: how many cgroups' limits were read: when not 0, the plan was made
 * with limits the model did not know, and is to be made again; -errno.
 */
int plan_load_limits(const Plan *p, Backend *b);

/* A difference between desired and found state, for drift reports. */
typedef struct Drift {
        char *path;             /* absolute cgroup path */
        const char *file;       /* "cgroup.subtree_control", "cgroup.controllers", or NULL: missing cgroup */
        Controller controller;
        const char *expected;   /* "enabled", "bypassed", "disabled", "re-enabled", "exists" */
        const char *found;
} Drift;

/**
 * policy_drift() - every managed setting that differs from @want
 * @ret: array of differences (free with drift_free_array()), set only on success
 *
 * Return: 0 or -ENOMEM.
 */
int policy_drift(const Hierarchy *h, const DesiredCgroup *want, size_t n_want, Drift **ret, size_t *ret_n);
void drift_free_array(Drift *d, size_t n);

/* Words for a refusal: "the parent does not bypass memory" (no path, no trailing period). */
const char *policy_reason_text(int error, Reason reason);

/* What plan_apply() did when it failed. */
typedef struct ApplyFailure {
        size_t index;           /* the operation that failed */
        int error;              /* the kernel's -errno for it */
        Reason reason;
        size_t undone;          /* operations undone, in reverse */
        int undo_error;         /* 0, or the -errno of the first undo that failed */
        size_t undo_index;      /* which operation that undo was for */
} ApplyFailure;

/**
 * plan_apply() - execute a plan through a backend, all or nothing
 * @p: the plan, computed from the backend's current model
 * @b: the backend
 * @reterr: details when it fails
 *
 * Operations run in order. When one fails, the ones already made are undone
 * in reverse order (a write by writing its undo value, a mkdir by rmdir), so
 * the hierarchy is as before. A value write (PlanOp.if_differs) reads its file
 * first and is skipped when the file already shows the value; otherwise
 * what the file showed becomes its undo (PlanOp.undo, kept for
 * plan_unapply(); NULL when it was skipped). Return: 0; the failing operation's
 * -errno (then @reterr says what happened, including an undo that failed too).
 */
int plan_apply(Plan *p, Backend *b, ApplyFailure *reterr);

/**
 * plan_unapply() - take back a plan that plan_apply() made in full
 *
 * By the plan's own inverse operations, in reverse, never by planning
 * again: what the plan changed and a new plan would leave alone (a
 * controller no configuration names) goes back too. For a change whose
 * record could not be written. Return: 0, the hierarchy is as before the
 * plan; the -errno of the first undo that failed (@reterr: which one, and
 * how many were undone before it), the hierarchy is then between the two.
 */
int plan_unapply(const Plan *p, Backend *b, ApplyFailure *reterr);
