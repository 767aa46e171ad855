/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the libFuzzer harnesses: a finding is an abort() with a reason. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/macro.h"

#define FUZZ_INPUT_MAX (64u * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static inline void fuzz_fail(const char *what, const char *detail) {
        fprintf(stderr, "fuzz: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

/* The input as a C string; NUL bytes stay in (the parsers must cope with what the files may hold). */
static inline char *fuzz_string(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                return NULL;
        memcpy(s, data, size);
        s[size] = '\0';
        return s;
}
