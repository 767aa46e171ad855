/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgbypassd's client changes (src/daemon/client-changes.c): the overlay over the
 * configuration, what a new configuration keeps of it, and its file.
 */
#include <check.h>
#include <fcntl.h>
#include <ftw.h>

#include "../check-run.h"
#include "change-journal.h"
#include "client-changes.h"

static char *dir;

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(p);
}

static void setup(void) {
        char t[] = "/tmp/cgb-requests-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(t));
        dir = strdup(t);
}

static void teardown(void) {
        (void) nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(dir);
}

static Config *config_from(const char *text) {
        _cleanup_free_ char *path = NULL;
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        Config *c = NULL;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/c.conf", dir), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
        ck_assert_int_eq(config_load(path, NULL, &c, &errs), 0);
        config_errors_done(&errs);
        return c;
}

START_TEST(test_newest_word_wins) {
        ClientChanges c = {};
        ControllerChange ch = { .disable = CGMASK(CONTROLLER_CPU) };
        DesiredCgroup d = { .path = "/a", .sc_enable = CGMASK(CONTROLLER_CPU), .sc_bypass = CGMASK(CONTROLLER_IO),
                            .ctl_enable = CGMASK(CONTROLLER_MEMORY) };
        DesiredSet config = { .items = &d, .n = 1 }, merged = {};

        ck_assert_int_eq(client_changes_set(&c, "/a", true, &ch, false, 1000), 0);
        ch = (ControllerChange) { .bypass = CGMASK(CONTROLLER_MEMORY) };
        ck_assert_int_eq(client_changes_set(&c, "/a", false, &ch, true, 0), 0);
        ch = (ControllerChange) { .enable = CGMASK(CONTROLLER_PIDS) };
        ck_assert_int_eq(client_changes_set(&c, "/b", true, &ch, true, 0), 0);
        ck_assert_uint_eq(c.n, 2);

        ck_assert_int_eq(client_changes_merge(&config, &c, NULL, NULL, &merged, NULL, NULL), 0);
        ck_assert_uint_eq(merged.n, 2);
        /* cpu: the client's -cpu replaced the configuration's +cpu; io kept */
        ck_assert_uint_eq(merged.items[0].sc_enable, 0);
        ck_assert_uint_eq(merged.items[0].sc_disable, CGMASK(CONTROLLER_CPU));
        ck_assert_uint_eq(merged.items[0].sc_bypass, CGMASK(CONTROLLER_IO));
        ck_assert_uint_eq(merged.items[0].ctl_enable, 0);
        ck_assert_uint_eq(merged.items[0].ctl_bypass, CGMASK(CONTROLLER_MEMORY));
        ck_assert_ptr_eq(merged.items[0].sc_origin.file, client_change_origin);
        ck_assert_ptr_eq(merged.items[0].origin.file, NULL);   /* the configuration's section */
        ck_assert_str_eq(merged.items[1].path, "/b");
        ck_assert_ptr_eq(merged.items[1].origin.file, client_change_origin);
        ck_assert_uint_eq(merged.items[1].origin.line, 2);
        ck_assert(!merged.items[1].create);
        desired_set_done(&merged);

        /* who set what */
        ck_assert_uint_eq(c.items[0].admin, CGMASK(CONTROLLER_MEMORY));
        ck_assert_uint_eq(c.items[0].owner, 1000);
        ch = (ControllerChange) { .enable = CGMASK(CONTROLLER_MEMORY) };
        ck_assert_int_eq(client_changes_set(&c, "/a", false, &ch, false, 1000), 0);
        ck_assert_uint_eq(c.items[0].admin, 0);
        client_changes_done(&c);
}
END_TEST

