/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sim: cgroups the owners made and removed in their delegations. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/log.h"
#include "adopt.h"
#include "cgroupfs.h"
#include "decision-log.h"
#include "delegation-limits.h"

/* One look at the delegations. */
typedef struct AdoptRun {
        size_t budget;          /* cgroups still to adopt in this look (MANAGER_ADOPT_MAX) */
        size_t total;           /* cgroups in all delegations, counting the ones adopted */
        const char *delegation; /* the root of the delegation looked at */
        size_t refused;         /* directories not taken on: a limit (delegation-limits.h) */
        char *why;              /* the first one's limit */
} AdoptRun;

/* Directory @path (absolute) beneath @root_fd, through the one opener: never by a symlink or onto another mount */
static int open_dir(int root_fd, const char *path, int flags) {
        int fd, r;

        r = cgfs_open_dir(root_fd, cgpath_relative(path), flags, &fd);
        return r < 0 ? r : fd;
}

/* @path's directory stream: 1, 0 when @path is gone (nothing to walk), or -errno */
static int open_dir_stream(int root_fd, const char *path, DIR **ret) {
        _cleanup_close_ int fd = open_dir(root_fd, path, O_RDONLY);

        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        *ret = fdopendir(fd);
        if (!*ret)
                return -errno;
        fd = -1;        /* owned by the stream now */
        return 1;
}

static char *child_path(const char *parent, const char *name) {
        char *s;

        return cgpath_join(parent, name, &s) < 0 ? NULL : s;
}

/*
 * The directory @name in @dir_fd, cgroup @sub, becomes a cgroup, owned by
 * whoever made the directory. Return: 1 adopted, 0 not (not a directory, not
 * a name cgbypassd manages, refused by the rules or a limit, no budget left).
 */
static int adopt_one(Manager *m, int dir_fd, const char *name, const char *sub, AdoptRun *run) {
        _cleanup_strv_free_ char **files = NULL;
        Reason reason = REASON_NONE;
        struct stat st;
        Cgroup *c;
        int r;

        if (run->budget == 0)
                return 0;
        /* only directories become cgroups; a symlink is never followed */
        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                return 0;
        if (cgpath_verify(sub, CGPATH_MANAGED, NULL) < 0) {
                log_debug("Not adopting '%s': not a name cgbypassd manages.", sub);
                return 0;
        }
        r = delegation_limits_check(m, run->delegation, run->total, 1, run->why ? NULL : &run->why);
        if (r < 0) {
                log_debug("Not adopting %s: %s", sub, r == -EDQUOT ? "a limit" : strerror(-r));
                run->refused++;
                return 0;
        }
        r = backend_mkdir(m->backend, sub, &reason);
        if (r < 0) {
                log_debug("Not adopting %s: %s", sub, policy_reason_text(r, reason));
                return 0;
        }
        run->budget--;
        run->total++;
        /* kernfs: the creator owns the new cgroup's directory and files */
        r = hierarchy_lookup(backend_get_model(m->backend), sub, &c);
        if (r >= 0)
                r = cgroup_list_files(backend_get_model(m->backend), c, &files);
        if (r >= 0)
                r = backend_chown(m->backend, sub, st.st_uid, st.st_gid, files);
        if (r < 0)
                log_warning_errno(r, "Failed to give %s to uid %u, ignoring: %m", sub, (unsigned) st.st_uid);
        log_debug("Adopted %s, made by uid %u in its delegation.", sub, (unsigned) st.st_uid);
        return 1;
}

