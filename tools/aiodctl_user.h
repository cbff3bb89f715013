/*
 * Who an smbd process acts as (aiodctl_user.c): joins an aiod session,
 * which knows only the pid, with a user name.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIODCTL_USER_H
#define AIODCTL_USER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The effective uid of pid from /proc/PID/status; fallback when it cannot be read. */
uint32_t aiodctl_proc_euid(pid_t pid, uint32_t fallback);
/* uid's login name, or the number when the passwd database has none. */
void aiodctl_user_name(uint32_t uid, char *buf, size_t len);

#endif
