/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How fast the model answers, and how much memory a cgroup costs.
 *
 * Trees of about 1k, 10k and 100k cgroups (fan-out 10). Every inner cgroup
 * enables cpu and pids and bypasses memory, so the leaves can switch pids in
 * their cgroup.subtree_control and memory in their cgroup.controllers. A
 * leaf write touches one cgroup: it should cost the same in every tree.
 * A write at the root (hugetlb, which nothing below uses) re-propagates the
 * whole tree, as the kernel does.
 */
#include <malloc.h>
#include <stdio.h>
#include <time.h>

#include "cgbypass/model.h"

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static size_t heap_used(void) {
        struct mallinfo2 mi = mallinfo2();
        return mi.uordblks + mi.hblkhd;
}

static int die(const char *what, int r) {
        fprintf(stderr, "bench-model: %s: %s\n", what, strerror(-r));
        exit(EXIT_FAILURE);
}

/* mkdir a complete tree of the given depth; inner cgroups enable cpu pids and bypass memory */
static Cgroup **build(Hierarchy *h, unsigned depth, unsigned fanout, size_t *ret_nleaves) {
        size_t cap = 1, n = 0;
        for (unsigned i = 0; i < depth; i++)
                cap *= fanout;
        Cgroup **leaves = malloc(cap * sizeof(Cgroup *));
        Cgroup **level = malloc(cap * sizeof(Cgroup *)), **next = malloc(cap * sizeof(Cgroup *));
        size_t nlevel = 1;
        int r;

        if (!leaves || !level || !next)
                die("malloc", -ENOMEM);
        level[0] = hierarchy_root(h);
        for (unsigned d = 0; d < depth; d++) {
                size_t nnext = 0;
                for (size_t i = 0; i < nlevel; i++) {
                        r = cgroup_write(h, level[i], "cgroup.subtree_control", "+cpu +pids #memory", NULL);
                        if (r < 0)
                                die("enable", r);
                        for (unsigned k = 0; k < fanout; k++) {
                                _cleanup_free_ char *parent = NULL, *path = NULL;
                                Cgroup *c;

                                if (cgroup_path(level[i], &parent) < 0 ||
                                    asprintf(&path, "%s/c%u", streq(parent, "/") ? "" : parent, k) < 0)
                                        die("path", -ENOMEM);
                                r = hierarchy_mkdir(h, path, &c, NULL);
                                if (r < 0)
                                        die("mkdir", r);
                                next[nnext++] = c;
                        }
                }
                Cgroup **t = level;
                level = next;
                next = t;
                nlevel = nnext;
        }
        for (size_t i = 0; i < nlevel; i++)
                leaves[n++] = level[i];
        free(level);
        free(next);
        *ret_nleaves = n;
        return leaves;
}

static double bench_writes(Hierarchy *h, Cgroup **leaves, size_t n, const char *file,
                           const char *on, const char *off, size_t ops) {
        double t0 = now();
        for (size_t i = 0; i < ops; i++) {
                Cgroup *c = leaves[(i / 2 * 7919) % n];
                int r = cgroup_write(h, c, file, i % 2 ? off : on, NULL);
                if (r < 0)
                        die(file, r);
        }
        return now() - t0;
}

int main(int argc, char *argv[]) {
        static const struct {
                const char *name;
                unsigned depth;
        } sizes[] = { { "1k", 3 }, { "10k", 4 }, { "100k", 5 } };

        double per_cgroup[ELEMENTSOF(sizes)];

        printf("bench-model: Linux 6.1 cgroup model with the bypass series, fan-out 10\n");
        printf("%-6s %9s %14s %14s %14s %12s %10s\n", "tree", "cgroups", "subtree w/s", "controllers w/s",
               "root write", "leaf write", "bytes/cg");
        for (size_t s = 0; s < ELEMENTSOF(sizes); s++) {
                Hierarchy *h;
                size_t nleaves, before = heap_used();
                int r = hierarchy_new(&h, RULES_BYPASS, CGMASK_VM_KERNEL);
                if (r < 0)
                        die("hierarchy_new", r);
                Cgroup **leaves = build(h, sizes[s].depth, 10, &nleaves);
                size_t bytes = heap_used() - before - nleaves * sizeof(Cgroup *);
                size_t count = hierarchy_count(h);
                const size_t ops = 200000;

                double ts = bench_writes(h, leaves, nleaves, "cgroup.subtree_control", "+pids", "-pids", ops);
                double tc = bench_writes(h, leaves, nleaves, "cgroup.controllers", "+memory", "#memory", ops);

                /* one write at the root re-propagates every cgroup below it */
                double t0 = now();
                const unsigned root_ops = 20;
                for (unsigned i = 0; i < root_ops; i++) {
                        r = cgroup_write(h, hierarchy_root(h), "cgroup.subtree_control",
                                         i % 2 ? "-hugetlb" : "+hugetlb", NULL);
                        if (r < 0)
                                die("root write", r);
                }
                double troot = (now() - t0) / root_ops;

                printf("%-6s %9zu %14.0f %14.0f %11.3f ms %9.3f us %10.0f\n", sizes[s].name, count,
                       ops / ts, ops / tc, troot * 1e3, ts / ops * 1e6, (double) bytes / (double) count);
                per_cgroup[s] = (double) bytes / (double) count;
                free(leaves);
                hierarchy_free(h);
        }
        /* the heap the model holds per cgroup, nothing else (issue 15: at most 256 bytes) */
        for (size_t s = 0; s < ELEMENTSOF(sizes); s++)
                printf("figure: model bytes per cgroup, %s tree = %.0f (target: <= 256) %s\n", sizes[s].name,
                       per_cgroup[s], per_cgroup[s] <= 256 ? "ok" : "MISSED");
        (void) argc;
        (void) argv;
        return 0;
}
