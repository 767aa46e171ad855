/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Owners' mkdir(2) and rmdir(2) in their delegations, seen when they
 * happen: an inotify watch (IN_CREATE, IN_DELETE of directories) on every
 * delegation root and every cgroup below one, on every backend (a cgroup2
 * directory reports both through the VFS like any other). An event starts
 * a short timer that gathers a burst into one refresh of the delegations
 * it touched, which sends CgroupChanged; the watches then follow the model.
 */

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "cgbypass/config.h"

/* inotify watches: one per cgroup taken on in delegations (max-delegated-cgroups), at most this many */
#define WATCH_MAX               CONFIG_MAX_CGROUPS_LIMIT
#define WATCH_COALESCE_USEC     (10 * 1000ULL)  /* a burst of mkdirs in this time is one refresh */

typedef struct Manager Manager;

typedef struct WatchEntry {
        int wd;
        char *path;                     /* the cgroup, absolute */
} WatchEntry;

typedef struct Watches {
        int fd;                         /* inotify; -1 without a service */
        sd_event_source *io, *timer, *post;
        WatchEntry *v;
        size_t n, cap;
        char *scope;                    /* what the pending refresh covers: one delegation or NULL */
        bool pending, all;              /* a refresh is due; of every delegation */
        bool dirty;                     /* the model or the delegations changed: sync the watches */
        bool full_warned;
        bool incomplete;                /* a delegated cgroup is not watched (WATCH_MAX, no inotify watch left) */
} Watches;

/* Start watching (the service's event loop). Return: 0 or -errno. */
int watch_start(Manager *m);
void watches_done(Watches *w);

/* The cgroups or the delegations changed: re-sync the watches when the loop is idle again. */
void watch_mark_dirty(Manager *m);

/* Add and drop watches so that they are the delegations' cgroups in the model. Return: watches added. */
int watch_sync(Manager *m);

/**
 * watch_catch_up() - what the watches saw, in the model now
 *
 * Reads the pending events and runs the refresh they ask for at once,
 * instead of at the end of the burst. Return: 1 the model knows every mkdir
 * and rmdir in the delegations; 0 it may not (no watches, a delegated
 * cgroup without a watch, a refresh still due): refresh to be sure.
 */
int watch_catch_up(Manager *m);
