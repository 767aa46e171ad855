/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Logging for the programs (the library never logs above debug). One line
 * per message on stderr, "PROGRAM: message"; under systemd (stderr is the
 * journal, JOURNAL_STREAM) each line starts with its syslog priority "<N>",
 * which journald turns into the message's priority.
 */

#include <syslog.h>

#include "cgbypass/macro.h"

void log_setup(const char *program);
void log_set_max_level(int level);
/* Whether stderr is the journal ($JOURNAL_STREAM names its device and inode; see systemd.exec(5)). */
bool log_to_journal(void);
int log_get_max_level(void);

/* Logs at @level; returns -abs(@error) so callers can "return log_...". errno = abs(@error) for %m. */
int log_full_errno(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_debug(...)   (void) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)    (void) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)  (void) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) (void) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)   (void) log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_error_errno(error, ...)   log_full_errno(LOG_ERR, (error), __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, (error), __VA_ARGS__)
#define log_oom() log_full_errno(LOG_ERR, ENOMEM, "Out of memory.")
