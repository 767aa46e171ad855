/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NULL-terminated string arrays used as small sets (a NULL array is empty); strv_freep() frees them. */

#include <stdbool.h>
#include <sys/types.h>

/* @s's index in @v, or -1. */
ssize_t strv_index(char *const *v, const char *s);

/* A copy of @s appended to *@v unless there. Return: 1 added, 0 there already, -ENOMEM. */
int strv_add_unique(char ***v, const char *s);

/* @s taken out of @v (the order of the rest kept). Return: whether it was there. */
bool strv_remove(char **v, const char *s);
