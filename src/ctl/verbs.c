/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdint.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/controller.h"
#include "cgbypass/log.h"
#include "cgbypass/strbuf.h"
#include "ctl-format.h"
#include "ctl-json.h"
#include "ctl-suggest.h"
#include "ctl-tree.h"
#include "verbs.h"

#define UID_NONE CGBYPASS_UID_NONE

/* ---- local checks: cheap ones only; the daemon is the authority ---- */

static int check_cgroup_path(const char *path) {
        if (!cgpath_is_absolute(path)) {
                log_error("'%s' is not an absolute cgroup path (such as /work.slice/a).", path);
                return -EINVAL;
        }
        return 0;
}

static int check_controller(const char *name) {
        const char *names[_CONTROLLER_MAX], *close;

        if (controller_from_string(name) >= 0)
                return 0;
        if (name[0] && strchr("+-#", name[0]) && controller_from_string(name + 1) >= 0) {
                log_error("'%s' is a change, not a controller name; give the name ('%s').", name, name + 1);
                return -EINVAL;
        }
        FOREACH_CONTROLLER(x)
                names[x] = controller_to_string(x);
        close = suggest_closest(name, names, ELEMENTSOF(names));
        if (close)
                log_error("Unknown controller '%s'; did you mean '%s'?", name, close);
        else
                log_error("Unknown controller '%s'.", name);
        return -EINVAL;
}

static int check_cgroup(char **args, size_t n_args) {
        return check_cgroup_path(args[0]);
}

static int check_controller_arg(char **args, size_t n_args) {
        return check_controller(args[0]);
}

/*
 * enable CGROUP +cpu means what enable CGROUP cpu means: '+' is what the
 * verb writes. The other signs ask for another verb; say which.
 */
static int check_cgroup_controller_sign(char **args, char sign) {
        const char *x = args[1];
        int r = check_cgroup_path(args[0]);

        if (r < 0)
                return r;
        if (x[0] == sign && controller_from_string(x + 1) >= 0)
                args[1] = (char *) x + 1;
        else if (x[0] == '#' && controller_from_string(x + 1) >= 0) {
                log_error("'%s' would put %s into bypass; that is 'cgbypassctl bypass %s %s'.", x, x + 1, args[0],
                          x + 1);
                return -EINVAL;
        } else if (x[0] == '+' && controller_from_string(x + 1) >= 0) {
                log_error("'%s' would re-enable %s; that is 'cgbypassctl enable %s %s'.", x, x + 1, args[0], x + 1);
                return -EINVAL;
        } else if (x[0] == '-' && controller_from_string(x + 1) >= 0) {
                log_error("'%s' would disable %s, which %s's parent decides: 'cgbypassctl set PARENT -%s'.", x,
                          x + 1, args[0], x + 1);
                return -EINVAL;
        }
        return check_controller(args[1]);
}

static int check_enable(char **args, size_t n_args) {
        return check_cgroup_controller_sign(args, '+');
}

static int check_bypass(char **args, size_t n_args) {
        return check_cgroup_controller_sign(args, '#');
}

/* Each change is +NAME, -NAME or #NAME; an argument may hold several, separated by spaces. */
static int check_set(char **args, size_t n_args) {
        size_t n_changes = 0;
        int r;

        r = check_cgroup_path(args[0]);
        if (r < 0)
                return r;
        for (size_t i = 1; i < n_args; i++) {
                _cleanup_free_ char *copy = strdup(args[i]);
                char *save = NULL;

                if (!copy)
                        return log_oom();
                for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
                        if (!strchr("+-#", t[0]) || t[1] == '\0') {
                                log_error("Invalid change '%s': each change is +CONTROLLER, -CONTROLLER "
                                          "or #CONTROLLER.", t);
                                return -EINVAL;
                        }
                        r = check_controller(t + 1);
                        if (r < 0)
                                return r;
                        n_changes++;
                }
        }
        if (n_changes == 0) {
                log_error("No change given for '%s'.", args[0]);
                return -EINVAL;
        }
        return 0;
}

/* ---- reading replies ---- */

static int read_a_sv(sd_bus_message *reply, const char *member, json_object **ret) {
        int r = bus_message_read_json(reply, ret);

        if (r >= 0 && json_object_get_type(*ret) != json_type_object) {
                json_object_put(*ret);
                r = -EBADMSG;
        }
        return r < 0 ? client_log_parse_error(member, r) : 0;
}

