/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* "did you mean": the closest of a few known words to a misspelled one. */

#include <stddef.h>

/**
 * suggest_closest() - the candidate closest to @word, if it is close
 * @candidates: NULL entries are skipped
 *
 * Close: at most two edits (insertions, deletions, substitutions, or swaps
 * of neighbours; "cpux", "mmeory", "io" for "oi"), and fewer edits than
 * @word has characters; the first of equally close ones.
 * Return: the candidate, or NULL when none is close.
 */
const char *suggest_closest(const char *word, const char *const *candidates, size_t n_candidates);
