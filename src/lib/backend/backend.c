/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backend registry: type names, auto-detection, the state directory and
 * its lock, argument checks shared by every backend, and dispatch.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "backend-internal.h"
#include "cgbypass/cgpath.h"
#include "cgbypass/strbuf.h"
#include "cgroupfs.h"

static const char *const backend_type_table[_BACKEND_TYPE_MAX] = {
        [BACKEND_AUTO] = "auto",
        [BACKEND_NATIVE] = "native",
        [BACKEND_EMULATED] = "emulated",
        [BACKEND_SIM] = "sim",
};

const char *backend_type_to_string(BackendType t) {
        if (t < 0 || t >= _BACKEND_TYPE_MAX)
                return NULL;
        return backend_type_table[t];
}

BackendType backend_type_from_string(const char *s) {
        for (BackendType t = 0; t < _BACKEND_TYPE_MAX; t++)
                if (streq_ptr(backend_type_table[t], s))
                        return t;
        return _BACKEND_TYPE_INVALID;
}

static const BackendVTable *const vtables[_BACKEND_TYPE_MAX] = {
        [BACKEND_NATIVE] = &backend_native_vtable,
        [BACKEND_EMULATED] = &backend_emulated_vtable,
        [BACKEND_SIM] = &backend_sim_vtable,
};

int backend_msg(char **reterr_msg, int error, const char *fmt, ...) {
        va_list ap;

        if (!reterr_msg || *reterr_msg)
                return error;   /* the first, most specific message wins */
        va_start(ap, fmt);
        if (vasprintf(reterr_msg, fmt, ap) < 0)
                *reterr_msg = NULL;
        va_end(ap);
        return error;
}

char *backend_op_string(const char *verb, const char *path, const char *file, const char *value) {
        char *s;
        int r;

        if (file)
                r = asprintf(&s, "%s %s %s %s", verb, path, file, strempty(value));
        else
                r = asprintf(&s, "%s %s", verb, path);
        return r < 0 ? NULL : s;
}

int backend_fault_check(Backend *b, const char *verb, const char *path, const char *file, const char *value) {
        _cleanup_free_ char *op = NULL;
        int r;

        if (!b->fault_fn)
                return 0;
        op = backend_op_string(verb, path, file, value);
        if (!op)
                return -ENOMEM;
        r = b->fault_fn(op, b->fault_userdata);
        if (r < 0)
                log_debug("injected %s for '%s'", strerror(-r), op);
        return r < 0 ? r : 0;
}

void backend_report_disagreement(Backend *b, const char *verb, const char *path, const char *file,
                                 const char *value, int kernel_result, int model_result) {
        _cleanup_free_ char *op = backend_op_string(verb, path, file, value);

        log_debug("kernel and model disagree on '%s': kernel %d, model %d",
                      strempty(op), kernel_result, model_result);
        if (b->disagreement_fn && op)
                b->disagreement_fn(op, kernel_result, model_result, b->disagreement_userdata);
}

void drift_list_done(DriftList *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->v[i].path);
                free(l->v[i].what);
                free(l->v[i].expected);
                free(l->v[i].found);
        }
        free(l->v);
        *l = (DriftList) {};
}

int drift_list_add(DriftList *l, const char *path, const char *what, const char *expected, const char *found) {
        BackendDrift *v = reallocarray(l->v, l->n + 1, sizeof(BackendDrift));
        if (!v)
                return -ENOMEM;
        l->v = v;
        v[l->n] = (BackendDrift) {
                .path = strdup(path),
                .what = strdup(what),
                .expected = strdup(strempty(expected)),
                .found = strdup(strempty(found)),
        };
        if (!v[l->n].path || !v[l->n].what || !v[l->n].expected || !v[l->n].found) {
                free(v[l->n].path);
                free(v[l->n].what);
                free(v[l->n].expected);
                free(v[l->n].found);
                return -ENOMEM;
        }
        log_debug("drift: %s %s: expected '%s', found '%s'", path, what, strempty(expected), strempty(found));
        l->n++;
        return 0;
}

void backend_set_drift(Backend *b, DriftList *l) {
        drift_list_done(&b->drift);
        b->drift = *l;
        *l = (DriftList) {};
}