static json_object *json_get(json_object *o, const char *key) {
        json_object *v;
        return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *json_get_string(json_object *o, const char *key) {
        json_object *v = json_get(o, key);
        return v && json_object_get_type(v) == json_type_string ? json_object_get_string(v) : NULL;
}

/* A value of an a{sv} for people: lists space-separated, dicts as KEY=VALUE, "(none)" for empty ones. */
static char *format_json_human(json_object *v) {
        StrBuf b = STRBUF_INIT;
        char *s;

        switch (json_object_get_type(v)) {
        case json_type_null:
                return strdup("-");
        case json_type_string:
                return strdup(json_object_get_string_len(v) > 0 ? json_object_get_string(v) : "(none)");
        case json_type_boolean:
                return strdup(json_object_get_boolean(v) ? "yes" : "no");
        case json_type_array:
                if (json_object_array_length(v) == 0)
                        return strdup("(none)");
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        _cleanup_free_ char *e = format_json_human(json_object_array_get_idx(v, i));
                        if (!e) {
                                strbuf_done(&b);
                                return NULL;
                        }
                        if (i > 0)
                                strbuf_putc(&b, ' ');
                        strbuf_append(&b, e);
                }
                return strbuf_steal(&b, &s) < 0 ? NULL : s;
        case json_type_object: {
                /* {"cpu": "/A", "io": "/"} -> "cpu=/A io=/" */
                bool first = true;

                if (json_object_object_length(v) == 0)
                        return strdup("(none)");
                json_object_object_foreach(v, key, val) {
                        _cleanup_free_ char *e = format_json_human(val);
                        if (!e) {
                                strbuf_done(&b);
                                return NULL;
                        }
                        strbuf_printf(&b, "%s%s=%s", first ? "" : " ", key, e);
                        first = false;
                }
                return strbuf_steal(&b, &s) < 0 ? NULL : s;
        }
        default:
                return strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
        }
}

static int print_json(const Client *c, json_object *o) {
        int r = json_print(o, c->tty, stdout);
        return r < 0 ? log_error_errno(r, "Failed to write the output: %m") : 0;
}

static int print_fields(const Fields *f) {
        int r = fields_print(f, stdout);
        if (r == -ENOMEM)
                return log_oom();
        return r < 0 ? log_error_errno(r, "Failed to write the output: %m") : 0;
}

/* The user name of @uid for JSON: a string, or NULL (JSON null) for a uid without one. Return: 0, -ENOMEM. */
static int json_add_user(json_object *o, const char *key, uint32_t uid) {
        struct passwd *pw = uid != UID_NONE ? getpwuid((uid_t) uid) : NULL;

        if (!pw)
                return json_add_copy(o, key, NULL);
        return json_add(o, key, json_object_new_string(pw->pw_name));
}

/* ---- status ---- */

/* GetEffectiveTree's text: from a daemon older than this client (during an upgrade, say) */
static int get_effective_tree(Client *c, const char *controller, EffectiveNode **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *text = NULL;
        unsigned line = 0;
        sd_bus *bus;
        int r = client_bus(c, &bus);

        if (r >= 0)
                r = client_result(c, cgbypass_get_effective_tree(bus, controller, &text, &e), &e);
        if (r < 0)
                return r;
        r = effective_tree_parse(text, ret, &line);
        if (r == -EBADMSG)
                return log_error_errno(r, "Failed to parse the reply to GetEffectiveTree: line %u is "
                                          "not in the effective tree format.", line);
        return r < 0 ? log_oom() : 0;
}

