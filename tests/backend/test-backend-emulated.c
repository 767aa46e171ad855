/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emulated backend on a real stock cgroup2 mount. Each test works in its
 * own scratch cgroup below the mount ("." of the backend), removed after.
 *
 * Environment: CGB_TEST_CGROUP2 (the mount; default: the first cgroup2 mount
 * in /proc/self/mountinfo), CGB_TEST_CONTROLLER (a domain controller the
 * mount offers; default hugetlb, else the first one listed). The mount's
 * root gets +CONTROLLER for the run if it lacks it, and loses it again.
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "../../src/lib/backend/backend-internal.h"
#include "../check-run.h"
#include "backend-test.h"
#include "cgbypass/policy.h"

static char *mnt;               /* the cgroup2 mount */
static const char *X;           /* the controller the tests bypass */
static char *scratch;           /* the backend's root: MNT/cgb-bt-PID-N */
static char *state;
static pid_t run_pid;            /* the runner; each test runs in a child of it */

static char *kpath(const char *rel, const char *file) {
        if (streq(rel, "."))
                return file ? test_strdupf("%s/%s", scratch, file) : strdup(scratch);
        return file ? test_strdupf("%s/%s/%s", scratch, rel, file) : test_strdupf("%s/%s", scratch, rel);
}

static char *kread(const char *rel, const char *file) {
        _cleanup_free_ char *p = kpath(rel, file);
        char *s = test_read_file(p);
        ck_assert_msg(s, "read %s: %m", p);
        return s;
}

static bool kexists(const char *rel, const char *file) {
        _cleanup_free_ char *p = kpath(rel, file);
        return access(p, F_OK) == 0;
}

static void kassert(const char *rel, const char *file, const char *want) {
        _cleanup_free_ char *s = kread(rel, file);
        ck_assert_msg(streq(s, want), "kernel %s/%s: '%s', want '%s'", rel, file, s, want);
}

/* "X\n" etc. */
static char *line(const char *fmt) {
        return test_strdupf(fmt, X, X);
}

/* outside a test Check forbids ck_assert() */
static char *xstrdupf(const char *fmt, ...) _printf_(1, 2);
static char *xstrdupf(const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                abort();
        va_end(ap);
        return s;
}

/* remove a scratch subtree bottom-up, killing what a test left in it (also outside tests: no ck_assert) */
static void remove_cgroups(const char *dir) {
        _cleanup_free_ char *procs = NULL, *pf = xstrdupf("%s/cgroup.procs", dir);
        DIR *d = opendir(dir);

        for (struct dirent *de; d && (de = readdir(d));)
                if (de->d_type == DT_DIR && !streq(de->d_name, ".") && !streq(de->d_name, "..")) {
                        _cleanup_free_ char *sub = xstrdupf("%s/%s", dir, de->d_name);
                        remove_cgroups(sub);
                }
        if (d)
                closedir(d);
        procs = test_read_file(pf);
        for (char *p = procs; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                pid_t pid = atoi(p);
                if (pid > 0)
                        (void) kill(pid, SIGKILL);
        }
        for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
                usleep(10000);
}

static void setup(void) {
        char t[] = "/tmp/cgb-emu-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(t));
        state = strdup(t);
        scratch = test_strdupf("%s/cgb-bt-%d-%d", mnt, (int) run_pid, (int) getpid());
        ck_assert_msg(mkdir(scratch, 0755) == 0, "mkdir %s: %m", scratch);
}

static void teardown(void) {
        remove_cgroups(scratch);
        test_rm_rf(state);
        free(scratch);
        free(state);
}

static Backend *open_emu(void) {
        return test_backend_open(BACKEND_EMULATED, scratch, state);
}

static void ok(int r) {
        ck_assert_int_eq(r, 0);
}

static void w(Backend *b, const char *path, const char *file, const char *fmt) {
        _cleanup_free_ char *v = test_strdupf(fmt, X);
        Reason reason = REASON_NONE;
        int r = backend_write(b, path, file, v, &reason);
        ck_assert_msg(r == 0, "write %s %s %s: %d (%s)", path, file, v, r, strempty(reason_to_string(reason)));
}

/* what the kernel must show: model file => kernel file; kernel-only files only below a pass-through level */
static void check_knobs(Backend *b) {
        const Hierarchy *h = backend_get_model(b);
        Cgroup *root = hierarchy_root(h);
        _cleanup_free_ char *knob = NULL;
        _cleanup_strv_free_ char **rootfiles = NULL;

        /* a knob of X present in this kernel and in the model's file table */
        for (Cgroup *c = cgroup_first_child(root); c && !knob; c = cgroup_next_sibling(c)) {
                _cleanup_strv_free_ char **files = NULL;
                ck_assert_int_eq(cgroup_list_files(h, c, &files), 0);
                for (char **f = files; *f && !knob; f++) {
                        _cleanup_free_ char *rel = test_relpath(c);
                        if (startswith(*f, X) && (*f)[strlen(X)] == '.' && kexists(rel, *f))
                                knob = strdup(*f);
                }
        }
        if (!knob)
                return;

        for (Cgroup *c = cgroup_first_child(root); c; c = cgroup_next_descendant_pre(c, root)) {
                _cleanup_free_ char *rel = test_relpath(c), *prel = test_relpath(cgroup_parent(c));
                _cleanup_free_ char *psc = kread(prel, "cgroup.subtree_control");
                bool model = cgroup_has_file(h, c, knob), kernel = kexists(rel, knob);
                CgMask ksc, kb;

                kernel_parse_masks(psc, &ksc, &kb);
                if (model)
                        ck_assert_msg(kernel, "%s: the model has %s, the kernel not", rel, knob);
                else if (kernel) {
                        /* pass-through: the parent enables X in the kernel but not in the model */
                        Controller x = controller_from_string(X);
                        ck_assert_msg((ksc & CGMASK(x)) && !(cgroup_get_subtree_control(cgroup_parent(c)) & CGMASK(x)),
                                      "%s: %s in the kernel only, but the parent is no pass-through level", rel, knob);
                }
        }
}

