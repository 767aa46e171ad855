/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgbypassd: the one writer of cgroup.subtree_control. */
#include <getopt.h>
#include <stdio.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "bus-manager.h"
#include "cgbypass/log.h"
#include "manager.h"
#include "systemd-managed.h"

typedef enum Mode {
        MODE_SERVICE,
        MODE_CHECK_CONFIG,
        MODE_PLAN,
        MODE_APPLY_ONCE,
} Mode;

static void help(void) {
        printf("Usage: cgbypassd [OPTIONS...]\n"
               "       cgbypassd --check-config [OPTIONS...]\n"
               "       cgbypassd --plan [OPTIONS...]\n"
               "       cgbypassd --apply-once [OPTIONS...]\n"
               "\n"
               "Keep the cgroup v2 hierarchy as the configuration describes it, with the\n"
               "controllers' bypass mode (a '#name' in cgroup.subtree_control, '+name' in a\n"
               "child's cgroup.controllers), and let delegated owners switch controllers\n"
               "through the org.cgbypass1 D-Bus service.\n"
               "\n"
               "Without a mode, cgbypassd applies the configuration (keeping the changes\n"
               "clients made, which it records in the state directory), then serves\n"
               "org.cgbypass1 on the bus: SIGHUP or the Reload method re-read the\n"
               "configuration (a broken one is refused and the running state kept),\n"
               "SIGTERM exits. Delegated owners switch their delegated controllers through\n"
               "it; polkit decides for everyone else but root.\n"
               "\n"
               "Modes:\n"
               "      --check-config         Validate the configuration against the rules of the\n"
               "                             kernel and the hierarchy as it is now; print every\n"
               "                             problem as FILE:LINE: reason; change nothing\n"
               "      --plan                 Print the operations that applying the configuration\n"
               "                             would make, as a trace (mkdir and write lines, paths\n"
               "                             relative to the cgroup root); change nothing. Nothing\n"
               "                             printed means the hierarchy is in sync\n"
               "      --apply-once           Apply the configuration, all or nothing, and exit\n"
               "                             (for boot time; no bus)\n"
               "--check-config and --plan only read; they work beside a running cgbypassd.\n"
               "\n"
               "Options:\n"
               "      --config FILE          Main configuration file\n"
               "                             (default: " CONFIG_MAIN_FILE ")\n"
               "      --config-dir DIR       Drop-in directory, *.conf read in lexical order\n"
               "                             (default: " CONFIG_CONF_DIR ")\n"
               "      --backend NAME         auto, native, emulated or sim (overrides [daemon] backend)\n"
               "      --cgroup-root DIR      The cgroup2 mount, or for sim any directory\n"
               "                             (overrides [daemon] cgroup-root)\n"
               "      --state-directory DIR  Where the applied state is kept\n"
               "                             (overrides [daemon] state-directory)\n"
               "      --bus system|session   The bus to serve on (default: system)\n"
               "  -h, --help                 Show this help\n"
               "      --version              Show the version\n"
               "\n"
               "Backends: native needs a kernel with the bypass series ('bypass' in\n"
               "/sys/kernel/cgroup/features); emulated keeps bypass mode in cgbypassd and gives a\n"
               "stock kernel the nearest legal configuration; sim works in a plain directory,\n"
               "without root. auto picks native, else emulated.\n"
               "\n"
               "Exit status: 0 on success; 1 when the configuration is refused or applying or\n"
               "recording it failed (the hierarchy is then as before); 2 for bad usage; 3 when\n"
               "applying or recording failed and so did taking it back (the hierarchy is then\n"
               "between the old and the new state).\n"
               "\n"
               "See cgbypassd(8) and cgbypassd.conf(5).\n");
}

