/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Handing delegated cgroups to their owners. */
#include <pwd.h>

#include "cgbypass/log.h"
#include "ownership.h"

static char *const delegated_files[] = { "cgroup.procs", "cgroup.threads", NULL };

static gid_t user_gid(uid_t uid) {
        struct passwd *pw = getpwuid(uid);
        return pw ? pw->pw_gid : (gid_t) -1;   /* -1: leave the group */
}

static bool cgroup_exists(Manager *m, const char *path) {
        Cgroup *c;
        return hierarchy_lookup(backend_get_model(m->backend), path, &c) >= 0;
}

static bool still_delegated(const Config *c, const DelegateSpec *old) {
        for (size_t i = 0; c && i < c->n_delegates; i++)
                if (streq(c->delegates[i].path, old->path) && c->delegates[i].uid == old->uid)
                        return true;
        return false;
}

int delegation_chown_all(Manager *m, const Config *old) {
        int ret = 0, r;

        for (size_t i = 0; old && i < old->n_delegates; i++) {
                const DelegateSpec *d = &old->delegates[i];

                if (still_delegated(m->config, d) || !cgroup_exists(m, d->path))
                        continue;
                r = backend_chown(m->backend, d->path, 0, 0, delegated_files);
                if (r < 0) {
                        log_warning_errno(r, "Failed to take %s back from uid %u: %m", d->path, (unsigned) d->uid);
                        ret = ret ?: r;
                } else
                        log_info("Took %s back from uid %u: it is no longer delegated.", d->path, (unsigned) d->uid);
        }
        for (size_t i = 0; i < m->config->n_delegates; i++) {
                const DelegateSpec *d = &m->config->delegates[i];

                if (!cgroup_exists(m, d->path))
                        continue;
                r = backend_chown(m->backend, d->path, d->uid, user_gid(d->uid), delegated_files);
                if (r < 0) {
                        log_warning_errno(r, "Failed to hand %s to uid %u%s: %m", d->path, (unsigned) d->uid,
                                          r == -EPERM ? " (changing owners needs root)" : "");
                        ret = ret ?: r;
                } else
                        log_debug("Handed %s to uid %u.", d->path, (unsigned) d->uid);
        }
        return ret;
}
