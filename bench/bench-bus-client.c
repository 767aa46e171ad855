/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The load generator of bench/bench-bus.sh, on the bus of $DBUS_SYSTEM_BUS_ADDRESS.
 *
 *   bench-bus-client run --method M [--dest NAME] [--arg S] [--cgroup-fmt FMT]
 *                        [--clients K] [--warmup W] (--iterations N | --duration SEC)
 *       K processes, each with its own bus connection, make W untimed calls,
 *       wait for each other, then make N calls (or calls for SEC seconds), one
 *       at a time, each timed with CLOCK_MONOTONIC from before sending to after
 *       the reply is read (sd_bus_call()). Prints one line:
 *         calls=.. errors=.. p50_us=.. p90_us=.. p99_us=.. mean_us=.. max_us=.. wall_s=.. calls_per_s=..
 *       calls_per_s is all clients' calls over the time from the common start
 *       to the last client's end.
 *       M: change (EnableController and BypassController alternately on the
 *       cgroup printf(FMT, client index), controller S, starting with Enable:
 *       every call changes the cgroup; a client that stops after an Enable
 *       makes one more, untimed, Bypass, so each run leaves what it found),
 *       GetCgroup (S a cgroup), GetEffectiveTree (S a controller), Echo (S),
 *       Reload (no argument; as root).
 *
 *   bench-bus-client startup --notify-socket PATH [--settle-ms MS] -- CMD [ARG...]
 *       binds a datagram socket at PATH, starts CMD with NOTIFY_SOCKET=PATH,
 *       waits for READY=1 (what systemd waits for with Type=notify), waits MS
 *       more, reads VmRSS and VmHWM of CMD from /proc, stops it with SIGTERM
 *       and waits for it. Prints: ready_ms=.. rss_kb=.. hwm_kb=.. exit=..
 *
 * Exit status: 0 ok (errors are counted and printed, not fatal), 1 failure, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#define PROG "bench-bus-client"
#define PATH_OBJ "/org/cgbypass1"
#define IFACE "org.cgbypass1.Manager"
#define MAX_CLIENTS 256
#define DURATION_CAP 1000000    /* samples kept per client in --duration mode */

typedef struct Slot {
        uint64_t n, errors, end_ns;
} Slot;

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static __attribute__((noreturn)) void usage(void) {
        fprintf(stderr, "usage: " PROG " run --method change|GetCgroup|GetEffectiveTree|Echo|Reload [--dest NAME] [--arg S]\n"
                        "          [--arg-size BYTES] [--cgroup-fmt FMT] [--clients K] [--warmup W] (--iterations N | --duration SEC)\n"
                        "       " PROG " startup --notify-socket PATH [--settle-ms MS] -- CMD [ARG...]\n");
        exit(2);
}

typedef struct Run {
        const char *dest, *method, *arg, *cgroup_fmt;
        unsigned clients;
        uint64_t warmup, iterations;
        double duration;
} Run;

/* one call; 0 ok, 1 a D-Bus error (counted), <0 local failure */
static int one_call(sd_bus *bus, const Run *o, const char *cgroup, uint64_t i, bool *ret_enabled) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *member = o->method;
        int r;

        if (cgroup) {
                member = i % 2 == 0 ? "EnableController" : "BypassController";
                r = sd_bus_call_method(bus, o->dest, PATH_OBJ, IFACE, member, &e, &reply, "ss", cgroup, o->arg);
                if (ret_enabled)
                        *ret_enabled = i % 2 == 0;
        } else if (strcmp(member, "Reload") == 0)
                r = sd_bus_call_method(bus, o->dest, PATH_OBJ, IFACE, member, &e, &reply, "");
        else
                r = sd_bus_call_method(bus, o->dest, PATH_OBJ, IFACE, member, &e, &reply, "s", o->arg);
        if (r < 0) {
                static unsigned printed;
                if (printed++ < 3)
                        fprintf(stderr, PROG ": %s: %s: %s\n", member, e.name ? e.name : strerror(-r),
                                e.message ? e.message : "");
                sd_bus_error_free(&e);
                sd_bus_message_unref(reply);
                return 1;
        }
        sd_bus_message_unref(reply);
        return 0;
}

