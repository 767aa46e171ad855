/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/strbuf.h"
#include "trace-internal.h"

typedef struct Label {
        const char *name;       /* borrowed from the trace */
        long proc;
        bool alive;
        unsigned line;          /* of the spawn, kill or failed spawn that set @alive */
        TraceOpType how;
} Label;

typedef struct Labels {
        Label *v;
        size_t n;
} Labels;

static Label *labels_find(Labels *ls, const char *name) {
        for (size_t i = 0; i < ls->n; i++)
                if (streq(ls->v[i].name, name))
                        return &ls->v[i];
        return NULL;
}

static Label *labels_get(Labels *ls, const char *name) {
        Label *l = labels_find(ls, name);
        if (l)
                return l;
        Label *v = reallocarray(ls->v, ls->n + 1, sizeof(Label));
        if (!v)
                return NULL;
        ls->v = v;
        l = &v[ls->n++];
        *l = (Label) { .name = name, .proc = -1 };
        return l;
}

static const char *labels_name_of(const Labels *ls, long proc) {
        for (size_t i = 0; i < ls->n; i++)
                if (ls->v[i].alive && ls->v[i].proc == proc)
                        return ls->v[i].name;
        return NULL;
}

void trace_outcome_done(TraceOutcome *o) {
        free(o->text);
        free(o->procs);
        *o = (TraceOutcome) {};
}

/* a file's content as one output line: newlines become " | ", the last one is dropped */
static void append_flattened(StrBuf *b, const char *text) {
        size_t len = strlen(text);

        if (len > 0 && text[len - 1] == '\n')
                len--;
        for (size_t i = 0; i < len; i++) {
                if (text[i] == '\n')
                        strbuf_append(b, " | ");
                else
                        strbuf_putc(b, text[i]);
        }
}

typedef struct ProcName {
        const char *label;      /* NULL: not spawned by the trace, print the number */
        long proc;
} ProcName;

static int proc_name_cmp(const void *a, const void *b) {
        const ProcName *x = a, *y = b;

        /* labels first, sorted with strcmp; then foreign pids, numerically */
        if (x->label && y->label)
                return strcmp(x->label, y->label);
        if (x->label || y->label)
                return x->label ? -1 : 1;
        return (x->proc > y->proc) - (x->proc < y->proc);
}

static int append_procs(StrBuf *b, const Labels *ls, const long *procs, size_t n) {
        _cleanup_free_ ProcName *v = calloc(n ?: 1, sizeof(ProcName));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                v[i] = (ProcName) { .label = labels_name_of(ls, procs[i]), .proc = procs[i] };
        qsort(v, n, sizeof(ProcName), proc_name_cmp);
        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        strbuf_append(b, " | ");
                if (v[i].label)
                        strbuf_append(b, v[i].label);
                else
                        strbuf_printf(b, "%ld", v[i].proc);
        }
        return 0;
}

static int malformed(const Trace *t, const TraceOp *op, char **reterr_msg, const char *fmt, ...)
        _printf_(4, 5);
static int malformed(const Trace *t, const TraceOp *op, char **reterr_msg, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;

        va_start(ap, fmt);
        int r = vasprintf(&reason, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (reterr_msg) {
                *reterr_msg = trace_strdupf("%s:%u: %s", t->name, op->line, reason);
                if (!*reterr_msg)
                        return -ENOMEM;
        }
        return -EBADMSG;
}

static const char *label_state(const Label *l) {
        switch (l->how) {
        case TRACE_SPAWN:
                return l->alive ? "spawned" : "its spawn failed";
        case TRACE_KILL:
                return "killed";
        default:
                return "seen";
        }
}

int trace_execute(const Trace *t, const TraceBackend *b, void *userdata, FILE *out, char **reterr_msg) {
        Labels labels = {};
        int r = 0;

        for (size_t i = 0; i < t->n_ops; i++) {
                const TraceOp *op = &t->ops[i];
                TraceOutcome o = {};
                Label *l = NULL;
                long proc = -1;
                char ebuf[16];

                if (b->interrupted && b->interrupted(userdata)) {
                        r = -EINTR;
                        goto finish;
                }

                if (op->label) {
                        l = labels_get(&labels, op->label);
                        if (!l) {
                                r = -ENOMEM;
                                goto finish;
                        }
                }
                if (op->type == TRACE_SPAWN && l->alive) {
                        r = malformed(t, op, reterr_msg, "spawn of '%s', which is still alive (spawned on line %u)",
                                      l->name, l->line);
                        goto finish;
                }
                if (op->type == TRACE_MOVE || op->type == TRACE_KILL) {
                        if (!l->alive) {
                                r = l->line == 0 ?
                                        malformed(t, op, reterr_msg, "%s of unknown label '%s'",
                                                  trace_op_type_to_string(op->type), l->name) :
                                        malformed(t, op, reterr_msg, "%s of '%s', which is not alive (%s on line %u)",
                                                  trace_op_type_to_string(op->type), l->name, label_state(l),
                                                  l->line);
                                goto finish;
                        }
                        proc = l->proc;
                }

                _cleanup_free_ char *msg = NULL;
                r = b->run(userdata, op, proc, &o, &msg);
                if (r == -EBADMSG) {
                        r = malformed(t, op, reterr_msg, "%s", strempty(msg));
                        goto finish;
                }
                if (r < 0) {
                        if (reterr_msg)
                                *reterr_msg = TAKE_PTR(msg);
                        goto finish;
                }

                StrBuf line = STRBUF_INIT;
                strbuf_printf(&line, "%u ", op->line);
                if (o.error) {
                        strbuf_printf(&line, "error %s", trace_errno_format(o.error, ebuf));
                        if (op->type == TRACE_SPAWN) {
                                l->alive = false;
                                l->line = op->line;
                                l->how = TRACE_SPAWN;
                        }
                } else {
                        switch (op->type) {
                        case TRACE_READ:
                                strbuf_append(&line, "= ");
                                if (o.has_procs)
                                        r = append_procs(&line, &labels, o.procs, o.n_procs);
                                else
                                        append_flattened(&line, strempty(o.text));
                                break;
                        case TRACE_TREE:
                                strbuf_append(&line, "= ");
                                append_flattened(&line, strempty(o.text));
                                break;
                        case TRACE_EXISTS:
                                strbuf_append(&line, o.exists ? "= yes" : "= no");
                                break;
                        case TRACE_SPAWN:
                                l->alive = true;
                                l->proc = o.spawned;
                                l->line = op->line;
                                l->how = TRACE_SPAWN;
                                strbuf_append(&line, "ok");
                                break;
                        case TRACE_KILL:
                                l->alive = false;
                                l->line = op->line;
                                l->how = TRACE_KILL;
                                strbuf_append(&line, "ok");
                                break;
                        default:
                                strbuf_append(&line, "ok");
                        }
                }
                trace_outcome_done(&o);
                strbuf_putc(&line, '\n');

                _cleanup_free_ char *s = NULL;
                int k = strbuf_steal(&line, &s);
                if (r >= 0)
                        r = k;
                if (r < 0)
                        goto finish;
                if (fputs(s, out) == EOF || fflush(out) == EOF) {
                        r = -errno ?: -EIO;
                        if (reterr_msg)
                                *reterr_msg = trace_strdupf("Failed to write the output: %s", strerror(-r));
                        goto finish;
                }
        }

finish:
        free(labels.v);
        return r;
}
