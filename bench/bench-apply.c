/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Applying a configuration: cgbypassd --apply-once against a bare C loop
 * that makes the same tree with mkdir(2) and write(2), and against
 * libcgroup's cgconfigparser with the same tree.
 *
 * On the host's cgroup2 (emulated backend): about N cgroups, fan-out chosen
 * for depth 4, a "+CONTROLLER" subtree_control write in every inner cgroup,
 * in an empty scratch cgroup below the mount. The baseline is bare-apply, a
 * plain C program that reads the list of cgroups and does those mkdirs and
 * writes and nothing else: like cgbypassd it is spawned, so both pay an exec.
 * The same loop run inside this process is timed too, for the "in-proc"
 * column.
 *
 * With --sim (sim backend): the same configuration, rendered into a plain
 * directory. The baseline is a loop that makes the directory cgbypassd made
 * (every directory and file, same contents and modes), recorded after the
 * first apply.
 *
 * A round times, interleaved: the baseline, cgbypassd on the empty tree
 * (cold), cgbypassd again with nothing to change (re-apply); removal is not
 * timed. Each figure is the median over the rounds.
 *
 * usage: bench-apply CGBYPASSD [--mount DIR] [--controller NAME] [--sim] [--rounds R] [N...]
 */
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "bench-util.h"

#define CGCONFIGPARSER "/usr/sbin/cgconfigparser"
#define MAX_ROUNDS 15

extern char **environ;

/* one entry of a rendered sim tree, in pre-order */
typedef struct Entry {
        char *path;
        char *content;          /* NULL: a directory */
        size_t len;
        mode_t mode;
} Entry;

typedef struct Timing {
        double wall, cpu;
} Timing;

static double self_cpu(void) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* bare-apply's list: "I PATH" or "L PATH", parents first */
static void write_list(const char *list, const Node *nodes, size_t n) {
        FILE *f = fopen(list, "we");
        if (!f)
                bench_die(list);
        for (size_t k = 0; k < n; k++)
                fprintf(f, "%c %s\n", nodes[k].inner ? 'I' : 'L', nodes[k].path);
        if (fclose(f) != 0)
                bench_die(list);
}

static Timing bare_cgroups(const char *scratch, const char *ctrl, const Node *nodes, size_t n) {
        double t0 = bench_now(), c0 = self_cpu();

        bench_make_cgroups(scratch, ctrl, nodes, n);
        return (Timing) { bench_now() - t0, self_cpu() - c0 };
}

/* the rendered sim tree, recorded once */
static Entry *rec;
static size_t n_rec, rec_skip;

static int record_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        Entry *v = reallocarray(rec, n_rec + 1, sizeof(Entry));
        Entry e = { .mode = st->st_mode & 07777 };

        (void) ftw;
        if (!v)
                bench_die("reallocarray");
        rec = v;
        if (strlen(path) <= rec_skip)
                return 0;       /* the top directory itself */
        e.path = strdup(path + rec_skip);
        if (!e.path)
                bench_die("strdup");
        if (flag == FTW_F) {
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
                e.content = malloc((size_t) st->st_size + 1);
                if (fd < 0 || !e.content)
                        bench_die(path);
                ssize_t k = read(fd, e.content, (size_t) st->st_size);
                if (k < 0)
                        bench_die(path);
                e.len = (size_t) k;
        } else if (flag != FTW_D)
                return 0;
        rec[n_rec++] = e;
        return 0;
}

static void record_tree(const char *top) {
        rec_skip = strlen(top) + 1;
        if (nftw(top, record_entry, 64, FTW_PHYS) < 0)
                bench_die(top);
}

static void forget_tree(void) {
        for (size_t i = 0; i < n_rec; i++) {
                free(rec[i].path);
                free(rec[i].content);
        }
        free(rec);
        rec = NULL;
        n_rec = 0;
}

static Timing bare_sim(const char *top) {
        char p[4096];
        double t0 = bench_now(), c0 = self_cpu();

        for (size_t i = 0; i < n_rec; i++) {
                bench_fmt(p, sizeof(p), "%s/%s", top, rec[i].path);
                if (!rec[i].content) {
                        if (mkdir(p, rec[i].mode) < 0)
                                bench_die(p);
                        continue;
                }
                int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, rec[i].mode);
                if (fd < 0)
                        bench_die(p);
                if (rec[i].len > 0 && write(fd, rec[i].content, rec[i].len) != (ssize_t) rec[i].len)
                        bench_die(p);
                close(fd);
        }
        return (Timing) { bench_now() - t0, self_cpu() - c0 };
}

/* the sim's top directory, emptied but kept */
static void empty_dir(const char *top) {
        bench_rm_rf(top);
        if (mkdir(top, 0755) < 0)
                bench_die(top);
}