START_TEST(test_merge_below_and_gone) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        _cleanup_free_ size_t *gone = NULL;
        ControllerChange ch = { .enable = CGMASK(CONTROLLER_CPU) };
        DesiredCgroup d[] = { { .path = "/a" }, { .path = "/a/new", .create = true }, { .path = "/z" } };
        DesiredSet config = { .items = d, .n = ELEMENTSOF(d) }, merged = {};
        ClientChanges c = {};
        size_t n_gone = 0;

        ck_assert_int_eq(hierarchy_new(&h, RULES_BYPASS, CGMASK_VM_KERNEL), 0);
        ck_assert_int_eq(hierarchy_mkdir(h, "a", NULL, NULL), 0);
        ck_assert_int_eq(hierarchy_mkdir(h, "a/kid", NULL, NULL), 0);
        ck_assert_int_eq(client_changes_set(&c, "/a/kid", false, &ch, false, 1000), 0);
        ck_assert_int_eq(client_changes_set(&c, "/a/gone", false, &ch, false, 1000), 0);
        ck_assert_int_eq(client_changes_set(&c, "/a/new", false, &ch, false, 1000), 0);
        ck_assert_int_eq(client_changes_set(&c, "/ab", false, &ch, false, 1000), 0);

        ck_assert_int_eq(client_changes_merge(&config, &c, h, "/a", &merged, &gone, &n_gone), 0);
        /* /a, /a/new (the configuration makes it), /a/kid; not /z, not /ab (a sibling, not below) */
        ck_assert_uint_eq(merged.n, 3);
        ck_assert_str_eq(merged.items[0].path, "/a");
        ck_assert_str_eq(merged.items[1].path, "/a/new");
        ck_assert_uint_eq(merged.items[1].ctl_enable, CGMASK(CONTROLLER_CPU));
        ck_assert_str_eq(merged.items[2].path, "/a/kid");
        ck_assert_uint_eq(n_gone, 1);
        ck_assert_str_eq(c.items[gone[0]].path, "/a/gone");
        desired_set_done(&merged);
        client_changes_done(&c);
}
END_TEST

/* Changes are kept in path order (a subtree is one run): found by bisection, merged below a cgroup by its run */
START_TEST(test_path_order) {
        static const char *const paths[] = { "/a0", "/a/b/c", "/", "/ab", "/a-b", "/a", "/a/b", "/b", "/a/a" };
        static const char *const sorted[] = { "/", "/a", "/a/a", "/a/b", "/a/b/c", "/a-b", "/a0", "/ab", "/b" };
        ControllerChange ch = { .enable = CGMASK(CONTROLLER_CPU) };
        DesiredCgroup d[] = { { .path = "/a/b" }, { .path = "/b" } };
        DesiredSet config = { .items = d, .n = ELEMENTSOF(d) }, merged = {};
        ClientChanges c = {};

        for (size_t i = 0; i < ELEMENTSOF(paths); i++)
                ck_assert_int_eq(client_changes_set(&c, paths[i], true, &ch, false, 1000), 0);
        ck_assert_uint_eq(c.n, ELEMENTSOF(sorted));
        for (size_t i = 0; i < c.n; i++) {
                ck_assert_str_eq(c.items[i].path, sorted[i]);
                ck_assert_ptr_eq(client_changes_find(&c, sorted[i]), &c.items[i]);
        }
        ck_assert_ptr_null(client_changes_find(&c, "/a/bb"));
        ck_assert_ptr_null(client_changes_find(&c, "/0"));

        /* below /a: /a/b from the configuration, then the changes' own /a, /a/a, /a/b/c; no /a-b, /a0, /ab */
        ck_assert_int_eq(client_changes_merge(&config, &c, NULL, "/a", &merged, NULL, NULL), 0);
        ck_assert_uint_eq(merged.n, 4);
        ck_assert_str_eq(merged.items[0].path, "/a/b");
        ck_assert_uint_eq(merged.items[0].sc_enable, CGMASK(CONTROLLER_CPU));
        ck_assert_ptr_eq(merged.items[0].origin.file, NULL);
        ck_assert_str_eq(merged.items[1].path, "/a");
        ck_assert_str_eq(merged.items[2].path, "/a/a");
        ck_assert_str_eq(merged.items[3].path, "/a/b/c");
        desired_set_done(&merged);

        /* the whole set: every change over its configuration entry, or an entry of its own */
        ck_assert_int_eq(client_changes_merge(&config, &c, NULL, NULL, &merged, NULL, NULL), 0);
        ck_assert_uint_eq(merged.n, ELEMENTSOF(sorted));
        ck_assert_uint_eq(merged.items[1].sc_enable, CGMASK(CONTROLLER_CPU));   /* /b */
        ck_assert_ptr_eq(merged.items[1].origin.file, NULL);
        desired_set_done(&merged);

        client_changes_remove(&c, 1);
        ck_assert_ptr_null(client_changes_find(&c, "/a"));
        ck_assert_ptr_eq(client_changes_find(&c, "/b"), &c.items[c.n - 1]);
        client_changes_done(&c);
}
END_TEST

