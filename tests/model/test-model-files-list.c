/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kernel/files-6.1.txt, the ls -la of the VM kernel's root, 'child' and
 * 'child/grandchild' with every controller enabled, is what the model lists
 * with the same modes: the capture binds cftype-table.c. The stock kernel
 * differs only in cgroup.controllers (no write handler: -r--r--r--).
 */
#include "cgbypass/cftype.h"
#include "model-test.h"

static const char *const dirs[] = { ".", "child", "child/grandchild" };

/* The "mode name" lines of one '## ls -la' section of the capture, joined. */
static char *captured(const char *dir, bool stock) {
        const char *path = getenv("CGB_FILES_LIST");
        char line[512], head[128];
        size_t size = 0;
        char *out = NULL;
        FILE *f, *o;
        bool in = false;

        ck_assert_msg(path, "CGB_FILES_LIST is not set");
        f = fopen(path, "re");
        ck_assert_msg(f, "%s: %s", path, strerror(errno));
        o = open_memstream(&out, &size);
        ck_assert_ptr_nonnull(o);
        snprintf(head, sizeof(head), "## ls -la /sys/fs/cgroup/%s (mode name)\n", dir);
        while (fgets(line, sizeof(line), f)) {
                if (startswith(line, "## ")) {
                        in = streq(line, head);
                        continue;
                }
                if (!in)
                        continue;
                if (stock && streq(line, "-rw-r--r-- cgroup.controllers\n"))
                        fputs("-r--r--r-- cgroup.controllers\n", o);
                else
                        fputs(line, o);
        }
        fclose(f);
        fclose(o);
        return out;
}

static char *modeled(const Hierarchy *h, const char *dir) {
        _cleanup_strv_free_ char **files = NULL;
        Cgroup *c = cg(h, dir);
        size_t size = 0;
        char *out = NULL;
        FILE *o = open_memstream(&out, &size);

        ck_assert_ptr_nonnull(o);
        _cleanup_free_ const char **names = NULL;
        size_t k = 0;

        ck_assert_int_eq(cgroup_list_files(h, c, &files), 0);
        /* the borrowed names, the same list */
        ck_assert_int_eq(cgroup_list_file_names(h, c, &names), 0);
        for (; files[k]; k++)
                ck_assert_str_eq(names[k], files[k]);
        ck_assert_ptr_null(names[k]);
        for (char **f = files; *f; f++) {
                /* backend-sim.c renders the modes the same way */
                const char *mode = cgroup_file_writable(h, c, *f) ? "-rw-r--r--" : "-r--r--r--";
                char *s = NULL, *s2 = NULL;
                bool writable;
                int r = cgroup_read(h, c, *f, &s);
                if (r == -EINVAL)
                        mode = "--w-------"; /* no read handler */
                /* the sim's one-lookup form says the same */
                ck_assert_int_eq(cgroup_read_file(h, c, *f, &writable, &s2), r);
                ck_assert(writable == cgroup_file_writable(h, c, *f));
                ck_assert(r < 0 || streq(s, s2));
                free(s);
                free(s2);
                fprintf(o, "%s %s\n", mode, *f);
        }
        fclose(o);
        return out;
}

START_TEST(test_files_list) {
        RuleSet rules = _i == 0 ? RULES_BYPASS : RULES_STOCK;
        _cleanup_(hierarchy_freep) Hierarchy *h = hnew(rules, VM);
        const char *all = "+cpuset +cpu +io +memory +hugetlb +pids +rdma +misc";

        ck_assert_int_eq(cgroup_write(h, cg(h, "."), "cgroup.subtree_control", all, NULL), 0);
        MKDIR(h, "child");
        ck_assert_int_eq(cgroup_write(h, cg(h, "child"), "cgroup.subtree_control", all, NULL), 0);
        MKDIR(h, "child/grandchild");
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *want = captured(dirs[i], rules == RULES_STOCK);
                _cleanup_free_ char *got = modeled(h, dirs[i]);
                ck_assert_msg(strlen(want) > 100, "no '## ls -la' section for %s in the capture", dirs[i]);
                ck_assert_msg(streq(want, got), "%s, rules %s:\n--- kernel/files-6.1.txt\n%s--- model\n%s",
                              dirs[i], _i == 0 ? "bypass" : "stock", want, got);
        }
}
END_TEST

/* cftype_lookup() (a hash) finds what a scan of the table finds, entries of one name in table order */
START_TEST(test_lookup) {
        static const char *const misses[] = { "", "n0", "cpu", "cgroup", "cgroup.procs2", "cpu.weight.", "x.slice",
                                              "memory.swap.max", "cgroup.pressure" };

        for (const CfType *t = cftype_table; t->name; t++) {
                const CfType *want = NULL, *got = cftype_lookup(t->name);
                for (const CfType *u = cftype_table; u->name; u++) {
                        if (!streq(u->name, t->name))
                                continue;
                        if (!want)
                                want = u;
                        ck_assert_msg(got == u, "%s: entry %td, lookup gives %td", t->name, u - cftype_table,
                                      got ? got - cftype_table : -1);
                        got = cftype_lookup_next(got);
                }
                ck_assert_ptr_null(got);
                ck_assert_ptr_eq(cftype_lookup(t->name), want);
        }
        for (size_t i = 0; i < ELEMENTSOF(misses); i++)
                ck_assert_msg(!cftype_lookup(misses[i]), "'%s' found", misses[i]);
}
END_TEST

/* cftype_by_name(): every entry once, in name order */
START_TEST(test_by_name) {
        const CfType *const *v = cftype_by_name();
        size_t n = 0, want = 0;

        for (const CfType *t = cftype_table; t->name; t++)
                want++;
        for (; v[n]; n++) {
                ck_assert(v[n] >= cftype_table && v[n] < cftype_table + want);
                ck_assert(n == 0 || strcmp(v[n - 1]->name, v[n]->name) <= 0);
                for (size_t k = 0; k < n; k++)
                        ck_assert_ptr_ne(v[k], v[n]);
        }
        ck_assert_uint_eq(n, want);
}
END_TEST

static Suite *files_list_suite(void) {
        Suite *s = suite_create("model-files-list");

        CHECK_TCASE(s, "capture", NULL, NULL, { test_files_list, 2 });
        CHECK_TCASE(s, "lookup", NULL, NULL, { test_lookup, 1 }, { test_by_name, 1 });
        return s;
}

int main(void) {
        return check_run(files_list_suite());
}
