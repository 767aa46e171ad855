/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loading a real cgroup2 hierarchy (native and emulated): walk it, read each
 * cgroup's control files, and import the result into a model, checking
 * that what the model derives from the masks is what the kernel shows.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "backend-internal.h"
#include "cgbypass/cgpath.h"
#include "cgroupfs.h"

#define FEATURES_PATH "/sys/kernel/cgroup/features"

bool kernel_has_bypass_feature(void) {
        _cleanup_fclose_ FILE *f = fopen(FEATURES_PATH, "re");
        char line[256];

        if (!f)
                return false;
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                if (streq(line, "bypass"))
                        return true;
        }
        return false;
}

void kernel_parse_masks(const char *s, CgMask *ret_enabled, CgMask *ret_bypassed) {
        CgMask e = 0, b = 0;

        for (const char *p = s;;) {
                char name[64];
                size_t n;
                bool hash;

                p += strspn(p, " \t\n");
                n = strcspn(p, " \t\n");
                if (n == 0)
                        break;
                hash = p[0] == '#';
                if (n - hash < sizeof(name)) {
                        memcpy(name, p + hash, n - hash);
                        name[n - hash] = '\0';
                        /* a controller newer than the model (dmem, ...) cannot be named in writes either */
                        Controller c = controller_from_string(name);
                        if (c >= 0) {
                                if (hash)
                                        b |= CGMASK(c);
                                else
                                        e |= CGMASK(c);
                        }
                }
                p += n;
        }
        *ret_enabled = e;
        *ret_bypassed = b;
}

/*
 * debug.masks, as masks: subtree_control, subtree_ss_mask, subtree_bypass,
 * enable_ss_mask (the last two only with the series). Return: lines parsed.
 */
static unsigned parse_debug_masks(const char *text, CgMask ret[4]) {
        unsigned n = 0;

        for (const char *line = text; line && *line && n < 4;) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t) (end - line) : strlen(line);
                const char *colon = memchr(line, ':', len);
                _cleanup_free_ char *names = colon ? strndup(colon + 1, len - (size_t) (colon + 1 - line)) : NULL;
                CgMask unused;

                ret[n] = 0;
                if (names) {
                        for (char *c = names; *c; c++)
                                if (*c == ',')
                                        *c = ' ';
                        kernel_parse_masks(names, &ret[n], &unused);
                }
                n++;
                line = end ? end + 1 : NULL;
        }
        return n;
}

static bool booted_with_cgroup_debug(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/cmdline", "re");
        char word[256];

        while (f && fscanf(f, "%255s", word) == 1)
                if (streq(word, "cgroup_debug"))
                        return true;
        return false;
}

/*
 * The implicit controllers are never listed in cgroup.controllers. perf_event:
 * /proc/cgroups shows it on hierarchy 0 (the default hierarchy), enabled.
 * debug: implicit only when booted with cgroup_debug; then "." has
 * debug.masks (except below the root before its first subtree_control
 * write, see kernel_scan_import()), so the command line decides too.
 */
static CgMask implicit_controllers(const KernelCgroup *dot) {
        _cleanup_fclose_ FILE *f = fopen("/proc/cgroups", "re");
        char line[256];
        CgMask m = 0;

        while (f && fgets(line, sizeof(line), f)) {
                char name[64];
                int hier, num, enabled;

                if (line[0] == '#' || sscanf(line, "%63s %d %d %d", name, &hier, &num, &enabled) != 4)
                        continue;
                Controller c = controller_from_string(name);
                if (c >= 0 && c != CONTROLLER_DEBUG && hier == 0 && enabled &&
                    (controller_implicit_mask(CGMASK_ALL) & CGMASK(c)))
                        m |= CGMASK(c);
        }
        if (dot->debug_masks || booted_with_cgroup_debug())
                m |= CGMASK(CONTROLLER_DEBUG);
        return m;
}

void kernel_scan_done(KernelScan *s) {
        for (size_t i = 0; i < s->n; i++) {
                safe_close(s->cgroups[i].dir_fd);
                free(s->cgroups[i].path);
                free(s->cgroups[i].type);
                free(s->cgroups[i].debug_masks);
        }
        free(s->cgroups);
        *s = (KernelScan) {};
}

static int parse_limit(const char *s, int *ret) {
        if (startswith(s, "max")) {
                *ret = INT_MAX;
                return 0;
        }
        char *end;
        long l = strtol(s, &end, 10);
        if (end == s || l < 0 || l > INT_MAX)
                return -EINVAL;
        *ret = (int) l;
        return 0;
}

static int read_limit(int dir_fd, const char *file, int *ret) {
        _cleanup_free_ char *s = NULL;
        int r = cgfs_read_kernfs(dir_fd, file, &s);
        if (r < 0)
                return r;
        return parse_limit(s, ret);
}

int kernel_read_limits(int dir_fd, int *ret_max_depth, int *ret_max_descendants) {
        int r = read_limit(dir_fd, "cgroup.max.depth", ret_max_depth);
        return r < 0 ? r : read_limit(dir_fd, "cgroup.max.descendants", ret_max_descendants);
}

