/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The baseline for bench/bench-bus.sh: the least a bus service must do for
 * what cgbypassd's EnableController and BypassController do, and a bare echo.
 *
 *   EnableController(s cgroup, s controller) -> ()
 *   BypassController(s cgroup, s controller) -> ()
 *       polkit CheckAuthorization, asked asynchronously exactly as cgbypassd
 *       asks it (subject system-bus-name of the sender, action
 *       org.cgbypass1.manage-delegated, details cgroup/controller/change/file,
 *       flags 0 unless the call allows interactive authorization, a cancel id),
 *       then, when polkit says yes, one write(2) of "+CONTROLLER" or
 *       "#CONTROLLER" to ROOT/CGROUP/cgroup.controllers, then (with --sync-file)
 *       the same bytes to SYNC-FILE and one fdatasync() of it, the price of a
 *       durable record on that disk, then the reply. No
 *       delegation lookup, no model, no state file, no signal, no caller
 *       tracking: the reply is sent from polkit's answer.
 *   Echo(s) -> (s)
 *       the argument back.
 *
 * The object is /org/cgbypass1, interface org.cgbypass1.Manager, so the bus
 * policy that lets anyone call cgbypassd (dbus/org.cgbypass1.conf) lets them
 * call this too: it queues for the name org.cgbypass1 behind cgbypassd
 * (dbus-daemon applies send_destination to every connection in the name's
 * queue), and clients address it by its unique name, which it prints.
 *
 * usage: baseline-service --root DIR [--name-file FILE] [--sync-file FILE]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#define POLKIT_NAME      "org.freedesktop.PolicyKit1"
#define POLKIT_PATH      "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"
#define POLKIT_ACTION    "org.cgbypass1.manage-delegated"
#define POLKIT_TIMEOUT_USEC (25ULL * 1000 * 1000)

#define _cleanup_(f) __attribute__((__cleanup__(f)))

static const char *root;
static uint64_t serial;
static int sync_fd = -1;        /* --sync-file: one fdatasync() after each write */

typedef struct Pending {
        sd_bus_message *call;
        char path[PATH_MAX];
        char value[64];
} Pending;

static void pending_free(Pending *p) {
        sd_bus_message_unref(p->call);
        free(p);
}

/* the one cgroup write: one open, one write(2), one close */
static int write_one(const char *path, const char *value) {
        size_t n = strlen(value);
        int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        ssize_t k = write(fd, value, n);
        int r = k < 0 ? -errno : (size_t) k != n ? -EIO : 0;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Pending *p = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int authorized = 0, challenge = 0, r;

        if (e) {
                (void) sd_bus_reply_method_errorf(p->call, SD_BUS_ERROR_ACCESS_DENIED, "polkit failed: %s: %s",
                                                  e->name, e->message ? e->message : "");
                goto done;
        }
        r = sd_bus_message_enter_container(reply, SD_BUS_TYPE_STRUCT, "bba{ss}");
        if (r >= 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r < 0) {
                (void) sd_bus_reply_method_errorf(p->call, SD_BUS_ERROR_ACCESS_DENIED, "bad polkit answer");
                goto done;
        }
        if (!authorized) {
                (void) sd_bus_reply_method_errorf(p->call, SD_BUS_ERROR_ACCESS_DENIED, "polkit says no%s",
                                                  challenge ? " (challenge)" : "");
                goto done;
        }
        r = write_one(p->path, p->value);
        if (r >= 0 && sync_fd >= 0 && (pwrite(sync_fd, p->value, strlen(p->value), 0) < 0 || fdatasync(sync_fd) < 0))
                r = -errno;
        if (r < 0)
                (void) sd_bus_reply_method_errnof(p->call, -r, "write %s: %m", p->path);
        else
                (void) sd_bus_reply_method_return(p->call, NULL);
done:
        pending_free(p);
        return 0;
}