static int read_effective_nodes(sd_bus_message *reply, EffectiveTreeBuilder *b) {
        int r;

        r = sd_bus_message_enter_container(reply, SD_BUS_TYPE_ARRAY, "(uas)");
        while (r >= 0) {
                char **members = NULL;
                uint32_t depth;

                r = sd_bus_message_enter_container(reply, SD_BUS_TYPE_STRUCT, "uas");
                if (r <= 0)
                        break;
                r = sd_bus_message_read(reply, "u", &depth);
                if (r >= 0)
                        r = sd_bus_message_read_strv(reply, &members);
                if (r >= 0)
                        r = effective_tree_builder_add(b, depth, members);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        return r < 0 ? r : sd_bus_message_exit_container(reply);
}

static int get_effective_nodes(Client *c, const char *controller, EffectiveNode **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        EffectiveTreeBuilder b;
        sd_bus *bus;
        int r;

        r = client_bus(c, &bus);
        if (r < 0)
                return r;
        r = cgbypass_get_effective_nodes(bus, controller, &reply, &e);
        if (r < 0 && sd_bus_error_has_name(&e, SD_BUS_ERROR_UNKNOWN_METHOD))
                return get_effective_tree(c, controller, ret);
        r = client_result(c, r, &e);
        if (r < 0)
                return r;
        r = effective_tree_builder_init(&b);
        if (r < 0)
                return log_oom();
        r = read_effective_nodes(reply, &b);
        if (r < 0) {
                effective_tree_builder_done(&b);
                return r == -ENOMEM ? log_oom() : client_log_parse_error("GetEffectiveNodes", r);
        }
        *ret = effective_tree_builder_steal(&b);
        return 0;
}

static int get_cgroup(Client *c, const char *path, json_object **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus;
        int r = client_bus(c, &bus);

        if (r >= 0)
                r = client_result(c, cgbypass_get_cgroup(bus, path, &reply, &e), &e);
        return r < 0 ? r : read_a_sv(reply, "GetCgroup", ret);
}

static int list_delegations(Client *c, sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus;
        int r = client_bus(c, &bus);

        return r < 0 ? r : client_result(c, cgbypass_list_delegations(bus, ret_reply, &e), &e);
}

/* the number of entries of ListDelegations */
static int count_delegations(Client *c, size_t *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *list = NULL;
        int r;

        r = list_delegations(c, &reply);
        if (r < 0)
                return r;
        r = bus_message_read_json(reply, &list);
        if (r < 0 || json_object_get_type(list) != json_type_array)
                return client_log_parse_error("ListDelegations", r < 0 ? r : -EBADMSG);
        *ret = json_object_array_length(list);
        return 0;
}

static int verb_status(Client *c, char **args, size_t n_args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *props = NULL, *root = NULL, *out = NULL;
        _cleanup_(effective_node_freep) EffectiveNode *tree = NULL;
        json_object *controllers;
        size_t n_delegations = 0;
        int r;

        r = client_get_properties(c, &reply);
        if (r < 0)
                return r;
        r = read_a_sv(reply, "GetAll", &props);
        if (r < 0)
                return r;
        r = get_cgroup(c, "/", &root);
        if (r < 0)
                return r;

        /* Every cgroup shares the css of exactly one node of a controller's effective
         * tree, so the members of any tree are all cgroups; the root offers the controllers. */
        controllers = json_get(root, "controllers");
        if (controllers && json_object_get_type(controllers) == json_type_array &&
            json_object_array_length(controllers) > 0) {
                const char *first = json_object_get_string(json_object_array_get_idx(controllers, 0));

                if (first) {
                        r = get_effective_nodes(c, first + strspn(first, "+#"), &tree);
                        if (r < 0)
                                return r;
                }
        }
        r = count_delegations(c, &n_delegations);
        if (r < 0)
                return r;

        if (c->json) {
                out = json_object_new_object();
                if (!out ||
                    json_add_copy(out, "version", json_get(props, "Version")) < 0 ||
                    json_add_copy(out, "backend", json_get(props, "Backend")) < 0 ||
                    json_add_copy(out, "cgroup_root", json_get(props, "CgroupRoot")) < 0 ||
                    json_add_copy(out, "controllers", controllers) < 0 ||
                    (tree ? json_add(out, "cgroups", json_object_new_int64((int64_t) effective_tree_count_members(tree)))
                          : json_add_copy(out, "cgroups", NULL)) < 0 ||
                    json_add(out, "delegations", json_object_new_int64((int64_t) n_delegations)) < 0)
                        return log_oom();
                return print_json(c, out);
        }

        Fields f = {};
        char *s;

        fields_add(&f, "Version", strdup(strempty(json_get_string(props, "Version"))));
        fields_add(&f, "Backend", strdup(strempty(json_get_string(props, "Backend"))));
        fields_add(&f, "Cgroup root", strdup(strempty(json_get_string(props, "CgroupRoot"))));
        fields_add(&f, "Controllers", controllers ? format_json_human(controllers) : strdup("(none)"));
        if (tree)
                fields_add(&f, "Cgroups", asprintf(&s, "%zu", effective_tree_count_members(tree)) < 0 ? NULL : s);
        else
                fields_add(&f, "Cgroups", strdup("n/a"));
        fields_add(&f, "Delegations", asprintf(&s, "%zu", n_delegations) < 0 ? NULL : s);
        r = print_fields(&f);
        fields_done(&f);
        return r;
}

/* ---- show ---- */

/* GetCgroup's keys in the order people read them, with their labels. interfaces.md
 * promises the first four; cgbypassd adds the others. Keys not listed follow, as given. */
static const struct {
        const char *key;
        const char *label;
        bool delegation;        /* said already by "Delegated to: (not delegated)" when not delegated */
} show_fields[] = {
        { "type",                  "Type",                  false },
        { "controllers",           "Controllers",           false },
        { "subtree_control",       "Subtree control",       false },
        { "effective",             "Effective css",         false },
        { "children",              "Children",              false },
        { "populated",             "Populated",             false },
        { "managed",               "Managed",               false },
        { "delegated_to",          "Delegated to",          false },
        { "delegation",            "Delegation",            true },
        { "delegated_controllers", "Delegated controllers", true },
};

static bool show_key_is_known(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(show_fields); i++)
                if (streq(key, show_fields[i].key))
                        return true;
        return false;
}

