/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Client changes: what callers of EnableController, BypassController and
 * SetSubtreeControl asked for, kept as an overlay over the configuration's
 * desired state. Per cgroup and controller, the newest word wins: a client
 * change replaces the configuration's setting of that controller in that
 * file, and is replaced in turn by the next change of it. The merged state
 * is planned and applied like the configuration, and the overlay is saved in
 * the state directory, so a restart keeps it.
 *
 * A configuration reload keeps the client changes it still allows (see
 * client_changes_prune()); a change that the new desired state cannot reach
 * is dropped with a log line.
 */

#include <stdint.h>
#include <sys/types.h>

#include "cgbypass/config.h"
#include "cgbypass/desired.h"
#include "cgbypass/strbuf.h"

#define CLIENT_CHANGES_FILE_NAME "client-changes"

/* Origin.file of desired entries that come from a client change; Origin.line is its index + 1. */
extern const char client_change_origin[];

typedef struct ClientChange {
        char *path;             /* absolute cgroup path, normalized */
        /* cgroup.subtree_control and cgroup.controllers, as in DesiredCgroup */
        CgMask sc_enable, sc_bypass, sc_disable;
        CgMask ctl_enable, ctl_bypass;
        CgMask admin;           /* controllers last set by uid 0 or with org.cgbypass1.manage */
        uid_t owner;            /* the delegation owner who set the others; (uid_t) -1 if none */
} ClientChange;

typedef struct ClientChanges {
        ClientChange *items;
        size_t n;
} ClientChanges;

void client_changes_done(ClientChanges *c);

/* Return: 0 or -ENOMEM (@ret untouched then). */
int client_changes_copy(const ClientChanges *c, ClientChanges *ret);

ClientChange *client_changes_find(const ClientChanges *c, const char *path);

void client_changes_remove(ClientChanges *c, size_t index);

/* The controllers a change names, in either file. */
CgMask client_change_mask(const ClientChange *ch);

/**
 * client_changes_set() - record one change
 * @path: the cgroup
 * @subtree: true: cgroup.subtree_control (@ch enable/bypass/disable);
 *           false: cgroup.controllers (@ch enable/bypass)
 * @admin: made by uid 0 or with org.cgbypass1.manage
 * @owner: otherwise, the delegation owner who made it
 *
 * Return: 0 or -ENOMEM.
 */
int client_changes_set(ClientChanges *c, const char *path, bool subtree, const ControllerChange *ch,
                       bool admin, uid_t owner);

/**
 * client_changes_prune() - drop what a configuration does not allow
 *
 * A change stays when its cgroup is managed (a [cgroup] or [delegate] path)
 * or inside a delegation; controllers set by an owner stay only while that
 * owner's delegation covers the cgroup and includes them. Each drop is logged.
 *
 * Return: the number of cgroups whose changes shrank or went.
 */
size_t client_changes_prune(ClientChanges *c, const Config *config);

/**
 * client_changes_merge() - the desired state: the configuration's with the client changes over it
 * @config: desired_from_config() of the configuration
 * @c: the client changes
 * @h: the current model: changes for cgroups that do not exist in it, and
 *     that the configuration does not create, are left out (@ret_gone lists them); NULL: keep all
 * @below: only cgroups at or below this path are included (NULL: all)
 * @ret: the merged set; its entries point into @config and @c, which must outlive it and not change
 * @ret_gone: optional, indexes into @c of changes for cgroups that are gone (malloc'ed), with @ret_n_gone
 *
 * Return: 0 or -ENOMEM.
 */
int client_changes_merge(const DesiredSet *config, const ClientChanges *c, const Hierarchy *h, const char *below,
                         DesiredSet *ret, size_t **ret_gone, size_t *ret_n_gone);

/* Format a change for messages: "+cpu #io" (subtree_control) or "ctl +cpu" parts. Return: malloc'ed or NULL. */
char *client_change_to_string(const ClientChange *ch);

/**
 * client_changes_save() - write STATE_DIR/client-changes atomically
 *
 * Return: 0 or -errno.
 */
int client_changes_save(const char *dir, const ClientChanges *c);

/**
 * client_changes_load() - read what client_changes_save() wrote
 *
 * Return: 0 (nothing saved yet: empty); -EBADMSG for a malformed file; -errno.
 */
int client_changes_load(const char *dir, ClientChanges *ret);

/* Whether @path is @top or below it (absolute cgroup paths). */
bool cgroup_path_is_at_or_below(const char *path, const char *top);

/* The configuration's entries sorted by path, so that a subtree's are found without a walk of all. */
typedef struct DesiredIndex {
        const DesiredCgroup *key;       /* the set it was made for: items and n */
        size_t n;
        size_t *order;
} DesiredIndex;

void desired_index_done(DesiredIndex *idx);

/*
 * client_changes_merge() of @below's subtree, in time that grows with the
 * subtree and the client changes, not with the whole configuration: @idx is
 * (re)made when @config is another set than the last time.
 */
int client_changes_merge_below(const DesiredSet *config, DesiredIndex *idx, const ClientChanges *c,
                               const Hierarchy *h, const char *below, DesiredSet *ret, size_t **ret_gone,
                               size_t *ret_n_gone);

/* One change as a line of the file, without the newline: "change PATH sc=... ctl=... admin=... owner=...". */
void client_change_format(StrBuf *b, const ClientChange *x);

/* client_changes_save() with the journal's sequence number of the last record it includes (0: none). */
int client_changes_save_seq(const char *dir, const ClientChanges *c, uint64_t seq);

/* client_changes_load(), and the sequence number the file was saved with (0: none). */
int client_changes_load_seq(const char *dir, ClientChanges *ret, uint64_t *ret_seq);

/*
 * One line as client_change_format() wrote it, over @c: it replaces what @c
 * said of that cgroup (a change that names no controller removes it).
 * @line is cut up. Return: 0, -EBADMSG, -ENOMEM.
 */
int client_changes_parse_record(char *line, ClientChanges *c);
