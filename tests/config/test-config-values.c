/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Controller file values in [cgroup] sections: every refusal with its
 * FILE:LINE and message, a good section's values and locations, and the
 * kernel syntax of each file (cfvalue.h): what Linux 6.1 takes, with which
 * errno, and what it reads back.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check-run.h"
#include "cgbypass/cfvalue.h"
#include "cgbypass/config.h"
#include "cgbypass/macro.h"

#ifndef CONFIG_TEST_DATA
#error "CONFIG_TEST_DATA must name tests/data/config"
#endif
#define DATA CONFIG_TEST_DATA "/values"

static char *at(const char *name) {
        char *s;
        ck_assert_int_ge(asprintf(&s, "%s/%s", DATA, name), 0);
        return s;
}

START_TEST(test_refusals) {
        static const char *const expected[] = {
                "3: memory.max: the kernel refuses '4GB' (EINVAL); it takes 'max' or a number of bytes "
                "with an optional K, M, G, T, P or E suffix",
                "4: unknown key 'memroy.max' in [cgroup]: no controller has such a file; known keys are "
                "path, create, subtree-control and controllers, and the writable files of controllers "
                "(memory.max, cpu.weight, ...)",
                "5: 'memory.current' is read-only: the kernel reports it, nobody sets it",
                "6: 'memory.reclaim' is an action, not a setting: it cannot be read back, so there is no "
                "state to keep",
                "7: 'cgroup.max.depth' is a file of the cgroup core, not of a controller; a [cgroup] "
                "section sets subtree-control, controllers and controller files",
                "8: cpu.weight: the kernel refuses '0' (ERANGE); it takes a weight from 1 to 10000",
                "9: cpu.weight.nice: the kernel refuses '20' (ERANGE); it takes a nice value from -20 to 19",
                "10: pids.max: the kernel refuses '4194305' (EINVAL); it takes 'max' or a number from 0 to "
                "4194304",
                "11: cpu.max: the kernel refuses '500 100000' (EINVAL); it takes 'QUOTA [PERIOD]' in "
                "microseconds: QUOTA 'max' or from 1000, PERIOD from 1000 to 1000000, QUOTA at least "
                "cpu.max.burst",
                "12: cpuset.cpus: the kernel refuses '3-1' (EINVAL); it takes a CPU list such as '0-3,8' "
                "(ranges, commas, N-M:USED/GROUP)",
                "13: io.weight: the kernel refuses 'default 0' (EINVAL); it takes 'default N', 'N', "
                "'MAJ:MIN N' or 'MAJ:MIN default', N from 1 to 10000",
                "14: io.max: the kernel refuses 'sda rbps=1' (EINVAL); it takes 'MAJ:MIN' and rbps=, wbps=, "
                "riops=, wiops= each 'max' or a number above 1",
                "15: misc.max: the kernel refuses 'gpu 3' (EINVAL); it takes 'RESOURCE max' or "
                "'RESOURCE N', RESOURCE sev or sev_es",
                /* a refused value counts as set: the later lines are duplicates of it */
                "16: duplicate key 'memory.max' in [cgroup] (first set at line 3); keep one",
                "17: duplicate key 'memory.max' in [cgroup] (first set at line 3); keep one",
                "22: cpu.weight.nice: cpu.weight at line 21 sets the same CPU share; keep one",
                "30: memory.max: /home/x is below the delegation root /home (@:24): its files belong to "
                "the owner; set values on the delegation root to bound the owner",
                NULL,
        };
        _cleanup_free_ char *file = at("bad.conf");
        ConfigErrors e = CONFIG_ERRORS_INIT;
        Config *c = NULL;
        size_t n = 0;

        ck_assert_int_eq(config_load(file, NULL, &c, &e), -EINVAL);
        ck_assert_ptr_null(c);
        for (; expected[n]; n++) {
                _cleanup_free_ char *want = NULL, *msg = strdup(expected[n]);
                char *a = strchr(msg, '@');
                if (a) {
                        *a = '\0';
                        ck_assert_int_ge(asprintf(&want, "%s:%s%s%s", file, msg, file, a + 1), 0);
                } else
                        ck_assert_int_ge(asprintf(&want, "%s:%s", file, msg), 0);
                ck_assert_msg(n < config_errors_count(&e), "missing: %s", want);
                ck_assert_str_eq(config_errors_get(&e, n), want);
        }
        ck_assert_uint_eq(config_errors_count(&e), n);
        config_errors_done(&e);
}
END_TEST