START_TEST(test_open_empty) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        size_t n;

        ck_assert_int_eq(backend_get_type(b), BACKEND_EMULATED);
        ck_assert(hierarchy_builtin(backend_get_model(b)) & CGMASK(controller_from_string(X)));
        ck_assert_uint_eq(hierarchy_count(backend_get_model(b)), 1);
        (void) backend_get_drift(b, &n);
        ck_assert_uint_eq(n, 0);
}
END_TEST

/* the documentation example's shape with X: A(+) B(#) C(#), G re-enables under B */
static void build_passthrough(Backend *b) {
        static const char *const dirs[] = { "A", "A/B", "A/B/C", "A/B/G" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                ok(backend_mkdir(b, dirs[i], NULL));
        w(b, ".", "cgroup.subtree_control", "+%s");
        w(b, "A", "cgroup.subtree_control", "#%s");
        w(b, "A/B", "cgroup.subtree_control", "#%s");
        w(b, "A/B/C", "cgroup.subtree_control", "#%s");
        w(b, "A/B/G", "cgroup.controllers", "+%s");
}

START_TEST(test_passthrough) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        _cleanup_free_ char *x = line("%s\n"), *hx = line("#%s\n"), *s = NULL;

        build_passthrough(b);
        /* G needs X enabled at B and A in the kernel: pass-through levels; C's bypass is not needed */
        kassert(".", "cgroup.subtree_control", x);
        kassert("A", "cgroup.subtree_control", x);
        kassert("A/B", "cgroup.subtree_control", x);
        kassert("A/B/C", "cgroup.subtree_control", "");
        /* the stock kernel's cgroup.controllers has no '#' ... */
        kassert("A/B", "cgroup.controllers", x);
        /* ... the backend shows the bypass state */
        ok(backend_read(b, "A", "cgroup.subtree_control", &s));
        ck_assert_str_eq(s, hx);
        free(s);
        ok(backend_read(b, "A/B", "cgroup.controllers", &s));
        ck_assert_str_eq(s, hx);
        free(s);
        ok(backend_read(b, "A/B/G", "cgroup.controllers", &s));
        ck_assert_str_eq(s, x);
        free(s);
        s = NULL;
        check_knobs(b);

        /* a re-enable deeper down makes C a pass-through level too */
        ok(backend_mkdir(b, "A/B/C/D", NULL));
        w(b, "A/B/C/D", "cgroup.controllers", "+%s");
        kassert("A/B/C", "cgroup.subtree_control", x);
        check_knobs(b);
        /* and back: the bypass is unneeded again, so X is disabled in the kernel */
        w(b, "A/B/C/D", "cgroup.controllers", "#%s");
        kassert("A/B/C", "cgroup.subtree_control", "");
        kassert("A/B", "cgroup.subtree_control", x);
        w(b, "A/B/G", "cgroup.controllers", "#%s");
        kassert("A/B", "cgroup.subtree_control", "");
        kassert("A", "cgroup.subtree_control", "");
        kassert(".", "cgroup.subtree_control", x);
        check_knobs(b);

        /* the model refuses what the bypass kernel would refuse; nothing reaches the kernel */
        Reason reason = REASON_NONE;
        _cleanup_free_ char *minus = test_strdupf("-%s", X), *plus = test_strdupf("+%s", X);
        w(b, "A/B/G", "cgroup.controllers", "+%s");
        ck_assert_int_eq(backend_write(b, "A/B", "cgroup.subtree_control", minus, &reason), -EBUSY);
        ck_assert_int_eq(reason, REASON_CHILD_USES_IT);
        ck_assert_int_eq(backend_write(b, "A/B/C/D", "cgroup.controllers", plus, NULL), 0);
        ck_assert_int_eq(backend_write(b, "A/B/C/D", "cgroup.controllers", "+bogus", &reason), -EINVAL);
        kassert("A/B", "cgroup.subtree_control", x);
}
END_TEST

START_TEST(test_check_below) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        _cleanup_free_ char *made = kpath("A/B/C/x", NULL), *sc = kpath("A/B/G", "cgroup.subtree_control");
        _cleanup_free_ char *enable = line("+%s");

        build_passthrough(b);
        /* as the backend left it */
        ck_assert_int_eq(backend_check_below(b, "/A/B"), 1);
        ck_assert_int_eq(backend_check_below(b, "/A/B/G"), 1);
        /* the root and unknown paths: never "agrees" */
        ck_assert_int_eq(backend_check_below(b, "/"), 0);
        ck_assert_int_eq(backend_check_below(b, "/nope"), 0);
        /* a cgroup made behind its back: its subtree differs, others not */
        ck_assert_msg(mkdir(made, 0755) == 0, "mkdir %s: %m", made);
        ck_assert_int_eq(backend_check_below(b, "/A/B"), 0);
        ck_assert_int_eq(backend_check_below(b, "/A/B/G"), 1);
        ok(backend_refresh(b, NULL));
        ck_assert_int_eq(backend_check_below(b, "/A/B"), 1);
        /* a write behind its back */
        ck_assert_int_eq(test_write_file(sc, enable), 0);
        ck_assert_int_eq(backend_check_below(b, "/A/B/G"), 0);
        ok(backend_refresh(b, NULL));
        ck_assert_int_eq(backend_check_below(b, "/A/B/G"), 1);
        /* removed behind its back */
        ck_assert_msg(rmdir(made) == 0, "rmdir %s: %m", made);
        ck_assert_int_eq(backend_check_below(b, "/A/B/C"), 0);
}
END_TEST

