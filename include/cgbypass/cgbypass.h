/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libcgbypass: a client of cgbypassd's D-Bus API, org.cgbypass1(5).
 *
 * The bus names, the error names with their errnos, and one function per
 * method of org.cgbypass1.Manager. Build with
 * `pkg-config --cflags --libs libcgbypass`.
 *
 * Loading the library registers cgbypass_error_map with sd-bus, so that
 * sd_bus_error_get_errno() and the negative errno that every sd-bus call
 * returns give each org.cgbypass1.Error.* its documented errno. (A program
 * that links the library but calls none of its functions and names no
 * variable of it may lose it to --as-needed: name cgbypass_error_map.)
 *
 * Every function takes a connection to the bus that cgbypassd serves
 * (sd_bus_open_system(), or a private bus for tests) and calls the method
 * with that connection's settings: a caller that wants polkit to ask for a
 * password sets sd_bus_set_allow_interactive_authorization() and a method
 * call timeout long enough for a person (sd_bus_set_method_call_timeout()).
 * Each returns 0 or a negative errno and, when @ret_error is not NULL, the
 * daemon's error (its name and a message a person can act on).
 */

#include <stdint.h>
#include <systemd/sd-bus.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CGBYPASS_BUS_NAME      "org.cgbypass1"
#define CGBYPASS_BUS_PATH      "/org/cgbypass1"
#define CGBYPASS_BUS_INTERFACE "org.cgbypass1.Manager"

/* The errors, one per reason; each comment names its errno (org.cgbypass1(5), ERRORS). */
#define CGBYPASS_ERROR_PREFIX                   "org.cgbypass1.Error."
#define CGBYPASS_ERROR_NOT_DELEGATED            CGBYPASS_ERROR_PREFIX "NotDelegated"           /* EPERM */
#define CGBYPASS_ERROR_CONTROLLER_NOT_DELEGATED CGBYPASS_ERROR_PREFIX "ControllerNotDelegated" /* EPERM */
#define CGBYPASS_ERROR_ACCESS_DENIED            CGBYPASS_ERROR_PREFIX "AccessDenied"           /* EACCES */
#define CGBYPASS_ERROR_NOT_MANAGED              CGBYPASS_ERROR_PREFIX "NotManaged"             /* EPERM */
#define CGBYPASS_ERROR_NO_SUCH_CGROUP           CGBYPASS_ERROR_PREFIX "NoSuchCgroup"           /* ENOENT */
#define CGBYPASS_ERROR_INVALID_PATH             CGBYPASS_ERROR_PREFIX "InvalidPath"            /* EINVAL */
#define CGBYPASS_ERROR_UNKNOWN_CONTROLLER       CGBYPASS_ERROR_PREFIX "UnknownController"      /* EINVAL */
#define CGBYPASS_ERROR_INVALID_ARGUMENT         CGBYPASS_ERROR_PREFIX "InvalidArgument"        /* EINVAL */
#define CGBYPASS_ERROR_ROOT_CGROUP              CGBYPASS_ERROR_PREFIX "RootCgroup"             /* EINVAL */
#define CGBYPASS_ERROR_NOT_BYPASSED_BY_PARENT   CGBYPASS_ERROR_PREFIX "NotBypassedByParent"    /* ENOENT */
#define CGBYPASS_ERROR_NOT_AVAILABLE            CGBYPASS_ERROR_PREFIX "NotAvailable"           /* ENOENT */
#define CGBYPASS_ERROR_IN_USE_BELOW             CGBYPASS_ERROR_PREFIX "InUseBelow"             /* EBUSY */
#define CGBYPASS_ERROR_IN_USE_BY_SUBTREE        CGBYPASS_ERROR_PREFIX "InUseBySubtree"         /* EBUSY */
#define CGBYPASS_ERROR_HAS_PROCESSES            CGBYPASS_ERROR_PREFIX "HasProcesses"           /* EBUSY */
#define CGBYPASS_ERROR_NOT_SUPPORTED            CGBYPASS_ERROR_PREFIX "NotSupported"           /* EOPNOTSUPP */
#define CGBYPASS_ERROR_CONFIG_INVALID           CGBYPASS_ERROR_PREFIX "ConfigInvalid"          /* EINVAL */
#define CGBYPASS_ERROR_BUSY                     CGBYPASS_ERROR_PREFIX "Busy"                   /* EAGAIN */
#define CGBYPASS_ERROR_FAILED                   CGBYPASS_ERROR_PREFIX "Failed"                 /* EIO */
#define CGBYPASS_ERROR_DELEGATION_CONFLICT      CGBYPASS_ERROR_PREFIX "DelegationConflict"     /* EEXIST */
#define CGBYPASS_ERROR_NO_SUCH_DELEGATION       CGBYPASS_ERROR_PREFIX "NoSuchDelegation"       /* ENOENT */
#define CGBYPASS_ERROR_NOT_RUNTIME_DELEGATION   CGBYPASS_ERROR_PREFIX "NotRuntimeDelegation"   /* EPERM */
#define CGBYPASS_ERROR_TOO_MANY_CGROUPS         CGBYPASS_ERROR_PREFIX "TooManyCgroups"         /* EDQUOT */

