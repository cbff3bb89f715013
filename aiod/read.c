/*
 * READ0: pin the cache blocks covering the range and answer with where they
 * are in the shared region. A hit answers right here, without the engine
 * (paper 3.1.3.2.2); a miss starts one disk read per run of missing blocks,
 * and a second reader of a block that is already loading just waits for it
 * (one disk read for both). A random reader's miss in a file the cache
 * cannot hold reads only its own pages instead (passthrough.c). READ1
 * (request.c) unpins.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "dataplane.h"
#include "log.h"
#include "files.h"
#include "streams.h"
#include "requests.h"
#include "session.h"

/* ---- READ0 ---- */

static void load_done(void *private_data, int result)
{
	struct aiod_load *ld = private_data;
	struct aiod_ctx *ctx = ld->ctx;
	uint32_t bs = ctx->cache->block_size;

	if (result != -ECANCELED) {
		ctx->st.disk_reads++;	/* a dropped load never reached the device */
	}
	if (result > 0) {
		ctx->st.disk_read_bytes += (uint64_t)result;
	}
	for (uint32_t i = 0; i < ld->n; i++) {
		int r = result;

		if (result >= 0) {
			/* Bytes of this block within what was read: a short read ended at EOF. */
			uint64_t start = (uint64_t)i * bs;
			r = (uint64_t)result <= start ? 0 :
			    (int)((uint64_t)result - start < bs ? (uint64_t)result - start : bs);
		}
		aiod_cache_load_done(ctx->cache, ld->b[i], r);
		aiod_cache_unref(ctx->cache, ld->b[i]);
	}
	aiod_open_idle(ctx, ld->open);
	talloc_free(ld);
	aiod_data_retry_blocked(ctx);
}

uint64_t aiod_load_grow(void *arg, aiod_engine_done_fn done, void *private_data)
{
	const struct aiod_load *ld = private_data;
	uint64_t want;

	if (done != load_done || ld->open->rate_bps == 0) {
		return 0;
	}
	want = aiod_readahead_sustain_bytes(arg, ld->open);
	/*
	 * A stream's first load taken by the device is at least as large as
	 * its read-ahead ramp starts (twice the client's read). Streams opened
	 * together are admitted one by one, and for the first one to three one
	 * block keeps up with the streams admitted so far: their first read
	 * went to the idle disk as the client's one block, so they had a chunk
	 * of lead, and their next request, due a chunk after the others'
	 * first, waited for all of them (the late chunk left at nine streams of
	 * 100 Mbit/s with 0.5 s clients). Grown to the ramp's start, nine
	 * opened at once played clean in 8 of 8 runs, every chunk at least 32
	 * ms early (median 65), against 6 of 8 (median 18 ms early;
	 * bench/results/rt-ab-20261208-first-load-ramp.md).
	 */
	if (!ld->open->load_taken) {
		uint64_t first = aiod_readahead_first_bytes(arg, ld->open);

		ld->open->load_taken = true;
		if (first > want) {
			want = first;
		}
	}
	return want;
}

uint32_t aiod_load_slice(void *arg, aiod_engine_done_fn done, void *private_data, bool *behind)
{
	const struct aiod_ctx *ctx = arg;
	const struct aiod_load *ld = private_data;
	uint64_t n = ctx->cfg->readahead_blocks_streams, bytes;

	if (done != load_done || ld->open->rate_bps > 0) {
		return 0;
	}
	if (n == 0) {
		n = 1;
	}
	if (ctx->streams == 0) {
		/*
		 * Where a stream can open (a class exists), it must not find a
		 * copy's 16 MiB request on the disk (100 ms): the pieces are half
		 * as large, one behind the other, so the copy loses no disk time
		 * between them (cut one at a time, a lone copy lost 2.5 %,
		 * rt-ab-20261129-1343.md) and a stream that opens waits for two,
		 * as long as for one piece while streams play. A 200 Mbit/s
		 * stream opening next to a copy: late in 4 of 5 runs before, 0
		 * of 5 after, the copy 1.6 % faster (rt-ab-20261129-1837.md).
		 */
		if (ctx->cfg->n_classes == 0) {
			return 0;
		}
		n = n > 1 ? n / 2 : 1;
		*behind = true;
	}
	bytes = n * ctx->cache->block_size;
	return bytes > UINT32_MAX ? 0 : (uint32_t)bytes;
}

