/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's state: the configuration, the desired state built from it,
 * and the backend with its model of the hierarchy. The offline modes
 * (--check-config, --plan, --apply-once) and the bus service share it.
 */

#include "cgbypass/backend.h"
#include "cgbypass/config.h"
#include "cgbypass/desired.h"
#include "cgbypass/policy.h"

typedef struct ManagerOptions {
        const char *config_file;        /* NULL: CONFIG_MAIN_FILE */
        const char *config_dir;         /* NULL: CONFIG_CONF_DIR */
        const char *backend;            /* NULL: from the configuration */
        const char *cgroup_root;
        const char *state_directory;
} ManagerOptions;

typedef struct Manager {
        ManagerOptions options;
        Config *config;
        DesiredSet desired;
        Backend *backend;
} Manager;

Manager *manager_free(Manager *m);
DEFINE_POINTER_CLEANUP(Manager, manager_free);
int manager_new(const ManagerOptions *o, Manager **ret);

/**
 * manager_load_config() - read the configuration, apply command-line overrides
 * @errs: every FILE:LINE problem, appended
 *
 * On failure the manager keeps its previous configuration. Return: 0,
 * -EINVAL (see @errs), -ENOMEM.
 */
int manager_load_config(Manager *m, ConfigErrors *errs);

/* Open the backend the configuration names. Logs why it failed. Return: 0 or -errno. */
int manager_open_backend(Manager *m);

/**
 * manager_plan() - the plan from the backend's current state to the configuration's
 * @errs: refusals, as FILE:LINE: reason, appended
 *
 * Return: 0, -EINVAL (see @errs), -ENOMEM.
 */
int manager_plan(Manager *m, Plan **ret, ConfigErrors *errs);

/* Log every managed setting that differs from the last applied state. Return: the number found. */
int manager_log_drift(Manager *m);

/**
 * manager_apply() - plan, apply all or nothing, save the applied state
 * @ret_writes: operations made (0: already in sync)
 *
 * Logs what it did and, on failure, the failing operation, its errno and
 * the rollback. Return: 0, -EINVAL (configuration refused, see @errs), or
 * the failing operation's -errno.
 */
int manager_apply(Manager *m, ConfigErrors *errs, size_t *ret_writes);
