/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* JSON output with json-c: values read from bus messages, and printing. */

#include <json-c/json.h>
#include <stdio.h>
#include <systemd/sd-bus.h>

#include "cgbypass/macro.h"

static inline void json_object_putp(json_object **o) {
        if (*o)
                (void) json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_object_putp)

/*
 * json_add() / json_append() - add @v to an object under @key / to an array.
 * They take @v in every case (a NULL @v is a failed allocation).
 * Return: 0, -ENOMEM.
 */
int json_add(json_object *o, const char *key, json_object *v);
int json_append(json_object *array, json_object *v);

/* Add a new reference to @v under @key; a NULL @v is JSON null. Return: 0, -ENOMEM. */
int json_add_copy(json_object *o, const char *key, json_object *v);

/* A new array of the strings in @strv (NULL-terminated), or NULL on OOM. */
json_object *json_new_strv(char **strv);

/**
 * bus_message_read_json() - read the next complete value of @m as JSON
 * @m: a message positioned before a value
 * @ret: strings, object paths and signatures as strings, numbers as
 *       numbers, booleans as booleans, variants as their content, a{s*}
 *       (and any dict with a basic key, as its text) as objects, other
 *       arrays and structs as arrays
 *
 * Return: 0, -ENXIO when @m has no more values here, -ENOMEM, or the
 * -errno of reading the message.
 */
int bus_message_read_json(sd_bus_message *m, json_object **ret);

/**
 * json_print() - print @o and a newline on @f
 * @pretty: indented (for a terminal) or on one line (for programs)
 *
 * Slashes are not escaped: cgroup paths read as they are.
 * Return: 0, -EIO.
 */
int json_print(json_object *o, bool pretty, FILE *f);
