/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgbypass-oci-hook: an OCI runtime hook. At createRuntime (or prestart,
 * poststart) it makes a run-time delegation (lifetime "cgroup") of the
 * container's cgroup to the container's owner and re-enables the
 * controllers named by the annotation org.cgbypass1.enable there; at
 * poststop it ends the delegation if the daemon has not already ended it
 * with the cgroup. See cgbypass-oci-hook(8).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgbypass/cgbypass.h"
#include "cgbypass/cgpath.h"
#include "cgbypass/macro.h"
#include "hook-request.h"
#include "oci-spec.h"

#define PROG "cgbypass-oci-hook"

typedef enum HookStage {
        STAGE_SETUP,            /* createRuntime, prestart, poststart */
        STAGE_TEARDOWN,         /* poststop */
        _STAGE_INVALID = -EINVAL,
} HookStage;

typedef struct Args {
        HookStage stage;
        bool stage_given, help, version;
} Args;

static void help(void) {
        printf("Usage: " PROG " [--stage STAGE] < STATE\n"
               "\n"
               "An OCI runtime hook: reads the container's state on standard input and, for\n"
               "a container annotated org.cgbypass1.enable=CONTROLLER[,CONTROLLER...], asks\n"
               "cgbypassd to delegate the container's cgroup to its owner (a run-time\n"
               "delegation that ends with the cgroup) and to re-enable those controllers\n"
               "there. For a container without the annotation, when run as root, it only\n"
               "asks cgbypassd, if it runs, to reload, which puts back cgbypassd's policy\n"
               "where the runtime rewrote the ancestors' cgroup.subtree_control; it never\n"
               "fails such a container (exit 0).\n"
               "\n"
               "Options:\n"
               "  -h --help          Show this help\n"
               "     --version       Show the version\n"
               "     --stage STAGE   The hook stage it runs in: createRuntime, prestart or\n"
               "                     poststart (delegate and enable), poststop (end the\n"
               "                     delegation); default: poststop when the state's status\n"
               "                     is \"stopped\", else createRuntime\n"
               "\n"
               "Annotations:\n"
               "  org.cgbypass1.enable=cpu,io   the controllers (required to do anything)\n"
               "  org.cgbypass1.owner=USER|UID  the owner (default: process.user.uid of the\n"
               "                                bundle's config.json, through its uidMappings)\n"
               "\n"
               "The cgroup is linux.cgroupsPath of the bundle's config.json when it is an\n"
               "absolute path, else the cgroup of the container's process (state pid).\n"
               "\n"
               "See cgbypass-oci-hook(8).\n");
}

static HookStage stage_from_string(const char *s) {
        if (streq(s, "createRuntime") || streq(s, "prestart") || streq(s, "poststart"))
                return STAGE_SETUP;
        if (streq(s, "poststop"))
                return STAGE_TEARDOWN;
        return _STAGE_INVALID;
}

static int parse_args(int argc, char **argv, Args *a) {
        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i], *value = NULL;

                if (streq(arg, "-h") || streq(arg, "--help"))
                        a->help = true;
                else if (streq(arg, "--version"))
                        a->version = true;
                else if (streq(arg, "--stage") || startswith(arg, "--stage=")) {
                        value = arg[7] == '=' ? arg + 8 : (i + 1 < argc ? argv[++i] : NULL);
                        if (!value) {
                                fprintf(stderr, PROG ": option '--stage' needs a value\n");
                                return -EINVAL;
                        }
                        a->stage = stage_from_string(value);
                        if (a->stage < 0) {
                                fprintf(stderr, PROG ": unknown or unsupported stage '%s' (createRuntime, prestart, "
                                        "poststart or poststop; a createContainer or startContainer hook runs in the "
                                        "container, without the system bus)\n", value);
                                return -EINVAL;
                        }
                        a->stage_given = true;
                } else {
                        fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n", arg);
                        return -EINVAL;
                }
        }
        return 0;
}

