/*
 * Admission control: a stream is a promise to deliver bitrate/8 bytes every
 * second. aiod only makes promises the device can keep: the sum of admitted
 * streams stays below the device's capacity (measured by aiod --calibrate, or
 * configured) minus a headroom left to best-effort I/O. A stream that does not
 * fit is refused (its open fails) or demoted to best effort, per aiod.ini;
 * so is one that opens while streams started before it still fill their
 * windows, if what is left over cannot fill them in time (startup_s).
 *
 * Capacity is the random-read throughput at the read-ahead request size: with
 * many streams interleaved, every read-ahead request costs a seek.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>

#include "aiod.h"
#include "engine.h"
#include "log.h"
#include "profile.h"
#include "qos_policy.h"
#include "region.h"
#include "streams.h"

static void admission_capacity(struct aiod_ctx *ctx)
{
	const struct aiod_config *cfg = ctx->cfg;

	if (cfg->admission_capacity > 0) {
		ctx->capacity_Bps = cfg->admission_capacity;
		/* MiB/s: [admission] capacity is a size, and aiod.ini's sizes are binary. */
		AIOD_NOTICE("admission: device capacity %.1f MiB/s (%llu bytes/s, configured), mode %s",
			    ctx->capacity_Bps / 1048576.0, (unsigned long long)ctx->capacity_Bps,
			    cfg->admission_mode);
		return;
	}
	/* ctx->profile: loaded by tuning.c at start and at each reload, NULL if none. */
	ctx->capacity_Bps = aiod_profile_random_Bps(ctx->profile, cfg->readahead_io_size);
	if (ctx->capacity_Bps > 0) {
		AIOD_NOTICE("admission: device capacity %.1f MiB/s (%llu bytes/s) for %u KiB reads "
			    "(from %s), mode %s", ctx->capacity_Bps / 1048576.0,
			    (unsigned long long)ctx->capacity_Bps, cfg->readahead_io_size >> 10,
			    cfg->admission_profile, cfg->admission_mode);
	} else if (cfg->n_classes > 0 && strcmp(cfg->admission_mode, "off") != 0) {
		AIOD_WARN("admission: device capacity unknown (no [admission] capacity and no "
			  "profile at %s; run aiod --calibrate DIR): every stream is admitted",
			  cfg->admission_profile);
	}
}

/* Say once (at start and at each reload) which way random misses go while rates are owed. */
static void admission_random_log(const struct aiod_ctx *ctx)
{
	const struct aiod_config *cfg = ctx->cfg;
	const struct aiod_profile *p = ctx->profile;

	if (cfg->local_random_us == 0 || p == NULL || p->request_us == 0) {
		AIOD_INFO("admission: while a rate is owed, random misses go through aiod (%s)",
			  cfg->local_random_us == 0 ? "[admission] local_random_us = 0"
						    : "no device profile");
	} else if (p->request_us <= cfg->local_random_us) {
		AIOD_NOTICE("admission: the device answers a random read in %u us (profile), within "
			    "[admission] local_random_us = %u: smbd reads random misses itself while "
			    "streams play, as long as they are owed at most half the media rate",
			    p->request_us, cfg->local_random_us);
	} else {
		AIOD_INFO("admission: the device answers a random read in %u us (profile), above "
			  "[admission] local_random_us = %u: while a rate is owed, random misses go "
			  "through aiod", p->request_us, cfg->local_random_us);
	}
}

static void admission_promote(struct aiod_ctx *ctx);

void aiod_admission_init(struct aiod_ctx *ctx)
{
	admission_capacity(ctx);
	/* A reload may have made room (capacity, headroom, mode) for demoted streams. */
	admission_promote(ctx);
	admission_random_log(ctx);
	/* What a request costs the device, for the engine's seek-saving order (engine.h). */
	if (ctx->engine != NULL) {
		aiod_engine_set_costs(ctx->engine,
				      ctx->profile != NULL ? ctx->profile->request_us * 1000ull : 0,
				      aiod_profile_media_Bps(ctx->profile));
	}
	aiod_admission_publish(ctx);
}

/*
 * Time the device needs for one read-ahead request of every admitted
 * stream: io_size at the calibrated (or configured) random-read rate, times
 * the streams. 0 when the capacity is unknown.
 */
