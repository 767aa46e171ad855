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

/* Settings for backend_open_with(); zero-initialize, then set what you need. */
typedef struct BackendOptions {
        /* sim: the controllers of the simulated kernel (0: CGMASK_VM_KERNEL).
         * Used for a new sim only: a saved sim keeps the controllers it was created with. */
        CgMask sim_controllers;
        /* Look, never touch: no lock, nothing created, no drift repaired (sim, emulated);
         * every operation fails with -EROFS. For --check-config and --plan, which must
         * work beside a running daemon. */
        bool read_only;
} BackendOptions;

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

/**
 * backend_open_with() - backend_open() with options
 * @opts: NULL for the defaults
 *
 * Besides the errors of backend_open(): -EBUSY (another backend holds
 * @state_dir, or @cgroup_root is a cgroup below the mount that has processes),
 * -ENOTEMPTY (sim: @cgroup_root holds files that are not a sim's),
 * -EROFS later, from every operation, with @opts->read_only,
 * -E2BIG (deeper than 256 levels or more than 1,000,000 cgroups).
 */
int backend_open_with(BackendType type, const char *cgroup_root, const char *state_dir,
                      const BackendOptions *opts, Backend **ret, char **reterr_msg);
Backend *backend_free(Backend *b);
DEFINE_POINTER_CLEANUP(Backend, backend_free);

BackendType backend_get_type(const Backend *b);   /* never BACKEND_AUTO */

/**
 * backend_check_below() - whether the kernel still shows @path's subtree as the backend left it
 * @path: a cgroup the model knows, not the root
 *
 * Reads the kernel's files of @path and the cgroups below it only (native,
 * emulated): none made or removed behind the backend's back, the same
 * controllers, subtree_control, type and number of processes. A request on
 * @path then needs no backend_refresh() of the whole hierarchy. sim, the
 * root, or a path the model does not know: 0.
 *
 * Return: 1 agrees; 0 differs (refresh); -errno.
 */
int backend_check_below(Backend *b, const char *path);

/**
 * backend_load_limits_above() - before a mkdir of @path: the limits above it, from the kernel
 *
 * The scan leaves cgroup.max.depth and cgroup.max.descendants of every
 * cgroup below its top unread (cgroup_limits_unread()): they matter only to
 * a mkdir below it. This reads those of @path's parent and its ancestors into
 * the model, so that the model's check of the mkdir is the kernel's. The
 * backend's mkdir does it itself; a planner does it first to plan exactly.
 *
 * Return: how many cgroups' limits were read (0 on sim, or when none was
 * unread); -errno.
 */
int backend_load_limits_above(Backend *b, const char *path);
const char *backend_get_root(const Backend *b);
/* The root's directory, opened once at backend_open() and owned by @b (-EBADF: a read-only sim not made yet). */
int backend_get_root_fd(const Backend *b);

/*
 * backend_find_cgroup2_mount() - the first mount point of the whole cgroup2
 *                                hierarchy in @mountinfo (proc(5) format,
 *                                usually /proc/self/mountinfo)
 *
 * Return: 0 with *@ret malloc'ed; -ENOENT: none; -errno reading the file.
 */
int backend_find_cgroup2_mount(const char *mountinfo, char **ret);
const char *backend_get_state_dir(const Backend *b);
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
 * backend_read() - the contents of an interface file, as the hierarchy shows it
 * @ret: malloc'ed text
 *
 * native: the kernel's file. emulated: whether the file exists is the
 * model's answer (pass-through levels have no knobs for the policy), and
 * cgroup.controllers, cgroup.subtree_control and debug.masks come from the
 * model, so '#' shows as on native; other files from the kernel. sim: the
 * model's text, or the file's default for unmodeled files.
 * Return: 0; -ENOENT; -EINVAL (write-only file), -EOPNOTSUPP (cgroup.procs
 * of a threaded cgroup), or the -errno of read(2).
 */
int backend_read(Backend *b, const char *path, const char *file, char **ret);

/* A difference between what the backend keeps and what it found, fixed while loading. */
typedef struct BackendDrift {
        char *path;             /* trace-relative cgroup path ("." is the root) */
        char *what;             /* "cgroup.subtree_control", "bypass", "cgroup", "stray file", "stray directory";
                                 * left alone: "file", "directory", "special file (...)" */
        char *expected;         /* what the backend wanted there ("" for nothing) */
        char *found;            /* what it found ("" for nothing) */
        bool left_alone;        /* sim: an entry not made by the sim (@found names it), reported, not touched */
} BackendDrift;

/**
 * backend_get_drift() - what the last backend_open() or backend_refresh() found and fixed
 * @ret_n: number of entries
 *
 * emulated: kernel subtree_control that differed from the projection of the
 * bypass model (someone wrote the kernel behind the backend's back), saved
 * bypass state that no longer fits the kernel, saved cgroups that are gone.
 * sim: stray files and directories removed from the directory, files whose
 * contents were re-rendered. native: always empty (the kernel is the truth).
 *
 * Return: the entries, valid until the next backend_refresh() or backend_free().
 */
