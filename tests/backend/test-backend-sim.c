/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sim backend: the directory is the model's rendering after every
 * operation, failures change nothing (model, directory, state file), and a
 * restart reloads the saved model exactly. Runs as root and, through
 * test-backend-sim-nobody.sh, as nobody.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "../../src/lib/backend/cgroupfs.h"
#include "../check-run.h"
#include "backend-test.h"
#include "cgbypass/cfvalue.h"

static char *tmp, *root, *state;

static void setup(void) {
        char t[] = "/tmp/cgb-sim-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(t));
        tmp = strdup(t);
        root = test_strdupf("%s/root", tmp);
        state = test_strdupf("%s/state", tmp);
}

static void teardown(void) {
        test_rm_rf(tmp);
        free(tmp);
        free(root);
        free(state);
}

static Backend *open_sim(void) {
        Backend *b = test_backend_open(BACKEND_SIM, root, state);

        ck_assert_int_eq(backend_get_type(b), BACKEND_SIM);
        return b;
}

static char *read_sim(const char *rel, const char *file) {
        _cleanup_free_ char *p = streq(rel, ".") ? test_strdupf("%s/%s", root, file) :
                                                   test_strdupf("%s/%s/%s", root, rel, file);
        return test_read_file(p);
}

static void ok(int r) {
        ck_assert_int_eq(r, 0);
}

/* the documentation example of the series (interfaces.md, GetEffectiveTree) */
static void doc_example(Backend *b) {
        static const char *const dirs[] = { "A", "A/B", "A/B/C", "A/B/C/D", "A/B/C/D/E", "A/B/C/D/E/F", "A/B/G" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                ok(backend_mkdir(b, dirs[i], NULL));
                test_check_sim_dir(b);
        }
        ok(backend_write(b, ".", "cgroup.subtree_control", "+cpu", NULL));
        test_check_sim_dir(b);
        ok(backend_write(b, "A", "cgroup.subtree_control", "#cpu", NULL));
        ok(backend_write(b, "A/B", "cgroup.subtree_control", "#cpu", NULL));
        ok(backend_write(b, "A/B/C", "cgroup.subtree_control", "#cpu", NULL));
        ok(backend_write(b, "A/B/C/D", "cgroup.subtree_control", "#cpu", NULL));
        test_check_sim_dir(b);
        ok(backend_write(b, "A/B/C/D/E", "cgroup.controllers", "+cpu", NULL));
        ok(backend_write(b, "/A/B/G", "cgroup.controllers", "+cpu", NULL));
        test_check_sim_dir(b);
}

START_TEST(test_fresh_open) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *ctl = read_sim(".", "cgroup.controllers");
        _cleanup_free_ char *st = test_strdupf("%s/sim.state", state);
        size_t n;

        /* the VM kernel: perf_event and debug are implicit, never listed */
        ck_assert_str_eq(ctl, "cpuset cpu io memory hugetlb pids rdma misc\n");
        ck_assert_int_eq(access(st, F_OK), 0);
        ck_assert_ptr_null(backend_get_drift(b, &n));
        ck_assert_uint_eq(n, 0);
        ck_assert_str_eq(backend_get_root(b), root);
        ck_assert_str_eq(backend_get_state_dir(b), state);
        test_check_sim_dir(b);
}
END_TEST

START_TEST(test_controllers_option) {
        BackendOptions o = { .sim_controllers = CGMASK(CONTROLLER_CPU) | CGMASK(CONTROLLER_MEMORY) };
        _cleanup_(backend_freep) Backend *b = NULL;
        _cleanup_free_ char *ctl = NULL;

        ok(backend_open_with(BACKEND_SIM, root, state, &o, &b, NULL));
        ctl = read_sim(".", "cgroup.controllers");
        ck_assert_str_eq(ctl, "cpu memory\n");
        ck_assert_int_eq(backend_write(b, ".", "cgroup.subtree_control", "+io", NULL), -EINVAL);
        /* a saved sim keeps its controllers whatever the options say next time */
        ok(backend_save(b));
        b = backend_free(b);
        o.sim_controllers = CGMASK_VM_KERNEL;
        ok(backend_open_with(BACKEND_SIM, root, state, &o, &b, NULL));
        ck_assert_uint_eq(hierarchy_builtin(backend_get_model(b)), CGMASK(CONTROLLER_CPU) | CGMASK(CONTROLLER_MEMORY));
}
END_TEST

