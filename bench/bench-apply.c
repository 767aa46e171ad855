/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Applying a configuration: cgbypassd --apply-once against a bare C loop
 * that makes the same tree with mkdir(2) and write(2), and against
 * libcgroup's cgconfigparser with the same tree.
 *
 * On the host's cgroup2 (emulated backend): about N cgroups, fan-out chosen
 * for depth 4, a "+CONTROLLER" subtree_control write in every inner cgroup,
 * in an empty scratch cgroup below the mount. The baseline loop does those
 * mkdirs and writes and nothing else.
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
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "cgbypass/macro.h"

#define CGCONFIGPARSER "/usr/sbin/cgconfigparser"
#define MAX_ROUNDS 15

extern char **environ;

typedef struct Node {
        char *path;             /* relative to the scratch cgroup */
        bool inner;
} Node;

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

static const char *root_mount, *root_ctrl;
static bool root_added;

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static double self_cpu(void) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int write_file(const char *path, const char *value) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t r = write(fd, value, strlen(value));
        int e = errno;
        close(fd);
        return r < 0 ? -e : 0;
}

/* the mount's root is left as found: a controller enabled for the run is disabled again */
static void restore_root(void) {
        char p[4096], token[64];

        if (!root_added)
                return;
        root_added = false;
        snprintf(p, sizeof(p), "%s/cgroup.subtree_control", root_mount);
        snprintf(token, sizeof(token), "-%s", root_ctrl);
        if (write_file(p, token) < 0)
                fprintf(stderr, "bench-apply: could not disable %s again in %s: %m\n", root_ctrl, p);
}

_Noreturn static void die(const char *what) {
        fprintf(stderr, "bench-apply: %s: %m\n", what);
        exit(EXIT_FAILURE);     /* atexit: restore_root() */
}

/* fmt() that refuses to cut: a cut path would time the wrong files */
_printf_(3, 4)
static void fmt(char *buf, size_t size, const char *format, ...) {
        va_list ap;
        int n;

        va_start(ap, format);
        n = vsnprintf(buf, size, format, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= size) {
                errno = ENAMETOOLONG;
                die(format);
        }
}

/* breadth first, so parents come before children; stops at n nodes */
static Node *make_tree(size_t n, size_t *ret_n) {
        unsigned fanout = (unsigned) ceil(pow((double) n, 0.25));
        Node *nodes = calloc(n, sizeof(Node));
        size_t count = 0;

        if (!nodes)
                die("calloc");
        for (unsigned i = 0; i < fanout && count < n; i++)
                if (asprintf(&nodes[count++].path, "n%u", i) < 0)
                        die("asprintf");
        for (size_t parent = 0; parent < count && count < n; parent++)
                for (unsigned i = 0; i < fanout && count < n; i++) {
                        if (asprintf(&nodes[count++].path, "%s/n%u", nodes[parent].path, i) < 0)
                                die("asprintf");
                        nodes[parent].inner = true;
                }
        *ret_n = count;
        return nodes;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
                fprintf(stderr, "bench-apply: cannot remove %s: %m\n", path);
        return 0;
}

