/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup2 mount in a mount table (mountinfo.c), and the advice of the
 * auto backend when its root is not cgroup2: on a hybrid host it names the
 * cgroup2 mount (--cgroup-root /sys/fs/cgroup/unified), elsewhere sim.
 * Fake tables in files, one per case.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../check-run.h"
#include "backend-internal.h"

#define V1 "25 24 0:22 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n" \
           "27 25 0:24 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n" \
           "30 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"

static const struct {
        const char *table;
        int r;
        const char *mount;              /* expected; NULL: none */
} cases[] = {
        /* Debian 10's hybrid layout */
        { V1 "26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n", 0,
          "/sys/fs/cgroup/unified" },
        /* unified: optional fields between the options and the separator */
        { "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 master:1 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
          0, "/sys/fs/cgroup" },
        /* cgroup v1 only */
        { V1, -ENOENT, NULL },
        /* a container's bind mount of a subtree is not the hierarchy; the whole one after it is */
        { "40 1 0:26 /machine.slice/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
          "41 1 0:26 / /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n", 0, "/mnt/cg two" },
        /* a file system whose source is named cgroup2 is not cgroup2 */
        { "50 1 0:30 / /srv rw - ext4 cgroup2 rw\n", -ENOENT, NULL },
        { "", -ENOENT, NULL },
};

static char *write_table(const char *text) {
        char *path = strdup("/tmp/cgb-mountinfo-XXXXXX");
        int fd;

        ck_assert_ptr_nonnull(path);
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        ck_assert_int_eq(close(fd), 0);
        return path;
}

START_TEST(test_find) {
        _cleanup_free_ char *path = write_table(cases[_i].table), *mnt = NULL;

        ck_assert_int_eq(backend_find_cgroup2_mount(path, &mnt), cases[_i].r);
        if (cases[_i].mount)
                ck_assert_str_eq(mnt, cases[_i].mount);
        (void) unlink(path);
}
END_TEST

START_TEST(test_missing_table) {
        char *mnt = NULL;

        ck_assert_int_eq(backend_find_cgroup2_mount("/nonexistent/mountinfo", &mnt), -ENOENT);
        ck_assert_ptr_null(mnt);
}
END_TEST

/* what --check-config and the service print when auto cannot use the root */
START_TEST(test_advice) {
        _cleanup_free_ char *hybrid = write_table(cases[0].table), *v1 = write_table(cases[2].table);
        _cleanup_free_ char *msg = NULL, *msg2 = NULL, *msg3 = NULL;

        ck_assert_int_eq(backend_not_cgroup2("/sys/fs/cgroup", hybrid, &msg), -ENOMEDIUM);
        ck_assert_msg(strstr(msg, "use --cgroup-root /sys/fs/cgroup/unified"), "%s", msg);
        ck_assert_msg(!strstr(msg, "sim"), "%s", msg);
        ck_assert_int_eq(backend_not_cgroup2("/sys/fs/cgroup", v1, &msg2), -ENOMEDIUM);
        ck_assert_msg(strstr(msg2, "use --backend sim"), "%s", msg2);
        /* the cgroup2 mount itself, not writable: nothing better to suggest than itself */
        ck_assert_int_eq(backend_not_cgroup2("/sys/fs/cgroup/unified", hybrid, &msg3), -ENOMEDIUM);
        ck_assert_msg(!strstr(msg3, "--cgroup-root"), "%s", msg3);
        (void) unlink(hybrid);
        (void) unlink(v1);
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE_TABLE("mountinfo", "cgroup2 mount", NULL, NULL,
                                           { test_find, ELEMENTSOF(cases) }, { test_missing_table },
                                           { test_advice }));
}
