/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <poll.h>

#include "bus-loop.h"
#include "cgbypass/log.h"
#include "cgbypass/macro.h"

/*
 * Every message sd-bus has read, up to a batch: another source (a timer,
 * the group commit) then gets its turn. Once its queue is empty, the next
 * wait says whether the socket holds more: a read to find out would cost as
 * much, and a lone call (the common case) would pay it every time.
 */
static int drain(BusLoop *l) {
        for (unsigned i = 0; i < BUS_LOOP_BATCH; i++) {
                int r = sd_bus_process(l->bus, NULL);
                if (r < 0) {
                        (void) log_full_errno(LOG_DEBUG, r, "The bus connection is gone: %m");
                        /* as sd_bus_set_exit_on_disconnect(): the event loop's caller says so */
                        return sd_event_exit(sd_event_source_get_event(l->io), 1);
                }
                /* POLLIN: nothing queued (while connected; closing, it goes on until sd-bus is done) */
                if (r == 0 || (sd_bus_get_events(l->bus) & POLLIN))
                        break;
        }
        return 0;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        return drain(userdata);
}

static int on_time(sd_event_source *s, uint64_t usec, void *userdata) {
        return drain(userdata);
}

/* Before each wait: what the connection waits for, and when its next call times out. */
static int on_prepare(sd_event_source *s, void *userdata) {
        BusLoop *l = userdata;
        uint64_t until;
        int e, r;

        e = sd_bus_get_events(l->bus);
        if (e < 0)
                return drain(l);        /* closed: let sd_bus_process() say so */
        r = sd_event_source_set_io_events(l->io, (uint32_t) e);
        if (r < 0)
                return r;
        r = sd_bus_get_timeout(l->bus, &until);
        if (r < 0)
                return r;
        if (r == 0 || until == UINT64_MAX)
                return sd_event_source_set_enabled(l->time, SD_EVENT_OFF);
        r = sd_event_source_set_time(l->time, until);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(l->time, SD_EVENT_ON);
}

int bus_loop_attach(BusLoop *l, sd_bus *bus, sd_event *e, int64_t priority) {
        int fd, r;

        *l = (BusLoop) { .bus = bus };
        fd = sd_bus_get_fd(bus);
        if (fd < 0)
                return fd;
        r = sd_event_add_io(e, &l->io, fd, 0, on_io, l);
        if (r >= 0)
                r = sd_event_source_set_priority(l->io, priority);
        if (r >= 0)
                r = sd_event_source_set_prepare(l->io, on_prepare);
        if (r >= 0)
                /* sd_bus_get_timeout() is CLOCK_MONOTONIC; accuracy 0 would be sd-event's 250 ms */
                r = sd_event_add_time(e, &l->time, CLOCK_MONOTONIC, 0, 1, on_time, l);
        if (r >= 0)
                r = sd_event_source_set_priority(l->time, priority);
        if (r >= 0)
                r = sd_event_source_set_enabled(l->time, SD_EVENT_OFF);
        if (r < 0)
                bus_loop_detach(l);
        return r;
}

void bus_loop_detach(BusLoop *l) {
        l->io = sd_event_source_disable_unref(l->io);
        l->time = sd_event_source_disable_unref(l->time);
}