static bool cgroup_is_delegated(json_object *cg) {
        json_object *v = json_get(cg, "delegated_to");
        return json_object_is_type(v, json_type_int) && json_object_get_int64(v) != UID_NONE;
}

static char *format_show_value(const char *key, json_object *v) {
        if (streq(key, "delegated_to") && json_object_is_type(v, json_type_int)) {
                int64_t uid = json_object_get_int64(v);

                if (uid == UID_NONE)
                        return strdup("(not delegated)");
                if (uid >= 0 && uid < UID_NONE)
                        return format_uid((uid_t) uid);
        }
        return format_json_human(v);
}

/* "subtree_control" -> "Subtree control", for keys a newer daemon may add */
static char *label_from_key(const char *key) {
        char *s = strdup(key);

        if (!s)
                return NULL;
        for (char *p = s; *p; p++)
                if (*p == '_')
                        *p = ' ';
        s[0] = (char) toupper((unsigned char) s[0]);
        return s;
}

static int show_print_human(json_object *cg, const char *path) {
        _cleanup_strv_free_ char **labels = NULL;
        size_t n_labels = 0;
        Fields f = {};
        int r;

        fields_add(&f, "Cgroup", strdup(path));
        for (size_t i = 0; i < ELEMENTSOF(show_fields); i++) {
                json_object *v = json_get(cg, show_fields[i].key);

                if (!v || (show_fields[i].delegation && !cgroup_is_delegated(cg)))
                        continue;
                fields_add(&f, show_fields[i].label, format_show_value(show_fields[i].key, v));
        }

        labels = calloc((size_t) json_object_object_length(cg) + 1, sizeof(char *));
        if (!labels)
                f.oom = true;
        else {
                json_object_object_foreach(cg, key, v) {
                        if (show_key_is_known(key))
                                continue;
                        labels[n_labels] = label_from_key(key);
                        if (!labels[n_labels])
                                f.oom = true;
                        else
                                fields_add(&f, labels[n_labels++], format_show_value(key, v));
                }
        }
        r = print_fields(&f);
        fields_done(&f);
        return r;
}

static int verb_show(Client *c, char **args, size_t n_args) {
        _cleanup_json_ json_object *cg = NULL, *out = NULL;
        int r;

        r = get_cgroup(c, args[0], &cg);
        if (r < 0)
                return r;
        if (!c->json)
                return show_print_human(cg, args[0]);

        /* the daemon's keys after "cgroup"; what does not apply is null (cgbypassctl(1), JSON OUTPUT):
         * the delegation's keys of a cgroup that is not delegated */
        out = json_object_new_object();
        if (!out || json_add(out, "cgroup", json_object_new_string(args[0])) < 0)
                return log_oom();
        bool delegated = cgroup_is_delegated(cg);
        json_object_object_foreach(cg, key, v) {
                if (!delegated && (streq(key, "delegated_to") || streq(key, "delegation") ||
                                   streq(key, "delegated_controllers")))
                        v = NULL;
                if (json_add_copy(out, key, v) < 0)
                        return log_oom();
                if (streq(key, "delegated_to") &&
                    json_add_user(out, "delegated_to_user",
                                  delegated ? (uint32_t) json_object_get_int64(v) : UID_NONE) < 0)
                        return log_oom();
        }
        return print_json(c, out);
}

