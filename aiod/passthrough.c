/*
 * A random reader's miss reads only the pages it asked for (issue 12).
 *
 * A miss of the cached path loads whole cache blocks (1 MiB by default).
 * For a sequential reader that is right: the rest of the block is what it
 * reads next. For a random reader of a file larger than the cache it is a
 * loss every time: the rest of the block is evicted before anybody reads it,
 * so a 4 KiB read costs a 1 MiB device read (measured: 4 KiB random reads of
 * a 4 GiB file through a 256 MiB cache ran at a tenth of O_DIRECT's IOPS
 * while the device read 20 times as much as for O_DIRECT, about 230 bytes
 * per byte the client got).
 *
 * Such a read gets "pass-through" blocks instead: taken from the free list
 * (or the LRU) like staging blocks of a write, never hashed, filled with
 * [off rounded down, end rounded up) to the read alignment by one device
 * read per block (one in all for a read up to a block), answered from, and
 * back on the free list at READ1. Because nobody can find them:
 *  - later readers never see their bytes: a write that lands while one is
 *    in flight (WROTE's invalidation, WRITE1's write-through: both look up
 *    hashed blocks only) cannot leave stale data behind; the next read goes
 *    to the file again;
 *  - truncation, outside changes and eviction need not know about them.
 *
 * Why not partial blocks that stay cached (a valid range per block)? With
 * 1 MiB blocks each 4 KiB page kept would pin a whole block: a 256 MiB
 * cache would hold 256 random pages, so re-reads of a file larger than the
 * cache would almost never hit, while every user of the block's validity
 * (hits, write-through, truncation, invalidation) would have to learn
 * ranges. Files that do fit keep the cached path (aiod_passthrough_wanted()):
 * their random re-reads hit in aiod's cache, which reads each block once.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "dataplane.h"
#include "log.h"
#include "streams.h"

/* The page size every read is rounded to at least: the kernel reads pages anyway. */
#define PASSTHROUGH_MIN_ALIGN 4096u

/*
 * What o's reads are rounded to: an O_DIRECT descriptor needs offset,
 * length and buffer aligned to the file's direct I/O alignment (statx
 * STATX_DIOALIGN; 4 KiB covers 512-byte and 4 KiB sectors when the kernel
 * does not say). 0 when it exceeds a cache block: such a file keeps the
 * cached path, whose whole blocks are aligned.
 */
static uint32_t read_align(struct aiod_ctx *ctx, struct aiod_open *o)
{
	uint32_t align = PASSTHROUGH_MIN_ALIGN;
	struct statx stx;

	if (o->read_align != 0) {
		return o->read_align == UINT32_MAX ? 0 : o->read_align;
	}
	/* Buffers are cache blocks, page aligned like the whole blocks the cached path reads. */
	if (o->direct_fd >= 0 &&
	    statx(o->direct_fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) != 0) {
		while (align < stx.stx_dio_offset_align && align <= ctx->cache->block_size) {
			align <<= 1;	/* a power of two that the block size is a multiple of */
		}
	}
	if (align > ctx->cache->block_size) {
		AIOD_INFO("%s: direct I/O alignment above the block size: random reads "
			  "load whole blocks", o->name);
		o->read_align = UINT32_MAX;
		return 0;
	}
	o->read_align = align;
	return align;
}

/*
 * A file this small is cached whole even when read at random: reading it
 * costs the device at most its size once, and it can stay cached next to
 * everything else, so random re-reads hit (what a plain share gets from the
 * page cache, which aiod bypasses with direct_io). The same eighth of the
 * cache bounds a stream's window and a bulk reader's read-ahead.
 */
static uint64_t cached_file_max(const struct aiod_ctx *ctx)
{
	return (uint64_t)ctx->cache->nblocks * ctx->cache->block_size / 8;
}

