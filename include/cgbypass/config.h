/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's configuration (shared/design/interfaces.md, "Configuration"):
 * the main file, then the drop-ins conf.d/NAME.conf in lexical order, read with inih into a
 * Config. Every problem found is collected as "FILE:LINE: reason"; a
 * configuration with any problem is rejected as a whole.
 *
 * This module checks each value and the relations between sections (the same
 * cgroup twice, nested delegations). Whether the desired state is reachable
 * under the kernel's rules is the policy module's job; it reports its
 * findings through config_errors_add() at the locations recorded here.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "cgbypass/backend.h"         /* BackendType */
#include "cgbypass/cgpath.h"
#include "cgbypass/controller.h"
#include "cgbypass/macro.h"

#define CONFIG_MAIN_FILE                "/etc/cgbypassd/cgbypassd.conf"
#define CONFIG_CONF_DIR                 "/etc/cgbypassd/conf.d"
#define CONFIG_DEFAULT_CGROUP_ROOT      "/sys/fs/cgroup"
#define CONFIG_DEFAULT_STATE_DIRECTORY  "/var/lib/cgbypassd"
/* the most cgroups cgbypassd takes on in one delegation (its root included), and in all */
#define CONFIG_DEFAULT_MAX_CGROUPS_PER_DELEGATION       4096
#define CONFIG_DEFAULT_MAX_DELEGATED_CGROUPS            32768
#define CONFIG_MAX_CGROUPS_LIMIT                        1000000 /* the largest value either takes */

/* Limits of a path value: the cgroup path rule's (cgpath.h). */
#define CONFIG_PATH_MAX                 CGPATH_MAX
#define CONFIG_NAME_MAX                 CGPATH_NAME_MAX

/*
 * Where a setting came from. @file points into Config.files (it lives as
 * long as the Config). @line is 1-based; 0 means "not from a line": for a
 * command-line override @file names the option ("--backend"), and a setting
 * left at its default has @file NULL and @line 0.
 */
typedef struct ConfigLocation {
        const char *file;
        unsigned line;
} ConfigLocation;

static inline bool config_location_is_set(const ConfigLocation *l) {
        return l->file != NULL;
}

/*
 * A desired change of a controller mask file, one bit per controller named:
 * "+cpu -memory #io" is enable = cpu, disable = memory, bypass = io. The
 * three masks are disjoint. Controllers in none of them are left alone.
 */
typedef struct ControllerChange {
        CgMask enable;
        CgMask disable;
        CgMask bypass;
} ControllerChange;

typedef struct DaemonSettings {
        char *cgroup_root;              /* default CONFIG_DEFAULT_CGROUP_ROOT */
        BackendType backend;            /* default BACKEND_AUTO */
        char *state_directory;          /* default CONFIG_DEFAULT_STATE_DIRECTORY */
        unsigned max_cgroups_per_delegation;    /* default CONFIG_DEFAULT_MAX_CGROUPS_PER_DELEGATION */
        unsigned max_delegated_cgroups;         /* default CONFIG_DEFAULT_MAX_DELEGATED_CGROUPS */

        ConfigLocation cgroup_root_loc;
        ConfigLocation backend_loc;
        ConfigLocation state_directory_loc;
        ConfigLocation max_cgroups_per_delegation_loc;
        ConfigLocation max_delegated_cgroups_loc;
} DaemonSettings;

/* A controller file's value in a [cgroup] section: "memory.max = 4G". */
typedef struct ConfigValue {
        char *file;                     /* an interface file name, checked against cfvalue.h */
        char *value;                    /* as written (after inih's trimming); its syntax checked
                                         * (NULL while loading: a refused value) */
        ConfigLocation loc;
} ConfigValue;

/* One [cgroup] section. A key's location has line 0 when the key is absent. */
typedef struct CgroupSpec {
        char *path;                     /* absolute, normalized; "/" is the root */
        bool create;                    /* default yes; the root: no (and yes is an error) */
        ControllerChange subtree_control;       /* desired cgroup.subtree_control */
        ControllerChange controllers;           /* re-enable (+) / bypass (#) in cgroup.controllers;
                                                 * .disable is always 0 */

        ConfigValue *values;            /* controller files to set, in reading order */
        size_t n_values;

        ConfigLocation section_loc;     /* the [cgroup] line */
        ConfigLocation path_loc;
        ConfigLocation create_loc;
        ConfigLocation subtree_control_loc;
        ConfigLocation controllers_loc;
} CgroupSpec;

