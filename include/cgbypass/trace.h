/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Cgroup operation traces (shared/design/trace-format.md, extended as
 * docs/trace-format-extensions.md says): parse a trace, then run it on the
 * model or on a real cgroup2 directory. Both runners print the same format, so
 * their outputs compare byte for byte.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cgbypass/controller.h"
#include "cgbypass/macro.h"
#include "cgbypass/model.h"

typedef enum TraceOpType {
        TRACE_MKDIR,
        TRACE_RMDIR,
        TRACE_WRITE,
        TRACE_READ,
        TRACE_EXISTS,
        TRACE_SPAWN,
        TRACE_MOVE,
        TRACE_KILL,
        TRACE_TREE,             /* extension (b) */
        _TRACE_OP_MAX,
        _TRACE_OP_INVALID = -22,
} TraceOpType;

/* "mkdir", "rmdir", ...; NULL for an out-of-range value */
const char *trace_op_type_to_string(TraceOpType t);

typedef struct TraceOp {
        TraceOpType type;
        unsigned line;          /* 1-based line number in the trace text */
        char *path;             /* normalized relative path, "." for the root */
        char *file;             /* write, read, exists: one name */
        char *content;          /* write: the bytes of the write(2), "" when absent */
        char *label;            /* spawn, move, kill */
        Controller controller;  /* tree */
        char *text;             /* the line as written (without its newline) */
} TraceOp;

typedef struct Trace {
        char *name;             /* for FILE:LINE diagnostics ("<stdin>" for standard input) */
        TraceOp *ops;
        size_t n_ops;
} Trace;

Trace *trace_free(Trace *t);
DEFINE_POINTER_CLEANUP(Trace, trace_free);

/**
 * trace_parse() - parse a whole trace
 * @text: the trace text (NUL-terminated)
 * @name: the name used in diagnostics
 * @ret: the parsed trace
 * @reterr_msg: on -EBADMSG, a malloc'ed "NAME:LINE: reason"
 *
 * Checks everything that can be checked without running the trace: known
 * operations, field counts, path and file name syntax, controller names of
 * `tree`, and that `move`/`kill` name a label some earlier line spawns.
 * Whether a label is alive is decided while running.
 *
 * Return: 0; -EBADMSG for a malformed trace; -ENOMEM.
 */
int trace_parse(const char *text, const char *name, Trace **ret, char **reterr_msg);

/**
 * trace_read_file() - read a trace file (or standard input for "-") into memory
 * @path: the file, or "-"
 * @ret: the malloc'ed text
 *
 * Return: 0 or the negative errno of opening or reading.
 */
int trace_read_file(const char *path, char **ret);

/**
 * trace_errno_name() - the symbolic name of an errno, as traces print it
 * @err: a positive errno
 *
 * Return: "EINVAL", ..., or NULL when the table does not know it (callers
 * print "E<number>").
 */
const char *trace_errno_name(int err);

typedef struct TraceModelOptions {
        RuleSet rules;
        CgMask builtin;         /* controllers the modeled kernel has (CGMASK_VM_KERNEL) */
        bool nonroot;           /* "." is /cgb, whose parent enables every controller it can */
        bool settled;           /* the root's masks were propagated once (hierarchy_settle_root()) */
} TraceModelOptions;

/* The name of the cgroup that is "." with TraceModelOptions.nonroot. */
#define TRACE_NONROOT_NAME "cgb"

/**
 * trace_run_model() - run a trace on a freshly created model
 * @t: the trace
 * @opts: rules, controllers, nonroot
 * @out: where the result lines go
 * @reterr_msg: on failure, a malloc'ed one-line reason
 *
 * Return: 0 when every operation ran; -EBADMSG when the trace turned out
 * malformed while running (a label not alive, a file the model does not
 * implement), with "NAME:LINE: reason" in @reterr_msg; another negative errno
 * when the model could not be set up.
 */