uint64_t aiod_stream_round_ns(const struct aiod_ctx *ctx)
{
	unsigned __int128 ns;

	if (ctx->capacity_Bps == 0 || ctx->streams == 0) {
		return 0;
	}
	ns = (unsigned __int128)ctx->cfg->readahead_io_size * ctx->streams * 1000000000ull /
	     ctx->capacity_Bps;
	/* Beyond a few seconds the device is overcommitted anyway: keep deadlines meaningful. */
	return ns > 5000000000ull ? 5000000000ull : (uint64_t)ns;
}

/*
 * One stream more or fewer: the round of refills every stream deadline is
 * moved by changes (aiod_stream_round_ns()), so the stream reads already
 * queued move with it (aiod_engine_rekey()), or those queued while fewer
 * streams were admitted would sort after the newer streams' reads by the
 * difference: with five 200 Mbit/s streams opened together, the first
 * one's reads waited half a second behind the others' and went late.
 */
static void admission_count(struct aiod_ctx *ctx, int delta)
{
	uint64_t old_round = aiod_stream_round_ns(ctx);

	ctx->streams = (unsigned)((int)ctx->streams + delta);
	if (ctx->engine != NULL) {
		aiod_engine_rekey(ctx->engine, old_round, aiod_stream_round_ns(ctx));
		aiod_engine_set_writeback_behind(ctx->engine, ctx->streams == 0);
	}
	aiod_admission_publish(ctx);
}

uint64_t aiod_admission_limit(const struct aiod_ctx *ctx)
{
	return ctx->capacity_Bps / 100 * (100 - ctx->cfg->admission_headroom_pct);
}

/* Whether need bytes/s more fit under that limit (always when off or unknown). */
static bool admission_fits(const struct aiod_ctx *ctx, uint64_t need)
{
	return strcmp(ctx->cfg->admission_mode, "off") == 0 || ctx->capacity_Bps == 0 ||
	       ctx->reserved_Bps + need <= aiod_admission_limit(ctx);
}

/*
 * Streams that start together. Admission counts the device's steady rate,
 * and a stream's start is more than that: its client fills its buffer and
 * aiod its window (prebuffer_ms + 1 s) as fast as the device goes, in the
 * small requests of the start-up ramp (readahead.c), and the streams catch
 * up on the rest from what their rates leave over of the capacity. Ten
 * 100 Mbit/s streams started together on the emulated disk (125 of its 146
 * MB/s reserved; 1 s client buffer) played clean, eleven (137.5) had 11
 * late chunks in their first 7 s (bench/results/rt-20261129-0352.md), and
 * a mix of 400, 200, 100 and 50 Mbit/s that reserved 137.5 had 30, the last
 * 7 s in (rt-20261129-0951.md); eleven started 500 ms apart play clean.
 *
 * So admission keeps a start-up debt: each admitted stream adds its window,
 * and the debt drains at the capacity the reservations leave over. A stream
 * that opens while there is debt is admitted only if what would be left
 * over then pays the debt and its own window within [admission] startup_s:
 * the eleventh of eleven together finds 250 MB owed and 8.3 MB/s left (33
 * s), the tenth 225 and 20.8 (12 s); eleven opened 500 ms apart find
 * little owed, the earlier ones' windows filled from a device that was not
 * yet busy. One that is not is served as the mode says, and demoted it is
 * admitted once the streams started before it have filled their windows
 * (admission_started(), asked every tick by admission_arm_promote()): a
 * stagger that admission makes. With no debt a stream is never held back
 * by this: it has nobody to wait for. A nominal end of each start-up (its
 * window's length, 2 s) was not enough: the stream demoted from the mix,
 * admitted 2 s in, made three admitted streams late by up to 163 ms 3-5 s
 * in (rt-20261129-1000.md).
 */

/* How often a demoted stream asks again while the start-up debt drains. */
#define AIOD_PROMOTE_TICK_MS 500

/* A class stream's window at bps: its prebuffer and a second (stream.c), bytes. */
static uint64_t admission_window_bytes(const struct aiod_open *o, uint64_t bps)
{
	return bps / 8 * (o->file->sclass->prebuffer_ms + 1000ull) / 1000;
}

/* The start-up debt at now: drained at the capacity the reservations leave over. */
static uint64_t admission_debt(struct aiod_ctx *ctx, uint64_t now)
{
	if (ctx->startup_debt > 0 && now > ctx->startup_at_ns &&
	    ctx->reserved_Bps < ctx->capacity_Bps) {
		unsigned __int128 paid = (unsigned __int128)(ctx->capacity_Bps - ctx->reserved_Bps) *
					 (now - ctx->startup_at_ns) / 1000000000ull;

		ctx->startup_debt = paid >= ctx->startup_debt ? 0 :
				    ctx->startup_debt - (uint64_t)paid;
	}
	ctx->startup_at_ns = now;
	return ctx->startup_debt;
}

