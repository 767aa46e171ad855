/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The checks a caller's request passes before anything acts on it
 * (src/daemon/request.c): its cgroup path, its controller names, a change,
 * and the quoting of what a caller sent. One table per check: the
 * argument, the errno, the error name and a piece of the message.
 */
#include <check.h>

#include "../check-run.h"
#include "cgbypass/bus-errors.h"
#include "bus-manager.h"
#include "manager.h"
#include "request.h"

/* the project's VM kernel: cpuset cpu io memory hugetlb pids rdma misc perf_event, cgroup_debug */
#define BUILTIN CGMASK_VM_KERNEL

/* A path of @n components "/a/a/.../a" (static buffer). */
static const char *deep_path(unsigned n) {
        static char buf[2 * (MANAGER_PATH_DEPTH_MAX + 2) + 1];
        char *p = buf;

        for (unsigned i = 0; i < n; i++) {
                *p++ = '/';
                *p++ = 'a';
        }
        *p = '\0';
        return buf;
}

/* What a client gets: the refusal through bus-manager.c, the one place that names bus errors. */
static int to_bus(int r, Refusal *f, sd_bus_error *e) {
        if (r < 0) {
                ck_assert_int_eq(f->kind, REFUSAL_REQUEST);
                ck_assert_int_eq(r, -reason_errno(f->reason));
                r = bus_error_from_refusal(e, r, f);
        } else
                ck_assert_int_eq(f->kind, REFUSAL_NONE);
        refusal_done(f);
        return r;
}

static void check_error(int r, const sd_bus_error *e, int want_r, const char *want_name, const char *want_text,
                        const char *what) {
        ck_assert_msg(r == want_r, "%s: returned %d, expected %d (%s)", what, r, want_r, strempty(e->message));
        if (!want_name) {
                ck_assert_msg(!sd_bus_error_is_set(e), "%s: unexpected error %s: %s", what, e->name, e->message);
                return;
        }
        ck_assert_msg(sd_bus_error_has_name(e, want_name), "%s: error %s, expected %s", what,
                      strempty(e->name), want_name);
        ck_assert_msg(want_text && strstr(strempty(e->message), want_text),
                      "%s: message '%s' lacks '%s'", what, strempty(e->message), strempty(want_text));
}

/* ---- request_path_verify() ---- */

static const struct {
        const char *path;       /* NULL: deep_path(depth) */
        unsigned depth;
        int r;
        const char *name, *text;
} paths[] = {
        { "/",              0, 0, NULL, NULL },
        { "/srv/alice",     0, 0, NULL, NULL },
        { "/srv/a.b-c_d@1", 0, 0, NULL, NULL },
        { NULL, MANAGER_PATH_DEPTH_MAX, 0, NULL, NULL },
        { NULL, MANAGER_PATH_DEPTH_MAX + 1, -EINVAL, BUS_ERROR_INVALID_PATH, "deeper than 256 levels" },
        { "",               0, -EINVAL, BUS_ERROR_INVALID_PATH, "the root cgroup is \"/\"" },
        { "srv",            0, -EINVAL, BUS_ERROR_INVALID_PATH, "normalized absolute cgroup path" },
        { "/srv/",          0, -EINVAL, BUS_ERROR_INVALID_PATH, "'/srv/'" },
        { "/srv//a",        0, -EINVAL, BUS_ERROR_INVALID_PATH, "'/srv//a'" },
        { "/srv/./a",       0, -EINVAL, BUS_ERROR_INVALID_PATH, "'/srv/./a'" },
        { "/srv/../etc",    0, -EINVAL, BUS_ERROR_INVALID_PATH, "'/srv/../etc'" },
        { "/srv/a b",       0, -EINVAL, BUS_ERROR_INVALID_PATH, "'/srv/a b'" },
        { "/srv/a\tb",      0, -EINVAL, BUS_ERROR_INVALID_PATH, "'/srv/a?b'" },     /* quoted: no tab in logs */
        { "/srv/\xff",      0, -EINVAL, BUS_ERROR_INVALID_PATH, "not valid UTF-8" },
        { "/srv/\xc0\xaf",  0, -EINVAL, BUS_ERROR_INVALID_PATH, "not valid UTF-8" },   /* an overlong '/' */
        { "/srv/\xed\xa0\x80", 0, -EINVAL, BUS_ERROR_INVALID_PATH, "not valid UTF-8" }, /* a surrogate */
};

START_TEST(test_path_verify) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        Refusal f = {};
        const char *path = paths[_i].path ?: deep_path(paths[_i].depth);
        int r;

        r = to_bus(request_path_verify(path, &f), &f, &e);
        check_error(r, &e, paths[_i].r, paths[_i].name, paths[_i].text, paths[_i].path ?: "a deep path");
}
END_TEST

/* ---- request_controller_verify() ---- */