START_TEST(test_doc_example) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *a = NULL, *bc = NULL, *e = NULL, *g = NULL;

        doc_example(b);
        test_assert_doc_example_tree(b);
        a = read_sim("A", "cgroup.subtree_control");
        ck_assert_str_eq(a, "#cpu\n");
        bc = read_sim("A/B", "cgroup.controllers");
        ck_assert_str_eq(bc, "#cpu\n");
        e = read_sim("A/B/C/D/E", "cgroup.controllers");
        ck_assert_str_eq(e, "cpu\n");
        g = read_sim("A/B/G", "cpu.weight");
        ck_assert_str_eq(g, "100\n");
        ck_assert_ptr_null(read_sim("A/B", "cpu.weight"));

        /* refusals: the model's errno and reason, nothing changed */
        _cleanup_free_ char *before = test_digest(root), *dump = test_dump(backend_get_model(b));
        Reason reason = REASON_NONE;
        ck_assert_int_eq(backend_write(b, "A/B/C/D", "cgroup.subtree_control", "-cpu", &reason), -EBUSY);
        ck_assert_int_eq(reason, REASON_CHILD_USES_IT);
        ck_assert_int_eq(backend_write(b, "A/B/C/D/E/F", "cgroup.controllers", "+cpu", &reason), -ENOENT);
        ck_assert_int_eq(reason, REASON_NOT_BYPASSED_BY_PARENT);
        ck_assert_int_eq(backend_rmdir(b, "A/B", &reason), -EBUSY);
        ck_assert_int_eq(reason, REASON_HAS_CHILDREN);
        ck_assert_int_eq(backend_mkdir(b, "A/B", &reason), -EEXIST);
        ck_assert_int_eq(backend_write(b, "A", "cpu.weight", "0", &reason), -ERANGE);
        ck_assert_int_eq(reason, REASON_RANGE);
        ck_assert_int_eq(backend_write(b, "A", "memory.max", "4G", &reason), -ENOENT);
        ck_assert_int_eq(reason, REASON_NO_SUCH_FILE);
        ck_assert_int_eq(backend_write(b, "A", "cpu.stat", "1", &reason), -EINVAL);
        ck_assert_int_eq(backend_write(b, "nope", "cgroup.subtree_control", "+cpu", &reason), -ENOENT);
        ck_assert_int_eq(reason, REASON_NO_SUCH_CGROUP);
        _cleanup_free_ char *after = test_digest(root), *dump2 = test_dump(backend_get_model(b));
        ck_assert_str_eq(before, after);
        ck_assert_str_eq(dump, dump2);

        /* G back to bypass: its knobs disappear */
        ok(backend_write(b, "A/B/G", "cgroup.controllers", "#cpu", NULL));
        ck_assert_ptr_null(read_sim("A/B/G", "cpu.weight"));
        test_check_sim_dir(b);
}
END_TEST

START_TEST(test_reopen_round_trip) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *dump = NULL, *dump2 = NULL, *digest = NULL, *digest2 = NULL;
        size_t n;

        doc_example(b);
        ok(backend_mkdir(b, "T", NULL));
        ok(backend_mkdir(b, "T/t", NULL));
        ok(backend_write(b, "T/t", "cgroup.type", "threaded", NULL));
        ok(backend_write(b, "A/B", "cgroup.max.depth", "3", NULL));
        ok(backend_write(b, "A", "cgroup.max.descendants", "12", NULL));
        ok(backend_mkdir(b, "name with spaces", NULL));
        test_check_sim_dir(b);
        ok(backend_save(b));
        dump = test_dump(backend_get_model(b));
        digest = test_digest(root);
        b = backend_free(b);

        b = open_sim();
        dump2 = test_dump(backend_get_model(b));
        digest2 = test_digest(root);
        ck_assert_str_eq(dump, dump2);
        ck_assert_str_eq(digest, digest2);
        ck_assert_ptr_null(backend_get_drift(b, &n));
        ck_assert_uint_eq(n, 0);
        test_check_sim_dir(b);
}
END_TEST

START_TEST(test_unsaved_changes_are_dropped) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *dump = NULL, *dump2 = NULL;
        const BackendDrift *d;
        size_t n;

        ok(backend_mkdir(b, "A", NULL));
        ok(backend_save(b));
        dump = test_dump(backend_get_model(b));
        ok(backend_mkdir(b, "B", NULL));
        ok(backend_write(b, ".", "cgroup.subtree_control", "+memory", NULL));
        b = backend_free(b);

        /* a restart goes back to the last save; the directory is rendered from it */
        b = open_sim();
        dump2 = test_dump(backend_get_model(b));
        ck_assert_str_eq(dump, dump2);
        test_check_sim_dir(b);
        d = backend_get_drift(b, &n);
        bool stray_b = false, ctl = false;
        for (size_t i = 0; i < n; i++) {
                if (streq(d[i].what, "stray directory") && streq(d[i].found, "B"))
                        stray_b = true;
                if (streq(d[i].path, ".") && streq(d[i].what, "cgroup.subtree_control"))
                        ctl = streq(d[i].expected, "") && streq(d[i].found, "memory\n");
        }
        ck_assert(stray_b);
        ck_assert(ctl);
}
END_TEST

static void touch(const char *rel) {
        _cleanup_free_ char *p = test_strdupf("%s/%s", root, rel);
        FILE *f = fopen(p, "we");
        ck_assert_ptr_nonnull(f);
        fclose(f);
}

static void mkd(const char *rel) {
        _cleanup_free_ char *p = test_strdupf("%s/%s", root, rel);
        ck_assert_int_eq(mkdir(p, 0755), 0);
}

START_TEST(test_strays) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        const BackendDrift *d;
        size_t n;

        ok(backend_mkdir(b, "A", NULL));
        ok(backend_save(b));
        b = backend_free(b);

        /* what a sim could have left: removed and reported */
        touch("A/cpu.weight");
        mkd("X");
        mkd("X/Y");
        touch("X/Y/cgroup.procs");
        touch("A/" CGFS_TMP_PREFIX "0123456789abcdef");

        b = open_sim();
        test_check_sim_dir(b);
        d = backend_get_drift(b, &n);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(d[0].what, "stray directory");
        ck_assert_str_eq(d[0].found, "X");
        ck_assert_str_eq(d[1].path, "A");
        ck_assert_str_eq(d[1].what, "stray file");
        ck_assert_str_eq(d[1].found, "cpu.weight");
}
END_TEST