/* Whether the start-up check applies to o: on, a class stream, a capacity to count against. */
static bool admission_checks_startup(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	return ctx->cfg->admission_startup_s != 0 && o->file->sclass != NULL &&
	       strcmp(ctx->cfg->admission_mode, "off") != 0 && ctx->capacity_Bps != 0;
}

/*
 * Whether o, opening now at bps, starts in time next to the streams still
 * starting: their windows paid within startup_s (the debt), and no
 * client's data late in the start-up plan. Not while a stream demoted for
 * its start waits: that one goes first (admission_promote()). why says
 * what failed.
 */
static bool admission_starts_in_time(struct aiod_ctx *ctx, const struct aiod_open *o,
				     uint64_t bps, char *why, size_t whylen)
{
	uint64_t need = bps / 8, debt, spare;

	if (!admission_checks_startup(ctx, o)) {
		return true;
	}
	debt = admission_debt(ctx, aiod_now_ns());
	if (debt == 0) {
		return true;
	}
	spare = ctx->reserved_Bps + need < ctx->capacity_Bps ?
		ctx->capacity_Bps - ctx->reserved_Bps - need : 0;
	if (ctx->demoted != NULL || spare == 0 ||
	    debt + admission_window_bytes(o, bps) > spare * ctx->cfg->admission_startup_s) {
		snprintf(why, whylen, "the streams started before it still owe %llu bytes of "
			 "their windows, and the %llu bytes/s it would leave over do not pay that "
			 "and its own within [admission] startup_s = %u s%s",
			 (unsigned long long)debt, (unsigned long long)spare,
			 ctx->cfg->admission_startup_s,
			 ctx->demoted != NULL ? " (a stream demoted before it waits)" : "");
		return false;
	}
	return aiod_admission_plan_holds(ctx, o, bps, why, whylen);
}

/*
 * Whether a demoted stream may be admitted as far as starting goes: once
 * the streams started before it have filled their windows (no debt). As
 * soon as the debt allowed it (startup_s), a 200 Mbit/s stream demoted
 * from the mix of 400, 200, 100 and 50 was admitted 3.5 s in, with 116 MB
 * still owed and 8.1 MB/s left over, and four admitted streams went late
 * 6-10 s in (bench/results/rt-20261129-1007.md); the eleventh of eleven
 * 100 Mbit/s streams, admitted 6 s in, was harmless. With the windows
 * full, the others' leads are what its start is taken from.
 */
static bool admission_started(struct aiod_ctx *ctx, const struct aiod_open *o)
{
	return !admission_checks_startup(ctx, o) || admission_debt(ctx, aiod_now_ns()) == 0;
}

static void admission_promote_timer(struct tevent_context *ev, struct tevent_timer *te,
				    struct timeval t, void *private_data);

/*
 * While a demoted stream waits and start-up debt drains, or the start-up
 * plan held one back (again), ask again every AIOD_PROMOTE_TICK_MS.
 * Otherwise room comes only from a close or a reload, which promote
 * themselves. A timer that cannot be had is retried at the next demotion or
 * promotion.
 */
static void admission_arm_promote(struct aiod_ctx *ctx, bool again)
{
	if (ctx->ev == NULL || ctx->demoted == NULL || ctx->promote_timer != NULL ||
	    (!again && admission_debt(ctx, aiod_now_ns()) == 0)) {
		return;
	}
	ctx->promote_timer = tevent_add_timer(ctx->ev, ctx,
					      tevent_timeval_current_ofs(0, AIOD_PROMOTE_TICK_MS * 1000),
					      admission_promote_timer, ctx);
	if (ctx->promote_timer == NULL) {
		AIOD_ERR("admission: no timer to admit demoted streams once others started: "
			 "they wait for a close or a reload");
	}
}

static void admission_promote_timer(struct tevent_context *ev, struct tevent_timer *te,
				    struct timeval t, void *private_data)
{
	struct aiod_ctx *ctx = private_data;

	(void)ev;
	(void)te;
	(void)t;
	ctx->promote_timer = NULL;
	admission_promote(ctx);	/* and arms the next look if one still waits */
}

