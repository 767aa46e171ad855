/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * cgbypassctl's state: the options, and the connection to the daemon,
 * opened on the first call. Every failure is logged once, here or in the
 * verb, as one line on stderr.
 */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "cgbypass/bus-names.h"
#include "polkit-agent.h"


typedef enum BusType {
        BUS_SYSTEM,
        BUS_SESSION,
        _BUS_TYPE_MAX,
        _BUS_TYPE_INVALID = -22, /* -EINVAL */
} BusType;

const char *bus_type_to_string(BusType t);
BusType bus_type_from_string(const char *s);

typedef struct Client {
        BusType bus_type;
        bool json;
        bool ask_password;
        bool tty;               /* stdout is a terminal: pretty JSON */
        bool utf8;              /* ... and the locale is UTF-8: box-drawing characters */
        sd_bus *bus;
        PolkitAgent agent;
} Client;

void client_done(Client *c);

/*
 * client_start_agent() - before a call that may ask polkit interactively:
 * a text agent on this terminal (see polkit-agent.h), unless --no-ask-password.
 * Connects first. Return: 0, or a negative errno (logged: the bus is unreachable).
 */
int client_start_agent(Client *c);

/**
 * client_call() - call a method of org.cgbypass1.Manager
 * @member: the method
 * @ret_reply: the reply, or NULL
 * @types: the signature of the arguments that follow, as sd_bus_call_method() takes them
 *
 * Connects on first use. A failure is logged as the one line the user sees:
 * the daemon's error as "MESSAGE (NAME)", or that the daemon cannot be reached.
 * Return: 0, or a negative errno (logged).
 */
int client_call(Client *c, const char *member, sd_bus_message **ret_reply, const char *types, ...);

/**
 * client_get_properties() - GetAll of org.cgbypass1.Manager
 * @ret_reply: positioned before its a{sv}
 *
 * Return: as client_call().
 */
int client_get_properties(Client *c, sd_bus_message **ret_reply);

/* Log a failure to read @member's reply ("Failed to parse ... reply: %m"). Return: @r. */
int client_log_parse_error(const char *member, int r);
