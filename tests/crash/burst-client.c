/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client that remembers what the daemon acknowledged, for the daemon kill
 * test, on the system bus of $DBUS_SYSTEM_BUS_ADDRESS:
 *
 *   burst-client burst SECONDS CONTROLLER CGROUP...
 *       for SECONDS, switch CONTROLLER in a random one of the CGROUPs
 *       (EnableController where it is bypassed, BypassController where it
 *       is re-enabled), one call at a time. An answered call is an
 *       acknowledged change. A call that gets no answer (the daemon was
 *       killed) may or may not have been made; once the daemon answers
 *       again, every CGROUP must show its last acknowledged state, or that
 *       unanswered change. At the end it prints "state CGROUP STATE" lines.
 *   burst-client verify TABLE CONTROLLER
 *       every CGROUP of TABLE ("CGROUP STATE" lines) shows STATE for CONTROLLER.
 *
 * Prints "acked N checked N lost N unanswered N" (verify: "checked N lost N").
 * Exit status: 0, 1 a lost change or a wrong answer, 2 bad usage or a local failure.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#define DEST  "org.cgbypass1"
#define PATH  "/org/cgbypass1"
#define IFACE "org.cgbypass1.Manager"
#define STATE_MAX 64

typedef struct Item {
        const char *cgroup;
        char acked[STATE_MAX];          /* "cpu" or "#cpu": the last acknowledged state */
        char pending[STATE_MAX];        /* an unanswered change, or "" */
} Item;

static const char *controller;
static long acked, checked, lost, unanswered;

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* CONTROLLER's entry in GetCgroup's "controllers": "cpu", "#cpu" or "absent". 0, or -errno with @ret_name. */
static int read_state(sd_bus *bus, const char *cgroup, char *ret, char *ret_name, size_t name_size) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *key;
        int r;

        snprintf(ret, STATE_MAX, "absent");
        ret_name[0] = '\0';
        r = sd_bus_call_method(bus, DEST, PATH, IFACE, "GetCgroup", &error, &reply, "s", cgroup);
        if (r < 0) {
                snprintf(ret_name, name_size, "%s", error.name ? error.name : strerror(-r));
                sd_bus_error_free(&error);
                return r;
        }
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read_basic(reply, 's', &key);
                if (r >= 0 && strcmp(key, "controllers") != 0)
                        r = sd_bus_message_skip(reply, "v");
                else if (r >= 0) {
                        const char *s;
                        r = sd_bus_message_enter_container(reply, 'v', "as");
                        if (r >= 0)
                                r = sd_bus_message_enter_container(reply, 'a', "s");
                        while (r >= 0 && (r = sd_bus_message_read_basic(reply, 's', &s)) > 0)
                                if (!strcmp(s + (s[0] == '#'), controller))
                                        snprintf(ret, STATE_MAX, "%s", s);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        sd_bus_message_unref(reply);
        if (r < 0)
                snprintf(ret_name, name_size, "bad reply: %s", strerror(-r));
        return r < 0 ? r : 0;
}

/* The daemon is gone or restarting: the bus answers for it. */
static bool daemon_absent(const char *name) {
        return !strcmp(name, "org.freedesktop.DBus.Error.NoReply") ||
                !strcmp(name, "org.freedesktop.DBus.Error.ServiceUnknown") ||
                !strcmp(name, "org.freedesktop.DBus.Error.NameHasNoOwner") ||
                !strcmp(name, "org.freedesktop.DBus.Error.Disconnected") ||
                !strcmp(name, "org.freedesktop.DBus.Error.TimedOut");
}

/* Wait for the daemon, then compare each item with what it acknowledged (not at @first). */
static int resync(sd_bus *bus, Item *items, size_t n, double deadline, bool first) {
        for (size_t i = 0; i < n; i++) {
                char state[STATE_MAX], name[256];

                while (read_state(bus, items[i].cgroup, state, name, sizeof(name)) < 0) {
                        if (!daemon_absent(name) || now() > deadline) {
                                printf("FAIL: GetCgroup %s: %s\n", items[i].cgroup, name);
                                return -1;
                        }
                        (void) usleep(20 * 1000);
                }
                if (first)
                        ;
                else if (!strcmp(state, items[i].acked) || (items[i].pending[0] && !strcmp(state, items[i].pending)))
                        checked++;
                else {
                        printf("LOST: %s shows '%s' after the daemon came back; acknowledged: '%s'%s%s\n",
                               items[i].cgroup, state, items[i].acked,
                               items[i].pending[0] ? ", unanswered: " : "", items[i].pending);
                        lost++;
                }
                snprintf(items[i].acked, STATE_MAX, "%s", state);
                items[i].pending[0] = '\0';
        }
        return 0;
}

