/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The org.cgbypass1.Error.* name and the words for a refused change: which
 * cgroup to look at and what to change there. Which name and which words a
 * Reason gets is in its row of the reason table (src/lib/model/reason.c);
 * the names' errnos are libcgbypass's one map (src/libcgbypass/cgbypass-errors.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgbypass/bus-errors.h"
#include "cgbypass/cgpath.h"
#include "cgbypass/macro.h"
#include "cgbypass/strbuf.h"

const char *bus_error_name_from_model(int error, Reason reason) {
        const char *name = reason_bus_error(reason);

        if (name)
                return name;
        /* the kernel refused without saying why */
        if (error > 0)
                error = -error;
        switch (error) {
        case -ENOMEM:
                return SD_BUS_ERROR_NO_MEMORY;
        case -ENOENT:
        case -ENOTDIR:
                return BUS_ERROR_NO_SUCH_CGROUP;
        case -EOPNOTSUPP:
                return BUS_ERROR_NOT_SUPPORTED;
        case -EINVAL:
                return BUS_ERROR_INVALID_ARGUMENT;
        default:
                return BUS_ERROR_FAILED;
        }
}

/* @template with {cgroup}, {parent}, {controller} and {file} replaced, as the message of @e */
static int set_message(sd_bus_error *e, const char *name, const char *template, const char *const words[4]) {
        static const char *const keys[4] = { "{cgroup}", "{parent}", "{controller}", "{file}" };
        _cleanup_free_ char *message = NULL;
        StrBuf b = STRBUF_INIT;

        for (const char *p = template; *p;) {
                size_t k = 0;

                while (k < ELEMENTSOF(keys) && !startswith(p, keys[k]))
                        k++;
                if (k < ELEMENTSOF(keys)) {
                        strbuf_append(&b, words[k]);
                        p += strlen(keys[k]);
                } else
                        strbuf_putc(&b, *p++);
        }
        if (strbuf_steal(&b, &message) < 0)
                return sd_bus_error_set(e, SD_BUS_ERROR_NO_MEMORY, "Out of memory");
        return sd_bus_error_set(e, name, message);
}

int bus_error_set_model(sd_bus_error *e, int error, Reason reason, const char *cgroup, const char *file,
                        const char *controller) {
        const char *name = bus_error_name_from_model(error, reason);
        const char *x = controller ?: "the controller";
        const char *template = reason_bus_message(reason, streq_ptr(file, "cgroup.controllers"));
        _cleanup_free_ char *parent_path = NULL;
        const char *parent = "/";       /* also the root's: it has none to ask */
        int r;

        if (error > 0)
                error = -error;
        if (cgroup) {
                r = cgpath_parent(cgroup, &parent_path);
                if (r >= 0)
                        parent = parent_path;
                else if (r == -ENOMEM)
                        parent = "its parent";
        }
        cgroup = cgroup ?: "the cgroup";
        if (template)
                return set_message(e, name, template, (const char *const[4]) { cgroup, parent, x, strempty(file) });

        /* the kernel refused without a reason that says what to do */
        if (error == -ENOMEM)
                return sd_bus_error_set(e, name, "Out of memory");
        if (error == -ENOENT || error == -ENOTDIR)
                return sd_bus_error_setf(e, name, "%s does not exist (any more)", cgroup);
        if (error == -EEXIST)
                return sd_bus_error_setf(e, name,
                                         "%s in %s would add interface files whose names a child cgroup of %s "
                                         "has; rename that child first",
                                         x, cgroup, cgroup);
        return sd_bus_error_setf(e, name, "the kernel refused to change %s in %s's %s (%s); nothing was changed",
                                 x, cgroup, strempty(file), strerror(-error));
}
