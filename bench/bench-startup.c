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
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "bench-util.h"

#define MAX_RUNS 9

static pid_t bus_pid;

static void stop_bus(void) {
        if (bus_pid > 0)
                (void) kill(bus_pid, SIGTERM);
}

static size_t slurp(int dfd, const char *name) {
        char buf[4096];
        size_t total = 0;
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        ssize_t n;

        if (fd < 0)
                bench_die(name);
        /* as lean as the daemon's reader: a short read is the end on kernfs (cgfs_read_kernfs()) */
        while ((n = read(fd, buf, sizeof(buf))) > 0) {
                total += (size_t) n;
                if ((size_t) n < sizeof(buf) / 2)
                        break;
        }
        close(fd);
        return total;
}

/* cgroup.stat's nr_descendants */
static unsigned long nr_descendants(int dfd) {
        char buf[512];
        int fd = openat(dfd, "cgroup.stat", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        ssize_t n;

        if (fd < 0)
                bench_die("cgroup.stat");
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n < 0)
                bench_die("cgroup.stat");
        buf[n] = '\0';
        const char *p = strstr(buf, "nr_descendants ");
        return p ? strtoul(p + strlen("nr_descendants "), NULL, 10) : ULONG_MAX;
}

/*
 * The baseline, parents first, nothing kept but the paths still to visit.
 * What the scan reads of this tree (no process in it, plain domains; see
 * read_cgroup_below() in src/lib/backend/kernel-scan.c), in one thread:
 * - a cgroup with children: its subdirectories (one getdents64(2) where they
 *   fit, as kernfs fills the buffer), subtree_control, cgroup.type, and
 *   cgroup.stat (whose nr_descendants, when it is the number of children,
 *   says that none of them has a child);
 * - a cgroup without: the same but the type and stat;
 * - a cgroup known to be childless: only subtree_control, by its path;
 * - the top also its controllers, procs, events and the two limits (below
 *   the top they are read when a mkdir needs them).
 */
static double read_loop(const char *top, size_t *ret_n) {
        static const char *const inner[] = { "cgroup.type" };
        static const char *const at_top[] = { "cgroup.controllers", "cgroup.procs", "cgroup.events",
                                              "cgroup.max.depth", "cgroup.max.descendants" };
        size_t cap = 1024, head = 0, tail = 0, bytes = 0;
        char **queue = malloc(cap * sizeof(char *));
        bool *childless = malloc(cap * sizeof(bool));
        double t0 = bench_now();

        if (!queue || !childless || !(queue[tail++] = strdup(top)))
                bench_die("malloc");
        childless[0] = false;
        while (head < tail) {
                char *dir = queue[head];
                char ents[16384];
                size_t before = tail;
                ssize_t got;

                if (childless[head++]) {
                        char p[4096];
                        bench_fmt(p, sizeof(p), "%s/cgroup.subtree_control", dir);
                        bytes += slurp(AT_FDCWD, p);
                        free(dir);
                        continue;
                }
                int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0)
                        bench_die(dir);
                while ((got = getdents64(dfd, ents, sizeof(ents))) > 0) {
                        for (ssize_t off = 0; off < got;) {
                                struct dirent64 *de = (struct dirent64 *) (ents + off);
                                off += de->d_reclen;
                                if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                                        continue;
                                if (tail == cap && (!(queue = reallocarray(queue, cap * 2, sizeof(char *))) ||
                                                    !(childless = reallocarray(childless, cap *= 2, sizeof(bool)))))
                                        bench_die("reallocarray");
                                if (asprintf(&queue[tail++], "%s/%s", dir, de->d_name) < 0)
                                        bench_die("asprintf");
                        }
                        if ((size_t) got + 280 <= sizeof(ents))
                                break;
                }
                bytes += slurp(dfd, "cgroup.subtree_control");
                if (head == 1)
                        for (size_t i = 0; i < ELEMENTSOF(at_top); i++)
                                bytes += slurp(dfd, at_top[i]);
                if (tail > before || head == 1)
                        for (size_t i = 0; i < ELEMENTSOF(inner); i++)
                                bytes += slurp(dfd, inner[i]);
                bool leaves = tail > before && head > 1 && nr_descendants(dfd) == tail - before;
                for (size_t k = before; k < tail; k++)
                        childless[k] = leaves;
                close(dfd);
                free(dir);
        }
        free(queue);
        free(childless);
        *ret_n = tail;
        (void) bytes;
        return bench_now() - t0;
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
                bench_die(sock);
        strcpy(sa.sun_path, sock);
        (void) unlink(sock);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                bench_die("notify socket");
        t0 = bench_now();
        pid = fork();
        if (pid < 0)
                bench_die("fork");
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
                        bench_die("poll");
                if (waitpid(pid, &st, WNOHANG) == pid) {
                        fprintf(stderr, "bench-startup: %s exited before READY=1 (status %d); run it by hand\n",
                                argv[0], st);
                        exit(EXIT_FAILURE);
                }
                if (bench_now() - t0 > 600) {
                        errno = ETIMEDOUT;
                        bench_die("READY=1");
                }
                ssize_t n = (p.revents & POLLIN) ? recv(fd, buf, sizeof(buf) - 1, 0) : 0;
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                if (startswith(buf, "READY=1") || strstr(buf, "\nREADY=1"))
                        t1 = bench_now();
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
                bench_die("dbus-daemon");
        pclose(f);
        addr[strcspn(addr, "\n")] = '\0';
        bus_pid = (pid_t) pid;
        setenv("DBUS_SESSION_BUS_ADDRESS", addr, 1);
}