/* One [delegate] section. */
typedef struct DelegateSpec {
        char *path;                     /* absolute, normalized, never "/" */
        uid_t uid;
        char *user;                     /* the user's name; NULL for a uid without passwd entry */
        CgMask controllers;             /* what the owner may enable or bypass inside */
        bool create;                    /* default yes */
        bool runtime;                   /* made by AddDelegation, not a [delegate] section */
        bool persistent;                /* runtime: until RemoveDelegation, not until the cgroup goes */

        ConfigLocation section_loc;     /* the [delegate] line */
        ConfigLocation path_loc;
        ConfigLocation user_loc;
        ConfigLocation controllers_loc;
        ConfigLocation create_loc;
} DelegateSpec;

typedef struct Config {
        DaemonSettings daemon;

        CgroupSpec *cgroups;            /* in reading order */
        size_t n_cgroups;
        DelegateSpec *delegates;        /* in reading order */
        size_t n_delegates;

        /* every file (and option) a ConfigLocation names, in reading order */
        char **files;
        size_t n_files;

        struct ConfigIndex *index;      /* private: config_find_*() by hash (config-index.c) */
} Config;

/*
 * The problems found, each one line of text "FILE:LINE: reason" (or
 * "FILE: reason" when the problem is not on a line). Initialize with
 * CONFIG_ERRORS_INIT and release with config_errors_done(); the fields are
 * private.
 */
typedef struct ConfigError {
        char *text;
        size_t rank;                    /* sort key: the file's place in reading order */
        unsigned line;
        size_t seq;
} ConfigError;

typedef struct ConfigErrors {
        ConfigError *items;
        size_t n;
        size_t cap;
        bool oom;
} ConfigErrors;

#define CONFIG_ERRORS_INIT ((ConfigErrors) {})

/**
 * config_errors_done() - free every error and reset @e to empty
 * @e: the list
 */
void config_errors_done(ConfigErrors *e);

/**
 * config_errors_count() - the number of errors collected
 * @e: the list
 *
 * Return: the count.
 */
size_t config_errors_count(const ConfigErrors *e);

/**
 * config_errors_get() - one error's text
 * @e: the list
 * @i: index, below config_errors_count()
 *
 * Return: "FILE:LINE: reason" without a newline, owned by @e; NULL if @i is out of range.
 */
const char *config_errors_get(const ConfigErrors *e, size_t i);

/**
 * config_errors_print() - write every error, one per line
 * @e: the list
 * @f: where to (usually stderr)
 */
void config_errors_print(const ConfigErrors *e, FILE *f);

/**
 * config_errors_add() - record one more problem
 * @e: the list
 * @loc: where it is; NULL or an unset location for a problem with no place
 * @fmt: printf format of the reason (no trailing newline)
 *
 * For modules that check a loaded Config further (the policy module): the
 * error is kept after those config_load() found.
 *
 * Return: 0, or -ENOMEM (then the list also remembers that it lost an error).
 */
int config_errors_add(ConfigErrors *e, const ConfigLocation *loc, const char *fmt, ...)
        _printf_(3, 4);

/**
 * config_new() - a configuration with every default and no sections
 * @ret: the new Config, set only on success
 *
 * Return: 0, or -ENOMEM.
 */
int config_new(Config **ret);

/**
 * config_free() - free a Config and everything it owns
 * @c: the Config, or NULL
 *
 * Return: NULL.
 */
Config *config_free(Config *c);
DEFINE_POINTER_CLEANUP(Config, config_free);

/**
 * config_load() - read and check the whole configuration
 * @main_file: the main file (usually CONFIG_MAIN_FILE), or NULL for none. A main
 *             file that does not exist is not an error: the defaults apply.
 * @conf_dir: the drop-in directory (usually CONFIG_CONF_DIR), or NULL for none.
 *            Its files whose names end in ".conf" and do not start with '.' are
 *            read after the main file in strcmp() order; other names are
 *            ignored. A directory that does not exist holds no drop-ins; any
 *            other failure to list it is an error, and so is a listed file
 *            that cannot be read (a dangling symlink, a directory, EACCES).
 * @ret: the Config, set only on success
 * @errs: receives every problem found, sorted by file (in reading order) and line
 *
 * Nothing stops at the first problem: every file is read to its end and every
 * cross-section check runs, so @errs holds all of them.
 *
 * [daemon] keys may be set in any file; a later file overrides an earlier
 * one, and the Config records where each effective value came from. Each
 * [cgroup] and [delegate] section adds one entry; naming a path twice is an
 * error.
 *
 * Return: 0; -EINVAL when at least one problem was found (then @errs says
 * which and nothing is returned); -ENOMEM.
 */
