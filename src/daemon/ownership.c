/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who owns the files of delegated cgroups (cgroup-v2.rst, "Delegation
 * Containment"). The delegation root's directory, cgroup.procs and
 * cgroup.threads are the owner's; its other files bound the owner and stay
 * root's. Below it, every file is what it would be had the owner made the
 * write that made it appear: the kernel gives a new interface file the
 * fsuid of the writer (cgroup_add_file() -> cgroup_kn_set_ugid()), and the
 * daemon writes as root, so after its writes the files below a delegation
 * root get the owner (uid and gid) of their cgroup's directory. A
 * delegation that ends takes everything in its subtree back to root.
 */
#include <pwd.h>

#include "cgbypass/log.h"
#include "cgbypass/strv.h"
#include "ownership.h"

static char *const delegated_files[] = { "cgroup.procs", "cgroup.threads", NULL };

static gid_t user_gid(uid_t uid) {
        struct passwd *pw = getpwuid(uid);
        return pw ? pw->pw_gid : (gid_t) -1;   /* -1: leave the group (a uid without passwd entry) */
}

static Cgroup *find(Manager *m, const char *path) {
        Cgroup *c;
        return hierarchy_lookup(backend_get_model(m->backend), path, &c) >= 0 ? c : NULL;
}

static const char *tamper_hint(int r) {
        switch (r) {
        case -EMLINK:
                return " (a file with more than one link: a hard link put there?)";
        case -ELOOP:
        case -EISDIR:
                return " (something that is not a regular file where the kernel has one)";
        case -EUCLEAN:
                return " (a file owned by someone else)";
        case -EPERM:
                return " (changing owners needs root)";
        default:
                return "";
        }
}

static int files_cmp(const void *a, const void *b) {
        return strcmp(((const OwnershipFiles *) a)->path, ((const OwnershipFiles *) b)->path);
}

static const OwnershipFiles *before_find(const OwnershipBefore *b, const char *path) {
        OwnershipFiles key = { .path = (char *) path };
        return b->n > 0 ? bsearch(&key, b->v, b->n, sizeof(OwnershipFiles), files_cmp) : NULL;
}

/* @after's names that @before lacks (both sorted, as cgroup_list_files() gives them), borrowed from @after */
static const char **appeared(const char *const *before, const char *const *after) {
        size_t n = 0, k = 0, m = 0;
        const char **v;

        while (after[n])
                n++;
        v = calloc(n + 1, sizeof(char *));
        for (size_t i = 0; v && i < n; i++) {
                while (before[k] && strcmp(before[k], after[i]) < 0)
                        k++;
                if (!before[k] || !streq(before[k], after[i]))
                        v[m++] = after[i];
        }
        return v;
}

/*
 * The files of one cgroup to the owner of its directory: with @before, only
 * those that appeared since (vetting ~25 files per request would be most of
 * its cost); the whole directory if it is new, or its last pass failed.
 */
static int give_files(Manager *m, Cgroup *c, const char *path, const OwnershipBefore *before, size_t *ret_n) {
        const OwnershipFiles *was = before ? before_find(before, path) : NULL;
        _cleanup_free_ const char **now = NULL, **names = NULL;
        int r;

        if (was && strv_index(m->owner_retry, path) < 0) {
                if (cgroup_list_file_names(backend_get_model(m->backend), c, &now) < 0 ||
                    !(names = appeared(was->files, now)))
                        return -ENOMEM;
                if (!names[0]) {
                        *ret_n = 0;
                        return 0;
                }
        }
        /* the backend takes no const names; it only reads them */
        r = backend_chown_to_dir_owner(m->backend, path, (char *const *) names, ret_n);
        /* a named file gone (vetting is all or nothing): the others still need their owner */
        if (r == -ENOENT && names)
                r = backend_chown_to_dir_owner(m->backend, path, NULL, ret_n);
        return r;
}

/* The files in the cgroups of @top's subtree, @top too when @with_top, to the owners of their directories. */
static int give_below(Manager *m, Cgroup *top, bool with_top, const OwnershipBefore *before) {
        int ret = 0, r;

        for (Cgroup *c = with_top ? top : cgroup_next_descendant_pre(top, top); c;
             c = cgroup_next_descendant_pre(c, top)) {
                _cleanup_free_ char *path = NULL;
                size_t n = 0;

                r = cgroup_path(c, &path);
                if (r < 0)
                        return log_oom();
                r = give_files(m, c, path, before, &n);
                /* a cgroup whose pass failed is passed whole by the next request there (on ENOMEM, by
                 * the next whole pass, at a reload) */
                if (r < 0 && r != -ENOENT)
                        (void) strv_add_unique(&m->owner_retry, path);
                else
                        strv_remove(m->owner_retry, path);
                if (r == -ENOENT)
                        continue;       /* removed by its owner meanwhile */
                if (r < 0) {
                        log_warning_errno(r, "Failed to give the files of %s to the owner of its directory%s, "
                                          "ignoring: %m", path, tamper_hint(r));
                        ret = ret ?: r;
                } else if (n > 0)
                        log_debug("Gave %zu file(s) of %s to the owner of its directory.", n, path);
        }
        return ret;
}

/* The delegation root to its owner, and the files below it to their directories' owners. */
static int hand_over(Manager *m, const DelegateSpec *d, const char *scope) {
        Cgroup *root = find(m, d->path), *top;
        int r, q;

        if (!root)
                return 0;
        r = backend_chown(m->backend, d->path, d->uid, user_gid(d->uid), delegated_files);
        if (r < 0)
                log_warning_errno(r, "Failed to hand %s to uid %u%s: %m", d->path, (unsigned) d->uid,
                                  tamper_hint(r));
        /* a write at @scope makes files appear only in @scope's subtree */
        top = scope && config_path_is_below(scope, d->path) ? find(m, scope) : root;
        q = top ? give_below(m, top, top != root, NULL) : 0;
        return r ?: q;
}

static bool related(const char *a, const char *b) {
        return streq(a, b) || config_path_is_below(a, b) || config_path_is_below(b, a);
}

/* @scope strictly inside a delegation (they do not nest): its root and the owner's name are as they were */
static const DelegateSpec *inside(Manager *m, const char *scope) {
        const DelegateSpec *in = scope ? config_find_delegation(m->config, scope) : NULL;
        return in && !streq(in->path, scope) ? in : NULL;
}

bool ownership_writes_as_owner(Manager *m, const char *scope) {
        const DelegateSpec *in = inside(m, scope);

        /* a failed pass's cgroup gets its whole pass from ownership_sync() */
        if (!in || (m->owner_retry && m->owner_retry[0]) || !find(m, in->path))
                return false;
        return backend_set_writes_by_dir_owner(m->backend, true) >= 0;
}

void ownership_writes_done(Manager *m) {
        (void) backend_set_writes_by_dir_owner(m->backend, false);
}

int ownership_before(Manager *m, const char *scope, OwnershipBefore *ret) {
        const DelegateSpec *in = inside(m, scope);
        Cgroup *top = in ? find(m, scope) : NULL;
        OwnershipBefore b = {};
        size_t cap = 0;
        int r = 0;

        *ret = (OwnershipBefore) {};
        if (!top)
                return 0;
        for (Cgroup *c = top; c && r >= 0; c = cgroup_next_descendant_pre(c, top)) {
                if (b.n == cap) {
                        OwnershipFiles *v = reallocarray(b.v, cap = cap ? cap * 2 : 4, sizeof(OwnershipFiles));
                        if (!v) {
                                r = -ENOMEM;
                                break;
                        }
                        b.v = v;
                }
                b.v[b.n] = (OwnershipFiles) {};
                r = cgroup_path(c, &b.v[b.n].path);
                if (r >= 0)
                        r = cgroup_list_file_names(backend_get_model(m->backend), c, &b.v[b.n].files);
                b.n++;
        }
        if (r < 0) {
                ownership_before_done(&b);      /* the pass after the writes then looks at every file */
                return r;
        }
        qsort(b.v, b.n, sizeof(OwnershipFiles), files_cmp);
        *ret = b;
        return 0;
}

void ownership_before_done(OwnershipBefore *b) {
        for (size_t i = 0; i < b->n; i++) {
                free(b->v[i].path);
                free(b->v[i].files);
        }
        free(b->v);
        *b = (OwnershipBefore) {};
}

int ownership_sync(Manager *m, const char *scope, const OwnershipBefore *before) {
        const DelegateSpec *in = inside(m, scope);
        int ret = 0, r;

        /*
         * A write strictly inside one delegation (they do not nest) makes files
         * appear in @scope's subtree only; its root and the owner's name are as
         * they were: a request's cost stays that of its subtree.
         */
        if (in) {
                Cgroup *top = find(m, scope);
                return top && find(m, in->path) ? give_below(m, top, true, before && before->n > 0 ? before : NULL) : 0;
        }
        for (size_t i = 0; i < m->config->n_delegates; i++) {
                const DelegateSpec *d = &m->config->delegates[i];

                if (scope && !related(scope, d->path))
                        continue;
                r = hand_over(m, d, scope);
                ret = ret ?: r;
        }
        return ret;
}

int ownership_take_back(Manager *m, const char *path, uid_t uid) {
        Cgroup *top = find(m, path);
        int ret = 0, r;

        for (Cgroup *c = top; c; c = cgroup_next_descendant_pre(c, top)) {
                _cleanup_free_ char *p = NULL;

                r = cgroup_path(c, &p);
                if (r >= 0)
                        r = backend_chown_all(m->backend, p, 0, 0);
                if (r < 0 && r != -ENOENT) {
                        log_warning_errno(r, "Failed to take %s back from uid %u%s: %m", strempty(p), (unsigned) uid,
                                          tamper_hint(r));
                        ret = ret ?: r;
                }
        }
        if (top && ret == 0)
                log_info("Took %s back from uid %u: it is no longer delegated.", path, (unsigned) uid);
        return ret;
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

                if (still_delegated(m->config, d))
                        continue;
                r = ownership_take_back(m, d->path, d->uid);
                ret = ret ?: r;
        }
        r = ownership_sync(m, NULL, NULL);
        return ret ?: r;
}
