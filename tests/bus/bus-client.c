/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small client of org.cgbypass1 for the bus tests, on the system bus of
 * $DBUS_SYSTEM_BUS_ADDRESS. Unlike busctl it prints the error's name, and
 * it can do what the tests need beyond one call:
 *
 *   bus-client [--no-interactive] call METHOD [ARG...]
 *       one call; prints "ok" and the reply, or "NAME: MESSAGE"; exit 0 / 1
 *   bus-client call-sig METHOD SIGNATURE [ARG...]
 *       a call with any signature of 's' and 'u' arguments (wrong on purpose)
 *   bus-client abandon MSEC METHOD ARG...
 *       send a call that allows interactive authorization, wait MSEC without
 *       reading the answer, and disconnect
 *   bus-client watch [SECONDS]
 *       print "ready", then the path of every CgroupChanged, one per line
 *   bus-client await mkdir|rmdir DIR CGROUP SECONDS
 *       subscribe to CgroupChanged, mkdir(2) or rmdir(2) DIR, and wait (no
 *       call to the daemon) for CgroupChanged of CGROUP; prints
 *       "latency_ms N.N", the time from the syscall to the signal; exit 1
 *       when none came in SECONDS
 *   bus-client load own|foreign|undelegated|invalid COUNT CGROUP CONTROLLER
 *       COUNT requests on one connection, each answer checked: own alternates
 *       EnableController and BypassController and reads the state back after
 *       each; foreign expects NotDelegated, undelegated ControllerNotDelegated,
 *       invalid InvalidPath. Prints "ok COUNT" or the first wrong answer.
 *   bus-client reloads COUNT [ERROR]
 *       COUNT Reload calls sent at once on one connection; prints "sent" when
 *       they are on their way, then "ok COUNT" when every answer is a success
 *       (with ERROR: that error), or the first other answer.
 *
 * Exit status: 0 ok, 1 a D-Bus error or a wrong answer, 2 bad usage or a local failure.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "cgbypass/bus-errors.h"

#define DEST  "org.cgbypass1"
#define PATH  "/org/cgbypass1"
#define IFACE "org.cgbypass1.Manager"

static bool interactive = true;

static int connect_bus(sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "bus-client: cannot connect: %s\n", strerror(-r));
                return r;
        }
        (void) sd_bus_set_allow_interactive_authorization(bus, interactive);
        *ret = bus;
        return 0;
}

static const char *signature_of(const char *method) {
        if (!strcmp(method, "EnableController") || !strcmp(method, "BypassController") ||
            !strcmp(method, "SetSubtreeControl"))
                return "ss";
        if (!strcmp(method, "GetCgroup") || !strcmp(method, "GetEffectiveTree"))
                return "s";
        if (!strcmp(method, "ListDelegations") || !strcmp(method, "Reload"))
                return "";
        if (!strcmp(method, "AddDelegation"))
                return "suAO";
        if (!strcmp(method, "RemoveDelegation"))
                return "s";
        return NULL;
}

/* 'A': "cpu,io" as an array of strings */
static int append_string(sd_bus_message *m, char *item) {
        return sd_bus_message_append_basic(m, 's', item);
}

/* 'O': "create=b:false,lifetime=s:persistent" as a{sv} (types b, s, u) */
static int append_option(sd_bus_message *m, char *item) {
        char *eq = strchr(item, '='), *v;

        if (!eq || !eq[1] || eq[2] != ':')
                return -EINVAL;
        *eq = '\0';
        v = eq + 3;
        if (eq[1] == 'b')
                return sd_bus_message_append(m, "{sv}", item, "b", !strcmp(v, "true"));
        if (eq[1] == 's')
                return sd_bus_message_append(m, "{sv}", item, "s", v);
        if (eq[1] == 'u')
                return sd_bus_message_append(m, "{sv}", item, "u", (uint32_t) strtoul(v, NULL, 0));
        return -EINVAL;
}

