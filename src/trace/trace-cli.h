/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What cgbypass-trace, cgbypass-tracegen and cgbypass-conform share on their
 * command lines: the model's options and the words of a usage error. Each
 * exits 2 for bad usage.
 */

#include <getopt.h>
#include <stdint.h>

#include "cgbypass/macro.h"
#include "cgbypass/trace.h"

#define CLI_EXIT_USAGE 2

/* the first value a program's own options may use after the shared ones */
enum {
        CLI_ARG_RULES = 0x100,
        CLI_ARG_CONTROLLERS,
        CLI_ARG_NONROOT,
        _CLI_ARG_NEXT,
};

/* the rows of a getopt_long() table for the options cli_model_option() reads */
#define CLI_MODEL_OPTIONS                                                       \
        { "rules", required_argument, NULL, CLI_ARG_RULES },                    \
        { "controllers", required_argument, NULL, CLI_ARG_CONTROLLERS },        \
        { "nonroot", no_argument, NULL, CLI_ARG_NONROOT }

/* "PROGRAM: MESSAGE (see --help)" on stderr. Return: CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) _printf_(1, 2);

/* An unsigned number as strtoull() reads it with base 0, without a sign. Return: 0 or -EINVAL. */
int cli_parse_u64(const char *s, uint64_t *ret);

/**
 * cli_model_option() - --rules, --controllers or --nonroot into @o
 * @c: what getopt_long() returned
 * @arg: its optarg
 *
 * Return: 1 when @c was one of them; 0 when it is another option; -EINVAL
 * for a value that is not one (the usage error printed); -ENOMEM (printed).
 */
int cli_model_option(int c, const char *arg, TraceModelOptions *o);