static int adopt_below(Manager *m, int root_fd, const char *path, unsigned depth, AdoptRun *run) {
        _cleanup_close_ int fd = -1;
        CgfsEntry *e = NULL;
        size_t ne = 0;
        int n = 0, r;

        if (depth >= MANAGER_PATH_DEPTH_MAX || run->budget == 0)
                return 0;
        fd = open_dir(root_fd, path, O_RDONLY);
        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        /* getdents64(2) straight, directories only: most entries are a cgroup's files */
        r = cgfs_list_dirs_at(fd, &e, &ne);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ne; i++) {
                _cleanup_free_ char *sub = child_path(path, e[i].name);
                Cgroup *c;

                if (!sub) {
                        n = -ENOMEM;
                        break;
                }
                if (hierarchy_lookup(backend_get_model(m->backend), sub, &c) < 0) {
                        if (run->budget == 0)
                                break;
                        if (adopt_one(m, fd, e[i].name, sub, run) == 0)
                                continue;
                        n++;
                }
                r = adopt_below(m, root_fd, sub, depth + 1, run);
                if (r < 0 && r != -ELOOP && r != -ENOTDIR && r != -EXDEV)
                        log_debug("Cannot look into %s: %s", sub, strerror(-r));
                else if (r > 0)
                        n += r;
        }
        cgfs_entries_free(e, ne);
        return n;
}

/*
 * The cgroups on the way from @from (a known cgroup) down to @to: each
 * directory there becomes a cgroup. Return: the number adopted, -ENOENT
 * when the way ends before @to, or -errno.
 */
static int adopt_path(Manager *m, int root_fd, const char *from, const char *to, AdoptRun *run) {
        _cleanup_free_ char *path = strdup(to);
        size_t at = strlen(from);
        int n = 0;

        if (!path)
                return -ENOMEM;
        if (cgpath_is_root(from))
                at = 0;
        while (path[at] == '/') {
                size_t end = at + 1 + strcspn(path + at + 1, "/");
                char saved = path[end];
                Cgroup *c;

                path[end] = '\0';
                if (hierarchy_lookup(backend_get_model(m->backend), path, &c) < 0) {
                        _cleanup_close_ int fd = -1;
                        path[at] = '\0';
                        fd = open_dir(root_fd, at ? path : "/", O_RDONLY);
                        path[at] = '/';
                        if (fd < 0 || adopt_one(m, fd, path + at + 1, path, run) == 0)
                                return fd < 0 && fd != -ENOENT ? fd : -ENOENT;
                        n++;
                }
                path[end] = saved;
                at = end;
        }
        return n;
}

static unsigned path_depth(const char *path) {
        return cgpath_depth(path);
}

/* Whether directory @path (absolute cgroup path) is still there, beneath @root_fd. */
static bool dir_exists(int root_fd, const char *path) {
        _cleanup_close_ int fd = open_dir(root_fd, path, O_PATH);
        return fd >= 0 || fd != -ENOENT;       /* only a sure "gone" counts */
}

/*
 * Cgroups below @top (and @top itself with @with_top) whose directories their
 * owners removed: rmdir(2) in cgroupfs.
 */
static int forget_removed(Manager *m, int root_fd, const char *top, bool with_top) {
        _cleanup_strv_free_ char **paths = NULL;
        const Hierarchy *h = backend_get_model(m->backend);
        size_t n = 0, cap = 0;
        Cgroup *t;
        int removed = 0, r;

        if (hierarchy_lookup(h, top, &t) < 0)
                return 0;
        for (Cgroup *c = with_top ? t : cgroup_next_descendant_pre(t, t); c; c = cgroup_next_descendant_pre(c, t)) {
                if (n + 2 > cap) {
                        cap = cap ? cap * 2 : 16;
                        char **v = reallocarray(paths, cap, sizeof(char *));
                        if (!v)
                                return -ENOMEM;
                        paths = v;
                }
                paths[n] = paths[n + 1] = NULL;
                r = cgroup_path(c, &paths[n]);
                if (r < 0)
                        return r;
                n++;
        }
        /* children before parents, as rm -r goes */
        for (size_t i = n; i-- > 0;) {
                Reason reason = REASON_NONE;

                if (dir_exists(root_fd, paths[i]))
                        continue;
                r = backend_rmdir(m->backend, paths[i], &reason);
                if (r < 0)
                        log_debug("Keeping %s, whose directory is gone: %s", paths[i], policy_reason_text(r, reason));
                else {
                        log_debug("Forgot %s: its owner removed it.", paths[i]);
                        removed++;
                }
        }
        return removed;
}

static void report_refused(Manager *m, AdoptRun *run) {
        if (run->refused == 0) {
                m->limit_warned = false;
                return;
        }
        /* once, until there is room again: an owner's mkdir loop is no log flood */
        if (!m->limit_warned)
                log_warning("Not taking on %zu cgroup(s) that owners made: %s. They stay as they are, unmanaged, "
                            "until there is room.", run->refused, run->why ?: "a limit");
        m->limit_warned = true;
}

