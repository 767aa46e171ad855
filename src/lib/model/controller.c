/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>

#include "cgbypass/controller.h"
#include "cgbypass/macro.h"
#include "cgbypass/strbuf.h"

typedef struct ControllerInfo {
        const char *name;
        bool threaded;          /* ss->threaded */
        bool implicit;          /* ss->implicit_on_dfl */
        bool v1_only;           /* no dfl_cftypes: cgroup2 rejects its name */
} ControllerInfo;

/* Linux 6.1: the cgroup_subsys structs; debug as enable_debug_cgroup() leaves it. */
static const ControllerInfo controller_info[_CONTROLLER_MAX] = {
        [CONTROLLER_CPUSET]     = { "cpuset",     .threaded = true },
        [CONTROLLER_CPU]        = { "cpu",        .threaded = true },
        [CONTROLLER_CPUACCT]    = { "cpuacct",    .v1_only = true },
        [CONTROLLER_IO]         = { "io" },
        [CONTROLLER_MEMORY]     = { "memory" },
        [CONTROLLER_DEVICES]    = { "devices",    .v1_only = true },
        [CONTROLLER_FREEZER]    = { "freezer",    .v1_only = true },
        [CONTROLLER_NET_CLS]    = { "net_cls",    .v1_only = true },
        [CONTROLLER_PERF_EVENT] = { "perf_event", .threaded = true, .implicit = true },
        [CONTROLLER_NET_PRIO]   = { "net_prio",   .v1_only = true },
        [CONTROLLER_HUGETLB]    = { "hugetlb" },
        [CONTROLLER_PIDS]       = { "pids",       .threaded = true },
        [CONTROLLER_RDMA]       = { "rdma" },
        [CONTROLLER_MISC]       = { "misc" },
        [CONTROLLER_DEBUG]      = { "debug",      .threaded = true, .implicit = true },
};

const char *controller_to_string(Controller c) {
        if (c < 0 || c >= _CONTROLLER_MAX)
                return NULL;
        return controller_info[c].name;
}

Controller controller_from_string(const char *s) {
        if (!s)
                return _CONTROLLER_INVALID;
        /* the first byte before the call: every control write's tokens are looked up here, 15 names a miss */
        FOREACH_CONTROLLER(c)
                if (controller_info[c].name[0] == s[0] && streq(controller_info[c].name, s))
                        return c;
        return _CONTROLLER_INVALID;
}

/* the controllers of @builtin whose ControllerInfo has the bool at @flag set */
static CgMask mask_with(CgMask builtin, size_t flag) {
        CgMask m = 0;
        FOREACH_CONTROLLER_IN(c, builtin)
                if (*(const bool *) ((const char *) &controller_info[c] + flag))
                        m |= CGMASK(c);
        return m;
}

CgMask controller_threaded_mask(CgMask builtin) {
        return mask_with(builtin, offsetof(ControllerInfo, threaded));
}

CgMask controller_implicit_mask(CgMask builtin) {
        return mask_with(builtin, offsetof(ControllerInfo, implicit));
}

CgMask controller_inhibit_mask(CgMask builtin) {
        return mask_with(builtin, offsetof(ControllerInfo, v1_only));
}

CgMask controller_depends_on(Controller c, CgMask builtin) {
        /* block/blk-cgroup.c: io pulls in memory so writeback can find the page owner */
        if (c == CONTROLLER_IO && (builtin & CGMASK(CONTROLLER_MEMORY)))
                return CGMASK(CONTROLLER_MEMORY);
        return 0;
}

int controller_mask_from_list(const char *list, CgMask *ret, char **reterr_bad) {
        _cleanup_free_ char *copy = strdup(list);
        CgMask m = 0;
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
                Controller c = controller_from_string(t);
                if (c < 0) {
                        if (reterr_bad)
                                *reterr_bad = strdup(t);
                        return -EINVAL;
                }
                m |= CGMASK(c);
        }
        *ret = m;
        return 0;
}

char *controller_mask_to_string(CgMask mask, const char *sep) {
        StrBuf b = STRBUF_INIT;
        bool first = true;
        char *s;

        FOREACH_CONTROLLER_IN(c, mask) {
                if (!first)
                        strbuf_append(&b, sep);
                strbuf_append(&b, controller_info[c].name);
                first = false;
        }
        if (strbuf_steal(&b, &s) < 0)
                return NULL;
        return s;
}
