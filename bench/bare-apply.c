/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-apply's baseline as a program of its own: what a user would run
 * instead of cgbypassd --apply-once. It reads the list of cgroups, makes
 * each with mkdir(2) by its path, then writes "+CONTROLLER" to every inner
 * cgroup's cgroup.subtree_control (open, write, close), and nothing else.
 * A plain dynamically linked C program (libc only), so the comparison with
 * cgbypassd includes the exec both of them pay.
 *
 * usage: bare-apply SCRATCH CONTROLLER LIST
 * LIST: one cgroup per line, parents first, "I PATH" (inner) or "L PATH".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what) {
        perror(what);
        exit(EXIT_FAILURE);
}

static void write_file(const char *path, const char *value) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, value, strlen(value)) < 0)
                die(path);
        close(fd);
}

int main(int argc, char *argv[]) {
        char p[4096], token[64];
        struct stat st;

        if (argc != 4) {
                fprintf(stderr, "usage: bare-apply SCRATCH CONTROLLER LIST\n");
                return EXIT_FAILURE;
        }
        int fd = open(argv[3], O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                die(argv[3]);
        char *list = malloc((size_t) st.st_size + 1);
        if (!list || read(fd, list, (size_t) st.st_size) != st.st_size)
                die(argv[3]);
        list[st.st_size] = '\0';
        close(fd);

        snprintf(token, sizeof(token), "+%s", argv[2]);
        snprintf(p, sizeof(p), "%s/cgroup.subtree_control", argv[1]);
        write_file(p, token);
        for (char *l = list; *l; l = strchr(l, '\n') + 1) {
                snprintf(p, sizeof(p), "%s/%.*s", argv[1], (int) strcspn(l + 2, "\n"), l + 2);
                if (mkdir(p, 0755) < 0)
                        die(p);
        }
        for (char *l = list; *l; l = strchr(l, '\n') + 1) {
                if (l[0] != 'I')
                        continue;
                snprintf(p, sizeof(p), "%s/%.*s/cgroup.subtree_control", argv[1], (int) strcspn(l + 2, "\n"), l + 2);
                write_file(p, token);
        }
        return EXIT_SUCCESS;
}
