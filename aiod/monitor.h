/*
 * What aiod tells monitors beyond STATS and FILE_STATS (monitor.c): its
 * sessions one by one (SESSION_STATS) and who it is (INFO). Replies are
 * filled here; control.c sends them.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_MONITOR_H
#define AIOD_MONITOR_H

#include <stdint.h>

#include "aiod.h"

/* The index-th session that completed CONNECT; -ENOENT past the last. */
int aiod_monitor_session(struct aiod_ctx *ctx, uint32_t index, struct rtio_session_stats_rep *r);
/* Version, uptime, and the index-th stream class (zero past the last). */
void aiod_monitor_info(struct aiod_ctx *ctx, uint32_t index, struct rtio_info_rep *r);

#endif