START_TEST(test_reopen) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        _cleanup_free_ char *dump = NULL, *dump2 = NULL;
        size_t n;

        build_passthrough(b);
        ok(backend_save(b));
        dump = test_dump(backend_get_model(b));
        b = backend_free(b);

        b = open_emu();
        dump2 = test_dump(backend_get_model(b));
        ck_assert_str_eq(dump, dump2);
        (void) backend_get_drift(b, &n);
        ck_assert_uint_eq(n, 0);

        /* without the saved state the pass-through levels read back as plain enables */
        b = backend_free(b);
        _cleanup_free_ char *st = test_strdupf("%s/emulated.state", state);
        ck_assert_int_eq(unlink(st), 0);
        b = open_emu();
        _cleanup_free_ char *dump3 = test_dump(backend_get_model(b));
        ck_assert_str_ne(dump, dump3);
        ck_assert_uint_eq(cgroup_get_subtree_bypass(hierarchy_root(backend_get_model(b))), 0);
}
END_TEST

/* no bypass state and no file: none is written; once there was one, it is kept up to date, records or not */
START_TEST(test_no_bypass_not_written) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        _cleanup_free_ char *st = test_strdupf("%s/emulated.state", state), *text = NULL;

        ok(backend_mkdir(b, "A", NULL));
        ok(backend_mkdir(b, "A/B", NULL));
        w(b, ".", "cgroup.subtree_control", "+%s");
        ok(backend_save(b));
        ck_assert_int_eq(access(st, F_OK), -1);
        ck_assert_int_eq(errno, ENOENT);

        w(b, "A", "cgroup.subtree_control", "#%s");
        ok(backend_save(b));
        text = test_read_file(st);
        ck_assert_ptr_nonnull(strstr(text, " path=A\n"));

        w(b, "A", "cgroup.subtree_control", "-%s");
        ok(backend_save(b));
        free(text);
        text = test_read_file(st);
        ck_assert_ptr_null(strstr(text, "\ncgroup "));
        ck_assert_ptr_nonnull(strstr(text, "\nbackend emulated\n"));

        /* and what was saved reads back */
        b = backend_free(b);
        b = open_emu();
        ck_assert_uint_eq(cgroup_get_subtree_bypass(hierarchy_root(backend_get_model(b))), 0);
}
END_TEST

START_TEST(test_drift) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        _cleanup_free_ char *plus = test_strdupf("+%s", X), *x = line("%s\n"), *p = NULL, *msg = NULL;
        const BackendDrift *d;
        size_t n;

        build_passthrough(b);
        ok(backend_save(b));

        /* behind the backend's back: an unneeded bypass enabled, a re-enabling cgroup removed */
        p = kpath("A/B/C", "cgroup.subtree_control");
        ck_assert_int_eq(test_write_file(p, plus), 0);
        free(p);
        p = kpath("A/B/G", NULL);
        ck_assert_int_eq(rmdir(p), 0);

        ck_assert_int_eq(backend_refresh(b, &msg), 0);
        d = backend_get_drift(b, &n);
        bool saw_c = false, saw_b = false, saw_a = false;
        for (size_t i = 0; i < n; i++) {
                if (!streq(d[i].what, "cgroup.subtree_control"))
                        continue;
                ck_assert_str_eq(d[i].expected, "");
                ck_assert_str_eq(d[i].found, X);
                saw_c |= streq(d[i].path, "A/B/C");
                saw_b |= streq(d[i].path, "A/B");
                saw_a |= streq(d[i].path, "A");
        }
        ck_assert(saw_c && saw_b && saw_a);
        /* and G, whose re-enable the model kept, is gone */
        ck_assert_uint_eq(n, 4);
        /* fixed: the kernel holds the projection again */
        kassert("A/B/C", "cgroup.subtree_control", "");
        kassert("A/B", "cgroup.subtree_control", "");
        kassert("A", "cgroup.subtree_control", "");
        kassert(".", "cgroup.subtree_control", x);
        ck_assert_uint_eq(cgroup_get_subtree_bypass(hierarchy_root(backend_get_model(b))), 0);

        /* the same at open, from the saved state: G is gone from the kernel, its re-enable too */
        b = backend_free(b);
        b = open_emu();
        d = backend_get_drift(b, &n);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(d[0].path, "A/B/G");
        ck_assert_str_eq(d[0].what, "cgroup");
}
END_TEST

/* a process the model does not know of makes the kernel refuse a pass-through: all is taken back */
START_TEST(test_kernel_refusal_restores) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        _cleanup_free_ char *dump = NULL, *dump2 = NULL, *procs = kpath("A", "cgroup.procs");
        _cleanup_free_ char *plus = test_strdupf("+%s", X), *pid_s = NULL, *sc = NULL;
        int release;
        pid_t pid;

        ok(backend_mkdir(b, "A", NULL));
        ok(backend_mkdir(b, "A/B", NULL));
        w(b, ".", "cgroup.subtree_control", "+%s");
        w(b, "A", "cgroup.subtree_control", "#%s");
        dump = test_dump(backend_get_model(b));

        release = test_spawn_waiter(&pid);
        pid_s = test_strdupf("%d", (int) pid);
        /* stock rules: A enables nothing in the kernel, so it may take processes */
        ck_assert_int_eq(test_write_file(procs, pid_s), 0);

        ck_assert_int_eq(backend_write(b, "A/B", "cgroup.controllers", plus, NULL), -EBUSY);
        dump2 = test_dump(backend_get_model(b));
        ck_assert_str_eq(dump, dump2);
        kassert("A", "cgroup.subtree_control", "");

        (void) close(release);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        /* the process is gone: the same write goes through */
        w(b, "A/B", "cgroup.controllers", "+%s");
        sc = line("%s\n");
        kassert("A", "cgroup.subtree_control", sc);
}
END_TEST

