/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/macro.h"
#include "cgbypass/strv.h"

ssize_t strv_index(char *const *v, const char *s) {
        for (size_t i = 0; v && v[i]; i++)
                if (streq(v[i], s))
                        return (ssize_t) i;
        return -1;
}

int strv_add_unique(char ***v, const char *s) {
        size_t n = 0;
        char **nv, *copy;

        if (strv_index(*v, s) >= 0)
                return 0;
        while (*v && (*v)[n])
                n++;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        nv = reallocarray(*v, n + 2, sizeof(char *));
        if (!nv) {
                free(copy);
                return -ENOMEM;
        }
        nv[n] = copy;
        nv[n + 1] = NULL;
        *v = nv;
        return 1;
}

bool strv_remove(char **v, const char *s) {
        ssize_t i = strv_index(v, s);

        if (i < 0)
                return false;
        free(v[i]);
        for (char **p = &v[i]; *p; p++)
                p[0] = p[1];
        return true;
}
