/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/strbuf.h"
#include "trace-internal.h"

typedef struct ModelRun {
        Hierarchy *h;
        bool nonroot;
} ModelRun;

char *trace_model_path(bool nonroot, const char *path) {
        if (!nonroot)
                return strdup(path);
        if (streq(path, "."))
                return strdup(TRACE_NONROOT_NAME);
        return trace_strdupf("%s/%s", TRACE_NONROOT_NAME, path);
}

static int model_lookup(const ModelRun *m, const char *path, Cgroup **ret) {
        _cleanup_free_ char *p = trace_model_path(m->nonroot, path);
        if (!p)
                return -ENOMEM;
        return hierarchy_lookup(m->h, p, ret);
}

static bool is_procs_file(const char *file, bool *ret_threadgroup) {
        if (streq(file, "cgroup.procs"))
                *ret_threadgroup = true;
        else if (streq(file, "cgroup.threads"))
                *ret_threadgroup = false;
        else
                return false;
        return true;
}

/*
 * With --nonroot the model's tree starts at the real root; the kernel runner
 * sees only DIR. Keep the node holding /cgb and the nodes below it, drop
 * members outside /cgb, and rename /cgb to "/".
 */
static int tree_rebase(const char *text, char **ret) {
        static const char prefix[] = "/" TRACE_NONROOT_NAME;
        const size_t plen = sizeof(prefix) - 1;
        StrBuf b = STRBUF_INIT;
        long base = -1;
        bool first = true;

        for (const char *s = text; *s;) {
                size_t len = strcspn(s, "\n");
                size_t indent = strspn(s, " ");
                long depth = (long) (indent / 2);
                const char *members = s + indent, *end = s + len;
                bool has_cgb = false;

                for (const char *p = members; p < end;) {
                        size_t n = strcspn(p, "|\n");
                        if (n == plen && strncmp(p, prefix, plen) == 0)
                                has_cgb = true;
                        p += n + 1;
                }
                if (base < 0 && has_cgb)
                        base = depth;
                else if (base >= 0 && depth <= base)
                        base = -2;      /* left the subtree */

                if (base >= 0) {
                        bool any = false;
                        if (!first)
                                strbuf_putc(&b, '\n');
                        first = false;
                        for (long i = 0; i < depth - base; i++)
                                strbuf_append(&b, "  ");
                        for (const char *p = members; p < end;) {
                                size_t n = strcspn(p, "|\n");
                                if (n >= plen && strncmp(p, prefix, plen) == 0 && (n == plen || p[plen] == '/')) {
                                        if (any)
                                                strbuf_putc(&b, '|');
                                        if (n == plen)
                                                strbuf_putc(&b, '/');
                                        else
                                                strbuf_append_n(&b, p + plen, n - plen);
                                        any = true;
                                }
                                p += n + 1;
                        }
                }
                if (base == -2)
                        break;
                s = *end ? end + 1 : end;
        }
        return strbuf_steal(&b, ret);
}