static int parse_argv(int argc, char *argv[], Mode *mode, ManagerOptions *o) {
        enum {
                ARG_CHECK_CONFIG = 0x100,
                ARG_PLAN,
                ARG_APPLY_ONCE,
                ARG_CONFIG,
                ARG_CONFIG_DIR,
                ARG_BACKEND,
                ARG_CGROUP_ROOT,
                ARG_STATE_DIRECTORY,
                ARG_BUS,
                ARG_VERSION,
        };
        static const struct option options[] = {
                { "check-config",    no_argument,       NULL, ARG_CHECK_CONFIG },
                { "plan",            no_argument,       NULL, ARG_PLAN },
                { "apply-once",      no_argument,       NULL, ARG_APPLY_ONCE },
                { "config",          required_argument, NULL, ARG_CONFIG },
                { "config-dir",      required_argument, NULL, ARG_CONFIG_DIR },
                { "backend",         required_argument, NULL, ARG_BACKEND },
                { "cgroup-root",     required_argument, NULL, ARG_CGROUP_ROOT },
                { "state-directory", required_argument, NULL, ARG_STATE_DIRECTORY },
                { "bus",             required_argument, NULL, ARG_BUS },
                { "help",            no_argument,       NULL, 'h' },
                { "version",         no_argument,       NULL, ARG_VERSION },
                {}
        };
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                Mode m = MODE_SERVICE;
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("cgbypassd %s\n", PROJECT_VERSION);
                        return 0;
                case ARG_CHECK_CONFIG:
                        m = MODE_CHECK_CONFIG;
                        break;
                case ARG_PLAN:
                        m = MODE_PLAN;
                        break;
                case ARG_APPLY_ONCE:
                        m = MODE_APPLY_ONCE;
                        break;
                case ARG_CONFIG:
                        o->config_file = optarg;
                        break;
                case ARG_CONFIG_DIR:
                        o->config_dir = optarg;
                        break;
                case ARG_BACKEND:
                        o->backend = optarg;
                        break;
                case ARG_CGROUP_ROOT:
                        o->cgroup_root = optarg;
                        break;
                case ARG_STATE_DIRECTORY:
                        o->state_directory = optarg;
                        break;
                case ARG_BUS:
                        if (!streq(optarg, "system") && !streq(optarg, "session")) {
                                log_error("--bus takes 'system' or 'session', not '%s'.", optarg);
                                return -EINVAL;
                        }
                        o->bus = optarg;
                        break;
                case ':':
                        log_error("Option '%s' needs an argument.", argv[optind - 1]);
                        return -EINVAL;
                default:
                        log_error("Unknown option '%s'; see --help.", argv[optind - 1]);
                        return -EINVAL;
                }
                if (m != MODE_SERVICE) {
                        if (*mode != MODE_SERVICE && *mode != m) {
                                log_error("--check-config, --plan and --apply-once exclude each other.");
                                return -EINVAL;
                        }
                        *mode = m;
                }
        }
        if (optind < argc) {
                log_error("Unexpected argument '%s'; see --help.", argv[optind]);
                return -EINVAL;
        }
        o->read_only = *mode == MODE_CHECK_CONFIG || *mode == MODE_PLAN;
        return 1;
}

/*
 * Load the configuration, open the backend, and plan (MODE_PLAN,
 * MODE_CHECK_CONFIG) or apply (MODE_APPLY_ONCE, MODE_SERVICE). Every
 * configuration problem is printed; the rest was logged where it happened.
 */
static int prepare(Mode mode, const ManagerOptions *o, Manager **ret, ApplyOutcome *ret_outcome) {
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        bool apply = mode == MODE_APPLY_ONCE || mode == MODE_SERVICE;
        size_t writes = 0;
        int r;

        r = manager_new(o, &m);
        if (r < 0)
                return log_oom();
        r = manager_load_config(m, &errs);
        if (r >= 0) {
                r = manager_open_backend(m);
                if (r < 0) {
                        config_errors_done(&errs);
                        return r;
                }
                r = manager_check_systemd_managed(m, m->config, &errs);
                if (r >= 0 && apply) {
                        (void) manager_log_drift(m);
                        r = manager_apply(m, &errs, &writes, ret_outcome);
                } else if (r >= 0)
                        r = manager_plan(m, &p, &errs);
        }
        if (config_errors_count(&errs) > 0) {
                /* a service logs them (journal); a command prints them for the person who ran it */
                if (mode == MODE_SERVICE)
                        for (size_t i = 0; i < config_errors_count(&errs); i++)
                                log_error("%s", config_errors_get(&errs, i));
                else
                        config_errors_print(&errs, stderr);
                log_error("The configuration has %zu problem(s); nothing was changed.",
                          config_errors_count(&errs));
                config_errors_done(&errs);
                return -EINVAL;
        }
        config_errors_done(&errs);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return r; /* logged */

        if (mode == MODE_PLAN)
                plan_print(p, stdout);
        else if (apply)
                log_info("Applied the configuration: %zu operation(s).", writes);
        *ret = TAKE_PTR(m);
        return 0;
}