/* Blocks a read found still loading: their queued loads are due as the read is. */
struct loading_blocks {
	struct aiod_block *b[RTIO_MAX_SEGS];
	uint32_t n;
};

/* aiod_engine_match_fn: a queued load that reads one of the blocks of arg. */
static bool load_reads_any(void *arg, aiod_engine_done_fn done, void *private_data)
{
	const struct loading_blocks *want = arg;
	const struct aiod_load *ld = private_data;

	if (done != load_done) {
		return false;
	}
	for (uint32_t i = 0; i < ld->n; i++) {
		for (uint32_t j = 0; j < want->n; j++) {
			if (ld->b[i] == want->b[j]) {
				return true;
			}
		}
	}
	return false;
}

/* aiod_load_cancel()'s match, and its arg. */
struct load_cancel {
	bool (*match)(const struct aiod_load *ld, void *arg);
	void *arg;
};

/* aiod_engine_cancel()'s match: a load no request waits on that the caller's match picks. */
static bool load_cancel_match(void *private_data, void *arg)
{
	const struct load_cancel *lc = arg;

	return !aiod_load_waited(NULL, load_done, private_data) && lc->match(private_data, lc->arg);
}

uint32_t aiod_load_cancel(struct aiod_ctx *ctx, bool (*match)(const struct aiod_load *ld, void *arg),
			  void *arg)
{
	struct load_cancel lc = { .match = match, .arg = arg };

	return aiod_engine_cancel(ctx->engine, load_done, load_cancel_match, &lc);
}

bool aiod_load_waited(void *arg, aiod_engine_done_fn done, void *private_data)
{
	const struct aiod_load *ld = private_data;

	(void)arg;
	if (done != load_done) {
		return false;
	}
	/* A request waits on a block it found missing, or loading (read0_start's wait_for). */
	for (uint32_t i = 0; i < ld->n; i++) {
		if (ld->b[i]->waiters != NULL) {
			return true;
		}
	}
	return false;
}

uint64_t aiod_load_rekey(void *arg, aiod_engine_done_fn done, void *private_data,
			 uint64_t deadline_ns, uint64_t old_round_ns, uint64_t new_round_ns)
{
	const struct aiod_load *ld = private_data;
	uint64_t due;

	(void)arg;
	if (done != load_done || ld->open->rate_bps == 0) {
		return deadline_ns;
	}
	due = deadline_ns + old_round_ns;	/* when the data is needed (stream_due) */
	return due > new_round_ns ? due - new_round_ns : 1;
}

/*
 * Read n contiguous file blocks (LOADING, hashed, one reference each for the
 * load) with one request. On failure the blocks are failed (their waiters run)
 * and released.
 */
int aiod_load_submit(struct aiod_ctx *ctx, struct aiod_open *o, struct aiod_block **b,
		       uint32_t n, uint64_t deadline_ns)
{
	struct aiod_load *ld = talloc(ctx, struct aiod_load);
	uint32_t idx[RTIO_MAX_SEGS];
	int ret = -ENOMEM;

	if (ld != NULL) {
		ld->ctx = ctx;
		ld->open = o;
		ld->n = n;
		for (uint32_t i = 0; i < n; i++) {
			ld->b[i] = b[i];
			idx[i] = b[i]->idx;
		}
		aiod_open_busy(o);
		ret = aiod_engine_readv(ctx->engine, o->direct_fd >= 0 ? o->direct_fd : o->fd, idx,
					n, b[0]->blkno * ctx->cache->block_size, deadline_ns,
					load_done, ld);
		if (ret == 0) {
			return 0;
		}
		aiod_open_idle(ctx, o);
		talloc_free(ld);
	}
	for (uint32_t i = 0; i < n; i++) {
		aiod_cache_load_done(ctx->cache, b[i], ret);
		aiod_cache_unref(ctx->cache, b[i]);
	}
	return ret;
}