/*
 * Where a cgroup is opened from: its name below its parent's fd while the
 * parent's is held (see scan_from()), else its path below the root. The
 * kernel walks kernfs's names on its slow path (kernfs_dop_revalidate()
 * refuses RCU walks), component by component: a leaf four levels down costs
 * about twice as much to open by path.
 */
static int cgroup_at(int root_fd, const KernelCgroup *kc, const KernelCgroup *parent, const char **ret_rel) {
        if (parent && parent->dir_fd >= 0) {
                const char *slash = strrchr(kc->path, '/');
                *ret_rel = slash ? slash + 1 : kc->path;
                return parent->dir_fd;
        }
        *ret_rel = kc->path;
        return root_fd;
}

/* One file of the cgroup, by its fd where the cgroup's directory was opened, else by @rel below @at_fd. */
static int read_file(int at_fd, const char *rel, int dir_fd, const char *file, char **ret) {
        return dir_fd >= 0 ? cgfs_read_kernfs(dir_fd, file, ret) : cgfs_read_kernfs_below(at_fd, rel, file, ret);
}

/* the two limits (unless !@limits: then @dir_fd may be -1), and debug.masks where it can exist (@debug) */
static int read_limits_debug(int at_fd, const char *rel, int dir_fd, bool limits, bool debug, KernelCgroup *kc) {
        int r;

        kc->limits_unread = !limits;
        if (limits) {
                r = kernel_read_limits(dir_fd, &kc->max_depth, &kc->max_descendants);
                if (r < 0)
                        return r;
        }
        kc->debug_masks = NULL;
        if (!debug)
                return 0;
        r = read_file(at_fd, rel, dir_fd, "debug.masks", &kc->debug_masks);
        return r == -ENOENT ? 0 : r;
}

static unsigned count_lines(const char *s) {
        unsigned n = 0;
        for (; *s; s++)
                if (*s == '\n')
                        n++;
        return n;
}

/*
 * Each file once, through one fd of the cgroup's directory, which also lists
 * the children (@ret_entries): about 20 system calls a cgroup, the scan's
 * whole cost at start-up and at a re-apply. debug.masks only where it can
 * exist (@debug). Returns -ENOENT or -ENODEV when the cgroup went away meanwhile.
 */
static int read_cgroup(int root_fd, KernelCgroup *kc, bool is_dot, bool debug, bool *ret_mount_root,
                       CgfsEntry **ret_entries, size_t *ret_n, int *ret_dir_fd) {
        _cleanup_free_ char *ctl = NULL, *sc = NULL, *type = NULL, *procs = NULL;
        _cleanup_close_ int dir_fd = -1;
        int r;

        r = cgfs_open_dir(root_fd, kc->path, O_RDONLY, &dir_fd);
        if (r < 0)
                return r;

        r = cgfs_read_kernfs(dir_fd, "cgroup.controllers", &ctl);
        if (r < 0)
                return r;
        kernel_parse_masks(ctl, &kc->controllers, &kc->bypassed);
        r = cgfs_read_kernfs(dir_fd, "cgroup.subtree_control", &sc);
        if (r < 0)
                return r;
        kernel_parse_masks(sc, &kc->subtree_control, &kc->subtree_bypass);

        /* cgroup.type is CFTYPE_NOT_ON_ROOT: only the mount's root lacks it */
        r = cgfs_read_kernfs(dir_fd, "cgroup.type", &type);
        if (r == -ENOENT && is_dot)
                *ret_mount_root = true;
        else if (r < 0)
                return r;
        else {
                type[strcspn(type, "\n")] = '\0';
                kc->threaded = streq(type, "threaded");
                kc->type = TAKE_PTR(type);
        }

        /* cgroup.procs of a threaded cgroup is EOPNOTSUPP: count its threads */
        r = cgfs_read_kernfs(dir_fd, kc->threaded ? "cgroup.threads" : "cgroup.procs", &procs);
        if (r < 0)
                return r;
        kc->nr_procs = count_lines(procs);

        r = read_limits_debug(root_fd, kc->path, dir_fd, true, debug, kc);
        if (r < 0)
                return r;
        r = cgfs_list_at(dir_fd, ret_entries, ret_n);
        if (r >= 0)
                *ret_dir_fd = TAKE_FD(dir_fd);
        return r;
}

static bool has_child_dirs(const CgfsEntry *e, size_t n) {
        for (size_t j = 0; j < n; j++)
                if (e[j].type == CGFS_ENTRY_DIR)
                        return true;
        return false;
}

/* cgroup.events of @dir_fd: "populated 0" means no process in it or anywhere below */
static int read_unpopulated(int dir_fd, bool *ret) {
        _cleanup_free_ char *ev = NULL;
        int r = cgfs_read_kernfs(dir_fd, "cgroup.events", &ev);
        if (r < 0)
                return r;
        *ret = startswith(ev, "populated 0") || strstr(ev, "\npopulated 0");
        return 0;
}

