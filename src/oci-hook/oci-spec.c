/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/macro.h"
#include "oci-spec.h"

static inline void json_putp(json_object **o) {
        if (*o)
                (void) json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_putp)

static inline void json_tokener_freep(json_tokener **t) {
        if (*t)
                json_tokener_free(*t);
}

_printf_(2, 3) static int why(char **reterr_why, const char *fmt, ...) {
        va_list ap;

        if (reterr_why) {
                va_start(ap, fmt);
                if (vasprintf(reterr_why, fmt, ap) < 0)
                        *reterr_why = NULL;
                va_end(ap);
        }
        return -EINVAL;
}

static void annotations_free(OciAnnotation *a, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(a[i].key);
                free(a[i].value);
        }
        free(a);
}

void oci_state_done(OciState *s) {
        free(s->id);
        free(s->status);
        free(s->bundle);
        annotations_free(s->annotations, s->n_annotations);
        *s = (OciState) {};
}

void oci_config_done(OciConfig *c) {
        free(c->cgroups_path);
        free(c->uid_mappings);
        annotations_free(c->annotations, c->n_annotations);
        *c = (OciConfig) {};
}

static int parse_document(const char *text, const char *what, json_object **ret, char **reterr_why) {
        _cleanup_(json_tokener_freep) json_tokener *tok = json_tokener_new();
        _cleanup_json_ json_object *o = NULL;
        size_t len = strlen(text);

        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, text, (int) len);
        if (json_tokener_get_error(tok) == json_tokener_continue)
                return why(reterr_why, "the %s is not JSON: it ends inside a value", what);
        if (json_tokener_get_error(tok) != json_tokener_success)
                return why(reterr_why, "the %s is not JSON: %s at byte %zu", what,
                           json_tokener_error_desc(json_tokener_get_error(tok)), json_tokener_get_parse_end(tok));
        /* json-c stops after one value: anything but white space after it is not one document */
        for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
                if (!strchr(" \t\r\n", text[i]))
                        return why(reterr_why, "the %s has text after its JSON value, at byte %zu", what, i);
        if (!json_object_is_type(o, json_type_object))
                return why(reterr_why, "the %s is not a JSON object", what);
        *ret = TAKE_PTR(o);
        return 0;
}

/* An optional string member: NULL if absent; -EINVAL if not a string. */
static int get_string(json_object *o, const char *key, const char *what, char **ret, char **reterr_why) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !v) {
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return why(reterr_why, "%s '%s' is not a string", what, key);
        *ret = strdup(json_object_get_string(v));
        return *ret ? 0 : -ENOMEM;
}