void aiod_read0_finish(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;
	uint32_t bs = ctx->cache->block_size;
	struct rtio_io_rep rep;
	struct aiod_lease *l;
	uint64_t pos = r->off;

	if (r->p == NULL) {
		aiod_req_end(r, -ENOTCONN);
		return;
	}
	if (r->error != 0) {
		aiod_req_end(r, r->error);
		return;
	}
	memset(&rep, 0, sizeof(rep));
	for (uint32_t i = 0; i < r->nblocks && pos < r->end; i++) {
		struct aiod_block *b = r->blocks[i];
		uint32_t in_blk = (uint32_t)((pos - r->base) % bs);
		uint64_t want = r->end - pos;
		uint32_t avail = b->valid > in_blk ? b->valid - in_blk : 0;

		if (want > bs - in_blk) {
			want = bs - in_blk;
		}
		if (avail > want) {
			avail = (uint32_t)want;
		}
		if (avail == 0) {
			break;	/* the file shrank under us: a short read */
		}
		rep.seg[rep.nseg].shm_off = aiod_block_shm_off(ctx, b) + in_blk;
		rep.seg[rep.nseg].len = avail;
		rep.nseg++;
		pos += avail;
		if (avail < want) {
			break;
		}
	}
	l = aiod_lease_new(r->p);
	if (l == NULL) {
		aiod_req_end(r, -EBUSY);	/* more READ0s without READ1 than allowed */
		return;
	}
	/* The lease takes over the pins and the open's busy count. */
	l->open = r->open;
	r->open = NULL;
	l->off = r->off;
	l->len = (uint32_t)(pos - r->off);
	l->nblocks = r->nblocks;
	memcpy(l->blocks, r->blocks, sizeof(l->blocks[0]) * r->nblocks);
	r->nblocks = 0;
	rtio_hdr_init(&rep.hdr, RTIO_OP_READ0, sizeof(rep), r->req_id);
	rep.hdr.flags = RTIO_F_REPLY;
	rep.hdr.result = (int32_t)(pos - r->off);
	rep.token = l->token;
	ctx->st.bytes_read += pos - r->off;
	r->p->bytes_read += pos - r->off;
	l->open->file->bytes_read += pos - r->off;
	if (r->waited_for_disk && r->playing && l->open->rate_bps > 0) {
		/* A playing stream's read found its data not yet in the cache: it is late. */
		ctx->st.deadline_misses++;
		l->open->file->deadline_misses++;
	}
	AIOD_DEBUG("read: %s off %" PRIu64 " len %u answered %u in %.1f ms%s%s", l->open->name,
		   r->off, r->len, l->len, (double)(aiod_now_ns() - r->arrived_ns) / 1e6,
		   r->waited_for_disk ? ", waited for the disk" : ", cached",
		   r->playing ? ", playing" : "");
	(void)aiod_session_reply(r->p->s, &rep, sizeof(rep));
	talloc_free(r);
}

static void read_block_ready(void *private_data, struct aiod_block *b)
{
	struct aiod_req *r = private_data;

	if (b->error != 0 && r->error == 0) {
		r->error = b->error;
	}
	if (--r->pending == 0) {
		aiod_read0_finish(r);
	}
}

static void wait_for(struct aiod_req *r, uint32_t i, struct aiod_block *b)
{
	r->waiters[i].fn = read_block_ready;
	r->waiters[i].private_data = r;
	r->waiters[i].next = b->waiters;
	b->waiters = &r->waiters[i];
	r->pending++;
	r->waited_for_disk = true;
}

/*
 * The blocks covering a range [off, end): block blk (up to last) must hold
 * need bytes from its start. The cache's copy of it, or NULL; *short_copy
 * says a VALID copy holds fewer (cached when the file was shorter).
 */
