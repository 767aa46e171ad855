/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every cgroup2 interface file of the project's VM kernel: Debian's
 * linux-source-6.1 (6.1.192) built from kernel/config/cgbypass.config and
 * booted with cgroup_debug, as the kernel's struct cftype arrays declare them.
 * Order: the core's files, then by controller in the kernel's ssid order,
 * each as its cftype array registers them.
 *
 * Derived from the 6.1 sources, then checked against `ls -la` of the root, a
 * child and a grandchild in the VM with every controller enabled (the listing
 * is kept in kernel/files-6.1.txt).  What the config decides:
 *   - PSI off: no cgroup.pressure, {cpu,io,memory,irq}.pressure;
 *   - no NUMA: no memory.numa_stat; no SWAP/ZSWAP: no memory.swap.*, memory.zswap.*;
 *   - FAIR_GROUP_SCHED + CFS_BANDWIDTH, no UCLAMP_TASK_GROUP: no cpu.uclamp.*;
 *   - io: blk-cgroup core (io.stat), BLK_DEV_THROTTLING (io.max) and
 *     BLK_CGROUP_IOCOST (io.weight, io.cost.*), registered in block/Makefile's
 *     link order; no IOLATENCY / BFQ (no io.latency, io.bfq.*);
 *   - hugetlb: one hstate, 2MB, because run-vm.sh boots `-cpu qemu64` (no
 *     pdpe1gb); a CPU with 1 GB pages would add the same seven hugetlb.1GB.* files;
 *   - perf_event has no cgroup2 files; debug has files only with cgroup_debug
 *     (always, in our VM).
 * CFT_WRITABLE: the cftype has .write/.write_u64/.write_s64 (mode has S_IWUSR).
 * The fourth field is the model's write handler, for the core files it models.
 */
#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cgbypass/cftype.h"
#include "cgbypass/controller.h"
#include "model-internal.h"

