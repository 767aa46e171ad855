/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owners' mkdir and rmdir in their delegations, seen through inotify. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/log.h"
#include "adopt.h"
#include "decision-log.h"
#include "cgroupfs.h"
#include "manager.h"
#include "watch.h"

/*
 * IN_ONLYDIR: a delegation's directory is vetted before it is watched, but
 * not atomically with the watch. IN_MOVED_*: a cgroup2 directory cannot be
 * renamed across parents, within one it can (cgroup_rename()).
 */
#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR | IN_EXCL_UNLINK)

static WatchEntry *find_wd(Watches *w, int wd) {
        for (size_t i = 0; i < w->n; i++)
                if (w->v[i].wd == wd)
                        return &w->v[i];
        return NULL;
}

/* w->v is sorted by path: watch_sync() asks for every delegated cgroup after each change */
static size_t path_index(const Watches *w, const char *path, bool *ret_found) {
        size_t lo = 0, hi = w->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int cmp = strcmp(w->v[mid].path, path);

                if (cmp == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (cmp < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_found = false;
        return lo;
}

static void drop_entry(Watches *w, WatchEntry *e, bool rm) {
        if (rm)
                (void) inotify_rm_watch(w->fd, e->wd);
        free(e->path);
        memmove(e, e + 1, (size_t) (w->v + w->n - (e + 1)) * sizeof(WatchEntry));
        w->n--;
}

/* The delegation that holds @path (its root, in m->config), or NULL. */
static const char *delegation_of(const Manager *m, const char *path) {
        for (size_t i = 0; i < m->config->n_delegates; i++)
                if (cgroup_path_is_at_or_below(path, m->config->delegates[i].path))
                        return m->config->delegates[i].path;
        return NULL;
}

/*
 * Whether @path is the parent of a delegation root: cgroup2 sends no
 * IN_IGNORED when a watched directory goes (kernfs keeps the inode), so a
 * root's rmdir is seen only from its parent.
 */
static bool above_delegation(const Manager *m, const char *path) {
        for (size_t i = 0; i < m->config->n_delegates; i++) {
                _cleanup_free_ char *parent = NULL;

                if (cgpath_parent(m->config->delegates[i].path, &parent) >= 0 && streq(parent, path))
                        return true;
        }
        return false;
}

/* The delegation root @name in @parent, or NULL. */
static const char *delegation_root_named(const Manager *m, const char *parent, const char *name) {
        _cleanup_free_ char *path = NULL;

        if (cgpath_join(parent, name, &path) < 0)
                return NULL;
        for (size_t i = 0; i < m->config->n_delegates; i++)
                if (streq(m->config->delegates[i].path, path))
                        return m->config->delegates[i].path;
        return NULL;
}

static int add_one_as(Manager *m, Watches *w, int root_fd, const char *path, bool above);

static int add_one(Manager *m, Watches *w, int root_fd, const char *path) {
        return add_one_as(m, w, root_fd, path, false);
}

static int add_one_as(Manager *m, Watches *w, int root_fd, const char *path, bool above) {
        size_t at;
        bool found;
        char *copy;
        int wd;

        at = path_index(w, path, &found);
        if (found)
                return 0;
        if (w->n >= WATCH_MAX) {
                if (!w->full_warned)
                        log_warning("Watching %zu cgroups in delegations already; the others' new children are "
                                    "seen at the next call that concerns them.", w->n);
                w->full_warned = true;
                w->incomplete = true;
                return 0;
        }
        if (w->n == w->cap) {
                size_t cap = w->cap ? w->cap * 2 : 16;
                WatchEntry *v = reallocarray(w->v, cap, sizeof(WatchEntry));
                if (!v)
                        return -ENOMEM;
                w->v = v;
                w->cap = cap;
        }
        wd = cgfs_add_watch(w->fd, root_fd, streq(path, "/") ? "." : path + 1, WATCH_MASK);
        if (wd < 0) {
                /* gone already, or no more watches for root (fs.inotify.max_user_watches) */
                log_debug("Cannot watch %s: %s", path, strerror(-wd));
                w->incomplete = true;
                return 0;
        }
        /* inotify gives one wd per inode: a second path to it replaces nothing */
        if (find_wd(w, wd))
                return 0;
        copy = strdup(path);
        if (!copy) {
                (void) inotify_rm_watch(w->fd, wd);
                return -ENOMEM;
        }
        memmove(&w->v[at + 1], &w->v[at], (w->n - at) * sizeof(WatchEntry));
        w->v[at] = (WatchEntry) { .wd = wd, .path = copy, .above = above };
        w->n++;
        return 1;
}

static void schedule(Manager *m, const char *delegation);
static bool queue_event(Manager *m, const char *parent, const char *name, bool created);

/* native, emulated: what was made in @path before its watch sent no event: queued as if it had */
static void queue_unwatched_children(Manager *m, int root_fd, const char *path) {
        _cleanup_close_ int fd = -1;
        DIR *d;
        int r;

        r = cgfs_open_dir(root_fd, cgpath_relative(path), O_RDONLY, &fd);
        if (r < 0 || !(d = fdopendir(fd)))
                return;
        fd = -1;
        for (struct dirent *de; (de = readdir(d));) {
                _cleanup_free_ char *sub = NULL;

                if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (cgpath_join(path, de->d_name, &sub) < 0 || manager_has_cgroup(m, sub))
                        continue;
                if (!queue_event(m, path, de->d_name, true))
                        schedule(m, NULL);
                schedule(m, delegation_of(m, path));
        }
        (void) closedir(d);
}

int watch_add(Manager *m, const char *path) {
        Watches *w = &m->watches;
        int root_fd = backend_get_root_fd(m->backend), r;

        if (w->fd < 0 || !manager_has_cgroup(m, path) || !delegation_of(m, path))
                return 0;
        if (root_fd < 0) {
                w->incomplete = true;
                return root_fd;
        }
        r = add_one(m, w, root_fd, path);
        if (r > 0 && backend_get_type(m->backend) != BACKEND_SIM)
                queue_unwatched_children(m, root_fd, path);
        return r;
}

int watch_sync(Manager *m) {
        Watches *w = &m->watches;
        const Hierarchy *h = backend_get_model(m->backend);
        int root_fd = backend_get_root_fd(m->backend), added = 0, r;

        w->dirty = false;
        if (w->fd < 0)
                return 0;
        w->incomplete = false;  /* until a cgroup of a delegation cannot be watched */
        /* watches of cgroups that are gone, or no longer delegated */
        for (size_t i = w->n; i-- > 0;)
                if (!manager_has_cgroup(m, w->v[i].path) ||
                    !(w->v[i].above ? above_delegation(m, w->v[i].path) : !!delegation_of(m, w->v[i].path)))
                        drop_entry(w, &w->v[i], true);
        if (m->config->n_delegates == 0)
                return 0;
        if (root_fd < 0) {
                w->incomplete = true;
                return log_warning_errno(root_fd, "Failed to open '%s' to watch the delegations: %m",
                                         backend_get_root(m->backend));
        }
        for (size_t i = 0; i < m->config->n_delegates; i++) {
                _cleanup_free_ char *parent = NULL;
                Cgroup *top;

                if (hierarchy_lookup(h, m->config->delegates[i].path, &top) < 0)
                        continue;
                /* native, emulated: the root's own rmdir (see above_delegation()) */
                if (backend_get_type(m->backend) != BACKEND_SIM &&
                    cgpath_parent(m->config->delegates[i].path, &parent) >= 0 &&
                    add_one_as(m, w, root_fd, parent, true) < 0)
                        return log_oom();
                for (Cgroup *c = top; c; c = cgroup_next_descendant_pre(c, top)) {
                        _cleanup_free_ char *path = NULL;

                        r = cgroup_path(c, &path);
                        if (r >= 0)
                                r = add_one(m, w, root_fd, path);
                        if (r < 0)
                                return log_oom();
                        /*
                         * what was made there before the watch (at start-up, in a cgroup just
                         * adopted, in a new delegation) sent no event: look there once
                         */
                        if (r > 0 && w->timer) {
                                if (backend_get_type(m->backend) == BACKEND_SIM)
                                        schedule(m, m->config->delegates[i].path);
                                else
                                        queue_unwatched_children(m, root_fd, path);
                        }
                        added += r;
                }
        }
        return added;
}

static void events_clear(Watches *w) {
        for (size_t i = 0; i < w->n_events; i++)
                free(w->events[i].path);
        w->n_events = 0;
}

/* native, emulated: learn one cgroup at a time. Return: false, the events could not be kept (refresh). */
static bool queue_event(Manager *m, const char *parent, const char *name, bool created) {
        Watches *w = &m->watches;
        char *path;

        if (backend_get_type(m->backend) == BACKEND_SIM)
                return true;
        if (w->all || w->n_events >= WATCH_EVENTS_MAX)
                return false;
        if (w->n_events == w->cap_events) {
                size_t cap = w->cap_events ? w->cap_events * 2 : 16;
                WatchEvent *v = reallocarray(w->events, cap, sizeof(WatchEvent));
                if (!v)
                        return false;
                w->events = v;
                w->cap_events = cap;
        }
        if (name ? cgpath_join(parent, name, &path) < 0 : !(path = strdup(parent)))
                return false;
        w->events[w->n_events++] = (WatchEvent) { .path = path, .created = created };
        return true;
}

/* native, emulated: each event of the burst, in order. Return: false, the model could not follow (refresh). */
static bool learn_events(Manager *m) {
        Watches *w = &m->watches;
        size_t adopted = 0, forgotten = 0;
        bool ok = true;

        /* what adopt_event() queues meanwhile (children made before a new watch) is taken in this round too */
        size_t i = 0;
        while (i < w->n_events) {
                _cleanup_free_ char *path = TAKE_PTR(w->events[i].path);
                bool created = w->events[i].created;

                i++;
                if (adopt_event(m, path, created, &adopted, &forgotten) < 0) {
                        ok = false;
                        break;
                }
        }
        for (; i < w->n_events; i++)
                free(w->events[i].path);
        w->n_events = 0;
        /* one line for a burst, be it 1 cgroup or 300 (each is a debug line) */
        if (adopted + forgotten > 0)
                decision_log_adopted(adopted, forgotten, NULL);
        return ok;
}

/* The refresh, after a burst of events. */
static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Watches *w = &m->watches;

        if (!w->pending)
                return 0;       /* watch_catch_up() ran it */
        _cleanup_free_ char *scope = TAKE_PTR(w->scope);
        bool all = w->all;

        w->pending = w->all = false;
        if (backend_get_type(m->backend) != BACKEND_SIM && !all) {
                if (learn_events(m))
                        return 0;       /* watch_add() followed each cgroup taken on */
                free(scope);            /* the model is in doubt: all of it again */
                scope = NULL;
        }
        events_clear(w);
        (void) manager_refresh(m, all ? NULL : scope);
        (void) watch_sync(m);   /* where it adds watches, it asks for one more look */
        return 0;
}

static void schedule(Manager *m, const char *delegation) {
        Watches *w = &m->watches;

        if (!delegation || (w->pending && !w->all && !streq_ptr(w->scope, delegation))) {
                w->all = true;
                free(w->scope);
                w->scope = NULL;
        } else if (!w->pending && !w->all) {
                free(w->scope);
                w->scope = strdup(delegation);
                if (!w->scope)
                        w->all = true;
        }
        if (w->pending)
                return;         /* the timer of the burst's first event runs it */
        w->pending = true;
        if (sd_event_source_set_time_relative(w->timer, WATCH_COALESCE_USEC) < 0 ||
            sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT) < 0) {
                log_warning("Failed to arm the refresh timer; refreshing now.");
                (void) on_timer(w->timer, 0, m);
        }
}