/* Exit status 3: applying failed and so did taking it back; the hierarchy is not as before. */
#define EXIT_LEFT_BETWEEN 3

static int run_offline(Mode mode, const ManagerOptions *o) {
        _cleanup_(manager_freep) Manager *m = NULL;
        ApplyOutcome outcome = APPLY_REFUSED;
        int r;

        r = prepare(mode, o, &m, &outcome);
        if (r >= 0)
                return 0;
        if (outcome == APPLY_LEFT_BETWEEN) {
                log_error("The hierarchy is between the old and the new state; see the errors above.");
                return EXIT_LEFT_BETWEEN;
        }
        if (outcome == APPLY_NOT_RECORDED || outcome == APPLY_FAILED)
                log_error("Nothing was changed: the hierarchy is as before.");
        return 1;
}

/* Bring the hierarchy to the configuration (with the client changes kept), then serve. */
static int run_service(const ManagerOptions *o) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        r = prepare(MODE_SERVICE, o, &m, NULL);
        if (r < 0)
                return r;
        return manager_run_service(m);
}

/*
 * The start-up scan keeps a directory fd open per cgroup whose children it
 * reads next (kernel-scan.c), as far as the soft RLIMIT_NOFILE allows. We
 * use no select(2) and exec nothing, so take the hard limit, as systemd
 * advises programs that need many fds (and as it does itself).
 */
static void raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

/*
 * A one-shot run builds the configuration, the plan and the backend's
 * models of the whole tree (about 850 bytes a cgroup at its peak) and
 * exits. Backing that heap with transparent huge pages, as the
 * glibc.malloc.hugetlb=1 tunable would, takes it from one page fault per
 * 4 KiB to one per 2 MiB; on this kind of virtual machine a fault costs
 * 8 us and the TLB misses more (bench/README.md: a 10,000-cgroup apply
 * took 12 % less). The heap grows once, by M_TOP_PAD, to a 2 MiB boundary
 * the allocations then start at; the gap below it is allocated and never
 * touched, so it costs address space only. Large blocks stay in the heap
 * too. The service keeps the default heap: its resident size is what an
 * administrator watches. Under ASan, malloc() is not glibc's.
 */
static void batch_heap(void) {
#ifndef __SANITIZE_ADDRESS__
        static void *heap_gap; /* kept, not leaked */
        const size_t pad = (size_t) 64 << 20, huge = (size_t) 2 << 20;

        if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TOP_PAD, (int) pad) != 1)
                return;
        uintptr_t brk0 = (uintptr_t) sbrk(0), start = (brk0 + huge - 1) & ~(huge - 1);
        /* The heap's free top and the gap, less 16 bytes: the free top's header then lies just below the
         * boundary. Written above it, before the advice, it would have the first huge page's range mapped
         * by 4 KiB pages for good (malloc(N) takes a chunk of N + 8 rounded up to 16). */
        heap_gap = malloc(mallinfo2().keepcost + (start - brk0) - 3 * sizeof(size_t));
        uintptr_t end = (uintptr_t) sbrk(0) & ~(huge - 1);
        if (heap_gap && end > start)
                (void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
}

int main(int argc, char *argv[]) {
        ManagerOptions o = { .bus = "system" };
        Mode mode = MODE_SERVICE;
        int r;

        log_setup("cgbypassd");
        r = parse_argv(argc, argv, &mode, &o);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        raise_nofile();
        if (mode != MODE_SERVICE)
                batch_heap();
        if (mode == MODE_SERVICE)
                return run_service(&o) < 0 ? 1 : 0;
        return run_offline(mode, &o);
}