bool aiod_passthrough_wanted(const struct aiod_req *r, uint64_t size)
{
	struct aiod_ctx *ctx = r->ctx;
	struct aiod_cache *c = ctx->cache;
	const struct aiod_open *o = r->open;
	uint64_t bs = c->block_size;

	/*
	 * Streams keep whole blocks: their reads are read ahead. So does a read
	 * that continues the previous one (the first read of an open at 0, too:
	 * next_off starts there): a sequential reader reads the rest of the
	 * block next (stream.c's pattern analyzer, which this read has not been
	 * shown yet).
	 */
	if (o->rate_bps > 0 || r->off == o->next_off || size <= cached_file_max(ctx)) {
		return false;
	}
	if (read_align(ctx, r->open) == 0) {
		return false;
	}
	/*
	 * Any block of the range cached or loading: the cached path shares it
	 * (a sequential reader's request that came out of order lands in its
	 * read-ahead).
	 */
	for (uint64_t blk = r->off / bs; blk <= (r->end - 1) / bs; blk++) {
		if (aiod_cache_find(c, o->file->dev, o->file->ino, blk) != NULL) {
			return false;
		}
	}
	return true;
}

static void passthrough_done(void *private_data, int result)
{
	struct aiod_wseg *w = private_data;
	struct aiod_req *r = w->r;
	struct aiod_ctx *ctx = r->ctx;

	ctx->st.disk_reads++;
	if (result < 0) {
		if (r->error == 0) {
			r->error = result;
		}
	} else {
		/* Short only at EOF: aiod_read0_finish answers what is there. */
		r->blocks[w->i]->valid = (uint32_t)result;
		ctx->st.disk_read_bytes += (uint64_t)result;
		ctx->st.passthrough_bytes += (uint64_t)result;
	}
	talloc_free(w);
	if (--r->pending == 0) {
		aiod_read0_finish(r);
	}
}

bool aiod_passthrough_start(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;
	struct aiod_cache *c = ctx->cache;
	struct aiod_open *o = r->open;
	uint32_t bs = c->block_size;
	uint64_t align = read_align(ctx, o);	/* wanted() made sure it is known and fits */
	uint64_t start = r->off & ~(align - 1);
	uint64_t stop = (r->end + align - 1) & ~(align - 1);
	uint32_t n = (uint32_t)((stop - start + bs - 1) / bs);	/* never more than r spans */
	uint64_t deadline;
	int fd = o->direct_fd >= 0 ? o->direct_fd : o->fd;

	if (aiod_req_over_quota(r) || n > c->free.count + c->lru.count) {
		aiod_req_block(r);
		return true;
	}
	deadline = aiod_stream_demand_deadline(ctx, o, stop - start);
	r->base = start;
	for (uint32_t i = 0; i < n; i++) {
		struct aiod_block *b = aiod_cache_get(c);	/* cannot fail: counted above */

		/* The request's reference is the only one: it lives until the reads are done. */
		b->state = AIOD_BLK_PASSTHROUGH;
		aiod_req_take(r, b);
	}
	ctx->st.passthrough_reads++;
	ctx->st.cache_misses += n;
	/* Our own guard: a failed submission must not end r while we still use it. */
	r->pending++;
	for (uint32_t i = 0; i < n && r->error == 0; i++) {
		uint64_t off = start + (uint64_t)i * bs;
		uint32_t len = stop - off < bs ? (uint32_t)(stop - off) : bs;
		struct aiod_wseg *w = talloc(r, struct aiod_wseg);
		int ret = -ENOMEM;

		if (w != NULL) {
			w->r = r;
			w->i = i;
			ret = aiod_engine_read(ctx->engine, fd, r->blocks[i]->idx, 0, len, off,
					       deadline, passthrough_done, w);
		}
		if (ret != 0) {
			talloc_free(w);
			r->error = ret;
			break;
		}
		r->pending++;
	}
	/* The pattern analyzer sees the read (a random one: no read-ahead follows). */
	(void)aiod_stream_observe(ctx, o, r->off, (uint32_t)(r->end - r->off));
	if (--r->pending == 0) {
		aiod_read0_finish(r);	/* nothing was submitted: the error */
	}
	return false;
}