/* the k-th kernel write of an operation fails: kernel, model and state file as before */
START_TEST(test_fault_injection) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        _cleanup_free_ char *stpath = test_strdupf("%s/emulated.state", state), *plus = test_strdupf("+%s", X);
        static const char *const levels[] = { ".", "A", "A/B", "A/B/C" };
        unsigned writes = 0;

        ok(backend_mkdir(b, "A", NULL));
        ok(backend_mkdir(b, "A/B", NULL));
        ok(backend_mkdir(b, "A/B/C", NULL));
        ok(backend_mkdir(b, "A/B/C/D", NULL));
        w(b, ".", "cgroup.subtree_control", "#%s");
        w(b, "A", "cgroup.subtree_control", "#%s");
        w(b, "A/B", "cgroup.subtree_control", "#%s");
        w(b, "A/B/C", "cgroup.subtree_control", "#%s");
        ok(backend_save(b));

        /* D's re-enable needs X at C, B, A and "." in the kernel: four writes, top-down */
        for (unsigned k = 1;; k++) {
                TestFault fault = { .fail_at = k, .prefix = "write" };
                _cleanup_free_ char *dump = test_dump(backend_get_model(b)), *st = test_read_file(stpath);
                _cleanup_free_ char *kernel = NULL, *kernel2 = NULL;
                StrBuf kb = STRBUF_INIT;

                for (size_t i = 0; i < ELEMENTSOF(levels); i++) {
                        _cleanup_free_ char *s = kread(levels[i], "cgroup.subtree_control");
                        strbuf_printf(&kb, "%s: %s", levels[i], s);
                }
                ck_assert_int_eq(strbuf_steal(&kb, &kernel), 0);

                backend_set_fault_hook(b, test_fault_fn, &fault);
                int r = backend_write(b, "A/B/C/D", "cgroup.controllers", plus, NULL);
                backend_set_fault_hook(b, NULL, NULL);
                if (r == 0) {
                        writes = fault.calls;
                        ck_assert_uint_eq(k, writes + 1);
                        break;
                }
                ck_assert_int_eq(r, -EIO);
                for (size_t i = 0; i < ELEMENTSOF(levels); i++) {
                        _cleanup_free_ char *s = kread(levels[i], "cgroup.subtree_control");
                        strbuf_printf(&kb, "%s: %s", levels[i], s);
                }
                ck_assert_int_eq(strbuf_steal(&kb, &kernel2), 0);
                ck_assert_str_eq(kernel, kernel2);
                _cleanup_free_ char *dump2 = test_dump(backend_get_model(b)), *st2 = test_read_file(stpath);
                ck_assert_str_eq(dump, dump2);
                ck_assert_str_eq(st, st2);
                ck_assert_uint_lt(k, 10);
        }
        ck_assert_uint_eq(writes, 4);
        for (size_t i = 0; i < ELEMENTSOF(levels); i++) {
                _cleanup_free_ char *x = line("%s\n");
                kassert(levels[i], "cgroup.subtree_control", x);
        }
}
END_TEST

START_TEST(test_rmdir_drops_passthrough) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        _cleanup_free_ char *x = line("%s\n");

        build_passthrough(b);
        kassert("A/B", "cgroup.subtree_control", x);
        ok(backend_rmdir(b, "A/B/G", NULL));
        kassert("A/B", "cgroup.subtree_control", "");
        kassert("A", "cgroup.subtree_control", "");
        ck_assert(!kexists("A/B/G", NULL));
        ck_assert_int_eq(backend_rmdir(b, "A/B/G", NULL), -ENOENT);
}
END_TEST

START_TEST(test_knobs_and_type) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        _cleanup_strv_free_ char **files = NULL;
        const char *knob = NULL;
        Cgroup *g;

        build_passthrough(b);
        ck_assert_int_eq(hierarchy_lookup(backend_get_model(b), "A/B/G", &g), 0);
        ck_assert_int_eq(cgroup_list_files(backend_get_model(b), g, &files), 0);
        for (char **f = files; *f && !knob; f++)
                if (startswith(*f, X) && (*f)[strlen(X)] == '.' && cgroup_file_writable(backend_get_model(b), g, *f) &&
                    kexists("A/B/G", *f))
                        knob = *f;
        if (knob) {
                _cleanup_free_ char *s = NULL, *k = NULL;
                /* the policy gives B no knobs of X: its pass-through knobs stay at their defaults */
                ck_assert(kexists("A/B", knob));
                ck_assert_int_eq(backend_write(b, "A/B", knob, "2097152", NULL), -ENOENT);
                ck_assert_int_eq(backend_read(b, "A/B", knob, &s), -ENOENT);
                /* where the policy has them, they are the kernel's (a size: hugetlb, memory, pids take it) */
                ok(backend_write(b, "A/B/G", knob, "2097152", NULL));
                ok(backend_read(b, "A/B/G", knob, &s));
                ck_assert_str_eq(s, "2097152\n");
                k = kread("A/B/G", knob);
                ck_assert_str_eq(k, "2097152\n");
        }

        /* cgroup.type goes to the kernel too */
        ok(backend_mkdir(b, "T", NULL));
        ok(backend_mkdir(b, "T/t", NULL));
        ok(backend_write(b, "T/t", "cgroup.type", "threaded", NULL));
        kassert("T/t", "cgroup.type", "threaded\n");
        kassert("T", "cgroup.type", "domain threaded\n");
        ck_assert_int_eq(backend_write(b, "T/t", "cgroup.type", "domain", NULL), -EINVAL);
        ok(backend_write(b, "T", "cgroup.max.depth", "2", NULL));
        kassert("T", "cgroup.max.depth", "2\n");
        ok(backend_rmdir(b, "T/t", NULL));
        kassert("T", "cgroup.type", "domain\n");
        _cleanup_free_ char *dump = test_dump(backend_get_model(b));
        b = backend_free(b);
        b = open_emu();
        _cleanup_free_ char *dump2 = test_dump(backend_get_model(b));
        /* unsaved bypass state is gone, the kernel's own state is not */
        ck_assert_str_ne(dump, dump2);
        Cgroup *t;
        ck_assert_int_eq(hierarchy_lookup(backend_get_model(b), "T", &t), 0);
        /* T has no child now: its limits are read when a mkdir below it needs them */
        ck_assert(cgroup_limits_unread(t));
        ck_assert_int_eq(backend_load_limits_above(b, "T/x"), 1);
        _cleanup_free_ char *depth = NULL;
        ck_assert_int_eq(cgroup_read(backend_get_model(b), t, "cgroup.max.depth", &depth), 0);
        ck_assert_str_eq(depth, "2\n");
}
END_TEST

