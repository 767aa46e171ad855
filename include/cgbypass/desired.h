/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The desired state as a set of DesiredCgroup, built from the configuration,
 * and saved as the applied state in the state directory.
 */

#include "cgbypass/config.h"
#include "cgbypass/policy.h"
#include "cgbypass/strbuf.h"

typedef struct DesiredSet {
        DesiredCgroup *items;
        size_t n;
        char **strings;         /* what the items point to, owned here */
        size_t n_strings;
        DesiredValue *values;   /* what the items' values point into, owned here */
} DesiredSet;

void desired_set_done(DesiredSet *s);

/**
 * desired_from_config() - what a configuration asks for
 *
 * [cgroup] sections as they are; each [delegate] root is a managed cgroup too
 * (made when create = yes), merged with its [cgroup] section if it has one.
 * Origins point into @c, which must outlive the set. Return: 0 or -ENOMEM.
 */
int desired_from_config(const Config *c, DesiredSet *ret);

/* The file the applied state lives in, below the state directory. */
#define STATE_FILE_NAME "applied-state"

/**
 * state_file_save() - record the applied desired state, atomically
 * @dir: the state directory (created, mode 0755, if missing)
 *
 * Temporary file, fsync, rename, fsync of the directory. Return: 0 or -errno.
 */
int state_file_save(const char *dir, const DesiredSet *s);

/**
 * state_file_load() - read what state_file_save() wrote
 *
 * Return: 0; -ENOENT when there is none; -EBADMSG for a malformed file;
 * -errno for I/O.
 */
int state_file_load(const char *dir, DesiredSet *ret);

/* " KEY=+cpu,#io,-memory": the state files' way of writing a cgroup's wishes */
void desired_tokens_append(StrBuf *b, const char *key, CgMask plus, CgMask hash, CgMask minus);

/**
 * desired_tokens_parse() - read what desired_tokens_append() wrote (after "KEY=")
 * @allow_minus: whether '-' tokens are allowed (not for cgroup.controllers)
 *
 * Masks are ORed into. Return: 0, -EBADMSG (bad token, a controller twice), -ENOMEM.
 */
int desired_tokens_parse(const char *value, bool allow_minus, CgMask *plus, CgMask *hash, CgMask *minus);
