/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Two probes for tests/kernel/vm-daemon-guest.sh, run in the VM (busybox has
 * neither inotifywait nor a clock finer than a second):
 *
 *   vm-owner-probe inotify DIR
 *       whether the kernel's cgroup2 reports a mkdir and an rmdir below DIR
 *       to an inotify watch on DIR (IN_CREATE and IN_DELETE, with IN_ISDIR),
 *       which is what cgbypassd's watch.c relies on;
 *   vm-owner-probe changed mkdir|rmdir PATH
 *       the time from the caller's own mkdir(2) or rmdir(2) of PATH to the
 *       first org.cgbypass1 CgroupChanged signal, heard through a match rule
 *       as any user hears it; nothing else is called in between, so only the
 *       daemon's inotify watch can have noticed. Prints the latency, and as
 *       a same-run baseline the round trips of a Ping to the daemon and of a
 *       GetCgroup of PATH's parent; exits 1 when no signal came within 5 s;
 *   vm-owner-probe series DIR N BOUND_MS
 *       N rounds of the caller's mkdir(2) of DIR/lat-K and its rmdir(2), each
 *       timed to its CgroupChanged, with a Ping per round as the same-run
 *       baseline: p50, p99, max, and how many took longer than BOUND_MS
 *       (printed, not judged; exit 1 only when a signal did not come in 5 s);
 *   vm-owner-probe exchange PATH1 PATH2 | socket PATH
 *       what an owner's renameat2(RENAME_EXCHANGE) or bind(2) of a unix
 *       socket gets in a cgroup2 directory: prints 'ok' or the errno's name
 *       (exit 0 either way; 2 on a usage error).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#define PROBE_NAME "inotify-probe"

static unsigned long long now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (unsigned long long) ts.tv_sec * 1000000ULL + (unsigned long long) ts.tv_nsec / 1000;
}

static int probe_inotify(const char *dir) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        char path[4096];
        int fd, created = 0, deleted = 0;

        fd = inotify_init1(IN_CLOEXEC);
        if (fd < 0 || inotify_add_watch(fd, dir, IN_CREATE | IN_DELETE) < 0) {
                fprintf(stderr, "vm-owner-probe: inotify on %s: %s\n", dir, strerror(errno));
                return 1;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, PROBE_NAME);
        if (mkdir(path, 0755) < 0 || rmdir(path) < 0) {
                fprintf(stderr, "vm-owner-probe: mkdir/rmdir %s: %s\n", path, strerror(errno));
                return 1;
        }
        while (!(created && deleted)) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t len;

                if (poll(&p, 1, 1000) <= 0)
                        break;
                len = read(fd, buf, sizeof(buf));
                if (len <= 0)
                        break;
                for (char *q = buf; q < buf + len;) {
                        const struct inotify_event *e = (const struct inotify_event *) q;

                        q += sizeof(*e) + e->len;
                        if (e->len == 0 || strcmp(e->name, PROBE_NAME) != 0 || !(e->mask & IN_ISDIR))
                                continue;
                        if (e->mask & IN_CREATE) {
                                printf("IN_CREATE|IN_ISDIR %s\n", e->name);
                                created = 1;
                        }
                        if (e->mask & IN_DELETE) {
                                printf("IN_DELETE|IN_ISDIR %s\n", e->name);
                                deleted = 1;
                        }
                }
        }
        close(fd);
        return created && deleted ? 0 : 1;
}

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        char **got = userdata;
        const char *cgroup;

        (void) ret_error;
        if (!*got && sd_bus_message_read(m, "s", &cgroup) >= 0)
                *got = strdup(cgroup);
        return 0;
}

