/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The settings of controller files in Linux 6.1: each syntax mirrors the
 * write handler named beside it and prints what its show handler prints.
 * x86-64: PAGE_SIZE 4096, 2 MB and 1 GB huge pages, PID_MAX_LIMIT 4M,
 * NR_CPUS 8192 and MAX_NUMNODES 1024 as Debian builds them.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <pthread.h>

#include "cgbypass/cftype.h"
#include "cgbypass/cfvalue.h"
#include "cgbypass/macro.h"
#include "cgbypass/parse.h"
#include "cgbypass/strbuf.h"

#define PAGE_SIZE               4096ULL
#define PAGE_COUNTER_MAX        (LLONG_MAX / PAGE_SIZE)         /* mm/page_counter.h, 64-bit */
#define CGROUP_WEIGHT_MIN       1ULL
#define CGROUP_WEIGHT_DFL       100ULL
#define CGROUP_WEIGHT_MAX       10000ULL
#define NSEC_PER_USEC           1000ULL
#define RUNTIME_INF             UINT64_MAX
#define CFS_PERIOD_MIN          (1000ULL * NSEC_PER_USEC)       /* min_cfs_quota_period: 1 ms */
#define CFS_PERIOD_MAX          (1000000ULL * NSEC_PER_USEC)    /* max_cfs_quota_period: 1 s */
#define CFS_RUNTIME_MAX         ((((uint64_t) 1 << 44) - 1) * NSEC_PER_USEC)  /* MAX_BW us */
#define PIDS_MAX                (4194304LL + 1)                 /* PID_MAX_LIMIT + 1 */
#define NR_CPUS                 8192u
#define MAX_NUMNODES            1024u

typedef enum CfSyntax {
        SYN_MEMORY,             /* page_counter_memparse(): "max" or bytes, shown in pages */
        SYN_WEIGHT,             /* cpu_weight_write_u64() */
        SYN_NICE,               /* cpu_weight_nice_write_s64() */
        SYN_IDLE,               /* cpu_idle_write_s64() */
        SYN_CPU_MAX,            /* cpu_max_write() */
        SYN_CPU_BURST,          /* cpu_cfs_burst_write_u64() */
        SYN_OOM_GROUP,          /* memory_oom_group_write() */
        SYN_PIDS_MAX,           /* pids_max_write() */
        SYN_CPULIST,            /* cpuset_write_resmask(): cpulist_parse() */
        SYN_NODELIST,           /* cpuset_write_resmask(): nodelist_parse() */
        SYN_PARTITION,          /* sched_partition_write() */
        SYN_IO_WEIGHT,          /* ioc_weight_write() */
        SYN_IO_MAX,             /* tg_set_limit() */
        SYN_MISC_MAX,           /* misc_cg_max_write() */
        SYN_RDMA_MAX,           /* rdmacg_resource_set_max() */
} CfSyntax;

typedef struct CfValueType {
        const char *name;
        CfSyntax syntax;
        const char *dfl;
        unsigned long long granule;     /* SYN_MEMORY: the limit is rounded down to it (pages) */
} CfValueType;

static const CfValueType value_types[] = {
        { "memory.min",                 SYN_MEMORY,     "0\n",          1 },
        { "memory.low",                 SYN_MEMORY,     "0\n",          1 },
        { "memory.high",                SYN_MEMORY,     "max\n",        1 },
        { "memory.max",                 SYN_MEMORY,     "max\n",        1 },
        { "memory.swap.high",           SYN_MEMORY,     "max\n",        1 },
        { "memory.swap.max",            SYN_MEMORY,     "max\n",        1 },
        { "memory.zswap.max",           SYN_MEMORY,     "max\n",        1 },
        { "memory.oom.group",           SYN_OOM_GROUP,  "0\n",          0 },
        /* hugetlb_cgroup_write(): the limit is rounded down to whole huge pages */
        { "hugetlb.2MB.max",            SYN_MEMORY,     "max\n",        512 },
        { "hugetlb.2MB.rsvd.max",       SYN_MEMORY,     "max\n",        512 },
        { "hugetlb.1GB.max",            SYN_MEMORY,     "max\n",        262144 },
        { "hugetlb.1GB.rsvd.max",       SYN_MEMORY,     "max\n",        262144 },
        { "cpu.weight",                 SYN_WEIGHT,     "100\n",        0 },
        { "cpu.weight.nice",            SYN_NICE,       "0\n",          0 },
        { "cpu.idle",                   SYN_IDLE,       "0\n",          0 },
        { "cpu.max",                    SYN_CPU_MAX,    "max 100000\n", 0 },
        { "cpu.max.burst",              SYN_CPU_BURST,  "0\n",          0 },
        { "pids.max",                   SYN_PIDS_MAX,   "max\n",        0 },
        { "cpuset.cpus",                SYN_CPULIST,    "\n",           0 },
        { "cpuset.mems",                SYN_NODELIST,   "\n",           0 },
        { "cpuset.cpus.partition",      SYN_PARTITION,  "member\n",     0 },
        { "io.weight",                  SYN_IO_WEIGHT,  "default 100\n", 0 },
        { "io.max",                     SYN_IO_MAX,     "",             0 },
        { "misc.max",                   SYN_MISC_MAX,   "",             0 },
        { "rdma.max",                   SYN_RDMA_MAX,   "",             0 },
};