int adopt_in_delegations(Manager *m, const char *scope) {
        int root_fd = backend_get_root_fd(m->backend);
        AdoptRun run = { .budget = MANAGER_ADOPT_MAX };
        int n = 0, err = 0, r;

        if (backend_get_type(m->backend) != BACKEND_SIM || m->config->n_delegates == 0)
                return 0;
        if (root_fd < 0)
                return root_fd;
        run.total = delegated_cgroups(m);
        for (size_t i = 0; i < m->config->n_delegates; i++) {
                const char *path = m->config->delegates[i].path, *top = path;
                _cleanup_free_ char *known = NULL;
                /* a run-time delegation of lifetime "cgroup": whoever removes its root (rmdir) ends it */
                bool root_may_go = m->config->delegates[i].runtime && !m->config->delegates[i].persistent;

                /* the delegations that lie in @scope whole; of one that holds it, only @scope */
                if (scope && cgroup_path_is_at_or_below(scope, path))
                        top = scope;
                else if (scope && !cgroup_path_is_at_or_below(path, scope))
                        continue;
                if (!manager_has_cgroup(m, path))
                        continue;
                run.delegation = path;
                if (top != path) {
                        /* at @path at the highest, which exists */
                        known = manager_known_ancestor(m, top);
                        if (!known)
                                return -ENOMEM;
                        r = forget_removed(m, root_fd, known, !streq(known, path) || root_may_go);
                        if (r < 0) {
                                err = r;
                                break;
                        }
                        n += r;
                        run.total -= (size_t) r;
                        if (!manager_has_cgroup(m, known))
                                continue;       /* its owner removed it */
                        r = adopt_path(m, root_fd, known, top, &run);
                        if (r == -ENOENT)
                                continue;       /* @scope is not there */
                        if (r < 0) {
                                err = r;
                                break;
                        }
                        n += r;
                } else {
                        r = forget_removed(m, root_fd, path, root_may_go);
                        if (r < 0) {
                                err = r;
                                break;
                        }
                        n += r;
                        run.total -= (size_t) r;
                        if (!manager_has_cgroup(m, path))
                                continue;
                }
                m->walks++;
                r = adopt_below(m, root_fd, top, path_depth(top) - path_depth(path), &run);
                if (r < 0) {
                        err = r;
                        break;
                }
                n += r;
        }
        /* one line for a look, be it 1 cgroup or 300 (each is a debug line) */
        decision_log_adopted(MANAGER_ADOPT_MAX - run.budget, (size_t) n - (MANAGER_ADOPT_MAX - run.budget), scope);
        report_refused(m, &run);
        free(run.why);
        return err < 0 ? err : n;
}

int adopt_refusal(Manager *m, const char *path, char **ret_why) {
        const DelegateSpec *d;
        _cleanup_close_ int root_fd = -1, fd = -1;
        const char *over;

        if (backend_get_type(m->backend) != BACKEND_SIM) {
                /* native, emulated: the whole delegation, taken on or not, until it is within its limits */
                over = delegation_over_limit(m, path);
                if (!over)
                        return 0;
                if (ret_why && asprintf(ret_why, "its delegation %s holds more cgroups than cgbypassd manages "
                                        "(max-cgroups-per-delegation = %u, max-delegated-cgroups = %u); remove "
                                        "some there first", over, m->config->daemon.max_cgroups_per_delegation,
                                        m->config->daemon.max_delegated_cgroups) < 0)
                        return -ENOMEM;
                return -EDQUOT;
        }
        if (manager_has_cgroup(m, path))
                return 0;
        d = config_find_delegation(m->config, path);
        if (!d || streq(d->path, path))
                return 0;
        /* only a directory that is there was refused */
        if (cgfs_open_root(backend_get_root(m->backend), &root_fd) < 0)
                return 0;
        fd = open_dir(root_fd, path, O_PATH);
        if (fd < 0)
                return 0;
        return delegation_limits_check(m, d->path, delegated_cgroups(m), 1, ret_why);
}