#define EVENTS_BUF 4096

/* One read(2) of events. Return: >0 the bytes of events read, 0 none pending, -errno. */
static int read_events(Manager *m) {
        Watches *w = &m->watches;
        /* aligned as struct inotify_event, as inotify(7) shows */
        char buf[EVENTS_BUF] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t len;

        len = read(w->fd, buf, sizeof(buf));
        if (len < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        for (char *p = buf; p < buf + len;) {
                const struct inotify_event *e = (const struct inotify_event *) p;
                WatchEntry *we;

                p += sizeof(struct inotify_event) + e->len;
                if (e->mask & IN_Q_OVERFLOW) {
                        log_debug("inotify queue overflow: looking at every delegation.");
                        schedule(m, NULL);
                        continue;
                }
                we = find_wd(w, e->wd);
                if (!we)
                        continue;
                if (e->mask & IN_IGNORED) {
                        /*
                         * the directory went (rmdir): the kernel dropped the watch. On a sim a
                         * delegation root's parent is not watched: this is the only word of its
                         * rmdir (cgroup2 may send none: native and emulated watch the parent).
                         */
                        if (!we->above && delegation_of(m, we->path)) {
                                if (!queue_event(m, we->path, NULL, false))
                                        schedule(m, NULL);
                                schedule(m, delegation_of(m, we->path));
                        }
                        drop_entry(w, we, false);
                        continue;
                }
                /* a cgroup's files come and go with controllers: only directories are cgroups */
                if (!(e->mask & IN_ISDIR) || e->len == 0)
                        continue;
                const char *delegation = we->above ? delegation_root_named(m, we->path, e->name) :
                                                     delegation_of(m, we->path);
                /* a sibling of the delegation roots, or a watch of a delegation that ended (watch_sync() drops it) */
                if (!delegation)
                        continue;
                bool created = e->mask & (IN_CREATE | IN_MOVED_TO);
                log_debug("inotify: %s %s/%s", created ? "mkdir" : "rmdir", streq(we->path, "/") ? "" : we->path,
                          e->name);
                if (!queue_event(m, we->path, e->name, created))
                        schedule(m, NULL);
                schedule(m, delegation);
        }
        return (int) len;
}

/*
 * read_events() until none are pending: a read that left room for the
 * largest event emptied the queue, so the read that would say EAGAIN is
 * spared. Return: 0 or -errno.
 */
static int read_all_events(Manager *m) {
        int r;

        do
                r = read_events(m);
        while (r > EVENTS_BUF - (int) (sizeof(struct inotify_event) + NAME_MAX + 1));
        return r < 0 ? r : 0;
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        int r = read_events(userdata);
        return r < 0 ? log_warning_errno(r, "Failed to read inotify events: %m") : 0;
}

void watch_drain(Manager *m) {
        int r;

        if (m->watches.fd < 0)
                return;
        r = read_all_events(m);
        if (r < 0)
                log_warning_errno(r, "Failed to read inotify events: %m");
}

int watch_catch_up(Manager *m) {
        Watches *w = &m->watches;
        int r;

        if (w->fd < 0)
                return 0;
        if (w->dirty)
                (void) watch_sync(m);
        /* the events of an owner's mkdir are queued before mkdir(2) returns, so before its next call */
        for (unsigned round = 0; round < 4; round++) {
                r = read_all_events(m);
                if (r < 0 || !w->pending)
                        break;
                (void) on_timer(w->timer, 0, m);
        }
        return r >= 0 && !w->pending && !w->incomplete;
}

static int on_dirty(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        if (m->watches.dirty)
                (void) watch_sync(m);
        return 0;
}

/* once per loop iteration at most, and none when nothing changed (a post source costs one after every other) */
void watch_mark_dirty(Manager *m) {
        m->watches.dirty = true;
        if (m->watches.sync && sd_event_source_set_enabled(m->watches.sync, SD_EVENT_ONESHOT) < 0)
                (void) watch_sync(m);
}

int watch_start(Manager *m) {
        Watches *w = &m->watches;
        int r;

        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0)
                return -errno;
        r = sd_event_add_io(m->event, &w->io, w->fd, EPOLLIN, on_inotify, m);
        if (r >= 0)
                /* accuracy 0 would be sd-event's default, 250 ms: the signal's latency */
                r = sd_event_add_time_relative(m->event, &w->timer, CLOCK_MONOTONIC, WATCH_COALESCE_USEC,
                                               WATCH_ACCURACY_USEC, on_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(w->timer, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_defer(m->event, &w->sync, on_dirty, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(w->sync, SD_EVENT_OFF);
        if (r < 0)
                return r;
        r = watch_sync(m);
        return r < 0 ? r : 0;
}

void watches_done(Watches *w) {
        w->io = sd_event_source_disable_unref(w->io);
        w->timer = sd_event_source_disable_unref(w->timer);
        w->sync = sd_event_source_disable_unref(w->sync);
        for (size_t i = 0; i < w->n; i++)
                free(w->v[i].path);
        events_clear(w);
        free(w->events);
        free(w->v);
        free(w->scope);
        if (w->fd >= 0)
                (void) close(w->fd);
        *w = (Watches) { .fd = -1 };
}
