/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Helpers shared by the model's unit tests. Assertions are macros so that
 * Check reports the line of the test, not of a helper.
 *
 * ASSERT_FAIL() is the rule of style.md section 3 made executable: it dumps
 * the hierarchy, runs the call (which may pass &rsn as its reterr_reason),
 * and asserts the exact errno, the Reason and a byte-identical dump.
 */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check-run.h"
#include "cgbypass/macro.h"
#include "cgbypass/model.h"

/* The project's VM kernel: cpuset cpu io memory perf_event hugetlb pids rdma misc debug. */
#define VM CGMASK_VM_KERNEL
#define M(c) CGMASK(CONTROLLER_##c)

/* "do not check the Reason" */
#define ANY_REASON ((Reason) -1)
/* what a Reason variable holds before the call: success must leave it alone */
#define UNSET_REASON _REASON_INVALID

static inline const char *reason_str(Reason r) {
        return r == UNSET_REASON ? "(unset)" : strempty(reason_to_string(r));
}

static inline Hierarchy *hnew(RuleSet rules, CgMask builtin) {
        Hierarchy *h = NULL;
        ck_assert_int_eq(hierarchy_new(&h, rules, builtin), 0);
        ck_assert_ptr_nonnull(h);
        return h;
}

static inline char *hdump(const Hierarchy *h) {
        char *s = NULL;
        ck_assert_int_eq(hierarchy_dump(h, &s), 0);
        ck_assert_ptr_nonnull(s);
        return s;
}

static inline Cgroup *cg(const Hierarchy *h, const char *path) {
        Cgroup *c = NULL;
        int r = hierarchy_lookup(h, path, &c);
        ck_assert_msg(r == 0, "lookup '%s': %s", path, strerror(-r));
        return c;
}

/* hierarchy_check() must pass */
#define hcheck(h) do {                                                          \
                _cleanup_free_ char *_msg = NULL;                               \
                int _r = hierarchy_check((h), &_msg);                           \
                ck_assert_msg(_r == 0, "hierarchy_check: %d %s", _r, strempty(_msg)); \
        } while (0)

/* mkdir that must succeed; returns the new cgroup */
static inline Cgroup *mkdir_ok_at(Hierarchy *h, const char *path, const char *file, int line) {
        Reason rsn = UNSET_REASON;
        Cgroup *c = NULL;
        int r = hierarchy_mkdir(h, path, &c, &rsn);
        ck_assert_msg(r == 0, "%s:%d: mkdir '%s': %s (%s)", file, line, path, strerror(-r), reason_str(rsn));
        ck_assert_ptr_nonnull(c);
        return c;
}
#define MKDIR(h, path) mkdir_ok_at((h), (path), __FILE__, __LINE__)