int backend_cgroup_relpath(const Cgroup *c, char **ret) {
        _cleanup_free_ char *abs = NULL;
        char *p;
        int r;

        r = cgroup_path(c, &abs);
        if (r < 0)
                return r;
        p = strdup(cgpath_relative(abs));
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

char *backend_masks_to_string(CgMask enabled, CgMask bypassed) {
        StrBuf b = STRBUF_INIT;
        char *s;

        FOREACH_CONTROLLER_IN(c, enabled | bypassed)
                strbuf_printf(&b, "%s%s%s", b.len ? " " : "", (bypassed & CGMASK(c)) ? "#" : "",
                              controller_to_string(c));
        if (strbuf_steal(&b, &s) < 0)
                return NULL;
        return s;
}

/* mkdir -p: the administrator's paths for the state directory and a sim root */
static int mkdir_parents(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

static int open_state_dir(Backend *b, const char *state_dir, char **reterr_msg) {
        int r;

        b->state_dir = strdup(state_dir);
        if (!b->state_dir)
                return -ENOMEM;
        if (b->read_only) {
                /* a running daemon holds the lock; its state files change by rename(), so
                 * every one read is whole. No directory: no state, as on a first start. */
                b->state_fd = open(state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (b->state_fd < 0 && errno != ENOENT)
                        return backend_msg(reterr_msg, -errno, "Failed to open the state directory '%s': %m",
                                           state_dir);
                return 0;
        }
        r = mkdir_parents(state_dir, 0755);
        if (r < 0)
                return backend_msg(reterr_msg, r, "Failed to create the state directory '%s': %s",
                                   state_dir, strerror(-r));
        b->state_fd = open(state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (b->state_fd < 0)
                return backend_msg(reterr_msg, -errno, "Failed to open the state directory '%s': %m", state_dir);
        b->lock_fd = openat(b->state_fd, "backend.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (b->lock_fd < 0)
                return backend_msg(reterr_msg, -errno, "Failed to open '%s/backend.lock': %m", state_dir);
        /* two daemons applying policy to one hierarchy would undo each other */
        if (flock(b->lock_fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EWOULDBLOCK)
                        return backend_msg(reterr_msg, -EBUSY,
                                           "The state directory '%s' is in use by another backend", state_dir);
                return backend_msg(reterr_msg, -errno, "Failed to lock '%s/backend.lock': %m", state_dir);
        }
        return 0;
}

int backend_not_cgroup2(const char *cgroup_root, const char *mountinfo, char **reterr_msg) {
        _cleanup_free_ char *mnt = NULL;
        char *real = realpath(cgroup_root, NULL);
        bool elsewhere;

        /* a hybrid host (cgroup v1 at /sys/fs/cgroup, cgroup2 at .../unified) has the real thing elsewhere */
        elsewhere = backend_find_cgroup2_mount(mountinfo, &mnt) >= 0 && !streq(mnt, cgroup_root) &&
                !streq_ptr(mnt, real);
        free(real);
        if (elsewhere)
                return backend_msg(reterr_msg, -ENOMEDIUM,
                                   "'%s' is not a writable cgroup2 mount and the kernel has no cgroup bypass mode; "
                                   "cgroup2 is mounted at '%s' (a hybrid host?): use --cgroup-root %s", cgroup_root,
                                   mnt, mnt);
        return backend_msg(reterr_msg, -ENOMEDIUM,
                           "'%s' is not a writable cgroup2 mount and the kernel has no cgroup bypass mode; "
                           "use --backend sim to simulate a hierarchy in a plain directory", cgroup_root);
}

static int detect_type(const char *cgroup_root, BackendType *ret, char **reterr_msg) {
        _cleanup_close_ int fd = -1;
        bool writable = false;
        int r;

        if (kernel_has_bypass_feature()) {
                *ret = BACKEND_NATIVE;
                return 0;
        }
        r = cgfs_open_root(cgroup_root, &fd);
        if (r >= 0)
                r = cgfs_check_cgroup2(fd, &writable);
        if (r >= 0 && writable) {
                *ret = BACKEND_EMULATED;
                return 0;
        }
        return backend_not_cgroup2(cgroup_root, BACKEND_MOUNTINFO, reterr_msg);
}

int backend_open_with(BackendType type, const char *cgroup_root, const char *state_dir,
                      const BackendOptions *opts, Backend **ret, char **reterr_msg) {
        static const BackendOptions defaults = {};
        _cleanup_(backend_freep) Backend *b = NULL;
        int r;

        if (type < 0 || type >= _BACKEND_TYPE_MAX || isempty(cgroup_root) || !ret)
                return backend_msg(reterr_msg, -EINVAL, "Invalid backend arguments");
        if (!opts)
                opts = &defaults;

        if (type == BACKEND_AUTO) {
                r = detect_type(cgroup_root, &type, reterr_msg);
                if (r < 0)
                        return r;
        }
        if (type != BACKEND_NATIVE && isempty(state_dir))
                return backend_msg(reterr_msg, -EINVAL, "The %s backend needs a state directory",
                                   backend_type_to_string(type));

        b = calloc(1, sizeof(Backend));
        if (!b)
                return -ENOMEM;
        b->type = type;
        b->vtable = vtables[type];
        b->root_fd = b->state_fd = b->lock_fd = -1;
        b->read_only = opts->read_only;
        b->root = strdup(cgroup_root);
        if (!b->root)
                return -ENOMEM;

        if (!isempty(state_dir)) {
                r = open_state_dir(b, state_dir, reterr_msg);
                if (r < 0)
                        return r;
        }
        if (type == BACKEND_SIM && !b->read_only) {
                r = mkdir_parents(cgroup_root, 0755);
                if (r < 0)
                        return backend_msg(reterr_msg, r, "Failed to create '%s': %s", cgroup_root, strerror(-r));
        }
        r = cgfs_open_root(cgroup_root, &b->root_fd);
        if (r == -ENOENT && type == BACKEND_SIM && b->read_only)
                /* a sim not made yet: it would start fresh, in a directory of that name */
                b->root_real = strdup(cgroup_root);
        else if (r < 0)
                return backend_msg(reterr_msg, r, "Failed to open the cgroup root '%s': %s",
                                   cgroup_root, strerror(-r));
        else
                b->root_real = realpath(cgroup_root, NULL);
        if (!b->root_real)
                return backend_msg(reterr_msg, -errno, "Failed to resolve '%s': %m", cgroup_root);

        r = b->vtable->open(b, opts, reterr_msg);
        if (r < 0)
                return backend_msg(reterr_msg, r, "Failed to open the %s backend on '%s': %s",
                                   backend_type_to_string(type), cgroup_root, strerror(-r));
        *ret = TAKE_PTR(b);
        return 0;
}

int backend_open(BackendType type, const char *cgroup_root, const char *state_dir,
                 Backend **ret, char **reterr_msg) {
        return backend_open_with(type, cgroup_root, state_dir, NULL, ret, reterr_msg);
}

Backend *backend_free(Backend *b) {
        if (!b)
                return NULL;
        if (b->vtable && b->vtable->done)
                b->vtable->done(b);
        hierarchy_free(b->model);
        drift_list_done(&b->drift);
        if (b->root_fd >= 0)
                (void) close(b->root_fd);
        if (b->state_fd >= 0)
                (void) close(b->state_fd);
        if (b->lock_fd >= 0)
                (void) close(b->lock_fd);       /* drops the flock */
        free(b->root);
        free(b->root_real);
        free(b->state_dir);
        free(b);
        return NULL;
}

BackendType backend_get_type(const Backend *b) {
        return b->type;
}

const char *backend_get_root(const Backend *b) {
        return b->root;
}

int backend_get_root_fd(const Backend *b) {
        return b->root_fd >= 0 ? b->root_fd : -EBADF;
}

const char *backend_get_state_dir(const Backend *b) {
        return b->state_dir;
}

const Hierarchy *backend_get_model(const Backend *b) {
        return b->model;
}

void backend_set_disagreement_handler(Backend *b, BackendDisagreementFn fn, void *userdata) {
        b->disagreement_fn = fn;
        b->disagreement_userdata = userdata;
}

void backend_set_fault_hook(Backend *b, BackendFaultFn fn, void *userdata) {
        b->fault_fn = fn;
        b->fault_userdata = userdata;
}

const BackendDrift *backend_get_drift(const Backend *b, size_t *ret_n) {
        *ret_n = b->drift.n;
        return b->drift.v;
}

int backend_refresh(Backend *b, char **reterr_msg) {
        if (b->read_only)
                return backend_msg(reterr_msg, -EROFS, "The backend was opened read-only");
        return b->vtable->refresh(b, reterr_msg);
}

int backend_check_below(Backend *b, const char *path) {
        _cleanup_free_ char *rel = NULL;
        const Hierarchy *view;
        KernelScan s = {};
        Cgroup *c;
        bool agrees;
        int r;

        if (!b->vtable->kernel_view)
                return 0;
        view = b->vtable->kernel_view(b);
        if (!view || hierarchy_lookup(b->model, path, &c) < 0 || !cgroup_parent(c))
                return 0;
        r = backend_cgroup_relpath(c, &rel);
        if (r < 0)
                return r;
        r = kernel_scan_subtree(b->root_fd, b->root, rel, cgroup_level(c), &s, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        agrees = kernel_scan_agrees(&s, view);
        kernel_scan_done(&s);
        return agrees;
}

/* Traces write "A/B" and "."; the bus has "/A/B" and "/". Both name the same cgroup. */
static int normalize_path(const char *path, const char **ret) {
        if (!path)
                return -EINVAL;
        path = cgpath_relative(path);
        if (!cgfs_path_is_valid(path))
                return -EINVAL;
        *ret = path;
        return 0;
}

static int bad_path(int r, Reason *reterr_reason) {
        if (reterr_reason)
                *reterr_reason = REASON_PARSE;
        return r;
}

/* mkdir's and rmdir's @path, normalized; the root is refused with @root_err and @root_reason */
static int dir_op_path(Backend *b, const char **path, int root_err, Reason root_reason, Reason *reterr_reason) {
        int r = normalize_path(*path, path);
        if (r < 0)
                return bad_path(r, reterr_reason);
        if (streq(*path, ".")) {
                if (reterr_reason)
                        *reterr_reason = root_reason;
                return root_err;
        }
        return b->read_only ? -EROFS : 0;
}

int backend_mkdir(Backend *b, const char *path, Reason *reterr_reason) {
        int r = dir_op_path(b, &path, -EEXIST, REASON_EXISTS, reterr_reason);
        return r < 0 ? r : b->vtable->mkdir(b, path, reterr_reason);
}

int backend_rmdir(Backend *b, const char *path, Reason *reterr_reason) {
        int r = dir_op_path(b, &path, -EINVAL, REASON_ROOT, reterr_reason);
        return r < 0 ? r : b->vtable->rmdir(b, path, reterr_reason);
}

int backend_write(Backend *b, const char *path, const char *file, const char *value, Reason *reterr_reason) {
        int r = normalize_path(path, &path);
        if (r < 0 || !cgfs_name_is_valid(file) || !value)
                return bad_path(-EINVAL, reterr_reason);
        if (b->read_only)
                return -EROFS;
        return b->vtable->write(b, path, file, value, reterr_reason);
}

int backend_read(Backend *b, const char *path, const char *file, char **ret) {
        int r = normalize_path(path, &path);
        if (r < 0 || !cgfs_name_is_valid(file))
                return -EINVAL;
        return b->vtable->read(b, path, file, ret);
}

int backend_chown(Backend *b, const char *path, uid_t uid, gid_t gid, char *const *files) {
        int r = normalize_path(path, &path);
        if (r < 0)
                return r;
        for (char *const *f = files; f && *f; f++)
                if (!cgfs_name_is_valid(*f))
                        return -EINVAL;
        if (b->read_only)
                return -EROFS;
        return b->vtable->chown(b, path, uid, gid, files);
}

/* The checks every owner change of the hierarchy shares (backend_chown_all(), ..._to_dir_owner()). */
static int owner_change_check(Backend *b, const char *path, const char **ret_path) {
        Cgroup *c;
        int r = normalize_path(path, ret_path);

        if (r < 0)
                return r;
        if (b->read_only)
                return -EROFS;
        /* only root changes owners; an unprivileged sim says so rather than pretending */
        if (b->type == BACKEND_SIM && !cgfs_running_as_root())
                return -EPERM;
        return hierarchy_lookup(b->model, *ret_path, &c);
}

int backend_chown_all(Backend *b, const char *path, uid_t uid, gid_t gid) {
        int r = owner_change_check(b, path, &path);
        return r < 0 ? r : cgfs_chown_all(b->root_fd, path, uid, gid);
}

int backend_chown_to_dir_owner(Backend *b, const char *path, char *const *files, size_t *ret_changed) {
        int r = owner_change_check(b, path, &path);
        return r < 0 ? r : cgfs_chown_to_dir_owner(b->root_fd, path, files, ret_changed);
}

int backend_set_writes_by_dir_owner(Backend *b, bool on) {
        if (!b->vtable->set_writes_by_dir_owner)
                return on ? -EOPNOTSUPP : 0;
        return b->vtable->set_writes_by_dir_owner(b, on);
}

int backend_save(Backend *b) {
        if (b->read_only)
                return -EROFS;
        return b->vtable->save(b);
}