static int probe_changed(const char *op, const char *path) {
        sd_bus *bus = NULL;
        char *got = NULL;
        unsigned long long t0, deadline;
        int r;

        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, "org.cgbypass1", "/org/cgbypass1", "org.cgbypass1.Manager",
                                        "CgroupChanged", on_changed, &got);
        /* the match is in place once the bus answered a call made after it */
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "GetId", NULL, NULL, NULL);
        if (r < 0) {
                fprintf(stderr, "vm-owner-probe: the bus: %s\n", strerror(-r));
                return 1;
        }
        t0 = now_usec();
        if ((strcmp(op, "mkdir") == 0 ? mkdir(path, 0755) : rmdir(path)) < 0) {
                fprintf(stderr, "vm-owner-probe: %s %s: %s\n", op, path, strerror(errno));
                return 1;
        }
        deadline = t0 + 5000000ULL;
        while (!got && now_usec() < deadline) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        break;
                if (r == 0)
                        r = sd_bus_wait(bus, deadline - now_usec());
                if (r < 0)
                        break;
        }
        if (!got) {
                fprintf(stderr, "vm-owner-probe: no CgroupChanged within 5 s of %s %s\n", op, path);
                return 1;
        }
        unsigned long long t_sig = now_usec(), t_ping, t_get;
        char parent[4096], *slash;

        snprintf(parent, sizeof(parent), "%s", got);
        slash = strrchr(parent, '/');
        if (slash && slash != parent)
                *slash = '\0';
        r = sd_bus_call_method(bus, "org.cgbypass1", "/org/cgbypass1", "org.freedesktop.DBus.Peer", "Ping", NULL,
                               NULL, NULL);
        t_ping = now_usec();
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.cgbypass1", "/org/cgbypass1", "org.cgbypass1.Manager", "GetCgroup",
                                       NULL, NULL, "s", parent);
        t_get = now_usec();
        printf("CgroupChanged %s %.1f ms after %s %s (baseline: Ping %.1f ms, GetCgroup %s %.1f ms%s)\n", got,
               (double) (t_sig - t0) / 1000.0, op, path, (double) (t_ping - t_sig) / 1000.0, parent,
               (double) (t_get - t_ping) / 1000.0, r < 0 ? ", failed" : "");
        free(got);
        sd_bus_flush_close_unref(bus);
        return 0;
}

/* The signal for a path ending in @suffix, to tell one round's from another's. */
struct awaited {
        const char *suffix;
        int seen;
};

static int on_awaited(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct awaited *a = userdata;
        const char *cgroup;
        size_t n, k;

        (void) ret_error;
        if (sd_bus_message_read(m, "s", &cgroup) < 0)
                return 0;
        n = strlen(cgroup);
        k = strlen(a->suffix);
        if (n >= k && strcmp(cgroup + n - k, a->suffix) == 0)
                a->seen = 1;
        return 0;
}

static int wait_seen(sd_bus *bus, struct awaited *a, unsigned long long deadline) {
        while (!a->seen && now_usec() < deadline) {
                int r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r == 0 && sd_bus_wait(bus, deadline - now_usec()) < 0)
                        return -EIO;
        }
        return a->seen ? 0 : -ETIMEDOUT;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

/* The nearest-rank percentile @p of @v (sorted here). */
static double percentile(double *v, unsigned n, unsigned p) {
        unsigned rank = (p * n + 99) / 100;

        qsort(v, n, sizeof(double), cmp_double);
        return v[rank ? rank - 1 : 0];
}

/*
 * N rounds of the caller's own mkdir(2) of DIR/lat-K, then its rmdir(2), each
 * timed to its CgroupChanged; a Ping of the daemon per round is the same-run
 * baseline (the bus's round trip, the loop's wake-up). Prints p50, p99 and
 * max of each, and how many of each exceeded BOUND_MS; exit 1 when a signal
 * did not come within 5 s.
 */