/* cgroup.stat's nr_descendants equals the number of children: none of them has a child */
static int read_children_childless(int dir_fd, const CgfsEntry *e, size_t n, bool *ret) {
        _cleanup_free_ char *stat = NULL;
        size_t dirs = 0;
        const char *p;
        int r;

        r = cgfs_read_kernfs(dir_fd, "cgroup.stat", &stat);
        if (r < 0)
                return r;
        for (size_t j = 0; j < n; j++)
                dirs += e[j].type == CGFS_ENTRY_DIR;
        p = startswith(stat, "nr_descendants ") ? stat : strstr(stat, "\nnr_descendants ");
        *ret = p && strtoull(strchr(p + 1, ' ') + 1, NULL, 10) == dirs;
        return 0;
}

/*
 * A cgroup below the scan's start (@parent already read): what the kernel
 * rules decide from the parent is not read again, so a re-apply pays about
 * three file reads a cgroup instead of six (bench/README.md):
 * - cgroup.controllers is cgroup_control(): the parent's subtree_control
 *   (threaded: its threaded controllers). Read only below a parent that
 *   bypasses ('#' names, the series), where it tells which were re-enabled.
 * - cgroup.procs: below an unpopulated parent (cgroup.events) there is none.
 *   A populated parent's child with children reads cgroup.events too, so a
 *   populated tree stops paying at its empty subtrees.
 * - cgroup.type of a childless cgroup under a plain "domain" is "domain": a
 *   threaded child would make the parent "domain threaded"; only processes
 *   together with a threaded controller in its subtree_control could make it
 *   a thread root itself (cgroup_is_thread_root()).
 * - cgroup.max.depth and cgroup.max.descendants: they matter only to a
 *   mkdir below the cgroup, and the backend reads them then, for the
 *   mkdir's ancestors (cgroup_limits_unread(), backend_load_limits_above()).
 *   Half of a leaf's reads, and two of an inner cgroup's five.
 * subtree_control is the cgroup's own: always read.
 */
static int read_cgroup_below(int root_fd, KernelCgroup *kc, const KernelCgroup *parent, bool debug,
                             CgfsEntry **ret_entries, size_t *ret_n, int *ret_dir_fd) {
        _cleanup_free_ char *sc = NULL, *type = NULL, *procs = NULL;
        _cleanup_close_ int dir_fd = -1;
        CgfsEntry *e = NULL;
        size_t ne = 0;
        bool children = false;
        const char *rel;
        int at_fd = cgroup_at(root_fd, kc, parent, &rel);
        int r;

        /* a cgroup known to be childless is not listed: its few files are opened by path (about 3
         * system calls for a leaf instead of 6, and no getdents(2), which walks all of kernfs's files) */
        if (!kc->childless) {
                r = cgfs_open_dir(at_fd, rel, O_RDONLY, &dir_fd);
                if (r < 0)
                        return r;
                r = cgfs_list_kernfs_dirs_at(dir_fd, &e, &ne);
                if (r < 0)
                        return r;
                children = has_child_dirs(e, ne);
                if (children) {
                        r = read_children_childless(dir_fd, e, ne, &kc->children_childless);
                        if (r < 0)
                                goto fail;
                }
        }

        r = read_file(at_fd, rel, dir_fd, "cgroup.subtree_control", &sc);
        if (r < 0)
                goto fail;
        kernel_parse_masks(sc, &kc->subtree_control, &kc->subtree_bypass);

        if (parent->unpopulated)
                kc->unpopulated = true;
        else {
                if (children) {
                        r = read_unpopulated(dir_fd, &kc->unpopulated);
                        if (r < 0)
                                goto fail;
                }
                if (!kc->unpopulated) {
                        /* cgroup.procs of a threaded cgroup is EOPNOTSUPP: its threads are read below */
                        r = read_file(at_fd, rel, dir_fd, "cgroup.procs", &procs);
                        if (r == -EOPNOTSUPP)
                                r = read_file(at_fd, rel, dir_fd, "cgroup.threads", &procs);
                        if (r < 0)
                                goto fail;
                        kc->nr_procs = count_lines(procs);
                }
        }

        if (!children && streq_ptr(parent->type, "domain") &&
            (kc->nr_procs == 0 || !(kc->subtree_control & controller_threaded_mask(CGMASK_ALL))))
                type = strdup("domain");
        else
                r = read_file(at_fd, rel, dir_fd, "cgroup.type", &type);
        if (!type && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                goto fail;
        type[strcspn(type, "\n")] = '\0';
        kc->threaded = streq(type, "threaded");
        kc->type = TAKE_PTR(type);

        if (parent->subtree_bypass) {
                _cleanup_free_ char *ctl = NULL;
                r = read_file(at_fd, rel, dir_fd, "cgroup.controllers", &ctl);
                if (r < 0)
                        goto fail;
                kernel_parse_masks(ctl, &kc->controllers, &kc->bypassed);
        } else
                kc->controllers = parent->subtree_control &
                                  (kc->threaded ? controller_threaded_mask(CGMASK_ALL) : CGMASK_ALL);

        r = read_limits_debug(at_fd, rel, dir_fd, false, debug, kc);
        if (r < 0)
                goto fail;
        *ret_entries = e;
        *ret_n = ne;
        *ret_dir_fd = children ? TAKE_FD(dir_fd) : -1;
        return 0;

fail:
        cgfs_entries_free(e, ne);
        return r;
}

static int scan_add(KernelScan *s, const char *parent_path, const char *name, size_t parent, unsigned level) {
        KernelCgroup *v = s->cgroups;
        char *path;

        /* doubling: one more each time made glibc move (mremap(2)) the whole array every few cgroups */
        if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 64;
                v = reallocarray(s->cgroups, cap, sizeof(KernelCgroup));
                if (!v)
                        return -ENOMEM;
                s->cgroups = v;
                s->cap = cap;
        }
        if (cgpath_join(parent_path ?: ".", name, &path) < 0)
                return -ENOMEM;
        v[s->n++] = (KernelCgroup) {
                .path = path,
                .dir_fd = -1,
                .parent = parent,
                .childless = parent != SIZE_MAX && v[parent].children_childless,
                .level = level,
                .max_depth = INT_MAX,
                .max_descendants = INT_MAX,
        };
        return 0;
}

