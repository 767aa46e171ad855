/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The interface files of the project's VM kernel (Linux 6.1, the config in
 * kernel/config/), as the kernel's struct cftype arrays declare them.
 * controller is a Controller, or -1 for the core's own files.
 */

#include "cgbypass/model.h"

/* kernel: cftype.write; the model's rule for a write of @buf to the file in @c */
typedef int (*CfWrite)(Hierarchy *h, Cgroup *c, const char *buf, Reason *reterr_reason);

typedef struct CfType {
        const char *name;
        int controller;
        unsigned flags;
        CfWrite write;          /* NULL: writes are not modeled (-ENOSYS), or there is no handler */
} CfType;

#define CFT_NOT_ON_ROOT    (1u << 0) /* kernel: CFTYPE_NOT_ON_ROOT */
#define CFT_ONLY_ON_ROOT   (1u << 1) /* kernel: CFTYPE_ONLY_ON_ROOT */
#define CFT_WRITABLE       (1u << 2) /* has a write handler: mode 0644, else 0444 */
#define CFT_CORE_NEEDS_PSI (1u << 3) /* core file present only with CONFIG_PSI */
#define CFT_DEBUG          (1u << 4) /* kernel: CFTYPE_DEBUG, only when booted with cgroup_debug */
#define CFT_NO_READ        (1u << 5) /* no read handler (mode 0200): reads fail with EINVAL */
#define CFT_MOVES_CSS      (1u << 6) /* a write may kill csses below the parent: their values go too */

/* terminated by an entry whose name is NULL */
extern const CfType cftype_table[];

/* The first entry named @name (table order), or NULL; then the next entry of the same name, or NULL.
 * A hash lookup: use these rather than a scan of cftype_table[]. */
const CfType *cftype_lookup(const char *name);
const CfType *cftype_lookup_next(const CfType *t);

/* Every entry, sorted by name (entries of one name in any order), NULL-terminated: listings need no sort. */
const CfType *const *cftype_by_name(void);