static int client(const Run *o, unsigned idx, int ready_fd, int go_fd, Slot *slot, uint64_t *lat, uint64_t cap) {
        sd_bus *bus = NULL;
        char cgroup_buf[4096], *cgroup = NULL;
        bool enabled = false;
        uint64_t i = 0, n = 0, deadline;
        char c = 0;
        int r;

        if (o->cgroup_fmt) {
                (void) snprintf(cgroup_buf, sizeof(cgroup_buf), o->cgroup_fmt, idx);
                cgroup = cgroup_buf;
        }
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, PROG ": cannot connect: %s\n", strerror(-r));
                return 1;
        }
        /* as cgbypassctl --no-ask-password: polkit is asked with flags 0 on both sides */
        (void) sd_bus_set_allow_interactive_authorization(bus, false);
        for (; i < o->warmup; i++)
                slot->errors += one_call(bus, o, cgroup, i, &enabled) != 0;
        if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) < 0)
                return 1;
        deadline = o->duration > 0 ? now_ns() + (uint64_t) (o->duration * 1e9) : UINT64_MAX;
        for (;;) {
                if (o->duration > 0 ? now_ns() >= deadline : n >= o->iterations)
                        break;
                uint64_t t0 = now_ns();
                r = one_call(bus, o, cgroup, i++, &enabled);
                uint64_t t1 = now_ns();
                if (r != 0)
                        slot->errors++;
                if (n < cap)
                        lat[n] = t1 - t0;
                n++;
        }
        slot->end_ns = now_ns();
        slot->n = n < cap ? n : cap;
        if (cgroup && enabled)
                (void) one_call(bus, o, cgroup, 1, NULL);       /* back to bypass, untimed */
        sd_bus_flush_close_unref(bus);
        return 0;
}

static int do_run(int argc, char *argv[]) {
        static const struct option options[] = {
                { "dest",       required_argument, NULL, 'd' },
                { "method",     required_argument, NULL, 'm' },
                { "arg",        required_argument, NULL, 'a' },
                { "cgroup-fmt", required_argument, NULL, 'f' },
                { "clients",    required_argument, NULL, 'c' },
                { "warmup",     required_argument, NULL, 'w' },
                { "iterations", required_argument, NULL, 'n' },
                { "duration",   required_argument, NULL, 't' },
                { "arg-size",   required_argument, NULL, 's' },
                {}
        };
        Run o = { .dest = "org.cgbypass1", .arg = "", .clients = 1, .warmup = 100 };
        int ready[2], go[2], c;
        uint64_t cap, total = 0, errors = 0, end = 0, t_go, *all, *lat;
        Slot *slots;
        pid_t pids[MAX_CLIENTS];
        size_t arg_size = 0;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'd': o.dest = optarg; break;
                case 'm': o.method = optarg; break;
                case 'a': o.arg = optarg; break;
                case 'f': o.cgroup_fmt = optarg; break;
                case 'c': o.clients = (unsigned) strtoul(optarg, NULL, 10); break;
                case 'w': o.warmup = strtoull(optarg, NULL, 10); break;
                case 'n': o.iterations = strtoull(optarg, NULL, 10); break;
                case 't': o.duration = strtod(optarg, NULL); break;
                /* the argument padded to BYTES: an Echo that moves as much as a large reply */
                case 's': arg_size = strtoull(optarg, NULL, 10); break;
                default: usage();
                }
        if (arg_size > strlen(o.arg)) {
                char *a = malloc(arg_size + 1);
                if (!a)
                        return 1;
                memset(a, 'a', arg_size);
                memcpy(a, o.arg, strlen(o.arg));
                a[arg_size] = '\0';
                o.arg = a;     /* freed at exit */
        }
        if (!o.method || o.clients < 1 || o.clients > MAX_CLIENTS || (o.iterations == 0) == (o.duration <= 0))
                usage();
        if (strcmp(o.method, "change") == 0) {
                if (!o.cgroup_fmt || !o.arg[0])
                        usage();
                o.warmup += o.warmup % 2;       /* even: the warm-up ends where it started */
        } else
                o.cgroup_fmt = NULL;

        cap = o.duration > 0 ? DURATION_CAP : o.iterations;
        slots = mmap(NULL, sizeof(Slot) * o.clients, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        lat = mmap(NULL, sizeof(uint64_t) * cap * o.clients, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
        if (slots == MAP_FAILED || lat == MAP_FAILED || pipe(ready) < 0 || pipe(go) < 0) {
                perror(PROG);
                return 1;
        }
        memset(slots, 0, sizeof(Slot) * o.clients);
        for (unsigned i = 0; i < o.clients; i++) {
                pids[i] = fork();
                if (pids[i] < 0) {
                        perror(PROG ": fork");
                        return 1;
                }
                if (pids[i] == 0) {
                        close(ready[0]);
                        close(go[1]);
                        _exit(client(&o, i, ready[1], go[0], &slots[i], lat + (uint64_t) i * cap, cap));
                }
        }
        close(ready[1]);
        close(go[0]);
        for (unsigned i = 0; i < o.clients; i++) {
                char b;
                if (read(ready[0], &b, 1) != 1) {
                        fprintf(stderr, PROG ": a client failed before the start\n");
                        close(go[1]);
                        for (unsigned j = 0; j < o.clients; j++)
                                (void) waitpid(pids[j], NULL, 0);
                        return 1;
                }
        }
        t_go = now_ns();
        close(go[1]);   /* everyone reads EOF: go */
        int failed = 0;
        for (unsigned i = 0; i < o.clients; i++) {
                int st;
                if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                        failed++;
        }
        if (failed) {
                fprintf(stderr, PROG ": %d client(s) failed\n", failed);
                return 1;
        }

        for (unsigned i = 0; i < o.clients; i++) {
                total += slots[i].n;
                errors += slots[i].errors;
                if (slots[i].end_ns > end)
                        end = slots[i].end_ns;
        }
        all = malloc(sizeof(uint64_t) * (total ? total : 1));
        if (!all)
                return 1;
        uint64_t k = 0;
        long double sum = 0;
        for (unsigned i = 0; i < o.clients; i++)
                for (uint64_t j = 0; j < slots[i].n; j++) {
                        all[k++] = lat[(uint64_t) i * cap + j];
                        sum += all[k - 1];
                }
        qsort(all, total, sizeof(uint64_t), cmp_u64);
#define PCT(p) (total ? all[(uint64_t) ((double) (total - 1) * (p))] / 1000.0 : 0.0)
        double wall = (double) (end - t_go) / 1e9;
        printf("calls=%" PRIu64 " errors=%" PRIu64 " p50_us=%.1f p90_us=%.1f p99_us=%.1f mean_us=%.1f max_us=%.1f "
               "wall_s=%.3f calls_per_s=%.1f\n",
               total, errors, PCT(0.50), PCT(0.90), PCT(0.99), total ? (double) (sum / total) / 1000.0 : 0.0,
               PCT(1.0), wall, wall > 0 ? (double) total / wall : 0.0);
        free(all);
        return 0;
}

static long status_kb(pid_t pid, const char *key) {
        char path[64], line[256];
        long v = -1;
        FILE *f;

        (void) snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':') {
                        v = strtol(line + strlen(key) + 1, NULL, 10);
                        break;
                }
        fclose(f);
        return v;
}

