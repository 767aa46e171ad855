/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The settings of controller interface files, as Linux 6.1's write handlers
 * parse them and its show handlers print them back ("4G" reads back as
 * "4294967296", "max" in cpu.max as "max 100000"). Pure: what depends on
 * the machine (which CPUs, block devices or RDMA devices exist) is left to
 * the kernel; everything else is checked here exactly as the kernel does,
 * with the kernel's errno.
 *
 * "Shown" texts are file contents as read(2) returns them, with their
 * trailing newline ("" for an empty file).
 */

#include <stdbool.h>

/* Another file of the same cgroup as it shows now (its default if never written), or NULL. */
typedef const char *(*CfValueLookup)(const char *file, void *userdata);

/**
 * cfvalue_known() - whether cgbypassd knows how FILE takes a value
 * @file: an interface file name ("memory.max")
 *
 * Return: true for the writable controller files listed in cfvalue.c.
 */
bool cfvalue_known(const char *file);

/**
 * cfvalue_default() - what FILE shows in a new cgroup
 *
 * Return: a static text with its newline, or NULL when FILE is not known.
 */
const char *cfvalue_default(const char *file);

/**
 * cfvalue_syntax() - what FILE takes, in words, for messages
 *
 * Return: a static phrase ("'max' or a number of bytes with an optional K,
 * M, G, T, P or E suffix"), or NULL when FILE is not known.
 */
const char *cfvalue_syntax(const char *file);

/**
 * cfvalue_write() - what FILE shows after the write of @value
 * @shown: what it shows before (NULL: its default)
 * @value: the bytes of one write(2), without a newline
 * @lookup: the cgroup's other files (cpu.max.burst is checked against
 *          cpu.max, cpu.weight against cpu.idle); NULL skips those checks
 * @ret_shown: the new contents, malloc'ed, set only on success
 * @reterr_why: on failure, a static phrase saying what the file takes
 *
 * Return: 0; -EINVAL or -ERANGE as the kernel's handler returns them;
 * -ENODEV for a device (io, rdma) the pure model cannot know;
 * -ENOENT when FILE is not known; -ENOMEM.
 */
int cfvalue_write(const char *file, const char *shown, const char *value, CfValueLookup lookup,
                  void *userdata, char **ret_shown, const char **reterr_why);

/**
 * cfvalue_check() - whether the kernel's syntax for FILE takes @value at all
 *
 * Devices are not looked up: "8:0 rbps=1M" passes for io.max.
 * Return: 0, -EINVAL, -ERANGE, -ENOENT (FILE not known), -ENOMEM.
 */
int cfvalue_check(const char *file, const char *value, const char **reterr_why);

/**
 * cfvalue_device() - whether @value names a block device (io.weight, io.max)
 *
 * The kernel opens the device before it reads the rest of the value.
 * Return: 1 (a well-formed MAJ:MIN), 0 (no device), -EINVAL (a malformed
 * one), -ENOENT (FILE not known).
 */
int cfvalue_device(const char *file, const char *value);

/**
 * cfvalue_in_sync() - whether writing @value would leave FILE showing @shown
 * @shown: what the file shows now
 *
 * "4G" is in sync with "4294967296\n", "max" with "max 100000\n" in cpu.max,
 * "default 200" with an io.weight whose first line is "default 200".
 * Return: true when no write is needed; false also when @value cannot be written.
 */
bool cfvalue_in_sync(const char *file, const char *shown, const char *value);

/**
 * cfvalue_undo() - the write that brings back @shown after @value was written
 *
 * Only the part that @value changes: one device's line of io.max, the
 * default of io.weight. Return: 0, -ENOENT (FILE not known), -ENOMEM.
 */
int cfvalue_undo(const char *file, const char *shown, const char *value, char **ret);

/**
 * cfvalue_linked() - the file that shows the same setting another way
 *
 * cpu.weight and cpu.weight.nice are two views of one CPU share.
 * Return: the other file's name, or NULL.
 */
const char *cfvalue_linked(const char *file);

/**
 * cfvalue_linked_shown() - what cfvalue_linked(@file) shows when @file shows @shown
 *
 * Return: 0, -ENOENT (no linked file), -EINVAL (@shown unreadable), -ENOMEM.
 */
int cfvalue_linked_shown(const char *file, const char *shown, char **ret);
