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
#include "streams.h"

static uint32_t io_blocks(const struct aiod_ctx *ctx)
{
	uint32_t n = ctx->cfg->readahead_io_size / ctx->cache->block_size;

	return n < 1 ? 1 : (n > RTIO_MAX_SEGS ? RTIO_MAX_SEGS : n);
}

/*
 * Blocks the next read-ahead request of o carries: io_size, and during a
 * stream's start-up twice the client's read, doubling with every request.
 * Streams opened together each need their first data within the client's
 * prebuffer; one io_size request each (114 ms on a disk at 16 MiB) would
 * serve them one after the other, the last a whole round late. Small first
 * requests give every stream its start quickly, and the lead they build pays
 * for the large requests that follow.
 */
static uint32_t request_blocks(const struct aiod_ctx *ctx, const struct aiod_open *o,
			       uint32_t window)
{
	uint32_t n = io_blocks(ctx);

	if (o->rate_bps > 0 && o->ra_ramp < 16) {
		uint64_t ramp = (uint64_t)(o->read_blocks > 0 ? o->read_blocks : 1) * 2 << o->ra_ramp;

		if (ramp < n) {
			n = (uint32_t)ramp;
		}
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
	per_io = request_blocks(ctx, o, n);
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

			if (aiod_load_submit(ctx, o, run, nrun, aiod_stream_deadline(ctx, o, start * bs)) != 0) {
				return;
			}
			ctx->st.readahead_blocks += nrun;
			o->ra_next_blk = start + nrun;
			nrun = 0;
			if (o->rate_bps > 0 && o->ra_ramp < UINT8_MAX) {
				o->ra_ramp++;
			}
			per_io = request_blocks(ctx, o, n);
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
