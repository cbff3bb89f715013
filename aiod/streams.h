/*
 * Stream classes, the pattern analyzer and deadlines (stream.c);
 * reservations against the device's capacity (admission.c); best effort's
 * share of what they leave (besteffort.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_STREAMS_H
#define AIOD_STREAMS_H

#include "aiod.h"
#include "startup_plan.h"

/* admission.c */
/* Work out the device capacity (configured, or the --calibrate profile); publish. */
void aiod_admission_init(struct aiod_ctx *ctx);
/* o reads a stream at bps: reserve it, demote it to best effort, or refuse (-ENOBUFS). */
int aiod_admission_admit(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t bps);
void aiod_admission_release(struct aiod_ctx *ctx, struct aiod_open *o);
/*
 * After admitted streams, recorders or the QoS policy changed: whether
 * clients may read random misses themselves now (aiod_region_set_random_local).
 */
void aiod_admission_publish(struct aiod_ctx *ctx);
/*
 * Whether nothing is owed a rate: no admitted stream or recorder, no QoS
 * reservation. Then aiod's ordering keeps no promise, random misses are the
 * client's own and best-effort read-ahead is spread by distance.
 */
bool aiod_admission_nothing_owed(const struct aiod_ctx *ctx);
/* Class streams served best effort now, waiting for room (admitted when it is made). */
uint64_t aiod_admission_waiting(const struct aiod_ctx *ctx);
/* Bytes of their windows the streams that started still owe (admission's start-up check). */
uint64_t aiod_admission_startup_debt(struct aiod_ctx *ctx);
/* What admitted streams may reserve: the capacity less the headroom, bytes/s. */
uint64_t aiod_admission_limit(const struct aiod_ctx *ctx);
/*
 * The device as the start-up plan and read-ahead's request sizes see it
 * (startup_plan.h): the profile's request time and media rate, the cache
 * block, io_size. False (and *d zeroed) without a profile that has both.
 */
bool aiod_admission_plan_device(const struct aiod_ctx *ctx, struct aiod_plan_device *d);
/*
 * admission_plan.c: whether every admitted stream and o, opening now (or
 * promoted now) at bps, get their data before their clients play it, as
 * aiod's read-ahead will serve them (startup_plan.h), each client's buffer
 * its class's prebuffer_ms, and at least aiod_plan_margin_ns() early: what
 * the plan cannot see. 1 s buffers: nine 100 Mbit/s streams opened
 * together hold (ten were measured clean, bench/results/rt-20261129-0352.md;
 * the tenth is planned less than the margin early), 0.5 s: eight
 * (rt-20261206-1740.md). Without a profile (request time, media rate) there
 * is nothing to plan with: true. Otherwise why says what held it back, or
 * how close it came.
 */
bool aiod_admission_plan_holds(struct aiod_ctx *ctx, const struct aiod_open *o, uint64_t bps,
			       char *why, size_t whylen);

/* besteffort.c */
/*
 * While rates are owed: when a best-effort read of len bytes asked for at
 * now is due, on a virtual clock that gives best effort the capacity nobody
 * reserved; claims that device time (len 0 claims none). Never later than
 * best_effort_deadline_ms after now.
 */
uint64_t aiod_best_effort_due(struct aiod_ctx *ctx, uint64_t len, uint64_t now);
/* A stream starts (stream.c): best effort has no share of the device until until (ns). */
void aiod_best_effort_hold(struct aiod_ctx *ctx, uint64_t until);
/* A best-effort read of len bytes from the device is asked for at now (stream.c). */
void aiod_best_effort_seen(struct aiod_ctx *ctx, uint64_t len, uint64_t now);
/*
 * The largest best-effort device read asked for within two
 * best_effort_deadline_ms before now, bytes; 0: none that recently.
 */
uint64_t aiod_best_effort_recent(const struct aiod_ctx *ctx, uint64_t now);

/* stream.c */
void aiod_stream_classify(struct aiod_ctx *ctx, struct aiod_open *o);
/* Whether o's stream is past its start-up, so a read that waits counts as a deadline miss. */
bool aiod_stream_playing(const struct aiod_open *o, uint64_t off);
/* One read-ahead request ([readahead] io_size) in cache blocks: 1 to RTIO_MAX_SEGS. */
static inline uint32_t aiod_stream_io_blocks(const struct aiod_ctx *ctx)
{
	uint32_t n = ctx->cfg->readahead_io_size / ctx->cache->block_size;

	return n < 1 ? 1 : (n > RTIO_MAX_SEGS ? RTIO_MAX_SEGS : n);
}
/* o's client buffer: its class's prebuffer_ms, 1 s without a class. */
static inline uint32_t aiod_stream_prebuffer_ms(const struct aiod_open *o)
{
	return o->file->sclass != NULL ? o->file->sclass->prebuffer_ms : 1000;
}
/* o's read-ahead target in time: its client's buffer and a second (ns). */
static inline uint64_t aiod_stream_window_ns(const struct aiod_open *o)
{
	return (aiod_stream_prebuffer_ms(o) + 1000ull) * 1000000ull;
}
/* Read-ahead blocks for a best-effort sequential reader now (smaller while streams are open). */
uint32_t aiod_stream_best_effort_blocks(const struct aiod_ctx *ctx);
/* Account a read of [off, off+len) by o; returns how many blocks past the read to prefetch. */
uint32_t aiod_stream_observe(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint32_t len);
/*
 * The first blocks of o's file that stay cached after playback: the class's
 * prebuffer plus a second, what a replay from the start needs to begin
 * without a seek (0: not a stream).
 */
uint32_t aiod_stream_head_blocks(const struct aiod_ctx *ctx, const struct aiod_open *o);
/*
 * Whether o's read ending at end played block blkno through: o is a stream,
 * the read went to the block's end, and the block is past the head. Such
 * a block is the cached data a stream is least likely to want soon; the
 * cache evicts it first (aiod_cache_demote), on every read path.
 */
bool aiod_stream_played(const struct aiod_ctx *ctx, const struct aiod_open *o, uint64_t blkno,
			uint64_t end);
/* Device time of one read-ahead request per admitted stream (0: capacity unknown). */
uint64_t aiod_stream_round_ns(const struct aiod_ctx *ctx);

/*
 * When the len bytes at file offset off must be in the cache for o's
 * reader; for a stream, moved earlier by one round of refills; for a QoS
 * flow behind its reservation, at the reserved rate; for best effort, after
 * a read its client waits for by up to a best-effort deadline, the farther
 * ahead the later, and next to rates owed at best effort's share of the
 * device (aiod_best_effort_due(): call it for a request that is
 * queued, it claims the device time of len).
 */
uint64_t aiod_stream_deadline(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off,
			      uint64_t len);
/*
 * When a read of len bytes o's client waits for now must be in the cache
 * (before any read-ahead of o's); claims best effort's share like
 * aiod_stream_deadline().
 */
uint64_t aiod_stream_demand_deadline(struct aiod_ctx *ctx, const struct aiod_open *o,
				    uint64_t len);

#endif