static int do_burst(double seconds, char **cgroups, size_t n) {
        sd_bus *bus = NULL;
        Item *items = calloc(n, sizeof(Item));
        double end = now() + seconds;
        unsigned seed = (unsigned) getpid() ^ (unsigned) time(NULL);
        char hashx[STATE_MAX];
        int r;

        if (!items || sd_bus_open_system(&bus) < 0) {
                fprintf(stderr, "burst-client: cannot connect\n");
                return 2;
        }
        snprintf(hashx, sizeof(hashx), "#%s", controller);
        for (size_t i = 0; i < n; i++)
                items[i].cgroup = cgroups[i];
        /* the starting states are what the daemon says, not checked */
        if (resync(bus, items, n, end + 30, true) < 0)
                return 1;

        while (now() < end) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                Item *it = &items[rand_r(&seed) % n];
                bool enable = strcmp(it->acked, controller) != 0;

                r = sd_bus_call_method(bus, DEST, PATH, IFACE, enable ? "EnableController" : "BypassController",
                                       &error, NULL, "ss", it->cgroup, controller);
                if (r >= 0) {
                        acked++;
                        snprintf(it->acked, STATE_MAX, "%s", enable ? controller : hashx);
                        continue;
                }
                if (error.name && daemon_absent(error.name)) {
                        unanswered++;
                        snprintf(it->pending, STATE_MAX, "%s", enable ? controller : hashx);
                        sd_bus_error_free(&error);
                        if (resync(bus, items, n, end + 30, false) < 0)
                                return 1;
                        continue;
                }
                printf("FAIL: %s %s %s: %s: %s\n", enable ? "EnableController" : "BypassController", it->cgroup,
                       controller, error.name ? error.name : strerror(-r), error.message ? error.message : "");
                sd_bus_error_free(&error);
                return 1;
        }
        sd_bus_flush_close_unref(bus);

        /* the caller may not write where the table goes: "state CGROUP STATE" lines, for grep */
        for (size_t i = 0; i < n; i++)
                printf("state %s %s\n", items[i].cgroup, items[i].acked);
        free(items);
        printf("acked %ld checked %ld lost %ld unanswered %ld\n", acked, checked, lost, unanswered);
        return lost ? 1 : 0;
}

static int do_verify(const char *table) {
        char cgroup[4096], want[STATE_MAX], state[STATE_MAX], name[256];
        sd_bus *bus = NULL;
        FILE *f = fopen(table, "re");

        if (!f || sd_bus_open_system(&bus) < 0) {
                fprintf(stderr, "burst-client: cannot read %s or connect\n", table);
                return 2;
        }
        while (fscanf(f, "%4095s %63s", cgroup, want) == 2) {
                if (read_state(bus, cgroup, state, name, sizeof(name)) < 0) {
                        printf("FAIL: GetCgroup %s: %s\n", cgroup, name);
                        lost++;
                } else if (strcmp(state, want) != 0) {
                        printf("LOST: %s shows '%s'; acknowledged: '%s'\n", cgroup, state, want);
                        lost++;
                } else
                        checked++;
        }
        fclose(f);
        sd_bus_flush_close_unref(bus);
        printf("checked %ld lost %ld\n", checked, lost);
        return lost ? 1 : 0;
}

int main(int argc, char *argv[]) {
        if (argc >= 5 && !strcmp(argv[1], "burst")) {
                controller = argv[3];
                return do_burst(strtod(argv[2], NULL), argv + 4, (size_t) (argc - 4));
        }
        if (argc == 4 && !strcmp(argv[1], "verify")) {
                controller = argv[3];
                return do_verify(argv[2]);
        }
        fprintf(stderr, "usage: burst-client burst SECONDS CONTROLLER CGROUP... | verify TABLE CONTROLLER\n");
        return 2;
}
