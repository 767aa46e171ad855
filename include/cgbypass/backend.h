/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where the hierarchy lives. Every backend keeps a model (bypass rules) of
 * the hierarchy it manages, loaded at open and kept in step with every
 * operation, so callers plan and vet on the model and then execute here.
 *
 *   native    a cgroup2 mount of a kernel with the bypass series: operations
 *             are the kernel's own; the model must agree with every answer.
 *   emulated  a stock cgroup2 mount: the model keeps the bypass state (saved
 *             in the state directory) and the kernel gets the nearest legal
 *             configuration (docs/backends.md).
 *   sim       a plain directory that looks like a cgroup2 mount; the model is
 *             authoritative and saved in the state directory. No root needed.
 */

#include <sys/types.h>

#include "cgbypass/model.h"

typedef enum BackendType {
        BACKEND_AUTO,
        BACKEND_NATIVE,
        BACKEND_EMULATED,
        BACKEND_SIM,
        _BACKEND_TYPE_MAX,
        _BACKEND_TYPE_INVALID = -22,
} BackendType;

const char *backend_type_to_string(BackendType t);
BackendType backend_type_from_string(const char *s);

typedef struct Backend Backend;

/*
 * Called when the kernel and the model disagree about an operation: a bug in
 * the model, the port, or state that changed behind our back. @op is the
 * operation in trace syntax ("write A cgroup.subtree_control +cpu").
 */
typedef void (*BackendDisagreementFn)(const char *op, int kernel_result, int model_result, void *userdata);

/**
 * backend_open() - attach to a hierarchy and load it into a model
 * @type: BACKEND_AUTO picks native when /sys/kernel/cgroup/features lists
 *        "bypass", else emulated when @cgroup_root is a writable cgroup2 mount
 * @cgroup_root: the cgroup2 mount (sim: any directory, created if missing)
 * @state_dir: where the backend keeps what the kernel does not (created if missing)
 * @ret: the backend
 * @reterr_msg: on failure, a malloc'ed sentence a person can act on
 *
 * Return: 0; -ENOMEDIUM (not a cgroup2 mount), -EOPNOTSUPP (native on a
 * kernel without the series), -EACCES, -EUCLEAN (what is found cannot be
 * loaded: the message says where), -ENOMEM, or another -errno from I/O.
 */
int backend_open(BackendType type, const char *cgroup_root, const char *state_dir,
                 Backend **ret, char **reterr_msg);
Backend *backend_free(Backend *b);
DEFINE_POINTER_CLEANUP(Backend, backend_free);

BackendType backend_get_type(const Backend *b);   /* never BACKEND_AUTO */
const char *backend_get_root(const Backend *b);
const Hierarchy *backend_get_model(const Backend *b);

void backend_set_disagreement_handler(Backend *b, BackendDisagreementFn fn, void *userdata);

/**
 * backend_refresh() - re-read the hierarchy (processes come and go, owners
 *                     create cgroups in their delegations)
 *
 * Return: 0 or a -errno as for backend_open(); the old model stays on failure.
 */
int backend_refresh(Backend *b, char **reterr_msg);

/*
 * One operation, as mkdir(2), rmdir(2) and write(2) would do it. Paths are
 * relative to the root as in traces ("A/B", "." for the root). Return: 0 or
 * the kernel's -errno (sim and emulated: the model's), with @reterr_reason
 * when the model knows why. On failure nothing changed.
 */
int backend_mkdir(Backend *b, const char *path, Reason *reterr_reason);
int backend_rmdir(Backend *b, const char *path, Reason *reterr_reason);
int backend_write(Backend *b, const char *path, const char *file, const char *value, Reason *reterr_reason);

/**
 * backend_chown() - hand a cgroup directory and the named files in it to @uid
 * @files: NULL-terminated file names ("cgroup.procs", ...)
 *
 * For delegation. Return: 0 or -errno.
 */
int backend_chown(Backend *b, const char *path, uid_t uid, gid_t gid, char *const *files);

/**
 * backend_save() - persist what the backend keeps outside the kernel
 *
 * Atomically (temporary file, fsync, rename). Return: 0 or -errno.
 */
int backend_save(Backend *b);