int config_load(const char *main_file, const char *conf_dir, Config **ret, ConfigErrors *errs);

/**
 * config_override_daemon() - set a [daemon] key from the command line
 * @c: a loaded Config (or one from config_new(), to check option values
 *     even when config_load() failed, so that every problem is reported)
 * @key: "cgroup-root", "backend" or "state-directory"
 * @value: the value, checked as in a file
 * @origin: what to name in errors and in the location, such as "--backend"
 * @errs: receives the problem, as "ORIGIN: reason"
 *
 * Return: 0; -EINVAL for an unknown key or a bad value (recorded in @errs,
 * @c unchanged); -ENOMEM.
 */
int config_override_daemon(Config *c, const char *key, const char *value, const char *origin,
                           ConfigErrors *errs);

/**
 * config_path_verify() - check that a string is an absolute, normalized path
 * @path: the string
 * @reterr_why: on failure, what is wrong, as a static phrase to put after the
 *              quoted path ("contains a '..' component")
 *
 * Normalized means: starts with '/', has no empty ("//"), "." or ".."
 * component and no trailing '/' (except "/" itself), no control character
 * (newline included), at most CONFIG_PATH_MAX bytes and components of at most
 * CONFIG_NAME_MAX bytes. Used for the daemon's directories, and below for cgroup paths.
 *
 * Return: 0, or -EINVAL.
 */
int config_path_verify(const char *path, const char **reterr_why);

/**
 * config_cgroup_path_verify() - config_path_verify() for a cgroup path
 *
 * Also refuses spaces and tabs: the kernel allows them in cgroup names, but
 * the daemon's state files and its answers on the bus separate paths with
 * them, so the configuration and the bus refuse such cgroups alike.
 *
 * Return: 0, or -EINVAL.
 */
int config_cgroup_path_verify(const char *path, const char **reterr_why);

/**
 * config_parse_boolean() - parse a configuration boolean
 * @s: yes/no, true/false, on/off or 1/0, in any case
 * @ret: the value, set only on success
 *
 * Return: 0, or -EINVAL.
 */
int config_parse_boolean(const char *s, bool *ret);

/**
 * config_find_cgroup() - the [cgroup] entry for a path
 * @c: the Config
 * @path: an absolute cgroup path
 *
 * Return: the entry, or NULL if no [cgroup] section names @path.
 */
const CgroupSpec *config_find_cgroup(const Config *c, const char *path);

/**
 * config_find_delegation() - the delegation that covers a cgroup
 * @c: the Config
 * @path: an absolute cgroup path
 *
 * Return: the [delegate] entry whose path is @path or an ancestor of it, or
 * NULL when @path is not in a delegated subtree.
 */
const DelegateSpec *config_find_delegation(const Config *c, const char *path);

/**
 * controller_change_to_string() - format a change as the kernel's files take it
 * @ch: the change
 * @ret: "+cpu -memory #io" in ssid order ("" for no change), set only on success
 *
 * Return: 0, or -ENOMEM.
 */
int controller_change_to_string(const ControllerChange *ch, char **ret);

/* Whether cgroup path @inner lies below @outer (not equal; both absolute and normalized). */
bool config_path_is_below(const char *inner, const char *outer);

/**
 * config_add_runtime_delegation() - a delegation made at run time, as if a [delegate] section
 * @where: the file that records it (its locations are @where:@line)
 *
 * Appended to c->delegates; config_validate() then checks it with the
 * others (nesting, the same path twice, naming both places). Return: 0 or -ENOMEM.
 */
int config_add_runtime_delegation(Config *c, const char *where, unsigned line, const char *path, uid_t uid,
                                  CgMask controllers, bool create, bool persistent);

/* Remove c->delegates[@i] (pointers to later entries move). */
void config_remove_delegation(Config *c, size_t i);

/*
 * The rules between delegations (no path twice, no nesting), each problem
 * at the later place naming the other. Return: 0, -EINVAL (@errs), -ENOMEM.
 */
int config_validate_delegations(const Config *c, ConfigErrors *errs);
