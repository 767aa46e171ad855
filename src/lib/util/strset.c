/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/hash.h"
#include "cgbypass/strset.h"

int strset_init(StrSet *s, size_t n) {
        size_t n_slots = 16;

        /* at most half full: probes stay short */
        while (n_slots < 2 * n)
                n_slots *= 2;
        s->slots = calloc(n_slots, sizeof(*s->slots));
        if (!s->slots)
                return -ENOMEM;
        s->mask = n_slots - 1;
        return 0;
}

int strset_add(StrSet *s, const char *str) {
        uint64_t h = fnv1a64_str(str);

        for (size_t i = (size_t) (h ^ (h >> 32)) & s->mask;; i = (i + 1) & s->mask) {
                if (!s->slots[i]) {
                        s->slots[i] = str;
                        return 0;
                }
                if (strcmp(s->slots[i], str) == 0)
                        return 1;
        }
}

void strset_done(StrSet *s) {
        free(s->slots);
        *s = (StrSet) {};
}
