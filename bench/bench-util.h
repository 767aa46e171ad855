/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What bench-apply and bench-startup share: the command line, the tree of
 * cgroups both build below a scratch cgroup, the controller enabled at the
 * mount's root for the run, and the small tools around them. Errors end the
 * program (bench_die()) with its name in front: a bench has no caller to tell.
 */

#include <stdbool.h>
#include <stddef.h>

#include "cgbypass/macro.h"

typedef struct Node {
        char *path;             /* relative to the scratch cgroup */
        bool inner;             /* has children */
} Node;

typedef struct BenchArgs {
        const char *daemon, *mount, *ctrl;
        unsigned rounds;
        bool sim;
        size_t sizes[8], n_sizes;
} BenchArgs;

double bench_now(void);
int bench_write_file(const char *path, const char *value);
_Noreturn void bench_die(const char *what);
/* snprintf() that refuses to cut: a cut path would time the wrong files */
_printf_(3, 4) void bench_fmt(char *buf, size_t size, const char *format, ...);
void bench_rm_rf(const char *path);
/* sorts @v */
double bench_median(double *v, unsigned n);

/* Fills @a from argv after the daemon's path, past the defaults in @a: --mount, --controller, @rounds_opt
 * (1 to @max_rounds), --sim where @sim_ok, then sizes. Returns 0, or the exit status for a usage error. */
int bench_parse_args(int argc, char *argv[], BenchArgs *a, const char *rounds_opt, unsigned max_rounds, bool sim_ok);

/* Enables @ctrl at @mount's root unless it is; at exit it is disabled again (bench_restore_root()). */
int bench_enable_root(const char *mount, const char *ctrl);
void bench_restore_root(void);

/* About @n cgroups, fan-out for depth 4, breadth first so parents come before children. */
Node *bench_make_tree(size_t n, size_t *ret_n);
void bench_free_tree(Node *nodes, size_t n);
/* the tree below @scratch with "+@ctrl" in every inner cgroup's subtree_control, and at @scratch */
void bench_make_cgroups(const char *scratch, const char *ctrl, const Node *nodes, size_t n);
/* waits (up to 30 s) until no removed cgroup below @scratch is still being freed by the kernel */
void bench_settle_cgroups(const char *scratch);
/* bottom-up rmdir (a cgroup's files go with the directory), then "-@ctrl" at @scratch, then settles */
void bench_remove_cgroups(const char *scratch, const Node *nodes, size_t n, const char *ctrl);
/* cgbypassd's configuration of the tree */
void bench_write_config(const char *conf, const char *backend, const char *ctrl, const Node *nodes, size_t n);
