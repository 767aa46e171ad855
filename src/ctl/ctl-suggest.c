/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "ctl-suggest.h"

#define WORD_MAX 64u

/* optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring) */
static size_t distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        size_t d[WORD_MAX + 1][WORD_MAX + 1];

        if (la > WORD_MAX || lb > WORD_MAX)
                return (size_t) -1;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

                        if (d[i - 1][j] + 1 < best)
                                best = d[i - 1][j] + 1;
                        if (d[i][j - 1] + 1 < best)
                                best = d[i][j - 1] + 1;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                                best = d[i - 2][j - 2] + 1;
                        d[i][j] = best;
                }
        return d[la][lb];
}

const char *suggest_closest(const char *word, const char *const *candidates, size_t n_candidates) {
        const char *best = NULL;
        size_t best_d = 3, len = strlen(word);

        for (size_t i = 0; i < n_candidates; i++) {
                size_t d;

                if (!candidates[i])
                        continue;
                d = distance(word, candidates[i]);
                if (d < best_d && d < len) {
                        best = candidates[i];
                        best_d = d;
                }
        }
        return best;
}