/* ---- values of controller files through the policy, on the kernel ---- */

/* a value file of X and two values with what the kernel reads back */
static const struct {
        const char *controller, *file, *v1, *shown1, *v2, *shown2;
} value_cases[] = {
        { "hugetlb", "hugetlb.2MB.max", "3M", "2097152\n", "8M", "8388608\n" },
        { "memory", "memory.max", "4G", "4294967296\n", "8G", "8589934592\n" },
        { "pids", "pids.max", "100", "100\n", "0x20", "32\n" },
        { "cpu", "cpu.max", "50000", "50000 100000\n", "max", "max 100000\n" },
};

static int refuse_value(const char *op, void *userdata) {
        return strstr(op, userdata) ? -EINVAL : 0;
}

START_TEST(test_policy_values) {
        _cleanup_(backend_freep) Backend *b = open_emu();
        CgMask x = CGMASK(controller_from_string(X));
        size_t i = 0;

        while (i < ELEMENTSOF(value_cases) && !streq(value_cases[i].controller, X))
                i++;
        if (i == ELEMENTSOF(value_cases) || !kexists(".", value_cases[i].file))
                return;         /* no value file of X that takes a value without a device */
        fprintf(stderr, "# values through %s\n", value_cases[i].file);
        const char *file = value_cases[i].file;
        DesiredValue v = { file, value_cases[i].v1, { "t.conf", 5 } };
        DesiredCgroup d[] = {
                { .path = "/", .sc_enable = x },
                { .path = "/A", .create = true, .values = &v, .n_values = 1 },
        };
        unsigned writes = 0;
        ApplyFailure f = {};
        Plan *p;

        p = test_plan_in_sync(b, d, ELEMENTSOF(d));
        ok(plan_apply(p, b, &f));
        plan_free(p);
        kassert("A", file, value_cases[i].shown1);

        /* re-apply: the kernel's normalized text is in sync with the configured one, no write at all */
        p = test_plan_in_sync(b, d, ELEMENTSOF(d));
        ck_assert_uint_eq(p->n_ops, 0);
        ok(test_apply_hooked(p, b, test_count_ops, &writes, &f));
        ck_assert_uint_eq(writes, 0);
        plan_free(p);

        /* a changed value: one write */
        v.value = value_cases[i].v2;
        p = test_plan_in_sync(b, d, ELEMENTSOF(d));
        ck_assert_uint_eq(p->n_ops, 1);
        ok(test_apply_hooked(p, b, test_count_ops, &writes, &f));
        ck_assert_uint_eq(writes, 1);
        plan_free(p);
        kassert("A", file, value_cases[i].shown2);

        /* refused at its turn (the fault hook stands in for the kernel): the new cgroup goes again */
        _cleanup_free_ char *needle = test_strdupf(" %s ", file);
        DesiredCgroup d2[] = {
                { .path = "/", .sc_enable = x },
                { .path = "/A", .create = true, .values = &v, .n_values = 1 },
                { .path = "/A2", .create = true },
        };
        v.value = value_cases[i].v1;
        p = test_plan_in_sync(b, d2, ELEMENTSOF(d2));
        ck_assert_uint_eq(p->n_ops, 2);
        ck_assert_int_eq(test_apply_hooked(p, b, refuse_value, needle, &f), -EINVAL);
        ck_assert_uint_eq(f.undone, 1);
        plan_free(p);
        ck_assert(!kexists("A2", NULL));
        kassert("A", file, value_cases[i].shown2);
}
END_TEST