/* A member that must be a non-negative integer no larger than @max. */
static int get_uint(json_object *o, const char *key, const char *what, uint64_t max, bool *ret_present,
                    uint64_t *ret, char **reterr_why) {
        json_object *v;
        int64_t i;

        if (!json_object_object_get_ex(o, key, &v) || !v) {
                *ret_present = false;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return why(reterr_why, "%s '%s' is not an integer", what, key);
        errno = 0;
        i = json_object_get_int64(v);
        if (errno != 0 || i < 0 || (uint64_t) i > max)
                return why(reterr_why, "%s '%s' is out of range", what, key);
        *ret_present = true;
        *ret = (uint64_t) i;
        return 0;
}

static int get_annotations(json_object *o, const char *what, bool *ret_present, OciAnnotation **ret, size_t *ret_n,
                           char **reterr_why) {
        OciAnnotation *a = NULL;
        json_object *v;
        size_t n = 0;

        if (!json_object_object_get_ex(o, "annotations", &v) || !v) {
                *ret_present = false;
                return 0;
        }
        if (!json_object_is_type(v, json_type_object))
                return why(reterr_why, "%s 'annotations' is not an object", what);
        if (json_object_object_length(v) > OCI_ANNOTATIONS_MAX)
                return why(reterr_why, "%s has more than %d annotations", what, OCI_ANNOTATIONS_MAX);
        a = calloc((size_t) json_object_object_length(v) + 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        json_object_object_foreach(v, key, val) {
                if (!val || !json_object_is_type(val, json_type_string)) {
                        annotations_free(a, n);
                        return why(reterr_why, "%s annotation '%s' is not a string", what, key);
                }
                a[n].key = strdup(key);
                a[n].value = strdup(json_object_get_string(val));
                n++;
                if (!a[n - 1].key || !a[n - 1].value) {
                        annotations_free(a, n);
                        return -ENOMEM;
                }
        }
        *ret_present = true;
        *ret = a;
        *ret_n = n;
        return 0;
}

int oci_state_parse(const char *text, OciState *ret, char **reterr_why) {
        _cleanup_json_ json_object *o = NULL;
        OciState s = {};
        uint64_t pid = 0;
        bool has_pid;
        int r;

        r = parse_document(text, "state on standard input", &o, reterr_why);
        if (r < 0)
                return r;
        r = get_string(o, "id", "the state's", &s.id, reterr_why);
        if (r >= 0)
                r = get_string(o, "status", "the state's", &s.status, reterr_why);
        if (r >= 0)
                r = get_string(o, "bundle", "the state's", &s.bundle, reterr_why);
        if (r >= 0)
                r = get_uint(o, "pid", "the state's", INT32_MAX, &has_pid, &pid, reterr_why);
        if (r >= 0)
                r = get_annotations(o, "the state", &s.has_annotations, &s.annotations, &s.n_annotations,
                                    reterr_why);
        if (r >= 0 && isempty(s.id))
                r = why(reterr_why, "the state has no container 'id'");
        if (r >= 0 && isempty(s.bundle))
                r = why(reterr_why, "the state has no 'bundle'");
        if (r >= 0 && s.bundle[0] != '/')
                r = why(reterr_why, "the state's bundle '%s' is not an absolute path", s.bundle);
        if (r < 0) {
                oci_state_done(&s);
                return r;
        }
        s.pid = (pid_t) pid;
        *ret = s;
        return 0;
}

static int get_uid_mappings(json_object *linux_o, OciConfig *c, char **reterr_why) {
        json_object *v;
        size_t n;

        if (!json_object_object_get_ex(linux_o, "uidMappings", &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_array))
                return why(reterr_why, "the config's 'linux.uidMappings' is not an array");
        n = json_object_array_length(v);
        if (n > 340)    /* the kernel's limit of uid_map lines */
                return why(reterr_why, "the config's 'linux.uidMappings' has more than 340 entries");
        c->uid_mappings = calloc(n + 1, sizeof(OciIdMap));
        if (!c->uid_mappings)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *m = json_object_array_get_idx(v, i);
                uint64_t cid = 0, hid = 0, size = 0;
                bool p1, p2, p3;
                int r;

                if (!m || !json_object_is_type(m, json_type_object))
                        return why(reterr_why, "the config's 'linux.uidMappings' entry %zu is not an object", i);
                r = get_uint(m, "containerID", "a uid mapping's", UINT32_MAX, &p1, &cid, reterr_why);
                if (r >= 0)
                        r = get_uint(m, "hostID", "a uid mapping's", UINT32_MAX, &p2, &hid, reterr_why);
                if (r >= 0)
                        r = get_uint(m, "size", "a uid mapping's", UINT32_MAX, &p3, &size, reterr_why);
                if (r < 0)
                        return r;
                if (!p1 || !p2 || !p3)
                        return why(reterr_why, "the config's 'linux.uidMappings' entry %zu lacks containerID, "
                                   "hostID or size", i);
                c->uid_mappings[c->n_uid_mappings++] = (OciIdMap) { (uint32_t) cid, (uint32_t) hid, (uint32_t) size };
        }
        return 0;
}

int oci_config_parse(const char *text, OciConfig *ret, char **reterr_why) {
        _cleanup_json_ json_object *o = NULL;
        json_object *linux_o, *process, *user;
        OciConfig c = {};
        bool has_annotations;
        uint64_t uid = 0;
        int r;

        r = parse_document(text, "config.json", &o, reterr_why);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(o, "linux", &linux_o) && linux_o) {
                if (!json_object_is_type(linux_o, json_type_object)) {
                        r = why(reterr_why, "the config's 'linux' is not an object");
                        goto fail;
                }
                r = get_string(linux_o, "cgroupsPath", "the config's linux", &c.cgroups_path, reterr_why);
                if (r >= 0)
                        r = get_uid_mappings(linux_o, &c, reterr_why);
                if (r < 0)
                        goto fail;
        }
        if (json_object_object_get_ex(o, "process", &process) && process &&
            json_object_object_get_ex(process, "user", &user) && user) {
                if (!json_object_is_type(user, json_type_object)) {
                        r = why(reterr_why, "the config's 'process.user' is not an object");
                        goto fail;
                }
                r = get_uint(user, "uid", "the config's process.user", UINT32_MAX - 1, &c.has_user, &uid, reterr_why);
                if (r < 0)
                        goto fail;
                c.uid = (uint32_t) uid;
        }
        r = get_annotations(o, "the config", &has_annotations, &c.annotations, &c.n_annotations, reterr_why);
        if (r < 0)
                goto fail;
        *ret = c;
        return 0;
fail:
        oci_config_done(&c);
        return r;
}

const char *oci_annotation_get(const OciAnnotation *a, size_t n, const char *key) {
        for (size_t i = 0; i < n; i++)
                if (streq(a[i].key, key))
                        return a[i].value;
        return NULL;
}

int oci_config_host_uid(const OciConfig *c, uid_t *ret) {
        if (!c->has_user)
                return -ENOENT;
        if (c->n_uid_mappings == 0) {
                *ret = c->uid;
                return 0;
        }
        for (size_t i = 0; i < c->n_uid_mappings; i++) {
                const OciIdMap *m = &c->uid_mappings[i];

                if (c->uid >= m->container_id && c->uid - m->container_id < m->size) {
                        *ret = m->host_id + (c->uid - m->container_id);
                        return 0;
                }
        }
        return -ERANGE;
}