START_TEST(test_good_values) {
        _cleanup_free_ char *file = at("good.conf");
        ConfigErrors e = CONFIG_ERRORS_INIT;
        _cleanup_(config_freep) Config *c = NULL;
        static const struct { const char *file, *value; unsigned line; } want[] = {
                { "memory.max", "4G", 5 },
                { "memory.high", "max", 6 },    /* inline comment cut by inih */
                { "cpu.weight", "50", 7 },
                { "cpu.max", "max 50000", 8 },
                { "io.weight", "default 200", 9 },
                { "pids.max", "1000", 10 },
                { "cpuset.cpus", "0-3,8", 11 },
        };

        ck_assert_int_eq(config_load(file, NULL, &c, &e), 0);
        ck_assert_uint_eq(config_errors_count(&e), 0);
        ck_assert_uint_eq(c->n_cgroups, 1);
        const CgroupSpec *cg = &c->cgroups[0];
        ck_assert_uint_eq(cg->n_values, ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                ck_assert_str_eq(cg->values[i].file, want[i].file);
                ck_assert_str_eq(cg->values[i].value, want[i].value);
                ck_assert_str_eq(cg->values[i].loc.file, file);
                ck_assert_uint_eq(cg->values[i].loc.line, want[i].line);
        }
}
END_TEST