START_TEST(test_auto) {
        _cleanup_(backend_freep) Backend *b = NULL;
        _cleanup_free_ char *msg = NULL, *plain = NULL;
        Backend *b2 = NULL;

        ok(backend_open(BACKEND_AUTO, scratch, state, &b, &msg));
        ck_assert_int_eq(backend_get_type(b), BACKEND_EMULATED);
        b = backend_free(b);

        plain = test_strdupf("%s/plain", state);
        ck_assert_int_eq(mkdir(plain, 0755), 0);
        ck_assert_int_eq(backend_open(BACKEND_AUTO, plain, state, &b2, &msg), -ENOMEDIUM);
        {
                /* with cgroup2 mounted somewhere, that mount is the advice; else the sim */
                _cleanup_free_ char *where = NULL, *want = NULL;

                if (backend_find_cgroup2_mount("/proc/self/mountinfo", &where) >= 0)
                        want = test_strdupf("--cgroup-root %s", where);
                else
                        want = test_strdupf("--backend sim");
                ck_assert_ptr_nonnull(strstr(msg, want));
        }
        free(msg);
        msg = NULL;
        ck_assert_int_eq(backend_open(BACKEND_EMULATED, plain, state, &b2, &msg), -ENOMEDIUM);
        free(msg);
        msg = NULL;
        ck_assert_int_eq(backend_open(BACKEND_NATIVE, scratch, state, &b2, &msg), -EOPNOTSUPP);
        ck_assert_ptr_nonnull(strstr(msg, "bypass"));
}
END_TEST

/* the model's file against the kernel's, for what the scan may derive instead of reading */
static void model_is_kernel(const Hierarchy *h, const char *rel, const char *file) {
        _cleanup_free_ char *m = NULL, *k = kread(rel, file);
        Cgroup *c;

        ck_assert_int_eq(hierarchy_lookup(h, rel, &c), 0);
        ck_assert_int_eq(cgroup_read(h, c, file, &m), 0);
        ck_assert_msg(streq(m, k), "%s/%s: model '%s', kernel '%s'", rel, file, m, k);
}

/*
 * A tree made behind the backend's back, loaded: where the scan derives a
 * file from the parent instead of reading it (controllers, the type of a
 * childless cgroup under a plain domain, no processes below an unpopulated
 * cgroup), the model shows what the kernel shows. The limits below the top
 * are left unread until a mkdir below needs them; then they are the kernel's.
 */
START_TEST(test_scan_derives) {
        static const char *const dirs[] = { "P", "P/q", "P/r", "E", "E/e", "E/e/f", "T", "T/t", "L", "L/l" };
        static const char *const files[] = { "cgroup.controllers", "cgroup.subtree_control", "cgroup.type",
                                             "cgroup.max.depth", "cgroup.max.descendants" };
        _cleanup_free_ char *plus = test_strdupf("+%s", X), *pid_s = NULL;
        pid_t pid;
        int release;

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *d = kpath(dirs[i], NULL);
                ck_assert_msg(mkdir(d, 0755) == 0, "mkdir %s: %m", d);
        }
        _cleanup_free_ char *sc = kpath(".", "cgroup.subtree_control"), *esc = kpath("E", "cgroup.subtree_control");
        _cleanup_free_ char *tt = kpath("T/t", "cgroup.type"), *procs = kpath("P/q", "cgroup.procs");
        _cleanup_free_ char *ld = kpath("L/l", "cgroup.max.depth"), *lm = kpath("L", "cgroup.max.descendants");
        ck_assert_int_eq(test_write_file(sc, plus), 0);
        ck_assert_int_eq(test_write_file(esc, plus), 0);
        ck_assert_int_eq(test_write_file(tt, "threaded"), 0);
        ck_assert_int_eq(test_write_file(ld, "0"), 0);
        ck_assert_int_eq(test_write_file(lm, "5"), 0);
        release = test_spawn_waiter(&pid);
        pid_s = test_strdupf("%d", (int) pid);
        ck_assert_int_eq(test_write_file(procs, pid_s), 0);

        _cleanup_(backend_freep) Backend *b = open_emu();
        const Hierarchy *h = backend_get_model(b);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                Cgroup *c;
                ck_assert_int_eq(hierarchy_lookup(h, dirs[i], &c), 0);
                ck_assert_msg(cgroup_limits_unread(c), "%s: limits read", dirs[i]);
                for (size_t j = 0; j < ELEMENTSOF(files); j++)
                        if (!startswith(files[j], "cgroup.max."))
                                model_is_kernel(h, dirs[i], files[j]);
        }
        /* a mkdir below L/l needs the limits of L/l and L: read then, and once */
        ck_assert_int_eq(backend_load_limits_above(b, "L/l/x"), 2);
        ck_assert_int_eq(backend_load_limits_above(b, "L/l/x"), 0);
        ck_assert_int_eq(backend_load_limits_above(b, "L/y"), 0);
        model_is_kernel(h, "L/l", "cgroup.max.depth");
        model_is_kernel(h, "L/l", "cgroup.max.descendants");
        model_is_kernel(h, "L", "cgroup.max.descendants");
        ck_assert_int_eq(backend_load_limits_above(b, "P/q/x"), 2);
        kassert("T", "cgroup.type", "domain threaded\n");
        Cgroup *q, *r, *f;
        ck_assert_int_eq(hierarchy_lookup(h, "P/q", &q), 0);
        ck_assert_int_eq(hierarchy_lookup(h, "P/r", &r), 0);
        ck_assert_int_eq(hierarchy_lookup(h, "E/e/f", &f), 0);
        ck_assert_uint_eq(cgroup_nr_procs(q), 1);
        ck_assert_uint_eq(cgroup_nr_procs(r), 0);
        ck_assert_uint_eq(cgroup_nr_procs(f), 0);

        (void) close(release);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}
END_TEST

/*
 * A leaf's cgroup.max.depth set behind the backend's back, unread by the
 * scan: a mkdir below it is refused by the model as the kernel refuses it,
 * and nothing changes (no disagreement, no reload).
 */