/* ---- tree ---- */

static int verb_tree(Client *c, char **args, size_t n_args) {
        _cleanup_(effective_node_freep) EffectiveNode *tree = NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = get_effective_nodes(c, args[0], &tree);
        if (r < 0)
                return r;
        if (c->json) {
                _cleanup_json_ json_object *o = effective_tree_to_json(tree);
                if (!o)
                        return log_oom();
                return print_json(c, o);
        }
        r = effective_tree_format(tree, c->utf8, c->full, &text);
        if (r < 0)
                return log_oom();
        if (fputs(text, stdout) < 0)
                return log_error_errno(-EIO, "Failed to write the output: %m");
        return 0;
}

/* ---- changes ---- */

static int verb_enable(Client *c, char **args, size_t n_args) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus;
        int r = client_bus(c, &bus);

        return r < 0 ? r : client_result(c, cgbypass_enable_controller(bus, args[0], args[1], &e), &e);
}

static int verb_bypass(Client *c, char **args, size_t n_args) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus;
        int r = client_bus(c, &bus);

        return r < 0 ? r : client_result(c, cgbypass_bypass_controller(bus, args[0], args[1], &e), &e);
}

static int verb_set(Client *c, char **args, size_t n_args) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *change = NULL;
        StrBuf b = STRBUF_INIT;
        sd_bus *bus;
        int r;

        for (size_t i = 1; i < n_args; i++) {
                if (i > 1)
                        strbuf_putc(&b, ' ');
                strbuf_append(&b, args[i]);
        }
        if (strbuf_steal(&b, &change) < 0)
                return log_oom();
        r = client_bus(c, &bus);
        return r < 0 ? r : client_result(c, cgbypass_set_subtree_control(bus, args[0], change, &e), &e);
}

static int verb_reload(Client *c, char **args, size_t n_args) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus;
        int r = client_bus(c, &bus);

        return r < 0 ? r : client_result(c, cgbypass_reload(bus, &e), &e);
}

/* ---- run-time delegations ---- */

/* USER: a name from the user database, or a uid (which needs no entry: user-namespace ranges) */
static int parse_user(const char *s, uint32_t *ret) {
        struct passwd *pw;
        char *end;

        if (s[0] >= '0' && s[0] <= '9') {
                unsigned long long u;

                errno = 0;
                u = strtoull(s, &end, 10);
                if (errno != 0 || *end || u >= UID_NONE)
                        return -EINVAL;
                *ret = (uint32_t) u;
                return 0;
        }
        errno = 0;
        pw = getpwnam(s);
        if (!pw)
                return errno > 0 ? -errno : -ESRCH;
        *ret = (uint32_t) pw->pw_uid;
        return 0;
}

