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