static const char *const syntax_words[] = {
        [SYN_MEMORY]    = "'max' or a number of bytes with an optional K, M, G, T, P or E suffix",
        [SYN_WEIGHT]    = "a weight from 1 to 10000",
        [SYN_NICE]      = "a nice value from -20 to 19",
        [SYN_IDLE]      = "0 or 1",
        [SYN_CPU_MAX]   = "'QUOTA [PERIOD]' in microseconds: QUOTA 'max' or from 1000, PERIOD from 1000 "
                          "to 1000000, QUOTA at least cpu.max.burst",
        [SYN_CPU_BURST] = "microseconds, at most the quota in cpu.max",
        [SYN_OOM_GROUP] = "0 or 1",
        [SYN_PIDS_MAX]  = "'max' or a number from 0 to 4194304",
        [SYN_CPULIST]   = "a CPU list such as '0-3,8' (ranges, commas, N-M:USED/GROUP)",
        [SYN_NODELIST]  = "a NUMA node list such as '0-1' (ranges, commas, N-M:USED/GROUP)",
        [SYN_PARTITION] = "member, root or isolated",
        [SYN_IO_WEIGHT] = "'default N', 'N', 'MAJ:MIN N' or 'MAJ:MIN default', N from 1 to 10000",
        [SYN_IO_MAX]    = "'MAJ:MIN' and rbps=, wbps=, riops=, wiops= each 'max' or a number above 1",
        [SYN_MISC_MAX]  = "'RESOURCE max' or 'RESOURCE N', RESOURCE sev or sev_es",
        [SYN_RDMA_MAX]  = "'DEVICE hca_handle=N hca_object=N', each N 'max' or a number",
};

static const CfValueType *type_of_scan(const char *file) {
        for (size_t i = 0; i < ELEMENTSOF(value_types); i++)
                if (streq(value_types[i].name, file))
                        return &value_types[i];
        return NULL;
}

/*
 * A value file that is an interface file of the table (all but the swap, zswap and 1 GB hugetlb ones,
 * which this kernel config lacks) is found through its entry in cftype_table[] by cftype_lookup()'s
 * hash, not a strcmp() scan of value_types[] (the sim asks for every file of every cgroup it
 * renders); any other name is scanned for. Built once; a name twice in value_types[] keeps the scan.
 */
#define MAX_CFTYPES 128
static uint8_t type_by_cftype[MAX_CFTYPES];     /* value_types index + 1; 0: not a value file */
static bool by_cftype;
static pthread_once_t by_cftype_once = PTHREAD_ONCE_INIT;

static void by_cftype_init(void) {
        for (size_t i = 0; i < ELEMENTSOF(value_types); i++) {
                const CfType *t = cftype_lookup(value_types[i].name);
                if (!t)
                        continue;       /* not on this kernel: found by the scan */
                if (t - cftype_table >= MAX_CFTYPES || type_by_cftype[t - cftype_table])
                        return;
                type_by_cftype[t - cftype_table] = (uint8_t) (i + 1);
        }
        by_cftype = true;
}

static const CfValueType *type_of(const char *file) {
        (void) pthread_once(&by_cftype_once, by_cftype_init);
        const CfType *t = by_cftype ? cftype_lookup(file) : NULL;
        if (!t)
                return type_of_scan(file);
        size_t k = (size_t) (t - cftype_table);
        return k < MAX_CFTYPES && type_by_cftype[k] ? &value_types[type_by_cftype[k] - 1] : NULL;
}

bool cfvalue_known(const char *file) {
        return type_of(file);
}

const char *cfvalue_default(const char *file) {
        const CfValueType *t = type_of(file);
        return t ? t->dfl : NULL;
}

const char *cfvalue_syntax(const char *file) {
        const CfValueType *t = type_of(file);
        return t ? syntax_words[t->syntax] : NULL;
}

/* ---- numbers as the kernel reads them ---- */

/* lib/cmdline.c memparse() on simple_strtoull(): no sign, wraps silently, base 0 */
static unsigned long long memparse(const char *s, const char **ret_end) {
        unsigned long long v;
        unsigned base = 0;

        s = kparse_integer_fixup_radix(s, &base);
        s += kparse_integer(s, base, &v, NULL);
        switch (*s) {
        case 'E': case 'e':
                v <<= 10;
                __attribute__((__fallthrough__));
        case 'P': case 'p':
                v <<= 10;
                __attribute__((__fallthrough__));
        case 'T': case 't':
                v <<= 10;
                __attribute__((__fallthrough__));
        case 'G': case 'g':
                v <<= 10;
                __attribute__((__fallthrough__));
        case 'M': case 'm':
                v <<= 10;
                __attribute__((__fallthrough__));
        case 'K': case 'k':
                v <<= 10;
                s++;
                break;
        default:
                break;
        }
        *ret_end = s;
        return v;
}