/* Every CGBYPASS_ERROR_* name with its errno; registered with sd-bus when the library is loaded. */
extern const sd_bus_error_map cgbypass_error_map[];

/* GetCgroup's delegated_to for a cgroup that no delegation covers */
#define CGBYPASS_UID_NONE UINT32_C(0xffffffff)

/**
 * cgbypass_enable_controller() - EnableController: re-enable a controller
 *                                that the cgroup's parent bypasses
 * @cgroup: an absolute cgroup path, "/work.slice/a"
 * @controller: a controller name without a prefix, "cpu"
 *
 * Return: 0, or a negative errno: the errno of the daemon's error
 * (-EPERM NotDelegated, -ENOENT NotBypassedByParent, ...), -EINVAL for a
 * NULL argument, or sd-bus's for a failed call (-ETIMEDOUT, -ENOTCONN, ...).
 */
int cgbypass_enable_controller(sd_bus *bus, const char *cgroup, const char *controller, sd_bus_error *ret_error);

/* cgbypass_bypass_controller() - BypassController: back to bypass. Return: as above. */
int cgbypass_bypass_controller(sd_bus *bus, const char *cgroup, const char *controller, sd_bus_error *ret_error);

/**
 * cgbypass_set_subtree_control() - SetSubtreeControl
 * @change: "+cpu #io -memory"
 *
 * Return: as cgbypass_enable_controller().
 */
int cgbypass_set_subtree_control(sd_bus *bus, const char *cgroup, const char *change, sd_bus_error *ret_error);

/**
 * cgbypass_get_cgroup() - GetCgroup
 * @ret_reply: the reply, positioned before its a{sv} (controllers as,
 *             subtree_control as, type s, delegated_to u, ...; more keys
 *             may be added); the caller unrefs it
 *
 * Return: as cgbypass_enable_controller().
 */
int cgbypass_get_cgroup(sd_bus *bus, const char *cgroup, sd_bus_message **ret_reply, sd_bus_error *ret_error);

/**
 * cgbypass_get_effective_tree() - GetEffectiveTree
 * @ret_tree: the text (org.cgbypass1(5), EFFECTIVE TREE FORMAT); the caller frees it
 *
 * Return: as cgbypass_enable_controller(); -ENOMEM.
 */
int cgbypass_get_effective_tree(sd_bus *bus, const char *controller, char **ret_tree, sd_bus_error *ret_error);

/**
 * cgbypass_get_effective_nodes() - GetEffectiveNodes
 * @ret_reply: the reply, positioned before its a(uas): per effective node
 *             its depth and its member cgroups, in the order of
 *             GetEffectiveTree's lines; the caller unrefs it
 *
 * Return: as cgbypass_enable_controller().
 */
int cgbypass_get_effective_nodes(sd_bus *bus, const char *controller, sd_bus_message **ret_reply,
                                 sd_bus_error *ret_error);

/**
 * cgbypass_list_delegations() - ListDelegations
 * @ret_reply: the reply, positioned before its a(suas): per delegation its
 *             root, the owner's uid and the controllers; the caller unrefs it
 *
 * Return: as cgbypass_enable_controller().
 */
int cgbypass_list_delegations(sd_bus *bus, sd_bus_message **ret_reply, sd_bus_error *ret_error);

/* cgbypass_reload() - Reload. Return: as cgbypass_enable_controller(). */
int cgbypass_reload(sd_bus *bus, sd_bus_error *ret_error);

/* AddDelegation's options; leaving a flag out leaves the daemon's default */
#define CGBYPASS_DELEGATION_NO_CREATE  (UINT64_C(1) << 0)  /* create=false: the cgroup must exist */
#define CGBYPASS_DELEGATION_PERSISTENT (UINT64_C(1) << 1)  /* lifetime=persistent: until RemoveDelegation */

/**
 * cgbypass_add_delegation() - AddDelegation: delegate @cgroup to @uid at run time
 * @uid: the owner (it needs no passwd entry)
 * @controllers: the controllers the owner may switch, NULL-terminated (NULL: none)
 * @flags: CGBYPASS_DELEGATION_*
 *
 * Return: as cgbypass_enable_controller(); -EINVAL for an unknown flag.
 */
int cgbypass_add_delegation(sd_bus *bus, const char *cgroup, uint32_t uid, char **controllers, uint64_t flags,
                            sd_bus_error *ret_error);

/* cgbypass_remove_delegation() - RemoveDelegation. Return: as cgbypass_enable_controller(). */
int cgbypass_remove_delegation(sd_bus *bus, const char *cgroup, sd_bus_error *ret_error);

/**
 * cgbypass_match_cgroup_changed() - call @callback for each CgroupChanged
 * @ret_slot: the match's slot (NULL: the match lives as long as @bus)
 * @callback: gets the signal; read its cgroup with sd_bus_message_read(m, "s", &path)
 *
 * A match rule on the bus (AddMatch), which any user may add: unlike
 * monitoring or eavesdropping, it needs no privileges on the system bus.
 * Return: 0, or a negative errno.
 */
int cgbypass_match_cgroup_changed(sd_bus *bus, sd_bus_slot **ret_slot, sd_bus_message_handler_t callback,
                                  void *userdata);

#ifdef __cplusplus
}
#endif