/* @arg's comma-separated items as an array of @contents, each appended by @append_item ("" is empty) */
static int append_array(sd_bus_message *m, const char *arg, const char *contents,
                        int (*append_item)(sd_bus_message *m, char *item)) {
        char *copy = strdup(arg), *save = NULL;
        int r;

        if (!copy)
                return -ENOMEM;
        r = sd_bus_message_open_container(m, 'a', contents);
        for (char *t = strtok_r(copy, ",", &save); r >= 0 && t; t = strtok_r(NULL, ",", &save))
                r = append_item(m, t);
        free(copy);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

static int append_args(sd_bus_message *m, const char *sig, char **argv, int argc) {
        int r;

        if ((int) strlen(sig) != argc)
                return -EINVAL;
        for (int i = 0; i < argc; i++) {
                if (sig[i] == 's')
                        r = sd_bus_message_append_basic(m, 's', argv[i]);
                else if (sig[i] == 'A')
                        r = append_array(m, argv[i], "s", append_string);
                else if (sig[i] == 'O')
                        r = append_array(m, argv[i], "{sv}", append_option);
                else if (sig[i] == 'u') {
                        uint32_t u = (uint32_t) strtoul(argv[i], NULL, 0);
                        r = sd_bus_message_append_basic(m, 'u', &u);
                } else
                        return -EINVAL;
                if (r < 0)
                        return r;
        }
        return 0;
}

static int new_call(sd_bus *bus, const char *method, const char *sig, char **argv, int argc, sd_bus_message **ret) {
        sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, DEST, PATH, IFACE, method);
        if (r >= 0)
                r = append_args(m, sig, argv, argc);
        if (r < 0) {
                sd_bus_message_unref(m);
                return r;
        }
        *ret = m;
        return 0;
}

/* print a reply's body in a simple form: strings one per line, dict entries as key=value */
static void print_reply(sd_bus_message *reply) {
        for (;;) {
                char type;
                const char *contents;
                int r = sd_bus_message_peek_type(reply, &type, &contents);
                if (r <= 0) {
                        if (r == 0 && sd_bus_message_exit_container(reply) > 0)
                                continue;
                        return;
                }
                if (type == 's') {
                        const char *s;
                        (void) sd_bus_message_read_basic(reply, 's', &s);
                        printf("%s\n", s);
                } else if (type == 'u') {
                        uint32_t u;
                        (void) sd_bus_message_read_basic(reply, 'u', &u);
                        printf("%u\n", u);
                } else if (type == 'b') {
                        int b;
                        (void) sd_bus_message_read_basic(reply, 'b', &b);
                        printf("%s\n", b ? "true" : "false");
                } else if (type == 'e' && !strcmp(contents, "sv")) {
                        const char *key;
                        (void) sd_bus_message_enter_container(reply, 'e', contents);
                        (void) sd_bus_message_read_basic(reply, 's', &key);
                        printf("%s=", key);
                        (void) sd_bus_message_peek_type(reply, &type, &contents);
                        (void) sd_bus_message_enter_container(reply, 'v', contents);
                        if (!strcmp(contents, "as")) {
                                const char *s;
                                bool first = true;
                                (void) sd_bus_message_enter_container(reply, 'a', "s");
                                while (sd_bus_message_read_basic(reply, 's', &s) > 0) {
                                        printf("%s%s", first ? "" : " ", s);
                                        first = false;
                                }
                                (void) sd_bus_message_exit_container(reply);
                                printf("\n");
                        } else if (!strcmp(contents, "s")) {
                                const char *s;
                                (void) sd_bus_message_read_basic(reply, 's', &s);
                                printf("%s\n", s);
                        } else if (!strcmp(contents, "u")) {
                                uint32_t u;
                                (void) sd_bus_message_read_basic(reply, 'u', &u);
                                printf("%u\n", u);
                        } else if (!strcmp(contents, "b")) {
                                int b;
                                (void) sd_bus_message_read_basic(reply, 'b', &b);
                                printf("%s\n", b ? "true" : "false");
                        } else if (!strcmp(contents, "a{ss}")) {
                                const char *k, *v;
                                bool first = true;
                                (void) sd_bus_message_enter_container(reply, 'a', "{ss}");
                                while (sd_bus_message_read(reply, "{ss}", &k, &v) > 0) {
                                        printf("%s%s:%s", first ? "" : " ", k, v);
                                        first = false;
                                }
                                (void) sd_bus_message_exit_container(reply);
                                printf("\n");
                        } else {
                                (void) sd_bus_message_skip(reply, contents);
                                printf("?\n");
                        }
                        (void) sd_bus_message_exit_container(reply);
                        (void) sd_bus_message_exit_container(reply);
                } else if (type == 'a' || type == 'r' || type == 'e' || type == 'v') {
                        (void) sd_bus_message_enter_container(reply, type, contents);
                } else {
                        (void) sd_bus_message_skip(reply, NULL);
                }
        }
}

