/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Requests are checked here before anything acts on them: their paths and
 * controller names, then who may make them. A request reaches the hierarchy
 * only through the model and the backend, which resolve paths beneath the
 * cgroup root without following symlinks (cgroupfs.c); the checks here make
 * sure it names something the configuration manages or delegates, in words
 * the kernel would accept.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cgbypass/bus-errors.h"
#include "cgbypass/cgpath.h"
#include "cgbypass/log.h"
#include "delegation.h"

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
        for (; n < QUOTE_MAX && s[n]; n++)
                buf[n] = ((unsigned char) s[n] < 0x20 || s[n] == 0x7f) ? '?' : s[n];
        if (s[n]) {
                while (n > 0 && ((unsigned char) s[n] & 0xc0) == 0x80)
                        n--;    /* back to the first byte of a character */
                memcpy(buf + n, "...", 4);
        } else
                buf[n] = '\0';
        return buf;
}

int request_path_verify(const char *path, sd_bus_error *error) {
        char q[REQUEST_QUOTE_SIZE];
        const char *why = NULL;
        unsigned depth;

        if (isempty(path))
                return sd_bus_error_set(error, BUS_ERROR_INVALID_PATH,
                                        "An empty string is not a cgroup path; the root cgroup is \"/\"");
        if (!utf8_is_valid(path))
                return sd_bus_error_set(error, BUS_ERROR_INVALID_PATH, "The cgroup path is not valid UTF-8");
        if (cgpath_verify(path, CGPATH_MANAGED, &why) < 0)
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_PATH,
                                         "'%s' %s: give a normalized absolute cgroup path, as in /proc/PID/cgroup",
                                         request_quote(path, q), why);
        depth = cgpath_depth(path);
        if (depth > MANAGER_PATH_DEPTH_MAX)
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_PATH,
                                         "'%s' is deeper than %u levels", request_quote(path, q), MANAGER_PATH_DEPTH_MAX);
        return 0;
}

int request_controller_verify(const char *name, CgMask builtin, Controller *ret, sd_bus_error *error) {
        char q[REQUEST_QUOTE_SIZE];
        Controller x;

        if (isempty(name))
                return sd_bus_error_set(error, BUS_ERROR_INVALID_ARGUMENT, "The controller name is empty");
        if (strchr("+-#", name[0]))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
                                         "'%s': give the controller's name without '%c'; the method says what "
                                         "to do with it", request_quote(name, q), name[0]);
        for (const char *p = name; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_') || p - name >= 64)
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
                                                 "'%s' is not one controller name", request_quote(name, q));
        x = controller_from_string(name);
        if (x < 0)
                return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_CONTROLLER,
                                         "There is no controller named '%s'", name);
        if (!(builtin & CGMASK(x)) || (controller_inhibit_mask(builtin) & CGMASK(x)))
                return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_CONTROLLER,
                                         "The controller '%s' is not available on this kernel's cgroup2 hierarchy",
                                         name);
        if (controller_implicit_mask(builtin) & CGMASK(x))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
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

static int parse_change(const char *arg, CgMask builtin, ControllerChange *ret, sd_bus_error *error) {
        _cleanup_free_ char *copy = NULL;
        ControllerChange ch = {};
        char q[REQUEST_QUOTE_SIZE];
        char *save = NULL;
        unsigned n = 0;
        int r;

        if (strlen(arg) > 4096)
                return sd_bus_error_set(error, BUS_ERROR_INVALID_ARGUMENT,
                                        "The change is longer than 4096 bytes, more than the kernel takes in one write");
        for (const char *p = arg; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return sd_bus_error_set(error, BUS_ERROR_INVALID_ARGUMENT,
                                                "The change contains a control character; separate tokens by spaces");
        copy = strdup(arg);
        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
                Controller x;

                if (!strchr("+-#", t[0]) || !t[0])
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
                                                 "'%s' is not a change: write +NAME (enable), #NAME (bypass) or "
                                                 "-NAME (disable)", request_quote(t, q));
                r = request_controller_verify(t + 1, builtin, &x, error);
                if (r < 0)
                        return r;
                if ((ch.enable | ch.bypass | ch.disable) & CGMASK(x))
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
                                                 "The change names %s twice", t + 1);
                *(t[0] == '+' ? &ch.enable : t[0] == '#' ? &ch.bypass : &ch.disable) |= CGMASK(x);
                n++;
        }
        if (n == 0)
                return sd_bus_error_set(error, BUS_ERROR_INVALID_ARGUMENT,
                                        "The change is empty; give tokens such as '+cpu #io -memory'");
        *ret = ch;
        return 0;
}

