/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's tests: a Manager as cgbypassd starts one, from a configuration file. */
#pragma once

#include <check.h>
#include <systemd/sd-event.h>

#include "manager.h"
#include "watch.h"

/* A sim at @root (state in @state): /srv enables cpu and memory, /srv/alice is @uid's, with cpu */
static inline void test_write_alice_conf(const char *conf, const char *root, const char *state, unsigned uid) {
        FILE *f = fopen(conf, "we");

        ck_assert_ptr_nonnull(f);
        fprintf(f, "[daemon]\nbackend = sim\ncgroup-root = %s\nstate-directory = %s\n\n"
                "[cgroup]\npath = /\nsubtree-control = +cpu +memory\n\n"
                "[cgroup]\npath = /srv\nsubtree-control = +cpu +memory\n\n"
                "[delegate]\npath = /srv/alice\nuser = %u\ncontrollers = cpu\n", root, state, uid);
        ck_assert_int_eq(fclose(f), 0);
}

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

/* inotify watches on @m's delegations, with an event loop for them */
static inline void test_manager_watch(Manager *m) {
        ck_assert_int_ge(sd_event_new(&m->event), 0);
        ck_assert_int_eq(watch_start(m), 0);
}
