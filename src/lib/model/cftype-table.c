/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PROVISIONAL (lead): core files only, replaced by the kernel helper's verified table. */
#include <stddef.h>

#include "cgbypass/cftype.h"

const CfType cftype_table[] = {
        { "cgroup.type",            -1, CFT_NOT_ON_ROOT | CFT_WRITABLE },
        { "cgroup.procs",           -1, CFT_WRITABLE },
        { "cgroup.threads",         -1, CFT_WRITABLE },
        { "cgroup.controllers",     -1, 0 },
        { "cgroup.subtree_control", -1, CFT_WRITABLE },
        { "cgroup.events",          -1, CFT_NOT_ON_ROOT },
        { "cgroup.max.descendants", -1, CFT_WRITABLE },
        { "cgroup.max.depth",       -1, CFT_WRITABLE },
        { "cgroup.stat",            -1, 0 },
        { "cgroup.freeze",          -1, CFT_NOT_ON_ROOT | CFT_WRITABLE },
        { "cgroup.kill",            -1, CFT_NOT_ON_ROOT | CFT_WRITABLE },
        { "cpu.stat",               -1, 0 },
        { "cpu.weight",              1, CFT_NOT_ON_ROOT | CFT_WRITABLE },
        { "memory.max",              3, CFT_NOT_ON_ROOT | CFT_WRITABLE },
        { "debug.masks",             14, 0 },
        { NULL, 0, 0 },
};