/* ---- native, emulated: an owner's mkdir or rmdir, one at a time ---- */

typedef struct PathList {
        char **v;               /* NULL-terminated */
        size_t n, cap;
} PathList;

static void path_list_done(PathList *l) {
        strv_freep(&l->v);
        *l = (PathList) {};
}

static int path_list_add_subtree(PathList *l, const Manager *m, const char *path) {
        Cgroup *top;
        int r;

        if (hierarchy_lookup(backend_get_model(m->backend), path, &top) < 0)
                return 0;
        for (Cgroup *c = top; c; c = cgroup_next_descendant_pre(c, top)) {
                if (l->n + 2 > l->cap) {
                        size_t cap = l->cap ? l->cap * 2 : 8;
                        char **v = reallocarray(l->v, cap, sizeof(char *));
                        if (!v)
                                return -ENOMEM;
                        l->v = v;
                        l->cap = cap;
                }
                l->v[l->n] = l->v[l->n + 1] = NULL;
                r = cgroup_path(c, &l->v[l->n]);
                if (r < 0)
                        return r;
                l->n++;
        }
        return 0;
}

/* How many more cgroups the delegation @root may take on. */
static size_t room_in(const Manager *m, const char *root) {
        size_t here = delegation_cgroups(m, root), total = delegated_cgroups(m);
        const DaemonSettings *s = &m->config->daemon;
        size_t per = here < s->max_cgroups_per_delegation ? s->max_cgroups_per_delegation - here : 0;
        size_t all = total < s->max_delegated_cgroups ? s->max_delegated_cgroups - total : 0;

        return per < all ? per : all;
}

/*
 * Take on @path (made behind the daemon) with what is below it, into @learnt.
 * Return: >0 taken on, 0 not (gone, known, or beyond a limit: @root marked), -ESTALE, -errno.
 */
static int adopt_kernel_cgroup(Manager *m, const char *root, const char *path, PathList *learnt) {
        _cleanup_free_ char *why = NULL, *msg = NULL;
        size_t room = room_in(m, root);
        int r;

        r = backend_adopt_cgroup(m->backend, path, room, &msg);
        if (r == -EDQUOT) {
                /* which limit, in delegation_limits_check()'s words */
                if (delegation_limits_check(m, root, delegated_cgroups(m), room + 1, &why) == -ENOMEM)
                        return -ENOMEM;
                return delegation_mark_over(m, root, why);
        }
        if (r == -ENOENT || r == -EEXIST)
                return 0;
        if (r < 0) {
                log_debug("Cannot take on %s alone (%s): reading the hierarchy again.", path,
                          msg ?: strerror(-r));
                return r == -ENOMEM ? r : -ESTALE;
        }
        r = path_list_add_subtree(learnt, m, path);
        return r < 0 ? r : 1;
}

typedef int (*SubdirFn)(const char *sub, unsigned depth, void *userdata);

/* @visit on each subdirectory of @path in the kernel, until it returns non-zero (> 0: stop, no error) */
static int for_each_subdir(int root_fd, const char *path, unsigned depth, SubdirFn visit, void *userdata) {
        DIR *d;
        int r;

        if (depth >= MANAGER_PATH_DEPTH_MAX)
                return 0;
        r = open_dir_stream(root_fd, path, &d);
        if (r <= 0)
                return r;
        r = 0;
        for (struct dirent *de; r == 0 && (de = readdir(d));) {
                _cleanup_free_ char *sub = NULL;

                if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                sub = child_path(path, de->d_name);
                r = sub ? visit(sub, depth + 1, userdata) : -ENOMEM;
        }
        (void) closedir(d);
        return r;
}

typedef struct {
        int root_fd;
        size_t limit;
        size_t *n;
} DirCount;

static int count_visit(const char *sub, unsigned depth, void *userdata) {
        DirCount *c = userdata;
        int r;

        (*c->n)++;
        r = for_each_subdir(c->root_fd, sub, depth, count_visit, c);
        return r < 0 ? r : *c->n > c->limit;
}

