/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The limits on cgroups in delegations. */
#include <stdio.h>

#include "cgbypass/log.h"
#include "cgbypass/strv.h"
#include "delegation-limits.h"
#include "manager.h"

size_t delegation_cgroups(const Manager *m, const char *root) {
        Cgroup *c;

        if (hierarchy_lookup(backend_get_model(m->backend), root, &c) < 0)
                return 0;
        return (size_t) cgroup_nr_descendants(c) + 1;
}

size_t delegated_cgroups(const Manager *m) {
        size_t n = 0;

        /* delegations do not nest (config_validate_delegations()): no cgroup counts twice */
        for (size_t i = 0; i < m->config->n_delegates; i++)
                n += delegation_cgroups(m, m->config->delegates[i].path);
        return n;
}

int delegation_limits_check(const Manager *m, const char *root, size_t total, size_t adding, char **reterr_why) {
        const DaemonSettings *s = &m->config->daemon;
        size_t here = delegation_cgroups(m, root);
        int r;

        if (here + adding > s->max_cgroups_per_delegation)
                r = reterr_why ? asprintf(reterr_why, "the delegation %s holds %zu cgroup(s), and cgbypassd manages "
                                          "at most %u in one delegation (max-cgroups-per-delegation); remove some "
                                          "there first", root, here, s->max_cgroups_per_delegation) : 0;
        else if (total + adding > s->max_delegated_cgroups)
                r = reterr_why ? asprintf(reterr_why, "all delegations together hold %zu cgroup(s), and cgbypassd "
                                          "manages at most %u in all (max-delegated-cgroups); remove some first",
                                          total, s->max_delegated_cgroups) : 0;
        else
                return 0;
        return r < 0 ? -ENOMEM : -EDQUOT;
}

const char *delegation_over_limit(const Manager *m, const char *path) {
        const DelegateSpec *d;

        if (!m->over_limit || !path)
                return NULL;
        d = config_find_delegation(m->config, path);
        return d && strv_index(m->over_limit, d->path) >= 0 ? d->path : NULL;
}

int delegation_mark_over(Manager *m, const char *root, const char *why) {
        int r = strv_add_unique(&m->over_limit, root);

        if (r <= 0)
                return r;
        /* once per delegation until it is below the limit again: an owner's mkdir loop is no log flood */
        log_warning("Not taking on more cgroups in the delegation %s: %s. Requests on its cgroups are refused "
                    "(TooManyCgroups) until its owner removes some.", root, why ?: "a limit");
        return 0;
}

void delegation_clear_over(Manager *m, const char *root) {
        if (strv_index(m->over_limit, root) < 0)
                return;
        /* first: @root may be the entry itself (delegation_limits_recheck()) */
        log_info("The delegation %s is within its limits again: its cgroups are managed.", root);
        strv_remove(m->over_limit, root);
}

void delegation_limits_recheck(Manager *m) {
        if (backend_get_type(m->backend) == BACKEND_SIM)
                return;
        size_t total = delegated_cgroups(m);

        for (size_t i = 0; i < m->config->n_delegates; i++) {
                const char *root = m->config->delegates[i].path;
                _cleanup_free_ char *why = NULL;
                size_t here = delegation_cgroups(m, root);

                if (here <= m->config->daemon.max_cgroups_per_delegation) {
                        /* the model holds all the kernel has now: within both limits, it is managed again */
                        if (total <= m->config->daemon.max_delegated_cgroups)
                                delegation_clear_over(m, root);
                        continue;
                }
                if (asprintf(&why, "it holds %zu cgroup(s), and cgbypassd manages at most %u in one delegation "
                             "(max-cgroups-per-delegation)", here, m->config->daemon.max_cgroups_per_delegation) < 0)
                        why = NULL;
                (void) delegation_mark_over(m, root, why);
        }
        /* delegations that ended, or changed, are no longer marked */
        for (size_t i = 0; m->over_limit && m->over_limit[i];) {
                const DelegateSpec *d = config_find_delegation(m->config, m->over_limit[i]);
                if (d && streq(d->path, m->over_limit[i]) && manager_has_cgroup(m, d->path))
                        i++;
                else
                        delegation_clear_over(m, m->over_limit[i]);
        }
}
