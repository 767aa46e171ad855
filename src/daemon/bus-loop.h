/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

/*
 * The bus on the event loop: what sd_bus_attach_event() does, but a wakeup
 * handles every message sd-bus has queued (up to BUS_LOOP_BATCH), where
 * sd_bus_attach_event() handles one per loop iteration and arms a timer
 * "now" for the next (a timerfd_settime(), an epoll_wait() and a read() of
 * the timerfd per message).
 */
#define BUS_LOOP_BATCH 64

typedef struct BusLoop {
        sd_bus *bus;
        sd_event_source *io, *time;
} BusLoop;

/*
 * bus_loop_attach() - dispatch @bus from @e at @priority
 *
 * When the connection is lost (sd_bus_process() fails, after the pending
 * calls got their errors), the loop exits with 1, as sd_bus_set_exit_on_disconnect()
 * makes it. Return: 0 or -errno.
 */
int bus_loop_attach(BusLoop *l, sd_bus *bus, sd_event *e, int64_t priority);
void bus_loop_detach(BusLoop *l);