static int method_change(sd_bus_message *msg, char sign, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *q = NULL;
        const char *cgroup, *controller, *sender = sd_bus_message_get_sender(msg);
        bool interactive = sd_bus_message_get_allow_interactive_authorization(msg) > 0;
        char cancel_id[64];
        Pending *p;
        int r;

        r = sd_bus_message_read(msg, "ss", &cgroup, &controller);
        if (r < 0)
                return r;
        if (!sender || cgroup[0] != '/' || strstr(cgroup, "..") || !controller[0] || strlen(controller) > 32)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "bad arguments");
        p = calloc(1, sizeof(Pending));
        if (!p)
                return -ENOMEM;
        (void) snprintf(p->path, sizeof(p->path), "%s%s/cgroup.controllers", root, cgroup);
        (void) snprintf(p->value, sizeof(p->value), "%c%s", sign, controller);
        (void) snprintf(cancel_id, sizeof(cancel_id), "baseline-%d-%" PRIu64, (int) getpid(), ++serial);

        r = sd_bus_message_new_method_call(sd_bus_message_get_bus(msg), &q, POLKIT_NAME, POLKIT_PATH,
                                           POLKIT_INTERFACE, "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(q, "(sa{sv})s", "system-bus-name", 1, "name", "s", sender, POLKIT_ACTION);
        if (r >= 0)
                r = sd_bus_message_append(q, "a{ss}", 4, "cgroup", cgroup, "controller", controller,
                                          "change", p->value, "file", "cgroup.controllers");
        if (r >= 0)
                r = sd_bus_message_append(q, "us", interactive ? 1u : 0u, cancel_id);
        if (r >= 0) {
                p->call = sd_bus_message_ref(msg);
                /* floating slot: it lives until the answer */
                r = sd_bus_call_async(sd_bus_message_get_bus(msg), NULL, q, on_polkit_reply, p, POLKIT_TIMEOUT_USEC);
        }
        if (r < 0) {
                pending_free(p);
                return r;
        }
        return 1;       /* answered from on_polkit_reply() */
}

static int method_enable(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return method_change(msg, '+', error);
}

static int method_bypass(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return method_change(msg, '#', error);
}

static int method_echo(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        const char *s;
        int r = sd_bus_message_read(msg, "s", &s);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "s", s);
}

static const sd_bus_vtable vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("EnableController", "ss", "", method_enable, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("BypassController", "ss", "", method_bypass, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Echo", "s", "s", method_echo, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

static int on_term(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "root",      required_argument, NULL, 'r' },
                { "name-file", required_argument, NULL, 'n' },
                { "sync-file", required_argument, NULL, 's' },
                {}
        };
        const char *name_file = NULL, *unique;
        sd_event *event = NULL;
        sd_bus *bus = NULL;
        sigset_t mask;
        int c, r;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'r':
                        root = optarg;
                        break;
                case 'n':
                        name_file = optarg;
                        break;
                case 's':
                        sync_fd = open(optarg, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                        if (sync_fd < 0) {
                                fprintf(stderr, "baseline-service: cannot open %s: %m\n", optarg);
                                return 1;
                        }
                        break;
                default:
                        fprintf(stderr, "usage: baseline-service --root DIR [--name-file FILE] [--sync-file FILE]\n");
                        return 2;
                }
        if (!root || optind < argc) {
                fprintf(stderr, "usage: baseline-service --root DIR [--name-file FILE] [--sync-file FILE]\n");
                return 2;
        }

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, on_term, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, on_term, NULL);
        if (r >= 0)
                r = sd_bus_open_system_with_description(&bus, "baseline");
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, "/org/cgbypass1", "org.cgbypass1.Manager", vtable, NULL);
        /* queued behind cgbypassd: only so that the bus policy for org.cgbypass1 applies to us */
        if (r >= 0)
                r = sd_bus_request_name(bus, "org.cgbypass1", SD_BUS_NAME_QUEUE);
        if (r >= 0)
                r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_get_unique_name(bus, &unique);
        if (r < 0) {
                fprintf(stderr, "baseline-service: setup failed: %s\n", strerror(-r));
                return 1;
        }
        if (name_file) {
                FILE *f = fopen(name_file, "we");
                if (!f || fprintf(f, "%s\n", unique) < 0 || fclose(f) != 0) {
                        fprintf(stderr, "baseline-service: cannot write %s: %m\n", name_file);
                        return 1;
                }
        } else
                printf("%s\n", unique);
        (void) sd_bus_set_exit_on_disconnect(bus, true);
        r = sd_event_loop(event);
        sd_bus_flush_close_unref(bus);
        sd_event_unref(event);
        return r < 0 ? 1 : 0;
}