static struct aiod_block *range_block(struct aiod_cache *c, const struct aiod_open *o,
				      uint64_t blk, uint64_t last, uint64_t end,
				      bool *short_copy)
{
	uint64_t bs = c->block_size;
	uint64_t need = (blk == last ? end : (blk + 1) * bs) - blk * bs;
	struct aiod_block *b = aiod_cache_find(c, o->file->dev, o->file->ino, blk);

	*short_copy = b != NULL && b->state == AIOD_BLK_VALID && b->valid < need;
	return b;
}

void aiod_read_hit(struct aiod_ctx *ctx, struct aiod_peer *p, struct aiod_open *o, uint64_t off,
		   uint32_t len)
{
	struct aiod_cache *c = ctx->cache;
	uint64_t last;

	if (len == 0) {
		return;
	}
	aiod_load_jump(ctx, o, off);
	last = (off + len - 1) / c->block_size;
	for (uint64_t blk = off / c->block_size; blk <= last; blk++) {
		struct aiod_block *b = aiod_cache_find(c, o->file->dev, o->file->ino, blk);

		/* Gone already (evicted, written) is fine: the client checked its copy. */
		if (b != NULL && aiod_stream_played(ctx, o, blk, off + len)) {
			/*
			 * A stream played it through: of everything cached, what
			 * it is least likely to want soon. Evicting it first keeps
			 * what streams (and a replay, whose start stays cached: the
			 * head) read next; under LRU these went first. (READ0's
			 * pinned blocks: aiod_lease_release().)
			 */
			aiod_cache_demote(c, b);
		} else if (b != NULL) {
			aiod_cache_touch(c, b);
		}
		ctx->st.cache_hits++;
	}
	AIOD_DEBUG("hit: %s off %" PRIu64 " len %u", o->name, off, len);
	ctx->st.hit_reads++;
	ctx->st.hit_bytes += len;
	ctx->st.bytes_read += len;
	p->bytes_read += len;
	o->file->bytes_read += len;
	/* As read0_hit(): the stream's position moves, its read-ahead follows. */
	aiod_readahead(ctx, o, last, o->file->known_size, aiod_stream_observe(ctx, o, off, len));
}

/* Every block of r's range cached and VALID: pin them and answer now, without a syscall. */
static bool read0_hit(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;
	struct aiod_cache *c = ctx->cache;
	struct aiod_open *o = r->open;
	uint32_t bs = c->block_size;
	uint64_t end = r->off + r->len;
	uint64_t first = r->off / bs, last;
	struct aiod_block *b[RTIO_MAX_SEGS];

	if (r->len == 0 || aiod_req_over_quota(r)) {
		return false;
	}
	last = (end - 1) / bs;
	for (uint64_t blk = first; blk <= last; blk++) {
		bool short_copy;

		b[blk - first] = range_block(c, o, blk, last, end, &short_copy);
		/* Absent, loading, or short (EOF inside the range, or cached when shorter). */
		if (b[blk - first] == NULL || b[blk - first]->state != AIOD_BLK_VALID ||
		    short_copy) {
			return false;
		}
	}
	for (uint64_t blk = first; blk <= last; blk++) {
		aiod_cache_ref(c, b[blk - first]);
		aiod_req_take(r, b[blk - first]);
		ctx->st.cache_hits++;
	}
	r->end = end;
	aiod_readahead(ctx, o, last, o->file->known_size,
		  aiod_stream_observe(ctx, o, r->off, r->len));
	aiod_read0_finish(r);
	return true;
}

