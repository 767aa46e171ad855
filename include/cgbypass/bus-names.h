/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The names of the D-Bus API (a contract: shared/design/interfaces.md) and
 * the waits around polkit, shared by cgbypassd and cgbypassctl.
 */

/* CGBYPASS_BUS_NAME, _PATH, _INTERFACE: the installed header's */
#include "cgbypass/cgbypass.h"

#define CGBYPASS_USEC_PER_SEC 1000000ULL

/* polkit answers in milliseconds; an authentication dialog waits for a person */
#define CGBYPASS_POLKIT_TIMEOUT_USEC             (25 * CGBYPASS_USEC_PER_SEC)
#define CGBYPASS_POLKIT_INTERACTIVE_TIMEOUT_USEC (5 * 60 * CGBYPASS_USEC_PER_SEC)

/*
 * A client waits longer than the daemon waits for polkit, so that it hears
 * the daemon's answer (denied, polkit did not answer) instead of timing out
 * at the same moment and leaving the person guessing.
 */
#define CGBYPASS_CALL_MARGIN_USEC (15 * CGBYPASS_USEC_PER_SEC)