static const struct {
        const char *name;
        CgMask builtin;
        int r;
        Controller x;
        const char *error, *text;
} controllers[] = {
        { "cpu",         BUILTIN, 0, CONTROLLER_CPU, NULL, NULL },
        { "memory",      BUILTIN, 0, CONTROLLER_MEMORY, NULL, NULL },
        { "rdma",        BUILTIN, 0, CONTROLLER_RDMA, NULL, NULL },
        { "",            BUILTIN, -EINVAL, 0, BUS_ERROR_INVALID_ARGUMENT, "is empty" },
        { "+cpu",        BUILTIN, -EINVAL, 0, BUS_ERROR_INVALID_ARGUMENT, "without '+'" },
        { "#cpu",        BUILTIN, -EINVAL, 0, BUS_ERROR_INVALID_ARGUMENT, "without '#'" },
        { "-cpu",        BUILTIN, -EINVAL, 0, BUS_ERROR_INVALID_ARGUMENT, "without '-'" },
        { "cpu io",      BUILTIN, -EINVAL, 0, BUS_ERROR_INVALID_ARGUMENT, "'cpu io' is not one controller name" },
        { "CPU",         BUILTIN, -EINVAL, 0, BUS_ERROR_INVALID_ARGUMENT, "not one controller name" },
        { "cpu\n",       BUILTIN, -EINVAL, 0, BUS_ERROR_INVALID_ARGUMENT, "'cpu?' is not one" },
        { "nosuch",      BUILTIN, -EINVAL, 0, BUS_ERROR_UNKNOWN_CONTROLLER, "no controller named 'nosuch'" },
        { "net_cls",     BUILTIN, -EINVAL, 0, BUS_ERROR_UNKNOWN_CONTROLLER, "not available" },   /* v1 only */
        { "devices",     BUILTIN, -EINVAL, 0, BUS_ERROR_UNKNOWN_CONTROLLER, "not available" },   /* not built */
        { "cpu",         CGMASK(CONTROLLER_MEMORY), -EINVAL, 0, BUS_ERROR_UNKNOWN_CONTROLLER, "not available" },
        { "perf_event",  BUILTIN, -EINVAL, 0, BUS_ERROR_INVALID_ARGUMENT, "implicit on cgroup2" },
        { "debug",       BUILTIN, -EINVAL, 0, BUS_ERROR_INVALID_ARGUMENT, "implicit on cgroup2" }, /* cgroup_debug */
        /* 64 characters and more: not a name the kernel has */
        { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", BUILTIN, -EINVAL, 0,
          BUS_ERROR_INVALID_ARGUMENT, "not one controller name" },
};

START_TEST(test_controller_verify) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        Refusal f = {};
        Controller x = _CONTROLLER_INVALID;
        int r;

        r = to_bus(request_controller_verify(controllers[_i].name, controllers[_i].builtin, &x, &f), &f, &e);
        check_error(r, &e, controllers[_i].r, controllers[_i].error, controllers[_i].text, controllers[_i].name);
        if (r == 0)
                ck_assert_int_eq(x, controllers[_i].x);
}
END_TEST

/* ---- request_parse() ---- */

/* "+cpu" and then spaces: one byte more than one write(2) the kernel takes (NULL arg below) */
static const char *long_change(void) {
        static char buf[4098];

        memset(buf, ' ', sizeof(buf) - 1);
        memcpy(buf, "+cpu", 4);
        buf[sizeof(buf) - 1] = '\0';
        return buf;
}

static const struct {
        ChangeKind kind;
        const char *cgroup, *arg;
        const char *file, *value, *names;
        CgMask enable, bypass, disable;
} parses[] = {
        { CHANGE_ENABLE, "/a/b", "cpu", "cgroup.controllers", "+cpu", "cpu", CGMASK(CONTROLLER_CPU), 0, 0 },
        { CHANGE_BYPASS, "/a", "io", "cgroup.controllers", "#io", "io", 0, CGMASK(CONTROLLER_IO), 0 },
        { CHANGE_SUBTREE, "/", "+cpu #io -memory", "cgroup.subtree_control", "+cpu #io -memory", "cpu io memory",
          CGMASK(CONTROLLER_CPU), CGMASK(CONTROLLER_IO), CGMASK(CONTROLLER_MEMORY) },
        /* the kernel's order, whatever the caller's */
        { CHANGE_SUBTREE, "/a", "  -pids   +cpu ", "cgroup.subtree_control", "+cpu -pids", "cpu pids",
          CGMASK(CONTROLLER_CPU), 0, CGMASK(CONTROLLER_PIDS) },
};

