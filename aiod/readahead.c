/*
 * Read-ahead: what a sequential reader or a stream will read next, loaded
 * before it asks, in requests of [readahead] io_size, with deadlines from
 * the stream's timeline (stream.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>

#include "dataplane.h"
#include "log.h"
#include "startup_plan.h"
#include "streams.h"

/*
 * The smallest request (blocks) for o with which one round of requests, one
 * per admitted stream, takes no longer than playing what each request brings:
 * below it every round loses lead, and the streams that start together never
 * catch up (aiod_plan_sustain_blocks(): the start-up plan admission asks
 * sizes requests with the same arithmetic). With mixed bitrates a 200 Mbit/s
 * stream needs larger requests than a 50 Mbit/s one, and neither is sized as
 * if every stream were as fast as the fastest. 0 when there is no profile.
 */
static uint32_t sustain_blocks(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	struct aiod_plan_device d;

	if (!aiod_admission_plan_device(ctx, &d)) {
		return 0;
	}
	return aiod_plan_sustain_blocks(&d, ctx->streams, ctx->reserved_Bps, o->rate_bps / 8);
}

uint64_t aiod_readahead_sustain_bytes(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	uint32_t n = sustain_blocks(ctx, o);

	if (n > aiod_stream_io_blocks(ctx)) {
		n = aiod_stream_io_blocks(ctx);
	}
	return (uint64_t)n * ctx->cache->block_size;
}

uint64_t aiod_readahead_first_bytes(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	uint32_t n = aiod_plan_request_blocks(0, o->read_blocks, sustain_blocks(ctx, o),
					      aiod_stream_io_blocks(ctx));

	return (uint64_t)n * ctx->cache->block_size;
}

/*
 * Blocks the next read-ahead request of o carries: io_size, and during a
 * sequential reader's start-up less, growing by a third with every request. Streams
 * opened together each need their first data within the client's prebuffer;
 * one io_size request each (114 ms on a disk at 16 MiB) would serve them one
 * after the other, the last a whole round late. Small first requests give
 * every stream its start quickly; the lead they build pays for the larger
 * ones that follow. The ramp starts at twice the client's read, or at the
 * size that keeps up with all streams (sustain_blocks) if that is larger;
 * growing faster than a third per request spends lead faster than rounds of
 * small requests build it (worked through for 8 streams of 100 Mbit/s on the
 * emulated disk, 0.5 s client buffer: doubling is late by ~120 ms in the
 * fourth round, a third is not).
 */
static uint32_t request_blocks(const struct aiod_ctx *ctx, const struct aiod_open *o,
			       uint32_t window, uint64_t lead)
{
	uint32_t n = aiod_stream_io_blocks(ctx);

	/*
	 * A reader that starts with a lead of a whole request already (a replay
	 * whose next blocks are still cached) has no start-up to speed up:
	 * small requests would only cost it seeks. Best-effort sequential
	 * readers ramp too (sustain_blocks() is 0 for them): a file no class
	 * names may still be played, and readers started together each need
	 * their first data within a client's buffer.
	 *
	 * Streams opened together are admitted one by one: the first ones
	 * start their ramp from what keeps up with one or two streams. Once
	 * the others are in, every request is at least what keeps up with all
	 * of them (sustain_blocks()), or each round of refills loses lead
	 * (worked through for 8 streams at 100 Mbit/s on the emulated disk:
	 * starting at 2 blocks leaves 8 ms of margin in the ramp, at the 4
	 * that keep up with 8 streams 70). The start-up plan sizes requests
	 * with the same rule (aiod_plan_request_blocks()).
	 */
	if (!(o->ra_size == 0 && lead >= n)) {
		n = aiod_plan_request_blocks(o->ra_size, o->read_blocks, sustain_blocks(ctx, o), n);
	}
	return n < window ? n : window;
}