static int do_call(const char *method, const char *sig, char **argv, int argc) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus *bus = NULL;
        int r, ret;

        if (!sig) {
                fprintf(stderr, "bus-client: unknown method %s\n", method);
                return 2;
        }
        if (connect_bus(&bus) < 0)
                return 2;
        r = new_call(bus, method, sig, argv, argc, &m);
        if (r < 0) {
                /* sd-bus refuses to build it (invalid UTF-8, a bad signature) */
                printf("local: %s\n", strerror(-r));
                sd_bus_unref(bus);
                return 2;
        }
        r = sd_bus_call(bus, m, 60 * 1000 * 1000ULL, &error, &reply);
        if (r < 0) {
                printf("%s: %s\n", error.name ? error.name : "errno", error.message ? error.message : strerror(-r));
                ret = 1;
        } else {
                printf("ok\n");
                print_reply(reply);
                ret = 0;
        }
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        sd_bus_message_unref(m);
        sd_bus_flush_close_unref(bus);
        return ret;
}

static int do_abandon(long msec, const char *method, char **argv, int argc) {
        sd_bus_message *m = NULL;
        sd_bus *bus = NULL;
        const char *sig = signature_of(method);
        int r;

        if (!sig || connect_bus(&bus) < 0)
                return 2;
        (void) sd_bus_set_allow_interactive_authorization(bus, true);
        r = new_call(bus, method, sig, argv, argc, &m);
        if (r >= 0)
                r = sd_bus_send(bus, m, NULL);
        if (r >= 0)
                r = sd_bus_flush(bus);
        if (r < 0) {
                fprintf(stderr, "bus-client: cannot send: %s\n", strerror(-r));
                return 2;
        }
        printf("sent\n");
        fflush(stdout);
        usleep((useconds_t) msec * 1000);
        sd_bus_message_unref(m);
        sd_bus_close_unref(bus);
        return 0;
}

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *path;

        if (sd_bus_message_read(m, "s", &path) > 0) {
                printf("%s\n", path);
                fflush(stdout);
        }
        return 0;
}

struct awaited {
        const char *path;
        bool seen;
};

static int on_awaited(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct awaited *a = userdata;
        const char *path;

        if (sd_bus_message_read(m, "s", &path) > 0 && !strcmp(path, a->path))
                a->seen = true;
        return 0;
}

static double ms_since(const struct timespec *t) {
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (double) (now.tv_sec - t->tv_sec) * 1e3 + (double) (now.tv_nsec - t->tv_nsec) / 1e6;
}

static int do_await(const char *op, const char *dir, const char *cgroup, long seconds) {
        struct awaited a = { .path = cgroup };
        sd_bus *bus = NULL;
        struct timespec start;
        int r;

        if (connect_bus(&bus) < 0)
                return 2;
        /* AddMatch is answered by the bus, not the daemon: subscribed before the syscall */
        r = sd_bus_match_signal(bus, NULL, NULL, PATH, IFACE, "CgroupChanged", on_awaited, &a);
        if (r < 0) {
                fprintf(stderr, "bus-client: cannot subscribe: %s\n", strerror(-r));
                return 2;
        }
        clock_gettime(CLOCK_MONOTONIC, &start);
        r = !strcmp(op, "mkdir") ? mkdir(dir, 0755) : rmdir(dir);
        if (r < 0) {
                fprintf(stderr, "bus-client: %s %s: %s\n", op, dir, strerror(errno));
                return 2;
        }
        while (!a.seen && ms_since(&start) < (double) seconds * 1e3) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        break;
                if (r == 0)
                        (void) sd_bus_wait(bus, 50 * 1000);
        }
        if (a.seen)
                printf("latency_ms %.1f\n", ms_since(&start));
        else
                printf("no CgroupChanged for %s in %ld s\n", cgroup, seconds);
        sd_bus_flush_close_unref(bus);
        return a.seen ? 0 : 1;
}

