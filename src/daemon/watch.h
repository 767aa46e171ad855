/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Owners' mkdir(2) and rmdir(2) in their delegations, seen when they
 * happen: an inotify watch (IN_CREATE, IN_DELETE of directories) on every
 * delegation root and every cgroup below one, on every backend (a cgroup2
 * directory reports both through the VFS like any other). An event starts
 * a short timer that gathers a burst; then native and emulated take on or
 * drop each cgroup named (adopt_event(): that cgroup is read, nothing else),
 * a sim looks at the delegations the burst touched; either sends
 * CgroupChanged for what changed, and the watches follow the model.
 */

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "cgbypass/config.h"

/* inotify watches: one per cgroup taken on in delegations (max-delegated-cgroups), at most this many */
#define WATCH_MAX               CONFIG_MAX_CGROUPS_LIMIT
#define WATCH_COALESCE_USEC     (10 * 1000ULL)  /* a burst of mkdirs in this time is one refresh */
#define WATCH_ACCURACY_USEC     (1000ULL)       /* ... give or take this (sd-event's default slack is 250 ms) */

typedef struct Manager Manager;

typedef struct WatchEntry {
        int wd;
        char *path;                     /* the cgroup, absolute */
        bool above;                     /* the parent of delegation roots: only their own mkdir and rmdir count */
} WatchEntry;

/* An owner's mkdir (@created) or rmdir, for native and emulated, which learn it one cgroup at a time. */
typedef struct WatchEvent {
        char *path;
        bool created;
} WatchEvent;

#define WATCH_EVENTS_MAX        16384   /* events in one burst; beyond: a refresh of every delegation */

typedef struct Watches {
        int fd;                         /* inotify; -1 without a service */
        sd_event_source *io, *timer, *sync;
        WatchEntry *v;
        size_t n, cap;
        char *scope;                    /* what the pending refresh covers: one delegation or NULL */
        bool pending, all;              /* a refresh is due; of every delegation */
        bool dirty;                     /* the model or the delegations changed: sync the watches */
        bool full_warned;
        bool incomplete;                /* a delegated cgroup is not watched (WATCH_MAX, no inotify watch left) */
        WatchEvent *events;             /* native, emulated: the burst's mkdirs and rmdirs, in order */
        size_t n_events, cap_events;
} Watches;

/* Start watching (the service's event loop). Return: 0 or -errno. */
int watch_start(Manager *m);
void watches_done(Watches *w);

/* The cgroups or the delegations changed: re-sync the watches when the loop is idle again. */
void watch_mark_dirty(Manager *m);

/*
 * Watch the delegated cgroup @path that the model just took on (nothing for
 * others); on native and emulated, its children made before the watch are
 * queued as events. Return: 1 added, 0 not, -errno.
 */
int watch_add(Manager *m, const char *path);

/* Add and drop watches so that they are the delegations' cgroups in the model. Return: watches added. */
int watch_sync(Manager *m);

/*
 * Read the pending events now, as the loop would (a burst's refresh stays on
 * its timer). A sim's writes raise events of files in watched directories:
 * read where they were made, they cost no loop iteration of their own.
 */
void watch_drain(Manager *m);

/**
 * watch_catch_up() - what the watches saw, in the model now
 *
 * Reads the pending events and runs the refresh they ask for at once,
 * instead of at the end of the burst. Return: 1 the model knows every mkdir
 * and rmdir in the delegations; 0 it may not (no watches, a delegated
 * cgroup without a watch, a refresh still due): refresh to be sure.
 */
int watch_catch_up(Manager *m);