/* The whole of @f, up to @max bytes, NUL-terminated. */
static int read_all(FILE *f, size_t max, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, cap = 0;

        for (;;) {
                size_t k;

                if (n + 4096 + 1 > cap) {
                        char *p;

                        cap = cap ? cap * 2 : 8192;
                        p = realloc(buf, cap);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                }
                k = fread(buf + n, 1, cap - n - 1, f);
                n += k;
                if (n > max)
                        return -EFBIG;
                if (k == 0)
                        break;
        }
        if (ferror(f))
                return -EIO;
        if (memchr(buf, '\0', n))
                return -EBADMSG;
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

/* The cgroup2 path of @pid ("0::PATH" in /proc/PID/cgroup). */
static int pid_cgroup(pid_t pid, char **ret) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        char path[64];
        size_t cap = 0;
        ssize_t n;

        (void) snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while ((n = getline(&line, &cap, f)) > 0) {
                if (line[n - 1] == '\n')
                        line[n - 1] = '\0';
                if (startswith(line, "0::")) {
                        *ret = strdup(line + 3);
                        return *ret ? 0 : -ENOMEM;
                }
        }
        return -ENODATA;
}

typedef struct Hook {
        OciState state;
        OciConfig config;
        bool has_config;
        HookRequest req;
        char *cgroup;
        sd_bus *bus;
} Hook;

static void hook_done(Hook *h) {
        oci_state_done(&h->state);
        oci_config_done(&h->config);
        free(h->cgroup);
        h->bus = sd_bus_flush_close_unref(h->bus);
}

/* Prints one line for the runtime's log, prefixed with the container, and returns -EINVAL or @r. */
_printf_(3, 4) static int fail(const Hook *h, int r, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, PROG ": ");
        if (h && h->state.id)
                fprintf(stderr, "container '%s': ", h->state.id);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return r < 0 ? r : -EINVAL;
}

static int bus_fail(const Hook *h, int r, const sd_bus_error *e, const char *what) {
        if (sd_bus_error_is_set(e))
                return fail(h, r, "%s: %s (%s)", what, e->message ? e->message : e->name, e->name);
        return fail(h, r, "%s: %s", what, strerror(-r));
}

static int load_config(Hook *h, HookStage stage) {
        _cleanup_free_ char *path = NULL, *text = NULL, *why = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        int r;

        if (asprintf(&path, "%s/config.json", h->state.bundle) < 0)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f) {
                r = -errno;
                /* a bundle may be gone by poststop; the state's annotations still say what to undo */
                if (r == -ENOENT && stage == STAGE_TEARDOWN && h->state.has_annotations)
                        return 0;
                return fail(h, r, "cannot read '%s': %s", path, strerror(-r));
        }
        r = read_all(f, OCI_CONFIG_MAX, &text);
        if (r < 0)
                return fail(h, r, "cannot read '%s': %s", path,
                            r == -EFBIG ? "larger than 16 MiB" : r == -EBADMSG ? "contains a NUL byte" : strerror(-r));
        r = oci_config_parse(text, &h->config, &why);
        if (r < 0)
                return fail(h, r, "bundle '%s': %s", h->state.bundle, why ? why : strerror(-r));
        h->has_config = true;
        return 0;
}

static int find_cgroup(Hook *h, bool required) {
        const char *cp = h->has_config ? h->config.cgroups_path : NULL;
        const char *why = NULL;
        int r;

        if (cp && cp[0] == '/') {
                h->cgroup = strdup(cp);
                if (!h->cgroup)
                        return -ENOMEM;
        } else if (h->state.pid > 0) {
                /* relative, a systemd "slice:prefix:name", or none: the runtime chose; the process knows */
                r = pid_cgroup(h->state.pid, &h->cgroup);
                if (r < 0)
                        return fail(h, r, "cannot read the cgroup of the container's process %d: %s",
                                    (int) h->state.pid, strerror(-r));
        } else {
                if (!required)
                        return 0;
                return fail(h, -EINVAL, "the state has no pid and linux.cgroupsPath is %s%s%s: cannot tell the "
                            "container's cgroup", cp ? "'" : "", cp ? cp : "not set", cp ? "' (not absolute)" : "");
        }
        if (cgpath_verify(h->cgroup, CGPATH_MANAGED, &why) < 0)
                return fail(h, -EINVAL, "the container's cgroup '%s' %s", h->cgroup, why ? why : "is not valid");
        if (cgpath_is_root(h->cgroup))
                return fail(h, -EINVAL, "the container's cgroup is the root cgroup, which cannot be delegated");
        return 0;
}

