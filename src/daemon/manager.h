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
#include "bus-loop.h"
#include "bus-reload.h"
#include "callers.h"
#include "cgroup-changed.h"
#include "change-journal.h"
#include "client-changes.h"
#include "polkit.h"
#include "read-view.h"
#include "refusal.h"
#include "request.h"
#include "watch.h"

/* Limits on what callers control. */
#define MANAGER_PATH_DEPTH_MAX          256     /* components of a cgroup path in a request */
#define MANAGER_SIM_SAVE_DELAY_USEC     (100 * 1000ULL) /* sim: its state saved this long after a change */
#define MANAGER_ADOPT_MAX               10000   /* sim: cgroups adopted from owners per refresh */

/* Where an apply left the hierarchy. */
typedef enum ApplyOutcome {
        APPLY_DONE,             /* applied and recorded */
        APPLY_REFUSED,          /* nothing tried: the configuration or the plan was refused */
        APPLY_FAILED,           /* a write failed; the rest undone: as before */
        APPLY_NOT_RECORDED,     /* applied, the record failed, taken back: as before */
        APPLY_LEFT_BETWEEN,     /* an undo failed too: between the old and the new state */
} ApplyOutcome;

typedef struct ManagerOptions {
        const char *config_file;        /* NULL: CONFIG_MAIN_FILE */
        const char *config_dir;         /* NULL: CONFIG_CONF_DIR */
        const char *backend;            /* NULL: from the configuration */
        const char *cgroup_root;
        const char *state_directory;
        const char *bus;                /* service: "system" or "session" */
        bool read_only;                 /* --check-config, --plan: beside a running daemon */
} ManagerOptions;

typedef struct ChangeCommit ChangeCommit;
typedef struct Manager Manager;

/* A request's outcome, once its record is durable (@r 0) or it was taken back. */
typedef void (*ChangeDone)(Manager *m, int r, const Refusal *f, size_t ops, void *userdata);

#define MANAGER_COMMIT_MAX      256     /* applied requests waiting for one commit, at most */

