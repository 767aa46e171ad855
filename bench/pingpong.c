/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pipe ping-pong: pairs of processes bounce a message over two pipes, every
 * bounce a wakeup and a context switch, so the scheduler's per-level work
 * (one sched_entity and cfs_rq per cpu-enabled cgroup level) dominates.
 * With --pairs > 1 it is a small hackbench. bench/bench-vm-bypass.sh runs it
 * in the VM to compare a deep, a bypassed and a flat cgroup.
 *
 * Standalone on purpose (libc only): it is linked statically for the VM's
 * busybox initramfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PROJECT_VERSION
#define PROJECT_VERSION "(built outside meson)"
#endif

#define PROG "pingpong"
#define MAX_PAIRS 64
#define MAX_SIZE 4096   /* <= PIPE_BUF: one write is one atomic message */

typedef struct Options {
        uint64_t round_trips;
        uint64_t warmup;
        unsigned pairs;
        size_t size;
        int cpu;                /* -1: no pinning */
        const char *cgroup;     /* NULL: stay where started */
} Options;

static pid_t children[2 * MAX_PAIRS];
static unsigned n_children;

static void help(void) {
        printf("Usage: " PROG " [OPTIONS]\n"
               "\n"
               "Pairs of processes bounce a message over two pipes (one round trip: A writes,\n"
               "B reads and writes back, A reads), timed with CLOCK_MONOTONIC from the moment\n"
               "every pair has finished its warm-up until every pair has done its round trips.\n"
               "Process creation, warm-up and exit are outside the timed interval.\n"
               "\n"
               "Options:\n"
               "  -n, --round-trips N  timed round trips per pair (default 100000)\n"
               "  -w, --warmup N       untimed round trips per pair first (default 1000)\n"
               "  -p, --pairs P        pairs bouncing at the same time, 1..%d (default 1)\n"
               "  -s, --size BYTES     message size, 1..%d (default 1)\n"
               "  -c, --cgroup DIR     write our pid to DIR/cgroup.procs before forking, and\n"
               "                       check that every process of every pair is in that cgroup\n"
               "                       (by /proc/PID/cgroup against the end of DIR's real path)\n"
               "  --cpu N              pin every process to CPU N\n"
               "  -h, --help           show this help\n"
               "  --version            show the version\n"
               "\n"
               "Output: one line on standard output,\n"
               "  " PROG ": pairs=P size=S round_trips=N seconds=T us_per_round_trip=U"
               " cgroup=PATH\n"
               "where N counts every pair's round trips, U = T / N * 1e6 and PATH is the\n"
               "cgroup the processes ran in (from /proc/self/cgroup).\n"
               "\n"
               "Exit status: 0 on success, 1 on a failure (one line on standard error),\n"
               "2 on bad usage.\n",
               MAX_PAIRS, MAX_SIZE);
}

static void kill_children(void) {
        for (unsigned i = 0; i < n_children; i++)
                (void) kill(children[i], SIGKILL);
        for (unsigned i = 0; i < n_children; i++)
                (void) waitpid(children[i], NULL, 0);
        n_children = 0;
}

static int fail(const char *fmt, ...) __attribute__((__format__(printf, 1, 2)));
static int fail(const char *fmt, ...) {
        va_list ap;

        fputs(PROG ": ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        kill_children();
        return EXIT_FAILURE;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

static double now(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int read_full(int fd, void *buf, size_t n) {
        size_t done = 0;

        while (done < n) {
                ssize_t k = read(fd, (char *) buf + done, n - done);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return done == 0 ? 0 : -EPIPE;
                done += (size_t) k;
        }
        return 1;
}

static int write_full(int fd, const void *buf, size_t n) {
        size_t done = 0;

        while (done < n) {
                ssize_t k = write(fd, (const char *) buf + done, n - done);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                done += (size_t) k;
        }
        return 0;
}

/* The cgroup2 path of PID ("0::/a/b" in /proc/PID/cgroup), without the newline. */
static int read_cgroup(pid_t pid, char *buf, size_t size) {
        char path[64], line[PATH_MAX + 8];
        FILE *f;
        int r = -ENOENT;

        if (pid == 0)
                snprintf(path, sizeof(path), "/proc/self/cgroup");
        else
                snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long) pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "0::", 3) != 0)
                        continue;
                line[strcspn(line, "\n")] = '\0';
                if (strlen(line + 3) >= size) {
                        r = -ENAMETOOLONG;
                        break;
                }
                strcpy(buf, line + 3);
                r = 0;
                break;
        }
        (void) fclose(f);
        return r;
}