/*
 * The scan reads level by level: a cgroup's reads need only its parent's,
 * so the cgroups of one level are read by several threads at once (kernfs
 * lookups and reads of different cgroups take no common lock). Results are
 * then taken in order by one thread, so the scan's order, its errors and
 * its messages are those of a one-thread scan.
 */
static unsigned scan_threads_max = 4;
/* Below that, threads cost more than they save. A thread costs ~50 us to start here; a cgroup's reads
 * 10-40 us. 32 rather than 256: a 1,000-cgroup re-apply whose third level (216 cgroups with children,
 * twelve system calls each) took one thread took 16 % less wall time with two; 10,000 the same. */
static size_t scan_parallel_min = 32;

void kernel_scan_set_parallel(unsigned threads, size_t min_cgroups) {
        scan_threads_max = threads ?: 1;
        scan_parallel_min = min_cgroups;
}

static unsigned scan_threads(void) {
        cpu_set_t set;
        int n;

        if (sched_getaffinity(0, sizeof(set), &set) < 0)
                return 1;
        n = CPU_COUNT(&set);
        return n < 1 ? 1 : (unsigned) n < scan_threads_max ? (unsigned) n : scan_threads_max;
}

typedef struct ScanRead {
        int r;
        CgfsEntry *e;
        size_t ne;
        int dir_fd;     /* the cgroup's, when it has children; -1 */
} ScanRead;

typedef struct ScanLevel {
        int root_fd;
        KernelCgroup *cgroups;
        size_t lo, hi;
        bool debug;
        ScanRead *res;          /* [hi - lo] */
        atomic_size_t next;
        atomic_size_t held;     /* directory fds kept for the next level, up to... */
        size_t budget;
} ScanLevel;

static void *scan_level_worker(void *userdata) {
        ScanLevel *l = userdata;

        for (;;) {
                size_t i = l->lo + atomic_fetch_add(&l->next, 1);
                if (i >= l->hi)
                        return NULL;
                KernelCgroup *kc = &l->cgroups[i];
                ScanRead *res = &l->res[i - l->lo];
                /* (a cgroup that went while being read added no children: the parent is here) */
                res->r = read_cgroup_below(l->root_fd, kc, &l->cgroups[kc->parent], l->debug, &res->e, &res->ne,
                                           &res->dir_fd);
                if (res->dir_fd >= 0 && atomic_fetch_add(&l->held, 1) >= l->budget)
                        res->dir_fd = safe_close(res->dir_fd);
        }
}

/* Read cgroups [lo, hi) of @s, all below the scan's start, into @res. */
static void scan_level(int root_fd, KernelScan *s, size_t lo, size_t hi, bool debug, size_t fd_budget,
                       ScanRead *res) {
        ScanLevel l = { .root_fd = root_fd, .cgroups = s->cgroups, .lo = lo, .hi = hi, .debug = debug,
                        .res = res, .budget = fd_budget };
        pthread_t t[16];
        unsigned nt = 0, want = hi - lo >= scan_parallel_min ? scan_threads() : 1;

        atomic_init(&l.next, 0);
        atomic_init(&l.held, 0);
        /* the calling thread is one of them; a thread that cannot start leaves its share to the others */
        while (nt + 1 < want && nt < ELEMENTSOF(t) && pthread_create(&t[nt], NULL, scan_level_worker, &l) == 0)
                nt++;
        (void) scan_level_worker(&l);
        for (unsigned k = 0; k < nt; k++)
                (void) pthread_join(t[k], NULL);
}

static void scan_root(int root_fd, KernelScan *s, bool is_dot, bool *debug, ScanRead *res) {
        KernelCgroup *kc = &s->cgroups[0];
        int r;

        r = read_cgroup(root_fd, kc, is_dot, true, &s->mount_root, &res->e, &res->ne, &res->dir_fd);
        if (kc->debug_masks)
                *debug = true;
        /* the mount's root has no cgroup.events (and init is in it) */
        if (r >= 0 && !s->mount_root) {
                r = read_unpopulated(res->dir_fd, &kc->unpopulated);     /* the directory read_cgroup() opened */
                if (r < 0) {
                        cgfs_entries_free(res->e, res->ne);
                        res->e = NULL;
                        res->ne = 0;
                        res->dir_fd = safe_close(res->dir_fd);
                }
        }
        res->r = r;
}