bool aiod_read0_start(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;
	struct aiod_cache *c = ctx->cache;
	struct aiod_open *o = r->open;
	uint32_t bs = c->block_size;
	uint64_t first, last;
	uint32_t need_new = 0, from_lru = 0;
	struct stat st;
	struct aiod_block *run[RTIO_MAX_SEGS];
	uint32_t nrun = 0;
	struct loading_blocks loading = { .n = 0 };
	uint64_t demand_deadline;

	aiod_load_jump(ctx, o, r->off);	/* first: a dropped load's callback may start other requests */
	if (read0_hit(r)) {
		return false;
	}
	r->playing = aiod_stream_playing(o, r->off);
	if (fstat(o->fd, &st) != 0) {
		aiod_req_end(r, -errno);
		return false;
	}
	o->file->known_size = (uint64_t)st.st_size;
	r->end = r->off + r->len;
	if (r->end > (uint64_t)st.st_size) {
		r->end = (uint64_t)st.st_size;
	}
	if (r->off >= r->end) {
		r->end = r->off;
		aiod_read0_finish(r);	/* EOF or zero length: 0 bytes */
		return false;
	}
	if (aiod_passthrough_wanted(r, (uint64_t)st.st_size)) {
		return aiod_passthrough_start(r);
	}
	first = r->off / bs;
	last = (r->end - 1) / bs;

	/* Count what we would take from the free list and LRU before taking anything. */
	for (uint64_t blk = first; blk <= last; blk++) {
		bool short_copy;
		struct aiod_block *b = range_block(c, o, blk, last, r->end, &short_copy);

		if (b == NULL || short_copy) {
			need_new++;
		} else if (b->refs == 0) {
			from_lru++;
		}
	}
	if (aiod_req_over_quota(r) || need_new + from_lru > c->free.count + c->lru.count) {
		aiod_req_block(r);
		return true;
	}
	/* Only the blocks it loads take device time (best effort's share, besteffort.c). */
	demand_deadline = aiod_stream_demand_deadline(ctx, o, (uint64_t)need_new * bs);
	/* Our own guard: waiters finishing early must not end r while we still use it. */
	r->pending++;
	for (uint64_t blk = first; blk <= last + 1; blk++) {
		uint32_t i = (uint32_t)(blk - first);
		bool short_copy = false;
		struct aiod_block *b = NULL;

		if (blk <= last) {
			b = range_block(c, o, blk, last, r->end, &short_copy);
			if (short_copy) {
				/* Cached when the file was shorter: read it again. */
				aiod_cache_detach(c, b);
				b = NULL;
			}
		}
		/* Contiguous misses go to the disk as one request. */
		if (nrun > 0 && (blk > last || b != NULL)) {
			(void)aiod_load_submit(ctx, o, run, nrun, demand_deadline);	/* failures reach waiters */
			nrun = 0;
		}
		if (blk > last) {
			break;
		}
		if (b != NULL) {
			aiod_cache_ref(c, b);
			aiod_req_take(r, b);
			if (b->state == AIOD_BLK_LOADING) {
				wait_for(r, i, b);	/* coalesced miss */
				ctx->st.cache_misses++;
				if (loading.n < RTIO_MAX_SEGS) {	/* a read spans at most that many */
					loading.b[loading.n++] = b;
				}
			} else {
				ctx->st.cache_hits++;
			}
			continue;
		}
		b = aiod_cache_get(c);	/* cannot fail: counted above */
		aiod_cache_insert(c, b, o->file->dev, o->file->ino, blk);
		aiod_cache_ref(c, b);	/* the request's pin; the load holds the other */
		aiod_req_take(r, b);
		ctx->st.cache_misses++;
		wait_for(r, i, b);
		run[nrun++] = b;
	}
	if (loading.n > 0) {
		/* read-ahead queued for later: the client waits for it now */
		(void)aiod_engine_expedite(ctx->engine, load_reads_any, &loading, demand_deadline);
	}
	if (r->error == 0) {
		aiod_readahead(ctx, o, last, (uint64_t)st.st_size,
			  aiod_stream_observe(ctx, o, r->off, (uint32_t)(r->end - r->off)));
	}
	if (--r->pending == 0) {
		aiod_read0_finish(r);	/* every block was a hit, or the reads already finished */
	}
	return false;
}
