/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by config.c (reading) and config-validate.c (values, cross-section checks). */

#include <stdarg.h>

#include "cgbypass/config.h"

/* Quoted values in messages are cut to this many bytes (command-line values can be long). */
#define CONFIG_QUOTE_MAX 100

/**
 * config_error() - record a problem at a location of @c
 * @c: the Config being read; @loc->file must point into @c->files (it ranks the error)
 * @errs: the list
 * @loc: where
 * @fmt: the reason
 *
 * Return: -EINVAL (a problem was recorded), or -ENOMEM.
 */
int config_error(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                 const char *fmt, ...) _printf_(4, 5);

/**
 * config_quote() - a user string made safe for a message
 * @s: the string
 *
 * Control characters (below 0x20, and 0x7f) become \n, \t, \r or \xNN, so
 * that one error stays one line; a string longer than CONFIG_QUOTE_MAX bytes
 * is cut and ends in "...".
 *
 * Return: a malloc'ed string, or NULL on OOM.
 */
char *config_quote(const char *s);

/* config_errors_sort_from() - sort the errors from index @from on by (rank, line, seq). */
void config_errors_sort_from(ConfigErrors *errs, size_t from);

/*
 * Value parsers. Each records its problems (one per bad token) at @loc,
 * naming @key, and stores the result only when there was none.
 * Return: 0, -EINVAL (problems recorded), -ENOMEM.
 */
/* @cgroup: a cgroup path (config_cgroup_path_verify()), else a directory of the daemon's */
int config_parse_path(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                      const char *key, const char *value, bool cgroup, char **ret);
int config_parse_backend(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                         const char *key, const char *value, BackendType *ret);
int config_parse_bool(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                      const char *key, const char *value, bool *ret);
/* "+cpu -memory #io"; @allow_disable false for cgroup.controllers ('-' is an error) */
int config_parse_change(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                        const char *key, const char *value, bool allow_disable,
                        ControllerChange *ret);
/* "cpu io" or "cpu,io": names without prefixes */
int config_parse_controller_list(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                                 const char *key, const char *value, CgMask *ret);
/* a user name that must exist, or a numeric uid */
int config_parse_user(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                      const char *key, const char *value, uid_t *ret_uid, char **ret_name);

/*
 * A [cgroup] key that names an interface file: "memory.max". Records the
 * problem when it is not a controller's writable file or the kernel's syntax
 * for it refuses @value; else appends it to @cg.
 */
int config_parse_value(const Config *c, ConfigErrors *errs, const ConfigLocation *loc,
                       const char *file, const char *value, CgroupSpec *cg);

/* config-values.c: values below a delegation root, two views of one setting */
int config_validate_values(const Config *c, ConfigErrors *errs);

/**
 * config_validate() - the checks that need whole sections or the whole Config
 * @c: the Config after every file was read
 * @errs: the list
 *
 * The root's create, the same path in two sections, nested delegations.
 * Fills in the defaults that depend on other keys (create).
 *
 * Return: 0, -EINVAL (problems recorded), -ENOMEM.
 */
int config_validate(Config *c, ConfigErrors *errs);

/*
 * config-index.c: config_find_cgroup() and config_find_delegation() by hash.
 * config_index_update() (re)builds what no longer matches the arrays; on OOM
 * the lookups search linearly. config_index_free() is config_free()'s.
 */
typedef struct ConfigIndex ConfigIndex;
void config_index_update(Config *c);
void config_index_free(Config *c);