static int do_watch(long seconds) {
        sd_bus *bus = NULL;
        struct timespec start, now;
        int r;

        if (connect_bus(&bus) < 0)
                return 2;
        r = sd_bus_match_signal(bus, NULL, NULL, PATH, IFACE, "CgroupChanged", on_changed, NULL);
        if (r < 0) {
                fprintf(stderr, "bus-client: cannot subscribe: %s\n", strerror(-r));
                return 2;
        }
        printf("ready\n");
        fflush(stdout);
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        break;
                if (r > 0)
                        continue;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (now.tv_sec - start.tv_sec >= seconds)
                        break;
                (void) sd_bus_wait(bus, 200 * 1000);
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}

/* one call; the error name into *ret_name ("" for success) */
static int call_simple(sd_bus *bus, const char *method, const char *a, const char *b, char *ret_name, size_t size,
                       sd_bus_message **ret_reply) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        if (b)
                r = sd_bus_call_method(bus, DEST, PATH, IFACE, method, &error, ret_reply, "ss", a, b);
        else
                r = sd_bus_call_method(bus, DEST, PATH, IFACE, method, &error, ret_reply, "s", a);
        snprintf(ret_name, size, "%s", r < 0 ? (error.name ? error.name : "errno") : "");
        sd_bus_error_free(&error);
        return r;
}

/* the controllers entry of GetCgroup's answer: whether it lists X, and how */
static int read_controller_state(sd_bus_message *reply, const char *x, char *ret, size_t size) {
        const char *key;
        int r;

        snprintf(ret, size, "absent");
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read_basic(reply, 's', &key);
                if (r < 0)
                        return r;
                if (strcmp(key, "controllers") != 0) {
                        r = sd_bus_message_skip(reply, "v");
                } else {
                        const char *s;
                        r = sd_bus_message_enter_container(reply, 'v', "as");
                        if (r < 0)
                                return r;
                        r = sd_bus_message_enter_container(reply, 'a', "s");
                        if (r < 0)
                                return r;
                        while (sd_bus_message_read_basic(reply, 's', &s) > 0)
                                if (!strcmp(s + (s[0] == '#'), x))
                                        snprintf(ret, size, "%s", s);
                        (void) sd_bus_message_exit_container(reply);
                        (void) sd_bus_message_exit_container(reply);
                }
                if (r < 0)
                        return r;
                (void) sd_bus_message_exit_container(reply);
        }
        return r;
}

static int do_load(const char *mode, long count, const char *cgroup, const char *x) {
        sd_bus *bus = NULL;
        char name[256], state[64], hashx[64];
        int failures = 0;

        if (connect_bus(&bus) < 0)
                return 2;
        snprintf(hashx, sizeof(hashx), "#%s", x);
        for (long i = 0; i < count; i++) {
                sd_bus_message *reply = NULL;
                const char *want = NULL;

                if (!strcmp(mode, "own")) {
                        bool enable = i % 2 == 0;
                        (void) call_simple(bus, enable ? "EnableController" : "BypassController", cgroup, x,
                                           name, sizeof(name), NULL);
                        if (name[0]) {
                                printf("FAIL %ld: %s %s %s: %s\n", i, enable ? "Enable" : "Bypass", cgroup, x, name);
                                failures++;
                                break;
                        }
                        (void) call_simple(bus, "GetCgroup", cgroup, NULL, name, sizeof(name), &reply);
                        if (name[0] || read_controller_state(reply, x, state, sizeof(state)) < 0 ||
                            strcmp(state, enable ? x : hashx) != 0) {
                                printf("FAIL %ld: after %s, %s shows '%s' (%s)\n", i, enable ? "Enable" : "Bypass",
                                       cgroup, name[0] ? "?" : state, name);
                                failures++;
                                sd_bus_message_unref(reply);
                                break;
                        }
                        sd_bus_message_unref(reply);
                        continue;
                }
                if (!strcmp(mode, "foreign"))
                        want = BUS_ERROR_NOT_DELEGATED;
                else if (!strcmp(mode, "undelegated"))
                        want = BUS_ERROR_CONTROLLER_NOT_DELEGATED;
                else if (!strcmp(mode, "invalid"))
                        want = BUS_ERROR_INVALID_PATH;
                else {
                        fprintf(stderr, "bus-client: unknown load mode %s\n", mode);
                        return 2;
                }
                (void) call_simple(bus, i % 2 ? "BypassController" : "EnableController", cgroup, x, name,
                                   sizeof(name), NULL);
                if (strcmp(name, want) != 0) {
                        printf("FAIL %ld: %s %s: got '%s', want %s\n", i, cgroup, x, name, want);
                        failures++;
                        break;
                }
        }
        sd_bus_flush_close_unref(bus);
        if (failures)
                return 1;
        printf("ok %ld\n", count);
        return 0;
}