static int check_delegate(char **args, size_t n_args) {
        uint32_t uid;
        int r;

        r = check_cgroup_path(args[0]);
        if (r < 0)
                return r;
        r = parse_user(args[1], &uid);
        if (r == -EINVAL) {
                log_error("'%s' is not a uid (0 to %" PRIu32 ").", args[1], UID_NONE - 1);
                return r;
        }
        if (r < 0) {
                log_error("Unknown user '%s': no such user name (give a uid for a user without one).", args[1]);
                return r;
        }
        for (size_t i = 2; i < n_args; i++) {
                r = check_controller(args[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int verb_delegate(Client *c, char **args, size_t n_args) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char **controllers = calloc(n_args - 1, sizeof(char *));
        sd_bus *bus;
        uint32_t uid;
        int r;

        if (!controllers)
                return log_oom();
        for (size_t i = 2; i < n_args; i++)
                controllers[i - 2] = args[i];
        r = parse_user(args[1], &uid);
        if (r < 0)
                return log_error_errno(r, "Failed to look up user '%s': %m", args[1]);
        r = client_bus(c, &bus);
        if (r < 0)
                return r;
        return client_result(c, cgbypass_add_delegation(bus, args[0], uid, controllers, c->delegation_flags, &e), &e);
}

static int verb_undelegate(Client *c, char **args, size_t n_args) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus;
        int r = client_bus(c, &bus);

        return r < 0 ? r : client_result(c, cgbypass_remove_delegation(bus, args[0], &e), &e);
}

/* ---- delegations ---- */

typedef struct Delegation {
        const char *cgroup;
        uint32_t uid;
        char **controllers;
} Delegation;

static int delegation_compare(const void *a, const void *b) {
        const Delegation *x = a, *y = b;
        return strcmp(x->cgroup, y->cgroup);
}

static void delegations_free(Delegation *d, size_t n) {
        for (size_t i = 0; i < n; i++)
                strv_freep(&d[i].controllers);
        free(d);
}

static int read_delegations(sd_bus_message *reply, Delegation **ret, size_t *ret_n) {
        Delegation *d = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(reply, SD_BUS_TYPE_ARRAY, "(suas)");
        if (r < 0)
                return r;
        for (;;) {
                Delegation *nd;

                r = sd_bus_message_enter_container(reply, SD_BUS_TYPE_STRUCT, "suas");
                if (r <= 0)
                        break;
                nd = reallocarray(d, n + 1, sizeof(*d));
                if (!nd) {
                        r = -ENOMEM;
                        break;
                }
                d = nd;
                d[n] = (Delegation) {};
                r = sd_bus_message_read(reply, "su", &d[n].cgroup, &d[n].uid);
                if (r < 0)
                        break;
                r = sd_bus_message_read_strv(reply, &d[n].controllers);
                if (r < 0)
                        break;
                n++;
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        break;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                delegations_free(d, n);
                return r;
        }
        if (n > 0)
                qsort(d, n, sizeof(*d), delegation_compare);
        *ret = d;
        *ret_n = n;
        return 0;
}

static int delegations_print_json(const Client *c, const Delegation *d, size_t n) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_new_object();

                if (json_append(a, o) < 0 ||
                    json_add(o, "cgroup", json_object_new_string(d[i].cgroup)) < 0 ||
                    json_add(o, "uid", json_object_new_int64(d[i].uid)) < 0 ||
                    json_add_user(o, "user", d[i].uid) < 0 ||
                    json_add(o, "controllers", json_new_strv(d[i].controllers)) < 0)
                        return log_oom();
        }
        return print_json(c, a);
}

static int verb_delegations(Client *c, char **args, size_t n_args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        static const char *const header[] = { "CGROUP", "OWNER", "CONTROLLERS" };
        Delegation *d = NULL;
        size_t n = 0;
        Table t;
        int r;

        r = list_delegations(c, &reply);
        if (r < 0)
                return r;
        r = read_delegations(reply, &d, &n);
        if (r < 0)
                return client_log_parse_error("ListDelegations", r);

        if (c->json) {
                r = delegations_print_json(c, d, n);
                delegations_free(d, n);
                return r;
        }

        table_init(&t, ELEMENTSOF(header), header);
        for (size_t i = 0; i < n; i++) {
                table_add(&t, strdup(d[i].cgroup));
                table_add(&t, format_uid((uid_t) d[i].uid));
                table_add(&t, format_strv(d[i].controllers, " ", "(none)"));
        }
        delegations_free(d, n);
        r = table_print(&t, stdout);
        table_done(&t);
        if (r == -ENOMEM)
                return log_oom();
        if (r >= 0 && printf("\n%zu delegation%s listed.\n", n, n == 1 ? "" : "s") < 0)
                r = -EIO;
        return r < 0 ? log_error_errno(r, "Failed to write the output: %m") : 0;
}

/* ---- the table ---- */