/* the kernel's sscanf("%llu") (lib/vsprintf.c): leading space, then digits (no sign); the rest is ignored */
static bool scan_ull(const char *s, unsigned long long *ret, const char **ret_end) {
        unsigned long long v = 0;
        const char *start;

        while (isspace((unsigned char) *s))
                s++;
        start = s;
        while (isdigit((unsigned char) *s))
                v = v * 10 + (unsigned long long) (*s++ - '0');
        if (s == start)
                return false;
        *ret = v;
        if (ret_end)
                *ret_end = s;
        return true;
}

/* bitmap_parselist() (lib/bitmap.c, 6.1) into a bool array of @nbits; "N" is the last bit */
static int parse_list(const char *s, bool *bits, unsigned nbits) {
        for (;;) {
                unsigned long long start, end, used, group;
                const char *e;

                while (isspace((unsigned char) *s) || *s == ',')
                        s++;
                if (*s == '\0' || *s == '\n')
                        return 0;
#define GETNUM(var) do {                                                        \
                if (*s == 'N') { var = nbits - 1; s++; }                        \
                else {                                                          \
                        if (!isdigit((unsigned char) *s))                       \
                                return -EINVAL;                                 \
                        var = 0;                                                \
                        while (isdigit((unsigned char) *s)) {                   \
                                var = var * 10 + (unsigned) (*s++ - '0');       \
                                if (var > UINT32_MAX)                           \
                                        return -EOVERFLOW;                      \
                        }                                                       \
                }                                                               \
        } while (0)
                GETNUM(start);
                end = start;
                used = group = 1;
                e = s;
                if (*e == '-') {
                        s++;
                        GETNUM(end);
                        if (*s == ':') {
                                s++;
                                GETNUM(used);
                                if (*s != '/')
                                        return -EINVAL;
                                s++;
                                GETNUM(group);
                        }
                }
#undef GETNUM
                if (!(isspace((unsigned char) *s) || *s == ',' || *s == '\0' || *s == '\n'))
                        return -EINVAL;
                /* bitmap_check_region() */
                if (start > end || group == 0 || used > group)
                        return -EINVAL;
                if (end >= nbits)
                        return -ERANGE;
                for (unsigned long long b = start; b <= end; b++)
                        if ((b - start) % group < used)
                                bits[b] = true;
        }
}

/* "%*pbl" */
static void print_list(StrBuf *b, const bool *bits, unsigned nbits) {
        bool first = true;

        for (unsigned i = 0; i < nbits; i++) {
                if (!bits[i])
                        continue;
                unsigned j = i;
                while (j + 1 < nbits && bits[j + 1])
                        j++;
                strbuf_printf(b, "%s%u", first ? "" : ",", i);
                if (j > i)
                        strbuf_printf(b, "-%u", j);
                first = false;
                i = j;
        }
        strbuf_putc(b, '\n');
}

/* kernel: sched_prio_to_weight[] (kernel/sched/core.c) */
static const int prio_to_weight[40] = {
        88761, 71755, 56483, 46273, 36291,
        29154, 23254, 18705, 14949, 11916,
        9548,  7620,  6100,  4904,  3906,
        3121,  2501,  1991,  1586,  1277,
        1024,  820,   655,   526,   423,
        335,   272,   215,   172,   137,
        110,   87,    70,    56,    45,
        36,    29,    23,    18,    15,
};

static unsigned long long round_div(unsigned long long a, unsigned long long b) {
        return (a + b / 2) / b;     /* DIV_ROUND_CLOSEST_ULL */
}

/* cpu_weight_nice_read_s64(): the nice level whose weight is nearest */
static int nice_of_shares(unsigned long long shares) {
        long long last = llabs(prio_to_weight[0] - (long long) shares);
        int prio;

        for (prio = 1; prio < 40; prio++) {
                long long d = llabs(prio_to_weight[prio] - (long long) shares);
                if (d >= last)
                        break;
                last = d;
        }
        return prio - 1 - 20;
}

/* ---- keyed files: one line per device or resource ---- */

typedef struct Lines {
        char **v;
        size_t n;
} Lines;

static void lines_done(Lines *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i]);
        free(l->v);
        *l = (Lines) {};
}

static int lines_split(const char *shown, Lines *ret) {
        Lines l = {};

        for (const char *s = shown; s && *s;) {
                size_t n = strcspn(s, "\n");
                char **v = realloc(l.v, (l.n + 1) * sizeof(char *));
                if (!v || !(v[l.n] = strndup(s, n))) {
                        if (v)
                                l.v = v;
                        lines_done(&l);
                        return -ENOMEM;
                }
                l.v = v;
                l.n++;
                s += n + (s[n] == '\n');
        }
        *ret = l;
        return 0;
}

