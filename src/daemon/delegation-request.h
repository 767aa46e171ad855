/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "cgbypass/controller.h"
#include "request.h"

/**
 * delegation_request_read_options() - AddDelegation's a{sv} options
 *
 * create (b) and lifetime (s: "cgroup" or "persistent"), each at most once;
 * anything else is refused, so a typo is not ignored. @create and
 * @persistent keep their defaults for a missing key. Return: 0; -EINVAL
 * with @error InvalidArgument; a negative errno of sd-bus for a message
 * that is not what the signature says.
 */
int delegation_request_read_options(sd_bus_message *msg, bool *create, bool *persistent, sd_bus_error *error);

/**
 * delegation_request_read_controllers() - AddDelegation's controllers (as)
 * @available: the controllers this hierarchy has
 * @ret_names: the mask as "cpu io" (malloc'ed)
 *
 * Return: 0; -EINVAL with @error UnknownController (no such name, or not
 * in @available); -ENOMEM; a negative errno of sd-bus.
 */
int delegation_request_read_controllers(sd_bus_message *msg, CgMask available, CgMask *ret, char **ret_names,
                                        sd_bus_error *error);

/*
 * The named error for what manager_add_delegation() or
 * manager_remove_delegation() refused with @r (@why: their words):
 * -ENOENT NoSuchCgroup, -EEXIST DelegationConflict, -EINVAL
 * InvalidArgument, -ESRCH NoSuchDelegation, -EPERM NotRuntimeDelegation, -EDQUOT TooManyCgroups,
 * anything else Failed. Return: the errno the name maps to (-ENOMEM as is).
 */
int bus_error_from_delegation(sd_bus_error *error, int r, const char *why);