/* @start ("." or "A/B", @level deep) and everything below it, parents first. */
static int scan_from(int root_fd, const char *root, const char *start, unsigned start_level, KernelScan *ret,
                     char **reterr_msg) {
        KernelScan s = {};
        bool is_dot = streq(start, ".");
        /* debug.masks exists only with the debug controller on cgroup2, which needs cgroup_debug
         * (or, at the root, shows itself there) */
        bool debug = booted_with_cgroup_debug();
        ScanRead *res = NULL;
        /* a cgroup with children keeps its directory open while its children's level is read (cgroup_at()) */
        size_t plo = 0, lo = 0, hi = 0, fd_budget = cgfs_fd_budget();
        int r;

        r = scan_add(&s, NULL, start, SIZE_MAX, start_level);
        if (r < 0)
                goto fail;

        /* a level at a time: parents before children; within a parent, kernfs inode order is creation order */
        while (lo < s.n) {
                hi = s.n;
                res = calloc(hi - lo, sizeof(ScanRead));
                if (!res) {
                        r = -ENOMEM;
                        goto fail;
                }
                for (size_t i = lo; i < hi; i++)
                        res[i - lo].dir_fd = -1;
                if (lo == 0)
                        scan_root(root_fd, &s, is_dot, &debug, res);
                else
                        scan_level(root_fd, &s, lo, hi, debug, fd_budget, res);
                /* the parents' fds served this level only */
                for (size_t i = plo; i < lo; i++)
                        s.cgroups[i].dir_fd = safe_close(s.cgroups[i].dir_fd);

                for (size_t i = lo; i < hi; i++) {
                        ScanRead *sr = &res[i - lo];
                        CgfsEntry *e = TAKE_PTR(sr->e);
                        size_t ne = sr->ne;

                        sr->ne = 0;     /* ours now, not the failure path's */
                        s.cgroups[i].dir_fd = TAKE_FD(sr->dir_fd);
                        r = sr->r;
                        if (r == -ENOENT || r == -ENODEV) {
                                if (i == 0) {
                                        r = is_dot ? backend_msg(reterr_msg, -ENOMEDIUM,
                                                                 "'%s' is not a cgroup directory", root) :
                                                backend_msg(reterr_msg, -ENOENT,
                                                            "The cgroup '%s' below '%s' is gone", start, root);
                                        goto fail;
                                }
                                /* removed while we looked: it was never there */
                                s.cgroups[i].gone = true;
                                continue;
                        }
                        if (r < 0) {
                                r = backend_msg(reterr_msg, r, "Failed to read the cgroup '%s' below '%s': %s",
                                                s.cgroups[i].path, root, strerror(-r));
                                goto fail;
                        }

                        unsigned level = s.cgroups[i].level;
                        for (size_t j = 0; j < ne && r >= 0; j++) {
                                if (e[j].type != CGFS_ENTRY_DIR)
                                        continue;
                                if (level + 1 > KERNEL_SCAN_MAX_DEPTH || s.n >= KERNEL_SCAN_MAX_CGROUPS)
                                        r = backend_msg(reterr_msg, -E2BIG,
                                                        "The hierarchy below '%s' is too large (more than %u "
                                                        "levels or %u cgroups)", root, KERNEL_SCAN_MAX_DEPTH,
                                                        KERNEL_SCAN_MAX_CGROUPS);
                                else
                                        r = scan_add(&s, s.cgroups[i].path, e[j].name, i, level + 1);
                        }
                        cgfs_entries_free(e, ne);
                        if (r < 0)
                                goto fail;
                }
                free(res);
                res = NULL;
                plo = lo;
                lo = hi;
        }
        *ret = s;
        return 0;

fail:
        for (size_t k = 0; res && k < hi - lo; k++) {
                cgfs_entries_free(res[k].e, res[k].ne);
                safe_close(res[k].dir_fd);
        }
        free(res);
        kernel_scan_done(&s);
        return r;
}

int kernel_scan_subtree(int root_fd, const char *root, const char *top, unsigned level, KernelScan *ret,
                        char **reterr_msg) {
        return scan_from(root_fd, root, top, level, ret, reterr_msg);
}

