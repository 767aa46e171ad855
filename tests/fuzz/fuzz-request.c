/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus request checks (src/daemon/request.c) on raw arguments, as a
 * caller sends them. Input: one byte for the method (EnableController,
 * BypassController, SetSubtreeControl), then the cgroup argument, a NUL,
 * and the controller or change argument.
 *
 * Checked: a refusal is a named org.cgbypass1.Error with a short one-line
 * message (a caller's bytes never reach a log line raw); an accepted request
 * names a cgroup path the configuration's rules accept, at least one
 * controller, and a value that, parsed again, is the same request;
 * request_quote() gives short, valid, printable text for anything.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "cgbypass/backend.h"
#include "cgbypass/bus-errors.h"
#include "fuzz-common.h"
#include "manager.h"
#include "request.h"

/* a caller's bytes in a message are quoted (REQUEST_QUOTE_SIZE), so messages stay short */
#define MESSAGE_MAX 1024

static Manager manager;
static char dir[] = "/tmp/cgb-fuzz-request-XXXXXX";

static void cleanup(void) {
        char cmd[64];

        manager.backend = backend_free(manager.backend);
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        (void) system(cmd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        _cleanup_free_ char *root = NULL, *state = NULL, *msg = NULL;

        /* as cgbypassd does before it serves: the names' errnos come from this map */
        if (sd_bus_error_add_map(cgbypass_bus_error_map) < 0)
                fuzz_fail("sd_bus_error_add_map() failed", NULL);
        /* the checks ask the model which controllers the kernel has: the sim's, the VM kernel's */
        if (!mkdtemp(dir) || asprintf(&root, "%s/root", dir) < 0 || asprintf(&state, "%s/state", dir) < 0)
                fuzz_fail("cannot make a temporary directory", strerror(errno));
        if (backend_open(BACKEND_SIM, root, state, &manager.backend, &msg) < 0)
                fuzz_fail("cannot open a sim backend", msg);
        (void) atexit(cleanup);
        return 0;
}

/* one line of valid UTF-8 without control characters: what a bus message and a log line may hold */
static bool printable_utf8_line(const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                unsigned n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 :
                             (*p & 0xf8) == 0xf0 ? 3 : 4;
                uint32_t cp = n == 0 ? *p : n == 1 ? (*p & 0x1fu) : n == 2 ? (*p & 0x0fu) : (*p & 0x07u);

                if (n == 4 || *p < 0x20 || *p == 0x7f)
                        return false;
                for (unsigned i = 1; i <= n; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                        cp = (cp << 6) | (p[i] & 0x3fu);
                }
                if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
                    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp < 0xa0))
                        return false;
                p += n + 1;
        }
        return true;
}

static CgMask builtin(void) {
        return hierarchy_builtin(backend_get_model(manager.backend));
}

static void check_error(const Refusal *f, int r) {
        const char *name = f->kind == REFUSAL_REQUEST ? reason_bus_error(f->reason) : NULL;

        if (r == -ENOMEM)
                return;
        if (r != -EINVAL)
                fuzz_fail("request_parse() failed with something but -EINVAL", strerror(-r));
        if (!name || !startswith(name, "org.cgbypass1.Error."))
                fuzz_fail("a refusal without an org.cgbypass1.Error name", name);
        if (!f->detail || !*f->detail || strlen(f->detail) > MESSAGE_MAX || !printable_utf8_line(f->detail))
                fuzz_fail("a refusal's message is empty, long or not one printable line", f->detail);
}

static void check_request(ChangeKind kind, const char *cgroup, const ChangeRequest *req) {
        _cleanup_(refusal_done) Refusal e = {};
        ChangeRequest again = {};
        int r;

        if (!streq(req->cgroup, cgroup) || config_cgroup_path_verify(cgroup, NULL) < 0)
                fuzz_fail("an accepted cgroup path is not one the configuration accepts", cgroup);
        if (req->controllers == 0 || !req->value || !req->names || !*req->names)
                fuzz_fail("an accepted request names no controller", req->value);
        /* what is written, parsed as a SetSubtreeControl change, is the same change */
        r = request_parse(builtin(), CHANGE_SUBTREE, cgroup, req->value, &again, &e);
        if (r == -ENOMEM)
                return;
        if (kind == CHANGE_SUBTREE) {
                if (r < 0)
                        fuzz_fail("the value of an accepted change is refused", req->value);
                if (memcmp(&again.change, &req->change, sizeof(req->change)) != 0 || !streq(again.value, req->value))
                        fuzz_fail("the value of an accepted change is another change", req->value);
        } else if (r >= 0 && (again.change.enable != req->change.enable || again.change.bypass != req->change.bypass))
                fuzz_fail("an accepted controller write reads as another change", req->value);
        change_request_done(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(refusal_done) Refusal e = {};
        _cleanup_free_ char *text = NULL;
        char q[REQUEST_QUOTE_SIZE];
        ChangeRequest req = {};
        const char *cgroup, *arg, *quoted;
        ChangeKind kind;
        int r;

        if (size < 1 || size > FUZZ_INPUT_MAX)
                return 0;
        kind = data[0] % _CHANGE_KIND_MAX;
        text = fuzz_string(data + 1, size - 1);
        if (!text)
                return 0;
        cgroup = text;
        arg = memchr(text, '\0', size - 1);
        arg = arg ? arg + 1 : "";       /* no NUL: no second argument */

        quoted = request_quote(cgroup, q);
        if (strlen(quoted) >= REQUEST_QUOTE_SIZE || !printable_utf8_line(quoted))
                fuzz_fail("request_quote() gives long or unprintable text", NULL);

        r = request_parse(builtin(), kind, cgroup, arg, &req, &e);
        if (r < 0)
                check_error(&e, r);
        else {
                if (e.kind != REFUSAL_NONE)
                        fuzz_fail("an accepted request has a refusal set", e.detail);
                check_request(kind, cgroup, &req);
                change_request_done(&req);
        }
        return 0;
}
