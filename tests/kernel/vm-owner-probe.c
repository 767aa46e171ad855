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
        if (argc == 4 && strcmp(argv[1], "exchange") == 0)
                return print_result(renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3], RENAME_EXCHANGE));
        if (argc == 3 && strcmp(argv[1], "socket") == 0)
                return probe_socket(argv[2]);
        fprintf(stderr, "usage: vm-owner-probe inotify DIR | changed mkdir|rmdir PATH | exchange PATH1 PATH2 | "
                        "socket PATH\n");
        return 2;
}