START_TEST(test_prune_by_configuration) {
        _cleanup_(config_freep) Config *cfg = config_from(
                "[cgroup]\npath = /m\n"
                "[delegate]\npath = /d\nuser = 1000\ncontrollers = cpu\n");
        ControllerChange cpu_io = { .enable = CGMASK(CONTROLLER_CPU) | CGMASK(CONTROLLER_IO) };
        ControllerChange io = { .bypass = CGMASK(CONTROLLER_IO) };
        ClientChanges c = {};

        ck_assert_int_eq(client_changes_set(&c, "/d/x", true, &cpu_io, false, 1000), 0);  /* io not delegated */
        ck_assert_int_eq(client_changes_set(&c, "/d/y", true, &io, true, 0), 0);          /* an admin's: kept */
        ck_assert_int_eq(client_changes_set(&c, "/d/z", true, &cpu_io, false, 1001), 0);  /* not the owner */
        ck_assert_int_eq(client_changes_set(&c, "/m", true, &io, true, 0), 0);            /* managed */
        ck_assert_int_eq(client_changes_set(&c, "/m/below", true, &io, true, 0), 0);      /* neither */
        ck_assert_int_eq(client_changes_set(&c, "/u", true, &io, true, 0), 0);            /* neither */

        ck_assert_uint_eq(client_changes_prune(&c, cfg), 4);
        ck_assert_uint_eq(c.n, 3);
        ck_assert_str_eq(c.items[0].path, "/d/x");
        ck_assert_uint_eq(c.items[0].sc_enable, CGMASK(CONTROLLER_CPU));
        ck_assert_str_eq(c.items[1].path, "/d/y");
        ck_assert_str_eq(c.items[2].path, "/m");
        client_changes_done(&c);
}
END_TEST

START_TEST(test_file_round_trip) {
        ControllerChange a = { .enable = CGMASK(CONTROLLER_CPU), .bypass = CGMASK(CONTROLLER_IO),
                               .disable = CGMASK(CONTROLLER_MEMORY) };
        ControllerChange b = { .bypass = CGMASK(CONTROLLER_HUGETLB) };
        ClientChanges c = {}, back = {};
        _cleanup_free_ char *path = NULL;
        FILE *f;

        ck_assert_int_eq(client_changes_load(dir, &back), 0);   /* nothing saved yet: empty */
        ck_assert_uint_eq(back.n, 0);
        client_changes_done(&back);

        ck_assert_int_eq(client_changes_set(&c, "/w/a", true, &a, false, 4242), 0);
        ck_assert_int_eq(client_changes_set(&c, "/w/a", false, &b, true, 0), 0);
        ck_assert_int_eq(client_changes_set(&c, "/", true, &b, true, 0), 0);
        ck_assert_int_eq(client_changes_save(dir, &c), 0);
        ck_assert_int_eq(client_changes_load(dir, &back), 0);
        ck_assert_uint_eq(back.n, c.n);
        for (size_t i = 0; i < c.n; i++) {
                ck_assert_str_eq(back.items[i].path, c.items[i].path);
                ck_assert_uint_eq(back.items[i].sc_enable, c.items[i].sc_enable);
                ck_assert_uint_eq(back.items[i].sc_bypass, c.items[i].sc_bypass);
                ck_assert_uint_eq(back.items[i].sc_disable, c.items[i].sc_disable);
                ck_assert_uint_eq(back.items[i].ctl_enable, c.items[i].ctl_enable);
                ck_assert_uint_eq(back.items[i].ctl_bypass, c.items[i].ctl_bypass);
                ck_assert_uint_eq(back.items[i].admin, c.items[i].admin);
                ck_assert_uint_eq(back.items[i].owner, c.items[i].owner);
        }
        client_changes_done(&back);
        client_changes_done(&c);

        /* a damaged file is refused as a whole */
        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, CLIENT_CHANGES_FILE_NAME), 0);
        f = fopen(path, "ae");
        ck_assert_ptr_nonnull(f);
        fputs("change /w/b sc=+nosuch ctl= admin= owner=-\n", f);
        fclose(f);
        ck_assert_int_eq(client_changes_load(dir, &back), -EBADMSG);
}
END_TEST

