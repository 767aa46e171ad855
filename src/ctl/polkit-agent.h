/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A polkit text agent for the duration of a call, as systemctl starts one:
 * when the daemon asks polkit with interactive authorization, someone has to
 * ask the user for the password. pkttyagent --fallback defers to an agent the
 * session already has (a desktop's).
 */

#include <sys/types.h>

#define POLKIT_AGENT_BINARY_PATH "/usr/bin/pkttyagent"

typedef struct PolkitAgent {
        pid_t pid;              /* 0: none running */
} PolkitAgent;

/*
 * polkit_agent_open() - start pkttyagent and wait until it is registered
 *
 * Does nothing for root (the daemon does not ask polkit about uid 0), when
 * stdin is not a terminal (nobody to ask), when pkttyagent is not installed,
 * or when an agent is running already. Failures are logged at debug level
 * only: without an agent, polkit answers as if the user said no.
 */
void polkit_agent_open(PolkitAgent *a);

/* Stop the agent, if one runs, and reap it. */
void polkit_agent_close(PolkitAgent *a);