int kernel_scan(int root_fd, const char *root, KernelScan *ret, char **reterr_msg) {
        KernelScan s = {};
        int r;

        r = cgfs_check_cgroup2(root_fd, NULL);
        if (r < 0)
                return backend_msg(reterr_msg, r, "'%s' is not on a cgroup2 file system", root);
        r = scan_from(root_fd, root, ".", 0, &s, reterr_msg);
        if (r < 0)
                return r;

        KernelCgroup *dot = &s.cgroups[0];
        s.builtin = dot->controllers | dot->bypassed | implicit_controllers(dot);

        /*
         * Below the mount, "." becomes the model's root, which is mixable and
         * has every controller: only a domain without processes behaves like it.
         */
        if (!s.mount_root) {
                if (!streq_ptr(dot->type, "domain")) {
                        r = backend_msg(reterr_msg, -EUCLEAN, "'%s' is a '%s' cgroup; the backend manages the "
                                        "mount's root or a plain domain cgroup", root, strempty(dot->type));
                        goto fail;
                }
                if (dot->nr_procs > 0) {
                        r = backend_msg(reterr_msg, -EBUSY, "'%s' has processes; below the mount's root the "
                                        "backend needs a cgroup without any (move them to a child)", root);
                        goto fail;
                }
        }
        *ret = s;
        return 0;

fail:
        kernel_scan_done(&s);
        return r;
}

int kernel_scan_import(const KernelScan *s, Hierarchy *h, const CgMask *subtree_control,
                       const CgMask *subtree_bypass, const CgMask *enable_ss_mask,
                       bool verify, char **reterr_msg) {
        _cleanup_free_ char *msg = NULL;
        /* each scanned cgroup's model cgroup, for the verification: no second walk of its path */
        _cleanup_free_ Cgroup **at = calloc(s->n ?: 1, sizeof(Cgroup *));
        int r;

        if (!at)
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++) {
                const KernelCgroup *kc = &s->cgroups[i];
                CgMask sc, sb, en;
                Cgroup *c;

                if (kc->gone)
                        continue;
                sc = subtree_control ? subtree_control[i] : kc->subtree_control;
                sb = subtree_bypass ? subtree_bypass[i] : kc->subtree_bypass;
                if (enable_ss_mask)
                        en = enable_ss_mask[i];
                else if (i == 0)
                        en = 0;
                else {
                        /* a name without '#' that the parent bypasses was re-enabled (patch 004) */
                        CgMask parent_sb = subtree_bypass ? subtree_bypass[kc->parent] :
                                                            s->cgroups[kc->parent].subtree_bypass;
                        en = kc->controllers & parent_sb;
                }

                /* the scan lists parents first: the parent's model cgroup is at[], no walk from the root */
                r = hierarchy_import_below(h, i > 0 ? at[kc->parent] : NULL, kc->path, kc->threaded, sc, sb, en,
                                           kc->nr_procs, NULL, &c);
                if (r == -EUCLEAN) {
                        _cleanup_free_ char *m = backend_masks_to_string(sc, sb);
                        _cleanup_free_ char *e = backend_masks_to_string(en, 0);
                        return backend_msg(reterr_msg, r,
                                           "The cgroup '%s' cannot exist under the model's %s rules "
                                           "(subtree_control '%s', re-enabled '%s'%s)",
                                           kc->path, rules_to_string(hierarchy_rules(h)),
                                           strempty(m), strempty(e), kc->threaded ? ", threaded" : "");
                }
                if (r < 0)
                        return backend_msg(reterr_msg, r, "Failed to load the cgroup '%s' into the model: %s",
                                           kc->path, strerror(-r));
                r = state_apply_limits(h, c, kc->max_depth, kc->max_descendants);
                if (r >= 0)
                        cgroup_set_limits_unread(h, c, kc->limits_unread);
                if (r < 0)
                        return backend_msg(reterr_msg, r, "Failed to set the limits of '%s' in the model: %s",
                                           kc->path, strerror(-r));
                at[i] = c;
        }

        r = hierarchy_check(h, &msg);
        if (r < 0)
                return backend_msg(reterr_msg, r, "The hierarchy found contradicts the model: %s", strempty(msg));
        if (!verify)
                return 0;

        for (size_t i = 0; i < s->n; i++) {
                const KernelCgroup *kc = &s->cgroups[i];
                _cleanup_free_ char *found = NULL, *derived = NULL;
                Cgroup *c;

                if (kc->gone || (i == 0 && !s->mount_root))
                        continue;
                c = at[i];
                CgMask mc = cgroup_get_controllers(h, c), mb = cgroup_get_bypassed(h, c);
                if (mc != kc->controllers || mb != kc->bypassed) {
                        found = backend_masks_to_string(kc->controllers, kc->bypassed);
                        derived = backend_masks_to_string(mc, mb);
                        return backend_msg(reterr_msg, -EUCLEAN, "The cgroup '%s' shows cgroup.controllers "
                                           "'%s' but the model derives '%s'", kc->path,
                                           strempty(found), strempty(derived));
                }
                if (kc->type && !streq(kc->type, cgroup_type_to_string(cgroup_get_type(h, c))))
                        return backend_msg(reterr_msg, -EUCLEAN, "The cgroup '%s' is '%s' but the model "
                                           "derives '%s'", kc->path, kc->type,
                                           cgroup_type_to_string(cgroup_get_type(h, c)));
                if (kc->debug_masks && cgroup_has_file(h, c, "debug.masks")) {
                        CgMask km[4], mm[4];
                        unsigned kn, mn;

                        r = cgroup_read(h, c, "debug.masks", &derived);
                        if (r < 0)
                                return r;
                        kn = parse_debug_masks(kc->debug_masks, km);
                        mn = parse_debug_masks(derived, mm);
                        /*
                         * 6.1 computes the root's implicit csses only at the first write of
                         * the root's cgroup.subtree_control (cgroup_init() binds them after
                         * cgroup_setup_root() propagated), the model at boot: compare
                         * subtree_ss_mask without them.
                         */
                        if (kn == mn && kn >= 2) {
                                km[1] &= ~controller_implicit_mask(CGMASK_ALL);
                                mm[1] &= ~controller_implicit_mask(CGMASK_ALL);
                        }
                        if (kn != mn || memcmp(km, mm, kn * sizeof(CgMask)) != 0)
                                return backend_msg(reterr_msg, -EUCLEAN, "The cgroup '%s' shows debug.masks "
                                                   "'%s' but the model derives '%s'", kc->path,
                                                   kc->debug_masks, derived);
                }
        }
        return 0;
}

