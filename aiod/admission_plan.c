/*
 * Admission's start-up plan (startup_plan.h) for the streams aiod has:
 * what each admitted stream has had and where its timeline stands, read
 * from the opens and the cache, and whether the plan, with one stream more,
 * has every client's data early enough. admission.c asks it before it
 * admits or promotes a stream next to streams still starting; read-ahead
 * sizes its requests on the same device (aiod_admission_plan_device()).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <stdio.h>

#include "aiod.h"
#include "log.h"
#include "profile.h"
#include "startup_plan.h"
#include "streams.h"

bool aiod_admission_plan_device(const struct aiod_ctx *ctx, struct aiod_plan_device *d)
{
	const struct aiod_profile *p = ctx->profile;

	*d = (struct aiod_plan_device){ 0 };
	if (p == NULL || p->request_us == 0 || aiod_profile_media_Bps(p) == 0) {
		return false;
	}
	d->request_ns = (uint64_t)p->request_us * 1000;
	d->media_Bps = aiod_profile_media_Bps(p);
	d->block_size = ctx->cache->block_size;
	d->io_blocks = aiod_stream_io_blocks(ctx);
	return true;
}

/* How far ahead the start-up plan plays: start-up lateness came within 7 s in every sweep. */
#define AIOD_PLAN_HORIZON_NS 20000000000ull

/*
 * The start-up plan's picture of admitted stream o at now: its timeline,
 * what its client has read and the cache holds of what follows (blocks
 * still loading are not had: the plan decides their order itself), its
 * ramp and its client's buffer.
 */
static void admission_plan_stream(const struct aiod_ctx *ctx, const struct aiod_open *o,
				  uint64_t now, struct aiod_plan_stream *ps)
{
	uint32_t bs = ctx->cache->block_size;
	uint64_t end = o->next_off, blk = o->next_off / bs;

	*ps = (struct aiod_plan_stream){
		.rate_Bps = o->rate_bps / 8,
		/*
		 * Not o->ra_size: that is the ramp after what is queued, and
		 * what is queued is not had yet; the plan sizes it again.
		 */
		.ramp = 0,
		.read_blocks = o->read_blocks > 0 ? o->read_blocks : 1,
		.buffer_ns = (uint64_t)aiod_stream_prebuffer_ms(o) * 1000000ull,
	};
	if (o->play_t0_ns == 0) {
		return;	/* opened, not read yet: it starts now */
	}
	ps->t0_ns = -(int64_t)(now > o->play_t0_ns ? now - o->play_t0_ns : 0);
	for (uint32_t i = 0; i < 4096; i++, blk++) {
		const struct aiod_block *b = aiod_cache_find(ctx->cache, o->file->dev, o->file->ino,
							     blk);

		if (b == NULL || b->state != AIOD_BLK_VALID) {
			break;
		}
		end = (blk + 1) * bs;
	}
	ps->have = end > o->play_off0 ? end - o->play_off0 : 0;
}

