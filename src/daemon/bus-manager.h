/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * org.cgbypass1.Manager on /org/cgbypass1 (shared/design/interfaces.md;
 * dbus/org.cgbypass1.Manager.xml documents it and must match the vtable).
 */

#include "cgbypass/bus-names.h"
#include "manager.h"

/*
 * The named error for what manager_change() refused with @r and @f (the
 * request @req), or manager_reload() (the configuration's problems @errs).
 * Return: what the method handler returns: the errno the name maps to, or
 * @r when @f names no error (REFUSAL_NONE: -ENOMEM, ...).
 */
int bus_error_from_change(sd_bus_error *error, int r, const Refusal *f, const ChangeRequest *req);
/* The same for a request refused by its checks (REFUSAL_REQUEST): the Reason's name, the refusal's words. */
int bus_error_from_refusal(sd_bus_error *error, int r, const Refusal *f);
int bus_error_from_reload(sd_bus_error *error, int r, const Refusal *f, const ConfigErrors *errs);

/**
 * manager_run_service() - serve on the bus until SIGTERM or SIGINT
 *
 * The manager's configuration is loaded, its backend open and applied.
 * Connects to m->options.bus ("system" or "session", from the usual
 * environment), registers the object, takes the name, tells systemd it is
 * ready, and runs the event loop; SIGHUP reloads.
 *
 * Return: 0 on a clean exit, or -errno (logged).
 */
int manager_run_service(Manager *m);
