/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A request from a caller, checked before anything else looks at it: the
 * path is normalized and bounded, the controllers exist on this kernel's
 * cgroup2, a change is well formed. delegation.h decides who may make it.
 */

#include "cgbypass/config.h"
#include "cgbypass/controller.h"
#include "refusal.h"

/* What a request asks for, validated (request_parse()). */
typedef enum ChangeKind {
        CHANGE_ENABLE,          /* EnableController: "+X" to cgroup.controllers */
        CHANGE_BYPASS,          /* BypassController: "#X" to cgroup.controllers */
        CHANGE_SUBTREE,         /* SetSubtreeControl: the change to cgroup.subtree_control */
        _CHANGE_KIND_MAX,
} ChangeKind;

typedef struct ChangeRequest {
        ChangeKind kind;
        const char *method;     /* "EnableController", ... */
        const char *cgroup;     /* normalized absolute cgroup path */
        const char *file;       /* "cgroup.controllers" or "cgroup.subtree_control" */
        ControllerChange change;
        CgMask controllers;     /* every controller named */
        char *value;            /* what is written: "+cpu", "+cpu #io -memory" (owned) */
        char *names;            /* the controllers named, space-separated (owned) */
} ChangeRequest;

void change_request_done(ChangeRequest *r);

/*
 * A caller's string, safe for a message and a log line: at most
 * REQUEST_QUOTE_SIZE - 8 bytes cut at a character boundary (then "..."),
 * control characters (C0, DEL and C1) as '?', invalid UTF-8 not at all. Return: @buf, or a
 * static text.
 */
#define REQUEST_QUOTE_SIZE 104
const char *request_quote(const char *s, char buf[static REQUEST_QUOTE_SIZE]);

/**
 * request_path_verify() - check a cgroup path from a caller
 *
 * Normalized and absolute, without white space (cgpath_verify(), CGPATH_MANAGED),
 * valid UTF-8, at most MANAGER_PATH_DEPTH_MAX components. Return: 0, or -EINVAL
 * with @reterr REASON_INVALID_PATH.
 */
int request_path_verify(const char *path, Refusal *reterr);

/**
 * request_controller_verify() - check one controller name from a caller
 * @builtin: the controllers of the hierarchy
 *
 * Return: 0 and @ret; -EINVAL with @reterr: REASON_PARSE for a name with a
 * '+', '-' or '#' in front or anything that is not one name,
 * REASON_UNKNOWN_CONTROLLER for a name the kernel does not have on cgroup2.
 */
int request_controller_verify(const char *name, CgMask builtin, Controller *ret, Refusal *reterr);

/**
 * request_parse() - validate a change request's arguments
 * @builtin: the controllers of the hierarchy
 * @arg: the controller (CHANGE_ENABLE, CHANGE_BYPASS) or the change (CHANGE_SUBTREE)
 * @ret: the request; its strings point into @cgroup or are owned (change_request_done())
 *
 * Return: 0; -EINVAL with @reterr (REASON_INVALID_PATH, REASON_ROOT,
 * REASON_UNKNOWN_CONTROLLER, REASON_PARSE); -ENOMEM.
 */
int request_parse(CgMask builtin, ChangeKind kind, const char *cgroup, const char *arg, ChangeRequest *ret,
                  Refusal *reterr);
