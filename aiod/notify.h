/*
 * Telling systemd how aiod is doing (notify.c): the sd_notify datagram
 * protocol, spoken directly so aiod needs no libsystemd.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_NOTIFY_H
#define AIOD_NOTIFY_H

#include <stdint.h>

/*
 * Send state ("READY=1", "STATUS=...", "WATCHDOG=1", "STOPPING=1"; several
 * separated by newlines) to $NOTIFY_SOCKET: a path, or '@' for the abstract
 * namespace. 0 when sent and when there is no NOTIFY_SOCKET (not started by
 * systemd: nothing to tell); -errno when the socket is there but the send
 * failed.
 */
int aiod_notify(const char *state);

/*
 * How often systemd wants WATCHDOG=1 from this process: $WATCHDOG_USEC, if
 * $WATCHDOG_PID is unset or names this process; 0 when there is no watchdog.
 */
uint64_t aiod_notify_watchdog_usec(void);

#endif
