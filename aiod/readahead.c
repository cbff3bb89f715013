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

/* Prefetch up to n blocks after block last for a sequential reader. */
void aiod_readahead(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t last, uint64_t size,
		      uint32_t n)
{
	struct aiod_cache *c = ctx->cache;
	uint32_t bs = c->block_size;
	uint64_t first = last + 1;
	uint64_t nblk_file = (size + bs - 1) / bs;
	uint64_t stop = last + n + 1 < nblk_file ? last + n + 1 : nblk_file;
	uint32_t per_io = io_blocks(ctx);
	/* Leave room for demand reads: prefetch never takes the last 16 free blocks. */
	uint32_t reserve = 16;
	struct aiod_block *run[RTIO_MAX_SEGS];
	uint32_t nrun = 0;

	if (n == 0) {
		return;
	}
	if (per_io > n) {
		per_io = n;
	}
	if (o->ra_next_blk > first) {
		/*
		 * Already asked for up to there. Refill only when a whole io_size
		 * request fits in the window again: topping it up block by block
		 * would cost a seek per block on a disk.
		 */
		if (o->ra_next_blk >= stop || (stop - o->ra_next_blk < per_io && stop < nblk_file)) {
			return;
		}
		first = o->ra_next_blk;
	}
	for (uint64_t blk = first; blk <= stop; blk++) {
		bool cached = blk < stop &&
			      aiod_cache_find(c, o->file->dev, o->file->ino, blk) != NULL;
		bool room = c->free.count + c->lru.count > reserve;

		/* A run ends at a cached block, at the end, at io_size or when space runs out. */
		if (nrun > 0 && (blk == stop || cached || nrun == per_io || !room)) {
			uint64_t start = run[0]->blkno;
			if (aiod_load_submit(ctx, o, run, nrun, aiod_stream_deadline(ctx, o, start * bs)) != 0) {
				return;
			}
			ctx->st.readahead_blocks += nrun;
			o->ra_next_blk = start + nrun;
			nrun = 0;
		}
		if (blk == stop || !room) {
			return;
		}
		if (cached) {
			o->ra_next_blk = blk + 1;
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

/*
 * The common case, answered without a system call: every block of the range
 * is cached and full enough. Whatever aiod cached is the file's content
 * (writes go through aiod, truncates are reported), so no fstat() is needed
 * to find EOF: a block holds data up to EOF or to its end.
 */
