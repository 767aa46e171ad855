/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * cgbypassctl's state: the options, and the connection to the daemon,
 * opened on the first call. Every failure is logged once, here or in the
 * verb, as one line on stderr.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "cgbypass/bus-names.h"
#include "cgbypass/cgbypass.h"
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
        bool full;              /* tree: every member, no folding */
        uint64_t delegation_flags;      /* delegate: CGBYPASS_DELEGATION_* */
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
 * client_bus() - the connection to the daemon's bus, for a libcgbypass call
 *
 * Connects on first use. Return: 0, or a negative errno (logged: the bus is unreachable).
 */
int client_bus(Client *c, sd_bus **ret);

/**
 * client_result() - after a libcgbypass call: log its failure as the one
 * line the user sees (the daemon's error as "MESSAGE (NAME)", or that the
 * daemon cannot be reached)
 * @r: what the call returned
 * @e: the error it set
 *
 * Return: 0 when @r >= 0, else a negative errno (logged).
 */
int client_result(Client *c, int r, const sd_bus_error *e);

/**
 * client_get_properties() - GetAll of org.cgbypass1.Manager
 * @ret_reply: positioned before its a{sv}
 *
 * Return: as client_call().
 */
int client_get_properties(Client *c, sd_bus_message **ret_reply);

/* Log a failure to read @member's reply ("Failed to parse ... reply: %m"). Return: @r. */
int client_log_parse_error(const char *member, int r);
