/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Applying a configuration on this machine's real cgroup2: cgbypassd
 * --apply-once (emulated backend) against a bare C loop of mkdir(2) and
 * write(2), and against libcgroup's cgconfigparser with the same tree.
 *
 * The tree: about N cgroups, fan-out chosen for depth 4, a "+CONTROLLER"
 * subtree_control write in every inner cgroup. Every run starts from an
 * empty scratch cgroup below the mount; removal is not timed.
 *
 * usage: bench-apply CGBYPASSD [--mount DIR] [--controller NAME] [N...]
 */
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "cgbypass/macro.h"

extern char **environ;

typedef struct Node {
        char *path;             /* relative to the scratch cgroup */
        bool inner;
} Node;

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void die(const char *what) {
        fprintf(stderr, "bench-apply: %s: %m\n", what);
        exit(EXIT_FAILURE);
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

static int write_file(const char *path, const char *value) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t r = write(fd, value, strlen(value));
        int e = errno;
        close(fd);
        return r < 0 ? -e : 0;
}

static void remove_tree(const char *scratch, const Node *nodes, size_t n) {
        char p[4096];
        for (size_t i = n; i-- > 0;) {
                fmt(p, sizeof(p), "%s/%s", scratch, nodes[i].path);
                (void) rmdir(p);
        }
        fmt(p, sizeof(p), "%s/cgroup.subtree_control", scratch);
        (void) write_file(p, "-hugetlb -memory -pids -cpu -io");
}

static double run_bare(const char *scratch, const char *ctrl, const Node *nodes, size_t n) {
        char p[4096], token[64];
        double t0 = now();

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
        return now() - t0;
}

static double run_command(char *const argv[], bool quiet) {
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int status;
        double t0 = now();

        posix_spawn_file_actions_init(&fa);
        if (quiet) {
                posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
                posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        }
        if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
                die(argv[0]);
        posix_spawn_file_actions_destroy(&fa);
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "bench-apply: %s failed (status %d)\n", argv[0], status);
                exit(EXIT_FAILURE);
        }
        return now() - t0;
}

int main(int argc, char *argv[]) {
        const char *mount = "/sys/fs/cgroup/unified", *ctrl = "hugetlb", *daemon;
        size_t sizes[8] = { 1000, 10000 }, n_sizes = 2;
        char scratch[4096], tmp[] = "/tmp/cgb-bench-apply-XXXXXX", p[4096];
        int i = 1;

        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h")) {
                printf("usage: bench-apply CGBYPASSD [--mount DIR] [--controller NAME] [N...]\n"
                       "Times cgbypassd --apply-once (emulated backend), a bare loop of mkdir and write,\n"
                       "and cgconfigparser, each building the same tree of N cgroups (default 1000\n"
                       "and 10000) in a scratch cgroup below DIR (default %s). Needs root.\n", mount);
                return argc < 2 ? 2 : 0;
        }
        daemon = argv[i++];
        if (i < argc && streq(argv[i], "--mount") && i + 1 < argc) {
                mount = argv[i + 1];
                i += 2;
        }
        if (i < argc && streq(argv[i], "--controller") && i + 1 < argc) {
                ctrl = argv[i + 1];
                i += 2;
        }
        if (i < argc)
                for (n_sizes = 0; i < argc && n_sizes < ELEMENTSOF(sizes); i++)
                        sizes[n_sizes++] = strtoul(argv[i], NULL, 10);

        fmt(scratch, sizeof(scratch), "%s/cgb-bench-%d", mount, (int) getpid());
        if (mkdir(scratch, 0755) < 0)
                die(scratch);
        if (!mkdtemp(tmp))
                die("mkdtemp");
        bool have_cgconfig = access("/usr/sbin/cgconfigparser", X_OK) == 0;

        printf("bench-apply: %s, controller %s, tree depth 4, one subtree_control write per inner cgroup\n",
               mount, ctrl);
        printf("%7s %12s %12s %12s %14s %8s %8s\n", "cgroups", "bare loop", "cgbypassd", "re-apply",
               "cgconfigparser", "ratio", "cgconf/");
        for (size_t s = 0; s < n_sizes; s++) {
                size_t n;
                Node *nodes = make_tree(sizes[s], &n);
                char conf[4096], state[4096], cgconf[4096];

                double bare = run_bare(scratch, ctrl, nodes, n);
                remove_tree(scratch, nodes, n);

                /* the same tree as cgbypassd configuration */
                fmt(conf, sizeof(conf), "%s/cgbypassd-%zu.conf", tmp, n);
                fmt(state, sizeof(state), "%s/state-%zu", tmp, n);
                FILE *f = fopen(conf, "we");
                if (!f)
                        die(conf);
                fprintf(f, "[daemon]\nbackend = emulated\n\n[cgroup]\npath = /\nsubtree-control = +%s\n", ctrl);
                for (size_t k = 0; k < n; k++) {
                        fprintf(f, "\n[cgroup]\npath = /%s\n", nodes[k].path);
                        if (nodes[k].inner)
                                fprintf(f, "subtree-control = +%s\n", ctrl);
                }
                fclose(f);
                char *dargv[] = { (char *) daemon, "--apply-once", "--config", conf, "--config-dir", "/nonexistent",
                                  "--cgroup-root", scratch, "--state-directory", state, NULL };
                double cold = run_command(dargv, true);
                double again = run_command(dargv, true);
                remove_tree(scratch, nodes, n);

                double cgc = 0;
                if (have_cgconfig) {
                        const char *rel = scratch + strlen(mount) + 1;
                        fmt(cgconf, sizeof(cgconf), "%s/cgconfig-%zu.conf", tmp, n);
                        f = fopen(cgconf, "we");
                        if (!f)
                                die(cgconf);
                        for (size_t k = 0; k < n; k++)
                                fprintf(f, "group %s/%s {\n    %s {\n    }\n}\n", rel, nodes[k].path, ctrl);
                        fclose(f);
                        char *cargv[] = { "/usr/sbin/cgconfigparser", "-l", cgconf, NULL };
                        cgc = run_command(cargv, true);
                        remove_tree(scratch, nodes, n);
                }
                printf("%7zu %10.3f s %10.3f s %10.3f s %12.3f s %7.2fx %7.1fx\n", n, bare, cold, again, cgc,
                       cold / bare, have_cgconfig ? cgc / bare : 0.0);
                for (size_t k = 0; k < n; k++)
                        free(nodes[k].path);
                free(nodes);
        }
        printf("ratio: cgbypassd cold apply / bare loop; cgconf/: cgconfigparser / bare loop\n");
        (void) rmdir(scratch);
        fmt(p, sizeof(p), "rm -rf '%s'", tmp);
        (void) system(p);
        return 0;
}