START_TEST(test_foreign_directory_refused) {
        _cleanup_free_ char *msg = NULL, *f = test_strdupf("%s/precious", root);
        Backend *b = NULL;

        ck_assert_int_eq(mkdir(root, 0755), 0);
        ck_assert_int_eq(test_write_file(f, "x"), -ENOENT);
        FILE *fp = fopen(f, "we");
        fclose(fp);
        ck_assert_int_eq(backend_open(BACKEND_SIM, root, state, &b, &msg), -ENOTEMPTY);
        ck_assert_ptr_null(b);
        ck_assert_int_eq(access(f, F_OK), 0);
}
END_TEST

START_TEST(test_state_of_another_root) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *other = test_strdupf("%s/other", tmp), *msg = NULL;
        Backend *b2 = NULL;

        b = backend_free(b);
        ck_assert_int_eq(backend_open(BACKEND_SIM, other, state, &b2, &msg), -EUCLEAN);
        ck_assert_ptr_nonnull(strstr(msg, "describes"));
}
END_TEST

START_TEST(test_lock) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *msg = NULL;
        Backend *b2 = NULL;

        ck_assert_int_eq(backend_open(BACKEND_SIM, root, state, &b2, &msg), -EBUSY);
        ck_assert_ptr_nonnull(strstr(msg, "in use"));
}
END_TEST

START_TEST(test_read_only) {
        const BackendOptions ro = { .read_only = true };
        _cleanup_free_ char *msg = NULL, *value = NULL;
        Backend *b2 = NULL;

        {
                /* beside the lock holder; it sees what the holder saved */
                _cleanup_(backend_freep) Backend *b = open_sim();
                ok(backend_mkdir(b, "A", NULL));
                ok(backend_write(b, ".", "cgroup.subtree_control", "+cpu", NULL));
                ok(backend_save(b));
                ck_assert_int_eq(backend_open_with(BACKEND_SIM, root, state, &ro, &b2, &msg), 0);
                Cgroup *c;
                ck_assert_int_eq(hierarchy_lookup((Hierarchy *) backend_get_model(b2), "A", &c), 0);
                ok(backend_read(b2, "A", "cgroup.controllers", &value));
                ck_assert_str_eq(value, "cpu\n");
                /* and changes nothing */
                ck_assert_int_eq(backend_mkdir(b2, "B", NULL), -EROFS);
                ck_assert_int_eq(backend_write(b2, "A", "cgroup.subtree_control", "+cpu", NULL), -EROFS);
                ck_assert_int_eq(backend_rmdir(b2, "A", NULL), -EROFS);
                ck_assert_int_eq(backend_save(b2), -EROFS);
                ck_assert_int_eq(backend_refresh(b2, NULL), -EROFS);
                b2 = backend_free(b2);
        }
        /* a sim that does not exist yet: a fresh model, nothing created */
        _cleanup_free_ char *fresh = test_strdupf("%s/fresh", tmp), *fresh_state = test_strdupf("%s/fresh-state", tmp);
        ck_assert_int_eq(backend_open_with(BACKEND_SIM, fresh, fresh_state, &ro, &b2, &msg), 0);
        ck_assert_int_eq(hierarchy_count(backend_get_model(b2)), 1);
        b2 = backend_free(b2);
        ck_assert_int_eq(access(fresh, F_OK), -1);
        ck_assert_int_eq(access(fresh_state, F_OK), -1);
}
END_TEST

START_TEST(test_atomic_save) {
        _cleanup_free_ char *stale = test_strdupf("%s/.sim.state.tmp", state), *text = NULL, *st = NULL;

        /* a temporary file left by a crash is replaced by the next whole save (the first), and nothing is
         * left behind */
        ck_assert_int_eq(mkdir(state, 0755), 0);
        FILE *f = fopen(stale, "we");
        fputs("garbage", f);
        fclose(f);
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_strv_free_ char **first = test_list_dir(state, false);
        _cleanup_free_ char *first_names = test_strv_join(first);
        ck_assert_str_eq(first_names, "backend.lock sim.state");
        ok(backend_mkdir(b, "A", NULL));
        ok(backend_save(b));
        _cleanup_strv_free_ char **files = test_list_dir(state, false);
        _cleanup_free_ char *names = test_strv_join(files);
        ck_assert_str_eq(names, "backend.lock sim.state sim.state.journal");
        st = test_strdupf("%s/sim.state", state);
        text = test_read_file(st);
        ck_assert_ptr_nonnull(strstr(text, "backend sim\n"));
        /* a save after the first appends what changed to the journal */
        ck_assert_ptr_null(strstr(text, " path=A\n"));
        free(st);
        free(text);
        st = test_strdupf("%s/sim.state.journal", state);
        text = test_read_file(st);
        ck_assert_str_eq(text, "region subtree=0 path=A\ncgroup threaded=0 subtree_control= subtree_bypass= "
                               "enable_ss_mask= max_depth=max max_descendants=max path=A\nend\n");
}
END_TEST

