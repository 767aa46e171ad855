/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/fileio.h"
#include "cgbypass/strbuf.h"
#include "cgbypass/trace.h"
#include "trace-internal.h"

/* Each operation: its name, the fields after it (write's CONTENT is extra) and how many are required. */
static const struct {
        const char *name;
        const char *usage;
        unsigned nfields;
} op_info[_TRACE_OP_MAX] = {
        [TRACE_MKDIR]  = { "mkdir",  "PATH",                1 },
        [TRACE_RMDIR]  = { "rmdir",  "PATH",                1 },
        [TRACE_WRITE]  = { "write",  "PATH FILE [CONTENT]", 2 },
        [TRACE_READ]   = { "read",   "PATH FILE",           2 },
        [TRACE_EXISTS] = { "exists", "PATH FILE",           2 },
        [TRACE_SPAWN]  = { "spawn",  "LABEL PATH",          2 },
        [TRACE_MOVE]   = { "move",   "LABEL PATH",          2 },
        [TRACE_KILL]   = { "kill",   "LABEL",               1 },
        [TRACE_TREE]   = { "tree",   "CONTROLLER",          1 },
};

const char *trace_op_type_to_string(TraceOpType t) {
        if (t < 0 || t >= _TRACE_OP_MAX)
                return NULL;
        return op_info[t].name;
}

char *trace_vstrdupf(const char *fmt, va_list ap) {
        char *s;

        return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

char *trace_strdupf(const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        s = trace_vstrdupf(fmt, ap);
        va_end(ap);
        return s;
}

static void trace_op_done(TraceOp *op) {
        free(op->path);
        free(op->file);
        free(op->content);
        free(op->label);
        free(op->text);
}

Trace *trace_free(Trace *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_ops; i++)
                trace_op_done(&t->ops[i]);
        free(t->ops);
        free(t->name);
        free(t);
        return NULL;
}

/*
 * Paths must be spelled the one way both runners resolve alike: the kernel
 * runner would follow "..", "//" or a leading "/" where the model refuses
 * them, so such a trace is malformed rather than a difference.
 */
static const char *path_problem(const char *p) {
        const char *why = NULL;

        (void) cgpath_verify(p, CGPATH_RELATIVE, &why);
        return why;
}

static const char *file_problem(const char *f) {
        if (strchr(f, '/'))
                return "a file name has no '/'";
        if (streq(f, ".") || streq(f, ".."))
                return "not a file name";
        return NULL;
}

typedef struct Parser {
        const char *name;
        unsigned line;
        char *msg;
} Parser;

static int parser_fail(Parser *p, const char *fmt, ...) _printf_(2, 3);
static int parser_fail(Parser *p, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;

        va_start(ap, fmt);
        reason = trace_vstrdupf(fmt, ap);
        va_end(ap);
        if (!reason)
                return -ENOMEM;
        free(p->msg);
        p->msg = trace_strdupf("%s:%u: %s", p->name, p->line, reason);
        return p->msg ? -EBADMSG : -ENOMEM;
}

static bool label_spawned_before(const Trace *t, const char *label) {
        for (size_t i = 0; i < t->n_ops; i++)
                if (t->ops[i].type == TRACE_SPAWN && streq(t->ops[i].label, label))
                        return true;
        return false;
}