const BackendDrift *backend_get_drift(const Backend *b, size_t *ret_n);

/*
 * Test hook: called before each change the backend makes to the hierarchy it
 * manages, with the change in trace syntax ("mkdir A", "write A
 * cgroup.subtree_control +cpu"): native, each kernel operation; emulated,
 * each kernel operation including the pass-through writes an operation
 * causes (not the writes that undo a failed operation); sim, each operation.
 * Return 0 to let it happen, or a negative errno to make it fail with that
 * errno as if the kernel had refused it (no disagreement is reported).
 */
typedef int (*BackendFaultFn)(const char *op, void *userdata);
void backend_set_fault_hook(Backend *b, BackendFaultFn fn, void *userdata);

/**
 * backend_chown() - hand a cgroup directory and the named files in it to @uid
 * @files: NULL-terminated file names ("cgroup.procs", ...)
 *
 * For delegation. The directory first, then the files; a name must be a
 * file the directory holds. sim changes owners too, when run as root.
 * Return: 0; -EINVAL (a name with '/'), -ENOENT, -EPERM (sim without root),
 * or the -errno of fchownat(2).
 */
int backend_chown(Backend *b, const char *path, uid_t uid, gid_t gid, char *const *files);

/**
 * backend_chown_all() - a cgroup directory and every regular file in it to @uid:@gid
 *
 * For a delegation that ends (everything back to root). Files are vetted on
 * the opened fd (cgroupfs.h); nothing in the directory changes unless all
 * pass. Return: 0; -ENOENT (not a cgroup), -EROFS, -EPERM (sim without
 * root), -ELOOP, -EISDIR, -EMLINK, -EXDEV, -EUCLEAN (a file that is not
 * what the kernel would have there), or the -errno of fchownat(2).
 */
int backend_chown_all(Backend *b, const char *path, uid_t uid, gid_t gid);

/**
 * backend_chown_to_dir_owner() - files of a cgroup to the owner of its directory
 * @files: NULL-terminated names, or NULL: every regular file
 * @ret_changed: how many files changed owner (may be NULL)
 *
 * Below a delegation root, files that a write of the daemon made appear are
 * root's (the kernel gives a new file the writer's fsuid); this makes them
 * what they would be had the owner made the write. Errors as
 * backend_chown_all(); a named file that is not there is -ENOENT.
 */
int backend_chown_to_dir_owner(Backend *b, const char *path, char *const *files, size_t *ret_changed);

/**
 * backend_set_writes_by_dir_owner() - writes as if each directory's owner made them
 *
 * The kernel gives a file that a write makes appear the writer's fsuid and
 * fsgid (cgroup_kn_set_ugid()). With @on, the sim makes each such file the
 * owner's of its directory as it creates it (fchown(2) of the new file's fd)
 * instead of root's: a request strictly inside a delegation then needs no
 * backend_chown_to_dir_owner() after its writes, which would look up and vet
 * each file by name. Rewritten files keep their owners either way.
 * Return: 0; -EOPNOTSUPP (native, emulated: the kernel makes the files);
 * -EPERM (a sim not run as root). Turning it off always succeeds.
 */
int backend_set_writes_by_dir_owner(Backend *b, bool on);

/**
 * backend_save() - persist what the backend keeps outside the kernel
 *
 * Atomically (temporary file, fsync, rename); sim: the whole model, emulated:
 * the bypass state, native: nothing. Operations are not saved until this is
 * called (the daemon calls it after each change); a restart goes back to
 * the last save. Return: 0 or -errno.
 */
int backend_save(Backend *b);

/**
 * backend_adopt_cgroup() - take on a cgroup that someone else made (an owner's mkdir(2)), writing nothing
 * @path: a cgroup the model does not know, whose parent it knows
 * @max: at most this many cgroups (@path and the ones already below it)
 *
 * native, emulated: reads @path and the cgroups below it from the kernel
 * into the model, as a backend_refresh() would, without reading anything
 * else. Return: the number of cgroups taken on; -ENOENT (gone meanwhile),
 * -EEXIST (known), -EDQUOT (more than @max; nothing taken on), -ESTALE
 * (the model cannot take it on as found, or its parent is unknown: call
 * backend_refresh()), -EOPNOTSUPP (sim), -EROFS, -errno of reading.
 */
int backend_adopt_cgroup(Backend *b, const char *path, size_t max, char **reterr_msg);

/**
 * backend_forget_cgroup() - drop a cgroup that someone else removed (rmdir(2)), writing nothing
 *
 * native, emulated: when @path's directory is gone, @path and what the
 * model still has below it leave the model. Return: the number dropped (0:
 * not known); -EEXIST (the directory is there); -ESTALE (the model refuses,
 * e.g. it still counts processes there: call backend_refresh()), -EOPNOTSUPP
 * (sim), -EROFS.
 */
int backend_forget_cgroup(Backend *b, const char *path);