/* @text into @path, opened with fopen()'s @mode: "we" replaces, "ae" appends */
static void write_text(const char *path, const char *mode, const char *text) {
        FILE *f = fopen(path, mode);
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

static void append_file(const char *path, const char *text) {
        write_text(path, "ae", text);
}

START_TEST(test_journal) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *jpath = test_strdupf("%s/sim.state.journal", state), *spath = NULL;
        _cleanup_free_ char *d1 = NULL, *d2 = NULL, *d3 = NULL, *d4 = NULL, *old = NULL, *st1 = NULL, *st2 = NULL;

        doc_example(b);
        ok(backend_save(b));
        ok(backend_write(b, "A/B/G", "cpu.weight", "50", NULL));
        ok(backend_rmdir(b, "A/B/C/D/E/F", NULL));
        ok(backend_save(b));
        ck_assert_int_eq(access(jpath, F_OK), 0);
        d1 = test_dump(backend_get_model(b));
        old = test_read_file(jpath);
        b = backend_free(b);

        /* a region torn by a crash while appending is ignored */
        append_file(jpath, "region subtree=1 path=.\nend");
        b = open_sim();
        d2 = test_dump(backend_get_model(b));
        ck_assert_str_eq(d1, d2);
        test_check_sim_dir(b);
        b = backend_free(b);

        /* replaying the journal over a state that already has it changes nothing: a crash between
         * writing the folded state and removing the journal is harmless */
        _cleanup_free_ char *cur = test_read_file(jpath);
        append_file(jpath, cur);
        b = open_sim();
        d3 = test_dump(backend_get_model(b));
        ck_assert_str_eq(d1, d3);

        /* leaf writes cost a record each; the journal is folded in once it outgrows the state */
        spath = test_strdupf("%s/sim.state", state);
        st1 = test_read_file(spath);
        for (unsigned i = 0; i < 5000 && access(jpath, F_OK) == 0; i++) {
                ok(backend_write(b, "A/B/G", "cpu.weight", i % 2 ? "50" : "60", NULL));
                ok(backend_save(b));
        }
        ck_assert_int_eq(access(jpath, F_OK), -1);
        st2 = test_read_file(spath);
        ck_assert_str_ne(st1, st2);
        d4 = test_dump(backend_get_model(b));
        b = backend_free(b);
        b = open_sim();
        _cleanup_free_ char *d5 = test_dump(backend_get_model(b));
        ck_assert_str_eq(d4, d5);
        test_check_sim_dir(b);
        (void) old;
}
END_TEST

/* operations on one cgroup between two saves: one region, as the model is at the save */
START_TEST(test_journal_one_region) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *jpath = test_strdupf("%s/sim.state.journal", state), *text = NULL, *d1 = NULL;

        ok(backend_mkdir(b, "A", NULL));
        ok(backend_save(b));
        _cleanup_free_ char *before = test_read_file(jpath);
        ok(backend_write(b, "A", "cgroup.max.depth", "5", NULL));
        ok(backend_write(b, "A", "cgroup.max.depth", "6", NULL));
        ok(backend_write(b, "A", "cgroup.max.depth", "7", NULL));
        ok(backend_save(b));
        text = test_read_file(jpath);
        ck_assert_uint_gt(strlen(text), strlen(before));
        ck_assert_str_eq(text + strlen(before), "region subtree=0 path=A\ncgroup threaded=0 subtree_control= "
                         "subtree_bypass= enable_ss_mask= max_depth=7 max_descendants=max path=A\nend\n");
        d1 = test_dump(backend_get_model(b));
        b = backend_free(b);
        b = open_sim();
        _cleanup_free_ char *d2 = test_dump(backend_get_model(b));
        ck_assert_str_eq(d1, d2);
}
END_TEST

START_TEST(test_unsafe_paths) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *outside = test_strdupf("%s/outside", tmp), *link = test_strdupf("%s/A", root);
        _cleanup_free_ char *dump = NULL, *dump2 = NULL, *victim = NULL;
        Reason reason;

        ck_assert_int_eq(backend_mkdir(b, "../x", &reason), -EINVAL);
        ck_assert_int_eq(backend_mkdir(b, "A//B", NULL), -EINVAL);
        ck_assert_int_eq(backend_mkdir(b, "A/./B", NULL), -EINVAL);
        ck_assert_int_eq(backend_write(b, ".", "../cgroup.procs", "1", NULL), -EINVAL);
        ck_assert_int_eq(backend_write(b, ".", "a/b", "1", NULL), -EINVAL);

        /* a cgroup directory swapped for a symlink: no write lands outside */
        ok(backend_mkdir(b, "A", NULL));
        ck_assert_int_eq(mkdir(outside, 0755), 0);
        test_rm_rf(link);
        ck_assert_int_eq(symlink(outside, link), 0);
        dump = test_dump(backend_get_model(b));
        ck_assert_int_eq(backend_write(b, ".", "cgroup.subtree_control", "+cpu", NULL), -ELOOP);
        dump2 = test_dump(backend_get_model(b));
        ck_assert_str_eq(dump, dump2);
        _cleanup_strv_free_ char **in_outside = test_list_dir(outside, false);
        ck_assert_ptr_null(in_outside[0]);
        victim = test_read_file(link);
        (void) victim;

        /* the same below the cgroupfs layer, with and without openat2(2) */
        int fd;
        ck_assert_int_eq(cgfs_open_root(root, &fd), 0);
        for (int i = 0; i < 2; i++) {
                _cleanup_free_ char *s = NULL;
                cgfs_set_openat2_disabled(i == 1);
                ck_assert_int_eq(cgfs_read(fd, "A", "x", &s), -ELOOP);
                ck_assert_int_eq(cgfs_write(fd, "A", "x", "y"), -ELOOP);
                ck_assert_int_eq(cgfs_mkdir(fd, "A/x", 0755), -ELOOP);
                ck_assert_int_eq(cgfs_read(fd, "..", "etc", &s), -EINVAL);
                ck_assert_int_eq(cgfs_read(fd, ".", "cgroup.controllers", &s), 0);
                ck_assert_str_eq(s, "cpuset cpu io memory hugetlb pids rdma misc\n");
        }
        cgfs_set_openat2_disabled(false);
        close(fd);
        _cleanup_strv_free_ char **still = test_list_dir(outside, true);
        ck_assert_ptr_null(still[0]);
}
END_TEST