/* The line whose first word is @key, or l->n. */
static size_t lines_find(const Lines *l, const char *key) {
        size_t k = strlen(key);

        for (size_t i = 0; i < l->n; i++)
                if (strncmp(l->v[i], key, k) == 0 && (l->v[i][k] == ' ' || l->v[i][k] == '\0'))
                        return i;
        return l->n;
}

/* Whether @shown has a line for @key: 0, -ENOENT, -ENOMEM. */
static int lines_find_text(const char *shown, const char *key) {
        Lines l = {};
        int r = lines_split(shown, &l);

        if (r < 0)
                return r;
        r = lines_find(&l, key) < l.n ? 0 : -ENOENT;
        lines_done(&l);
        return r;
}

/* Replace line @i (append when @i == n; remove when @text is NULL). */
static int lines_set(Lines *l, size_t i, const char *text) {
        if (!text) {
                if (i < l->n) {
                        free(l->v[i]);
                        memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof(char *));
                        l->n--;
                }
                return 0;
        }
        char *t = strdup(text);
        if (!t)
                return -ENOMEM;
        if (i < l->n) {
                free(l->v[i]);
                l->v[i] = t;
                return 0;
        }
        char **v = realloc(l->v, (l->n + 1) * sizeof(char *));
        if (!v) {
                free(t);
                return -ENOMEM;
        }
        l->v = v;
        l->v[l->n++] = t;
        return 0;
}

static int lines_join(const Lines *l, char **ret) {
        StrBuf b = STRBUF_INIT;

        for (size_t i = 0; i < l->n; i++)
                strbuf_printf(&b, "%s\n", l->v[i]);
        if (l->n == 0)
                strbuf_append(&b, "");
        return strbuf_steal(&b, ret);
}

/* blkg_conf_prep(): "MAJ:MIN" then the body. -EINVAL when there is no device. */
static int parse_dev(const char *s, unsigned *ret_maj, unsigned *ret_min, const char **ret_body) {
        unsigned long long maj, min;
        const char *e;

        if (!scan_ull(s, &maj, &e) || *e != ':' || !scan_ull(e + 1, &min, &e) || maj > UINT32_MAX || min > UINT32_MAX)
                return -EINVAL;
        *ret_maj = (unsigned) maj;
        *ret_min = (unsigned) min;
        *ret_body = e;
        return 0;
}

/* ---- the syntaxes ---- */

typedef struct Ctx {
        const CfValueType *type;
        const char *shown;
        CfValueLookup lookup;
        void *userdata;
        StrBuf out;
} Ctx;

static const char *other(const Ctx *x, const char *file) {
        const char *s = x->lookup ? x->lookup(file, x->userdata) : NULL;
        return s ?: cfvalue_default(file);
}

static int write_memory(Ctx *x, char *buf) {
        unsigned long long pages, limit = PAGE_COUNTER_MAX / x->type->granule * x->type->granule;
        const char *end;

        buf = kstrstrip(buf);
        if (streq(buf, "max"))
                pages = PAGE_COUNTER_MAX;
        else {
                unsigned long long bytes = memparse(buf, &end);
                if (*end != '\0')
                        return -EINVAL;
                pages = bytes / PAGE_SIZE;
                if (pages > PAGE_COUNTER_MAX)
                        pages = PAGE_COUNTER_MAX;
        }
        pages = pages / x->type->granule * x->type->granule;
        if (pages >= limit)
                strbuf_append(&x->out, "max\n");
        else
                strbuf_printf(&x->out, "%llu\n", pages * PAGE_SIZE);
        return 0;
}

static int write_weight(Ctx *x, char *buf) {
        unsigned long long w;
        int r = kstrtoull(buf, 0, &w);

        if (r < 0)
                return r;
        if (w < CGROUP_WEIGHT_MIN || w > CGROUP_WEIGHT_MAX)
                return -ERANGE;
        /* sched_group_set_shares() refuses an idle group */
        if (x->lookup && streq(other(x, "cpu.idle"), "1\n"))
                return -EINVAL;
        /* stored as shares, read back rounded: every weight survives the trip */
        strbuf_printf(&x->out, "%llu\n", round_div(round_div(w * 1024, CGROUP_WEIGHT_DFL) * CGROUP_WEIGHT_DFL, 1024));
        return 0;
}

static int write_nice(Ctx *x, char *buf) {
        long long n;
        int r = kstrtoll(buf, 0, &n);

        if (r < 0)
                return r;
        if (n < -20 || n > 19)
                return -ERANGE;
        if (x->lookup && streq(other(x, "cpu.idle"), "1\n"))
                return -EINVAL;
        strbuf_printf(&x->out, "%d\n", nice_of_shares((unsigned long long) prio_to_weight[n + 20]));
        return 0;
}

