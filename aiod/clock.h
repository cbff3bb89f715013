/*
 * aiod's one clock: CLOCK_MONOTONIC in nanoseconds, for deadlines, timelines
 * and rate limits. Its own file so pure units (stream rules, the scheduler's
 * tests) need not link the io_uring engine to tell the time.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_CLOCK_H
#define AIOD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t aiod_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
