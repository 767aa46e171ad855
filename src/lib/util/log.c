/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cgbypass/log.h"

static const char *program = "cgbypass";
static int max_level = LOG_INFO;
static bool journal = false;

/* systemd sets JOURNAL_STREAM=DEV:INO when stderr is connected to the journal */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void log_setup(const char *name) {
        program = name;
        journal = stderr_is_journal();
        const char *l = getenv("CGBYPASS_LOG_LEVEL");
        if (l && streq(l, "debug"))
                max_level = LOG_DEBUG;
}

bool log_to_journal(void) {
        return journal;
}

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

int log_full_errno(int level, int error, const char *fmt, ...) {
        int saved = errno;
        va_list ap;

        if (error < 0)
                error = -error;
        if (level <= max_level) {
                char buf[4096];

                errno = error ? error : saved;
                va_start(ap, fmt);
                (void) vsnprintf(buf, sizeof(buf), fmt, ap);
                va_end(ap);
                /* the journal names the program itself (SYSLOG_IDENTIFIER, _COMM): no prefix there */
                if (journal)
                        fprintf(stderr, "<%d>%s\n", level, buf);
                else
                        fprintf(stderr, "%s: %s\n", program, buf);
        }
        errno = saved;
        return -error;
}
