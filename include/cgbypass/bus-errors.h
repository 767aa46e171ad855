/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The org.cgbypass1.Error.* names: one per distinct reason a request fails,
 * defined with their errnos in the installed <cgbypass/cgbypass.h> and
 * libcgbypass's one sd_bus_error_map, which the daemon links too, so that
 * sd_bus_error_get_errno() works on both sides.
 */

#include <systemd/sd-bus.h>

#include "cgbypass/cgbypass.h"
#include "cgbypass/reason.h"

/* the names are the installed header's, so the daemon and its clients share them */
#define BUS_ERROR_PREFIX                   CGBYPASS_ERROR_PREFIX
#define BUS_ERROR_NOT_DELEGATED            CGBYPASS_ERROR_NOT_DELEGATED
#define BUS_ERROR_CONTROLLER_NOT_DELEGATED CGBYPASS_ERROR_CONTROLLER_NOT_DELEGATED
#define BUS_ERROR_ACCESS_DENIED            CGBYPASS_ERROR_ACCESS_DENIED
#define BUS_ERROR_NOT_MANAGED              CGBYPASS_ERROR_NOT_MANAGED
#define BUS_ERROR_NO_SUCH_CGROUP           CGBYPASS_ERROR_NO_SUCH_CGROUP
#define BUS_ERROR_INVALID_PATH             CGBYPASS_ERROR_INVALID_PATH
#define BUS_ERROR_UNKNOWN_CONTROLLER       CGBYPASS_ERROR_UNKNOWN_CONTROLLER
#define BUS_ERROR_INVALID_ARGUMENT         CGBYPASS_ERROR_INVALID_ARGUMENT
#define BUS_ERROR_ROOT_CGROUP              CGBYPASS_ERROR_ROOT_CGROUP
#define BUS_ERROR_NOT_BYPASSED_BY_PARENT   CGBYPASS_ERROR_NOT_BYPASSED_BY_PARENT
#define BUS_ERROR_NOT_AVAILABLE            CGBYPASS_ERROR_NOT_AVAILABLE
#define BUS_ERROR_IN_USE_BELOW             CGBYPASS_ERROR_IN_USE_BELOW
#define BUS_ERROR_IN_USE_BY_SUBTREE        CGBYPASS_ERROR_IN_USE_BY_SUBTREE
#define BUS_ERROR_HAS_PROCESSES            CGBYPASS_ERROR_HAS_PROCESSES
#define BUS_ERROR_NOT_SUPPORTED            CGBYPASS_ERROR_NOT_SUPPORTED
#define BUS_ERROR_CONFIG_INVALID           CGBYPASS_ERROR_CONFIG_INVALID
#define BUS_ERROR_BUSY                     CGBYPASS_ERROR_BUSY
#define BUS_ERROR_FAILED                   CGBYPASS_ERROR_FAILED
#define BUS_ERROR_DELEGATION_CONFLICT      CGBYPASS_ERROR_DELEGATION_CONFLICT
#define BUS_ERROR_NO_SUCH_DELEGATION       CGBYPASS_ERROR_NO_SUCH_DELEGATION
#define BUS_ERROR_NOT_RUNTIME_DELEGATION   CGBYPASS_ERROR_NOT_RUNTIME_DELEGATION
#define BUS_ERROR_TOO_MANY_CGROUPS         CGBYPASS_ERROR_TOO_MANY_CGROUPS

/* libcgbypass's table (src/libcgbypass/cgbypass-errors.c), registered when it is loaded */
#define cgbypass_bus_error_map cgbypass_error_map

/**
 * bus_error_name_from_model() - the error name for a change the model, the
 *                               kernel or plan_apply() refused
 * @error: the negative errno of the refused write
 * @reason: the model's reason (REASON_NONE when it is not known)
 *
 * Return: a BUS_ERROR_* name, or SD_BUS_ERROR_NO_MEMORY for -ENOMEM; never NULL.
 */
const char *bus_error_name_from_model(int error, Reason reason);

/**
 * bus_error_set_model() - set @e to the named error for a refused change,
 *                         with a message that says what to do
 * @e: the error to set (sd_bus_error_setf(); unchanged if already set)
 * @error: the negative errno of the refused write
 * @reason: the model's reason (REASON_NONE when it is not known)
 * @cgroup: the cgroup written, an absolute cgroup path ("/srv/a")
 * @file: "cgroup.controllers" or "cgroup.subtree_control" (the wording
 *        differs: re-enabling for itself, or giving out to the children)
 * @controller: the controller concerned, or NULL when not known
 *
 * Example: (-ENOENT, REASON_NOT_BYPASSED_BY_PARENT, "/srv/a/b",
 * "cgroup.controllers", "cpu") gives NotBypassedByParent, "/srv/a does not
 * bypass cpu for its children; ask its owner, or change /srv/a's
 * subtree-control in the configuration".
 *
 * Return: the negative errno that the name maps to (cgbypass_bus_error_map),
 * so that a method handler can return it.
 */
int bus_error_set_model(sd_bus_error *e, int error, Reason reason, const char *cgroup, const char *file,
                        const char *controller);
