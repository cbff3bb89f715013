/*
 * Sampling aiod twice for rates (aiodctl_sessions.c), shared by sessions
 * and top.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIODCTL_SESSIONS_H
#define AIODCTL_SESSIONS_H

#include "aiodctl_snapshot.h"

/* Sleep ms milliseconds, through signals that do not end aiodctl; 0 or -errno. */
int aiodctl_sleep_ms(unsigned long long ms);
/*
 * A snapshot whose sessions carry rates over interval_ms (two looks);
 * interval_ms 0: one look, no rates. A talloc root the caller frees.
 */
int aiodctl_sample(struct rtio_client *c, unsigned long long interval_ms,
		   struct aiodctl_snapshot **out);

#endif
