/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgbypassctl: ask cgbypassd, over D-Bus, about the controllers' state and to change it. */
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>

#include "cgbypass/log.h"
#include "client.h"
#include "ctl-suggest.h"
#include "verbs.h"

#define EXIT_USAGE 2

static void help(void) {
        printf("Usage: cgbypassctl [OPTIONS...] COMMAND ...\n"
               "\n"
               "Query or change, through cgbypassd, which cgroups use a controller of their own\n"
               "and which bypass it, sharing their parent's.\n"
               "\n"
               "Commands:\n");
        int width = (int) strlen("help [COMMAND]");
        for (size_t i = 0; i < n_verbs; i++) {
                int w = (int) (strlen(verbs[i].name) + (*verbs[i].args ? 1 + strlen(verbs[i].args) : 0));
                if (w > width)
                        width = w;
        }
        for (size_t i = 0; i < n_verbs; i++) {
                char head[64];
                const char *h = verbs[i].help;

                (void) snprintf(head, sizeof(head), "%s%s%s", verbs[i].name, *verbs[i].args ? " " : "",
                                verbs[i].args);
                /* help texts may span lines; continuation lines are indented to the column */
                for (bool first = true; *h; first = false) {
                        size_t n = strcspn(h, "\n");

                        printf("  %-*s  %.*s\n", width, first ? head : "", (int) n, h);
                        h += n + (h[n] == '\n');
                }
        }
        printf("  %-*s  %s\n", width, "help [COMMAND]", "Show this help, or what COMMAND does (as COMMAND --help)");
        printf("\n"
               "Options:\n"
               "  -h --help                 Show this help\n"
               "     --version              Show the version\n"
               "     --bus=system|session   Talk to the daemon on this bus (default: system)\n"
               "     --json                 Print JSON for programs (the schema is in\n"
               "                            cgbypassctl(1), JSON OUTPUT)\n"
               "     --no-ask-password      Do not ask for a password to authorize a change\n"
               "     --full                 tree: list every cgroup, fold no run of siblings\n"
               "     --no-create            delegate: the cgroup must exist already\n"
               "     --lifetime=cgroup|persistent\n"
               "                            delegate: end the delegation with the cgroup (the\n"
               "                            default), or only by 'undelegate'\n"
               "\n"
               "CGROUP is an absolute path below the root of the cgroup2 mount, as in\n"
               "/proc/PID/cgroup (/work.slice/a). Changes need root, polkit's consent, or a\n"
               "delegation of the subtree and controller to the caller.\n"
               "\n"
               "Exit status:\n"
               "  0  success\n"
               "  1  the daemon refused the request (its error is printed as\n"
               "     \"cgbypassctl: MESSAGE (org.cgbypass1.Error.NAME)\"), or could not be reached\n"
               "  2  bad usage\n"
               "\n"
               "See cgbypassctl(1) and cgbypassd(8).\n");
}

typedef struct Arguments {
        char **positional;      /* the verb and its arguments, in order */
        size_t n_positional;
        bool help;
        bool version;
        const char *delegate_option;    /* the first option that only 'delegate' takes */
} Arguments;

static int parse_lifetime(Client *c, const char *value) {
        if (streq(value, "cgroup"))
                c->delegation_flags &= ~CGBYPASS_DELEGATION_PERSISTENT;
        else if (streq(value, "persistent"))
                c->delegation_flags |= CGBYPASS_DELEGATION_PERSISTENT;
        else {
                log_error("--lifetime takes 'cgroup' or 'persistent', not '%s'.", value);
                return -EINVAL;
        }
        return 0;
}

static int parse_bus(Client *c, const char *value) {
        c->bus_type = bus_type_from_string(value);
        if (c->bus_type < 0) {
                log_error("--bus takes 'system' or 'session', not '%s'.", value);
                return -EINVAL;
        }
        return 0;
}

/* argv[*i] as @name=VALUE, or @name with VALUE the next argument (*i moves on to it): 1 and *ret_value;
 * 0 if it is another option; -EINVAL if VALUE is missing (@values: what it may be, for the message) */
static int option_value(int argc, char *argv[], int *i, const char *name, const char *values, const char **ret_value) {
        size_t l = strlen(name);
        const char *eq = argv[*i] + l;

        if (strncmp(argv[*i], name, l) != 0 || (*eq != '=' && *eq != '\0'))
                return 0;
        if (*eq == '=') {
                *ret_value = eq + 1;
                return 1;
        }
        if (*i + 1 >= argc) {
                log_error("Option '%s' needs a value: %s.", name, values);
                return -EINVAL;
        }
        *ret_value = argv[++*i];
        return 1;
}

/*
 * Options may come before or after the verb, as in systemctl. getopt_long()
 * does not fit: a change such as "-memory" after 'set' is an argument, not
 * an option, so only long options are recognized after the verb ("--" ends them).
 */
