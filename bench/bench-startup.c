/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgbypassd's start-up over an existing hierarchy on the host's cgroup2
 * (emulated backend): exec to READY=1 on a notify socket, as systemd waits
 * for Type=notify, on a private session bus; VmRSS at READY=1.
 *
 * cold: no state directory (first start: the scan, the plan, the first
 * save); warm: a restart over the state the cold start left.
 *
 * The baseline: a bare C loop reading the files the start-up scan reads,
 * cgroup by cgroup (see read_loop()).
 *
 * usage: bench-startup CGBYPASSD [--mount DIR] [--controller NAME] [--runs R] [N...]
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "cgbypass/macro.h"

#define MAX_RUNS 9

static const char *root_mount, *root_ctrl;
static bool root_added;
static pid_t bus_pid;

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
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

static void at_exit(void) {
        char p[4096], token[64];

        if (bus_pid > 0)
                (void) kill(bus_pid, SIGTERM);
        if (!root_added)
                return;
        snprintf(p, sizeof(p), "%s/cgroup.subtree_control", root_mount);
        snprintf(token, sizeof(token), "-%s", root_ctrl);
        if (write_file(p, token) < 0)
                fprintf(stderr, "bench-startup: could not disable %s again in %s: %m\n", root_ctrl, p);
}

_Noreturn static void die(const char *what) {
        fprintf(stderr, "bench-startup: %s: %m\n", what);
        exit(EXIT_FAILURE);
}

static void pathf(char *buf, size_t size, const char *a, const char *b) {
        if ((size_t) snprintf(buf, size, "%s/%s", a, b) >= size) {
                errno = ENAMETOOLONG;
                die(a);
        }
}

/* N cgroups, fan-out for depth 4, breadth first; @inner: has children */
static char **make_tree(size_t n, bool **ret_inner) {
        unsigned fanout = (unsigned) ceil(pow((double) n, 0.25));
        char **v = calloc(n, sizeof(char *));
        bool *inner = calloc(n, sizeof(bool));
        size_t count = 0;

        if (!v || !inner)
                die("calloc");
        for (unsigned i = 0; i < fanout && count < n; i++)
                if (asprintf(&v[count++], "n%u", i) < 0)
                        die("asprintf");
        for (size_t parent = 0; parent < count && count < n; parent++)
                for (unsigned i = 0; i < fanout && count < n; i++) {
                        if (asprintf(&v[count++], "%s/n%u", v[parent], i) < 0)
                                die("asprintf");
                        inner[parent] = true;
                }
        *ret_inner = inner;
        return v;
}

static size_t slurp(int dfd, const char *name) {
        char buf[4096];
        size_t total = 0;
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        ssize_t n;

        if (fd < 0)
                die(name);
        /* as lean as the daemon's reader: a short read is the end on kernfs (cgfs_read_kernfs()) */
        while ((n = read(fd, buf, sizeof(buf))) > 0) {
                total += (size_t) n;
                if ((size_t) n < sizeof(buf) / 2)
                        break;
        }
        close(fd);
        return total;
}

/*
 * The baseline, parents first, nothing kept but the paths still to visit.
 * What the scan reads of this tree (no process in it, plain domains; see
 * read_cgroup_below() in src/lib/backend/kernel-scan.c): every cgroup's
 * subtree_control and two limits and its subdirectories (one getdents64(2)
 * where they fit, as kernfs fills the buffer), cgroup.type where it has
 * children; the top also its controllers, procs and events.
 */