static void admission_reserve(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t bps)
{
	/* Paid down at the old reservations up to now; its window owed from now on. */
	(void)admission_debt(ctx, aiod_now_ns());
	if (admission_checks_startup(ctx, o)) {
		ctx->startup_debt += admission_window_bytes(o, bps);
	}
	o->rate_bps = bps;
	o->reserved = true;
	o->admitted_prev = NULL;
	o->admitted_next = ctx->admitted;
	if (ctx->admitted != NULL) {
		ctx->admitted->admitted_prev = o;
	}
	ctx->admitted = o;
	o->file->reserved_bps += bps;
	ctx->reserved_Bps += bps / 8;
	admission_count(ctx, +1);
}

static void demoted_link(struct aiod_ctx *ctx, struct aiod_open *o)
{
	if (o->demoted) {
		return;
	}
	o->demoted = true;
	o->demoted_prev = ctx->demoted_last;
	o->demoted_next = NULL;
	if (ctx->demoted_last != NULL) {
		ctx->demoted_last->demoted_next = o;
	} else {
		ctx->demoted = o;
	}
	ctx->demoted_last = o;
}

static void demoted_unlink(struct aiod_ctx *ctx, struct aiod_open *o)
{
	if (!o->demoted) {
		return;
	}
	if (o->demoted_prev != NULL) {
		o->demoted_prev->demoted_next = o->demoted_next;
	} else {
		ctx->demoted = o->demoted_next;
	}
	if (o->demoted_next != NULL) {
		o->demoted_next->demoted_prev = o->demoted_prev;
	} else {
		ctx->demoted_last = o->demoted_prev;
	}
	o->demoted = false;
	o->demoted_prev = o->demoted_next = NULL;
}

/*
 * Room was made (a stream closed, the capacity or mode changed on reload):
 * the class streams served best effort since their open get the
 * reservation they asked for, oldest first, as far as it goes. Until this,
 * a stream demoted while eight others played stayed best effort after they
 * closed, and next to new streams it went late where admitted it plays
 * clean (bench/results/rt-20261129-0036.md: the demoted one of nine 286
 * chunks late; -0040.md, admission off: all nine clean). Its timeline
 * starts again where it reads: what it fell behind as best effort is not a
 * debt its deadlines make the device repay at once.
 */
static void admission_promote(struct aiod_ctx *ctx)
{
	struct aiod_open *o, *next;
	bool held = false;

	for (o = ctx->demoted; o != NULL; o = next) {
		uint64_t bps = o->file->sclass->bitrate;
		char why[384] = "";

		next = o->demoted_next;
		if (o->closing || !admission_fits(ctx, bps / 8) || !admission_started(ctx, o)) {
			continue;
		}
		/*
		 * And the start-up plan: promoted, it starts again from an empty
		 * client buffer, and its window is filled before the others'
		 * thin leads. Promoted once the debt was paid alone, a stream
		 * demoted from 9 opened together made 2 of the 8 admitted go late
		 * 1.3 s later (2026-12-06, 0.5 s clients, next to a greedy reader).
		 */
		if (!aiod_admission_plan_holds(ctx, o, bps, why, sizeof(why))) {
			AIOD_DEBUG("admission: %s stays best effort: %s", o->name, why);
			held = true;
			continue;
		}
		demoted_unlink(ctx, o);
		admission_reserve(ctx, o, bps);
		/* It plays on from its best-effort lead: no start-up for best effort to give way to. */
		if (o->play_t0_ns != 0) {
			o->play_t0_ns = aiod_now_ns();
			o->play_off0 = o->next_off;
		}
		AIOD_NOTICE("admission: %s, served best effort until now, admitted at %llu bit/s "
			    "(%u streams, %llu bytes/s reserved)", o->name, (unsigned long long)bps,
			    ctx->streams, (unsigned long long)ctx->reserved_Bps);
	}
	/* Room made while streams still start: the ones left ask again as the debt drains. */
	admission_arm_promote(ctx, held);
}

