/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Prints every name of cgbypass_error_map with the errno that sd-bus
 * decodes it to, "NAME ERRNO" a line. It registers nothing itself: the
 * errnos come out right only because loading libcgbypass registered the map.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strerrorname_np() */
#endif
#include <cgbypass/cgbypass.h>
#include <stdio.h>
#include <string.h>

int main(void) {
        for (const sd_bus_error_map *m = cgbypass_error_map; m->name; m++) {
                sd_bus_error e = SD_BUS_ERROR_NULL;
                int r = sd_bus_error_set(&e, m->name, "test");

                printf("%s %s\n", m->name, strerrorname_np(sd_bus_error_get_errno(&e)) ?: "?");
                if (r != -sd_bus_error_get_errno(&e) || sd_bus_error_get_errno(&e) != m->code) {
                        fprintf(stderr, "%s: set returned %d, decodes to %d, the map says %d\n", m->name, r,
                                sd_bus_error_get_errno(&e), m->code);
                        return 1;
                }
                sd_bus_error_free(&e);
        }
        return 0;
}