static int write_zero_one(Ctx *x, char *buf, bool strip) {
        long long v;
        int r = kstrtoll(strip ? kstrstrip(buf) : buf, 0, &v);

        if (r < 0)
                return r;
        if (v != 0 && v != 1)
                return -EINVAL;
        strbuf_printf(&x->out, "%lld\n", v);
        return 0;
}

/* cpu.max as (quota ns or RUNTIME_INF, period ns) */
static void cpu_max_of(const char *shown, unsigned long long *quota, unsigned long long *period) {
        unsigned long long q, p;
        const char *e;

        *quota = RUNTIME_INF;
        *period = 100000 * NSEC_PER_USEC;
        if (!shown)
                return;
        if (startswith(shown, "max"))
                e = shown + 3;
        else if (scan_ull(shown, &q, &e))
                *quota = q * NSEC_PER_USEC;
        else
                return;
        if (scan_ull(e, &p, NULL))
                *period = p * NSEC_PER_USEC;
}

/* tg_set_cfs_bandwidth()'s checks, cgroup2 (where a child's quota may exceed its parent's) */
static int cfs_bandwidth_check(unsigned long long period, unsigned long long quota, unsigned long long burst) {
        if (quota < CFS_PERIOD_MIN || period < CFS_PERIOD_MIN)
                return -EINVAL;
        if (period > CFS_PERIOD_MAX)
                return -EINVAL;
        if (quota != RUNTIME_INF && quota > CFS_RUNTIME_MAX)
                return -EINVAL;
        if (quota != RUNTIME_INF && (burst > quota || burst + quota > CFS_RUNTIME_MAX))
                return -EINVAL;
        return 0;
}

static int write_cpu_max(Ctx *x, char *buf) {
        unsigned long long quota, period, burst = 0, p;
        char tok[21];
        const char *s = buf, *e;
        size_t n;

        cpu_max_of(x->shown ?: x->type->dfl, &quota, &period);
        /* sscanf(buf, "%20s %llu", tok, &period) < 1 */
        while (isspace((unsigned char) *s))
                s++;
        n = strcspn(s, " \t\n\v\f\r");
        if (n == 0)
                return -EINVAL;
        if (n > 20)
                n = 20;
        memcpy(tok, s, n);
        tok[n] = '\0';
        if (scan_ull(s + n, &p, NULL))
                period = p * NSEC_PER_USEC;
        if (scan_ull(tok, &quota, &e))
                quota *= NSEC_PER_USEC;
        else if (streq(tok, "max"))
                quota = RUNTIME_INF;
        else
                return -EINVAL;
        if (x->lookup) {
                const char *b = other(x, "cpu.max.burst");
                if (scan_ull(b, &burst, NULL))
                        burst *= NSEC_PER_USEC;
        }
        int r = cfs_bandwidth_check(period, quota, burst);
        if (r < 0)
                return r;
        if (quota == RUNTIME_INF)
                strbuf_append(&x->out, "max");
        else
                strbuf_printf(&x->out, "%llu", quota / NSEC_PER_USEC);
        strbuf_printf(&x->out, " %llu\n", period / NSEC_PER_USEC);
        return 0;
}

static int write_cpu_burst(Ctx *x, char *buf) {
        unsigned long long us, quota, period;
        int r = kstrtoull(buf, 0, &us);

        if (r < 0)
                return r;
        if (us > UINT64_MAX / NSEC_PER_USEC)
                return -EINVAL;
        if (x->lookup) {
                cpu_max_of(other(x, "cpu.max"), &quota, &period);
                r = cfs_bandwidth_check(period, quota, us * NSEC_PER_USEC);
                if (r < 0)
                        return r;
        }
        strbuf_printf(&x->out, "%llu\n", us);
        return 0;
}

static int write_pids_max(Ctx *x, char *buf) {
        long long limit;
        int r;

        buf = kstrstrip(buf);
        if (streq(buf, "max")) {
                strbuf_append(&x->out, "max\n");
                return 0;
        }
        r = kstrtoll(buf, 0, &limit);
        if (r < 0)
                return r;
        if (limit < 0 || limit >= PIDS_MAX)
                return -EINVAL;
        strbuf_printf(&x->out, "%lld\n", limit);
        return 0;
}

static int write_list(Ctx *x, char *buf, unsigned nbits) {
        _cleanup_free_ bool *bits = calloc(nbits, sizeof(bool));
        int r;

        if (!bits)
                return -ENOMEM;
        buf = kstrstrip(buf);
        r = parse_list(buf, bits, nbits);
        if (r < 0)
                return r;
        print_list(&x->out, bits, nbits);
        return 0;
}

static int write_partition(Ctx *x, char *buf) {
        buf = kstrstrip(buf);
        if (!streq(buf, "member") && !streq(buf, "root") && !streq(buf, "isolated"))
                return -EINVAL;
        strbuf_printf(&x->out, "%s\n", buf);
        return 0;
}