int aiod_admission_admit(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t bps)
{
	const struct aiod_config *cfg = ctx->cfg;
	uint64_t need = bps / 8;
	char why[384] = "";
	bool fits;

	if (o->reserved) {
		return 0;
	}
	fits = admission_fits(ctx, need);
	if (!fits || !admission_starts_in_time(ctx, o, bps, why, sizeof(why))) {
		if (!fits) {
			snprintf(why, sizeof(why), "%u streams already reserve %llu of %llu bytes/s",
				 ctx->streams, (unsigned long long)ctx->reserved_Bps,
				 (unsigned long long)aiod_admission_limit(ctx));
		}
		if (strcmp(cfg->admission_mode, "refuse") == 0) {
			ctx->admission_refused++;
			AIOD_WARN("admission: refused stream %s at %llu bit/s: %s", o->name,
				  (unsigned long long)bps, why);
			return -ENOBUFS;
		}
		ctx->admission_demoted++;
		o->rate_bps = 0;
		/*
		 * A class's stream asks again when room is made (admission_promote())
		 * and, while start-up debt drains, every tick (admission_arm_promote()).
		 */
		if (o->file->sclass != NULL) {
			demoted_link(ctx, o);
			admission_arm_promote(ctx, false);
		}
		AIOD_NOTICE("admission: %s at %llu bit/s served best effort: %s%s", o->name,
			    (unsigned long long)bps, why,
			    fits ? " (admitted once they do)" : "");
		return 0;
	}
	demoted_unlink(ctx, o);
	admission_reserve(ctx, o, bps);
	AIOD_INFO("admission: stream %s at %llu bit/s admitted (%u streams, %llu bytes/s "
		  "reserved%s%s)", o->name, (unsigned long long)bps, ctx->streams,
		  (unsigned long long)ctx->reserved_Bps, why[0] != '\0' ? "; " : "", why);
	return 0;
}

void aiod_admission_release(struct aiod_ctx *ctx, struct aiod_open *o)
{
	demoted_unlink(ctx, o);
	if (!o->reserved) {
		return;
	}
	o->reserved = false;
	if (o->admitted_prev != NULL) {
		o->admitted_prev->admitted_next = o->admitted_next;
	} else {
		ctx->admitted = o->admitted_next;
	}
	if (o->admitted_next != NULL) {
		o->admitted_next->admitted_prev = o->admitted_prev;
	}
	o->admitted_prev = o->admitted_next = NULL;
	(void)admission_debt(ctx, aiod_now_ns());	/* paid down at the old reservations */
	o->file->reserved_bps -= o->rate_bps;
	ctx->reserved_Bps -= o->rate_bps / 8;
	admission_count(ctx, -1);
	admission_promote(ctx);
}

uint64_t aiod_admission_startup_debt(struct aiod_ctx *ctx)
{
	return admission_debt(ctx, aiod_now_ns());
}

uint64_t aiod_admission_waiting(const struct aiod_ctx *ctx)
{
	uint64_t n = 0;

	for (const struct aiod_open *o = ctx->demoted; o != NULL; o = o->demoted_next) {
		n++;
	}
	return n;
}

bool aiod_admission_nothing_owed(const struct aiod_ctx *ctx)
{
	return ctx->streams == 0 && ctx->recorders == 0 &&
	       aiod_qos_policy_reserved(ctx->cfg->qos) == 0;
}

/*
 * Whether a random read a client makes itself cannot cost an owed rate its
 * deadline, even while rates are owed: the calibrated device answers a
 * random read within [admission] local_random_us (an SSD, not a spindle's
 * seek) and what is owed leaves it half its media rate. Then aiod's order
 * buys nothing a random reader should pay a round trip for. No profile: the
 * device is unknown, and aiod keeps ordering.
 */
static bool admission_random_harmless(const struct aiod_ctx *ctx)
{
	const struct aiod_config *cfg = ctx->cfg;
	const struct aiod_profile *p = ctx->profile;
	uint64_t media, owed;

	if (cfg->local_random_us == 0 || p == NULL || p->request_us == 0 ||
	    p->request_us > cfg->local_random_us) {
		return false;
	}
	media = aiod_profile_media_Bps(p);
	owed = ctx->reserved_Bps + aiod_qos_policy_reserved(cfg->qos);
	return media > 0 && owed <= media / 2;
}

void aiod_admission_publish(struct aiod_ctx *ctx)
{
	/*
	 * A client's own read reaches the device when the kernel sends it, not
	 * when EDF would: harmless while no deadline or reservation is there to
	 * keep, which is what aiod's ordering is for, or while the device is
	 * too fast for one to matter. Demoted streams hold no promise and do
	 * not count.
	 */
	aiod_region_set_random(&ctx->region, aiod_admission_nothing_owed(ctx),
			       admission_random_harmless(ctx));
}