/* What the kernel's handler does with one write from the default: the errno, or what it reads back. */
static const struct {
        const char *file, *value;
        int error;
        const char *shown;
} writes[] = {
        { "memory.max", "4G", 0, "4294967296\n" },
        { "memory.max", "4g", 0, "4294967296\n" },
        { "memory.max", "max", 0, "max\n" },
        { "memory.max", " max ", 0, "max\n" },            /* strstrip() */
        { "memory.max", "1000", 0, "0\n" },               /* whole pages */
        { "memory.max", "4097", 0, "4096\n" },
        { "memory.max", "0x1000", 0, "4096\n" },
        { "memory.max", "010", 0, "0\n" },
        { "memory.max", "1E", 0, "1152921504606846976\n" },
        { "memory.max", "16E", 0, "0\n" },                /* memparse() wraps */
        { "memory.max", "9223372036854775807", 0, "max\n" },
        { "memory.max", "4GB", -EINVAL, NULL },
        { "memory.max", "-1", -EINVAL, NULL },
        { "memory.max", "max ", 0, "max\n" },
        { "memory.low", "1M", 0, "1048576\n" },
        { "hugetlb.2MB.max", "3M", 0, "2097152\n" },      /* whole huge pages */
        { "hugetlb.2MB.max", "max", 0, "max\n" },
        { "hugetlb.1GB.max", "3G", 0, "3221225472\n" },
        { "memory.oom.group", "1", 0, "1\n" },
        { "memory.oom.group", " 0x1 ", 0, "1\n" },
        { "memory.oom.group", "2", -EINVAL, NULL },
        { "cpu.weight", "50", 0, "50\n" },
        { "cpu.weight", "+0x64", 0, "100\n" },
        { "cpu.weight", "10000", 0, "10000\n" },
        { "cpu.weight", "10001", -ERANGE, NULL },
        { "cpu.weight", "0", -ERANGE, NULL },
        { "cpu.weight", " 50", -EINVAL, NULL },           /* kstrtoull() takes no blanks */
        { "cpu.weight", "99999999999999999999", -ERANGE, NULL },
        { "cpu.weight.nice", "-20", 0, "-20\n" },
        { "cpu.weight.nice", "19", 0, "19\n" },
        { "cpu.weight.nice", "-21", -ERANGE, NULL },
        { "cpu.idle", "1", 0, "1\n" },
        { "cpu.idle", "-1", -EINVAL, NULL },
        { "cpu.max", "max", 0, "max 100000\n" },
        { "cpu.max", "50000", 0, "50000 100000\n" },
        { "cpu.max", "50000 200000", 0, "50000 200000\n" },
        { "cpu.max", "max 1000", 0, "max 1000\n" },
        { "cpu.max", "1000 1000000", 0, "1000 1000000\n" },
        { "cpu.max", "999", -EINVAL, NULL },
        { "cpu.max", "max 999", -EINVAL, NULL },
        { "cpu.max", "max 1000001", -EINVAL, NULL },
        { "cpu.max", "17592186044416", -EINVAL, NULL },  /* above MAX_BW */
        { "cpu.max", "limit", -EINVAL, NULL },
        { "cpu.max.burst", "1000", 0, "1000\n" },
        { "pids.max", "max", 0, "max\n" },
        { "pids.max", "0", 0, "0\n" },
        { "pids.max", "4194304", 0, "4194304\n" },
        { "pids.max", "4194305", -EINVAL, NULL },
        { "pids.max", "-1", -EINVAL, NULL },
        { "pids.max", "10x", -EINVAL, NULL },
        { "cpuset.cpus", "0-3,8", 0, "0-3,8\n" },
        { "cpuset.cpus", "3,2,1,0", 0, "0-3\n" },
        { "cpuset.cpus", "0-7:2/4", 0, "0-1,4-5\n" },
        { "cpuset.cpus", "1 , 2", 0, "1-2\n" },
        { "cpuset.cpus", " ", 0, "\n" },
        { "cpuset.cpus", "3-1", -EINVAL, NULL },
        { "cpuset.cpus", "0-7:5/4", -EINVAL, NULL },
        { "cpuset.cpus", "8192", -ERANGE, NULL },
        { "cpuset.cpus", "a", -EINVAL, NULL },
        { "cpuset.mems", "0", 0, "0\n" },
        { "cpuset.mems", "1024", -ERANGE, NULL },
        { "cpuset.cpus.partition", "root", 0, "root\n" },
        { "cpuset.cpus.partition", "isolated\n", 0, "isolated\n" },
        { "cpuset.cpus.partition", "Root", -EINVAL, NULL },
        { "io.weight", "default 200", 0, "default 200\n" },
        { "io.weight", "300", 0, "default 300\n" },
        { "io.weight", "8:0 50", 0, "default 100\n8:0 50\n" },
        { "io.weight", "8:0 default", 0, "default 100\n" },
        { "io.weight", "default 10001", -EINVAL, NULL },
        { "io.weight", "8:0 0", -EINVAL, NULL },
        { "io.max", "8:0 rbps=1048576", 0, "8:0 rbps=1048576 wbps=max riops=max wiops=max\n" },
        { "io.max", "8:16 wiops=100 riops=max", 0, "8:16 rbps=max wbps=max riops=max wiops=100\n" },
        { "io.max", "8:0 rbps=max", 0, "" },
        { "io.max", "8:0 rbps=0", -ERANGE, NULL },
        { "io.max", "8:0 rbps=1", -EINVAL, NULL },        /* tg_set_limit(): above 1 */
        { "misc.max", "sev  10", -EINVAL, NULL },         /* the number is not stripped again */
        { "io.max", "8:0 speed=1", -EINVAL, NULL },
        { "io.max", "8:0 rbps", -EINVAL, NULL },
        { "io.max", "8:0 rbps=-1", -EINVAL, NULL },       /* the kernel's sscanf() takes no sign */
        { "cpu.max", "-1000", -EINVAL, NULL },
        { "misc.max", "sev 10", -EINVAL, NULL },          /* no SEV on the model's machine */
        { "rdma.max", "mlx4_0 hca_handle=2", -ENODEV, NULL },
        { "rdma.max", "mlx4_0 hca_handle=-1", -EINVAL, NULL },
        { "memory.current", "1", -ENOENT, NULL },         /* not a value file */
};

