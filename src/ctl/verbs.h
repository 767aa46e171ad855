/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The verbs of cgbypassctl. A verb's check runs before anything talks to
 * the bus and rejects bad usage (exit 2) with one logged line; its run talks
 * to the daemon and logs its one line on failure (exit 1).
 */

#include <stddef.h>

#include "client.h"

typedef enum VerbFlags {
        VERB_CHANGES = 1u << 0,         /* may need polkit: start a password agent first */
} VerbFlags;

typedef struct Verb {
        const char *name;
        const char *args;               /* for --help and usage errors: "CGROUP CONTROLLER" */
        size_t min_args, max_args;      /* after the verb; SIZE_MAX: no limit */
        VerbFlags flags;
        int (*check)(char **args, size_t n_args);       /* NULL: nothing to check */
        int (*run)(Client *c, char **args, size_t n_args);
        const char *help;               /* one line for --help (continued on a second, if need be) */
        const char *details;            /* the paragraph of 'VERB --help' */
} Verb;

extern const Verb verbs[];
extern const size_t n_verbs;

/* 'cgbypassctl VERB --help': usage, summary, details. */
void verb_print_help(const Verb *v);

/* NULL if there is no verb @name. */
const Verb *verb_find(const char *name);
