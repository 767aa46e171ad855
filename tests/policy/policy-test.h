/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the policy tests share: the documentation example as desired state,
 * a plan as text, and a scratch directory with root/ and state/ for a sim
 * backend, whose snapshot compares the hierarchy byte for byte.
 */

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

#include "../backend/backend-test.h"
#include "cgbypass/backend.h"
#include "cgbypass/macro.h"
#include "cgbypass/policy.h"
#include "cgbypass/strbuf.h"

/* the seeds' documentation example (README: "Bypass mode in one paragraph") */
#define DOC_EXAMPLE_DESIRED {                                                                   \
        { .path = "/", .sc_enable = CGMASK(CONTROLLER_CPU) },                                   \
        { .path = "/A", .create = true, .sc_bypass = CGMASK(CONTROLLER_CPU) },                  \
        { .path = "/A/B", .create = true, .sc_bypass = CGMASK(CONTROLLER_CPU) },                \
        { .path = "/A/B/C", .create = true, .sc_bypass = CGMASK(CONTROLLER_CPU) },              \
        { .path = "/A/B/C/D", .create = true, .sc_enable = CGMASK(CONTROLLER_CPU) },            \
        { .path = "/A/B/C/D/E/F", .create = true },                                             \
        { .path = "/A/B/G", .create = true, .ctl_enable = CGMASK(CONTROLLER_CPU) },             \
}

/* what plan_print() writes (malloc'ed) */
static inline char *plan_text(const Plan *p) {
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);

        ck_assert_ptr_nonnull(f);
        plan_print(p, f);
        fclose(f);
        return s;
}

static char scratch_base[] = "/tmp/cgb-policy-XXXXXX";
static StrBuf scratch_snap;
static bool scratch_modes;

/* a new scratch directory: @ret_root and @ret_state below it (not made yet: the backend makes them) */
static inline void scratch_make(char **ret_root, char **ret_state) {
        ck_assert_ptr_nonnull(mkdtemp(scratch_base));
        ck_assert_int_ge(asprintf(ret_root, "%s/root", scratch_base), 0);
        ck_assert_int_ge(asprintf(ret_state, "%s/state", scratch_base), 0);
}

static inline int scratch_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(p);
}

static inline void scratch_remove(char *root, char *state) {
        (void) nftw(scratch_base, scratch_rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(root);
        free(state);
        strcpy(scratch_base, "/tmp/cgb-policy-XXXXXX");
}

/* the fixture of the tests on a sim backend: a scratch directory for each test, root/ and state/ below it */
static char *root, *state;

static inline void scratch_setup(void) {
        scratch_make(&root, &state);
}

static inline void scratch_teardown(void) {
        scratch_remove(root, state);
}

/* a sim backend on the fixture's directories */
static inline Backend *scratch_open_sim(void) {
        return test_backend_open(BACKEND_SIM, root, state);
}

static inline int scratch_snap_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        strbuf_printf(&scratch_snap, "%s %c", p + strlen(scratch_base), flag == FTW_D ? 'd' : 'f');
        if (scratch_modes)
                strbuf_printf(&scratch_snap, " %o", st->st_mode & 0777);
        if (flag == FTW_F) {
                FILE *f = fopen(p, "re");
                char buf[4096];
                size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
                if (f)
                        fclose(f);
                strbuf_putc(&scratch_snap, ' ');
                strbuf_append_n(&scratch_snap, buf, n);
        }
        strbuf_putc(&scratch_snap, '\n');
        return 0;
}

/*
 * Every file and directory below @dir, in the directory's order (stable for
 * a directory nobody else changes), with its contents and, with @modes, its
 * mode; then the model of @b. Malloc'ed.
 */
static inline char *scratch_snapshot(Backend *b, const char *dir, bool modes) {
        char *s, *model;

        scratch_snap = STRBUF_INIT;
        scratch_modes = modes;
        ck_assert_int_eq(nftw(dir, scratch_snap_one, 16, FTW_PHYS), 0);
        ck_assert_int_eq(hierarchy_dump(backend_get_model(b), &model), 0);
        strbuf_append(&scratch_snap, model);
        free(model);
        ck_assert_int_eq(strbuf_steal(&scratch_snap, &s), 0);
        return s;
}