static double read_loop(const char *top, size_t *ret_n) {
        static const char *const always[] = { "cgroup.subtree_control", "cgroup.max.depth",
                                              "cgroup.max.descendants" };
        static const char *const at_top[] = { "cgroup.controllers", "cgroup.type", "cgroup.procs",
                                              "cgroup.events" };
        size_t cap = 1024, head = 0, tail = 0, bytes = 0;
        char **queue = malloc(cap * sizeof(char *));
        double t0 = now();

        if (!queue || !(queue[tail++] = strdup(top)))
                die("malloc");
        while (head < tail) {
                char *dir = queue[head++];
                char ents[16384];
                int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                size_t before = tail;
                ssize_t got;

                if (dfd < 0)
                        die(dir);
                while ((got = getdents64(dfd, ents, sizeof(ents))) > 0) {
                        for (ssize_t off = 0; off < got;) {
                                struct dirent64 *de = (struct dirent64 *) (ents + off);
                                off += de->d_reclen;
                                if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                                        continue;
                                if (tail == cap && !(queue = reallocarray(queue, cap *= 2, sizeof(char *))))
                                        die("reallocarray");
                                if (asprintf(&queue[tail++], "%s/%s", dir, de->d_name) < 0)
                                        die("asprintf");
                        }
                        if ((size_t) got + 280 <= sizeof(ents))
                                break;
                }
                for (size_t i = 0; i < ELEMENTSOF(always); i++)
                        bytes += slurp(dfd, always[i]);
                if (head == 1)
                        for (size_t i = 0; i < ELEMENTSOF(at_top); i++)
                                bytes += slurp(dfd, at_top[i]);
                else if (tail > before)
                        bytes += slurp(dfd, "cgroup.type");
                close(dfd);
                free(dir);
        }
        free(queue);
        *ret_n = tail;
        (void) bytes;
        return now() - t0;
}

static long status_kb(pid_t pid, const char *key) {
        char p[64], line[256];
        long v = -1;

        snprintf(p, sizeof(p), "/proc/%d/status", (int) pid);
        FILE *f = fopen(p, "re");
        while (f && fgets(line, sizeof(line), f))
                if (startswith(line, key) && line[strlen(key)] == ':')
                        v = strtol(line + strlen(key) + 1, NULL, 10);
        if (f)
                fclose(f);
        return v;
}

/* one start: seconds from exec to READY=1, and VmRSS (kB) then */
static double start_once(char *const argv[], const char *sock, long *ret_rss) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        double t0, t1 = 0;
        int fd, st;
        pid_t pid;

        if (strlen(sock) >= sizeof(sa.sun_path))
                die(sock);
        strcpy(sa.sun_path, sock);
        (void) unlink(sock);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                die("notify socket");
        t0 = now();
        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);
                if (null >= 0) {
                        dup2(null, STDOUT_FILENO);
                        dup2(null, STDERR_FILENO);
                }
                setenv("NOTIFY_SOCKET", sock, 1);
                execv(argv[0], argv);
                _exit(127);
        }
        while (!t1) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                char buf[4096];

                if (poll(&p, 1, 250) < 0 && errno != EINTR)
                        die("poll");
                if (waitpid(pid, &st, WNOHANG) == pid) {
                        fprintf(stderr, "bench-startup: %s exited before READY=1 (status %d); run it by hand\n",
                                argv[0], st);
                        exit(EXIT_FAILURE);
                }
                if (now() - t0 > 600) {
                        errno = ETIMEDOUT;
                        die("READY=1");
                }
                ssize_t n = (p.revents & POLLIN) ? recv(fd, buf, sizeof(buf) - 1, 0) : 0;
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                if (startswith(buf, "READY=1") || strstr(buf, "\nREADY=1"))
                        t1 = now();
        }
        *ret_rss = status_kb(pid, "VmRSS");
        (void) kill(pid, SIGTERM);
        (void) waitpid(pid, &st, 0);
        close(fd);
        (void) unlink(sock);
        return t1 - t0;
}

