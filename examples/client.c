/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client of cgbypassd built on libcgbypass, the way a container runtime
 * or a session manager would call it. Build it with
 *
 *     cc client.c $(pkg-config --cflags --libs libcgbypass) -o client
 *
 * and run, for example, `./client enable /containers/rt/ctr5 cpu`. On
 * failure it prints the daemon's error name, the errno that
 * sd_bus_error_get_errno() decodes it to (libcgbypass registered the names
 * with sd-bus when it was loaded: no call is needed for that), and the
 * message, then exits 1:
 *
 *     error org.cgbypass1.Error.NotDelegated EPERM (1): /srv/x is not ...
 */
#define _GNU_SOURCE /* strerrorname_np() */
#include <cgbypass/cgbypass.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int usage(void) {
        fprintf(stderr,
                "usage: client [--session] COMMAND ARGS...\n"
                "  enable CGROUP CONTROLLER     bypass CGROUP CONTROLLER     set CGROUP CHANGE\n"
                "  show CGROUP                  tree CONTROLLER              delegations\n"
                "  reload                       delegate CGROUP UID CONTROLLER...\n"
                "  undelegate CGROUP            watch N (wait for N CgroupChanged signals, 10 s)\n");
        return 2;
}

/* The one line a failure prints. @r is what the call returned: the same errno, negated. */
static int report(int r, const sd_bus_error *e) {
        int decoded = sd_bus_error_get_errno(e);

        if (r >= 0)
                return 0;
        printf("error %s %s (%d): %s\n", sd_bus_error_is_set(e) ? e->name : "(none)",
               strerrorname_np(decoded) ?: "?", decoded, e->message ?: strerror(-r));
        if (r != -decoded)
                printf("mismatch: the call returned %d, the error decodes to %d\n", r, decoded);
        return 1;
}

static int print_nodes(sd_bus_message *reply) {
        int r = sd_bus_message_enter_container(reply, 'a', "(uas)");

        while (r > 0) {
                char **members = NULL;
                uint32_t depth;

                r = sd_bus_message_enter_container(reply, 'r', "uas");
                if (r <= 0)
                        break;
                r = sd_bus_message_read(reply, "u", &depth);
                if (r >= 0)
                        r = sd_bus_message_read_strv(reply, &members);
                if (r < 0)
                        break;
                printf("%" PRIu32, depth);
                for (char **m = members; m && *m; m++) {
                        printf(" %s", *m);
                        free(*m);
                }
                printf("\n");
                free(members);
                r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = 1;
        }
        return r < 0 ? r : 0;
}

static int print_cgroup(sd_bus_message *reply) {
        const char *key;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r > 0) {
                r = sd_bus_message_enter_container(reply, 'e', "sv");
                if (r <= 0)
                        break;
                r = sd_bus_message_read(reply, "s", &key);
                if (r < 0)
                        break;
                if (strcmp(key, "controllers") == 0) {
                        char **l = NULL;

                        r = sd_bus_message_enter_container(reply, 'v', "as");
                        if (r >= 0)
                                r = sd_bus_message_read_strv(reply, &l);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                        printf("controllers:");
                        for (char **x = l; x && *x; x++) {
                                printf(" %s", *x);
                                free(*x);
                        }
                        printf("\n");
                        free(l);
                } else
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = 1;
        }
        return r < 0 ? r : 0;
}

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        unsigned *left = userdata;
        const char *cgroup;

        (void) ret_error;
        if (sd_bus_message_read(m, "s", &cgroup) >= 0)
                printf("changed %s\n", cgroup);
        fflush(stdout);
        if (*left > 0)
                (*left)--;
        return 0;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* What a normal user can do to hear signals on the system bus: a match rule, not a monitor. */
static int watch(sd_bus *bus, unsigned n) {
        sd_bus_slot *slot = NULL;
        uint64_t deadline = now_usec() + 10 * 1000000;
        int r;

        r = cgbypass_match_cgroup_changed(bus, &slot, on_changed, &n);
        if (r < 0) {
                fprintf(stderr, "client: cannot add the match: %s\n", strerror(-r));
                return 1;
        }
        /* the match is in place once the bus answered a call made after it */
        (void) sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                  "GetId", NULL, NULL, NULL);
        printf("watching\n");
        fflush(stdout);
        while (n > 0 && now_usec() < deadline) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        break;
                if (r == 0)
                        r = sd_bus_wait(bus, deadline - now_usec());
                if (r < 0)
                        break;
        }
        sd_bus_slot_unref(slot);
        if (n > 0) {
                fprintf(stderr, "client: %u signal(s) did not come\n", n);
                return 1;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *bus = NULL;
        const char *cmd;
        int r, ret;

        if (argc > 1 && strcmp(argv[1], "--session") == 0) {
                r = sd_bus_open_user(&bus);
                argv++;
                argc--;
        } else
                r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "client: cannot connect to the bus: %s\n", strerror(-r));
                return 1;
        }
        if (argc < 2)
                return usage();
        cmd = argv[1];

        if (strcmp(cmd, "enable") == 0 && argc == 4)
                r = cgbypass_enable_controller(bus, argv[2], argv[3], &e);
        else if (strcmp(cmd, "bypass") == 0 && argc == 4)
                r = cgbypass_bypass_controller(bus, argv[2], argv[3], &e);
        else if (strcmp(cmd, "set") == 0 && argc == 4)
                r = cgbypass_set_subtree_control(bus, argv[2], argv[3], &e);
        else if (strcmp(cmd, "show") == 0 && argc == 3) {
                r = cgbypass_get_cgroup(bus, argv[2], &reply, &e);
                if (r >= 0)
                        r = print_cgroup(reply);
        } else if (strcmp(cmd, "tree") == 0 && argc == 3) {
                r = cgbypass_get_effective_nodes(bus, argv[2], &reply, &e);
                if (r >= 0)
                        r = print_nodes(reply);
        } else if (strcmp(cmd, "delegations") == 0 && argc == 2) {
                r = cgbypass_list_delegations(bus, &reply, &e);
                if (r >= 0)
                        r = sd_bus_message_dump(reply, stdout, SD_BUS_MESSAGE_DUMP_SUBTREE_ONLY);
        } else if (strcmp(cmd, "reload") == 0 && argc == 2)
                r = cgbypass_reload(bus, &e);
        else if (strcmp(cmd, "delegate") == 0 && argc >= 4)
                r = cgbypass_add_delegation(bus, argv[2], (uint32_t) strtoul(argv[3], NULL, 10), argv + 4, 0, &e);
        else if (strcmp(cmd, "undelegate") == 0 && argc == 3)
                r = cgbypass_remove_delegation(bus, argv[2], &e);
        else if (strcmp(cmd, "watch") == 0 && argc == 3) {
                ret = watch(bus, (unsigned) strtoul(argv[2], NULL, 10));
                sd_bus_flush_close_unref(bus);
                return ret;
        } else {
                sd_bus_flush_close_unref(bus);
                return usage();
        }

        ret = report(r, &e);
        if (r >= 0)
                printf("ok\n");
        sd_bus_message_unref(reply);
        sd_bus_error_free(&e);
        sd_bus_flush_close_unref(bus);
        return ret;
}