START_TEST(test_unread_limit_refuses) {
        _cleanup_free_ char *m = kpath("M", NULL), *mm = kpath("M/m", NULL), *d = kpath("M/m", "cgroup.max.depth");
        _cleanup_free_ char *dump = NULL, *dump2 = NULL;
        Reason reason = REASON_NONE;
        Cgroup *c;

        ck_assert_int_eq(mkdir(m, 0755), 0);
        ck_assert_int_eq(mkdir(mm, 0755), 0);
        ck_assert_int_eq(test_write_file(d, "0"), 0);
        _cleanup_(backend_freep) Backend *b = open_emu();
        ck_assert_int_eq(hierarchy_lookup(backend_get_model(b), "M/m", &c), 0);
        ck_assert(cgroup_limits_unread(c));
        dump = test_dump(backend_get_model(b));

        ck_assert_int_eq(backend_mkdir(b, "M/m/x", &reason), -EAGAIN);
        ck_assert_str_eq(reason_to_string(reason), reason_to_string(REASON_LIMIT));
        ck_assert(!kexists("M/m/x", NULL));
        ck_assert(!cgroup_limits_unread(c));
        dump2 = test_dump(backend_get_model(b));
        /* the same but for the limit now known */
        ck_assert_ptr_nonnull(strstr(dump2, "max_depth=0"));
        ck_assert_ptr_null(strstr(dump, "max_depth=0"));
        ok(backend_mkdir(b, "M/y", NULL));
        ck_assert(kexists("M/y", NULL));
}
END_TEST

/* the same for a cgroup with children: its cgroup.max.descendants, unread, refuses a mkdir two levels below */
START_TEST(test_unread_inner_limit_refuses) {
        _cleanup_free_ char *n = kpath("N", NULL), *nn = kpath("N/n", NULL), *d = kpath("N", "cgroup.max.descendants");
        Reason reason = REASON_NONE;
        Cgroup *c;

        ck_assert_int_eq(mkdir(n, 0755), 0);
        ck_assert_int_eq(mkdir(nn, 0755), 0);
        ck_assert_int_eq(test_write_file(d, "1"), 0);
        _cleanup_(backend_freep) Backend *b = open_emu();
        ck_assert_int_eq(hierarchy_lookup(backend_get_model(b), "N", &c), 0);
        ck_assert(cgroup_limits_unread(c));

        ck_assert_int_eq(backend_mkdir(b, "N/n/x", &reason), -EAGAIN);
        ck_assert_str_eq(reason_to_string(reason), reason_to_string(REASON_LIMIT));
        ck_assert(!kexists("N/n/x", NULL));
        ck_assert(!cgroup_limits_unread(c));
        kassert("N", "cgroup.max.descendants", "1\n");
}
END_TEST

/* levels read by several threads load the model that one thread loads, cgroup for cgroup */
START_TEST(test_scan_parallel) {
        _cleanup_free_ char *plus = test_strdupf("+%s", X), *sc = kpath(".", "cgroup.subtree_control");
        _cleanup_free_ char *one = NULL, *many = NULL;

        ck_assert_int_eq(test_write_file(sc, plus), 0);
        for (int i = 0; i < 6; i++) {
                _cleanup_free_ char *p = xstrdupf("p%d", i), *dp = kpath(p, NULL);
                ck_assert_int_eq(mkdir(dp, 0755), 0);
                for (int j = 0; j < 5; j++) {
                        _cleanup_free_ char *q = xstrdupf("p%d/q%d", i, j), *dq = kpath(q, NULL);
                        ck_assert_int_eq(mkdir(dq, 0755), 0);
                        if ((i + j) % 3 == 0) {
                                _cleanup_free_ char *l = kpath(q, "cgroup.max.descendants");
                                ck_assert_int_eq(test_write_file(l, "7"), 0);
                        }
                }
                if (i % 2 == 0) {
                        _cleanup_free_ char *s = kpath(p, "cgroup.subtree_control");
                        ck_assert_int_eq(test_write_file(s, plus), 0);
                }
        }
        kernel_scan_set_parallel(1, 0);
        {
                _cleanup_(backend_freep) Backend *b = open_emu();
                one = test_dump(backend_get_model(b));
        }
        kernel_scan_set_parallel(4, 1);
        {
                _cleanup_(backend_freep) Backend *b = open_emu();
                many = test_dump(backend_get_model(b));
                ok(backend_load_limits_above(b, "p0/q0/x") == 2 ? 0 : -1);
        }
        ck_assert_str_eq(one, many);
        ck_assert_ptr_nonnull(strstr(one, "p1/q2"));
}
END_TEST

/*
 * The scan opens a cgroup by name from its parent's fd, as many as
 * RLIMIT_NOFILE leaves room for, and by path from the root beyond that:
 * both ways read the same hierarchy.
 */