/* a keyed file's new lines: @key's line set to @line (NULL: removed); the first line for io.weight */
static int keyed_update(Ctx *x, const char *key, const char *line) {
        _cleanup_free_ char *text = NULL;
        Lines l = {};
        int r;

        r = lines_split(x->shown ?: x->type->dfl, &l);
        if (r < 0)
                return r;
        r = lines_set(&l, lines_find(&l, key), line);
        if (r >= 0)
                r = lines_join(&l, &text);
        lines_done(&l);
        if (r < 0)
                return r;
        strbuf_append(&x->out, text);
        return 0;
}

static int write_io_weight(Ctx *x, char *buf) {
        unsigned maj, min;
        unsigned long long v;
        const char *body, *s = buf;
        char key[32], line[64];

        if (!strchr(buf, ':')) {
                /* sscanf(buf, "default %u") || sscanf(buf, "%u"): the literal only matches at the
                 * very start (" default 5" is EINVAL), %u skips blanks and stores an unsigned int */
                if (startswith(s, "default"))
                        s += 7;
                if (!scan_ull(s, &v, NULL))
                        return -EINVAL;
                v = (unsigned) v;
                if (v < CGROUP_WEIGHT_MIN || v > CGROUP_WEIGHT_MAX)
                        return -EINVAL;
                (void) snprintf(line, sizeof(line), "default %llu", v);
                return keyed_update(x, "default", line);
        }
        if (parse_dev(buf, &maj, &min, &body) < 0)
                return -EINVAL;
        while (isspace((unsigned char) *body))
                body++;
        (void) snprintf(key, sizeof(key), "%u:%u", maj, min);
        if (startswith(body, "default"))
                return keyed_update(x, key, NULL);
        if (!scan_ull(body, &v, NULL))
                return -EINVAL;
        v = (unsigned) v;
        if (v < CGROUP_WEIGHT_MIN || v > CGROUP_WEIGHT_MAX)
                return -EINVAL;
        (void) snprintf(line, sizeof(line), "%s %llu", key, v);
        return keyed_update(x, key, line);
}

/* "key=value" tokens into @vals by @keys; a value is "max" (UINT64_MAX) or a number */
static int parse_keyed(const char *body, const char *const *keys, size_t n_keys, unsigned long long *vals,
                       bool zero_ok) {
        _cleanup_free_ char *copy = strdup(body);
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
                char *eq = strchr(tok, '=');
                unsigned long long v;
                size_t k;

                if (!eq)
                        return -EINVAL;
                *eq++ = '\0';
                if (streq(eq, "max"))
                        v = UINT64_MAX;
                else if (!scan_ull(eq, &v, NULL))
                        return -EINVAL;
                else if (v == 0 && !zero_ok)
                        return -ERANGE;
                else if (v == 1 && !zero_ok)
                        return -EINVAL;         /* tg_set_limit(): "val > 1" */
                for (k = 0; k < n_keys; k++)
                        if (streq(tok, keys[k]))
                                break;
                if (k == n_keys)
                        return -EINVAL;
                vals[k] = v;
        }
        return 0;
}

static void print_keyed(StrBuf *b, const char *const *keys, size_t n, const unsigned long long *vals) {
        for (size_t k = 0; k < n; k++) {
                if (vals[k] == UINT64_MAX)
                        strbuf_printf(b, " %s=max", keys[k]);
                else
                        strbuf_printf(b, " %s=%llu", keys[k], vals[k]);
        }
}

static int write_io_max(Ctx *x, char *buf) {
        static const char *const keys[] = { "rbps", "wbps", "riops", "wiops" };
        unsigned long long vals[4] = { UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX };
        _cleanup_free_ char *line = NULL;
        const char *body;
        unsigned maj, min;
        char key[32];
        Lines l = {};
        int r;

        if (parse_dev(buf, &maj, &min, &body) < 0)
                return -EINVAL;
        (void) snprintf(key, sizeof(key), "%u:%u", maj, min);
        /* the device's limits so far, then the new ones over them */
        r = lines_split(x->shown, &l);
        if (r < 0)
                return r;
        size_t i = lines_find(&l, key);
        if (i < l.n)
                r = parse_keyed(l.v[i] + strlen(key), keys, 4, vals, true);
        lines_done(&l);
        if (r < 0)
                return r;
        r = parse_keyed(body, keys, 4, vals, false);
        if (r < 0)
                return r;
        for (size_t k = 2; k < 4; k++)
                if (vals[k] != UINT64_MAX && vals[k] > UINT32_MAX)
                        vals[k] = UINT32_MAX;       /* iops are unsigned int */
        StrBuf b = STRBUF_INIT;
        strbuf_append(&b, key);
        print_keyed(&b, keys, 4, vals);
        if (strbuf_steal(&b, &line) < 0)
                return -ENOMEM;
        bool unlimited = true;
        for (size_t k = 0; k < 4; k++)
                unlimited = unlimited && vals[k] == UINT64_MAX;
        return keyed_update(x, key, unlimited ? NULL : line);
}

