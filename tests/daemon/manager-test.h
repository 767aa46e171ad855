/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's tests: a Manager as cgbypassd starts one, from a configuration file. */
#pragma once

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <systemd/sd-event.h>

#include "manager.h"
#include "watch.h"

/* @conf loaded (drop-ins from @conf_dir), the backend open, the policy applied */
static inline Manager *test_manager_start(const char *conf, const char *conf_dir) {
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        ManagerOptions o = { .config_file = conf, .config_dir = conf_dir };
        Manager *m = NULL;

        ck_assert_int_eq(manager_new(&o, &m), 0);
        ck_assert_int_eq(manager_load_config(m, &errs), 0);
        ck_assert_int_eq(manager_open_backend(m), 0);
        ck_assert_int_eq(manager_apply(m, &errs, NULL, NULL), 0);
        config_errors_done(&errs);
        return m;
}

/*
 * In @dir: a sim at DIR/root (state in DIR/state, no drop-ins) where /srv enables cpu and memory and
 * /srv/alice is @uid's, with cpu; started as test_manager_start() does.
 */
static inline Manager *test_manager_start_alice(const char *dir, unsigned uid) {
        char conf[PATH_MAX], none[PATH_MAX], root[PATH_MAX], state[PATH_MAX];
        FILE *f;

        ck_assert_int_lt(snprintf(conf, sizeof(conf), "%s/cgbypassd.conf", dir), (int) sizeof(conf));
        ck_assert_int_lt(snprintf(none, sizeof(none), "%s/none", dir), (int) sizeof(none));
        ck_assert_int_lt(snprintf(root, sizeof(root), "%s/root", dir), (int) sizeof(root));
        ck_assert_int_lt(snprintf(state, sizeof(state), "%s/state", dir), (int) sizeof(state));
        ck_assert_int_eq(mkdir(none, 0755), 0);
        f = fopen(conf, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "[daemon]\nbackend = sim\ncgroup-root = %s\nstate-directory = %s\n\n"
                "[cgroup]\npath = /\nsubtree-control = +cpu +memory\n\n"
                "[cgroup]\npath = /srv\nsubtree-control = +cpu +memory\n\n"
                "[delegate]\npath = /srv/alice\nuser = %u\ncontrollers = cpu\n", root, state, uid);
        ck_assert_int_eq(fclose(f), 0);
        return test_manager_start(conf, none);
}

/* inotify watches on @m's delegations, with an event loop for them */
static inline void test_manager_watch(Manager *m) {
        ck_assert_int_ge(sd_event_new(&m->event), 0);
        ck_assert_int_eq(watch_start(m), 0);
}