bool kernel_scan_agrees(const KernelScan *s, const Hierarchy *h) {
        size_t seen = 0, known = 0;
        Cgroup *top;

        if (s->n == 0 || hierarchy_lookup(h, s->cgroups[0].path, &top) < 0)
                return false;
        for (size_t i = 0; i < s->n; i++) {
                const KernelCgroup *kc = &s->cgroups[i];
                Cgroup *c;

                if (kc->gone)
                        continue;
                seen++;
                if (hierarchy_lookup(h, kc->path, &c) < 0)
                        return false;   /* made behind our back */
                if (kc->controllers != cgroup_get_controllers(h, c) || kc->bypassed != cgroup_get_bypassed(h, c) ||
                    kc->subtree_control != cgroup_get_subtree_control(c) ||
                    kc->subtree_bypass != cgroup_get_subtree_bypass(c) || kc->nr_procs != cgroup_nr_procs(c) ||
                    (kc->type && !streq(kc->type, cgroup_type_to_string(cgroup_get_type(h, c)))))
                        return false;
        }
        for (Cgroup *c = top; c; c = cgroup_next_descendant_pre(c, top))
                known++;
        return seen == known;   /* none removed behind our back */
}

/* ---- cgroups that someone else made or removed (an owner's mkdir, rmdir), read one at a time ---- */

/* The hierarchies to keep in step: the model, and on emulated the kernel's; NULL when the kernel is in doubt. */
static int adopt_targets(Backend *b, Hierarchy **ret_kernel) {
        const Hierarchy *view;

        if (b->type == BACKEND_SIM || !b->vtable->kernel_view)
                return -EOPNOTSUPP;
        if (b->read_only)
                return -EROFS;
        view = b->vtable->kernel_view(b);
        if (!view)
                return -ESTALE;
        /* the backend's own kernel model, mutable to it: the same object as the model on native */
        *ret_kernel = view == b->model ? NULL : (Hierarchy *) view;
        return 0;
}

static int import_one(Hierarchy *h, const KernelCgroup *kc, CgMask sc, CgMask sb, CgMask en) {
        Cgroup *c;
        int r;

        r = hierarchy_import_cgroup(h, kc->path, kc->threaded, sc, sb, en, kc->nr_procs, NULL, &c);
        if (r >= 0)
                r = state_apply_limits(h, c, kc->max_depth, kc->max_descendants);
        if (r >= 0)
                cgroup_set_limits_unread(h, c, kc->limits_unread);
        return r;
}

int backend_adopt_cgroup(Backend *b, const char *path, size_t max, char **reterr_msg) {
        const char *rel = cgpath_relative(path);
        _cleanup_free_ char *parent_path = NULL;
        _cleanup_(kernel_scan_done) KernelScan s = {};
        Hierarchy *kernel = NULL;
        Cgroup *parent, *c;
        size_t n = 0;
        int r;

        r = adopt_targets(b, &kernel);
        if (r < 0)
                return r;
        if (streq(rel, "."))
                return -EEXIST;
        if (hierarchy_lookup(b->model, rel, &c) >= 0)
                return -EEXIST;
        r = cgpath_parent(rel, &parent_path);
        if (r < 0)
                return r;
        if (hierarchy_lookup(b->model, parent_path, &parent) < 0)
                return -ESTALE;
        r = kernel_scan_subtree(b->root_fd, b->root, rel, cgroup_level(parent) + 1, &s, reterr_msg);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s.n; i++)
                n += !s.cgroups[i].gone;
        if (n > max)
                return -EDQUOT;

        /*
         * As kernel_scan_import() would have loaded them. A failure leaves the ones
         * before it in the model: -ESTALE, the caller reads the whole hierarchy again.
         */
        CgMask parent_sb = cgroup_get_subtree_bypass(parent);
        for (size_t i = 0; i < s.n; i++) {
                const KernelCgroup *kc = &s.cgroups[i];
                CgMask above_sb = i == 0 ? parent_sb : s.cgroups[kc->parent].subtree_bypass;

                if (kc->gone)
                        continue;
                if (kernel) {
                        /* emulated: a stock kernel has no bypass state, and a new cgroup none saved */
                        if (kc->subtree_bypass || kc->bypassed)
                                return backend_msg(reterr_msg, -ESTALE, "'%s' shows bypass state", kc->path);
                        r = import_one(b->model, kc, kc->subtree_control, 0, 0);
                        if (r >= 0)
                                r = import_one(kernel, kc, kc->subtree_control, 0, 0);
                } else
                        r = import_one(b->model, kc, kc->subtree_control, kc->subtree_bypass,
                                       kc->controllers & above_sb);
                if (r < 0)
                        return backend_msg(reterr_msg, r == -ENOMEM ? r : -ESTALE, "Failed to take on '%s': %s",
                                           kc->path, strerror(-r));

                /* what the model derives must be what the kernel shows (emulated: its stock model) */
                const Hierarchy *k = kernel ?: b->model;
                r = hierarchy_lookup(k, kc->path, &c);
                if (r < 0)
                        return r;
                if (cgroup_get_controllers(k, c) != kc->controllers || cgroup_get_bypassed(k, c) != kc->bypassed ||
                    (kc->type && !streq(kc->type, cgroup_type_to_string(cgroup_get_type(k, c)))))
                        return backend_msg(reterr_msg, -ESTALE, "'%s' shows other controllers than the model "
                                           "derives", kc->path);
        }
        return n > INT_MAX ? INT_MAX : (int) n;
}

