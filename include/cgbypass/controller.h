/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * Every controller Linux 6.1 knows, in the kernel's ssid order
 * (include/linux/cgroup_subsys.h). The kernel numbers only the controllers
 * it was built with, but it keeps this relative order, and every cgroup file
 * prints controllers in it. So the catalog index is our ssid, and a kernel
 * configuration is a mask over the catalog.
 */
typedef enum Controller {
        CONTROLLER_CPUSET,
        CONTROLLER_CPU,
        CONTROLLER_CPUACCT,
        CONTROLLER_IO,
        CONTROLLER_MEMORY,
        CONTROLLER_DEVICES,
        CONTROLLER_FREEZER,
        CONTROLLER_NET_CLS,
        CONTROLLER_PERF_EVENT,
        CONTROLLER_NET_PRIO,
        CONTROLLER_HUGETLB,
        CONTROLLER_PIDS,
        CONTROLLER_RDMA,
        CONTROLLER_MISC,
        CONTROLLER_DEBUG,
        _CONTROLLER_MAX,
        _CONTROLLER_INVALID = -22, /* -EINVAL */
} Controller;

/* kernel: u16 masks in struct cgroup */
typedef uint16_t CgMask;

#define CGMASK(c) ((CgMask) (1u << (c)))
#define CGMASK_ALL ((CgMask) ((1u << _CONTROLLER_MAX) - 1))

#define FOREACH_CONTROLLER(c) for (Controller c = 0; c < _CONTROLLER_MAX; c++)
#define FOREACH_CONTROLLER_IN(c, mask)                                  \
        for (Controller c = 0; c < _CONTROLLER_MAX; c++)                \
                if ((mask) & CGMASK(c))

/* The project's VM kernel: cpuset cpu io memory hugetlb pids rdma misc perf_event, cgroup_debug. */
#define CGMASK_VM_KERNEL                                                \
        (CGMASK(CONTROLLER_CPUSET) | CGMASK(CONTROLLER_CPU) | CGMASK(CONTROLLER_IO) | \
         CGMASK(CONTROLLER_MEMORY) | CGMASK(CONTROLLER_HUGETLB) | CGMASK(CONTROLLER_PIDS) | \
         CGMASK(CONTROLLER_RDMA) | CGMASK(CONTROLLER_MISC) | CGMASK(CONTROLLER_PERF_EVENT) | \
         CGMASK(CONTROLLER_DEBUG))

/**
 * controller_to_string() - the kernel's name of a controller
 * @c: a controller
 *
 * Return: the name, or NULL for an out-of-range value.
 */
const char *controller_to_string(Controller c);

/**
 * controller_from_string() - look a controller up by its kernel name
 * @s: a name such as "cpu"
 *
 * Return: the controller, or -EINVAL for an unknown name.
 */
Controller controller_from_string(const char *s);

/*
 * Properties of the built-in controller set that the cgroup core derives at
 * boot (kernel: cgroup_init()). "debug" in the set means the kernel booted
 * with cgroup_debug: only then is it implicit and threaded on cgroup2.
 */
CgMask controller_threaded_mask(CgMask builtin);     /* kernel: cgrp_dfl_threaded_ss_mask */
CgMask controller_implicit_mask(CgMask builtin);     /* kernel: cgrp_dfl_implicit_ss_mask */
CgMask controller_inhibit_mask(CgMask builtin);      /* kernel: cgrp_dfl_inhibit_ss_mask */
CgMask controller_depends_on(Controller c, CgMask builtin); /* kernel: ss->depends_on */

/**
 * controller_mask_from_list() - parse a list of controller names
 * @list: names separated by commas or spaces ("cpu,io" or "cpu io")
 * @ret: the mask, set only on success
 * @reterr_bad: on -EINVAL, the first unknown name (malloc'ed, may be NULL)
 *
 * Return: 0, -EINVAL for an unknown name, -ENOMEM.
 */
int controller_mask_from_list(const char *list, CgMask *ret, char **reterr_bad);

/**
 * controller_mask_to_string() - names of a mask in ssid order
 * @mask: the mask
 * @sep: separator between names
 *
 * Return: a malloc'ed string ("" for an empty mask), or NULL on OOM.
 */
char *controller_mask_to_string(CgMask mask, const char *sep);