START_TEST(test_parse) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        Refusal f = {};
        _cleanup_(change_request_done) ChangeRequest req = {};
        int r;

        r = to_bus(request_parse(BUILTIN, parses[_i].kind, parses[_i].cgroup, parses[_i].arg, &req, &f), &f, &e);
        check_error(r, &e, 0, NULL, NULL, parses[_i].arg);
        ck_assert_int_eq(req.kind, parses[_i].kind);
        ck_assert_str_eq(req.cgroup, parses[_i].cgroup);
        ck_assert_str_eq(req.file, parses[_i].file);
        ck_assert_str_eq(req.value, parses[_i].value);
        ck_assert_str_eq(req.names, parses[_i].names);
        ck_assert_uint_eq(req.change.enable, parses[_i].enable);
        ck_assert_uint_eq(req.change.bypass, parses[_i].bypass);
        ck_assert_uint_eq(req.change.disable, parses[_i].disable);
        ck_assert_uint_eq(req.controllers, parses[_i].enable | parses[_i].bypass | parses[_i].disable);
}
END_TEST

/* every refusal is -EINVAL; the name tells which */
static const struct {
        ChangeKind kind;
        const char *cgroup, *arg;       /* arg NULL: long_change() */
        const char *error, *text;
} refusals[] = {
        { CHANGE_ENABLE, "/", "cpu", BUS_ERROR_ROOT_CGROUP, "EnableController works on the cgroups below" },
        { CHANGE_BYPASS, "/", "cpu", BUS_ERROR_ROOT_CGROUP, "BypassController works on the cgroups below" },
        { CHANGE_ENABLE, "a", "cpu", BUS_ERROR_INVALID_PATH, "'a'" },
        { CHANGE_ENABLE, "/a", "nosuch", BUS_ERROR_UNKNOWN_CONTROLLER, "nosuch" },
        { CHANGE_ENABLE, "/a", "+cpu", BUS_ERROR_INVALID_ARGUMENT, "without '+'" },
        { CHANGE_SUBTREE, "/a", "", BUS_ERROR_INVALID_ARGUMENT, "The change is empty" },
        { CHANGE_SUBTREE, "/a", "   ", BUS_ERROR_INVALID_ARGUMENT, "The change is empty" },
        { CHANGE_SUBTREE, "/a", "cpu", BUS_ERROR_INVALID_ARGUMENT, "'cpu' is not a change" },
        { CHANGE_SUBTREE, "/a", "+cpu #cpu", BUS_ERROR_INVALID_ARGUMENT, "names cpu twice" },
        { CHANGE_SUBTREE, "/a", "+cpu\t#io", BUS_ERROR_INVALID_ARGUMENT, "control character" },
        { CHANGE_SUBTREE, "/a", "+nosuch", BUS_ERROR_UNKNOWN_CONTROLLER, "nosuch" },
        { CHANGE_SUBTREE, "/a", "+perf_event", BUS_ERROR_INVALID_ARGUMENT, "implicit" },
        { CHANGE_SUBTREE, "/a", "++cpu", BUS_ERROR_INVALID_ARGUMENT, "without '+'" },
        { CHANGE_SUBTREE, "/a", NULL, BUS_ERROR_INVALID_ARGUMENT, "longer than 4096 bytes" },
        { CHANGE_SUBTREE, "/a b", "+cpu", BUS_ERROR_INVALID_PATH, "white space" },
};

START_TEST(test_parse_refused) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        Refusal f = {};
        ChangeRequest req = { .value = (char *) "untouched" };
        const char *arg = refusals[_i].arg ?: long_change();
        int r;

        r = to_bus(request_parse(BUILTIN, refusals[_i].kind, refusals[_i].cgroup, arg, &req, &f), &f, &e);
        check_error(r, &e, -EINVAL, refusals[_i].error, refusals[_i].text, refusals[_i].arg ?: "a long change");
        ck_assert_str_eq(req.value, "untouched");      /* @ret is set only on success */
}
END_TEST

/* ---- request_quote() ---- */

static const struct {
        const char *in, *out;
} quotes[] = {
        { "plain", "plain" },
        { "", "" },
        { "a\nb\x7f" "c\td", "a?b?c?d" },
        { "caf\xc3\xa9", "caf\xc3\xa9" },
        { "\xff", "(invalid UTF-8)" },
        /* 96 bytes fit; the 97th starts a cut */
        { "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456",
          "012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345..." },
        /* a two-byte character across the limit is not cut in half */
        { "01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234\xc3\xa9xyz",
          "01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234..." },
};

START_TEST(test_quote) {
        char buf[REQUEST_QUOTE_SIZE];

        ck_assert_str_eq(request_quote(quotes[_i].in, buf), quotes[_i].out);
}
END_TEST

int main(void) {
        /* as the daemon does: the error names carry their errnos (cgbypass_bus_error_map) */
        if (sd_bus_error_add_map(cgbypass_bus_error_map) < 0)
                return EXIT_FAILURE;
        return check_run(CHECK_SUITE_TABLE("request", "checks", NULL, NULL,
                                           { test_path_verify, ELEMENTSOF(paths) },
                                           { test_controller_verify, ELEMENTSOF(controllers) },
                                           { test_parse, ELEMENTSOF(parses) },
                                           { test_parse_refused, ELEMENTSOF(refusals) },
                                           { test_quote, ELEMENTSOF(quotes) }));
}