START_TEST(test_chown) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        char *files[] = { (char *) "cgroup.procs", (char *) "cgroup.subtree_control", NULL };
        char *missing[] = { (char *) "cpu.weight", NULL };
        _cleanup_free_ char *d = test_strdupf("%s/A", root), *f = test_strdupf("%s/A/cgroup.procs", root);
        _cleanup_free_ char *g = test_strdupf("%s/A/cgroup.controllers", root);
        struct stat st;

        ok(backend_mkdir(b, "A", NULL));
        if (geteuid() != 0) {
                ck_assert_int_eq(backend_chown(b, "A", 65534, 65534, files), -EPERM);
                return;
        }
        ck_assert_int_eq(backend_chown(b, "A", 65534, 65534, missing), -ENOENT);
        ok(backend_chown(b, "A", 65534, 65534, files));
        ck_assert_int_eq(stat(d, &st), 0);
        ck_assert_uint_eq(st.st_uid, 65534);
        ck_assert_int_eq(stat(f, &st), 0);
        ck_assert_uint_eq(st.st_uid, 65534);
        ck_assert_int_eq(stat(g, &st), 0);
        ck_assert_uint_eq(st.st_uid, 0);
}
END_TEST

START_TEST(test_fault_hook) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        TestFault fault = { .fail_at = 2 };
        _cleanup_free_ char *dump = NULL, *dump2 = NULL, *digest = NULL, *digest2 = NULL;

        backend_set_fault_hook(b, test_fault_fn, &fault);
        ok(backend_mkdir(b, "A", NULL));
        dump = test_dump(backend_get_model(b));
        digest = test_digest(root);
        ck_assert_int_eq(backend_write(b, ".", "cgroup.subtree_control", "+cpu", NULL), -EIO);
        dump2 = test_dump(backend_get_model(b));
        digest2 = test_digest(root);
        ck_assert_str_eq(dump, dump2);
        ck_assert_str_eq(digest, digest2);
        ok(backend_write(b, ".", "cgroup.subtree_control", "+cpu", NULL));
        ck_assert_uint_eq(fault.calls, 3);
        test_check_sim_dir(b);
}
END_TEST

/* test-backend-sim-nobody.sh says whom it runs us as: prove the run is unprivileged */
START_TEST(test_expected_user) {
        const char *uid = getenv("CGB_TEST_EXPECT_UID");

        if (uid) {
                ck_assert_uint_eq(geteuid(), (uid_t) atoi(uid));
                ck_assert_uint_ne(geteuid(), 0);
        }
}
END_TEST

START_TEST(test_read) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *s = NULL, *w = NULL, *k = NULL;

        ok(backend_mkdir(b, "A", NULL));
        ok(backend_write(b, ".", "cgroup.subtree_control", "+cpu #memory", NULL));
        ok(backend_read(b, "A", "cgroup.controllers", &s));
        ck_assert_str_eq(s, "cpu #memory\n");
        ok(backend_read(b, "/A", "cpu.weight", &w));
        ck_assert_str_eq(w, "100\n");
        ck_assert_int_eq(backend_read(b, "A", "memory.max", &k), -ENOENT);
        ck_assert_int_eq(backend_read(b, "A", "cgroup.kill", &k), -EINVAL);
}
END_TEST

/* ---- random sequences: the backend answers as a plain model does, and the directory follows ---- */

static unsigned rnd_state;

static unsigned rnd(unsigned n) {
        rnd_state = rnd_state * 1103515245u + 12345u;
        return (rnd_state >> 16) % n;
}

static const Cgroup *random_cgroup(const Hierarchy *h) {
        size_t n = hierarchy_count(h), k = rnd((unsigned) n);
        Cgroup *top = hierarchy_root(h), *c = top;
        for (; k > 0; k--)
                c = cgroup_next_descendant_pre(c, top);
        return c;
}

static char *random_tokens(const char *prefixes) {
        static const char *const ctl[] = { "cpu", "memory", "io", "pids", "cpuset", "hugetlb" };
        StrBuf b = STRBUF_INIT;
        char *s;
        unsigned n = 1 + rnd(2);

        for (unsigned i = 0; i < n; i++)
                strbuf_printf(&b, "%s%c%s", i ? " " : "", prefixes[rnd((unsigned) strlen(prefixes))],
                              ctl[rnd(ELEMENTSOF(ctl))]);
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

/* ---- what an owner can do in a sim directory it owns (issue 13) ---- */

static void on_alarm(int sig) {
        static const char msg[] = "blocked: the sim opened a FIFO without O_NONBLOCK\n";
        (void) sig;
        (void) write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(1);
}

/* a FIFO where a file is expected: an error at once, never a blocking open(2) */
START_TEST(test_fifo_never_blocks) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *fifo = test_strdupf("%s/fifo", root), *text = NULL;

        ck_assert_int_eq(mkdir(root, 0755), 0);
        ck_assert_int_eq(mkfifo(fifo, 0644), 0);
        ok(cgfs_open_root(root, &fd));
        (void) signal(SIGALRM, on_alarm);
        alarm(10);
        ck_assert_int_eq(cgfs_read(fd, ".", "fifo", &text), -ELOOP);
        ck_assert_int_eq(cgfs_write(fd, ".", "fifo", "x"), -ELOOP);
        alarm(0);
}
END_TEST

