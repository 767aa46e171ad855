/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The limits on cgroups in delegations. */
#include <stdio.h>

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