static void start_bus(const char *tmp) {
        char cmd[4096], addr[1024];
        long pid;

        snprintf(cmd, sizeof(cmd), "dbus-daemon --session --fork --print-address=1 --print-pid=1 "
                 "--address=unix:path=%s/bus", tmp);
        FILE *f = popen(cmd, "re");
        if (!f || !fgets(addr, sizeof(addr), f) || fscanf(f, "%ld", &pid) != 1)
                die("dbus-daemon");
        pclose(f);
        addr[strcspn(addr, "\n")] = '\0';
        bus_pid = (pid_t) pid;
        setenv("DBUS_SESSION_BUS_ADDRESS", addr, 1);
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n) {
        qsort(v, n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
                fprintf(stderr, "bench-startup: cannot remove %s: %m\n", path);
        return 0;
}

static void rm_rf(const char *path) {
        (void) nftw(path, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
}

int main(int argc, char *argv[]) {
        const char *mount = "/sys/fs/cgroup/unified", *ctrl = "hugetlb", *daemon;
        size_t sizes[4] = { 10000, 100000 }, n_sizes = 2;
        char tmp[] = "/tmp/cgb-bench-startup-XXXXXX", scratch[4096], p[4096], token[64];
        unsigned runs = 3;
        int i = 1;

        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h")) {
                printf("usage: bench-startup CGBYPASSD [--mount DIR] [--controller NAME] [--runs R] [N...]\n\n"
                       "Times cgbypassd's start-up (exec to READY=1, emulated backend, private session bus)\n"
                       "over a tree of N cgroups (default 10000 100000) in a scratch cgroup below DIR\n"
                       "(default %s), without state (cold) and over its own state (warm), R runs\n"
                       "(default 3), medians, against a bare C loop reading the files the scan reads.\n"
                       "VmRSS at READY=1. Needs root. Ends with one 'figure:' line per figure.\n", mount);
                return argc < 2 ? 2 : 0;
        }
        daemon = argv[i++];
        for (; i < argc && startswith(argv[i], "--"); i++) {
                if (streq(argv[i], "--mount") && i + 1 < argc)
                        mount = argv[++i];
                else if (streq(argv[i], "--controller") && i + 1 < argc)
                        ctrl = argv[++i];
                else if (streq(argv[i], "--runs") && i + 1 < argc) {
                        runs = (unsigned) strtoul(argv[++i], NULL, 10);
                        if (runs < 1 || runs > MAX_RUNS) {
                                fprintf(stderr, "bench-startup: --runs takes 1 to %d\n", MAX_RUNS);
                                return 2;
                        }
                } else {
                        fprintf(stderr, "bench-startup: unknown or incomplete option '%s'; see --help\n", argv[i]);
                        return 2;
                }
        }
        if (i < argc)
                for (n_sizes = 0; i < argc && n_sizes < ELEMENTSOF(sizes); i++) {
                        char *end;
                        sizes[n_sizes++] = strtoul(argv[i], &end, 10);
                        if (*end || sizes[n_sizes - 1] < 1) {
                                fprintf(stderr, "bench-startup: '%s' is not a number of cgroups\n", argv[i]);
                                return 2;
                        }
                }

        if (!mkdtemp(tmp))
                die("mkdtemp");
        root_mount = mount;
        root_ctrl = ctrl;
        atexit(at_exit);
        /* as the tests do: enable the controller at the mount's root for the run, restore it after */
        pathf(p, sizeof(p), mount, "cgroup.subtree_control");
        {
                FILE *f = fopen(p, "re");
                char line[1024] = "";
                bool found = false;

                if (!f || !fgets(line, sizeof(line), f))
                        die(p);
                fclose(f);
                for (char *w = strtok(line, " \n"); w; w = strtok(NULL, " \n"))
                        found = found || streq(w, ctrl);
                snprintf(token, sizeof(token), "+%s", ctrl);
                if (!found) {
                        if (write_file(p, token) < 0)
                                die("enable the controller at the mount's root");
                        root_added = true;
                }
        }
        snprintf(scratch, sizeof(scratch), "%s/cgb-startup-%d", mount, (int) getpid());
        if (mkdir(scratch, 0755) < 0)
                die(scratch);
        start_bus(tmp);

        printf("bench-startup: %s, emulated backend, controller %s, depth 4, %u run(s), medians\n", mount, ctrl,
               runs);
        printf("%8s %10s %10s %10s %8s %10s %10s\n", "cgroups", "read loop", "cold", "warm", "cold/", "RSS cold",
               "RSS warm");
        for (size_t s = 0; s < n_sizes; s++) {
                bool *inner;
                char **nodes = make_tree(sizes[s], &inner);
                size_t n = sizes[s], seen;
                char conf[4096], state[4096], sock[4096];
                double base[MAX_RUNS], cold[MAX_RUNS], warm[MAX_RUNS], rc[MAX_RUNS], rw[MAX_RUNS];

                pathf(p, sizeof(p), scratch, "cgroup.subtree_control");
                if (write_file(p, token) < 0)
                        die(p);
                for (size_t k = 0; k < n; k++) {
                        pathf(p, sizeof(p), scratch, nodes[k]);
                        if (mkdir(p, 0755) < 0)
                                die(p);
                }
                snprintf(conf, sizeof(conf), "%s/c%zu.conf", tmp, n);
                FILE *f = fopen(conf, "we");
                if (!f)
                        die(conf);
                fprintf(f, "[daemon]\nbackend = emulated\n\n[cgroup]\npath = /\nsubtree-control = +%s\n", ctrl);
                for (size_t k = 0; k < n; k++) {
                        fprintf(f, "\n[cgroup]\npath = /%s\n", nodes[k]);
                        if (inner[k]) {
                                fprintf(f, "subtree-control = +%s\n", ctrl);
                                char sc[4096];
                                pathf(sc, sizeof(sc), scratch, nodes[k]);
                                pathf(p, sizeof(p), sc, "cgroup.subtree_control");
                                if (write_file(p, token) < 0)
                                        die(p);
                        }
                }
                if (fclose(f) != 0)
                        die(conf);
                snprintf(state, sizeof(state), "%s/state-%zu", tmp, n);
                snprintf(sock, sizeof(sock), "%s/notify", tmp);
                char *dargv[] = { (char *) daemon, "--config", conf, "--config-dir", "/nonexistent", "--cgroup-root",
                                  scratch, "--state-directory", state, "--bus", "session", NULL };

                for (unsigned k = 0; k < runs; k++) {
                        long rss_c, rss_w;

                        base[k] = read_loop(scratch, &seen);
                        rm_rf(state);
                        cold[k] = start_once(dargv, sock, &rss_c);
                        warm[k] = start_once(dargv, sock, &rss_w);
                        rc[k] = (double) rss_c;
                        rw[k] = (double) rss_w;
                }
                double b = median(base, runs), c = median(cold, runs), w = median(warm, runs);
                double mrc = median(rc, runs), mrw = median(rw, runs);
                printf("%8zu %8.3f s %8.3f s %8.3f s %7.2fx %7.0f kB %7.0f kB\n", seen, b, c, w, c / b, mrc, mrw);
                printf("figure: start-up cold / read loop, %zu cgroups = %.2f (target: <= 2.00) %s\n", seen, c / b,
                       c / b <= 2 ? "ok" : "MISSED");
                printf("figure: start-up warm / read loop, %zu cgroups = %.2f (target: none, for reference) ok\n",
                       seen, w / b);
                printf("figure: RSS cold / warm, %zu cgroups = %.2f (target: <= 1.20) %s\n", seen, mrc / mrw,
                       mrc / mrw <= 1.2 ? "ok" : "MISSED");
                printf("figure: RSS at READY=1, cold, %zu cgroups = %.0f kB (target: none, stated) ok\n", seen, mrc);

                for (size_t k = n; k-- > 0;) {
                        pathf(p, sizeof(p), scratch, nodes[k]);
                        if (rmdir(p) < 0)
                                die(p);
                        free(nodes[k]);
                }
                free(nodes);
                free(inner);
                pathf(p, sizeof(p), scratch, "cgroup.subtree_control");
                token[0] = '-';
                (void) write_file(p, token);
                token[0] = '+';
        }
        if (rmdir(scratch) < 0)
                fprintf(stderr, "bench-startup: cannot remove %s: %m\n", scratch);
        rm_rf(tmp);
        return 0;
}