typedef struct Swapper {
        char *a, *b;
        volatile bool stop;
        unsigned swaps;
} Swapper;

static void *swap_loop(void *p) {
        Swapper *s = p;

        while (!s->stop)
                if (renameat2(AT_FDCWD, s->a, AT_FDCWD, s->b, RENAME_EXCHANGE) == 0)
                        s->swaps++;
        return NULL;
}

/* An owner swaps a file of its cgroup with a FIFO over and over while the sim re-reads its tree. */
START_TEST(test_fifo_swap_during_refresh) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        Swapper s = {
                .a = test_strdupf("%s/A/cgroup.events", root),
                .b = test_strdupf("%s/A/fifo", root),
        };
        pthread_t t;
        unsigned refreshes = 0;

        ok(backend_mkdir(b, "A", NULL));
        ck_assert_int_eq(mkfifo(s.b, 0644), 0);
        (void) signal(SIGALRM, on_alarm);
        alarm(60);
        ck_assert_int_eq(pthread_create(&t, NULL, swap_loop, &s), 0);
        for (int i = 0; i < 300; i++) {
                _cleanup_free_ char *msg = NULL;
                int r = backend_refresh(b, &msg);
                ck_assert_msg(r == 0, "refresh: %s", strempty(msg));
                refreshes++;
        }
        s.stop = true;
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        alarm(0);
        ck_assert_uint_eq(refreshes, 300);
        ck_assert_uint_gt(s.swaps, 0);
        free(s.a);
        free(s.b);
}
END_TEST

/* The sim's temporary files cannot meet an owner's directory of the old fixed name. */
START_TEST(test_tmp_name_owner_directory) {
        _cleanup_(backend_freep) Backend *b = open_sim();

        ok(backend_mkdir(b, "A", NULL));
        ok(backend_mkdir(b, "B", NULL));
        mkd("A/.cgb-tmp");                      /* made by hand: not a cgroup */
        ok(backend_mkdir(b, "B/.cgb-tmp", NULL));       /* adopted: a cgroup */
        /* rewrites A's and B's cgroup.controllers */
        ok(backend_write(b, ".", "cgroup.subtree_control", "+memory", NULL));
        ok(backend_write(b, "B", "cgroup.subtree_control", "+memory", NULL));
        ok(backend_write(b, "B/.cgb-tmp", "cgroup.subtree_control", "+memory", NULL));
        _cleanup_free_ char *ctl = read_sim("A", "cgroup.controllers");
        _cleanup_free_ char *sc = read_sim("B/.cgb-tmp", "cgroup.subtree_control");
        ck_assert_str_eq(ctl, "memory\n");
        ck_assert_str_eq(sc, "memory\n");
}
END_TEST

static void put(const char *path, const char *text) {
        write_text(path, "we", text);
}

static void make_socket(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
        strcpy(sa.sun_path, path);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);
}

/* What an owner leaves in its cgroups is reported and left alone, at start-up and at a refresh. */
START_TEST(test_foreign_entries_left_alone) {
        static const char *const names[] = { "notes.txt", "pipe", "sock", "link", "odd\nname", "my dir" };
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *notes = test_strdupf("%s/A/notes.txt", root), *pipe = test_strdupf("%s/A/pipe", root);
        _cleanup_free_ char *sock = test_strdupf("%s/A/sock", root), *link = test_strdupf("%s/A/link", root);
        _cleanup_free_ char *odd = test_strdupf("%s/A/odd\nname", root), *inner = test_strdupf("%s/A/my dir/x", root);
        _cleanup_free_ char *msg = NULL, *mine = NULL;
        const BackendDrift *d;
        size_t n;

        ok(backend_mkdir(b, "A", NULL));
        ok(backend_save(b));
        b = backend_free(b);
        put(notes, "mine\n");
        ck_assert_int_eq(mkfifo(pipe, 0644), 0);
        make_socket(sock);
        ck_assert_int_eq(symlink("/etc/passwd", link), 0);
        put(odd, "x");
        mkd("A/my dir");
        put(inner, "y");

        for (int pass = 0; pass < 2; pass++) {
                if (pass == 0)
                        b = open_sim();
                else
                        ck_assert_int_eq(backend_refresh(b, &msg), 0);
                d = backend_get_drift(b, &n);
                ck_assert_uint_eq(n, ELEMENTSOF(names));
                for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                        bool seen = false;
                        for (size_t j = 0; j < n; j++)
                                seen = seen || (streq(d[j].path, "A") && streq(d[j].found, names[i]) &&
                                                d[j].left_alone);
                        ck_assert_msg(seen, "%s is not reported as left alone", names[i]);
                }
                mine = test_read_file(notes);
                ck_assert_str_eq(mine, "mine\n");
                free(mine);
                mine = test_read_file(inner);
                ck_assert_str_eq(mine, "y");
                free(mine);
                mine = NULL;
                struct stat st;
                ck_assert_int_eq(lstat(pipe, &st), 0);
                ck_assert(S_ISFIFO(st.st_mode));
                ck_assert_int_eq(lstat(sock, &st), 0);
                ck_assert(S_ISSOCK(st.st_mode));
                ck_assert_int_eq(lstat(link, &st), 0);
                ck_assert(S_ISLNK(st.st_mode));
        }
        /* and the cgroup still works */
        ok(backend_write(b, ".", "cgroup.subtree_control", "+cpu", NULL));
}
END_TEST