START_TEST(test_scan_fd_budget) {
        _cleanup_free_ char *plus = test_strdupf("+%s", X), *sc = kpath(".", "cgroup.subtree_control");
        _cleanup_free_ char *held = NULL, *none = NULL, *one = NULL;
        struct rlimit rl, low;
        unsigned fds = check_open_fds();

        ck_assert_int_eq(test_write_file(sc, plus), 0);
        /* p*: inner, with +X; q*: inner, q2 with +X; r*: leaves, r1 below q2 with +X */
        for (int i = 0; i < 4; i++) {
                _cleanup_free_ char *p = xstrdupf("p%d", i), *dp = kpath(p, NULL), *ps = kpath(p, "cgroup.subtree_control");
                ck_assert_int_eq(mkdir(dp, 0755), 0);
                ck_assert_int_eq(test_write_file(ps, plus), 0);
                for (int j = 0; j < 3; j++) {
                        _cleanup_free_ char *q = xstrdupf("p%d/q%d", i, j), *dq = kpath(q, NULL);
                        ck_assert_int_eq(mkdir(dq, 0755), 0);
                        if (j == 2) {
                                _cleanup_free_ char *qs = kpath(q, "cgroup.subtree_control");
                                ck_assert_int_eq(test_write_file(qs, plus), 0);
                        }
                        for (int k = 0; k < 3; k++) {
                                _cleanup_free_ char *r = xstrdupf("p%d/q%d/r%d", i, j, k), *dr = kpath(r, NULL);
                                ck_assert_int_eq(mkdir(dr, 0755), 0);
                                if (j == 2 && k == 1) {
                                        _cleanup_free_ char *rs = kpath(r, "cgroup.subtree_control");
                                        ck_assert_int_eq(test_write_file(rs, plus), 0);
                                }
                        }
                }
        }
        kernel_scan_set_parallel(4, 1);
        {
                _cleanup_(backend_freep) Backend *b = open_emu();
                held = test_dump(backend_get_model(b));
        }
        ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        /* (128 + 2 * budget): no fd held, then one */
        for (rlim_t cur = 128; cur <= 130; cur += 2) {
                low = (struct rlimit) { .rlim_cur = cur, .rlim_max = rl.rlim_max };
                ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
                {
                        _cleanup_(backend_freep) Backend *b = open_emu();
                        if (cur == 128)
                                none = test_dump(backend_get_model(b));
                        else
                                one = test_dump(backend_get_model(b));
                }
                ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        }
        ck_assert_str_eq(held, none);
        ck_assert_str_eq(held, one);
        ck_assert_uint_eq(check_open_fds(), fds);       /* the held directories too */
        ck_assert_ptr_nonnull(strstr(held, "p3/q2/r1"));
}
END_TEST

static Suite *suite(void) {
        return CHECK_SUITE("backend-emulated", "emulated", setup, teardown, test_open_empty, test_passthrough,
                           test_reopen, test_no_bypass_not_written, test_check_below, test_drift, test_kernel_refusal_restores,
                           test_fault_injection, test_rmdir_drops_passthrough, test_knobs_and_type, test_auto,
                           test_policy_values, test_scan_derives, test_unread_limit_refuses, test_unread_inner_limit_refuses,
                           test_scan_parallel, test_scan_fd_budget);
}

static char *find_cgroup2(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        char buf[4096];

        if (!f)
                return NULL;
        while (fgets(buf, sizeof(buf), f)) {
                char *sep = strstr(buf, " - ");
                char mp[4096], fstype[64];
                if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || !streq(fstype, "cgroup2"))
                        continue;
                if (sscanf(buf, "%*s %*s %*s %*s %4095s", mp) == 1)
                        return strdup(mp);
        }
        return NULL;
}

int main(void) {
        _cleanup_free_ char *rootsc = NULL, *ctl = NULL, *sc_path = NULL, *ctl_path = NULL;
        bool added = false;
        SRunner *sr;
        int failed;

        mnt = getenv("CGB_TEST_CGROUP2") ? strdup(getenv("CGB_TEST_CGROUP2")) : find_cgroup2();
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root to write a cgroup2 mount\n");
                return 0;
        }
        if (!mnt) {
                printf("1..0 # SKIP no cgroup2 mount\n");
                return 0;
        }
        if (kernel_has_bypass_feature()) {
                printf("1..0 # SKIP the kernel has the bypass series (emulated runs on stock kernels)\n");
                return 0;
        }
        ctl_path = xstrdupf("%s/cgroup.controllers", mnt);
        sc_path = xstrdupf("%s/cgroup.subtree_control", mnt);
        ctl = test_read_file(ctl_path);
        if (!ctl || access(sc_path, W_OK) < 0) {
                printf("1..0 # SKIP %s is not a writable cgroup2 mount\n", mnt);
                return 0;
        }
        X = getenv("CGB_TEST_CONTROLLER");
        if (!X) {
                CgMask m, unused;
                kernel_parse_masks(ctl, &m, &unused);
                X = (m & CGMASK(CONTROLLER_HUGETLB)) ? "hugetlb" : NULL;
                FOREACH_CONTROLLER_IN(c, m & ~controller_threaded_mask(CGMASK_ALL))
                        if (!X)
                                X = controller_to_string(c);
        }
        if (!X) {
                printf("1..0 # SKIP %s offers no domain controller\n", mnt);
                return 0;
        }

        /* the scratch cgroups below the mount's root need X from it */
        rootsc = test_read_file(sc_path);
        if (rootsc) {
                CgMask m, unused;
                kernel_parse_masks(rootsc, &m, &unused);
                if (!(m & CGMASK(controller_from_string(X)))) {
                        _cleanup_free_ char *plus = xstrdupf("+%s", X);
                        if (test_write_file(sc_path, plus) < 0) {
                                printf("1..0 # SKIP cannot enable %s in %s: %m\n", X, mnt);
                                return 0;
                        }
                        added = true;
                }
        }

        run_pid = getpid();
        sr = srunner_create(suite());
        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);

        /* a failed test exits before its teardown: remove what it left */
        _cleanup_free_ char *prefix = xstrdupf("cgb-bt-%d-", (int) run_pid);
        DIR *d = opendir(mnt);
        for (struct dirent *de; d && (de = readdir(d));)
                if (startswith(de->d_name, prefix)) {
                        _cleanup_free_ char *p = xstrdupf("%s/%s", mnt, de->d_name);
                        remove_cgroups(p);
                }
        if (d)
                closedir(d);

        if (added) {
                _cleanup_free_ char *minus = xstrdupf("-%s", X);
                /* EBUSY: another test run uses it now; it restores it itself */
                (void) test_write_file(sc_path, minus);
        }
        free(mnt);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