static int find_owner(Hook *h, uid_t *ret) {
        int r;

        if (h->req.owner) {
                r = hook_owner_resolve(h->req.owner, ret);
                if (r == -ESRCH)
                        return fail(h, r, "annotation " HOOK_ANNOTATION_OWNER ": no such user '%s'", h->req.owner);
                if (r < 0)
                        return fail(h, r, "annotation " HOOK_ANNOTATION_OWNER ": '%s' is neither a user name nor a "
                                    "uid", h->req.owner);
                return 0;
        }
        r = h->has_config ? oci_config_host_uid(&h->config, ret) : -ENOENT;
        if (r == -ENOENT)
                return fail(h, r, "the config has no process.user.uid; say who owns the cgroup with the annotation "
                            HOOK_ANNOTATION_OWNER);
        if (r == -ERANGE)
                return fail(h, r, "process.user.uid %u is in none of linux.uidMappings", h->config.uid);
        return r;
}

static int open_bus(Hook *h) {
        int r;

        r = sd_bus_open_system(&h->bus);
        if (r < 0)
                return fail(h, r, "cannot connect to the system bus: %s", strerror(-r));
        return 0;
}

#define CONTROLLER_ABSENT 2

/* Whether @cgroup has @name enabled (1), bypassed by its parent (0, "#name"), or not at all (CONTROLLER_ABSENT). */
static int controller_state(Hook *h, const char *name) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *key;
        int r, found = CONTROLLER_ABSENT;

        r = cgbypass_get_cgroup(h->bus, h->cgroup, &reply, &e);
        if (r < 0)
                return bus_fail(h, r, &e, "GetCgroup");
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read(reply, "s", &key);
                if (r < 0)
                        break;
                if (!streq(key, "controllers")) {
                        r = sd_bus_message_skip(reply, "v");
                } else {
                        r = sd_bus_message_enter_container(reply, 'v', "as");
                        if (r >= 0)
                                r = sd_bus_message_enter_container(reply, 'a', "s");
                        while (r >= 0 && (r = sd_bus_message_read(reply, "s", &key)) > 0) {
                                if (streq(key, name))
                                        found = 1;
                                else if (key[0] == '#' && streq(key + 1, name))
                                        found = 0;
                        }
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0)
                return fail(h, r, "cannot read GetCgroup's reply: %s", strerror(-r));
        return found;
}

/* Every asked controller is enabled or bypassed by the parent; @ret_todo: the bypassed ones. */
static int check_controllers(Hook *h, CgMask *ret_todo) {
        CgMask todo = 0;

        for (Controller c = 0; c < _CONTROLLER_MAX; c++) {
                const char *name = controller_to_string(c);
                int r;

                if (!(h->req.controllers & CGMASK(c)))
                        continue;
                r = controller_state(h, name);
                if (r == CONTROLLER_ABSENT)
                        return fail(h, -ENOENT, "cgroup '%s' cannot have '%s': its parent neither enables nor bypasses "
                                    "it (make the parent's subtree_control say '#%s' in cgbypassd's configuration)",
                                    h->cgroup, name, name);
                if (r < 0)
                        return r;
                if (r == 0)
                        todo |= CGMASK(c);
        }
        *ret_todo = todo;
        return 0;
}

