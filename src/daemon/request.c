/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A caller's request, checked before anything acts on it: its cgroup path
 * and controller names, in words the kernel would accept. Who may make it
 * is delegation.c's question.
 */
#include <stdint.h>

#include "cgbypass/cgpath.h"
#include "manager.h"
#include "request.h"

#define QUOTE_MAX (REQUEST_QUOTE_SIZE - 8)

/* UTF-8 as D-Bus requires it; sd-bus checks it too, this keeps us honest for other callers */
static bool utf8_is_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        while (*p) {
                unsigned n, c = *p;
                uint32_t cp;

                if (c < 0x80) {
                        p++;
                        continue;
                }
                if ((c & 0xe0) == 0xc0)
                        n = 1, cp = c & 0x1f;
                else if ((c & 0xf0) == 0xe0)
                        n = 2, cp = c & 0x0f;
                else if ((c & 0xf8) == 0xf0)
                        n = 3, cp = c & 0x07;
                else
                        return false;
                for (unsigned i = 1; i <= n; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                        cp = (cp << 6) | (p[i] & 0x3f);
                }
                if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
                    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                p += n + 1;
        }
        return true;
}

const char *request_quote(const char *s, char buf[static REQUEST_QUOTE_SIZE]) {
        size_t n = 0;

        if (!utf8_is_valid(s))
                return "(invalid UTF-8)";
        for (; n < QUOTE_MAX && s[n]; n++) {
                const unsigned char *u = (const unsigned char *) s + n;

                /* C1 controls too (U+0080..U+009F): a terminal showing the log may take U+009B for CSI */
                if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f && n + 1 < QUOTE_MAX) {
                        buf[n++] = '?';
                        buf[n] = '?';
                } else
                        buf[n] = (u[0] < 0x20 || u[0] == 0x7f) ? '?' : s[n];
        }
        if (s[n]) {
                while (n > 0 && ((unsigned char) s[n] & 0xc0) == 0x80)
                        n--;    /* back to the first byte of a character */
                memcpy(buf + n, "...", 4);
        } else
                buf[n] = '\0';
        return buf;
}

int request_path_verify(const char *path, Refusal *reterr) {
        char q[REQUEST_QUOTE_SIZE];
        const char *why = NULL;
        unsigned depth;

        if (isempty(path))
                return refusal_set_request(reterr, REASON_INVALID_PATH,
                                        "An empty string is not a cgroup path; the root cgroup is \"/\"");
        if (!utf8_is_valid(path))
                return refusal_set_request(reterr, REASON_INVALID_PATH, "The cgroup path is not valid UTF-8");
        if (cgpath_verify(path, CGPATH_MANAGED, &why) < 0)
                return refusal_set_request(reterr, REASON_INVALID_PATH,
                                         "'%s' %s: give a normalized absolute cgroup path, as in /proc/PID/cgroup",
                                         request_quote(path, q), why);
        depth = cgpath_depth(path);
        if (depth > MANAGER_PATH_DEPTH_MAX)
                return refusal_set_request(reterr, REASON_INVALID_PATH,
                                         "'%s' is deeper than %u levels", request_quote(path, q), MANAGER_PATH_DEPTH_MAX);
        return 0;
}

