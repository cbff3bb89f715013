/*
 * Best effort's share of the device while streams, recorders or QoS
 * reservations are owed a rate: admission.c decides what is owed, this is
 * when a best-effort read is due with what is left, in device time.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "aiod.h"
#include "profile.h"
#include "qos_policy.h"
#include "streams.h"

/*
 * Best effort's share of the device while rates are owed: a virtual clock.
 *
 * A best-effort read used to be due best_effort_deadline_ms after it was
 * asked for, whatever was queued. EDF served it only once that came before
 * every stream's read-ahead, and streams keep read-ahead queued several
 * seconds ahead (their work-conserving lead, stream.c): a greedy reader got
 * its outstanding bytes per deadline, 2.9 MB/s next to ten 100 Mbit/s
 * streams on the emulated disk that reserved 125 of its 146 MB/s
 * (bench/results/rt-20261129-0019.md), and a stream admission demoted fell
 * 25 s behind (rt-20261129-0345.md).
 *
 * What admission could still promise a stream is best effort's: the clock
 * advances by each best-effort request's device time (the profile's
 * request_us and the transfer at the media rate) divided by that fraction
 * of the capacity (less the headroom, which pays for streams' requests
 * smaller than io_size: with all of the rest, ten 100 Mbit/s streams
 * started together had a chunk late), and a request is due its device time
 * after the clock reaches it. Best effort, all of it together, is then due
 * at no more than that rate, and EDF still keeps the streams' deadlines,
 * which add up to the rest of the device (and start a round of refills
 * early, stream.c, which covers the burst best effort may be ahead).
 * best_effort_deadline_ms stays the latest a best-effort read is due, so
 * nothing is due later than before, and the clock never runs further ahead
 * than that: a reader that asked for more than the share does not leave
 * the next reader (a demoted stream) behind its backlog.
 */
static uint64_t admission_device_ns(const struct aiod_ctx *ctx, uint64_t len)
{
	const struct aiod_profile *p = ctx->profile;
	uint64_t media = aiod_profile_media_Bps(p);

	if (p != NULL && p->request_us != 0 && media != 0) {
		return p->request_us * 1000ull +
		       (uint64_t)((unsigned __int128)len * 1000000000ull / media);
	}
	/* A configured capacity only: what the device moves in read-ahead requests. */
	return (uint64_t)((unsigned __int128)len * 1000000000ull / ctx->capacity_Bps);
}

void aiod_best_effort_hold(struct aiod_ctx *ctx, uint64_t until)
{
	if (until > ctx->be_hold_ns) {
		ctx->be_hold_ns = until;
	}
}

/*
 * How long best effort counts as there for admission's start-up plan
 * (admission.c): a reader it holds back during a start is served once a
 * deadline, so one deadline without a read is a reader between reads; two
 * are a reader gone.
 */
static uint64_t best_effort_recent_ns(const struct aiod_ctx *ctx)
{
	return 2ull * ctx->cfg->be_deadline_ms * 1000000ull;
}

void aiod_best_effort_seen(struct aiod_ctx *ctx, uint64_t len, uint64_t now)
{
	if (len == 0) {
		return;
	}
	if (ctx->be_seen_ns == 0 || now - ctx->be_seen_ns > best_effort_recent_ns(ctx) ||
	    len > ctx->be_seen_len) {
		ctx->be_seen_len = len;
	}
	ctx->be_seen_ns = now;
}

uint64_t aiod_best_effort_recent(const struct aiod_ctx *ctx, uint64_t now)
{
	if (ctx->be_seen_ns == 0 || now - ctx->be_seen_ns > best_effort_recent_ns(ctx)) {
		return 0;
	}
	return ctx->be_seen_len;
}

/* Claims this close together are one burst: one read and its read-ahead, in one turn. */
#define AIOD_BE_BURST_NS 1000000ull

uint64_t aiod_best_effort_due(struct aiod_ctx *ctx, uint64_t len, uint64_t now)
{
	uint64_t latest = now + (uint64_t)ctx->cfg->be_deadline_ms * 1000000ull;
	uint64_t owed = ctx->reserved_Bps, room = aiod_admission_limit(ctx);
	uint64_t start, cost, next, due;

	/*
	 * Not next to a QoS reservation: a reserved flow's read-ahead is due
	 * by its reservation from where it reads, not along a timeline with a
	 * round to spare, and it keeps its rate by going first once it fell
	 * behind (stream.c). Next to best effort due at its share, the QoS
	 * scenario's bay (32 MiB/s reserved, three greedy readers and an
	 * editor beside it) had 365 late chunks where it had none.
	 */
	if (ctx->capacity_Bps == 0 || owed >= room || now < ctx->be_hold_ns ||
	    aiod_qos_policy_reserved(ctx->cfg->qos) != 0) {
		return latest;	/* no share known, none left, a stream is starting, QoS */
	}
	start = ctx->be_clock_ns > now ? ctx->be_clock_ns : now;
	cost = admission_device_ns(ctx, len);
	next = start + (uint64_t)((unsigned __int128)cost * ctx->capacity_Bps / (room - owed));
	ctx->be_clock_ns = next < latest ? next : latest;
	/*
	 * Due when its turn on the clock comes plus its own device time, not
	 * when its share of the clock is used up: a reader that waits for
	 * each read before it makes the next (a copy, a demoted stream) never
	 * has a backlog on the clock, and due at the end of its share every
	 * read would wait share-fold its device time. What is due in any
	 * stretch of time is still at most the share and one burst.
	 *
	 * A burst is what one read claims at once: the blocks it misses and
	 * the read-ahead it starts. Those are due one right after the other,
	 * so that the device reads them back to back without a seek between;
	 * each at its own turn on the clock, a stream's refill fell between
	 * the two: with 8 streams and a greedy reader the emulated disk
	 * sought 198 times where it had 160 with best effort due all at once,
	 * and the reader got 9 % less (rt-ab-20261129-0736.md).
	 */
	due = start + cost;
	if (now - ctx->be_burst_ns < AIOD_BE_BURST_NS && ctx->be_burst_due + cost < due) {
		due = ctx->be_burst_due + cost;
	}
	if (due > latest) {
		due = latest;
	}
	ctx->be_burst_ns = now;
	ctx->be_burst_due = due;
	return due;
}
