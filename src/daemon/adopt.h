/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "manager.h"

/**
 * adopt_in_delegations() - sim: make the directories owners created in their
 *                          delegations cgroups, as mkdir(2) in cgroupfs would,
 *                          and forget the cgroups whose directories they
 *                          removed (rmdir(2))
 *
 * The new cgroup's directory and files belong to the directory's owner, as
 * kernfs gives them to the creator. Symlinks and other non-directories are
 * never followed or adopted; at most MANAGER_ADOPT_MAX per call. Other
 * backends learn this from the kernel in backend_refresh(); a sim's model
 * is its kernel, and without this its refresh would undo the owners' work.
 *
 * @scope: only the delegations that hold this cgroup or lie below it
 *         (what a request on it may depend on); NULL: all
 *
 * Return: the number of cgroups adopted or forgotten, or -errno.
 */
int adopt_in_delegations(Manager *m, const char *scope);

/**
 * adopt_refusal() - whether a limit kept the directory of @path from being
 *                   taken on (sim; delegation-limits.h)
 * @ret_why: which limit, as a sentence, when so
 *
 * native, emulated: whether @path lies in a delegation over its limit,
 * known to the model or not (its requests are refused).
 *
 * Return: 0 no (a cgroup the model knows, no such directory); -EDQUOT with
 * *@ret_why set; -ENOMEM.
 */
int adopt_refusal(Manager *m, const char *path, char **ret_why);

/**
 * adopt_event() - native, emulated: the directory @path in a delegation was
 *                 made (@created) or removed behind the daemon
 * @adopted, @forgotten: the cgroups taken on and dropped, added to
 *
 * The model takes on that cgroup with what is already below it
 * (backend_adopt_cgroup()), or drops it (backend_forget_cgroup()); nothing
 * else is read. CgroupChanged goes out for each. Beyond a limit the
 * delegation is marked over it (delegation-limits.h); an rmdir counts the
 * directories of the over-limit delegations again and takes them on whole
 * when they fit.
 *
 * Return: the number of cgroups changed; -ESTALE when the model cannot
 * follow by itself (the caller reads the hierarchy again); -EOPNOTSUPP on
 * sim; -errno.
 */
int adopt_event(Manager *m, const char *path, bool created, size_t *adopted, size_t *forgotten);