static void rm_rf(const char *path) {
        (void) nftw(path, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
}

/* cgroupfs: bottom-up rmdir (its files go with the directory) */
static void remove_cgroups(const char *scratch, const Node *nodes, size_t n, const char *ctrl) {
        char p[4096], token[64];

        for (size_t i = n; i-- > 0;) {
                fmt(p, sizeof(p), "%s/%s", scratch, nodes[i].path);
                if (rmdir(p) < 0 && errno != ENOENT)
                        die(p);
        }
        fmt(p, sizeof(p), "%s/cgroup.subtree_control", scratch);
        fmt(token, sizeof(token), "-%s", ctrl);
        (void) write_file(p, token);
}

static Timing bare_cgroups(const char *scratch, const char *ctrl, const Node *nodes, size_t n) {
        char p[4096], token[64];
        double t0 = now(), c0 = self_cpu();

        fmt(token, sizeof(token), "+%s", ctrl);
        fmt(p, sizeof(p), "%s/cgroup.subtree_control", scratch);
        if (write_file(p, token) < 0)
                die("write scratch subtree_control");
        for (size_t i = 0; i < n; i++) {
                fmt(p, sizeof(p), "%s/%s", scratch, nodes[i].path);
                if (mkdir(p, 0755) < 0)
                        die(p);
        }
        for (size_t i = 0; i < n; i++) {
                if (!nodes[i].inner)
                        continue;
                fmt(p, sizeof(p), "%s/%s/cgroup.subtree_control", scratch, nodes[i].path);
                if (write_file(p, token) < 0)
                        die(p);
        }
        return (Timing) { now() - t0, self_cpu() - c0 };
}

/* the rendered sim tree, recorded once */
static Entry *rec;
static size_t n_rec, rec_skip;

static int record_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        Entry *v = reallocarray(rec, n_rec + 1, sizeof(Entry));
        Entry e = { .mode = st->st_mode & 07777 };

        (void) ftw;
        if (!v)
                die("reallocarray");
        rec = v;
        if (strlen(path) <= rec_skip)
                return 0;       /* the top directory itself */
        e.path = strdup(path + rec_skip);
        if (!e.path)
                die("strdup");
        if (flag == FTW_F) {
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
                e.content = malloc((size_t) st->st_size + 1);
                if (fd < 0 || !e.content)
                        die(path);
                ssize_t k = read(fd, e.content, (size_t) st->st_size);
                if (k < 0)
                        die(path);
                e.len = (size_t) k;
        } else if (flag != FTW_D)
                return 0;
        rec[n_rec++] = e;
        return 0;
}

static void record_tree(const char *top) {
        rec_skip = strlen(top) + 1;
        if (nftw(top, record_entry, 64, FTW_PHYS) < 0)
                die(top);
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
        double t0 = now(), c0 = self_cpu();

        for (size_t i = 0; i < n_rec; i++) {
                fmt(p, sizeof(p), "%s/%s", top, rec[i].path);
                if (!rec[i].content) {
                        if (mkdir(p, rec[i].mode) < 0)
                                die(p);
                        continue;
                }
                int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, rec[i].mode);
                if (fd < 0)
                        die(p);
                if (rec[i].len > 0 && write(fd, rec[i].content, rec[i].len) != (ssize_t) rec[i].len)
                        die(p);
                close(fd);
        }
        return (Timing) { now() - t0, self_cpu() - c0 };
}

/* the sim's top directory, emptied but kept */
static void empty_dir(const char *top) {
        rm_rf(top);
        if (mkdir(top, 0755) < 0)
                die(top);
}

