/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace-cli.h"

int cli_usage_error(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "%s: ", program_invocation_short_name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputs(" (see --help)\n", stderr);
        return CLI_EXIT_USAGE;
}

int cli_parse_u64(const char *s, uint64_t *ret) {
        char *end;

        if (!*s || *s == '-')
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 0);
        if (errno || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int cli_model_option(int c, const char *arg, TraceModelOptions *o) {
        _cleanup_free_ char *bad = NULL;
        int r;

        switch (c) {
        case CLI_ARG_RULES:
                o->rules = rules_from_string(arg);
                if (o->rules < 0) {
                        (void) cli_usage_error("unknown rule set '%s' (bypass or stock)", arg);
                        return -EINVAL;
                }
                return 1;
        case CLI_ARG_CONTROLLERS:
                r = controller_mask_from_list(arg, &o->builtin, &bad);
                if (r == -ENOMEM) {
                        fprintf(stderr, "%s: %s\n", program_invocation_short_name, strerror(-r));
                        return r;
                }
                if (r < 0) {
                        (void) cli_usage_error("unknown controller '%s' in --controllers", strempty(bad));
                        return -EINVAL;
                }
                return 1;
        case CLI_ARG_NONROOT:
                o->nonroot = true;
                return 1;
        default:
                return 0;
        }
}

int cli_getopt(int argc, char *argv[], const struct option *options, TraceModelOptions *o, void (*help)(void),
               const char *prog, int *ret_status) {
        int c, r;

        *ret_status = -1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                r = cli_model_option(c, optarg, o);
                if (r < 0) {
                        *ret_status = r == -EINVAL ? CLI_EXIT_USAGE : 1;
                        return -1;
                }
                if (r > 0)
                        continue;
                switch (c) {
                case 'h':
                        help();
                        *ret_status = 0;
                        return -1;
                case CLI_ARG_VERSION:
                        printf("%s " PROJECT_VERSION "\n", prog);
                        *ret_status = 0;
                        return -1;
                case '?':
                        *ret_status = cli_usage_error("unknown option or missing argument in '%s'", argv[optind - 1]);
                        return -1;
                default:
                        return c;
                }
        }
        return -1;
}

int cli_parse_length(const char *arg, uint64_t *ret) {
        if (cli_parse_u64(arg, ret) < 0 || *ret == 0 || *ret > 100000)
                return cli_usage_error("bad --length '%s' (1 to 100000)", arg);
        return 0;
}