/* The directories below @path in the kernel, counted up to @limit (and one more). */
static int count_dirs(int root_fd, const char *path, unsigned depth, size_t limit, size_t *n) {
        DirCount c = { .root_fd = root_fd, .limit = limit, .n = n };
        int r = for_each_subdir(root_fd, path, depth, count_visit, &c);

        return r < 0 ? r : 0;
}

typedef struct {
        Manager *m;
        int root_fd;
        const char *root;
        PathList *learnt;
} Adoption;

static int adopt_visit(const char *sub, unsigned depth, void *userdata) {
        Adoption *a = userdata;
        int r;

        if (manager_has_cgroup(a->m, sub))
                r = for_each_subdir(a->root_fd, sub, depth, adopt_visit, a);
        else
                r = adopt_kernel_cgroup(a->m, a->root, sub, a->learnt);
        return r < 0 ? r : 0;
}

/* The directories below @path that the model lacks, taken on (the delegation is within its limits). */
static int adopt_missing(Manager *m, int root_fd, const char *root, const char *path, unsigned depth,
                         PathList *learnt) {
        Adoption a = { .m = m, .root_fd = root_fd, .root = root, .learnt = learnt };

        return for_each_subdir(root_fd, path, depth, adopt_visit, &a);
}

/* After an rmdir: the over-limit delegations whose directories fit again are taken on whole. */
static int recheck_over_limit(Manager *m, PathList *learnt) {
        _cleanup_close_ int root_fd = -1;
        const DaemonSettings *s = &m->config->daemon;
        int r;

        if (!m->over_limit || !m->over_limit[0])
                return 0;
        r = cgfs_open_root(backend_get_root(m->backend), &root_fd);
        if (r < 0)
                return r;
        for (size_t i = 0; m->over_limit && m->over_limit[i];) {
                _cleanup_free_ char *root = strdup(m->over_limit[i]);
                size_t here = 1, others;

                if (!root)
                        return -ENOMEM;
                m->walks++;
                r = count_dirs(root_fd, root, cgpath_depth(root), s->max_cgroups_per_delegation, &here);
                if (r < 0)
                        return r;
                others = delegated_cgroups(m) - delegation_cgroups(m, root);
                if (here > s->max_cgroups_per_delegation || others + here > s->max_delegated_cgroups) {
                        i++;
                        continue;
                }
                delegation_clear_over(m, root);
                r = adopt_missing(m, root_fd, root, root, cgpath_depth(root), learnt);
                if (r < 0)
                        return r;
        }
        return 0;
}

int adopt_event(Manager *m, const char *path, bool created, size_t *adopted, size_t *forgotten) {
        _cleanup_(path_list_done) PathList learnt = {};
        const DelegateSpec *d;
        int r;

        if (backend_get_type(m->backend) == BACKEND_SIM)
                return -EOPNOTSUPP;
        d = config_find_delegation(m->config, path);
        if (!d)
                return 0;       /* the delegation ended meanwhile */
        if (created) {
                _cleanup_free_ char *parent = NULL;

                if (manager_has_cgroup(m, path) || cgpath_parent(path, &parent) < 0 || !manager_has_cgroup(m, parent))
                        return 0;       /* known, or below a directory not taken on */
                if (delegation_over_limit(m, path))
                        return 0;
                r = adopt_kernel_cgroup(m, d->path, path, &learnt);
                *adopted += learnt.n;
        } else {
                r = path_list_add_subtree(&learnt, m, path);
                if (r >= 0 && learnt.n > 0) {
                        r = backend_forget_cgroup(m->backend, path);
                        if (r == -EEXIST)
                                /* made again with the same name: the old one's state is not the new one's */
                                r = -ESTALE;
                        else if (r < 0 && r != -ENOMEM)
                                r = -ESTALE;
                }
                if (r >= 0) {
                        size_t n = learnt.n;

                        *forgotten += n;
                        /* client changes and lifetime "cgroup" delegations of what went */
                        (void) manager_refresh_quiet(m, false, path, NULL);
                        r = recheck_over_limit(m, &learnt);
                        *adopted += learnt.n - n;
                }
        }
        if (learnt.n > 0)
                manager_emit_paths(m, learnt.v, learnt.n);
        return r < 0 ? r : (int) learnt.n;
}
