/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where the cgroup2 hierarchy is mounted, from a mount table (proc(5) mountinfo). */
#include <stdio.h>
#include <string.h>

#include "cgbypass/backend.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s) {
        char *w = s;

        for (char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
                    p[3] <= '7') {
                        *w++ = (char) ((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                } else
                        *w++ = *p;
        }
        *w = '\0';
}

int backend_find_cgroup2_mount(const char *mountinfo, char **ret) {
        _cleanup_fclose_ FILE *f = fopen(mountinfo, "re");
        _cleanup_free_ char *line = NULL;
        size_t size = 0;

        if (!f)
                return -errno;
        while (getline(&line, &size, f) >= 0) {
                char *sep = strstr(line, " - "), *mnt, *fstype, *save = NULL;

                if (!sep)
                        continue;
                *sep = '\0';
                fstype = strtok_r(sep + 3, " \n", &save);
                if (!fstype || !streq(fstype, "cgroup2"))
                        continue;
                /* ID PARENT MAJ:MIN ROOT MOUNTPOINT ...: a bind mount of a subtree (ROOT != /) is not the hierarchy */
                save = NULL;
                (void) strtok_r(line, " ", &save);
                (void) strtok_r(NULL, " ", &save);
                (void) strtok_r(NULL, " ", &save);
                if (!streq_ptr(strtok_r(NULL, " ", &save), "/"))
                        continue;
                mnt = strtok_r(NULL, " ", &save);
                if (!mnt)
                        continue;
                unescape(mnt);
                *ret = strdup(mnt);
                return *ret ? 0 : -ENOMEM;
        }
        return ferror(f) ? -EIO : -ENOENT;
}