const Verb verbs[] = {
        { "status",      "",                  0, 0,        0,            NULL,
          verb_status,      "Show the daemon's version, backend, cgroup root and counts",
          "Reads the daemon's properties (Version, Backend, CgroupRoot), the root cgroup's\n"
          "controllers, the number of cgroups and the number of delegations." },
        { "show",        "CGROUP",            1, 1,        0,            check_cgroup,
          verb_show,        "Show a cgroup's controllers, subtree control, type and owner",
          "Prints GetCgroup's answer: the controllers the cgroup has (bypassed ones with '#'),\n"
          "those it gives its children, its type, whose css each controller uses, its children,\n"
          "and the delegation that covers it. Any cgroup can be shown, managed or not." },
        { "tree",        "CONTROLLER",        1, 1,        0,            check_controller_arg,
          verb_tree,        "Draw the controller's effective hierarchy (cgroups sharing a css)",
          "One line per css of CONTROLLER: the cgroup that has it, then the cgroups that share\n"
          "it because they bypass or lack the controller, in pre-order, children in the order\n"
          "the kernel made them. More than 5 sibling cgroups in a row are folded to the first\n"
          "and the last and their count ('/c/s1 ... /c/s300 (300 cgroups)'); --full lists\n"
          "every one. With --json, nodes nest: {\"members\": [...], \"children\": [...]}." },
        { "enable",      "CGROUP CONTROLLER", 2, 2,        VERB_CHANGES, check_enable,
          verb_enable,      "Re-enable a controller that the cgroup's parent bypasses",
          "Writes +CONTROLLER to CGROUP/cgroup.controllers, so that the cgroup gets a css of\n"
          "its own while its parent bypasses the controller. CONTROLLER may be given as +NAME.\n"
          "Needs root, a delegation of CGROUP and CONTROLLER to you, or polkit's consent." },
        { "bypass",      "CGROUP CONTROLLER", 2, 2,        VERB_CHANGES, check_bypass,
          verb_bypass,      "Return a re-enabled controller to bypass",
          "Writes #CONTROLLER to CGROUP/cgroup.controllers: the cgroup shares its parent's css\n"
          "again. CONTROLLER may be given as #NAME. Authorized as 'enable'." },
        { "set",         "CGROUP CHANGE...",  2, SIZE_MAX, VERB_CHANGES, check_set,
          verb_set,         "Change the cgroup's subtree control: +NAME enables, -NAME disables,\n"
                            "#NAME bypasses (quote '#' from the shell)",
          "Applies the changes to CGROUP/cgroup.subtree_control, all or nothing, for example\n"
          "'cgbypassctl set /work.slice +cpu \\#io -memory'. Controllers not named keep their state." },
        { "delegations", "",                  0, 0,        0,            NULL,
          verb_delegations, "List the subtrees delegated to owners, and their controllers",
          "Lists every delegation, from the configuration and made at run time: its root\n"
          "cgroup, its owner, and the controllers the owner may switch below it." },
        { "delegate",    "CGROUP USER CONTROLLER...", 3, SIZE_MAX, VERB_CHANGES, check_delegate,
          verb_delegate,    "Delegate a subtree to a user at run time (AddDelegation)",
          "Hands CGROUP to USER (a user name, or a uid that needs no user entry) with the\n"
          "controllers the owner may switch below it, as a [delegate] section would. The cgroup\n"
          "is made if missing (--no-create: it must exist). The delegation ends when the cgroup\n"
          "is removed (--lifetime=persistent: only by 'undelegate'). Needs root or polkit's\n"
          "org.cgbypass1.delegate." },
        { "undelegate",  "CGROUP",            1, 1,        VERB_CHANGES, check_cgroup,
          verb_undelegate,  "End a run-time delegation (RemoveDelegation)",
          "Ends the run-time delegation of CGROUP: its files go back to root; the cgroups stay.\n"
          "A delegation from the configuration ends only there." },
        { "reload",      "",                  0, 0,        VERB_CHANGES, NULL,
          verb_reload,      "Re-read the configuration and apply it",
          "The same as 'systemctl reload cgbypassd'. A configuration with problems is refused\n"
          "with every FILE:LINE problem listed; the running state stays." },
};
const size_t n_verbs = ELEMENTSOF(verbs);

void verb_print_help(const Verb *v) {
        printf("Usage: cgbypassctl [OPTIONS...] %s%s%s\n\n", v->name, *v->args ? " " : "", v->args);
        for (const char *h = v->help; *h;) {
                size_t n = strcspn(h, "\n");

                /* the one-line summary, its continuation lines joined */
                printf("%.*s%s", (int) n, h, h[n] == '\n' ? " " : ".\n\n");
                h += n + (h[n] == '\n');
        }
        printf("%s\n\nSee 'cgbypassctl --help' for the options, and cgbypassctl(1).\n", v->details);
}

const Verb *verb_find(const char *name) {
        for (size_t i = 0; i < n_verbs; i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}