static int model_run_op(void *userdata, const TraceOp *op, long proc, TraceOutcome *o, char **reterr_msg) {
        ModelRun *m = userdata;
        Cgroup *c = NULL;
        bool threadgroup;
        int r;

        switch (op->type) {
        case TRACE_MKDIR: {
                _cleanup_free_ char *p = trace_model_path(m->nonroot, op->path);
                if (!p)
                        return -ENOMEM;
                r = hierarchy_mkdir(m->h, p, NULL, NULL);
                break;
        }
        case TRACE_RMDIR: {
                /* the VFS refuses rmdir("."), whatever "." is (do_rmdir()) */
                if (streq(op->path, ".")) {
                        r = -EINVAL;
                        break;
                }
                _cleanup_free_ char *p = trace_model_path(m->nonroot, op->path);
                if (!p)
                        return -ENOMEM;
                r = hierarchy_rmdir(m->h, p, NULL);
                break;
        }
        case TRACE_WRITE:
                r = model_lookup(m, op->path, &c);
                if (r < 0)
                        break;
                r = cgroup_write(m->h, c, op->file, op->content, NULL);
                /* a controller's knob: the model keeps its value (model-values.c) */
                if (r == -ENOSYS)
                        r = cgroup_value_write(m->h, c, op->file, op->content, NULL);
                if (r == -ENOSYS) {
                        *reterr_msg = trace_strdupf("the model does not implement writes to '%s'", op->file);
                        return *reterr_msg ? -EBADMSG : -ENOMEM;
                }
                break;
        case TRACE_READ:
                r = model_lookup(m, op->path, &c);
                if (r < 0)
                        break;
                if (is_procs_file(op->file, &threadgroup)) {
                        _cleanup_free_ ProcId *ids = NULL;
                        size_t n = 0;

                        if (!cgroup_has_file(m->h, c, op->file)) {
                                r = -ENOENT;
                                break;
                        }
                        r = cgroup_get_procs(m->h, c, threadgroup, &ids, &n);
                        if (r < 0)
                                break;
                        o->procs = calloc(n ?: 1, sizeof(long));
                        if (!o->procs)
                                return -ENOMEM;
                        for (size_t i = 0; i < n; i++)
                                o->procs[i] = (long) ids[i];
                        o->n_procs = n;
                        o->has_procs = true;
                        break;
                }
                r = cgroup_read(m->h, c, op->file, &o->text);
                if (r == -ENOSYS)
                        r = cgroup_value_read(m->h, c, op->file, &o->text);
                if (r == -ENOSYS) {
                        *reterr_msg = trace_strdupf("the model does not implement reads of '%s'", op->file);
                        return *reterr_msg ? -EBADMSG : -ENOMEM;
                }
                break;
        case TRACE_EXISTS:
                /* extension (c): a missing cgroup holds no files */
                o->exists = model_lookup(m, op->path, &c) >= 0 && cgroup_has_file(m->h, c, op->file);
                r = 0;
                break;
        case TRACE_SPAWN: {
                ProcId id;

                r = model_lookup(m, op->path, &c);
                if (r < 0)
                        break;
                r = hierarchy_spawn(m->h, c, &id, NULL);
                if (r >= 0)
                        o->spawned = (long) id;
                break;
        }
        case TRACE_MOVE:
                r = model_lookup(m, op->path, &c);
                if (r < 0)
                        break;
                r = hierarchy_move(m->h, (ProcId) proc, c, true, NULL);
                break;
        case TRACE_KILL:
                r = hierarchy_kill(m->h, (ProcId) proc);
                break;
        case TRACE_TREE: {
                _cleanup_free_ char *text = NULL;

                r = hierarchy_effective_tree(m->h, op->controller, &text);
                if (r < 0)
                        break;
                if (m->nonroot) {
                        r = tree_rebase(text, &o->text);
                        if (r < 0)
                                return r;
                } else
                        o->text = TAKE_PTR(text);
                break;
        }
        default:
                return -EINVAL;
        }

        if (r == -ENOMEM)
                return r;
        o->error = r < 0 ? -r : 0;
        return 0;
}

static const TraceBackend model_backend = {
        .run = model_run_op,
};

/* --nonroot: /cgb below a root whose subtree_control enables all it can (a host scratch cgroup) */
static int model_setup_nonroot(Hierarchy *h, char **reterr_msg) {
        Cgroup *root = hierarchy_root(h), *c;
        StrBuf b = STRBUF_INIT;
        int r;

        FOREACH_CONTROLLER_IN(ctrl, cgroup_get_controllers(h, root)) {
                strbuf_printf(&b, "%s+%s", b.len ? " " : "", controller_to_string(ctrl));
        }
        _cleanup_free_ char *buf = NULL;
        r = strbuf_steal(&b, &buf);
        if (r < 0)
                return r;

        r = hierarchy_mkdir(h, TRACE_NONROOT_NAME, &c, NULL);
        if (r >= 0 && *buf)
                r = cgroup_write(h, root, "cgroup.subtree_control", buf, NULL);
        if (r < 0) {
                *reterr_msg = trace_strdupf("Failed to set up the model's /%s ('%s'): %s",
                                            TRACE_NONROOT_NAME, buf, strerror(-r));
                return r;
        }
        return 0;
}

int trace_model_hierarchy_new(const TraceModelOptions *opts, Hierarchy **ret, char **reterr_msg) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        int r;

        r = hierarchy_new(&h, opts->rules, opts->builtin);
        if (r < 0) {
                if (reterr_msg)
                        *reterr_msg = trace_strdupf("Failed to create the model: %s", strerror(-r));
                return r;
        }
        if (opts->settled)
                hierarchy_settle_root(h);
        if (opts->nonroot) {
                _cleanup_free_ char *msg = NULL;
                r = model_setup_nonroot(h, &msg);
                if (r < 0) {
                        if (reterr_msg)
                                *reterr_msg = TAKE_PTR(msg);
                        return r;
                }
        }
        *ret = TAKE_PTR(h);
        return 0;
}

int trace_run_model(const Trace *t, const TraceModelOptions *opts, FILE *out, char **reterr_msg) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        _cleanup_free_ char *msg = NULL;
        int r;

        r = trace_model_hierarchy_new(opts, &h, reterr_msg);
        if (r < 0)
                return r;

        ModelRun m = { .h = h, .nonroot = opts->nonroot };
        r = trace_execute(t, &model_backend, &m, out, &msg);
        if (r < 0 && reterr_msg)
                *reterr_msg = TAKE_PTR(msg);
        return r < 0 ? r : 0;
}
