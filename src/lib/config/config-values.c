/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Controller file values in [cgroup] sections ("memory.max = 4G"): the name
 * must be a controller's writable file and the value one that the kernel's
 * handler for it takes (cfvalue.h). Whether the cgroup will have the file
 * under the policy is the planner's question (policy.c).
 */
#include "cgbypass/cftype.h"
#include "cgbypass/cfvalue.h"
#include "config-internal.h"

/* @fmt has one %s, for the quoted file name */
static int value_error(const Config *c, ConfigErrors *errs, const ConfigLocation *loc, const char *fmt,
                       const char *file) {
        _cleanup_free_ char *q = config_quote(file);

        if (!q)
                return -ENOMEM;
        return config_error(c, errs, loc, fmt, q);
}

int config_parse_value(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                       const char *file, const char *value, CgroupSpec *cg) {
        const CfType *t = cftype_lookup(file);
        const char *why = NULL;
        int r;

        if (startswith(file, "cgroup."))
                return value_error(c, errs, loc, "'%s' is a file of the cgroup core, not of a controller; "
                                   "a [cgroup] section sets subtree-control, controllers and controller "
                                   "files", file);
        if (t && !(t->flags & CFT_WRITABLE))
                return value_error(c, errs, loc, "'%s' is read-only: the kernel reports it, nobody sets "
                                   "it", file);
        if (t && (t->flags & CFT_NO_READ))
                return value_error(c, errs, loc, "'%s' is an action, not a setting: it cannot be read "
                                   "back, so there is no state to keep", file);
        if (!cfvalue_known(file)) {
                if (t)
                        return value_error(c, errs, loc, "cgbypassd does not know the syntax of '%s'",
                                           file);
                return value_error(c, errs, loc, "unknown key '%s' in [cgroup]: no controller has such a "
                                   "file; known keys are path, create, subtree-control and controllers, "
                                   "and the writable files of controllers (memory.max, cpu.weight, ...)",
                                   file);
        }
        r = cfvalue_check(file, value, &why);
        if (r == -ENOMEM)
                return r;

        /* a bad value is kept as NULL: a second line for the file is a duplicate all the same */
        ConfigValue *v = realloc(cg->values, (cg->n_values + 1) * sizeof(ConfigValue));
        if (!v)
                return -ENOMEM;
        cg->values = v;
        v[cg->n_values] = (ConfigValue) { .file = strdup(file), .value = r < 0 ? NULL : strdup(value),
                                          .loc = *loc };
        if (!v[cg->n_values].file || (r >= 0 && !v[cg->n_values].value)) {
                free(v[cg->n_values].file);
                free(v[cg->n_values].value);
                return -ENOMEM;
        }
        cg->n_values++;
        if (r < 0) {
                _cleanup_free_ char *qf = config_quote(file), *qv = config_quote(value);
                if (!qf || !qv)
                        return -ENOMEM;
                return config_error(c, errs, loc, "%s: the kernel refuses '%s' (%s); it takes %s", qf, qv,
                                    r == -ERANGE ? "ERANGE" : "EINVAL", why);
        }
        return 0;
}

static int check_one_cgroup(const Config *c, ConfigErrors *errs, const CgroupSpec *cg) {
        const DelegateSpec *d = config_find_delegation(c, cg->path);
        int ret = 0, r;

        for (size_t i = 0; i < cg->n_values; i++) {
                const ConfigValue *v = &cg->values[i];

                if (!v->value)
                        continue;       /* reported where it was read */

                /* cgroup-v2.rst, delegation: below the delegation root, the owner's files */
                if (d && !streq(d->path, cg->path)) {
                        r = config_error(c, errs, &v->loc, "%s: %s is below the delegation root %s "
                                         "(%s:%u): its files belong to the owner; set values on the "
                                         "delegation root to bound the owner", v->file, cg->path, d->path,
                                         d->section_loc.file, d->section_loc.line);
                        if (r == -ENOMEM)
                                return r;
                        ret = -EINVAL;
                        continue;
                }
                /* two views of one CPU share: whichever is written last wins */
                const char *linked = cfvalue_linked(v->file);
                for (size_t j = 0; linked && j < i; j++)
                        if (cg->values[j].value && streq(cg->values[j].file, linked)) {
                                r = config_error(c, errs, &v->loc, "%s: %s at line %u sets the same CPU "
                                                 "share; keep one", v->file, linked, cg->values[j].loc.line);
                                if (r == -ENOMEM)
                                        return r;
                                ret = -EINVAL;
                        }
        }
        return ret;
}

int config_validate_values(const Config *c, ConfigErrors *errs) {
        int ret = 0;

        for (size_t i = 0; i < c->n_cgroups; i++) {
                if (!c->cgroups[i].path || c->cgroups[i].n_values == 0)
                        continue;
                int r = check_one_cgroup(c, errs, &c->cgroups[i]);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        ret = r;
        }
        return ret;
}