/* Re-enables @todo; on a refusal, bypasses again what it enabled. */
static int enable_controllers(Hook *h, uid_t uid, CgMask todo) {
        CgMask done = 0;
        int r = 0;

        for (Controller c = 0; c < _CONTROLLER_MAX && r >= 0; c++) {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                const char *name = controller_to_string(c);

                if (!(todo & CGMASK(c)))
                        continue;
                r = cgbypass_enable_controller(h->bus, h->cgroup, name, &e);
                if (r >= 0) {
                        done |= CGMASK(c);
                        continue;
                }
                if (uid == 0 && sd_bus_error_has_name(&e, CGBYPASS_ERROR_NOT_MANAGED))
                        r = fail(h, r, "EnableController %s %s: %s (%s); the container's owner is root, and cgbypassd "
                                 "delegates to unprivileged users only: name one with " HOOK_ANNOTATION_OWNER,
                                 h->cgroup, name, e.message, e.name);
                else
                        r = fail(h, r, "EnableController %s %s: %s (%s)", h->cgroup, name,
                                 e.message ? e.message : strerror(-r), e.name ? e.name : "");
        }
        if (r < 0)
                for (Controller c = 0; c < _CONTROLLER_MAX; c++)
                        if (done & CGMASK(c))
                                (void) cgbypass_bypass_controller(h->bus, h->cgroup, controller_to_string(c), NULL);
        return r;
}

static int setup(Hook *h) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *list = NULL;
        _cleanup_strv_free_ char **strv = NULL;
        bool delegated = false;
        CgMask todo = 0;
        size_t n = 0;
        uid_t uid;
        int r;

        r = find_cgroup(h, true);
        if (r < 0)
                return r;
        r = find_owner(h, &uid);
        if (r < 0)
                return r;
        r = open_bus(h);
        if (r < 0)
                return r;

        /* root owns every cgroup already: a delegation to it would only be a record */
        if (uid != 0) {
                strv = calloc(_CONTROLLER_MAX + 1, sizeof(char *));
                if (!strv)
                        return -ENOMEM;
                for (Controller c = 0; c < _CONTROLLER_MAX; c++)
                        if (h->req.controllers & CGMASK(c)) {
                                strv[n] = strdup(controller_to_string(c));
                                if (!strv[n++])
                                        return -ENOMEM;
                        }
                /* the runtime made the cgroup; one that is missing is a mistake, not something to create */
                r = cgbypass_add_delegation(h->bus, h->cgroup, (uint32_t) uid, strv, CGBYPASS_DELEGATION_NO_CREATE,
                                            &e);
                if (r < 0) {
                        _cleanup_free_ char *what = NULL;

                        if (asprintf(&what, "AddDelegation %s to uid %u", h->cgroup, (unsigned) uid) < 0)
                                return -ENOMEM;
                        return bus_fail(h, r, &e, what);
                }
                delegated = true;
        }
        /* After AddDelegation, which re-reads the hierarchy: crun's cgroupfs manager writes
         * "+cpu +io ..." into every ancestor's subtree_control before this hook runs, and
         * cgbypassd puts its configured bypass back at that refresh (seen in the VM). */
        r = check_controllers(h, &todo);
        if (r >= 0)
                r = enable_controllers(h, uid, todo);
        if (r < 0 && delegated) {
                /* the start fails: leave no delegation behind, even if the runtime keeps the cgroup */
                sd_bus_error_free(&e);
                if (cgbypass_remove_delegation(h->bus, h->cgroup, &e) < 0)
                        (void) bus_fail(h, -EIO, &e, "RemoveDelegation, after the failure above");
        }
        return r;
}

