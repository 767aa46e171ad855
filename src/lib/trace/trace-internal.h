/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The part of running a trace that both runners share: label bookkeeping,
 * the output format and the diagnostics. A backend only performs one
 * operation at a time and reports its outcome.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "cgbypass/trace.h"

/* What one operation did. */
typedef struct TraceOutcome {
        int error;              /* 0 = ok, else a positive errno (printed as "error ENAME") */
        char *text;             /* read, tree: malloc'ed content, '\n'-separated lines */
        bool exists;            /* exists */
        long *procs;            /* read of cgroup.procs/cgroup.threads: process ids */
        size_t n_procs;
        bool has_procs;         /* print @procs instead of @text */
        long spawned;           /* spawn: the new process's id */
} TraceOutcome;

typedef struct TraceBackend {
        /*
         * Runs @op. Returns 0 when the operation ran (its result in @out),
         * -EBADMSG when the trace cannot run here (message in *reterr_msg,
         * without the NAME:LINE: prefix), another negative errno for a
         * failure of the runner itself (message in *reterr_msg).
         * For move and kill, @proc is the process's id; else -1.
         */
        int (*run)(void *userdata, const TraceOp *op, long proc, TraceOutcome *out, char **reterr_msg);
        /* Whether SIGINT/SIGTERM asked us to stop (may be NULL). */
        bool (*interrupted)(void *userdata);
} TraceBackend;

/**
 * trace_execute() - run @t on a backend, printing one line per operation
 *
 * Return: 0, -EBADMSG (with "NAME:LINE: reason"), -EINTR, or a backend failure.
 */
int trace_execute(const Trace *t, const TraceBackend *b, void *userdata, FILE *out, char **reterr_msg);

void trace_outcome_done(TraceOutcome *o);

/* "N error ENAME" and friends share this: "EINVAL" or "E<n>" into @buf. */
const char *trace_errno_format(int err, char buf[static 16]);

/**
 * trace_csses_find() - a controller's css in the text of debug.csses
 * @text: the file (kernel/cgroup/debug.c: "%2d: %-4s\t- %p[%d] %d%s", %s = " P=%d" or "")
 * @ctrl: the controller's name
 * @ret_id: the css id, 0 when the cgroup has no css of @ctrl
 * @ret_parent: the P= id, 0 when the css has no parent
 *
 * Return: 1 found, 0 not found, -EBADMSG for a line that names @ctrl but cannot be parsed.
 */
int trace_csses_find(const char *text, const char *ctrl, int *ret_id, int *ret_parent);

/* the model's path of a trace path: with nonroot, "." is /cgb (malloc'ed, NULL on OOM) */
char *trace_model_path(bool nonroot, const char *path);

/* a fresh model as trace_run_model() runs on, --nonroot base included */
int trace_model_hierarchy_new(const TraceModelOptions *opts, Hierarchy **ret, char **reterr_msg);

/* malloc'ed printf, NULL on OOM */
char *trace_strdupf(const char *fmt, ...) _printf_(1, 2);
char *trace_vstrdupf(const char *fmt, va_list ap) _printf_(1, 0);