/*
 * Nothing to save where nothing was saved: no file is written (a missing one
 * loads as empty), and a temporary a killed writer left goes. Once a snapshot
 * exists, an empty one replaces it.
 */
START_TEST(test_empty_not_written) {
        _cleanup_free_ char *path = NULL, *tmp = NULL;
        ClientChanges c = {}, back = {};
        struct stat st;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, CLIENT_CHANGES_FILE_NAME), 0);
        ck_assert_int_ge(asprintf(&tmp, "%s/.%s.tmp", dir, CLIENT_CHANGES_FILE_NAME), 0);
        f = fopen(tmp, "we");
        ck_assert_ptr_nonnull(f);
        fclose(f);
        ck_assert_int_eq(client_changes_save(dir, &c), 0);
        ck_assert_int_eq(stat(path, &st), -1);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_int_eq(stat(tmp, &st), -1);
        ck_assert_int_eq(client_changes_load(dir, &back), 0);
        ck_assert_uint_eq(back.n, 0);
        client_changes_done(&back);

        /* a snapshot with a change, then none: the file says so */
        ControllerChange ch = { .enable = CGMASK(CONTROLLER_CPU) };
        ck_assert_int_eq(client_changes_set(&c, "/w/a", true, &ch, false, 0), 0);
        ck_assert_int_eq(client_changes_save(dir, &c), 0);
        ck_assert_int_eq(stat(path, &st), 0);
        client_changes_done(&c);
        ck_assert_int_eq(client_changes_save(dir, &c), 0);
        ck_assert_int_eq(client_changes_load(dir, &back), 0);
        ck_assert_uint_eq(back.n, 0);
        ck_assert_int_eq(stat(path, &st), 0);
        client_changes_done(&back);
}
END_TEST

/* ---- the journal (change-journal.c) ---- */

static char *journal_file(void) {
        char *p;
        ck_assert_int_ge(asprintf(&p, "%s/%s", dir, CHANGE_JOURNAL_FILE_NAME), 0);
        return p;
}

static off_t file_size(const char *p) {
        struct stat st;
        ck_assert_int_eq(stat(p, &st), 0);
        return st.st_size;
}

/* one change of @path's cpu (enabled or not), queued and committed */
static void commit_one(ChangeJournal *j, ClientChanges *c, const char *path, bool enable) {
        ControllerChange ch = { .enable = enable ? CGMASK(CONTROLLER_CPU) : 0,
                                .disable = enable ? 0 : CGMASK(CONTROLLER_CPU) };
        ck_assert_int_eq(client_changes_set(c, path, true, &ch, true, 0), 0);
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->items[i].path, path))
                        ck_assert_int_eq(change_journal_add(j, &c->items[i]), 0);
        ck_assert_int_eq(change_journal_commit(j), 0);
}

static CgMask loaded_sc(const char *path) {
        ChangeJournal j = {};
        ClientChanges c = {};
        CgMask m = (CgMask) -1;

        ck_assert_int_eq(change_journal_load(&j, dir, &c), 0);
        for (size_t i = 0; i < c.n; i++)
                if (streq(c.items[i].path, path))
                        m = c.items[i].sc_enable;
        client_changes_done(&c);
        change_journal_done(&j);
        return m;
}

/*
 * Commits write into zeros written ahead, so that they change no file size;
 * recovery stops at the zeros; what a crash left past the commits is cut off
 * by the next commit, which writes zeros again.
 */
