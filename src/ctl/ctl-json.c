/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <string.h>

#include "ctl-json.h"

int json_add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        /* json-c keeps the reference only on success */
        if (json_object_object_add(o, key, v) < 0) {
                (void) json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_add_copy(json_object *o, const char *key, json_object *v) {
        /* json-c's null is the NULL pointer */
        if (json_object_object_add(o, key, json_object_get(v)) < 0) {
                (void) json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_append(json_object *array, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_array_add(array, v) < 0) {
                (void) json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

json_object *json_new_strv(char **strv) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (char **s = strv; s && *s; s++)
                if (json_append(a, json_object_new_string(*s)) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

static int read_basic(sd_bus_message *m, char type, json_object **ret) {
        union {
                uint8_t u8;
                int16_t s16;
                uint16_t u16;
                int32_t s32;
                uint32_t u32;
                int64_t s64;
                uint64_t u64;
                int b;
                double d;
                const char *s;
        } v;
        json_object *o;
        int r;

        r = sd_bus_message_read_basic(m, type, &v);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENXIO;

        switch (type) {
        case SD_BUS_TYPE_BYTE:        o = json_object_new_int(v.u8); break;
        case SD_BUS_TYPE_INT16:       o = json_object_new_int(v.s16); break;
        case SD_BUS_TYPE_UINT16:      o = json_object_new_int(v.u16); break;
        case SD_BUS_TYPE_INT32:       o = json_object_new_int(v.s32); break;
        case SD_BUS_TYPE_UINT32:      o = json_object_new_int64(v.u32); break;
        case SD_BUS_TYPE_INT64:       o = json_object_new_int64(v.s64); break;
        case SD_BUS_TYPE_UINT64:      o = json_object_new_uint64(v.u64); break;
        case SD_BUS_TYPE_BOOLEAN:     o = json_object_new_boolean(v.b); break;
        case SD_BUS_TYPE_DOUBLE:      o = json_object_new_double(v.d); break;
        case SD_BUS_TYPE_UNIX_FD:     o = json_object_new_int(v.s32); break;
        case SD_BUS_TYPE_STRING:
        case SD_BUS_TYPE_OBJECT_PATH:
        case SD_BUS_TYPE_SIGNATURE:   o = json_object_new_string(v.s); break;
        default:                      return -EBADMSG;
        }
        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}

/* the text of a dict key, for an object's member name */
static const char *json_key_text(json_object *k) {
        return json_object_get_type(k) == json_type_string ? json_object_get_string(k)
                                                            : json_object_to_json_string(k);
}

/* leaves the container whose contents became *@o, and hands *@o over */
static int exit_container_with(sd_bus_message *m, json_object **o, json_object **ret) {
        int r = sd_bus_message_exit_container(m);

        if (r < 0)
                return r;
        *ret = TAKE_PTR(*o);
        return 0;
}

static int read_dict(sd_bus_message *m, const char *contents, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        _cleanup_free_ char *entry = NULL;
        size_t n = strlen(contents);
        int r;

        if (!o)
                return -ENOMEM;
        /* "{sv}" -> "sv" */
        if (n < 4 || contents[n - 1] != SD_BUS_TYPE_DICT_ENTRY_END)
                return -EBADMSG;
        entry = strndup(contents + 1, n - 2);
        if (!entry)
                return -ENOMEM;
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, contents);
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_json_ json_object *k = NULL;
                json_object *v = NULL;

                r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, entry);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = bus_message_read_json(m, &k);
                if (r < 0)
                        return r;
                r = bus_message_read_json(m, &v);
                if (r < 0)
                        return r;
                r = json_add(o, json_key_text(k), v);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        return exit_container_with(m, &o, ret);
}

static int read_sequence(sd_bus_message *m, char type, const char *contents, json_object **ret) {
        _cleanup_json_ json_object *a = json_object_new_array();
        int r;

        if (!a)
                return -ENOMEM;
        r = sd_bus_message_enter_container(m, type, contents);
        if (r < 0)
                return r;
        for (;;) {
                json_object *v = NULL;

                r = bus_message_read_json(m, &v);
                if (r == -ENXIO)
                        break;
                if (r < 0)
                        return r;
                r = json_append(a, v);
                if (r < 0)
                        return r;
        }
        return exit_container_with(m, &a, ret);
}

int bus_message_read_json(sd_bus_message *m, json_object **ret) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENXIO;

        switch (type) {
        case SD_BUS_TYPE_VARIANT: {
                json_object *v = NULL;

                r = sd_bus_message_enter_container(m, SD_BUS_TYPE_VARIANT, contents);
                if (r < 0)
                        return r;
                r = bus_message_read_json(m, &v);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0) {
                        (void) json_object_put(v);
                        return r;
                }
                *ret = v;
                return 0;
        }
        case SD_BUS_TYPE_ARRAY:
                if (contents[0] == SD_BUS_TYPE_DICT_ENTRY_BEGIN)
                        return read_dict(m, contents, ret);
                return read_sequence(m, type, contents, ret);
        case SD_BUS_TYPE_STRUCT:
                return read_sequence(m, type, contents, ret);
        default:
                return read_basic(m, type, ret);
        }
}

int json_print(json_object *o, bool pretty, FILE *f) {
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
                    (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);
        const char *s = json_object_to_json_string_ext(o, flags);

        if (!s || fprintf(f, "%s\n", s) < 0)
                return -EIO;
        return 0;
}