typedef struct ReloadAnswers {
        const char *want;       /* NULL: success */
        long answered, wrong;
} ReloadAnswers;

static int on_reload_answer(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        ReloadAnswers *a = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const char *got = e ? e->name : NULL;

        a->answered++;
        if ((got == NULL) != (a->want == NULL) || (got && strcmp(got, a->want) != 0)) {
                if (a->wrong++ == 0)
                        printf("FAIL %ld: got %s%s%s, want %s\n", a->answered, got ?: "success", e ? ": " : "",
                               e ? e->message : "", a->want ?: "success");
        }
        return 0;
}

static int do_reloads(long count, const char *want) {
        sd_bus *bus = NULL;
        ReloadAnswers a = { .want = want };
        int r;

        if (count < 1 || connect_bus(&bus) < 0)
                return 2;
        for (long i = 0; i < count; i++) {
                r = sd_bus_call_method_async(bus, NULL, DEST, PATH, IFACE, "Reload", on_reload_answer, &a, "");
                if (r < 0) {
                        fprintf(stderr, "bus-client: cannot send Reload: %s\n", strerror(-r));
                        sd_bus_flush_close_unref(bus);
                        return 2;
                }
        }
        r = sd_bus_flush(bus);
        printf("sent\n");
        fflush(stdout);
        while (r >= 0 && a.answered < count) {
                r = sd_bus_process(bus, NULL);
                if (r == 0)
                        r = sd_bus_wait(bus, UINT64_MAX);
        }
        sd_bus_flush_close_unref(bus);
        if (r < 0) {
                printf("FAIL: the bus: %s\n", strerror(-r));
                return 1;
        }
        if (a.wrong)
                return 1;
        printf("ok %ld\n", count);
        return 0;
}

int main(int argc, char *argv[]) {
        int i = 1;

        (void) sd_bus_error_add_map(cgbypass_bus_error_map);
        if (i < argc && !strcmp(argv[i], "--no-interactive")) {
                interactive = false;
                i++;
        }
        if (i >= argc)
                goto usage;
        if (!strcmp(argv[i], "call") && i + 1 < argc)
                return do_call(argv[i + 1], signature_of(argv[i + 1]), argv + i + 2, argc - i - 2);
        if (!strcmp(argv[i], "call-sig") && i + 2 < argc)
                return do_call(argv[i + 1], argv[i + 2], argv + i + 3, argc - i - 3);
        if (!strcmp(argv[i], "abandon") && i + 2 < argc)
                return do_abandon(strtol(argv[i + 1], NULL, 10), argv[i + 2], argv + i + 3, argc - i - 3);
        if (!strcmp(argv[i], "await") && argc - i == 5 &&
            (!strcmp(argv[i + 1], "mkdir") || !strcmp(argv[i + 1], "rmdir")))
                return do_await(argv[i + 1], argv[i + 2], argv[i + 3], strtol(argv[i + 4], NULL, 10));
        if (!strcmp(argv[i], "watch"))
                return do_watch(i + 1 < argc ? strtol(argv[i + 1], NULL, 10) : 60);
        if (!strcmp(argv[i], "load") && i + 4 < argc)
                return do_load(argv[i + 1], strtol(argv[i + 2], NULL, 10), argv[i + 3], argv[i + 4]);
        if (!strcmp(argv[i], "reloads") && (argc - i == 2 || argc - i == 3))
                return do_reloads(strtol(argv[i + 1], NULL, 10), argc - i == 3 ? argv[i + 2] : NULL);
usage:
        fprintf(stderr, "usage: bus-client [--no-interactive] call|call-sig|abandon|await|watch|load|reloads ...\n");
        return 2;
}