/* @s: one line without its newline, after leading blanks */
static int parse_op(Parser *p, const Trace *t, const char *s, TraceOp *op) {
        char *fields[2] = {};
        const char *rest;
        size_t n = strcspn(s, " ");
        int r;

        _cleanup_free_ char *opname = strndup(s, n);
        if (!opname)
                return -ENOMEM;
        rest = s[n] ? s + n + 1 : NULL;

        op->type = _TRACE_OP_INVALID;
        for (TraceOpType i = 0; i < _TRACE_OP_MAX; i++)
                if (streq(opname, op_info[i].name))
                        op->type = i;
        if (op->type < 0)
                return parser_fail(p, "unknown operation '%s'", opname);

        unsigned want = op_info[op->type].nfields;
        for (unsigned i = 0; i < want; i++) {
                if (!rest) {
                        r = parser_fail(p, "'%s' needs %s", opname, op_info[op->type].usage);
                        goto fail;
                }
                n = strcspn(rest, " ");
                if (n == 0) {
                        r = parser_fail(p, "empty field in '%s' (fields are separated by single spaces)", opname);
                        goto fail;
                }
                fields[i] = strndup(rest, n);
                if (!fields[i]) {
                        r = -ENOMEM;
                        goto fail;
                }
                rest = rest[n] ? rest + n + 1 : NULL;
        }

        if (op->type == TRACE_WRITE) {
                /* CONTENT is the rest of the line; absent means an empty write(2) */
                op->content = strdup(rest ?: "");
                if (!op->content) {
                        r = -ENOMEM;
                        goto fail;
                }
        } else if (rest) {
                r = parser_fail(p, "'%s' takes %s, then nothing", opname, op_info[op->type].usage);
                goto fail;
        }

        switch (op->type) {
        case TRACE_MKDIR:
        case TRACE_RMDIR:
                op->path = TAKE_PTR(fields[0]);
                break;
        case TRACE_WRITE:
        case TRACE_READ:
        case TRACE_EXISTS:
                op->path = TAKE_PTR(fields[0]);
                op->file = TAKE_PTR(fields[1]);
                break;
        case TRACE_SPAWN:
        case TRACE_MOVE:
                op->label = TAKE_PTR(fields[0]);
                op->path = TAKE_PTR(fields[1]);
                break;
        case TRACE_KILL:
                op->label = TAKE_PTR(fields[0]);
                break;
        case TRACE_TREE:
                op->controller = controller_from_string(fields[0]);
                if (op->controller < 0) {
                        r = parser_fail(p, "unknown controller '%s'", fields[0]);
                        goto fail;
                }
                break;
        default:
                break;
        }

        const char *why;
        if (op->path && (why = path_problem(op->path))) {
                r = parser_fail(p, "bad path '%s': %s", op->path, why);
                goto fail;
        }
        if (op->file && (why = file_problem(op->file))) {
                r = parser_fail(p, "bad file name '%s': %s", op->file, why);
                goto fail;
        }
        if ((op->type == TRACE_MOVE || op->type == TRACE_KILL) && !label_spawned_before(t, op->label)) {
                r = parser_fail(p, "'%s' of unknown label '%s' (no earlier spawn)", opname, op->label);
                goto fail;
        }
        r = 0;

fail:
        free(fields[0]);
        free(fields[1]);
        return r;
}

int trace_parse(const char *text, const char *name, Trace **ret, char **reterr_msg) {
        _cleanup_(trace_freep) Trace *t = NULL;
        Parser p = { .name = name };
        size_t cap = 0;
        int r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->name = strdup(name);
        if (!t->name)
                return -ENOMEM;

        for (const char *s = text; *s;) {
                size_t len = strcspn(s, "\n");
                _cleanup_free_ char *line = strndup(s, len);
                if (!line)
                        return -ENOMEM;
                s += len + (s[len] == '\n');
                p.line++;

                const char *b = line + strspn(line, " \t");
                if (!*b || *b == '#')
                        continue;

                if (t->n_ops == cap) {
                        cap = cap ? cap * 2 : 32;
                        TraceOp *ops = reallocarray(t->ops, cap, sizeof(TraceOp));
                        if (!ops)
                                return -ENOMEM;
                        t->ops = ops;
                }
                TraceOp *op = &t->ops[t->n_ops];
                *op = (TraceOp) { .line = p.line };
                r = parse_op(&p, t, b, op);
                if (r < 0) {
                        trace_op_done(op);
                        if (r == -EBADMSG && reterr_msg)
                                *reterr_msg = TAKE_PTR(p.msg);
                        free(p.msg);
                        return r;
                }
                op->text = TAKE_PTR(line);
                t->n_ops++;
        }

        *ret = TAKE_PTR(t);
        return 0;
}

int trace_read_file(const char *path, char **ret) {
        _cleanup_close_ int fd = streq(path, "-") ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return file_read_fd(fd, SIZE_MAX, FILE_READ_NO_NUL, ret);
}