typedef struct Manager {
        ManagerOptions options;
        Config *config;
        DesiredSet desired;             /* the configuration's */
        Backend *backend;
        ClientChanges changes;          /* the client changes, as applied (and saved, or committing) */
        /* manager.c forget_gone(): the model's hierarchy_epoch() at the last look for gone cgroups, if valid */
        uint64_t gone_epoch;
        bool gone_looked;
        ChangeJournal journal;          /* change-journal.c: how they are saved */
        ChangeCommit *commits, *commits_last; /* change.c: applied, waiting for their record's commit */
        size_t n_commits;
        sd_event_source *commit;        /* the deferred group commit */
        ReloadCalls reloads;            /* bus-reload.c: Reload calls waiting for their shared reload */
        DesiredIndex desired_index;     /* @desired by path, for a request's subtree */

        /* the service */
        sd_event *event;
        sd_bus *bus;
        BusLoop bus_loop;               /* bus-loop.c: @bus on @event */
        sd_bus_slot *callers_gone;      /* NameOwnerChanged: callers that disconnect */
        CallerCache callers;            /* callers.c: the bus's word on each connection */
        sd_event_source *sim_save;      /* sim: its state saved a little after a change */
        Watches watches;                /* watch.c: owners' mkdir and rmdir in their delegations */
        PolkitQueries queries;          /* polkit.c: checks, pending or answered and not yet used */
        bool refresh_warned;            /* a failing refresh is logged once until it works again */
        ReadViews views;                /* read-view.c: the effective trees, kept until the model changes */
        unsigned long walks;            /* walks of the whole model or a delegation (tests count them) */
        unsigned long rereads;          /* backend_refresh(): the whole hierarchy read again (tests count them) */
        bool limit_warned;              /* adopt.c: owners' cgroups beyond a limit, logged once until there is room */
        char **over_limit;              /* native, emulated: delegation roots holding more cgroups than a limit allows */
        char **owner_retry;             /* ownership.c: cgroups whose files could not all be given to their owner */
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
 * @ret_outcome: what state the hierarchy is in (may be NULL)
 *
 * The applied state is part of the transaction: when it cannot be saved,
 * what was applied is taken back (manager_take_back()). Logs what it did
 * and, on failure, the failing operation, its errno and the rollback.
 * Return: 0, -EINVAL (configuration refused, see @errs), the failing
 * operation's -errno, or the failing save's.
 */
int manager_apply(Manager *m, ConfigErrors *errs, size_t *ret_writes, ApplyOutcome *ret_outcome);

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

/* Whether the model knows the cgroup @path. */
bool manager_has_cgroup(const Manager *m, const char *path);

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
 * @ret_refusal: why, when refused or failed (REFUSAL_NONE: only the -errno says it)
 *
 * Refreshes the model, vets the write on a copy, records the change over
 * the desired state, plans the cgroup and its subtree, applies all or
 * nothing, saves the state, emits CgroupChanged. Return: 0 or -errno with
 * @ret_refusal set (-ENOENT REFUSAL_NO_SUCH_CGROUP; the model's -errno
 * REFUSAL_MODEL; -EBUSY REFUSAL_BREAKS_BELOW; the state's -errno
 * REFUSAL_NOT_RECORDED); nothing changed then.
 *
 * With @done and an event loop, the record is committed with those of the
 * requests that come meanwhile (one fdatasync() for all): 1 is returned and
 * @done is called once the record is durable, or with the refusal when the
 * commit failed and the change was taken back. Otherwise committed at once.
 */
int manager_change(Manager *m, const ChangeRequest *req, bool admin, uid_t uid, size_t *ret_ops,
                   Refusal *ret_refusal, ChangeDone done, void *userdata);

/*
 * Commit the records of the applied requests now and tell each its outcome;
 * on failure every one of them is taken back, newest first. Return: 0 or the commit's -errno.
 */
int manager_commit_changes(Manager *m);

/* The client changes as the new snapshot (after manager_commit_changes()). Return: 0 or -errno. */
int manager_save_changes(Manager *m, const ClientChanges *changes);

/**
 * manager_reload() - re-read the configuration and apply it with the client changes
 * @errs: the configuration's problems (then nothing changed)
 * @ret_refusal: why it failed
 *
 * Return: 0; -EINVAL (configuration refused, @errs, REFUSAL_CONFIG_INVALID);
 * or the failing operation's -errno (REFUSAL_APPLY_FAILED when a write or
 * the state failed). The running state stays on failure.
 */
int manager_reload(Manager *m, ConfigErrors *errs, Refusal *ret_refusal);

/* sd_notify() READY=1 with a STATUS= line (nothing without $NOTIFY_SOCKET). */
void manager_notify_ready(Manager *m);

/* ---- the steps of manager.c that change.c and reload.c take too ---- */

const char *manager_state_dir(Manager *m);

/* A new configuration, desired state or set of client changes: the next refresh looks for gone cgroups again. */
void manager_gone_look_again(Manager *m);

/*
 * @full: backend_refresh() (a sim: its directory rendered again); otherwise
 * only what owners did in their delegations below @scope. Return: 0 or -errno,
 * and then (@reterr_why not NULL) why the hierarchy could not be read, if known.
 */
int manager_refresh_quiet(Manager *m, bool full, const char *scope, char **reterr_why);

/* A snapshot of what may change into @before, then manager_refresh_quiet() of what @scope needs. */
int manager_refresh_for(Manager *m, const char *scope, Snapshot *before);

/*
 * Before a change of @scope: manager_refresh_for(), except on a sim whose watches
 * saw every mkdir and rmdir (watch_catch_up()): then the snapshot alone.
 */
int manager_refresh_for_change(Manager *m, const char *scope, Snapshot *before);

void manager_log_apply_failure(const Plan *p, int r, const ApplyFailure *f);

/* The backend's state alone (a sim's a little later). Return: 0 or -errno. */
int manager_save_backend(Manager *m);

/* The backend's state, @desired (NULL: as it is) and @changes. Return: 0 or -errno. */
int manager_save_state(Manager *m, const DesiredSet *desired, const ClientChanges *changes);

/*
 * Plan @desired with @changes over it, apply, save (@changes may lose entries); a failed save takes the
 * plan back. Return: 0 or -errno; @ret_outcome (may be NULL) as for manager_apply().
 */
int manager_apply_with(Manager *m, const DesiredSet *desired, ClientChanges *changes, ConfigErrors *errs,
                       size_t *ret_writes, ApplyOutcome *ret_outcome);

/* Take back @p, applied in full, by its own inverse operations. Return: 0 (as before) or the undo's -errno. */
int manager_take_back(Manager *m, const Plan *p, const char *what);