/* An owner's empty directory that did not become a cgroup (its name, say) is not the sim's to remove. */
START_TEST(test_owner_directory_left_alone) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *dir = test_strdupf("%s/A/a b", root);
        const BackendDrift *d;
        size_t n;

        if (geteuid() != 0)
                return;         /* an unprivileged sim makes its directories as the owner would */
        ok(backend_mkdir(b, "A", NULL));
        ok(backend_save(b));
        b = backend_free(b);
        mkd("A/a b");
        mkd("X");               /* a sim's leftover: removed */
        ck_assert_int_eq(chown(dir, 4242, 4242), 0);

        b = open_sim();
        ck_assert_int_eq(access(dir, F_OK), 0);
        d = backend_get_drift(b, &n);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(d[0].what, "stray directory");
        ck_assert_str_eq(d[0].found, "X");
        ck_assert(d[1].left_alone);
        ck_assert_str_eq(d[1].found, "a b");
}
END_TEST

static uid_t owner_of(const char *rel) {
        _cleanup_free_ char *p = test_strdupf("%s/%s", root, rel);
        struct stat st;

        ck_assert_int_eq(lstat(p, &st), 0);
        return st.st_uid;
}

/* kernfs: a file keeps its owner when its content changes; new ones get their directory's (cgroup_kn_set_ugid()) */
START_TEST(test_owner_kept) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_strv_free_ char **files = NULL;
        Cgroup *c;

        if (geteuid() != 0)
                return;         /* changing owners needs root */
        ok(backend_mkdir(b, "A", NULL));
        ok(backend_mkdir(b, "B", NULL));
        /* A is an owner's cgroup, as adoption leaves it: the directory and every file */
        ok(hierarchy_lookup(backend_get_model(b), "A", &c));
        ok(cgroup_list_files(backend_get_model(b), c, &files));
        ok(backend_chown(b, "A", 4242, 4243, files));
        ck_assert_uint_eq(owner_of("A/cgroup.controllers"), 4242);

        ok(backend_write(b, ".", "cgroup.subtree_control", "+memory", NULL));
        ck_assert_uint_eq(owner_of("A/cgroup.controllers"), 4242);     /* rewritten */
        /* new: the writer's, as the kernel's (cgroup_kn_set_ugid()); the daemon's ownership.c gives
         * it to the owner (tests/bus/test-owners.sh) */
        ck_assert_uint_eq(owner_of("A/memory.max"), 0);
        ck_assert_uint_eq(owner_of("B/cgroup.controllers"), 0);
        ck_assert_uint_eq(owner_of("B/memory.max"), 0);
}
END_TEST

/* Writes as each directory's owner: new files are its owner's at once; rewritten ones keep theirs; off again, root's */
START_TEST(test_writes_by_dir_owner) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_strv_free_ char **files = NULL;
        Cgroup *c;

        if (geteuid() != 0) {
                ck_assert_int_eq(backend_set_writes_by_dir_owner(b, true), -EPERM);
                return;
        }
        ok(backend_mkdir(b, "A", NULL));
        ok(backend_mkdir(b, "A/a", NULL));
        ok(hierarchy_lookup(backend_get_model(b), "A/a", &c));
        ok(cgroup_list_files(backend_get_model(b), c, &files));
        ok(backend_chown(b, "A/a", 4242, 4243, files));

        ok(backend_set_writes_by_dir_owner(b, true));
        ok(backend_write(b, ".", "cgroup.subtree_control", "+memory", NULL));
        ok(backend_write(b, "A", "cgroup.subtree_control", "+memory", NULL));
        ok(backend_set_writes_by_dir_owner(b, false));
        ck_assert_uint_eq(owner_of("A/a/memory.max"), 4242);
        _cleanup_free_ char *p = test_strdupf("%s/A/a/memory.max", root);
        struct stat st;
        ck_assert_int_eq(lstat(p, &st), 0);
        ck_assert_uint_eq(st.st_gid, 4243);
        ck_assert_uint_eq(owner_of("A/a/cgroup.controllers"), 4242);  /* rewritten */
        ck_assert_uint_eq(owner_of("A/memory.max"), 0);                /* a root's directory */
        test_check_sim_dir(b);

        ok(backend_write(b, "A", "cgroup.subtree_control", "-memory", NULL));
        ok(backend_write(b, "A", "cgroup.subtree_control", "+memory", NULL));
        ck_assert_uint_eq(owner_of("A/a/memory.max"), 0);
}
END_TEST

/* A refresh after the sim root went away says so. */
START_TEST(test_refresh_root_deleted) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_free_ char *msg = NULL;

        ok(backend_mkdir(b, "A", NULL));
        test_rm_rf(root);
        ck_assert_int_eq(backend_refresh(b, &msg), -ENOENT);
        ck_assert_msg(msg && strstr(msg, "was deleted"), "message: %s", strempty(msg));
        /* a new directory of that name is not the one the model describes */
        ck_assert_int_eq(mkdir(root, 0755), 0);
        free(msg);
        msg = NULL;
        ck_assert_int_eq(backend_refresh(b, &msg), -ENOENT);
        ck_assert_msg(msg && strstr(msg, "was deleted"), "message: %s", strempty(msg));
}
END_TEST