static Timing run_command(char *const argv[]) {
        posix_spawn_file_actions_t fa;
        struct rusage ru;
        pid_t pid;
        int status;
        double t0 = now();

        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
                die(argv[0]);
        posix_spawn_file_actions_destroy(&fa);
        if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "bench-apply: %s failed (status %d); run it by hand to see why\n", argv[0],
                        status);
                exit(EXIT_FAILURE);
        }
        return (Timing) { now() - t0, (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                                      (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6 };
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned n) {
        double s[MAX_ROUNDS];
        memcpy(s, v, n * sizeof(double));
        qsort(s, n, sizeof(double), cmp_double);
        return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void write_config(const char *conf, const char *backend, const char *ctrl, const Node *nodes, size_t n) {
        FILE *f = fopen(conf, "we");
        if (!f)
                die(conf);
        fprintf(f, "[daemon]\nbackend = %s\n\n[cgroup]\npath = /\nsubtree-control = +%s\n", backend, ctrl);
        for (size_t k = 0; k < n; k++) {
                fprintf(f, "\n[cgroup]\npath = /%s\n", nodes[k].path);
                if (nodes[k].inner)
                        fprintf(f, "subtree-control = +%s\n", ctrl);
        }
        if (fclose(f) != 0)
                die(conf);
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
        const char *mount = "/sys/fs/cgroup/unified", *ctrl = "hugetlb", *daemon, *tmpdir = getenv("TMPDIR");
        size_t sizes[8] = { 1000, 10000, 100000 }, n_sizes = 3;
        char scratch[4096], tmp[4096], p[4096];
        unsigned rounds = 3;
        bool sim = false;
        int i = 1;

        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h")) {
                usage(mount);
                return argc < 2 ? 2 : 0;
        }
        daemon = argv[i++];
        for (; i < argc && startswith(argv[i], "--"); i++) {
                if (streq(argv[i], "--sim"))
                        sim = true;
                else if (streq(argv[i], "--mount") && i + 1 < argc)
                        mount = argv[++i];
                else if (streq(argv[i], "--controller") && i + 1 < argc)
                        ctrl = argv[++i];
                else if (streq(argv[i], "--rounds") && i + 1 < argc) {
                        rounds = (unsigned) strtoul(argv[++i], NULL, 10);
                        if (rounds < 1 || rounds > MAX_ROUNDS) {
                                fprintf(stderr, "bench-apply: --rounds takes 1 to %d\n", MAX_ROUNDS);
                                return 2;
                        }
                } else {
                        fprintf(stderr, "bench-apply: unknown or incomplete option '%s'; see --help\n", argv[i]);
                        return 2;
                }
        }
        if (i < argc)
                for (n_sizes = 0; i < argc && n_sizes < ELEMENTSOF(sizes); i++) {
                        char *end;
                        sizes[n_sizes++] = strtoul(argv[i], &end, 10);
                        if (*end || sizes[n_sizes - 1] < 1) {
                                fprintf(stderr, "bench-apply: '%s' is not a number of cgroups\n", argv[i]);
                                return 2;
                        }
                }

        fmt(tmp, sizeof(tmp), "%s/cgb-bench-apply-XXXXXX", tmpdir ?: "/tmp");
        if (!mkdtemp(tmp))
                die("mkdtemp");
        if (sim)
                fmt(scratch, sizeof(scratch), "%s/tree", tmp);
        else {
                char token[64];

                /* as the tests do: enable the controller at the mount's root for the run, restore it after */
                root_mount = mount;
                root_ctrl = ctrl;
                atexit(restore_root);
                fmt(p, sizeof(p), "%s/cgroup.subtree_control", mount);
                _cleanup_fclose_ FILE *f = fopen(p, "re");
                char line[1024] = "";
                /* nothing enabled reads as an empty file (cgroup_print_ss_mask() prints no newline) */
                if (!f || (!fgets(line, sizeof(line), f) && ferror(f)))
                        die(p);
                bool found = false;
                for (char *w = strtok(line, " \n"); w; w = strtok(NULL, " \n"))
                        found = found || streq(w, ctrl);
                if (!found) {
                        fmt(token, sizeof(token), "+%s", ctrl);
                        int r = write_file(p, token);
                        if (r < 0) {
                                errno = -r;
                                fprintf(stderr, "bench-apply: cannot enable %s in %s (does %s/cgroup.controllers "
                                        "offer it?): %m\n", ctrl, p, mount);
                                rm_rf(tmp);
                                return EXIT_FAILURE;
                        }
                        root_added = true;
                }
                fmt(scratch, sizeof(scratch), "%s/cgb-bench-%d", mount, (int) getpid());
        }
        if (mkdir(scratch, 0755) < 0)
                die(scratch);
        bool have_cgconfig = !sim && access(CGCONFIGPARSER, X_OK) == 0;

        printf("bench-apply: %s, %s backend, controller %s, tree depth 4, one subtree_control write per inner "
               "cgroup, %u round(s), medians\n", sim ? scratch : mount, sim ? "sim" : "emulated", ctrl, rounds);
        printf("%7s %10s %10s %10s %8s %8s %8s %8s %12s\n", "cgroups", "baseline", "apply", "re-apply", "apply/",
               "re-app/", "cpu", "re-cpu", "cgconfig");
        double cgconf_vs_apply = NAN;
        size_t figs_n[8];
        double figs_apply[8], figs_again[8];
        for (size_t s = 0; s < n_sizes; s++) {
                size_t n;
                Node *nodes = make_tree(sizes[s], &n);
                char conf[4096], state[4096];
                double bw[MAX_ROUNDS], aw[MAX_ROUNDS], rw[MAX_ROUNDS], bc[MAX_ROUNDS], ac[MAX_ROUNDS], rc[MAX_ROUNDS];

                fmt(conf, sizeof(conf), "%s/cgbypassd-%zu.conf", tmp, n);
                fmt(state, sizeof(state), "%s/state-%zu", tmp, n);
                write_config(conf, sim ? "sim" : "emulated", ctrl, nodes, n);
                char *dargv[] = { (char *) daemon, "--apply-once", "--config", conf, "--config-dir", "/nonexistent",
                                  "--cgroup-root", scratch, "--state-directory", state, NULL };

                for (unsigned k = 0; k < rounds; k++) {
                        Timing b, a, r;

                        rm_rf(state);
                        if (sim) {
                                a = run_command(dargv);
                                r = run_command(dargv);
                                if (!rec)
                                        record_tree(scratch);
                                empty_dir(scratch);
                                b = bare_sim(scratch);
                                empty_dir(scratch);
                        } else {
                                b = bare_cgroups(scratch, ctrl, nodes, n);
                                remove_cgroups(scratch, nodes, n, ctrl);
                                a = run_command(dargv);
                                r = run_command(dargv);
                                remove_cgroups(scratch, nodes, n, ctrl);
                        }
                        bw[k] = b.wall, aw[k] = a.wall, rw[k] = r.wall, bc[k] = b.cpu, ac[k] = a.cpu, rc[k] = r.cpu;
                }
                forget_tree();

                double cgc = NAN;
                if (have_cgconfig && n <= 10000) {
                        char cgconf[4096];
                        const char *rel = scratch + strlen(mount) + 1;

                        fmt(cgconf, sizeof(cgconf), "%s/cgconfig-%zu.conf", tmp, n);
                        FILE *f = fopen(cgconf, "we");
                        if (!f)
                                die(cgconf);
                        for (size_t k = 0; k < n; k++)
                                fprintf(f, "group %s/%s {\n    %s {\n    }\n}\n", rel, nodes[k].path, ctrl);
                        if (fclose(f) != 0)
                                die(cgconf);
                        char *cargv[] = { CGCONFIGPARSER, "-l", cgconf, NULL };
                        cgc = run_command(cargv).wall;
                        remove_cgroups(scratch, nodes, n, ctrl);
                }

                double base = median(bw, rounds), apply = median(aw, rounds), again = median(rw, rounds);
                printf("%7zu %8.3f s %8.3f s %8.3f s %7.2fx %7.2fx %7.2fx %7.2fx %10.3f s\n", n, base, apply, again,
                       apply / base, again / base, median(ac, rounds) / median(bc, rounds),
                       median(rc, rounds) / median(bc, rounds), cgc);
                figs_n[s] = n;
                figs_apply[s] = apply / base;
                figs_again[s] = again / base;
                if (n == 10000)
                        cgconf_vs_apply = cgc / apply;
                for (size_t k = 0; k < n; k++)
                        free(nodes[k].path);
                free(nodes);
        }
        printf("apply/: cold --apply-once / baseline; re-app/: --apply-once with nothing to change / baseline;\n"
               "cpu, re-cpu: CPU time (user + system) of the cold apply, of the re-apply / of the baseline\n");
        for (size_t s = 0; s < n_sizes; s++) {
                fmt(p, sizeof(p), "%s apply-once / bare loop, %zu cgroups", sim ? "sim" : "cgroup2", figs_n[s]);
                figure(p, figs_apply[s], "<=", 1.2);
        }
        for (size_t s = 0; s < n_sizes; s++) {
                fmt(p, sizeof(p), "%s re-apply unchanged / bare loop, %zu cgroups", sim ? "sim" : "cgroup2",
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
        rm_rf(tmp);
        return 0;
}
