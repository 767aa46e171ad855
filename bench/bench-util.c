/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

static const char *root_mount, *root_ctrl;
static bool root_added;

double bench_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int bench_write_file(const char *path, const char *value) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t r = write(fd, value, strlen(value));
        int e = errno;
        close(fd);
        return r < 0 ? -e : 0;
}

_Noreturn void bench_die(const char *what) {
        fprintf(stderr, "%s: %s: %m\n", program_invocation_short_name, what);
        exit(EXIT_FAILURE);     /* atexit: bench_restore_root() */
}

void bench_fmt(char *buf, size_t size, const char *format, ...) {
        va_list ap;
        int n;

        va_start(ap, format);
        n = vsnprintf(buf, size, format, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= size) {
                errno = ENAMETOOLONG;
                bench_die(format);
        }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
                fprintf(stderr, "%s: cannot remove %s: %m\n", program_invocation_short_name, path);
        return 0;
}

void bench_rm_rf(const char *path) {
        (void) nftw(path, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

double bench_median(double *v, unsigned n) {
        qsort(v, n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_parse_args(int argc, char *argv[], BenchArgs *a, const char *rounds_opt, unsigned max_rounds, bool sim_ok) {
        const char *prog = program_invocation_short_name;
        int i = 1;

        a->daemon = argv[i++];
        for (; i < argc && startswith(argv[i], "--"); i++) {
                if (sim_ok && streq(argv[i], "--sim"))
                        a->sim = true;
                else if (streq(argv[i], "--mount") && i + 1 < argc)
                        a->mount = argv[++i];
                else if (streq(argv[i], "--controller") && i + 1 < argc)
                        a->ctrl = argv[++i];
                else if (streq(argv[i], rounds_opt) && i + 1 < argc) {
                        a->rounds = (unsigned) strtoul(argv[++i], NULL, 10);
                        if (a->rounds < 1 || a->rounds > max_rounds) {
                                fprintf(stderr, "%s: %s takes 1 to %u\n", prog, rounds_opt, max_rounds);
                                return 2;
                        }
                } else {
                        fprintf(stderr, "%s: unknown or incomplete option '%s'; see --help\n", prog, argv[i]);
                        return 2;
                }
        }
        if (i < argc)
                for (a->n_sizes = 0; i < argc && a->n_sizes < ELEMENTSOF(a->sizes); i++) {
                        char *end;
                        a->sizes[a->n_sizes++] = strtoul(argv[i], &end, 10);
                        if (*end || a->sizes[a->n_sizes - 1] < 1) {
                                fprintf(stderr, "%s: '%s' is not a number of cgroups\n", prog, argv[i]);
                                return 2;
                        }
                }
        return 0;
}

/* as the tests do: the controller enabled at the mount's root for the run, restored after */
int bench_enable_root(const char *mount, const char *ctrl) {
        char p[4096], token[64], line[1024] = "";
        _cleanup_fclose_ FILE *f = NULL;
        bool found = false;

        root_mount = mount;
        root_ctrl = ctrl;
        atexit(bench_restore_root);
        bench_fmt(p, sizeof(p), "%s/cgroup.subtree_control", mount);
        f = fopen(p, "re");
        /* nothing enabled reads as an empty file (cgroup_print_ss_mask() prints no newline) */
        if (!f || (!fgets(line, sizeof(line), f) && ferror(f)))
                bench_die(p);
        for (char *w = strtok(line, " \n"); w; w = strtok(NULL, " \n"))
                found = found || streq(w, ctrl);
        if (found)
                return 0;
        bench_fmt(token, sizeof(token), "+%s", ctrl);
        int r = bench_write_file(p, token);
        if (r < 0) {
                errno = -r;
                fprintf(stderr, "%s: cannot enable %s in %s (does %s/cgroup.controllers offer it?): %m\n",
                        program_invocation_short_name, ctrl, p, mount);
                return r;
        }
        root_added = true;
        return 0;
}

/* the mount's root is left as found: a controller enabled for the run is disabled again */
void bench_restore_root(void) {
        char p[4096], token[64];

        if (!root_added)
                return;
        root_added = false;
        snprintf(p, sizeof(p), "%s/cgroup.subtree_control", root_mount);
        snprintf(token, sizeof(token), "-%s", root_ctrl);
        if (bench_write_file(p, token) < 0)
                fprintf(stderr, "%s: could not disable %s again in %s: %m\n", program_invocation_short_name,
                        root_ctrl, p);
}

Node *bench_make_tree(size_t n, size_t *ret_n) {
        unsigned fanout = (unsigned) ceil(pow((double) n, 0.25));
        Node *nodes = calloc(n, sizeof(Node));
        size_t count = 0;

        if (!nodes)
                bench_die("calloc");
        for (unsigned i = 0; i < fanout && count < n; i++)
                if (asprintf(&nodes[count++].path, "n%u", i) < 0)
                        bench_die("asprintf");
        for (size_t parent = 0; parent < count && count < n; parent++)
                for (unsigned i = 0; i < fanout && count < n; i++) {
                        if (asprintf(&nodes[count++].path, "%s/n%u", nodes[parent].path, i) < 0)
                                bench_die("asprintf");
                        nodes[parent].inner = true;
                }
        *ret_n = count;
        return nodes;
}

void bench_free_tree(Node *nodes, size_t n) {
        for (size_t k = 0; k < n; k++)
                free(nodes[k].path);
        free(nodes);
}

void bench_make_cgroups(const char *scratch, const char *ctrl, const Node *nodes, size_t n) {
        char p[4096], token[64];

        bench_fmt(token, sizeof(token), "+%s", ctrl);
        bench_fmt(p, sizeof(p), "%s/cgroup.subtree_control", scratch);
        if (bench_write_file(p, token) < 0)
                bench_die("write scratch subtree_control");
        for (size_t i = 0; i < n; i++) {
                bench_fmt(p, sizeof(p), "%s/%s", scratch, nodes[i].path);
                if (mkdir(p, 0755) < 0)
                        bench_die(p);
        }
        for (size_t i = 0; i < n; i++) {
                if (!nodes[i].inner)
                        continue;
                bench_fmt(p, sizeof(p), "%s/%s/cgroup.subtree_control", scratch, nodes[i].path);
                if (bench_write_file(p, token) < 0)
                        bench_die(p);
        }
}

/* nr_dying_descendants of @scratch's cgroup.stat, or -1 when it cannot be read */
static long dying_descendants(const char *scratch) {
        char p[4096], line[128];
        long n = -1;

        bench_fmt(p, sizeof(p), "%s/cgroup.stat", scratch);
        FILE *f = fopen(p, "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "nr_dying_descendants %ld", &n) == 1)
                        break;
        fclose(f);
        return n;
}

void bench_settle_cgroups(const char *scratch) {
        /* A removed cgroup is freed by kernel workers after rmdir returns (css offline, RCU); left running,
         * they would take CPU from whichever side of the comparison is timed next. */
        for (unsigned i = 0; i < 3000; i++) {
                long n = dying_descendants(scratch);
                if (n <= 0)
                        return;
                usleep(10 * 1000);
        }
        fprintf(stderr, "bench: %s still has dying cgroups after 30 s; timing anyway\n", scratch);
}

void bench_remove_cgroups(const char *scratch, const Node *nodes, size_t n, const char *ctrl) {
        char p[4096], token[64];

        for (size_t i = n; i-- > 0;) {
                bench_fmt(p, sizeof(p), "%s/%s", scratch, nodes[i].path);
                if (rmdir(p) < 0 && errno != ENOENT)
                        bench_die(p);
        }
        bench_fmt(p, sizeof(p), "%s/cgroup.subtree_control", scratch);
        bench_fmt(token, sizeof(token), "-%s", ctrl);
        (void) bench_write_file(p, token);
        bench_settle_cgroups(scratch);
}

void bench_write_config(const char *conf, const char *backend, const char *ctrl, const Node *nodes, size_t n) {
        FILE *f = fopen(conf, "we");
        if (!f)
                bench_die(conf);
        fprintf(f, "[daemon]\nbackend = %s\n\n[cgroup]\npath = /\nsubtree-control = +%s\n", backend, ctrl);
        for (size_t k = 0; k < n; k++) {
                fprintf(f, "\n[cgroup]\npath = /%s\n", nodes[k].path);
                if (nodes[k].inner)
                        fprintf(f, "subtree-control = +%s\n", ctrl);
        }
        if (fclose(f) != 0)
                bench_die(conf);
}