static Timing run_command(char *const argv[]) {
        posix_spawn_file_actions_t fa;
        struct rusage ru;
        pid_t pid;
        int status;
        double t0 = bench_now();

        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
                bench_die(argv[0]);
        posix_spawn_file_actions_destroy(&fa);
        if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "bench-apply: %s failed (status %d); run it by hand to see why\n", argv[0],
                        status);
                exit(EXIT_FAILURE);
        }
        return (Timing) { bench_now() - t0, (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                                      (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6 };
}

static void figure(const char *name, double value, const char *cmp, double target) {
        bool ok = streq(cmp, "<=") ? value <= target : value >= target;
        printf("figure: %s = %.2f (target: %s %.2f) %s\n", name, value, cmp, target, ok ? "ok" : "MISSED");
}

static void usage(const char *mount) {
        printf("usage: bench-apply CGBYPASSD [--mount DIR] [--controller NAME] [--sim] [--rounds R] [N...]\n\n"
               "Times cgbypassd --apply-once building a tree of N cgroups (default 1000 10000 100000),\n"
               "and again with nothing to change, against a bare loop of mkdir(2) and write(2) making\n"
               "the same tree, R interleaved rounds (default 3), medians; at N <= 10000 also\n"
               "cgconfigparser with the same tree, when installed.\n\n"
               "  --mount DIR        the cgroup2 mount (default %s); a scratch cgroup below it\n"
               "                     is used, the controller enabled at DIR for the run if needed\n"
               "  --controller NAME  the controller the tree enables (default hugetlb)\n"
               "  --sim              the sim backend in a directory below $TMPDIR (default /tmp);\n"
               "                     the baseline makes the same files\n"
               "Needs root for the cgroup2 runs. Ends with one 'figure:' line per figure.\n", mount);
}

int main(int argc, char *argv[]) {
        BenchArgs args = { .mount = "/sys/fs/cgroup/unified", .ctrl = "hugetlb", .rounds = 3,
                        .sizes = { 1000, 10000, 100000 }, .n_sizes = 3 };
        const char *tmpdir = getenv("TMPDIR");
        char scratch[4096], tmp[4096], p[4096];

        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h")) {
                usage(args.mount);
                return argc < 2 ? 2 : 0;
        }
        int ret = bench_parse_args(argc, argv, &args, "--rounds", MAX_ROUNDS, true);
        if (ret > 0)
                return ret;
        const char *mount = args.mount, *ctrl = args.ctrl, *daemon = args.daemon;
        const size_t *sizes = args.sizes, n_sizes = args.n_sizes;
        unsigned rounds = args.rounds;
        bool sim = args.sim;

        bench_fmt(tmp, sizeof(tmp), "%s/cgb-bench-apply-XXXXXX", tmpdir ?: "/tmp");
        if (!mkdtemp(tmp))
                bench_die("mkdtemp");
        if (sim)
                bench_fmt(scratch, sizeof(scratch), "%s/tree", tmp);
        else {
                if (bench_enable_root(mount, ctrl) < 0) {
                        bench_rm_rf(tmp);
                        return EXIT_FAILURE;
                }
                bench_fmt(scratch, sizeof(scratch), "%s/cgb-bench-%d", mount, (int) getpid());
        }
        if (mkdir(scratch, 0755) < 0)
                bench_die(scratch);
        bool have_cgconfig = !sim && access(CGCONFIGPARSER, X_OK) == 0;

        printf("bench-apply: %s, %s backend, controller %s, tree depth 4, one subtree_control write per inner "
               "cgroup, %u round(s), medians\n", sim ? scratch : mount, sim ? "sim" : "emulated", ctrl, rounds);
        printf("%7s %10s %10s %10s %8s %8s %8s %8s %8s %12s\n", "cgroups", "baseline", "apply", "re-apply", "apply/",
               "re-app/", "cpu", "re-cpu", "in-proc", "cgconfig");
        double cgconf_vs_apply = NAN;
        size_t figs_n[8];
        double figs_apply[8], figs_again[8];
        for (size_t s = 0; s < n_sizes; s++) {
                size_t n;
                Node *nodes = bench_make_tree(sizes[s], &n);
                char conf[4096], state[4096], list[4096];
                double bw[MAX_ROUNDS], aw[MAX_ROUNDS], rw[MAX_ROUNDS], bc[MAX_ROUNDS], ac[MAX_ROUNDS], rc[MAX_ROUNDS];
                double iw[MAX_ROUNDS] = {};

                bench_fmt(conf, sizeof(conf), "%s/cgbypassd-%zu.conf", tmp, n);
                bench_fmt(state, sizeof(state), "%s/state-%zu", tmp, n);
                bench_write_config(conf, sim ? "sim" : "emulated", ctrl, nodes, n);
                bench_fmt(list, sizeof(list), "%s/bare-%zu.list", tmp, n);
                write_list(list, nodes, n);
                char *bargv[] = { (char *) BARE_APPLY, scratch, (char *) ctrl, list, NULL };
                char *dargv[] = { (char *) daemon, "--apply-once", "--config", conf, "--config-dir", "/nonexistent",
                                  "--cgroup-root", scratch, "--state-directory", state, NULL };

                for (unsigned k = 0; k < rounds; k++) {
                        Timing b, a, r;

                        bench_rm_rf(state);
                        if (sim) {
                                a = run_command(dargv);
                                r = run_command(dargv);
                                if (!rec)
                                        record_tree(scratch);
                                empty_dir(scratch);
                                b = bare_sim(scratch);
                                empty_dir(scratch);
                        } else {
                                b = run_command(bargv);
                                bench_remove_cgroups(scratch, nodes, n, ctrl);
                                iw[k] = bare_cgroups(scratch, ctrl, nodes, n).wall;
                                bench_remove_cgroups(scratch, nodes, n, ctrl);
                                a = run_command(dargv);
                                r = run_command(dargv);
                                bench_remove_cgroups(scratch, nodes, n, ctrl);
                        }
                        bw[k] = b.wall, aw[k] = a.wall, rw[k] = r.wall, bc[k] = b.cpu, ac[k] = a.cpu, rc[k] = r.cpu;
                }
                forget_tree();

                double cgc = NAN;
                if (have_cgconfig && n <= 10000) {
                        char cgconf[4096];
                        const char *rel = scratch + strlen(mount) + 1;

                        bench_fmt(cgconf, sizeof(cgconf), "%s/cgconfig-%zu.conf", tmp, n);
                        FILE *f = fopen(cgconf, "we");
                        if (!f)
                                bench_die(cgconf);
                        for (size_t k = 0; k < n; k++)
                                fprintf(f, "group %s/%s {\n    %s {\n    }\n}\n", rel, nodes[k].path, ctrl);
                        if (fclose(f) != 0)
                                bench_die(cgconf);
                        char *cargv[] = { CGCONFIGPARSER, "-l", cgconf, NULL };
                        cgc = run_command(cargv).wall;
                        bench_remove_cgroups(scratch, nodes, n, ctrl);
                }

                double base = bench_median(bw, rounds), apply = bench_median(aw, rounds);
                double again = bench_median(rw, rounds);
                printf("%7zu %8.3f s %8.3f s %8.3f s %7.2fx %7.2fx %7.2fx %7.2fx %7.2fx %10.3f s\n", n, base, apply,
                       again, apply / base, again / base, bench_median(ac, rounds) / bench_median(bc, rounds),
                       bench_median(rc, rounds) / bench_median(bc, rounds), sim ? NAN : apply / bench_median(iw, rounds),
                       cgc);
                figs_n[s] = n;
                figs_apply[s] = apply / base;
                figs_again[s] = again / base;
                if (n == 10000)
                        cgconf_vs_apply = cgc / apply;
                bench_free_tree(nodes, n);
        }
        printf("apply/: cold --apply-once / baseline; re-app/: --apply-once with nothing to change / baseline;\n"
               "cpu, re-cpu: CPU time (user + system) of the cold apply, of the re-apply / of the baseline\n"
               "in-proc: cold apply / the baseline's loop run inside bench-apply (no exec)\n");
        for (size_t s = 0; s < n_sizes; s++) {
                bench_fmt(p, sizeof(p), "%s apply-once / bare loop, %zu cgroups", sim ? "sim" : "cgroup2", figs_n[s]);
                figure(p, figs_apply[s], "<=", 1.2);
        }
        for (size_t s = 0; s < n_sizes; s++) {
                bench_fmt(p, sizeof(p), "%s re-apply unchanged / bare loop, %zu cgroups", sim ? "sim" : "cgroup2",
                    figs_n[s]);
                figure(p, figs_again[s], "<=", 0.5);
        }
        if (!sim) {
                if (isnan(cgconf_vs_apply))
                        printf("figure: cgconfigparser / apply-once, 10000 cgroups = not measured (%s) "
                               "(target: >= 20.00) MISSED\n",
                               have_cgconfig ? "10000 not among the sizes" : CGCONFIGPARSER " not installed");
                else
                        figure("cgconfigparser / apply-once, 10000 cgroups", cgconf_vs_apply, ">=", 20);
        }
        if (rmdir(scratch) < 0)
                fprintf(stderr, "bench-apply: cannot remove %s: %m\n", scratch);
        bench_rm_rf(tmp);
        return 0;
}