static int probe_series(const char *dir, unsigned n, double bound_ms) {
        double *mk = calloc(n, sizeof(double)), *rm = calloc(n, sizeof(double)), *ping = calloc(n, sizeof(double));
        unsigned over_mk = 0, over_rm = 0;
        sd_bus *bus = NULL;
        int r;

        if (!mk || !rm || !ping || n == 0)
                return 2;
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "vm-owner-probe: the bus: %s\n", strerror(-r));
                return 1;
        }
        for (unsigned i = 0; i < n; i++) {
                char path[4096], suffix[64];
                struct awaited a = { .suffix = suffix };
                sd_bus_slot *slot = NULL;
                unsigned long long t0;

                snprintf(suffix, sizeof(suffix), "/lat-%u", i);
                snprintf(path, sizeof(path), "%s%s", dir, suffix);
                r = sd_bus_match_signal(bus, &slot, "org.cgbypass1", "/org/cgbypass1", "org.cgbypass1.Manager",
                                        "CgroupChanged", on_awaited, &a);
                /* the match is in place once the bus answered a call made after it */
                if (r >= 0)
                        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                               "org.freedesktop.DBus", "GetId", NULL, NULL, NULL);
                if (r < 0) {
                        fprintf(stderr, "vm-owner-probe: the bus: %s\n", strerror(-r));
                        return 1;
                }
                t0 = now_usec();
                if (mkdir(path, 0755) < 0) {
                        fprintf(stderr, "vm-owner-probe: mkdir %s: %s\n", path, strerror(errno));
                        return 1;
                }
                if (wait_seen(bus, &a, t0 + 5000000ULL) < 0) {
                        fprintf(stderr, "vm-owner-probe: no CgroupChanged within 5 s of mkdir %s (round %u)\n", path, i);
                        return 1;
                }
                mk[i] = (double) (now_usec() - t0) / 1000.0;
                t0 = now_usec();
                r = sd_bus_call_method(bus, "org.cgbypass1", "/org/cgbypass1", "org.freedesktop.DBus.Peer", "Ping",
                                       NULL, NULL, NULL);
                ping[i] = (double) (now_usec() - t0) / 1000.0;
                a.seen = 0;
                t0 = now_usec();
                if (rmdir(path) < 0) {
                        fprintf(stderr, "vm-owner-probe: rmdir %s: %s\n", path, strerror(errno));
                        return 1;
                }
                if (wait_seen(bus, &a, t0 + 5000000ULL) < 0) {
                        fprintf(stderr, "vm-owner-probe: no CgroupChanged within 5 s of rmdir %s (round %u)\n", path, i);
                        return 1;
                }
                rm[i] = (double) (now_usec() - t0) / 1000.0;
                over_mk += mk[i] > bound_ms;
                over_rm += rm[i] > bound_ms;
                sd_bus_slot_unref(slot);
        }
        printf("mkdir->CgroupChanged n=%u p50=%.1f ms p99=%.1f ms max=%.1f ms over_%.0fms=%u\n", n,
               percentile(mk, n, 50), percentile(mk, n, 99), percentile(mk, n, 100), bound_ms, over_mk);
        printf("rmdir->CgroupChanged n=%u p50=%.1f ms p99=%.1f ms max=%.1f ms over_%.0fms=%u\n", n,
               percentile(rm, n, 50), percentile(rm, n, 99), percentile(rm, n, 100), bound_ms, over_rm);
        printf("baseline Ping n=%u p50=%.1f ms p99=%.1f ms\n", n, percentile(ping, n, 50), percentile(ping, n, 99));
        free(mk);
        free(rm);
        free(ping);
        sd_bus_flush_close_unref(bus);
        return 0;
}

static int print_result(int r) {
        if (r < 0)
                printf("%s\n", strerrorname_np(errno) ?: "?");
        else
                printf("ok\n");
        return 0;
}

static int probe_socket(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
                return 2;
        strcpy(sa.sun_path, path);
        print_result(bind(fd, (struct sockaddr *) &sa, sizeof(sa)));
        close(fd);
        return 0;
}

int main(int argc, char *argv[]) {
        if (argc == 3 && strcmp(argv[1], "inotify") == 0)
                return probe_inotify(argv[2]);
        if (argc == 4 && strcmp(argv[1], "changed") == 0 &&
            (strcmp(argv[2], "mkdir") == 0 || strcmp(argv[2], "rmdir") == 0))
                return probe_changed(argv[2], argv[3]);
        if (argc == 5 && strcmp(argv[1], "series") == 0)
                return probe_series(argv[2], (unsigned) strtoul(argv[3], NULL, 10), strtod(argv[4], NULL));
        if (argc == 4 && strcmp(argv[1], "exchange") == 0)
                return print_result(renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3], RENAME_EXCHANGE));
        if (argc == 3 && strcmp(argv[1], "socket") == 0)
                return probe_socket(argv[2]);
        fprintf(stderr, "usage: vm-owner-probe inotify DIR | changed mkdir|rmdir PATH | series DIR N BOUND_MS |\n"
                "       exchange PATH1 PATH2 | socket PATH\n");
        return 2;
}