int main(int argc, char *argv[]) {
        BenchArgs args = { .mount = "/sys/fs/cgroup/unified", .ctrl = "hugetlb", .rounds = 3,
                           .sizes = { 10000, 100000 }, .n_sizes = 2 };
        char tmp[] = "/tmp/cgb-bench-startup-XXXXXX", scratch[4096];

        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h")) {
                printf("usage: bench-startup CGBYPASSD [--mount DIR] [--controller NAME] [--runs R] [N...]\n\n"
                       "Times cgbypassd's start-up (exec to READY=1, emulated backend, private session bus)\n"
                       "over a tree of N cgroups (default 10000 100000) in a scratch cgroup below DIR\n"
                       "(default %s), without state (cold) and over its own state (warm), R runs\n"
                       "(default 3), medians, against a bare C loop reading the files the scan reads.\n"
                       "VmRSS at READY=1. Needs root. Ends with one 'figure:' line per figure.\n", args.mount);
                return argc < 2 ? 2 : 0;
        }
        int ret = bench_parse_args(argc, argv, &args, "--runs", MAX_RUNS, false);
        if (ret > 0)
                return ret;
        const char *mount = args.mount, *ctrl = args.ctrl, *daemon = args.daemon;
        unsigned runs = args.rounds;

        if (!mkdtemp(tmp))
                bench_die("mkdtemp");
        atexit(stop_bus);
        if (bench_enable_root(mount, ctrl) < 0)
                exit(EXIT_FAILURE);
        bench_fmt(scratch, sizeof(scratch), "%s/cgb-startup-%d", mount, (int) getpid());
        if (mkdir(scratch, 0755) < 0)
                bench_die(scratch);
        start_bus(tmp);

        printf("bench-startup: %s, emulated backend, controller %s, depth 4, %u run(s), medians\n", mount, ctrl,
               runs);
        printf("%8s %10s %10s %10s %8s %10s %10s\n", "cgroups", "read loop", "cold", "warm", "cold/", "RSS cold",
               "RSS warm");
        for (size_t s = 0; s < args.n_sizes; s++) {
                size_t n, seen = 0;
                Node *nodes = bench_make_tree(args.sizes[s], &n);
                char conf[4096], state[4096], sock[4096];
                double base[MAX_RUNS], cold[MAX_RUNS], warm[MAX_RUNS], rc[MAX_RUNS], rw[MAX_RUNS];

                bench_make_cgroups(scratch, ctrl, nodes, n);
                snprintf(conf, sizeof(conf), "%s/c%zu.conf", tmp, n);
                bench_write_config(conf, "emulated", ctrl, nodes, n);
                snprintf(state, sizeof(state), "%s/state-%zu", tmp, n);
                snprintf(sock, sizeof(sock), "%s/notify", tmp);
                char *dargv[] = { (char *) daemon, "--config", conf, "--config-dir", "/nonexistent", "--cgroup-root",
                                  scratch, "--state-directory", state, "--bus", "session", NULL };

                for (unsigned k = 0; k < runs; k++) {
                        long rss_c, rss_w;

                        base[k] = read_loop(scratch, &seen);
                        bench_rm_rf(state);
                        cold[k] = start_once(dargv, sock, &rss_c);
                        warm[k] = start_once(dargv, sock, &rss_w);
                        rc[k] = (double) rss_c;
                        rw[k] = (double) rss_w;
                }
                double b = bench_median(base, runs), c = bench_median(cold, runs), w = bench_median(warm, runs);
                double mrc = bench_median(rc, runs), mrw = bench_median(rw, runs);
                printf("%8zu %8.3f s %8.3f s %8.3f s %7.2fx %7.0f kB %7.0f kB\n", seen, b, c, w, c / b, mrc, mrw);
                printf("figure: start-up cold / read loop, %zu cgroups = %.2f (target: <= 2.00) %s\n", seen, c / b,
                       c / b <= 2 ? "ok" : "MISSED");
                printf("figure: start-up warm / read loop, %zu cgroups = %.2f (target: none, for reference) ok\n",
                       seen, w / b);
                printf("figure: RSS cold / warm, %zu cgroups = %.2f (target: <= 1.20) %s\n", seen, mrc / mrw,
                       mrc / mrw <= 1.2 ? "ok" : "MISSED");
                printf("figure: RSS at READY=1, cold, %zu cgroups = %.0f kB (target: none, stated) ok\n", seen, mrc);

                bench_remove_cgroups(scratch, nodes, n, ctrl);
                bench_free_tree(nodes, n);
        }
        if (rmdir(scratch) < 0)
                fprintf(stderr, "bench-startup: cannot remove %s: %m\n", scratch);
        bench_rm_rf(tmp);
        return 0;
}
