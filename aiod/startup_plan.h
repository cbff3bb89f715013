/*
 * The start-up plan (pure): what aiod's own read-ahead will do for a set of
 * streams from now on, played forward request by request on the device the
 * profile describes, and how early (or late) each client gets its data.
 * Admission asks it before it lets one more stream start next to streams
 * that are still starting (admission.c); read-ahead sizes its requests with
 * the same functions (aiod_plan_sustain_blocks(), aiod_plan_request_blocks(),
 * aiod_plan_ramp_next(); readahead.c), so the plan and the scheduler cannot
 * drift apart.
 *
 * The model (the one bench/rt/startup_bound.py plays for other schedules):
 * the device serves one request at a time, a request costs the profile's
 * request time plus its bytes at the media rate; the stream whose data is
 * due first is served next (EDF on stream timelines); its request is the
 * start-up ramp of readahead.c (twice the client's read, at least the size
 * that keeps up with every stream, a third larger each time, at most
 * io_size). Data at x bytes into a stream's timeline is due at its origin +
 * the client's buffer + x / rate. Best effort, when admission has seen it,
 * takes one request at once (it may be on the device when the streams
 * open) and one each best_effort_deadline_ms, as the engine serves it while
 * streams start (besteffort.c). No CPU or network: those only make the real
 * thing later.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_STARTUP_PLAN_H
#define AIOD_STARTUP_PLAN_H

#include <stdint.h>

/* The device as the plan sees it (from the calibration profile). */
struct aiod_plan_device {
	uint64_t request_ns;	/* one request's fixed cost: a seek and its latency */
	uint64_t media_Bps;	/* bytes/s once the head is there */
	uint32_t block_size;	/* cache block: the unit of a request */
	uint32_t io_blocks;	/* the largest request ([readahead] io_size), blocks */
	/*
	 * Best effort beside the streams: one request of be_blocks now and one
	 * each be_period_ns (best_effort_deadline_ms). be_blocks 0: none.
	 */
	uint32_t be_blocks;
	uint64_t be_period_ns;
};

/* One stream, admitted or asking to be. Times are relative to now. */
struct aiod_plan_stream {
	uint64_t rate_Bps;	/* its bitrate / 8 */
	int64_t t0_ns;		/* its timeline's origin: 0 for one opening now, < 0 once started */
	uint64_t have;		/* bytes from the origin its client has or the cache holds */
	uint32_t ramp;		/* blocks of its next read-ahead request; 0: where the ramp
				 * would be once it had brought have (0 for have 0) */
	uint32_t read_blocks;	/* its client's read, blocks (at least 1) */
	uint64_t buffer_ns;	/* its client's buffer: how long after asking it plays */
};

/* What the plan found. */
struct aiod_plan_result {
	int64_t least_slack_ns;	/* how early the least early data came; < 0: late */
	uint32_t worst;		/* index of the stream that had it */
	uint64_t at_ns;		/* when, from now */
};

/*
 * The smallest request (blocks) with which one round of requests, one per
 * stream, takes no longer than playing what each brings to a stream of
 * own_Bps, when streams streams reserve all_Bps in total: UINT32_MAX when no
 * request size keeps up (all_Bps at or above the media rate), 0 when the
 * device is unknown.
 */
uint32_t aiod_plan_sustain_blocks(const struct aiod_plan_device *d, uint32_t streams,
				  uint64_t all_Bps, uint64_t own_Bps);

/*
 * Blocks of a stream's next read-ahead request (readahead.c, and the plan's
 * model of it): its ramp (0 before its first request: twice the client's
 * read of read_blocks), at least sustain (what keeps up with every stream,
 * aiod_plan_sustain_blocks()), at most io_blocks.
 */
uint32_t aiod_plan_request_blocks(uint32_t ramp, uint32_t read_blocks, uint32_t sustain,
				  uint32_t io_blocks);

/* The ramp after a request of size blocks: a third larger, at least a block more, at most io_blocks. */
uint32_t aiod_plan_ramp_next(uint32_t size, uint32_t io_blocks);

/*
 * How early the plan must have every client's data for admission to trust
 * it: one io_size request's device time (request time and transfer). The
 * plan does not see what is on the device or queued when it is asked, nor
 * CPU and network: 9 streams of 100 Mbit/s opened together on the emulated
 * disk, planned 83 ms early, had chunks up to 79 ms late; 8, planned
 * 141-265 ms early, played clean (2026-12-06, 0.5 s clients). 0 when the
 * device is unknown.
 */
uint64_t aiod_plan_margin_ns(const struct aiod_plan_device *d);

/*
 * Play aiod's read-ahead for the n streams of s from now for horizon_ns (or
 * 10,000 requests, whichever ends first) and say how early the least early
 * data came. n = 0 or an unknown device: slack
 * INT64_MAX (nothing to be late).
 */
struct aiod_plan_result aiod_plan_startup(const struct aiod_plan_device *d,
					  const struct aiod_plan_stream *s, uint32_t n,
					  uint64_t horizon_ns);

#endif