/* streams.h; the debt check (admission.c) counts bytes, this counts when they come. */
bool aiod_admission_plan_holds(struct aiod_ctx *ctx, const struct aiod_open *o, uint64_t bps,
			       char *why, size_t whylen)
{
	struct aiod_plan_device d;
	struct aiod_plan_stream *ps;
	const struct aiod_open **who;	/* ps[i] is who[i]'s */
	struct aiod_plan_result res;
	uint64_t now = aiod_now_ns(), others = ctx->reserved_Bps, be, margin;
	uint32_t n = 0, cap = 1;
	const struct aiod_open *worst;
	char be_what[64] = "";

	if (!aiod_admission_plan_device(ctx, &d)) {
		return true;
	}
	for (const struct aiod_open *a = ctx->admitted; a != NULL; a = a->admitted_next) {
		cap++;
	}
	ps = talloc_array(ctx, struct aiod_plan_stream, cap);
	who = ps != NULL ? talloc_array(ps, const struct aiod_open *, cap) : NULL;
	if (who == NULL) {
		talloc_free(ps);
		AIOD_ERR("admission: no memory for the start-up plan of %s: admitted on the "
			 "debt check alone", o->name);
		return true;
	}
	for (const struct aiod_open *a = ctx->admitted; a != NULL; a = a->admitted_next) {
		if (a->recorder || a->rate_bps == 0) {
			continue;
		}
		who[n] = a;
		admission_plan_stream(ctx, a, now, &ps[n++]);
		others -= others >= a->rate_bps / 8 ? a->rate_bps / 8 : others;
	}
	who[n] = o;
	admission_plan_stream(ctx, o, now, &ps[n]);
	ps[n].rate_Bps = bps / 8;
	if (o->play_t0_ns != 0 && ps[n].rate_Bps > 0) {
		/*
		 * A demoted stream asking to be promoted: its client is behind
		 * its timeline and reads as fast as it is served until it has
		 * caught up, before the others' read-ahead. The plan plays that
		 * catch-up; its own lateness is what it has already, not what
		 * the plan protects. Promoted from its position as if it opened
		 * then, a stream demoted from 9 opened together made 2 of the
		 * 8 admitted go late 1.3 s later (2026-12-06, 0.5 s clients).
		 */
		int64_t least = -(int64_t)((unsigned __int128)ps[n].have * 1000000000ull /
					   ps[n].rate_Bps) - (int64_t)aiod_stream_window_ns(o);

		ps[n].buffer_ns = AIOD_PLAN_HORIZON_NS * 1000;
		/*
		 * At most a window (prebuffer_ms + 1 s) behind: a client that
		 * paused, or that gave up on what it missed, does not ask for
		 * everything since it first read, and the plan would never let it
		 * be promoted.
		 */
		if (ps[n].t0_ns < least) {
			ps[n].t0_ns = least;
		}
	}
	n++;
	/* Recorders' write-back is reserved device time the plan does not play: less media rate. */
	d.media_Bps = d.media_Bps > others ? d.media_Bps - others : 1;
	/*
	 * Best effort the engine serves once a deadline while streams start
	 * (besteffort.c), if a reader took the device lately: a copy running
	 * when editors start playback. Without it the plan admitted 9 of 9
	 * opened next to a greedy reader (0.5 s clients), and 5 of them played
	 * late chunks (bench/results/rt-20261206-0815.md, run 005).
	 */
	be = aiod_best_effort_recent(ctx, now);
	if (be > 0) {
		uint64_t blocks = (be + d.block_size - 1) / d.block_size;

		d.be_blocks = blocks < d.io_blocks ? (uint32_t)blocks : d.io_blocks;
		d.be_period_ns = (uint64_t)ctx->cfg->be_deadline_ms * 1000000ull;
	}
	res = aiod_plan_startup(&d, ps, n, AIOD_PLAN_HORIZON_NS);
	worst = who[res.worst < n ? res.worst : n - 1];
	talloc_free(ps);
	margin = aiod_plan_margin_ns(&d);
	if (d.be_blocks > 0) {
		snprintf(be_what, sizeof(be_what), " and best effort reading %u MiB each %u ms",
			 (unsigned)(((uint64_t)d.be_blocks * d.block_size + (1u << 20) - 1) >> 20),
			 ctx->cfg->be_deadline_ms);
	}
	if (res.least_slack_ns >= (int64_t)margin) {
		/* Said with the admission (aiod_admission_admit()): how close it came. */
		snprintf(why, whylen, "start-up plan with %u streams%s: every client's data "
			 "at least %.0f ms early", n, be_what,
			 res.least_slack_ns == INT64_MAX ? 0.0 : (double)res.least_slack_ns / 1e6);
		return true;
	}
	if (res.least_slack_ns < 0) {
		snprintf(why, whylen, "aiod's start-up plan has %s's data %.0f ms late for its "
			 "client (prebuffer_ms = %u) %.1f s from now, with %u streams starting or "
			 "playing%s", worst->name, (double)-res.least_slack_ns / 1e6,
			 aiod_stream_prebuffer_ms(worst), (double)res.at_ns / 1e9, n, be_what);
	} else {
		snprintf(why, whylen, "aiod's start-up plan has %s's data only %.0f ms early for "
			 "its client (prebuffer_ms = %u) %.1f s from now, less than one io_size "
			 "request takes (%.0f ms), with %u streams starting or playing%s",
			 worst->name, (double)res.least_slack_ns / 1e6, aiod_stream_prebuffer_ms(worst),
			 (double)res.at_ns / 1e9, (double)margin / 1e6, n, be_what);
	}
	return false;
}