int backend_forget_cgroup(Backend *b, const char *path) {
        const char *rel = cgpath_relative(path);
        _cleanup_strv_free_ char **paths = NULL;
        _cleanup_close_ int fd = -1;
        Hierarchy *kernel = NULL;
        size_t n = 0;
        Cgroup *top;
        int r;

        r = adopt_targets(b, &kernel);
        if (r < 0)
                return r;
        if (streq(rel, ".") || hierarchy_lookup(b->model, rel, &top) < 0)
                return 0;
        r = cgfs_open_dir(b->root_fd, rel, O_PATH, &fd);
        if (r >= 0)
                return -EEXIST;
        if (r != -ENOENT)
                return r;

        /* a cgroup's rmdir(2) needs it empty: the ones below went before it */
        for (Cgroup *c = top; c; c = cgroup_next_descendant_pre(c, top))
                n++;
        paths = calloc(n + 1, sizeof(char *));
        if (!paths)
                return -ENOMEM;
        n = 0;
        for (Cgroup *c = top; c; c = cgroup_next_descendant_pre(c, top)) {
                r = backend_cgroup_relpath(c, &paths[n]);
                if (r < 0)
                        return r;
                n++;
        }
        for (size_t i = n; i-- > 0;) {
                /* populated in the model: its process counts are old; the whole re-read settles it */
                r = hierarchy_rmdir(b->model, paths[i], NULL);
                if (r >= 0 && kernel)
                        r = hierarchy_rmdir(kernel, paths[i], NULL);
                if (r < 0)
                        return -ESTALE;
        }
        return n > INT_MAX ? INT_MAX : (int) n;
}

/* @c's limits from the kernel into @h, and into @kernel's copy of it (emulated; NULL on native) */
static int load_limits(Backend *b, Hierarchy *kernel, Cgroup *c) {
        _cleanup_free_ char *rel = NULL;
        _cleanup_close_ int fd = -1;
        int depth, descendants, r;

        r = backend_cgroup_relpath(c, &rel);
        if (r >= 0)
                r = cgfs_open_dir(b->root_fd, rel, O_RDONLY, &fd);
        if (r >= 0)
                r = kernel_read_limits(fd, &depth, &descendants);
        if (r < 0)
                return r;
        r = state_apply_limits(b->model, c, depth, descendants);
        if (r >= 0 && kernel) {
                Cgroup *k;
                if (hierarchy_lookup(kernel, rel, &k) >= 0) {
                        r = state_apply_limits(kernel, k, depth, descendants);
                        cgroup_set_limits_unread(kernel, k, false);
                }
        }
        if (r >= 0)
                cgroup_set_limits_unread(b->model, c, false);
        return r;
}

int backend_load_limits_above(Backend *b, const char *path) {
        _cleanup_free_ char *parent_path = NULL;
        Hierarchy *kernel = NULL;
        Cgroup *parent;
        int r, n = 0;

        if (b->type == BACKEND_SIM || !hierarchy_limits_maybe_unread(b->model))
                return 0;       /* nothing unread: no path to look up (every mkdir of a cold apply) */
        if (b->vtable->kernel_view) {
                const Hierarchy *view = b->vtable->kernel_view(b);
                kernel = view == b->model ? NULL : (Hierarchy *) view;
        }
        r = cgpath_parent(cgpath_relative(path), &parent_path);
        if (r < 0 || hierarchy_lookup(b->model, parent_path, &parent) < 0)
                return 0;       /* the mkdir's own check names what is wrong */
        for (Cgroup *c = parent; c; c = cgroup_parent(c)) {
                if (!cgroup_limits_unread(c))
                        continue;
                r = load_limits(b, kernel, c);
                if (r == -ENOENT || r == -ENODEV)
                        return n;       /* gone: the kernel's mkdir says so */
                if (r < 0)
                        return r;
                n++;
        }
        return n;
}
