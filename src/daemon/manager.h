/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's state: the configuration, the desired state built from it,
 * the client changes over it, and the backend with its model of the
 * hierarchy. The offline modes (--check-config, --plan, --apply-once) and
 * the bus service share it; every change of the hierarchy, whoever asks for
 * it, goes through policy_plan() and plan_apply() here.
 */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "cgbypass/backend.h"
#include "cgbypass/config.h"
#include "cgbypass/desired.h"
#include "cgbypass/policy.h"
#include "request.h"
#include "client-changes.h"

/* Limits on what callers control. */
#define MANAGER_PATH_DEPTH_MAX          256     /* components of a cgroup path in a request */
#define MANAGER_QUERIES_MAX             256     /* polkit checks pending at once */
#define MANAGER_QUERIES_PER_UID_MAX     64      /* ... for one caller uid */
#define MANAGER_SIM_SAVE_DELAY_USEC     (100 * 1000ULL) /* sim: its state saved this long after a change */
#define MANAGER_ADOPT_MAX               10000   /* sim: cgroups adopted from owners per refresh */

typedef struct PolkitQuery PolkitQuery;

typedef struct ManagerOptions {
        const char *config_file;        /* NULL: CONFIG_MAIN_FILE */
        const char *config_dir;         /* NULL: CONFIG_CONF_DIR */
        const char *backend;            /* NULL: from the configuration */
        const char *cgroup_root;
        const char *state_directory;
        const char *bus;                /* service: "system" or "session" */
        bool read_only;                 /* --check-config, --plan: beside a running daemon */
} ManagerOptions;

typedef struct CallerEntry CallerEntry;

typedef struct Manager {
        ManagerOptions options;
        Config *config;
        DesiredSet desired;             /* the configuration's */
        Backend *backend;
        ClientChanges changes;          /* the client changes, as applied and saved */

        /* the service */
        sd_event *event;
        sd_bus *bus;
        sd_bus_slot *callers_gone;      /* NameOwnerChanged: callers that disconnect */
        CallerEntry *callers;           /* callers.c: the bus's word on each connection */
        size_t n_callers, callers_next;
        sd_event_source *sim_save;      /* sim: its state saved a little after a change */
        PolkitQuery *queries;           /* polkit checks, pending or answered and not yet used */
        unsigned n_queries;
        uint64_t query_serial;
        bool refresh_warned;            /* a failing refresh is logged once until it works again */
} Manager;

Manager *manager_free(Manager *m);
DEFINE_POINTER_CLEANUP(Manager, manager_free);
int manager_new(const ManagerOptions *o, Manager **ret);

/**
 * manager_read_config() - read the configuration and apply the command-line overrides
 * @ret: the Config, set only on success
 * @ret_desired: its desired state (points into *@ret)
 * @errs: every FILE:LINE problem, appended
 *
 * Return: 0, -EINVAL (see @errs), -ENOMEM.
 */
int manager_read_config(Manager *m, Config **ret, DesiredSet *ret_desired, ConfigErrors *errs);

/**
 * manager_load_config() - manager_read_config(), then make it the manager's
 *
 * On failure the manager keeps its previous configuration. Return: 0,
 * -EINVAL (see @errs), -ENOMEM.
 */
int manager_load_config(Manager *m, ConfigErrors *errs);

/*
 * Open the backend the configuration names and load the saved client
 * changes (pruned by the configuration). Logs why it failed. Return: 0 or -errno.
 */
int manager_open_backend(Manager *m);

/**
 * manager_plan() - the plan from the backend's current state to the configuration's
 *                  with the client changes over it
 * @errs: refusals, as FILE:LINE: reason, appended
 *
 * Client changes that cannot be reached any more are dropped from
 * m->changes (each logged); the configuration's problems are errors.
 * Return: 0, -EINVAL (see @errs), -ENOMEM.
 */
int manager_plan(Manager *m, Plan **ret, ConfigErrors *errs);

/* Log every managed setting that differs from the last applied state. Return: the number found. */
int manager_log_drift(Manager *m);

/**
 * manager_apply() - plan, apply all or nothing, save the applied state, hand
 *                   delegated cgroups to their owners
 * @ret_writes: operations made (0: already in sync)
 *
 * Logs what it did and, on failure, the failing operation, its errno and
 * the rollback. Return: 0, -EINVAL (configuration refused, see @errs), or
 * the failing operation's -errno.
 */
int manager_apply(Manager *m, ConfigErrors *errs, size_t *ret_writes);

/* sim: save a pending state now (at exit; manager_free() does it too). */
void manager_flush(Manager *m);

/**
 * manager_refresh() - learn what changed behind the daemon's back
 * @scope: sim: only the delegations that hold this cgroup or lie below it
 *         (NULL: all); the other backends read the whole kernel
 *
 * native, emulated: backend_refresh(), which reads the kernel. sim: the
 * directories owners made in their delegations become cgroups, the ones
 * they removed go (as mkdir(2) and rmdir(2) in cgroupfs); the sim's files
 * are rendered again from its model only at a reload. CgroupChanged goes
 * out for every cgroup whose state changed. A failure is logged and the
 * old model stays. Return: 0 or -errno.
 */
int manager_refresh(Manager *m, const char *scope);

/*
 * manager_known_ancestor() - the deepest cgroup on the way to @path (itself
 * included) that the model knows; malloc'ed. NULL for @path NULL, and on OOM.
 */
char *manager_known_ancestor(const Manager *m, const char *path);

/**
 * manager_change() - apply one authorized request
 * @admin: the caller is uid 0 or authorized for org.cgbypass1.manage
 * @uid: the caller (the owner, when !@admin)
 * @ret_ops: operations made
 * @error: the named error when refused
 *
 * Refreshes the model, vets the write on a copy, records the change over
 * the desired state, plans the cgroup and its subtree, applies all or
 * nothing, saves the state, emits CgroupChanged. Return: 0 or -errno with
 * @error set; nothing changed then.
 */
int manager_change(Manager *m, const ChangeRequest *req, bool admin, uid_t uid, size_t *ret_ops,
                   sd_bus_error *error);

/**
 * manager_reload() - re-read the configuration and apply it with the client changes
 * @errs: the configuration's problems (then nothing changed)
 * @error: the named error
 *
 * Return: 0; -EINVAL (configuration refused, @errs); or the failing
 * operation's -errno. The running state stays on failure.
 */
int manager_reload(Manager *m, ConfigErrors *errs, sd_bus_error *error);

/* sd_notify() READY=1 with a STATUS= line (nothing without $NOTIFY_SOCKET). */
void manager_notify_ready(Manager *m);

/* The controller state of every cgroup, to tell which changed. */
typedef struct SnapshotEntry {
        char *path;
        CgMask controllers, bypassed, subtree_control, subtree_bypass, css;
        CgroupType type;
} SnapshotEntry;

typedef struct Snapshot {
        SnapshotEntry *v;       /* sorted by path */
        size_t n;
        char *scope;            /* NULL: every cgroup */
} Snapshot;

void snapshot_done(Snapshot *s);
/* @scope: only that cgroup's subtree and its parent (NULL: every cgroup) */
int snapshot_take(const Hierarchy *h, const char *scope, Snapshot *ret);

/* Emit CgroupChanged for every cgroup that differs between @before and now (no bus: nothing). */
void manager_emit_changes(Manager *m, const Snapshot *before);