/*
 * The first block from first on (below stop) that is neither cached nor
 * being loaded: where read-ahead goes on. A stream's window is checked block
 * by block from where its reader is, not from where read-ahead once got to:
 * a block cached by an earlier playback, or read ahead and then evicted, is
 * found missing here and read again before it is due. Each cached block of
 * the window is touched, so eviction prefers blocks nobody is about to read.
 * A bulk reader's window is only checked at its next block (its hot path
 * stays short); if that one went missing, the whole window is checked.
 */
static uint64_t first_hole(struct aiod_ctx *ctx, const struct aiod_open *o, uint64_t first,
			   uint64_t stop)
{
	struct aiod_cache *c = ctx->cache;
	bool stream = o->rate_bps > 0;
	uint64_t blk = first;

	if (!stream && o->ra_next_blk > first &&
	    aiod_cache_find(c, o->file->dev, o->file->ino, first) != NULL) {
		blk = o->ra_next_blk;
	}
	for (; blk < stop; blk++) {
		struct aiod_block *b = aiod_cache_find(c, o->file->dev, o->file->ino, blk);

		if (b == NULL) {
			break;
		}
		if (stream) {
			aiod_cache_touch(c, b);
		}
	}
	return blk;
}

/* Prefetch up to n blocks after block last for a sequential reader. */
void aiod_readahead(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t last, uint64_t size,
		      uint32_t n)
{
	struct aiod_cache *c = ctx->cache;
	uint32_t bs = c->block_size;
	uint64_t nblk_file = (size + bs - 1) / bs;
	uint64_t stop = last + n + 1 < nblk_file ? last + n + 1 : nblk_file;
	/* Leave room for demand reads: prefetch never takes the last 16 free blocks. */
	uint32_t reserve = 16;
	struct aiod_block *run[RTIO_MAX_SEGS];
	uint32_t nrun = 0, per_io;
	uint64_t blk;

	if (n == 0) {
		return;
	}
	blk = first_hole(ctx, o, last + 1, stop);
	o->ra_next_blk = blk;	/* may move back: a block evicted before use is read again */
	per_io = request_blocks(ctx, o, n, blk - (last + 1));
	/*
	 * Refill only when a whole request fits in the window again (or the file
	 * ends inside it): topping it up block by block would cost a seek per
	 * block on a disk.
	 */
	if (blk >= stop || (stop - blk < per_io && stop < nblk_file)) {
		return;
	}
	for (; blk <= stop; blk++) {
		bool cached = blk < stop &&
			      aiod_cache_find(c, o->file->dev, o->file->ino, blk) != NULL;
		bool room = c->free.count + c->lru.count > reserve;

		/* A run ends at a cached block, at the end, at the request size or when space runs out. */
		if (nrun > 0 && (blk == stop || cached || nrun == per_io || !room)) {
			uint64_t start = run[0]->blkno;

			if (aiod_load_submit(ctx, o, run, nrun,
					     aiod_stream_deadline(ctx, o, start * bs,
								  (uint64_t)nrun * bs)) != 0) {
				return;
			}
			ctx->st.readahead_blocks += nrun;
			o->ra_next_blk = start + nrun;
			if (o->ra_size < aiod_stream_io_blocks(ctx)) {
				o->ra_size = aiod_plan_ramp_next(nrun, aiod_stream_io_blocks(ctx));
			}
			nrun = 0;
			per_io = request_blocks(ctx, o, n, blk - (last + 1));
			/* The rest of the window waits until a whole request fits. */
			if (stop - blk < per_io && stop < nblk_file) {
				return;
			}
		}
		if (blk == stop || !room) {
			return;
		}
		if (cached) {
			if (nrun == 0) {
				o->ra_next_blk = blk + 1;
			}
			continue;
		}
		run[nrun] = aiod_cache_get(c);
		if (run[nrun] == NULL) {
			return;
		}
		aiod_cache_insert(c, run[nrun], o->file->dev, o->file->ino, blk);
		nrun++;
	}
}