int request_parse(Manager *m, ChangeKind kind, const char *cgroup, const char *arg, ChangeRequest *ret,
                  sd_bus_error *error) {
        static const char *const methods[_CHANGE_KIND_MAX] = {
                [CHANGE_ENABLE] = "EnableController",
                [CHANGE_BYPASS] = "BypassController",
                [CHANGE_SUBTREE] = "SetSubtreeControl",
        };
        CgMask builtin = hierarchy_builtin(backend_get_model(m->backend));
        ChangeRequest req = { .kind = kind, .method = methods[kind], .cgroup = cgroup };
        Controller x;
        int r;

        r = request_path_verify(cgroup, error);
        if (r < 0)
                return r;
        if (kind == CHANGE_SUBTREE) {
                r = parse_change(arg, builtin, &req.change, error);
                if (r < 0)
                        return r;
                req.file = "cgroup.subtree_control";
                r = controller_change_to_string(&req.change, &req.value);
        } else {
                r = request_controller_verify(arg, builtin, &x, error);
                if (r < 0)
                        return r;
                if (streq(cgroup, "/"))
                        return sd_bus_error_setf(error, BUS_ERROR_ROOT_CGROUP,
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

void authorization_done(Authorization *a) {
        free(a->deny_message);
        *a = (Authorization) {};
}

int delegation_authorize(const Config *c, uid_t uid, const ChangeRequest *req, Authorization *ret,
                         sd_bus_error *error) {
        const DelegateSpec *d = config_find_delegation(c, req->cgroup);
        bool managed = config_find_cgroup(c, req->cgroup) || (d && streq(d->path, req->cgroup));
        Authorization a = {};
        int r = 0;

        if (!managed && !d)
                return sd_bus_error_setf(error, BUS_ERROR_NOT_MANAGED,
                                         "%s is outside what cgbypassd manages: no [cgroup] section names it and "
                                         "no [delegate] section covers it", req->cgroup);
        if (uid == 0) {
                a.admin = true;
                *ret = a;
                return 0;
        }
        if (d && d->uid == uid && !(req->controllers & ~d->controllers)) {
                a.action = POLKIT_ACTION_MANAGE_DELEGATED;
                a.deny_name = BUS_ERROR_ACCESS_DENIED;
                r = asprintf(&a.deny_message, "polkit does not allow you to switch %s in %s (action %s), "
                             "although %s is delegated to you", req->names, req->cgroup,
                             POLKIT_ACTION_MANAGE_DELEGATED, d->path);
        } else if (d && d->uid == uid) {
                _cleanup_free_ char *have = controller_mask_to_string(d->controllers, " ");
                _cleanup_free_ char *lack = controller_mask_to_string(req->controllers & ~d->controllers, " ");

                a.action = POLKIT_ACTION_MANAGE;
                a.admin = true;
                a.deny_name = BUS_ERROR_CONTROLLER_NOT_DELEGATED;
                r = !have || !lack ? -1 :
                        asprintf(&a.deny_message, "The delegation of %s to you covers %s, not %s; ask an "
                                 "administrator to add it to the [delegate] section", d->path,
                                 isempty(have) ? "no controller" : have, lack);
        } else if (d) {
                a.action = POLKIT_ACTION_MANAGE;
                a.admin = true;
                a.deny_name = BUS_ERROR_NOT_DELEGATED;
                r = asprintf(&a.deny_message, "%s is delegated to uid %u, not to you (uid %u); only its owner "
                             "or an administrator may change it", d->path, (unsigned) d->uid, (unsigned) uid);
        } else {
                a.action = POLKIT_ACTION_MANAGE;
                a.admin = true;
                a.deny_name = BUS_ERROR_NOT_DELEGATED;
                r = asprintf(&a.deny_message, "%s is not delegated to you (uid %u); only an administrator may "
                             "change it (polkit action %s)", req->cgroup, (unsigned) uid, POLKIT_ACTION_MANAGE);
        }
        if (r < 0) {
                a.deny_message = NULL;
                return -ENOMEM;
        }
        *ret = a;
        return 0;
}

/* ---- handing delegated cgroups to their owners ---- */

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

/* ---- sim: cgroups the owners made and removed ---- */

/* @rel beneath @root_fd, never through a symlink or onto another file system */
static int open_beneath(int root_fd, const char *rel, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        long fd;

        for (int i = 0; i < 16; i++) {
                fd = syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
                if (fd >= 0)
                        return (int) fd;
                if (errno != EAGAIN)
                        break;
        }
        return -errno;
}

static char *child_path(const char *parent, const char *name) {
        char *s;

        return cgpath_join(parent, name, &s) < 0 ? NULL : s;
}

/*
 * The directory @name in @dir_fd, cgroup @sub, becomes a cgroup, owned by
 * whoever made the directory. Return: 1 adopted, 0 not (not a directory, not
 * a name cgbypassd manages, refused by the rules, no budget left).
 */
static int adopt_one(Manager *m, int dir_fd, const char *name, const char *sub, size_t *budget) {
        _cleanup_strv_free_ char **files = NULL;
        Reason reason = REASON_NONE;
        struct stat st;
        Cgroup *c;
        int r;

        if (*budget == 0)
                return 0;
        /* only directories become cgroups; a symlink is never followed */
        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                return 0;
        if (cgpath_verify(sub, CGPATH_MANAGED, NULL) < 0) {
                log_debug("Not adopting '%s': not a name cgbypassd manages.", sub);
                return 0;
        }
        r = backend_mkdir(m->backend, sub, &reason);
        if (r < 0) {
                log_debug("Not adopting %s: %s", sub, policy_reason_text(r, reason));
                return 0;
        }
        (*budget)--;
        /* kernfs: the creator owns the new cgroup's directory and files */
        r = hierarchy_lookup(backend_get_model(m->backend), sub, &c);
        if (r >= 0)
                r = cgroup_list_files(backend_get_model(m->backend), c, &files);
        if (r >= 0)
                r = backend_chown(m->backend, sub, st.st_uid, st.st_gid, files);
        if (r < 0)
                log_warning_errno(r, "Failed to give %s to uid %u, ignoring: %m", sub, (unsigned) st.st_uid);
        log_info("Adopted %s, made by uid %u in its delegation.", sub, (unsigned) st.st_uid);
        return 1;
}

static int adopt_below(Manager *m, int root_fd, const char *path, unsigned depth, size_t *budget) {
        _cleanup_close_ int fd = -1;
        DIR *d;
        int n = 0, r;

        if (depth >= MANAGER_PATH_DEPTH_MAX || *budget == 0)
                return 0;
        fd = open_beneath(root_fd, cgpath_relative(path), O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -1;        /* owned by d now */

        for (struct dirent *de; (de = readdir(d));) {
                _cleanup_free_ char *sub = NULL;
                Cgroup *c;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                /* most entries are a cgroup's files: d_type spares a stat(2) of each */
                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                sub = child_path(path, de->d_name);
                if (!sub) {
                        n = -ENOMEM;
                        break;
                }
                if (hierarchy_lookup(backend_get_model(m->backend), sub, &c) < 0) {
                        if (*budget == 0)
                                break;
                        if (adopt_one(m, dirfd(d), de->d_name, sub, budget) == 0)
                                continue;
                        n++;
                }
                r = adopt_below(m, root_fd, sub, depth + 1, budget);
                if (r < 0 && r != -ELOOP && r != -ENOTDIR && r != -EXDEV)
                        log_debug("Cannot look into %s: %s", sub, strerror(-r));
                else if (r > 0)
                        n += r;
        }
        (void) closedir(d);
        return n;
}

/*
 * The cgroups on the way from @from (a known cgroup) down to @to: each
 * directory there becomes a cgroup. Return: the number adopted, -ENOENT
 * when the way ends before @to, or -errno.
 */
static int adopt_path(Manager *m, int root_fd, const char *from, const char *to, size_t *budget) {
        _cleanup_free_ char *path = strdup(to);
        size_t at = strlen(from);
        int n = 0;

        if (!path)
                return -ENOMEM;
        if (streq(from, "/"))
                at = 0;
        while (path[at] == '/') {
                size_t end = at + 1 + strcspn(path + at + 1, "/");
                char saved = path[end];
                Cgroup *c;

                path[end] = '\0';
                if (hierarchy_lookup(backend_get_model(m->backend), path, &c) < 0) {
                        _cleanup_close_ int fd = -1;
                        path[at] = '\0';
                        fd = open_beneath(root_fd, cgpath_relative(path), O_RDONLY | O_DIRECTORY);
                        path[at] = '/';
                        if (fd < 0 || adopt_one(m, fd, path + at + 1, path, budget) == 0)
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
        _cleanup_close_ int fd = open_beneath(root_fd, cgpath_relative(path), O_PATH | O_DIRECTORY);
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
                        log_info("Forgot %s: its owner removed it.", paths[i]);
                        removed++;
                }
        }
        return removed;
}

int delegation_adopt(Manager *m, const char *scope) {
        _cleanup_close_ int root_fd = -1;
        size_t budget = MANAGER_ADOPT_MAX;
        int n = 0, r;

        if (backend_get_type(m->backend) != BACKEND_SIM || m->config->n_delegates == 0)
                return 0;
        root_fd = open(backend_get_root(m->backend), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return -errno;
        for (size_t i = 0; i < m->config->n_delegates; i++) {
                const char *path = m->config->delegates[i].path, *top = path;
                _cleanup_free_ char *known = NULL;

                /* the delegations that lie in @scope whole; of one that holds it, only @scope */
                if (scope && cgroup_path_is_at_or_below(scope, path))
                        top = scope;
                else if (scope && !cgroup_path_is_at_or_below(path, scope))
                        continue;
                if (!cgroup_exists(m, path))
                        continue;
                if (top != path) {
                        /* at @path at the highest, which exists */
                        known = manager_known_ancestor(m, top);
                        if (!known)
                                return -ENOMEM;
                        r = forget_removed(m, root_fd, known, !streq(known, path));
                        if (r < 0)
                                return r;
                        n += r;
                        if (!cgroup_exists(m, known))
                                continue;       /* its owner removed it */
                        r = adopt_path(m, root_fd, known, top, &budget);
                        if (r == -ENOENT)
                                continue;       /* @scope is not there */
                        if (r < 0)
                                return r;
                        n += r;
                } else {
                        r = forget_removed(m, root_fd, path, false);
                        if (r < 0)
                                return r;
                        n += r;
                }
                r = adopt_below(m, root_fd, top, path_depth(top) - path_depth(path), &budget);
                if (r < 0)
                        return r;
                n += r;
        }
        return n;
}