static int write_misc_max(Ctx *x, char *buf) {
        char *sp, line[64];
        int r;

        /* strstrip(), strsep(" "), the name, then the rest as it is */
        buf = kstrstrip(buf);
        sp = strchr(buf, ' ');
        if (!sp)
                return -EINVAL;
        *sp++ = '\0';
        if (!streq(buf, "sev") && !streq(buf, "sev_es"))
                return -EINVAL;
        if (!streq(sp, "max")) {
                unsigned long long u;
                r = kstrtoull(sp, 0, &u);
                if (r < 0)
                        return r;
        }
        (void) snprintf(line, sizeof(line), "%s %s", buf, sp);
        /* only a resource the machine has a capacity for (AMD SEV) is listed, and takes a limit */
        if (!x->shown || lines_find_text(x->shown, buf) < 0)
                return -EINVAL;
        return keyed_update(x, buf, line);
}

static int write_rdma_max(Ctx *x, char *buf) {
        static const char *const keys[] = { "hca_handle", "hca_object" };
        unsigned long long vals[2] = { UINT64_MAX, UINT64_MAX };
        char *sp;
        int r;

        sp = strchr(buf, ' ');
        if (!sp || sp == buf)
                return -EINVAL;
        *sp++ = '\0';
        r = parse_keyed(sp, keys, 2, vals, true);
        if (r < 0)
                return r;
        for (size_t k = 0; k < 2; k++)
                if (vals[k] != UINT64_MAX && vals[k] > INT32_MAX)
                        return -EINVAL;
        /* the device must exist: only the kernel knows */
        if (!x->shown || lines_find_text(x->shown, buf) < 0)
                return -ENODEV;
        StrBuf b = STRBUF_INIT;
        _cleanup_free_ char *line = NULL;
        strbuf_append(&b, buf);
        print_keyed(&b, keys, 2, vals);
        if (strbuf_steal(&b, &line) < 0)
                return -ENOMEM;
        return keyed_update(x, buf, line);
}

static int run(Ctx *x, const char *value) {
        _cleanup_free_ char *buf = strdup(value);

        if (!buf)
                return -ENOMEM;
        switch (x->type->syntax) {
        case SYN_MEMORY:        return write_memory(x, buf);
        case SYN_WEIGHT:        return write_weight(x, buf);
        case SYN_NICE:          return write_nice(x, buf);
        case SYN_IDLE:          return write_zero_one(x, buf, false);
        case SYN_CPU_MAX:       return write_cpu_max(x, buf);
        case SYN_CPU_BURST:     return write_cpu_burst(x, buf);
        case SYN_OOM_GROUP:     return write_zero_one(x, buf, true);
        case SYN_PIDS_MAX:      return write_pids_max(x, buf);
        case SYN_CPULIST:       return write_list(x, buf, NR_CPUS);
        case SYN_NODELIST:      return write_list(x, buf, MAX_NUMNODES);
        case SYN_PARTITION:     return write_partition(x, buf);
        case SYN_IO_WEIGHT:     return write_io_weight(x, buf);
        case SYN_IO_MAX:        return write_io_max(x, buf);
        case SYN_MISC_MAX:      return write_misc_max(x, buf);
        case SYN_RDMA_MAX:      return write_rdma_max(x, buf);
        }
        return -EINVAL;
}

int cfvalue_write(const char *file, const char *shown, const char *value, CfValueLookup lookup,
                  void *userdata, char **ret_shown, const char **reterr_why) {
        Ctx x = { .type = type_of(file), .shown = shown, .lookup = lookup, .userdata = userdata,
                  .out = STRBUF_INIT };
        int r;

        if (!x.type)
                return -ENOENT;
        r = run(&x, value);
        if (r < 0) {
                strbuf_done(&x.out);
                if (reterr_why && r != -ENOMEM)
                        *reterr_why = syntax_words[x.type->syntax];
                return r;
        }
        return strbuf_steal(&x.out, ret_shown);
}

int cfvalue_check(const char *file, const char *value, const char **reterr_why) {
        const CfValueType *t = type_of(file);
        _cleanup_free_ char *shown = NULL;
        int r;

        if (!t)
                return -ENOENT;
        r = cfvalue_write(file, NULL, value, NULL, NULL, &shown, reterr_why);
        /* a device or resource that a kernel may have: only the kernel can say */
        if ((t->syntax == SYN_RDMA_MAX && r == -ENODEV) ||
            (t->syntax == SYN_MISC_MAX && r == -EINVAL && cfvalue_write(file, "sev max\nsev_es max\n", value,
                                                                         NULL, NULL, &shown, NULL) >= 0))
                return 0;
        return r;
}