static int join_cgroup(const char *dir) {
        char path[PATH_MAX];
        FILE *f;

        if ((size_t) snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
                return -ENAMETOOLONG;
        f = fopen(path, "we");
        if (!f)
                return -errno;
        /* one write(2) of "0": the kernel moves the writer */
        if (fputs("0", f) == EOF || fflush(f) == EOF) {
                int r = -errno;
                (void) fclose(f);
                return r;
        }
        return fclose(f) == EOF ? -errno : 0;
}

/* Does the real path of DIR end with the cgroup2 path CG (as the mount point + CG would)? */
static bool dir_is_cgroup(const char *dir, const char *cg) {
        char real[PATH_MAX];
        size_t lr, lc = strlen(cg);

        if (!realpath(dir, real))
                return false;
        if (strcmp(cg, "/") == 0)
                return true;    /* the root: any mount point */
        /* cg starts with '/', so a suffix match is a whole-component match */
        lr = strlen(real);
        return lr >= lc && strcmp(real + lr - lc, cg) == 0;
}

/* B: echo every message until A closes its end. */
static void run_echo(int in, int out, size_t size) {
        char buf[MAX_SIZE];

        for (;;) {
                int r = read_full(in, buf, size);
                if (r == 0)
                        _exit(EXIT_SUCCESS);
                if (r < 0 || write_full(out, buf, size) < 0)
                        _exit(EXIT_FAILURE);
        }
}

static int bounce(int out, int in, char *buf, size_t size, uint64_t n) {
        for (uint64_t i = 0; i < n; i++) {
                if (write_full(out, buf, size) < 0 || read_full(in, buf, size) != 1)
                        return -EPIPE;
        }
        return 0;
}

/* A: warm up, report ready, wait for the start (EOF), bounce, report done. */
static void run_initiator(int out, int in, int ready, int start, int done, const Options *o) {
        char buf[MAX_SIZE], c = 0;

        memset(buf, 'x', o->size);
        if (bounce(out, in, buf, o->size, o->warmup) < 0)
                _exit(EXIT_FAILURE);
        if (write_full(ready, "r", 1) < 0)
                _exit(EXIT_FAILURE);
        (void) close(ready);
        if (read(start, &c, 1) != 0)
                _exit(EXIT_FAILURE);
        if (bounce(out, in, buf, o->size, o->round_trips) < 0)
                _exit(EXIT_FAILURE);
        if (write_full(done, "d", 1) < 0)
                _exit(EXIT_FAILURE);
        _exit(EXIT_SUCCESS);
}

static int parse_argv(int argc, char *argv[], Options *o) {
        enum { ARG_CPU = 0x100, ARG_VERSION };
        static const struct option options[] = {
                { "round-trips", required_argument, NULL, 'n' },
                { "warmup",      required_argument, NULL, 'w' },
                { "pairs",       required_argument, NULL, 'p' },
                { "size",        required_argument, NULL, 's' },
                { "cgroup",      required_argument, NULL, 'c' },
                { "cpu",         required_argument, NULL, ARG_CPU },
                { "help",        no_argument,       NULL, 'h' },
                { "version",     no_argument,       NULL, ARG_VERSION },
                {}
        };
        uint64_t v;
        int c;

        while ((c = getopt_long(argc, argv, "n:w:p:s:c:h", options, NULL)) >= 0) {
                switch (c) {
                case 'n':
                        if (parse_u64(optarg, 1, UINT64_MAX / MAX_PAIRS, &o->round_trips) < 0)
                                goto bad;
                        break;
                case 'w':
                        if (parse_u64(optarg, 0, UINT64_MAX, &o->warmup) < 0)
                                goto bad;
                        break;
                case 'p':
                        if (parse_u64(optarg, 1, MAX_PAIRS, &v) < 0)
                                goto bad;
                        o->pairs = (unsigned) v;
                        break;
                case 's':
                        if (parse_u64(optarg, 1, MAX_SIZE, &v) < 0)
                                goto bad;
                        o->size = (size_t) v;
                        break;
                case 'c':
                        o->cgroup = optarg;
                        break;
                case ARG_CPU:
                        if (parse_u64(optarg, 0, CPU_SETSIZE - 1, &v) < 0)
                                goto bad;
                        o->cpu = (int) v;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        puts(PROG " " PROJECT_VERSION);
                        return 0;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, PROG ": unexpected argument '%s' (try --help)\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
bad:
        for (const struct option *i = options; i->name; i++)
                if (i->val == c)
                        fprintf(stderr, PROG ": bad value '%s' for --%s (try --help)\n",
                                optarg, i->name);
        return -EINVAL;
}

int main(int argc, char *argv[]) {
        Options o = { .round_trips = 100000, .warmup = 1000, .pairs = 1, .size = 1, .cpu = -1 };
        int ready[2], start[2], done[2];
        char cg[PATH_MAX], other[PATH_MAX], c;
        double t0, t1, seconds;
        uint64_t total;
        unsigned got;
        int r;

        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? 2 : EXIT_SUCCESS;

        if (o.cpu >= 0) {
                cpu_set_t set;

                CPU_ZERO(&set);
                CPU_SET(o.cpu, &set);
                if (sched_setaffinity(0, sizeof(set), &set) < 0)
                        return fail("Failed to pin to CPU %d: %s", o.cpu, strerror(errno));
        }
        if (o.cgroup) {
                r = join_cgroup(o.cgroup);
                if (r < 0)
                        return fail("Failed to move into '%s': %s", o.cgroup, strerror(-r));
        }
        r = read_cgroup(0, cg, sizeof(cg));
        if (r < 0)
                return fail("Failed to read /proc/self/cgroup: %s", strerror(-r));
        if (o.cgroup && !dir_is_cgroup(o.cgroup, cg))
                return fail("Moved into '%s' but /proc/self/cgroup says '%s'", o.cgroup, cg);

        if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(start, O_CLOEXEC) < 0 ||
            pipe2(done, O_CLOEXEC) < 0)
                return fail("Failed to create pipes: %s", strerror(errno));

        /* Flush before fork: children leave with _exit() and must not repeat our buffers. */
        (void) fflush(NULL);
        for (unsigned i = 0; i < o.pairs; i++) {
                int a2b[2], b2a[2];
                pid_t a, b;

                if (pipe2(a2b, O_CLOEXEC) < 0 || pipe2(b2a, O_CLOEXEC) < 0)
                        return fail("Failed to create pipes: %s", strerror(errno));
                b = fork();
                if (b < 0)
                        return fail("Failed to fork: %s", strerror(errno));
                if (b == 0) {
                        (void) close(a2b[1]);
                        (void) close(b2a[0]);
                        (void) close(ready[1]);
                        (void) close(start[1]);
                        (void) close(done[1]);
                        run_echo(a2b[0], b2a[1], o.size);
                }
                children[n_children++] = b;
                a = fork();
                if (a < 0)
                        return fail("Failed to fork: %s", strerror(errno));
                if (a == 0) {
                        (void) close(a2b[0]);
                        (void) close(b2a[1]);
                        (void) close(start[1]);
                        run_initiator(a2b[1], b2a[0], ready[1], start[0], done[1], &o);
                }
                children[n_children++] = a;
                (void) close(a2b[0]);
                (void) close(a2b[1]);
                (void) close(b2a[0]);
                (void) close(b2a[1]);
        }
        /* Only the initiators hold these write ends now: EOF means they all wrote or died. */
        (void) close(ready[1]);
        (void) close(done[1]);
        (void) close(start[0]);

        for (got = 0; got < o.pairs; got++) {
                r = read_full(ready[0], &c, 1);
                if (r != 1)
                        return fail("A pair failed during its warm-up");
        }
        for (unsigned i = 0; i < n_children; i++) {
                r = read_cgroup(children[i], other, sizeof(other));
                if (r < 0)
                        return fail("Failed to read /proc/%ld/cgroup: %s",
                                    (long) children[i], strerror(-r));
                if (strcmp(other, cg) != 0)
                        return fail("Process %ld is in '%s', not in '%s'",
                                    (long) children[i], other, cg);
        }

        t0 = now();
        (void) close(start[1]);
        for (got = 0; got < o.pairs; got++) {
                r = read_full(done[0], &c, 1);
                if (r != 1)
                        return fail("A pair failed during the timed round trips");
        }
        t1 = now();

        r = 0;
        for (unsigned i = 0; i < n_children; i++) {
                int status;

                if (waitpid(children[i], &status, 0) < 0 ||
                    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        r = -ECHILD;
        }
        n_children = 0;
        if (r < 0)
                return fail("A process of a pair did not exit cleanly");

        seconds = t1 - t0;
        total = o.round_trips * o.pairs;
        printf(PROG ": pairs=%u size=%zu round_trips=%" PRIu64 " seconds=%.6f"
               " us_per_round_trip=%.3f cgroup=%s\n",
               o.pairs, o.size, total, seconds, seconds / (double) total * 1e6, cg);
        return fflush(stdout) == EOF ? EXIT_FAILURE : EXIT_SUCCESS;
}