START_TEST(test_kernel_syntax) {
        _cleanup_free_ char *shown = NULL;
        const char *why = NULL;
        int r = cfvalue_write(writes[_i].file, NULL, writes[_i].value, NULL, NULL, &shown, &why);

        ck_assert_msg(r == writes[_i].error, "%s '%s': %d, want %d", writes[_i].file, writes[_i].value, r,
                      writes[_i].error);
        if (r == 0)
                ck_assert_str_eq(shown, writes[_i].shown);
        else if (r != -ENOENT)
                ck_assert_ptr_nonnull(why);
}
END_TEST

START_TEST(test_check_leaves_devices_to_the_kernel) {
        /* devices and SEV capacity only the kernel knows: the syntax is all a check can see */
        ck_assert_int_eq(cfvalue_check("rdma.max", "mlx4_0 hca_handle=2 hca_object=max", NULL), 0);
        ck_assert_int_eq(cfvalue_check("misc.max", "sev_es 4", NULL), 0);
        ck_assert_int_eq(cfvalue_check("misc.max", "tdx 4", NULL), -EINVAL);
        /* sscanf("%llu") stops at the suffix: the kernel takes "10M" in io.max as 10 */
        ck_assert_int_eq(cfvalue_check("io.max", "259:0 wbps=10M", NULL), 0);
        ck_assert_int_eq(cfvalue_check("io.max", "259:0 wbps=10485760", NULL), 0);
        ck_assert_int_eq(cfvalue_check("memory.nope", "1", NULL), -ENOENT);
}
END_TEST

START_TEST(test_in_sync_and_undo) {
        _cleanup_free_ char *u1 = NULL, *u2 = NULL, *u3 = NULL, *u4 = NULL, *u5 = NULL, *u6 = NULL;

        /* what the kernel shows back, not what was written, decides */
        ck_assert(cfvalue_in_sync("memory.max", "4294967296\n", "4G"));
        ck_assert(cfvalue_in_sync("memory.max", "4294967296\n", "4096M"));
        ck_assert(!cfvalue_in_sync("memory.max", "max\n", "4G"));
        ck_assert(cfvalue_in_sync("cpu.max", "max 100000\n", "max"));
        ck_assert(!cfvalue_in_sync("cpu.max", "max 50000\n", "max 100000"));
        ck_assert(cfvalue_in_sync("cpu.max", "max 50000\n", "max"));      /* the period stays */
        ck_assert(cfvalue_in_sync("io.weight", "default 200\n8:0 50\n", "default 200"));
        ck_assert(!cfvalue_in_sync("io.weight", "default 200\n8:0 50\n", "8:0 60"));
        ck_assert(cfvalue_in_sync("io.max", "8:0 rbps=100 wbps=max riops=max wiops=max\n", "8:0 rbps=100"));
        ck_assert(cfvalue_in_sync("cpuset.cpus", "0-3\n", "0,1,2,3"));
        ck_assert(!cfvalue_in_sync("cpu.weight", "100\n", "0"));          /* refused: write, and fail */

        ck_assert_int_eq(cfvalue_undo("memory.max", "max\n", "4G", &u1), 0);
        ck_assert_str_eq(u1, "max");
        ck_assert_int_eq(cfvalue_undo("io.weight", "default 100\n8:0 50\n", "default 200", &u2), 0);
        ck_assert_str_eq(u2, "default 100");
        ck_assert_int_eq(cfvalue_undo("io.weight", "default 100\n", "8:0 50", &u3), 0);
        ck_assert_str_eq(u3, "8:0 default");
        ck_assert_int_eq(cfvalue_undo("io.max", "", "8:0 rbps=100", &u4), 0);
        ck_assert_str_eq(u4, "8:0 rbps=max wbps=max riops=max wiops=max");
        ck_assert_int_eq(cfvalue_undo("cpuset.cpus", "\n", "0-3", &u5), 0);
        ck_assert_str_eq(u5, " ");      /* an empty write runs no handler */
        ck_assert_int_eq(cfvalue_undo("cpu.max", "max 100000\n", "50000", &u6), 0);
        ck_assert_str_eq(u6, "max 100000");
}
END_TEST

