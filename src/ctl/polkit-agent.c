/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "cgbypass/log.h"
#include "polkit-agent.h"

/* the agent's end of the pipe, as it will see it after exec */
#define AGENT_NOTIFY_FD 3

static _Noreturn void agent_exec(int notify_fd, pid_t parent) {
        char fd[16];

        /* do not outlive cgbypassctl, even if it is killed */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                _exit(EXIT_FAILURE);
        if (notify_fd != AGENT_NOTIFY_FD) {
                if (dup2(notify_fd, AGENT_NOTIFY_FD) < 0)
                        _exit(EXIT_FAILURE);
        } else if (fcntl(notify_fd, F_SETFD, 0) < 0)
                _exit(EXIT_FAILURE);
        (void) close_range(AGENT_NOTIFY_FD + 1, ~0u, 0);
        (void) snprintf(fd, sizeof(fd), "%d", AGENT_NOTIFY_FD);
        execl(POLKIT_AGENT_BINARY_PATH, POLKIT_AGENT_BINARY_PATH, "--notify-fd", fd, "--fallback",
              (char *) NULL);
        _exit(EXIT_FAILURE);
}

void polkit_agent_open(PolkitAgent *a) {
        pid_t parent = getpid(), pid;
        int fds[2];

        if (a->pid > 0 || geteuid() == 0 || !isatty(STDIN_FILENO) ||
            access(POLKIT_AGENT_BINARY_PATH, X_OK) < 0)
                return;

        if (pipe2(fds, O_CLOEXEC) < 0) {
                log_debug("Failed to create a pipe for the polkit agent, ignoring: %m");
                return;
        }
        (void) fflush(NULL);
        pid = fork();
        if (pid < 0) {
                log_debug("Failed to fork the polkit agent, ignoring: %m");
                (void) close(fds[0]);
                (void) close(fds[1]);
                return;
        }
        if (pid == 0) {
                (void) close(fds[0]);
                agent_exec(fds[1], parent);
        }
        (void) close(fds[1]);
        a->pid = pid;

        /* pkttyagent closes (or writes to) the fd once it is registered; it hangs up on failure too */
        for (;;) {
                struct pollfd p = { .fd = fds[0], .events = POLLIN };

                if (poll(&p, 1, -1) >= 0 || errno != EINTR)
                        break;
        }
        (void) close(fds[0]);
}

void polkit_agent_close(PolkitAgent *a) {
        if (a->pid <= 0)
                return;
        (void) kill(a->pid, SIGTERM);
        (void) kill(a->pid, SIGCONT);
        while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        a->pid = 0;
}
