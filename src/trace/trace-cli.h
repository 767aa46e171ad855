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
        CLI_ARG_VERSION,
        _CLI_ARG_NEXT,
};

/* the rows of a getopt_long() table for the options cli_model_option() reads */
#define CLI_MODEL_OPTIONS                                                       \
        { "rules", required_argument, NULL, CLI_ARG_RULES },                    \
        { "controllers", required_argument, NULL, CLI_ARG_CONTROLLERS },        \
        { "nonroot", no_argument, NULL, CLI_ARG_NONROOT }

/* the rows for --help and --version, which cli_getopt() reads */
#define CLI_HELP_OPTIONS                                                        \
        { "help", no_argument, NULL, 'h' },                                     \
        { "version", no_argument, NULL, CLI_ARG_VERSION }

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

/**
 * cli_getopt() - getopt_long() (opterr = 0) past what the trace programs
 * share: cli_model_option()'s options, --help, --version and an unknown option
 * @options: the table, with CLI_MODEL_OPTIONS and CLI_HELP_OPTIONS
 * @o: the model's options, as cli_model_option() sets them
 * @help: prints the program's help
 * @prog: the program's name, for --version
 * @ret_status: -1, or the exit status the program ends with now (0 after
 *              --help and --version)
 *
 * Return: the program's own next option, or -1 (see @ret_status).
 */
int cli_getopt(int argc, char *argv[], const struct option *options, TraceModelOptions *o, void (*help)(void),
               const char *prog, int *ret_status);

/* --length: 1 to 100000 steps. Return: 0, or CLI_EXIT_USAGE (printed). */
int cli_parse_length(const char *arg, uint64_t *ret);