START_TEST(test_linked_share) {
        _cleanup_free_ char *nice = NULL, *weight = NULL;

        /* cpu.weight 50 is 512 shares; the nearest nice level is 3 (526) */
        ck_assert_int_eq(cfvalue_linked_shown("cpu.weight", "50\n", &nice), 0);
        ck_assert_str_eq(nice, "3\n");
        /* nice -20 is 88761 shares: weight 8668 */
        ck_assert_int_eq(cfvalue_linked_shown("cpu.weight.nice", "-20\n", &weight), 0);
        ck_assert_str_eq(weight, "8668\n");
        ck_assert_ptr_null(cfvalue_linked("memory.max"));
}
END_TEST

/* cross-file rules of the kernel, given the cgroup's other files */
static const char *other_files(const char *file, void *userdata) {
        const char *const *kv = userdata;
        for (; kv[0]; kv += 2)
                if (streq(kv[0], file))
                        return kv[1];
        return NULL;
}

START_TEST(test_cross_file_rules) {
        const char *idle[] = { "cpu.idle", "1\n", NULL };
        const char *quota[] = { "cpu.max", "50000 100000\n", "cpu.max.burst", "40000\n", NULL };
        _cleanup_free_ char *s1 = NULL, *s2 = NULL;

        ck_assert_int_eq(cfvalue_write("cpu.weight", NULL, "50", other_files, idle, &s1, NULL), -EINVAL);
        ck_assert_int_eq(cfvalue_write("cpu.max.burst", NULL, "60000", other_files, quota, &s1, NULL), -EINVAL);
        ck_assert_int_eq(cfvalue_write("cpu.max.burst", NULL, "50000", other_files, quota, &s1, NULL), 0);
        ck_assert_int_eq(cfvalue_write("cpu.max", "50000 100000\n", "30000", other_files, quota, &s2, NULL),
                         -EINVAL);
}
END_TEST

/* value files in the interface table (found by its hash) and outside it (this kernel has no swap) alike */
START_TEST(test_value_types_by_name) {
        ck_assert(cfvalue_known("memory.max"));
        ck_assert_str_eq(cfvalue_default("memory.max"), "max\n");
        ck_assert_str_eq(cfvalue_default("cpu.weight"), "100\n");
        ck_assert(cfvalue_known("memory.swap.max"));
        ck_assert_str_eq(cfvalue_default("memory.swap.max"), "max\n");
        ck_assert(cfvalue_known("hugetlb.1GB.max"));
        ck_assert_ptr_nonnull(cfvalue_syntax("hugetlb.2MB.max"));
        ck_assert(!cfvalue_known("cgroup.procs"));      /* an interface file, not a value file */
        ck_assert_ptr_null(cfvalue_default("cgroup.procs"));
        ck_assert(!cfvalue_known("memory.nope"));
        ck_assert(!cfvalue_known(""));
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE_TABLE("config-values", "values", NULL, NULL, { test_refusals },
                                           { test_good_values }, { test_kernel_syntax, ELEMENTSOF(writes) },
                                           { test_check_leaves_devices_to_the_kernel }, { test_in_sync_and_undo },
                                           { test_linked_share }, { test_cross_file_rules },
                                           { test_value_types_by_name }));
}
