/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What cgbypass-oci-hook needs of the OCI runtime specification: the state
 * a runtime writes to a hook's standard input (runtime.md, "State") and the
 * bundle's config.json (config.md, config-linux.md). Only these fields are
 * read; anything else in either document is ignored, as the spec asks.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define OCI_STATE_MAX      (1024 * 1024)        /* a state larger than this is not a runtime's */
#define OCI_CONFIG_MAX     (16 * 1024 * 1024)
#define OCI_ANNOTATIONS_MAX 1024

typedef struct OciAnnotation {
        char *key, *value;
} OciAnnotation;

typedef struct OciState {
        char *id;
        char *status;           /* creating, created, running, stopped */
        char *bundle;           /* absolute path */
        pid_t pid;              /* 0 when the state has none (poststop) */
        OciAnnotation *annotations;
        size_t n_annotations;
        bool has_annotations;   /* the state carries the member (it may be empty) */
} OciState;

typedef struct OciIdMap {
        uint32_t container_id, host_id, size;
} OciIdMap;

typedef struct OciConfig {
        char *cgroups_path;     /* linux.cgroupsPath as written, or NULL */
        bool has_user;          /* process.user.uid is present */
        uint32_t uid;           /* process.user.uid, inside the container's user namespace */
        OciIdMap *uid_mappings; /* linux.uidMappings */
        size_t n_uid_mappings;
        OciAnnotation *annotations;
        size_t n_annotations;
} OciConfig;

void oci_state_done(OciState *s);
void oci_config_done(OciConfig *c);

/**
 * oci_state_parse() - parse a runtime's state document
 * @text: the JSON text, NUL-terminated
 * @ret: filled in on success (oci_state_done() it)
 * @reterr_why: on -EINVAL, what is wrong (malloc'ed)
 *
 * Required: id, bundle (absolute); pid when present is a positive integer.
 * Return: 0; -EINVAL (not JSON, or a member of the wrong type); -ENOMEM.
 */
int oci_state_parse(const char *text, OciState *ret, char **reterr_why);

/**
 * oci_config_parse() - parse a bundle's config.json
 * @text: the JSON text
 * @ret: filled in on success (oci_config_done() it)
 * @reterr_why: as oci_state_parse()
 *
 * Return: 0; -EINVAL; -ENOMEM.
 */
int oci_config_parse(const char *text, OciConfig *ret, char **reterr_why);

/* The value of annotation @key in @a, or NULL. */
const char *oci_annotation_get(const OciAnnotation *a, size_t n, const char *key);

/**
 * oci_config_host_uid() - process.user.uid as the host sees it
 *
 * Through linux.uidMappings when the container has them (a user namespace),
 * else the uid itself. Return: 0; -ENOENT (no process.user); -ERANGE (the
 * uid is in no mapping).
 */
int oci_config_host_uid(const OciConfig *c, uid_t *ret);