int cfvalue_device(const char *file, const char *value) {
        const CfValueType *t = type_of(file);
        unsigned maj, min;
        const char *body;

        if (!t)
                return -ENOENT;
        if (t->syntax == SYN_IO_WEIGHT && !strchr(value, ':'))
                return 0;
        if (t->syntax != SYN_IO_WEIGHT && t->syntax != SYN_IO_MAX)
                return 0;
        /* blkcg_conf_open_bdev(): sscanf("%u:%u%n"), then a blank before the body */
        if (parse_dev(value, &maj, &min, &body) < 0 || !isspace((unsigned char) *body))
                return -EINVAL;
        return 1;
}

/* Equal but for trailing white space: the kernel's files end in a newline, values do not. */
static bool same_text(const char *a, const char *b) {
        size_t na = strlen(a), nb = strlen(b);

        while (na > 0 && isspace((unsigned char) a[na - 1]))
                na--;
        while (nb > 0 && isspace((unsigned char) b[nb - 1]))
                nb--;
        return na == nb && memcmp(a, b, na) == 0;
}

bool cfvalue_in_sync(const char *file, const char *shown, const char *value) {
        _cleanup_free_ char *after = NULL;

        if (cfvalue_write(file, shown, value, NULL, NULL, &after, NULL) < 0)
                return false;
        return same_text(after, shown);
}

int cfvalue_undo(const char *file, const char *shown, const char *value, char **ret) {
        const CfValueType *t = type_of(file);
        _cleanup_free_ char *key = NULL;
        const char *line_key = NULL;
        Lines l = {};
        char *s;
        int r;

        if (!t)
                return -ENOENT;
        switch (t->syntax) {
        case SYN_IO_WEIGHT:
        case SYN_IO_MAX:
        case SYN_MISC_MAX:
        case SYN_RDMA_MAX: {
                unsigned maj, min;
                const char *body;
                if (t->syntax == SYN_IO_WEIGHT && !strchr(value, ':'))
                        line_key = "default";
                else if (t->syntax == SYN_IO_WEIGHT || t->syntax == SYN_IO_MAX) {
                        if (parse_dev(value, &maj, &min, &body) < 0)
                                return -EINVAL;
                        if (asprintf(&key, "%u:%u", maj, min) < 0)
                                return -ENOMEM;
                        line_key = key;
                } else {
                        const char *v = value;
                        while (isspace((unsigned char) *v))
                                v++;
                        key = strndup(v, strcspn(v, " \t"));
                        if (!key)
                                return -ENOMEM;
                        line_key = key;
                }
                r = lines_split(shown, &l);
                if (r < 0)
                        return r;
                size_t i = lines_find(&l, line_key);
                if (i < l.n)
                        s = strdup(l.v[i]);
                else if (t->syntax == SYN_IO_WEIGHT)
                        r = asprintf(&s, "%s default", line_key);
                else if (t->syntax == SYN_IO_MAX)
                        r = asprintf(&s, "%s rbps=max wbps=max riops=max wiops=max", line_key);
                else if (t->syntax == SYN_RDMA_MAX)
                        r = asprintf(&s, "%s hca_handle=max hca_object=max", line_key);
                else
                        r = asprintf(&s, "%s max", line_key);
                lines_done(&l);
                if (r < 0 || !s)
                        return -ENOMEM;
                *ret = s;
                return 0;
        }
        case SYN_CPULIST:
        case SYN_NODELIST:
                /* an empty list is written as white space: an empty write runs no handler */
                if (same_text(shown, ""))
                        return (*ret = strdup(" ")) ? 0 : -ENOMEM;
                __attribute__((__fallthrough__));
        default:
                s = strndup(shown, strcspn(shown, "\n"));
                if (!s)
                        return -ENOMEM;
                *ret = s;
                return 0;
        }
}

const char *cfvalue_linked(const char *file) {
        if (streq(file, "cpu.weight"))
                return "cpu.weight.nice";
        if (streq(file, "cpu.weight.nice"))
                return "cpu.weight";
        return NULL;
}

int cfvalue_linked_shown(const char *file, const char *shown, char **ret) {
        long long v;
        char *s;

        if (!cfvalue_linked(file))
                return -ENOENT;
        _cleanup_free_ char *copy = strdup(shown);
        if (!copy)
                return -ENOMEM;
        if (kstrtoll(kstrstrip(copy), 10, &v) < 0)
                return -EINVAL;
        if (streq(file, "cpu.weight")) {
                if (v < 1 || v > 10000)
                        return -EINVAL;
                unsigned long long shares = round_div((unsigned long long) v * 1024, CGROUP_WEIGHT_DFL);
                if (asprintf(&s, "%d\n", nice_of_shares(shares)) < 0)
                        return -ENOMEM;
        } else {
                if (v < -20 || v > 19)
                        return -EINVAL;
                /* the nice level's shares, read back as a weight */
                unsigned long long shares = (unsigned long long) prio_to_weight[v + 20];
                if (asprintf(&s, "%llu\n", round_div(shares * CGROUP_WEIGHT_DFL, 1024)) < 0)
                        return -ENOMEM;
        }
        *ret = s;
        return 0;
}