const CfType cftype_table[] = {
        /* kernel/cgroup/cgroup.c: cgroup_base_files[] */
        { "cgroup.type",                  -1, CFT_NOT_ON_ROOT | CFT_WRITABLE | CFT_MOVES_CSS, cgroup_write_type },
        { "cgroup.procs",                 -1, CFT_WRITABLE, cg_write_procs },
        { "cgroup.threads",               -1, CFT_WRITABLE, cg_write_procs },
        /* no .write in stock 6.1 (0444); patch 0003 adds cgroup_controllers_write()
         * (0644): model-files.c decides by the rules */
        { "cgroup.controllers",           -1, CFT_MOVES_CSS, cgroup_write_controllers },
        { "cgroup.subtree_control",       -1, CFT_WRITABLE | CFT_MOVES_CSS, cgroup_write_subtree_control },
        { "cgroup.events",                -1, CFT_NOT_ON_ROOT, NULL },
        { "cgroup.max.descendants",       -1, CFT_WRITABLE, cg_write_max_descendants },
        { "cgroup.max.depth",             -1, CFT_WRITABLE, cg_write_max_depth },
        { "cgroup.stat",                  -1, 0, NULL },
        { "cgroup.freeze",                -1, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "cgroup.kill",                  -1, CFT_NOT_ON_ROOT | CFT_WRITABLE | CFT_NO_READ, NULL },
        { "cpu.stat",                     -1, 0, NULL },

        /* kernel/cgroup/cpuset.c: dfl_files[] */
        { "cpuset.cpus",                  CONTROLLER_CPUSET, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "cpuset.mems",                  CONTROLLER_CPUSET, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "cpuset.cpus.effective",        CONTROLLER_CPUSET, 0, NULL },
        { "cpuset.mems.effective",        CONTROLLER_CPUSET, 0, NULL },
        { "cpuset.cpus.partition",        CONTROLLER_CPUSET, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        /* CFTYPE_DEBUG: only with cgroup_debug, and cgroup_file_name() prefixes
         * ".__DEBUG__." (a dot file, hidden from a plain ls) */
        { ".__DEBUG__.cpuset.cpus.subpartitions", CONTROLLER_CPUSET, CFT_DEBUG, NULL },

        /* kernel/sched/core.c: cpu_files[] */
        { "cpu.weight",                   CONTROLLER_CPU, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "cpu.weight.nice",              CONTROLLER_CPU, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "cpu.idle",                     CONTROLLER_CPU, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "cpu.max",                      CONTROLLER_CPU, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "cpu.max.burst",                CONTROLLER_CPU, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },

        /* block/blk-cgroup.c: blkcg_files[]; block/blk-throttle.c: throtl_files[];
         * block/blk-iocost.c: ioc_files[] */
        { "io.stat",                      CONTROLLER_IO, 0, NULL },
        { "io.max",                       CONTROLLER_IO, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "io.weight",                    CONTROLLER_IO, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "io.cost.qos",                  CONTROLLER_IO, CFT_ONLY_ON_ROOT | CFT_WRITABLE, NULL },
        { "io.cost.model",                CONTROLLER_IO, CFT_ONLY_ON_ROOT | CFT_WRITABLE, NULL },

        /* mm/memcontrol.c: memory_files[] */
        { "memory.current",               CONTROLLER_MEMORY, CFT_NOT_ON_ROOT, NULL },
        { "memory.peak",                  CONTROLLER_MEMORY, CFT_NOT_ON_ROOT, NULL },
        { "memory.min",                   CONTROLLER_MEMORY, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "memory.low",                   CONTROLLER_MEMORY, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "memory.high",                  CONTROLLER_MEMORY, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "memory.max",                   CONTROLLER_MEMORY, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "memory.events",                CONTROLLER_MEMORY, CFT_NOT_ON_ROOT, NULL },
        { "memory.events.local",          CONTROLLER_MEMORY, CFT_NOT_ON_ROOT, NULL },
        { "memory.stat",                  CONTROLLER_MEMORY, 0, NULL },
        { "memory.oom.group",             CONTROLLER_MEMORY, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "memory.reclaim",               CONTROLLER_MEMORY, CFT_WRITABLE | CFT_NO_READ, NULL },

        /* perf_event: no dfl_cftypes */

        /* mm/hugetlb_cgroup.c: __hugetlb_cgroup_file_dfl_init(), per hstate */
        { "hugetlb.2MB.max",              CONTROLLER_HUGETLB, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "hugetlb.2MB.rsvd.max",         CONTROLLER_HUGETLB, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "hugetlb.2MB.current",          CONTROLLER_HUGETLB, CFT_NOT_ON_ROOT, NULL },
        { "hugetlb.2MB.rsvd.current",     CONTROLLER_HUGETLB, CFT_NOT_ON_ROOT, NULL },
        { "hugetlb.2MB.events",           CONTROLLER_HUGETLB, CFT_NOT_ON_ROOT, NULL },
        { "hugetlb.2MB.events.local",     CONTROLLER_HUGETLB, CFT_NOT_ON_ROOT, NULL },
        { "hugetlb.2MB.numa_stat",        CONTROLLER_HUGETLB, CFT_NOT_ON_ROOT, NULL },

        /* kernel/cgroup/pids.c: pids_files[] (pids.peak: a Debian 6.1 backport) */
        { "pids.max",                     CONTROLLER_PIDS, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "pids.current",                 CONTROLLER_PIDS, CFT_NOT_ON_ROOT, NULL },
        { "pids.peak",                    CONTROLLER_PIDS, CFT_NOT_ON_ROOT, NULL },
        { "pids.events",                  CONTROLLER_PIDS, CFT_NOT_ON_ROOT, NULL },

        /* kernel/cgroup/rdma.c: rdmacg_files[] */
        { "rdma.max",                     CONTROLLER_RDMA, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "rdma.current",                 CONTROLLER_RDMA, CFT_NOT_ON_ROOT, NULL },

        /* kernel/cgroup/misc.c: misc_cg_files[] */
        { "misc.max",                     CONTROLLER_MISC, CFT_NOT_ON_ROOT | CFT_WRITABLE, NULL },
        { "misc.current",                 CONTROLLER_MISC, CFT_NOT_ON_ROOT, NULL },
        { "misc.capacity",                CONTROLLER_MISC, CFT_ONLY_ON_ROOT, NULL },
        { "misc.events",                  CONTROLLER_MISC, CFT_NOT_ON_ROOT, NULL },

        /* kernel/cgroup/debug.c: debug_files[] (implicit on dfl with cgroup_debug) */
        { "debug.taskcount",              CONTROLLER_DEBUG, 0, NULL },
        { "debug.current_css_set",        CONTROLLER_DEBUG, CFT_ONLY_ON_ROOT, NULL },
        { "debug.current_css_set_refcount", CONTROLLER_DEBUG, CFT_ONLY_ON_ROOT, NULL },
        { "debug.current_css_set_cg_links", CONTROLLER_DEBUG, CFT_ONLY_ON_ROOT, NULL },
        { "debug.css_links",              CONTROLLER_DEBUG, 0, NULL },
        { "debug.csses",                  CONTROLLER_DEBUG, 0, NULL },
        { "debug.masks",                  CONTROLLER_DEBUG, 0, NULL },

        { NULL, 0, 0, NULL },
};

/*
 * Name lookups: the model asks for a file by name at every path step that
 * misses and every mkdir (is the name an interface file?), and the sim
 * renders every file of every cgroup, so a scan of the table with strcmp()
 * per entry was most of an apply's user time. An open-addressing hash of the
 * names, built once (the scan's threads may be the first to ask), finds the
 * first entry of a name; same_next chains the entries of one name in table
 * order, so callers see them in the order the table gives.
 */
#define LOOKUP_SLOTS 256        /* a power of two, at least twice the table's size */

static uint16_t slots[LOOKUP_SLOTS];    /* table index + 1; 0: empty */
static uint16_t same_next[LOOKUP_SLOTS]; /* table index + 1 of the next entry of the same name; 0: none */
static const CfType *by_name[LOOKUP_SLOTS / 2 + 1]; /* the entries sorted by name, NULL-terminated */
static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;

static int cftype_name_cmp(const void *a, const void *b) {
        return strcmp((*(const CfType *const *) a)->name, (*(const CfType *const *) b)->name);
}

static size_t name_hash(const char *name) {
        uint32_t x = 2166136261u;

        for (const unsigned char *p = (const unsigned char *) name; *p; p++)
                x = (x ^ *p) * 16777619u;
        return x & (LOOKUP_SLOTS - 1);
}

static void lookup_init(void) {
        size_t n = 0;

        while (cftype_table[n].name)
                n++;
        assert(n * 2 <= LOOKUP_SLOTS);
        for (size_t i = 0; i < n; i++) {
                size_t s = name_hash(cftype_table[i].name);
                for (; slots[s]; s = (s + 1) & (LOOKUP_SLOTS - 1))
                        if (streq(cftype_table[slots[s] - 1].name, cftype_table[i].name))
                                break;
                if (!slots[s]) {
                        slots[s] = (uint16_t) (i + 1);
                        continue;
                }
                size_t k = slots[s] - 1;        /* append to the chain of that name */
                while (same_next[k])
                        k = same_next[k] - 1;
                same_next[k] = (uint16_t) (i + 1);
        }
        for (size_t i = 0; i < n; i++)
                by_name[i] = &cftype_table[i];
        qsort(by_name, n, sizeof(by_name[0]), cftype_name_cmp);
}

const CfType *cftype_lookup(const char *name) {
        (void) pthread_once(&lookup_once, lookup_init);
        for (size_t s = name_hash(name); slots[s]; s = (s + 1) & (LOOKUP_SLOTS - 1))
                if (streq(cftype_table[slots[s] - 1].name, name))
                        return &cftype_table[slots[s] - 1];
        return NULL;
}

const CfType *cftype_lookup_next(const CfType *t) {
        uint16_t k = same_next[t - cftype_table];
        return k ? &cftype_table[k - 1] : NULL;
}

const CfType *const *cftype_by_name(void) {
        (void) pthread_once(&lookup_once, lookup_init);
        return by_name;
}