int trace_run_model(const Trace *t, const TraceModelOptions *opts, FILE *out, char **reterr_msg);

/**
 * trace_run_kernel() - run a trace on a real cgroup2 directory
 * @t: the trace
 * @dir: the directory that is "." (a cgroup2 mount or a cgroup in one)
 * @out: where the result lines go
 * @reterr_msg: on failure, a malloc'ed one-line reason
 *
 * Processes are children of the caller. Afterwards (also after a malformed
 * trace or SIGINT/SIGTERM) every process the trace started is killed and
 * reaped, every cgroup below @dir that did not exist before is removed
 * (deepest first), and @dir's cgroup.subtree_control, cgroup.max.depth and
 * cgroup.max.descendants get their old content back. SIGINT and SIGTERM are
 * caught while it runs; see trace_kernel_caught_signal().
 *
 * Return: 0; -EBADMSG (malformed, as trace_run_model()); -EINTR when
 * interrupted by a signal; another negative errno when @dir is unusable, a
 * process cannot be started or the cleanup fails.
 */
int trace_run_kernel(const Trace *t, const char *dir, FILE *out, char **reterr_msg);

/* The signal that made the last trace_run_kernel() return -EINTR, or 0. */
int trace_kernel_caught_signal(void);

/**
 * trace_kernel_root_settled() - whether a kernel's cgroup2 root has propagated
 *                               its masks (see hierarchy_settle_root())
 * @dir: the directory trace_run_kernel() would run on
 *
 * A freshly booted kernel has not: until the root's first effective
 * cgroup.subtree_control write its subtree_ss_mask is empty and new cgroups
 * get no implicit csses. Any kernel that has run a trace that changed the
 * root has, for good. Decided by the root's debug.masks; without the debug
 * controller (where the difference cannot be seen anyway) by whether the
 * root's cgroup.subtree_control names anything. A @dir below the root counts
 * as settled, as the --nonroot model is.
 *
 * Return: 1 settled, 0 not, or a negative errno when @dir cannot be read.
 */
int trace_kernel_root_settled(const char *dir);

/**
 * trace_tree_from_csses() - render a controller's effective tree from the
 *                           debug controller's view of a directory tree
 * @ncg: number of cgroups
 * @paths: absolute paths ("/" first, then the others in pre-order)
 * @parents: index of each cgroup's parent in @paths (-1 for "/")
 * @css_ids: the cgroup's css id for the controller, or 0 when it has none
 * @css_parent_ids: the P= id of that css, or 0 when it has none
 * @ret: the lines joined by "\n", each "  " per depth then members joined by '|'
 *
 * A cgroup with a css is a node whose members are itself and the descendants
 * without one; a node hangs below the node whose css id is its P=, so a
 * kernel that links a css to the wrong parent renders differently from the
 * model. Exported so the rendering can be tested without a kernel.
 *
 * Return: 0, -EINVAL when no cgroup has a css, -ENOMEM.
 */
int trace_tree_from_csses(size_t ncg, const char *const *paths, const int *parents,
                          const int *css_ids, const int *css_parent_ids, char **ret);

/**
 * trace_generate() - a seeded random trace
 * @seed: any value; the same arguments give the same text on every machine
 * @length: number of operations
 * @opts: the model the trace is generated for (rules, controllers, nonroot):
 *        the trace is kept well-formed for it (`move` and `kill` only name
 *        labels that are alive on that model)
 * @ret: the malloc'ed trace text, starting with a comment that names the seed
 *
 * The operations come from a dozen cgroup paths up to depth 4, after a
 * prefix that builds a small tree and enables controllers at the root, and
 * are biased toward states where the rules interact (bypass under thread
 * roots, processes in bypassing cgroups, re-enabling below re-enabling).
 * The root's cgroup.procs and cgroup.threads are never read.
 *
 * Return: 0, -EINVAL (@length 0), -ENOMEM.
 */
int trace_generate(uint64_t seed, unsigned length, const TraceModelOptions *opts, char **ret);