int request_controller_verify(const char *name, CgMask builtin, Controller *ret, Refusal *reterr) {
        char q[REQUEST_QUOTE_SIZE];
        Controller x;

        if (isempty(name))
                return refusal_set_request(reterr, REASON_PARSE, "The controller name is empty");
        if (strchr("+-#", name[0]))
                return refusal_set_request(reterr, REASON_PARSE,
                                         "'%s': give the controller's name without '%c'; the method says what "
                                         "to do with it", request_quote(name, q), name[0]);
        for (const char *p = name; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_') || p - name >= 64)
                        return refusal_set_request(reterr, REASON_PARSE,
                                                 "'%s' is not one controller name", request_quote(name, q));
        x = controller_from_string(name);
        if (x < 0)
                return refusal_set_request(reterr, REASON_UNKNOWN_CONTROLLER,
                                         "There is no controller named '%s'", name);
        if (!(builtin & CGMASK(x)) || (controller_inhibit_mask(builtin) & CGMASK(x)))
                return refusal_set_request(reterr, REASON_UNKNOWN_CONTROLLER,
                                         "The controller '%s' is not available on this kernel's cgroup2 hierarchy",
                                         name);
        if (controller_implicit_mask(builtin) & CGMASK(x))
                return refusal_set_request(reterr, REASON_PARSE,
                                         "'%s' is implicit on cgroup2: every cgroup has it, and it cannot be "
                                         "switched", name);
        *ret = x;
        return 0;
}

void change_request_done(ChangeRequest *r) {
        free(r->value);
        free(r->names);
        *r = (ChangeRequest) {};
}

static int parse_change(const char *arg, CgMask builtin, ControllerChange *ret, Refusal *reterr) {
        _cleanup_free_ char *copy = NULL;
        ControllerChange ch = {};
        char q[REQUEST_QUOTE_SIZE];
        char *save = NULL;
        unsigned n = 0;
        int r;

        if (strlen(arg) > 4096)
                return refusal_set_request(reterr, REASON_PARSE,
                                        "The change is longer than 4096 bytes, more than the kernel takes in one write");
        for (const char *p = arg; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return refusal_set_request(reterr, REASON_PARSE,
                                                "The change contains a control character; separate tokens by spaces");
        copy = strdup(arg);
        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
                Controller x;

                if (!strchr("+-#", t[0]) || !t[0])
                        return refusal_set_request(reterr, REASON_PARSE,
                                                 "'%s' is not a change: write +NAME (enable), #NAME (bypass) or "
                                                 "-NAME (disable)", request_quote(t, q));
                r = request_controller_verify(t + 1, builtin, &x, reterr);
                if (r < 0)
                        return r;
                if ((ch.enable | ch.bypass | ch.disable) & CGMASK(x))
                        return refusal_set_request(reterr, REASON_PARSE,
                                                 "The change names %s twice", t + 1);
                *(t[0] == '+' ? &ch.enable : t[0] == '#' ? &ch.bypass : &ch.disable) |= CGMASK(x);
                n++;
        }
        if (n == 0)
                return refusal_set_request(reterr, REASON_PARSE,
                                        "The change is empty; give tokens such as '+cpu #io -memory'");
        *ret = ch;
        return 0;
}

int request_parse(CgMask builtin, ChangeKind kind, const char *cgroup, const char *arg, ChangeRequest *ret,
                  Refusal *reterr) {
        static const char *const methods[_CHANGE_KIND_MAX] = {
                [CHANGE_ENABLE] = "EnableController",
                [CHANGE_BYPASS] = "BypassController",
                [CHANGE_SUBTREE] = "SetSubtreeControl",
        };
        ChangeRequest req = { .kind = kind, .method = methods[kind], .cgroup = cgroup };
        Controller x;
        int r;

        r = request_path_verify(cgroup, reterr);
        if (r < 0)
                return r;
        if (kind == CHANGE_SUBTREE) {
                r = parse_change(arg, builtin, &req.change, reterr);
                if (r < 0)
                        return r;
                req.file = "cgroup.subtree_control";
                r = controller_change_to_string(&req.change, &req.value);
        } else {
                r = request_controller_verify(arg, builtin, &x, reterr);
                if (r < 0)
                        return r;
                if (streq(cgroup, "/"))
                        return refusal_set_request(reterr, REASON_ROOT,
                                                 "The root cgroup has no parent that could bypass %s for it; "
                                                 "%s works on the cgroups below it", arg, req.method);
                req.file = "cgroup.controllers";
                if (kind == CHANGE_ENABLE)
                        req.change.enable = CGMASK(x);
                else
                        req.change.bypass = CGMASK(x);
                r = asprintf(&req.value, "%c%s", kind == CHANGE_ENABLE ? '+' : '#', arg) < 0 ? -ENOMEM : 0;
        }
        if (r < 0)
                return r;
        req.controllers = req.change.enable | req.change.bypass | req.change.disable;
        req.names = controller_mask_to_string(req.controllers, " ");
        if (!req.names) {
                change_request_done(&req);
                return -ENOMEM;
        }
        *ret = req;
        return 0;
}