START_TEST(test_random_sequences) {
        _cleanup_(backend_freep) Backend *b = open_sim();
        _cleanup_(hierarchy_freep) Hierarchy *mirror = NULL;
        _cleanup_free_ char *stpath = test_strdupf("%s/sim.state", state);
        static const char *const names[] = { "a", "b", "c" };
        unsigned failures = 0, successes = 0;

        rnd_state = 12345u + (unsigned) _i;
        ck_assert_int_eq(hierarchy_new(&mirror, RULES_BYPASS, CGMASK_VM_KERNEL), 0);
        hierarchy_settle_root(mirror); /* a new sim is settled (docs/backends.md) */
        ok(backend_save(b));

        for (unsigned step = 0; step < 250; step++) {
                _cleanup_free_ char *path = test_relpath(random_cgroup(mirror)), *value = NULL, *target = NULL;
                _cleanup_free_ char *dump = test_dump(backend_get_model(b)), *digest = test_digest(root);
                _cleanup_free_ char *st = test_read_file(stpath);
                const char *file = NULL;
                Reason rb = REASON_NONE, rm = REASON_NONE;
                unsigned what = rnd(20);
                int r, m;

                if (what < 6) {
                        target = streq(path, ".") ? strdup(names[rnd(3)]) : test_strdupf("%s/%s", path, names[rnd(3)]);
                        r = backend_mkdir(b, target, &rb);
                        m = hierarchy_mkdir(mirror, target, NULL, &rm);
                } else if (what < 8) {
                        target = strdup(path);
                        r = backend_rmdir(b, target, &rb);
                        m = hierarchy_rmdir(mirror, target, &rm);
                } else {
                        Cgroup *c;
                        if (what < 14) {
                                file = "cgroup.subtree_control";
                                value = random_tokens("+-#");
                        } else if (what < 17) {
                                file = "cgroup.controllers";
                                value = random_tokens("+#");
                        } else if (what < 18) {
                                file = "cgroup.type";
                                value = strdup("threaded");
                        } else if (what < 19) {
                                file = "cgroup.max.depth";
                                value = rnd(2) ? strdup("max") : test_strdupf("%u", rnd(4));
                        } else {
                                file = "cpu.weight";
                                value = strdup("50");
                        }
                        target = strdup(path);
                        r = backend_write(b, target, file, value, &rb);
                        ck_assert_int_eq(hierarchy_lookup(mirror, target, &c), 0);
                        m = cfvalue_known(file) ? cgroup_value_write(mirror, c, file, value, &rm)
                                                : cgroup_write(mirror, c, file, value, &rm);
                }

                _cleanup_free_ char *mdump = test_dump(mirror), *bdump = test_dump(backend_get_model(b));
                ck_assert_msg(r == m, "step %u: %s %s %s: backend %d, model %d", step, target,
                              strempty(file), strempty(value), r, m);
                if (r < 0)
                        ck_assert_int_eq(rb, rm);
                ck_assert_str_eq(mdump, bdump);
                test_check_sim_dir(b);

                if (r < 0) {
                        /* a refusal changes nothing: model, directory, state file */
                        _cleanup_free_ char *digest2 = test_digest(root), *st2 = test_read_file(stpath);
                        ck_assert_str_eq(dump, bdump);
                        ck_assert_str_eq(digest, digest2);
                        ck_assert_str_eq(st, st2);
                        failures++;
                } else {
                        ok(backend_save(b));
                        successes++;
                }

                if (step % 50 == 49) {
                        /* restart: exactly the same model and directory */
                        _cleanup_free_ char *d1 = test_dump(backend_get_model(b)), *g1 = test_digest(root);
                        b = backend_free(b);
                        b = open_sim();
                        _cleanup_free_ char *d2 = test_dump(backend_get_model(b)), *g2 = test_digest(root);
                        ck_assert_str_eq(d1, d2);
                        ck_assert_str_eq(g1, g2);
                }
        }
        /* the sequence must exercise both paths to prove anything */
        ck_assert_uint_gt(failures, 20);
        ck_assert_uint_gt(successes, 20);
}
END_TEST

int main(void) {
        Suite *s = suite_create("backend-sim");
        TCase *tc = CHECK_TCASE(
                s, "sim", setup, teardown, { test_fresh_open }, { test_controllers_option }, { test_doc_example },
                { test_reopen_round_trip }, { test_unsaved_changes_are_dropped }, { test_strays },
                { test_foreign_directory_refused }, { test_state_of_another_root }, { test_lock }, { test_read_only },
                { test_atomic_save }, { test_unsafe_paths }, { test_chown }, { test_fault_hook }, { test_read },
                { test_expected_user }, { test_fifo_never_blocks }, { test_fifo_swap_during_refresh },
                { test_tmp_name_owner_directory }, { test_foreign_entries_left_alone }, { test_owner_kept },
                { test_writes_by_dir_owner },
                { test_owner_directory_left_alone }, { test_refresh_root_deleted }, { test_journal }, { test_journal_one_region },
                { test_random_sequences, 4 });

        tcase_set_timeout(tc, 120);
        return check_run(s);
}