static int do_startup(int argc, char *argv[]) {
        static const struct option options[] = {
                { "notify-socket", required_argument, NULL, 's' },
                { "settle-ms",     required_argument, NULL, 'w' },
                {}
        };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *sock = NULL;
        long settle = 0;
        uint64_t t0, t1 = 0;
        int c, fd, st;
        pid_t pid;

        while ((c = getopt_long(argc, argv, "+", options, NULL)) >= 0)
                switch (c) {
                case 's': sock = optarg; break;
                case 'w': settle = strtol(optarg, NULL, 10); break;
                default: usage();
                }
        if (!sock || optind >= argc || strlen(sock) >= sizeof(sa.sun_path))
                usage();
        strcpy(sa.sun_path, sock);
        (void) unlink(sock);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                perror(PROG ": notify socket");
                return 1;
        }
        t0 = now_ns();
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                setenv("NOTIFY_SOCKET", sock, 1);
                execv(argv[optind], argv + optind);
                _exit(127);
        }
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                char buf[4096];
                ssize_t n;

                if (poll(&p, 1, 250) < 0 && errno != EINTR)
                        break;
                if (waitpid(pid, &st, WNOHANG) == pid) {
                        fprintf(stderr, PROG ": %s exited before READY=1 (status %d)\n", argv[optind], st);
                        return 1;
                }
                if (now_ns() - t0 > 600ull * 1000000000ull) {
                        fprintf(stderr, PROG ": no READY=1 in 600 s\n");
                        break;
                }
                if (!(p.revents & POLLIN))
                        continue;
                n = recv(fd, buf, sizeof(buf) - 1, 0);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                if (strncmp(buf, "READY=1", 7) == 0 || strstr(buf, "\nREADY=1")) {
                        t1 = now_ns();
                        break;
                }
        }
        if (t1 && settle > 0)
                usleep((useconds_t) settle * 1000);
        long rss = status_kb(pid, "VmRSS"), hwm = status_kb(pid, "VmHWM");
        (void) kill(pid, SIGTERM);
        (void) waitpid(pid, &st, 0);
        close(fd);
        (void) unlink(sock);
        if (!t1)
                return 1;
        printf("ready_ms=%.1f rss_kb=%ld hwm_kb=%ld exit=%d\n", (double) (t1 - t0) / 1e6, rss, hwm,
               WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        return 0;
}

int main(int argc, char *argv[]) {
        if (argc < 2)
                usage();
        if (strcmp(argv[1], "run") == 0)
                return do_run(argc - 1, argv + 1);
        if (strcmp(argv[1], "startup") == 0)
                return do_startup(argc - 1, argv + 1);
        usage();
}
