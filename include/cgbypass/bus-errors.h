/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The org.cgbypass1.Error.* names: one per distinct reason a request fails,
 * shared by cgbypassd and cgbypassctl through one sd_bus_error_map, so that
 * sd_bus_error_get_errno() works on both sides.
 */

#include <systemd/sd-bus.h>

#include "cgbypass/reason.h"

#define BUS_ERROR_PREFIX                  "org.cgbypass1.Error."
#define BUS_ERROR_NOT_DELEGATED           BUS_ERROR_PREFIX "NotDelegated"          /* EPERM: no delegation of yours covers the cgroup */
#define BUS_ERROR_CONTROLLER_NOT_DELEGATED BUS_ERROR_PREFIX "ControllerNotDelegated" /* EPERM: the delegation does not include the controller */
#define BUS_ERROR_ACCESS_DENIED           BUS_ERROR_PREFIX "AccessDenied"          /* EACCES: polkit said no (or could not be asked) */
#define BUS_ERROR_NOT_MANAGED             BUS_ERROR_PREFIX "NotManaged"            /* EPERM: outside what the configuration manages or delegates */
#define BUS_ERROR_NO_SUCH_CGROUP          BUS_ERROR_PREFIX "NoSuchCgroup"          /* ENOENT */
#define BUS_ERROR_INVALID_PATH            BUS_ERROR_PREFIX "InvalidPath"           /* EINVAL: not a normalized absolute cgroup path */
#define BUS_ERROR_UNKNOWN_CONTROLLER      BUS_ERROR_PREFIX "UnknownController"     /* EINVAL */
#define BUS_ERROR_INVALID_ARGUMENT        BUS_ERROR_PREFIX "InvalidArgument"       /* EINVAL: a malformed change */
#define BUS_ERROR_ROOT_CGROUP             BUS_ERROR_PREFIX "RootCgroup"            /* EINVAL: not possible on the root */
#define BUS_ERROR_NOT_BYPASSED_BY_PARENT  BUS_ERROR_PREFIX "NotBypassedByParent"   /* ENOENT */
#define BUS_ERROR_NOT_AVAILABLE           BUS_ERROR_PREFIX "NotAvailable"          /* ENOENT: the parent neither enables nor bypasses it */
#define BUS_ERROR_IN_USE_BELOW            BUS_ERROR_PREFIX "InUseBelow"            /* EBUSY: a child enables, bypasses or re-enabled it */
#define BUS_ERROR_IN_USE_BY_SUBTREE       BUS_ERROR_PREFIX "InUseBySubtree"        /* EBUSY: its own subtree_control names it */
#define BUS_ERROR_HAS_PROCESSES           BUS_ERROR_PREFIX "HasProcesses"          /* EBUSY: no internal processes */
#define BUS_ERROR_NOT_SUPPORTED           BUS_ERROR_PREFIX "NotSupported"          /* EOPNOTSUPP: thread mode forbids it */
#define BUS_ERROR_CONFIG_INVALID          BUS_ERROR_PREFIX "ConfigInvalid"         /* EINVAL: Reload found FILE:LINE problems */
#define BUS_ERROR_BUSY                    BUS_ERROR_PREFIX "Busy"                  /* EAGAIN: too many requests pending */
#define BUS_ERROR_FAILED                  BUS_ERROR_PREFIX "Failed"                /* EIO: the kernel refused a write; nothing changed */
#define BUS_ERROR_DELEGATION_CONFLICT     BUS_ERROR_PREFIX "DelegationConflict"    /* EEXIST: delegated already, or inside or above another delegation */
#define BUS_ERROR_NO_SUCH_DELEGATION      BUS_ERROR_PREFIX "NoSuchDelegation"      /* ENOENT: RemoveDelegation of a cgroup that is not delegated */
#define BUS_ERROR_NOT_RUNTIME_DELEGATION  BUS_ERROR_PREFIX "NotRuntimeDelegation"  /* EPERM: a configured delegation; the configuration ends it */

extern const sd_bus_error_map cgbypass_bus_error_map[];

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