static int parse_argv(int argc, char *argv[], Client *c, Arguments *a) {
        bool options = true;
        const char *value;
        int r;

        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i];

                if (!options || arg[0] != '-' || arg[1] == '\0') {
                        a->positional[a->n_positional++] = argv[i];
                        continue;
                }
                if (streq(arg, "--")) {
                        options = false;
                } else if (streq(arg, "-h") || streq(arg, "--help")) {
                        a->help = true;
                } else if (streq(arg, "--version")) {
                        a->version = true;
                } else if (streq(arg, "--json")) {
                        c->json = true;
                } else if (streq(arg, "--no-ask-password")) {
                        c->ask_password = false;
                } else if (streq(arg, "--full")) {
                        c->full = true;
                } else if (streq(arg, "--no-create")) {
                        c->delegation_flags |= CGBYPASS_DELEGATION_NO_CREATE;
                        a->delegate_option = a->delegate_option ?: "--no-create";
                } else if ((r = option_value(argc, argv, &i, "--lifetime", "cgroup or persistent", &value))) {
                        if (r < 0 || (r = parse_lifetime(c, value)) < 0)
                                return r;
                        a->delegate_option = a->delegate_option ?: "--lifetime";
                } else if ((r = option_value(argc, argv, &i, "--bus", "system or session", &value))) {
                        if (r < 0 || (r = parse_bus(c, value)) < 0)
                                return r;
                } else if (arg[1] != '-' && a->n_positional > 0) {
                        /* a change ("-memory"), or a path or name the checks will judge */
                        a->positional[a->n_positional++] = argv[i];
                } else {
                        log_error("Unknown option '%s'; see 'cgbypassctl --help'.", arg);
                        return -EINVAL;
                }
        }
        return 0;
}

/* the verb @name, or NULL after logging that there is none (and which was meant, if clear) */
static const Verb *find_verb(const char *name) {
        const Verb *v = verb_find(name);
        const char *names[64] = { "help" }, *close;

        if (v)
                return v;
        for (size_t i = 0; i < n_verbs && i + 1 < ELEMENTSOF(names); i++)
                names[i + 1] = verbs[i].name;
        close = suggest_closest(name, names, ELEMENTSOF(names));
        if (close)
                log_error("Unknown command '%s'; did you mean '%s'?", name, close);
        else
                log_error("Unknown command '%s'; see 'cgbypassctl --help'.", name);
        return NULL;
}

/* 'help', 'help VERB', 'VERB --help' */
static int run_help(char **args, size_t n_args) {
        const Verb *v;

        if (n_args == 0) {
                help();
                return EXIT_SUCCESS;
        }
        if (n_args > 1) {
                log_error("Too many arguments for 'help'; usage: cgbypassctl help [COMMAND]");
                return EXIT_USAGE;
        }
        if (streq(args[0], "help")) {
                printf("Usage: cgbypassctl help [COMMAND]\n\n"
                       "Show the commands and options, or what COMMAND does and takes.\n");
                return EXIT_SUCCESS;
        }
        v = find_verb(args[0]);
        if (!v)
                return EXIT_USAGE;
        verb_print_help(v);
        return EXIT_SUCCESS;
}

static int dispatch(Client *c, const Arguments *a) {
        char **args = a->positional;
        size_t n_args = a->n_positional;
        const Verb *v;
        int r;

        if (n_args == 0) {
                log_error("Missing command; see 'cgbypassctl --help'.");
                return EXIT_USAGE;
        }
        if (streq(args[0], "help"))
                return run_help(args + 1, n_args - 1);
        v = find_verb(args[0]);
        if (!v)
                return EXIT_USAGE;
        if (a->delegate_option && !streq(v->name, "delegate")) {
                log_error("Option '%s' is for 'delegate', not '%s'.", a->delegate_option, v->name);
                return EXIT_USAGE;
        }
        if (n_args - 1 < v->min_args || n_args - 1 > v->max_args) {
                log_error("Too %s arguments for '%s'; usage: cgbypassctl %s%s%s", n_args - 1 < v->min_args ? "few" : "many",
                          v->name, v->name, *v->args ? " " : "", v->args);
                return EXIT_USAGE;
        }
        if (v->check && v->check(args + 1, n_args - 1) < 0)
                return EXIT_USAGE;

        r = v->flags & VERB_CHANGES ? client_start_agent(c) : 0;
        if (r >= 0)
                r = v->run(c, args + 1, n_args - 1);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int run(int argc, char *argv[]) {
        Client c = { .bus_type = BUS_SYSTEM, .ask_password = true };
        _cleanup_free_ char **positional = NULL;
        Arguments a = {};
        int r;

        /* libcgbypass registered the daemon's error names with sd-bus when it was loaded */
        (void) setlocale(LC_ALL, "");
        c.tty = isatty(STDOUT_FILENO);
        c.utf8 = c.tty && streq(nl_langinfo(CODESET), "UTF-8");

        positional = calloc((size_t) argc, sizeof(char *));
        if (!positional) {
                log_oom();
                return EXIT_FAILURE;
        }
        a.positional = positional;
        if (parse_argv(argc, argv, &c, &a) < 0)
                return EXIT_USAGE;
        if (a.help) {
                /* 'VERB --help' is 'help VERB' */
                if (a.n_positional > 0 && !streq(a.positional[0], "help"))
                        return run_help(a.positional, 1);
                help();
                return EXIT_SUCCESS;
        }
        if (a.version) {
                printf("cgbypassctl " PROJECT_VERSION "\n");
                return EXIT_SUCCESS;
        }

        r = dispatch(&c, &a);
        client_done(&c);
        return r;
}

int main(int argc, char *argv[]) {
        int r;

        log_setup("cgbypassctl");
        r = run(argc, argv);
        /* a full disk or a closed pipe shows only now, when the buffer goes out */
        if (fflush(stdout) != 0 || ferror(stdout)) {
                if (r == EXIT_SUCCESS)
                        (void) log_error_errno(errno ?: EIO, "Failed to write the output: %m");
                return EXIT_FAILURE;
        }
        return r;
}