/* Run CALL; it must succeed and must not touch rsn. */
#define ASSERT_OK(call) do {                                                    \
                Reason rsn = UNSET_REASON;                                      \
                int _r = (call);                                                \
                ck_assert_msg(_r == 0, "%s: got %d (%s, reason %s), expected 0", \
                              #call, _r, strerror(_r < 0 ? -_r : 0), reason_str(rsn)); \
                ck_assert_msg(rsn == UNSET_REASON, "%s: succeeded but set reason %s", \
                              #call, reason_str(rsn));                          \
        } while (0)

/* Run CALL; it must fail with -ERR (and REASON unless ANY_REASON) and leave H's dump unchanged. */
#define ASSERT_FAIL(h, err, reason, call) do {                                  \
                _cleanup_free_ char *_before = hdump(h), *_after = NULL;        \
                Reason rsn = UNSET_REASON;                                      \
                int _r = (call);                                                \
                ck_assert_msg(_r == -(err), "%s: got %d (%s, reason %s), expected -%s", \
                              #call, _r, _r < 0 ? strerror(-_r) : "success",   \
                              reason_str(rsn), strerrorname_np(err));           \
                if ((reason) != ANY_REASON)                                     \
                        ck_assert_msg(rsn == (reason), "%s: -%s as expected, but reason %s, expected %s", \
                                      #call, strerrorname_np(err), reason_str(rsn), reason_str(reason)); \
                _after = hdump(h);                                              \
                ck_assert_msg(streq(_before, _after),                           \
                              "%s failed but changed the state:\n--- before\n%s--- after\n%s", \
                              #call, _before, _after);                          \
        } while (0)

/* Run CALL; it must succeed (return 0) and leave the dump unchanged: a no-op. */
#define ASSERT_NOOP(h, call) do {                                               \
                _cleanup_free_ char *_before = hdump(h), *_after = NULL;        \
                ASSERT_OK(call);                                                \
                _after = hdump(h);                                              \
                ck_assert_msg(streq(_before, _after),                           \
                              "%s should be a no-op but changed the state:\n--- before\n%s--- after\n%s", \
                              #call, _before, _after);                          \
        } while (0)

/* write(2) of BUF to PATH/FILE through cgroup_write() */
#define W(h, path, file, buf) cgroup_write((h), cg((h), (path)), (file), (buf), &rsn)

#define WRITE_OK(h, path, file, buf) ASSERT_OK(W(h, path, file, buf))
#define WRITE_FAIL(h, path, file, buf, err, reason) ASSERT_FAIL(h, err, reason, W(h, path, file, buf))
#define WRITE_NOOP(h, path, file, buf) ASSERT_NOOP(h, W(h, path, file, buf))

/* the text of PATH/FILE; must be readable */
static inline char *read_at(const Hierarchy *h, const char *path, const char *file,
                            const char *srcfile, int line) {
        char *s = NULL;
        int r = cgroup_read(h, cg(h, path), file, &s);
        ck_assert_msg(r == 0, "%s:%d: read %s/%s: %s", srcfile, line, path, file, strerror(-r));
        return s;
}
#define READ(h, path, file) read_at((h), (path), (file), __FILE__, __LINE__)

#define ASSERT_READ(h, path, file, expected) do {                               \
                _cleanup_free_ char *_s = READ(h, path, file);                  \
                ck_assert_msg(streq(_s, (expected)), "%s/%s reads '%s', expected '%s'", \
                              (path), (file), _s, (expected));                  \
        } while (0)

/* a process placed in PATH (must succeed) */
static inline ProcId spawn_at(Hierarchy *h, const char *path, const char *srcfile, int line) {
        Reason rsn = UNSET_REASON;
        ProcId p = 0;
        int r = hierarchy_spawn(h, cg(h, path), &p, &rsn);
        ck_assert_msg(r == 0, "%s:%d: spawn in '%s': %s (%s)", srcfile, line, path, strerror(-r), reason_str(rsn));
        ck_assert_uint_ne(p, 0);
        return p;
}
#define SPAWN(h, path) spawn_at((h), (path), __FILE__, __LINE__)

static inline char *mask_str(CgMask m) {
        char *s = controller_mask_to_string(m, " ");
        ck_assert_ptr_nonnull(s);
        return s;
}

#define ASSERT_MASK(expr, expected) do {                                        \
                CgMask _got = (expr), _exp = (expected);                        \
                if (_got != _exp) {                                             \
                        _cleanup_free_ char *_g = mask_str(_got), *_e = mask_str(_exp); \
                        ck_abort_msg("%s = '%s', expected '%s'", #expr, _g, _e); \
                }                                                               \
        } while (0)

#define ASSERT_HAS_FILE(h, path, file, expected) do {                           \
                bool _has = cgroup_has_file((h), cg((h), (path)), (file));      \
                ck_assert_msg(_has == (expected), "%s/%s: %s, expected %s", (path), (file), \
                              _has ? "present" : "absent", (expected) ? "present" : "absent"); \
        } while (0)