START_TEST(test_journal_zeros_ahead) {
        _cleanup_free_ char *p = journal_file();
        ChangeJournal j = {};
        ClientChanges c = {};

        ck_assert_int_eq(change_journal_load(&j, dir, &c), 0);
        commit_one(&j, &c, "/a", true);
        off_t len = file_size(p);
        ck_assert_int_eq(len, (off_t) (CHANGE_JOURNAL_BLOCK + CHANGE_JOURNAL_PREALLOC));
        commit_one(&j, &c, "/b", true);
        commit_one(&j, &c, "/a", false);
        ck_assert_int_eq(file_size(p), len);    /* into the zeros: the same length */
        ck_assert_uint_eq(j.size, 3 * CHANGE_JOURNAL_BLOCK);
        ck_assert_uint_eq(loaded_sc("/a"), 0);
        ck_assert_uint_eq(loaded_sc("/b"), CGMASK(CONTROLLER_CPU));

        /* a crash during the next commit: half a record in the zeros, never acknowledged */
        int fd = open(p, O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pwrite(fd, "4 0123456789abcdef change /b sc=-cpu", 36, 3 * CHANGE_JOURNAL_BLOCK), 36);
        close(fd);
        ck_assert_uint_eq(loaded_sc("/b"), CGMASK(CONTROLLER_CPU));
        ChangeJournal j2 = {};
        ClientChanges c2 = {};
        ck_assert_int_eq(change_journal_load(&j2, dir, &c2), 0);
        ck_assert_uint_eq(j2.size, 3 * CHANGE_JOURNAL_BLOCK);
        commit_one(&j2, &c2, "/c", true);
        /* the damaged tail went, and new zeros follow the commit */
        ck_assert_int_eq(file_size(p), (off_t) (4 * CHANGE_JOURNAL_BLOCK + CHANGE_JOURNAL_PREALLOC));
        ck_assert_uint_eq(loaded_sc("/c"), CGMASK(CONTROLLER_CPU));
        ck_assert_uint_eq(loaded_sc("/b"), CGMASK(CONTROLLER_CPU));

        /* compaction: the journal goes; the next commit makes it again, with zeros ahead */
        ck_assert_int_eq(change_journal_snapshot(&j2, &c2), 0);
        ck_assert_int_eq(access(p, F_OK), -1);
        commit_one(&j2, &c2, "/d", true);
        ck_assert_int_eq(file_size(p), (off_t) (CHANGE_JOURNAL_BLOCK + CHANGE_JOURNAL_PREALLOC));
        ck_assert_uint_eq(loaded_sc("/a"), 0);
        ck_assert_uint_eq(loaded_sc("/d"), CGMASK(CONTROLLER_CPU));

        client_changes_done(&c);
        client_changes_done(&c2);
        change_journal_done(&j);
        change_journal_done(&j2);
}
END_TEST

/* a file cut short behind our back (its zeros gone) is noticed: the next commit cuts to the commits, then writes */
START_TEST(test_journal_length_changed) {
        _cleanup_free_ char *p = journal_file();
        ChangeJournal j = {};
        ClientChanges c = {};

        ck_assert_int_eq(change_journal_load(&j, dir, &c), 0);
        commit_one(&j, &c, "/a", true);
        ck_assert_int_eq(truncate(p, 2 * CHANGE_JOURNAL_BLOCK), 0);
        commit_one(&j, &c, "/b", true);
        ck_assert_int_eq(file_size(p), (off_t) (2 * CHANGE_JOURNAL_BLOCK + CHANGE_JOURNAL_PREALLOC));
        ck_assert_uint_eq(loaded_sc("/a"), CGMASK(CONTROLLER_CPU));
        ck_assert_uint_eq(loaded_sc("/b"), CGMASK(CONTROLLER_CPU));
        client_changes_done(&c);
        change_journal_done(&j);
}
END_TEST

static Suite *requests_suite(void) {
        return CHECK_SUITE("requests", "overlay", setup, teardown, test_newest_word_wins,
                           test_merge_below_and_gone, test_path_order, test_prune_by_configuration, test_file_round_trip,
                           test_empty_not_written, test_journal_zeros_ahead, test_journal_length_changed);
}

int main(void) {
        return check_run(requests_suite());
}
