/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * native: a cgroup2 mount of a kernel with the bypass series. The kernel
 * answers every operation; the model follows it and must give the same
 * answer. A disagreement is a bug in the model or the port (or state that
 * changed behind our back): it is reported and the model reloaded.
 */
#include "backend-internal.h"
#include "cgroupfs.h"

typedef struct Native {
        /* the mkdirs' parents, kept for an apply's mkdirs and writes (cgroup2 has no rename); dropped at
         * every rmdir, reload and save, so they never pin removed cgroups for long */
        CgfsDirCache dirs;
} Native;

static Native *native(Backend *b) {
        return b->data;
}

static int native_load(Backend *b, Hierarchy **ret, char **reterr_msg) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        KernelScan s = {};
        int r;

        r = kernel_scan(b->root_fd, b->root, &s, reterr_msg);
        if (r < 0)
                return r;
        r = hierarchy_new(&h, RULES_BYPASS, s.builtin);
        if (r >= 0)
                r = kernel_scan_import(&s, h, NULL, NULL, NULL, true, reterr_msg);
        kernel_scan_done(&s);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(h);
        return 0;
}

static const Hierarchy *native_kernel_view(Backend *b) {
        return b->model;        /* the kernel's rules are the model's */
}

static int native_open(Backend *b, const BackendOptions *opts, char **reterr_msg) {
        int r;

        if (!kernel_has_bypass_feature())
                return backend_msg(reterr_msg, -EOPNOTSUPP,
                                   "The running kernel has no cgroup bypass mode ('bypass' is not listed in "
                                   "/sys/kernel/cgroup/features); use --backend emulated on a stock kernel");
        r = cgfs_check_cgroup2(b->root_fd, NULL);
        if (r < 0)
                return backend_msg(reterr_msg, r, "'%s' is not a cgroup2 mount", b->root);
        b->data = calloc(1, sizeof(Native));
        if (!b->data)
                return -ENOMEM;
        native(b)->dirs = (CgfsDirCache) CGFS_DIR_CACHE_INIT;
        return native_load(b, &b->model, reterr_msg);
}

static void native_done(Backend *b) {
        if (b->data)
                cgfs_dir_cache_done(&native(b)->dirs);
        free(b->data);
        b->data = NULL;
}

static int native_refresh(Backend *b, char **reterr_msg) {
        Hierarchy *h;
        int r;

        cgfs_dir_cache_done(&native(b)->dirs);
        r = native_load(b, &h, reterr_msg);
        if (r < 0)
                return r;
        hierarchy_free(b->model);
        b->model = h;
        DriftList none = {};
        backend_set_drift(b, &none);
        return 0;
}

typedef enum NativeOp {
        NATIVE_MKDIR,
        NATIVE_RMDIR,
        NATIVE_WRITE,
} NativeOp;

static int model_run(Hierarchy *h, NativeOp op, const char *path, const char *file, const char *value,
                     Reason *reterr_reason) {
        Cgroup *c;
        int r;

        switch (op) {
        case NATIVE_MKDIR:
                return hierarchy_mkdir(h, path, NULL, reterr_reason);
        case NATIVE_RMDIR:
                return hierarchy_rmdir(h, path, reterr_reason);
        case NATIVE_WRITE:
                r = model_lookup(h, path, &c, reterr_reason);
                if (r < 0)
                        return r;
                return cgroup_write(h, c, file, value, reterr_reason);
        }
        return -EINVAL;
}

static const char *const op_verb[] = { "mkdir", "rmdir", "write" };

/* The model's process counts are a snapshot: these refusals mean it is stale, not wrong. */
static bool stale_processes(int model_result, Reason reason) {
        return model_result == -EBUSY && (reason == REASON_POPULATED || reason == REASON_HAS_PROCESSES);
}

static void native_reload(Backend *b) {
        _cleanup_free_ char *msg = NULL;
        int r = native_refresh(b, &msg);
        if (r < 0)
                log_debug("Failed to reload the model from the kernel: %s", strempty(msg));
}

static int native_op(Backend *b, NativeOp op, const char *path, const char *file, const char *value,
                     Reason *reterr_reason) {
        Reason mreason = REASON_NONE;
        int k, m;

        k = backend_fault_check(b, op_verb[op], path, file, value);
        if (k < 0)
                return k;       /* an injected failure: the kernel was not asked, the model not changed */

        if (op == NATIVE_MKDIR) {
                k = backend_load_limits_above(b, path);
                if (k < 0)
                        return k;
                k = cgfs_mkdir_cached(b->root_fd, &native(b)->dirs, path, 0755);
        } else if (op == NATIVE_RMDIR) {
                cgfs_dir_cache_done(&native(b)->dirs);
                k = cgfs_rmdir(b->root_fd, path);
        } else
                k = cgfs_write_kernfs_cached(b->root_fd, &native(b)->dirs, path, file, value);

        m = model_run(b->model, op, path, file, value, &mreason);

        if (m == -ENOSYS) {
                /* a file the model does not keep (knobs, cgroup.procs): the kernel alone decides */
                if (k >= 0 && (streq_ptr(file, "cgroup.procs") || streq_ptr(file, "cgroup.threads")))
                        native_reload(b);
                return k;
        }
        if (k >= 0 && m >= 0)
                return 0;
        if (k < 0 && m < 0) {
                /* both refused, nothing changed on either side; a different errno is still a model bug */
                if (k != m)
                        backend_report_disagreement(b, op_verb[op], path, file, value, k, m);
                else if (reterr_reason)
                        *reterr_reason = mreason;
                return k;
        }
        if (k >= 0) {
                /* the kernel did it, the model refused */
                if (!stale_processes(m, mreason))
                        backend_report_disagreement(b, op_verb[op], path, file, value, k, m);
                native_reload(b);
                return 0;
        }

        /*
         * The kernel refused and the model applied it: reload (which also
         * takes the model's change back), then ask the fresh model again. If
         * it refuses too, the model only had old process counts.
         */
        native_reload(b);
        m = model_run(b->model, op, path, file, value, &mreason);
        if (m >= 0) {
                backend_report_disagreement(b, op_verb[op], path, file, value, k, 0);
                native_reload(b);
        } else if (m == k && reterr_reason)
                *reterr_reason = mreason;
        return k;
}

static int native_mkdir(Backend *b, const char *path, Reason *reterr_reason) {
        return native_op(b, NATIVE_MKDIR, path, NULL, NULL, reterr_reason);
}

static int native_rmdir(Backend *b, const char *path, Reason *reterr_reason) {
        return native_op(b, NATIVE_RMDIR, path, NULL, NULL, reterr_reason);
}

static int native_write(Backend *b, const char *path, const char *file, const char *value, Reason *reterr_reason) {
        return native_op(b, NATIVE_WRITE, path, file, value, reterr_reason);
}

static int native_read(Backend *b, const char *path, const char *file, char **ret) {
        return cgfs_read(b->root_fd, path, file, ret);
}

static int native_chown(Backend *b, const char *path, uid_t uid, gid_t gid, char *const *files) {
        return cgfs_chown(b->root_fd, path, files, uid, gid);
}

static int native_save(Backend *b) {
        /* the kernel keeps everything; the apply is over */
        cgfs_dir_cache_done(&native(b)->dirs);
        return 0;
}

const BackendVTable backend_native_vtable = {
        .open = native_open,
        .done = native_done,
        .refresh = native_refresh,
        .mkdir = native_mkdir,
        .rmdir = native_rmdir,
        .write = native_write,
        .read = native_read,
        .chown = native_chown,
        .save = native_save,
        .kernel_view = native_kernel_view,
};