static int teardown(Hook *h) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = find_cgroup(h, false);
        if (r < 0)
                return r;
        if (!h->cgroup)
                return 0;       /* nothing names it; lifetime "cgroup" ends the delegation with the cgroup */
        r = open_bus(h);
        if (r < 0)
                return r;
        r = cgbypass_remove_delegation(h->bus, h->cgroup, &e);
        /* the usual case: the daemon saw the cgroup go and ended the delegation itself */
        if (r < 0 && sd_bus_error_has_name(&e, CGBYPASS_ERROR_NO_SUCH_DELEGATION))
                return 0;
        if (r < 0)
                return bus_fail(h, r, &e, "RemoveDelegation");
        return 0;
}

/*
 * A container that asks for nothing may still sit below a cgroup cgbypassd manages, whose
 * cgroup.subtree_control crun's cgroupfs manager has just overwritten: it writes every
 * controller the root offers into each ancestor of the container's cgroup. Reads answer from
 * cgbypassd's model and do not see such a write; Reload is the documented refresh after
 * another writer (it re-reads the hierarchy and puts the policy back). Only as root: a
 * rootless runtime cannot write those ancestors, and must not wait on a polkit prompt. Best
 * effort and silent: such a container never fails for cgbypassd, nor starts it when it is not
 * running.
 */
static int look(Hook *h) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *cp = h->has_config ? h->config.cgroups_path : NULL;
        int r, running = 0;

        if (geteuid() != 0)
                return 0;
        if (cp && cp[0] == '/')
                h->cgroup = strdup(cp);
        else if (h->state.pid <= 0 || pid_cgroup(h->state.pid, &h->cgroup) < 0)
                return 0;
        if (!h->cgroup)
                return -ENOMEM;
        if (cgpath_verify(h->cgroup, CGPATH_MANAGED, NULL) < 0 || cgpath_is_root(h->cgroup))
                return 0;
        if (sd_bus_open_system(&h->bus) < 0)
                return 0;
        r = sd_bus_call_method(h->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameHasOwner", NULL, &reply, "s", CGBYPASS_BUS_NAME);
        if (r < 0 || sd_bus_message_read(reply, "b", &running) < 0 || !running)
                return 0;
        (void) cgbypass_reload(h->bus, NULL);
        return 0;
}

static int run(const Args *a) {
        _cleanup_(hook_done) Hook h = {};
        _cleanup_free_ char *text = NULL, *why = NULL;
        HookStage stage;
        int r;

        r = read_all(stdin, OCI_STATE_MAX, &text);
        if (r < 0)
                return fail(NULL, r, "cannot read the container state on standard input: %s",
                            r == -EFBIG ? "larger than 1 MiB" : r == -EBADMSG ? "contains a NUL byte" : strerror(-r));
        r = oci_state_parse(text, &h.state, &why);
        if (r < 0)
                return fail(NULL, r, "%s", why ? why : strerror(-r));
        stage = a->stage_given ? a->stage : streq_ptr(h.state.status, "stopped") ? STAGE_TEARDOWN : STAGE_SETUP;

        r = load_config(&h, stage);
        if (r < 0)
                return r;
        /* the runtime copies config.json's annotations into the state; a state without them is an older runtime's */
        if (h.state.has_annotations)
                r = hook_request_parse(h.state.annotations, h.state.n_annotations, &h.req, &why);
        else if (h.has_config)
                r = hook_request_parse(h.config.annotations, h.config.n_annotations, &h.req, &why);
        if (r < 0)
                return fail(&h, r, "%s", why ? why : strerror(-r));
        if (h.req.controllers == 0)
                return stage == STAGE_SETUP ? look(&h) : 0;

        return stage == STAGE_SETUP ? setup(&h) : teardown(&h);
}

int main(int argc, char **argv) {
        Args a = {};
        int r;

        if (parse_args(argc, argv, &a) < 0)
                return 2;
        if (a.help) {
                help();
                return 0;
        }
        if (a.version) {
                printf(PROG " " PROJECT_VERSION "\n");
                return 0;
        }
        r = run(&a);
        if (r == -ENOMEM)
                fprintf(stderr, PROG ": out of memory\n");
        return r < 0 ? 1 : 0;
}
