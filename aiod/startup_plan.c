/*
 * The start-up plan (startup_plan.h): aiod's read-ahead played forward on a
 * model of the device.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <talloc.h>

#include "startup_plan.h"

/*
 * The plan stops after this many requests even before its horizon: on a
 * disk 20 s are a few hundred requests, on an SSD hundreds of thousands,
 * and admission plays the plan in aiod's event loop (10,000 requests of
 * 64 streams: about a millisecond). A fast device's start-up is over long
 * before that.
 */
#define PLAN_MAX_REQUESTS 10000

uint32_t aiod_plan_sustain_blocks(const struct aiod_plan_device *d, uint32_t streams,
				  uint64_t all_Bps, uint64_t own_Bps)
{
	double round_s, blocks;

	if (d->request_ns == 0 || d->media_Bps == 0 || d->block_size == 0 || own_Bps == 0) {
		return 0;
	}
	if (streams == 0) {
		streams = 1;
	}
	if (all_Bps < own_Bps) {
		all_Bps = own_Bps;	/* the stream asking is not counted yet */
	}
	if (all_Bps >= d->media_Bps) {
		return UINT32_MAX;	/* overcommitted: only the largest requests come near */
	}
	/*
	 * A round of one request per stream lasts streams x request_ns plus
	 * the transfer of what they play meanwhile: R = streams x request /
	 * (1 - all / media). Each request must bring R x its own rate.
	 */
	round_s = (double)streams * (double)d->request_ns / 1e9 /
		  (1.0 - (double)all_Bps / (double)d->media_Bps);
	blocks = (double)own_Bps * round_s / d->block_size;
	return blocks >= (double)(UINT32_MAX - 1) ? UINT32_MAX : (uint32_t)blocks + 1;
}

uint64_t aiod_plan_margin_ns(const struct aiod_plan_device *d)
{
	if (d->request_ns == 0 || d->media_Bps == 0) {
		return 0;
	}
	return d->request_ns + (uint64_t)((unsigned __int128)d->io_blocks * d->block_size *
					  1000000000ull / d->media_Bps);
}

uint32_t aiod_plan_request_blocks(uint32_t ramp, uint32_t read_blocks, uint32_t sustain,
				  uint32_t io_blocks)
{
	uint32_t n = io_blocks > 0 ? io_blocks : 1;

	if (ramp == 0) {
		ramp = 2 * (read_blocks > 0 ? read_blocks : 1);
	}
	if (sustain > ramp) {
		ramp = sustain;
	}
	return ramp < n ? ramp : n;
}

uint32_t aiod_plan_ramp_next(uint32_t size, uint32_t io_blocks)
{
	uint32_t next = size + (size / 3 > 1 ? size / 3 : 1);
	uint32_t n = io_blocks > 0 ? io_blocks : 1;

	return next > n ? n : next;
}

/* Blocks of s's next request, as readahead.c sizes it. */
static uint32_t plan_request_blocks(const struct aiod_plan_device *d, const struct aiod_plan_stream *s,
				    uint32_t sustain)
{
	return aiod_plan_request_blocks(s->ramp, s->read_blocks, sustain, d->io_blocks);
}

/*
 * A stream whose ramp is not given: where the ramp would be once it had
 * brought what s has. What is already queued for it was sized when fewer
 * streams were admitted, and the plan sizes it again as if all of them
 * were: the start-up that bench/rt's streams opened together measured.
 */
static void plan_ramp_through(const struct aiod_plan_device *d, struct aiod_plan_stream *s,
			      uint32_t sustain)
{
	uint64_t blocks = s->have / d->block_size;

	while (blocks > 0 && s->ramp < d->io_blocks) {
		uint32_t size = plan_request_blocks(d, s, sustain);

		blocks -= blocks < size ? blocks : size;
		s->ramp = aiod_plan_ramp_next(size, d->io_blocks);
	}
}

/* When the data at have bytes into s's timeline is where its reader is (ns from now). */
static double plan_on_time(const struct aiod_plan_stream *s, uint64_t have)
{
	return (double)s->t0_ns + (double)have * 1e9 / (double)s->rate_Bps;
}

struct aiod_plan_result aiod_plan_startup(const struct aiod_plan_device *d,
					  const struct aiod_plan_stream *s, uint32_t n,
					  uint64_t horizon_ns)
{
	struct aiod_plan_result res = { .least_slack_ns = INT64_MAX };
	struct aiod_plan_stream *st;
	uint64_t all = 0;
	double t = 0, least = (double)INT64_MAX, be_next = 0;

	if (n == 0 || d->request_ns == 0 || d->media_Bps == 0 || d->block_size == 0) {
		return res;
	}
	st = talloc_memdup(NULL, s, n * sizeof(*s));
	if (st == NULL) {
		return res;	/* no memory to plan with: nothing known to be late */
	}
	for (uint32_t i = 0; i < n; i++) {
		if (st[i].rate_Bps == 0) {
			st[i].rate_Bps = 1;	/* a stream of no rate never falls due */
		}
		all += st[i].rate_Bps;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (st[i].ramp == 0) {
			plan_ramp_through(d, &st[i], aiod_plan_sustain_blocks(d, n, all, st[i].rate_Bps));
		}
	}
	for (uint32_t step = 0; step < PLAN_MAX_REQUESTS && t < (double)horizon_ns; step++) {
		uint32_t first = 0, size, sustain;
		double due, slack;

		/* Best effort's turn: its request is due (and goes) before any stream's. */
		if (d->be_blocks > 0 && d->be_period_ns > 0 && t >= be_next) {
			t += (double)d->request_ns +
			     (double)d->be_blocks * d->block_size * 1e9 / (double)d->media_Bps;
			be_next += (double)d->be_period_ns;
			continue;
		}

		/* EDF on the timelines: the stream whose next data its reader gets to first. */
		for (uint32_t i = 1; i < n; i++) {
			if (plan_on_time(&st[i], st[i].have) < plan_on_time(&st[first], st[first].have)) {
				first = i;
			}
		}
		sustain = aiod_plan_sustain_blocks(d, n, all, st[first].rate_Bps);
		size = plan_request_blocks(d, &st[first], sustain);
		t += (double)d->request_ns + (double)size * d->block_size * 1e9 / (double)d->media_Bps;
		due = plan_on_time(&st[first], st[first].have) + (double)st[first].buffer_ns;
		slack = due - t;
		if (slack < least) {
			least = slack;
			res.worst = first;
			res.at_ns = (uint64_t)t;
		}
		st[first].have += (uint64_t)size * d->block_size;
		if (st[first].ramp < d->io_blocks) {
			st[first].ramp = aiod_plan_ramp_next(size, d->io_blocks);
		}
	}
	talloc_free(st);
	res.least_slack_ns = least >= (double)INT64_MAX ? INT64_MAX :
			     least <= (double)INT64_MIN ? INT64_MIN : (int64_t)least;
	return res;
}
