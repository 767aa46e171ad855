/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a container asks of cgbypassd, from its annotations:
 *
 *   org.cgbypass1.enable = cpu,io     the controllers to delegate to the
 *                                     owner and re-enable in the container's cgroup
 *   org.cgbypass1.owner  = UID|USER   the owner (default: process.user.uid,
 *                                     through the container's uid mappings)
 *
 * Any other key under org.cgbypass1. is refused, so a misspelt one is not
 * silently a container without its controllers.
 */

#include <sys/types.h>

#include "cgbypass/controller.h"
#include "oci-spec.h"

#define HOOK_ANNOTATION_PREFIX "org.cgbypass1."
#define HOOK_ANNOTATION_ENABLE HOOK_ANNOTATION_PREFIX "enable"
#define HOOK_ANNOTATION_OWNER  HOOK_ANNOTATION_PREFIX "owner"

typedef struct HookRequest {
        CgMask controllers;     /* 0: the container asks nothing (the hook does nothing) */
        const char *owner;      /* the owner annotation's value, or NULL */
} HookRequest;

/**
 * hook_request_parse() - the request in a container's annotations
 * @reterr_why: on -EINVAL, what is wrong (malloc'ed)
 *
 * Return: 0 (controllers 0 when there is no enable annotation); -EINVAL (an
 * unknown org.cgbypass1.* key, an empty or unknown controller list); -ENOMEM.
 */
int hook_request_parse(const OciAnnotation *a, size_t n, HookRequest *ret, char **reterr_why);

/**
 * hook_owner_resolve() - the uid of an owner annotation: a number or a user name
 *
 * Return: 0; -EINVAL (neither); -ESRCH (no such user).
 */
int hook_owner_resolve(const char *owner, uid_t *ret);
