/*
 * Data requests from the message queues: READ0/READ1, WRITE0/WRITE1, FSYNC, WROTE.
 *
 * READ0 pins the cache blocks covering the range and answers with where they
 * are in the shared region. A hit answers right here, without the engine
 * (paper 3.1.3.2.2); a miss starts one disk read per block, and a second
 * reader of a block that is already loading just waits for it (one disk read
 * for both). READ1 unpins.
 *
 * WRITE0 reserves staging blocks; the client copies its data in; WRITE1
 * writes them to the file through the client's descriptor and, once the
 * kernel has the data, copies it into any cached blocks so every reader sees
 * it, then answers. Nothing acknowledged lives only in aiod.
 *
 * Each session may hold at most its share of the cache pinned ([cache]
 * session_pin_pct): beyond it its requests wait for its own blocks to come
 * back (and fail with ENOBUFS after pin_wait_ms), while the other sessions'
 * requests go past them.
 *
 * WROTE is the cheaper write path vfs_rtio takes by default: smbd already
 * wrote the bytes into the page cache itself (one copy instead of two), and
 * aiod drops the cached blocks of the range before it answers, so no reader
 * after the acknowledgement can see old bytes, and schedules the write-back
 * as for its own writes.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "aiod.h"
#include "log.h"
#include "peer.h"
#include "rtio_shm.h"

struct aiod_req {
	struct aiod_req *rprev, *rnext;	/* the peer's requests in flight */
	struct aiod_req *bnext;		/* ctx->blocked */
	struct aiod_ctx *ctx;
	struct aiod_peer *p;		/* NULL once its session went away */
	uint16_t opcode;
	uint64_t req_id;
	struct aiod_open *open;		/* busy while the request lives */
	uint64_t off;
	uint32_t len;
	uint64_t end;			/* READ0: min(off + len, size) */
	uint32_t nblocks;
	struct aiod_block *blocks[RTIO_MAX_SEGS];
	struct aiod_block_waiter waiters[RTIO_MAX_SEGS];
	uint32_t seg_done[RTIO_MAX_SEGS];	/* WRITE1: bytes written per block */
	uint32_t pending;		/* block loads / writes outstanding */
	int error;
	bool waited_for_disk;
	bool playing;			/* READ0: the stream was past its start-up when it came */
	bool blocked;
	uint64_t blocked_since_ns;
};

/*
 * One disk read of a run of contiguous file blocks: one vectored request, so
 * a large read-ahead reaches the device as one large request (one seek on a
 * disk) rather than many block-sized ones.
 */
struct aiod_load {
	struct aiod_ctx *ctx;
	struct aiod_open *open;
	uint32_t n;
	struct aiod_block *b[RTIO_MAX_SEGS];
};

/* Per write of one staging block. */
struct aiod_wseg {
	struct aiod_req *r;
	uint32_t i;
};

/* Both return true when r had to wait for free blocks (it is then on ctx->blocked). */
static bool read0_start(struct aiod_req *r);
static bool write0_start(struct aiod_req *r);

static uint64_t block_shm_off(const struct aiod_ctx *ctx, const struct aiod_block *b)
{
	return RTIO_SHM_DATA_OFF + (uint64_t)b->idx * ctx->cache->block_size;
}

static void write_seg_done(void *private_data, int result);

static bool wseg_of(void *private_data, void *arg)
{
	return ((struct aiod_wseg *)private_data)->r == arg;
}

static void req_link(struct aiod_peer *p, struct aiod_req *r)
{
	r->rprev = NULL;
	r->rnext = p->reqs;
	if (p->reqs != NULL) {
		p->reqs->rprev = r;
	}
	p->reqs = r;
}

static void req_unlink(struct aiod_peer *p, struct aiod_req *r)
{
	if (r->rprev != NULL) {
		r->rprev->rnext = r->rnext;
	} else if (p->reqs == r) {
		p->reqs = r->rnext;
	}
	if (r->rnext != NULL) {
		r->rnext->rprev = r->rprev;
	}
	r->rprev = r->rnext = NULL;
}

static void req_orphan(struct aiod_req *r)
{
	r->p = NULL;
	/*
	 * The client gave up on this session and may redo its writes itself: a
	 * write of ours still waiting for the device must not land after them.
	 * (One already in the kernel cannot be recalled; it carries the same bytes.)
	 */
	if (r->opcode == RTIO_OP_WRITE1 && r->pending > 0) {
		(void)aiod_engine_cancel(r->ctx->engine, write_seg_done, wseg_of, r);
	}
}


static void blocked_fix_tail(struct aiod_ctx *ctx)
{
	ctx->blocked_tail = NULL;
	for (struct aiod_req *q = ctx->blocked; q != NULL; q = q->bnext) {
		ctx->blocked_tail = q;
	}
}

/* Take r off ctx->blocked, wherever it waits. */
static void blocked_remove(struct aiod_ctx *ctx, struct aiod_req *r)
{
	struct aiod_req **pp = &ctx->blocked;

	while (*pp != NULL && *pp != r) {
		pp = &(*pp)->bnext;
	}
	if (*pp == r) {
		*pp = r->bnext;
	}
	r->bnext = NULL;
	r->blocked = false;
	blocked_fix_tail(ctx);
}

static int req_destructor(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;

	if (r->blocked) {
		blocked_remove(ctx, r);
	}
	if (r->p != NULL) {
		req_unlink(r->p, r);
	}
	if (r->open != NULL) {
		aiod_open_idle(ctx, r->open);
	}
	return 0;
}

/* r pins b on behalf of its session. */
static void req_take(struct aiod_req *r, struct aiod_block *b)
{
	r->blocks[r->nblocks++] = b;
	if (r->p != NULL) {
		aiod_peer_pin(r->p, 1);
	}
}

static void req_unpin(struct aiod_req *r)
{
	if (r->p != NULL) {
		aiod_peer_unpin(r->p, r->nblocks);
	}
	for (uint32_t i = 0; i < r->nblocks; i++) {
		aiod_cache_unref(r->ctx->cache, r->blocks[i]);
		r->blocks[i] = NULL;
	}
	r->nblocks = 0;
}

static void reply_simple(struct aiod_ctx *ctx, struct aiod_session *s, uint16_t opcode,
			 uint64_t req_id, int result)
{
	union rtio_msg rep;
	size_t len = rtio_msg_expected_len(opcode, 1);

	if (s == NULL || len == 0) {
		return;
	}
	memset(&rep, 0, len);
	rtio_hdr_init(&rep.hdr, opcode, (uint32_t)len, req_id);
	rep.hdr.flags = RTIO_F_REPLY;
	rep.hdr.result = result;
	if (result < 0) {
		ctx->st.errors++;
	}
	(void)aiod_session_reply(s, &rep, len);
}

/* Done with r: answer (unless orphaned) and free it. */
static void req_end(struct aiod_req *r, int result)
{
	struct aiod_ctx *ctx = r->ctx;

	req_unpin(r);
	reply_simple(ctx, r->p != NULL ? r->p->s : NULL, r->opcode, r->req_id, result);
	talloc_free(r);
	aiod_data_retry_blocked(ctx);
}

/* ---- waiting for free blocks ---- */

/*
 * Most block references one session may hold: [cache] session_pin_pct of
 * the cache, and never less than one largest request spans (an unaligned
 * max_io touches one block more), so every request can go through alone.
 */
static uint32_t session_pin_quota(const struct aiod_ctx *ctx)
{
	uint32_t bs = ctx->cache->block_size;
	uint32_t one = (uint32_t)(((uint64_t)ctx->cfg->max_io + 2 * bs - 2) / bs);
	uint32_t share = (uint32_t)((uint64_t)ctx->cache->nblocks * ctx->cfg->session_pin_pct / 100);

	return share > one ? share : one;
}

/* Blocks r pins at most: those its range spans (a read), or its staging blocks (a write). */
static uint32_t req_span(const struct aiod_req *r)
{
	uint32_t bs = r->ctx->cache->block_size;

	if (r->len == 0) {
		return 0;
	}
	if (r->opcode == RTIO_OP_WRITE0) {
		return (r->len + bs - 1) / bs;
	}
	return (uint32_t)((r->off + r->len - 1) / bs - r->off / bs + 1);
}

/* Whether r would take its session past its share of the cache. */
static bool req_over_quota(const struct aiod_req *r)
{
	return r->p != NULL && r->p->pinned + req_span(r) > session_pin_quota(r->ctx);
}

static void blocked_timer(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
			  void *private_data);

static void req_block(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;

	/* The retry starting r puts it back in its old place itself. */
	if (r->blocked || ctx->retrying_blocked) {
		return;
	}
	r->blocked = true;
	r->blocked_since_ns = aiod_now_ns();
	r->bnext = NULL;
	if (ctx->blocked_tail != NULL) {
		ctx->blocked_tail->bnext = r;
	} else {
		ctx->blocked = r;
		(void)tevent_add_timer(ctx->ev, ctx, tevent_timeval_current_ofs(0, 100000),
				       blocked_timer, ctx);
	}
	ctx->blocked_tail = r;
}

static struct aiod_req *blocked_pop(struct aiod_ctx *ctx)
{
	struct aiod_req *r = ctx->blocked;

	if (r != NULL) {
		blocked_remove(ctx, r);
	}
	return r;
}

void aiod_data_retry_blocked(struct aiod_ctx *ctx)
{
	struct aiod_req **pp = &ctx->blocked;

	if (ctx->retrying_blocked) {
		return;	/* a retry further up the stack goes on with the list */
	}
	ctx->retrying_blocked = true;
	/*
	 * FIFO for the cache's blocks: stop at the first request that still
	 * does not fit. A request waiting for its own session's blocks (over
	 * its quota) is passed over: only its session's releases let it go.
	 */
	while (*pp != NULL && ctx->cache->free.count + ctx->cache->lru.count > 0) {
		struct aiod_req *r = *pp;
		uint64_t since = r->blocked_since_ns;

		if (r->p == NULL) {
			talloc_free(r);	/* orphaned; its destructor takes it off the list */
			continue;
		}
		if (req_over_quota(r)) {
			pp = &r->bnext;
			continue;
		}
		/* Off the list while it starts (*pp is its successor now): it may end at once. */
		blocked_remove(ctx, r);
		if (r->opcode == RTIO_OP_READ0 ? read0_start(r) : write0_start(r)) {
			/* Still no room: back where it waited, as long as it has waited. */
			r->bnext = *pp;
			*pp = r;
			r->blocked = true;
			r->blocked_since_ns = since;
			blocked_fix_tail(ctx);
			break;
		}
	}
	ctx->retrying_blocked = false;
}

static void blocked_timer(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
			  void *private_data)
{
	struct aiod_ctx *ctx = private_data;
	uint64_t limit = (uint64_t)ctx->cfg->pin_wait_ms * 1000000ull;
	uint64_t t = aiod_now_ns();

	(void)te;
	(void)now;
	/* Oldest first: retries put a request back in its place, new ones go last. */
	while (ctx->blocked != NULL && t - ctx->blocked->blocked_since_ns >= limit) {
		struct aiod_req *r = blocked_pop(ctx);

		if (r->p != NULL && req_over_quota(r)) {
			SESS_WARN(r->p->s, "%s refused: the session held its share of the cache "
				  "([cache] session_pin_pct, %u blocks) pinned for %u ms",
				  rtio_op_name(r->opcode), session_pin_quota(ctx),
				  ctx->cfg->pin_wait_ms);
		} else if (r->p != NULL) {
			SESS_WARN(r->p->s, "%s refused: every cache block pinned for %u ms "
				  "(raise [cache] size)", rtio_op_name(r->opcode), ctx->cfg->pin_wait_ms);
		}
		req_end(r, -ENOBUFS);
	}
	if (ctx->blocked != NULL) {
		(void)tevent_add_timer(ev, ctx, tevent_timeval_current_ofs(0, 100000), blocked_timer,
				       ctx);
	}
}

/* ---- READ0 ---- */

static void load_done(void *private_data, int result)
{
	struct aiod_load *ld = private_data;
	struct aiod_ctx *ctx = ld->ctx;
	uint32_t bs = ctx->cache->block_size;

	ctx->st.disk_reads++;
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

/*
 * Read n contiguous file blocks (LOADING, hashed, one reference each for the
 * load) with one request. On failure the blocks are failed (their waiters run)
 * and released.
 */
static int load_submit(struct aiod_ctx *ctx, struct aiod_open *o, struct aiod_block **b,
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

static void read0_finish(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;
	uint32_t bs = ctx->cache->block_size;
	struct rtio_io_rep rep;
	struct aiod_lease *l;
	uint64_t pos = r->off;

	if (r->p == NULL) {
		req_end(r, -ENOTCONN);
		return;
	}
	if (r->error != 0) {
		req_end(r, r->error);
		return;
	}
	memset(&rep, 0, sizeof(rep));
	for (uint32_t i = 0; i < r->nblocks && pos < r->end; i++) {
		struct aiod_block *b = r->blocks[i];
		uint32_t in_blk = (uint32_t)(pos % bs);
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
		rep.seg[rep.nseg].shm_off = block_shm_off(ctx, b) + in_blk;
		rep.seg[rep.nseg].len = avail;
		rep.nseg++;
		pos += avail;
		if (avail < want) {
			break;
		}
	}
	l = aiod_lease_new(r->p);
	if (l == NULL) {
		req_end(r, -EBUSY);	/* more READ0s without READ1 than allowed */
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
	l->open->file->bytes_read += pos - r->off;
	if (r->waited_for_disk && r->playing && l->open->rate_bps > 0) {
		/* A playing stream's read found its data not yet in the cache: it is late. */
		ctx->st.deadline_misses++;
		l->open->file->deadline_misses++;
	}
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
		read0_finish(r);
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

/* Blocks per read-ahead request: [readahead] io_size, at most one reply's worth. */
static uint32_t io_blocks(const struct aiod_ctx *ctx)
{
	uint32_t n = ctx->cfg->readahead_io_size / ctx->cache->block_size;

	return n < 1 ? 1 : (n > RTIO_MAX_SEGS ? RTIO_MAX_SEGS : n);
}

/* Prefetch up to n blocks after block last for a sequential reader. */
static void readahead(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t last, uint64_t size,
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
			if (load_submit(ctx, o, run, nrun, aiod_stream_deadline(ctx, o, start * bs)) != 0) {
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
static bool read0_hit(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;
	struct aiod_cache *c = ctx->cache;
	struct aiod_open *o = r->open;
	uint32_t bs = c->block_size;
	uint64_t end = r->off + r->len;
	uint64_t first = r->off / bs, last;
	struct aiod_block *b[RTIO_MAX_SEGS];

	if (r->len == 0 || req_over_quota(r)) {
		return false;
	}
	last = (end - 1) / bs;
	for (uint64_t blk = first; blk <= last; blk++) {
		uint64_t need_end = (blk == last ? end : (blk + 1) * bs) - blk * bs;

		b[blk - first] = aiod_cache_find(c, o->file->dev, o->file->ino, blk);
		if (b[blk - first] == NULL || b[blk - first]->state != AIOD_BLK_VALID) {
			return false;
		}
		if (b[blk - first]->valid < need_end) {
			/* EOF inside the range, or a block cached when the file was shorter. */
			return false;
		}
	}
	for (uint64_t blk = first; blk <= last; blk++) {
		aiod_cache_ref(c, b[blk - first]);
		req_take(r, b[blk - first]);
		ctx->st.cache_hits++;
	}
	r->end = end;
	readahead(ctx, o, last, o->file->known_size,
		  aiod_stream_observe(ctx, o, r->off, r->len));
	read0_finish(r);
	return true;
}

static bool read0_start(struct aiod_req *r)
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
	uint64_t demand_deadline;

	if (read0_hit(r)) {
		return false;
	}
	r->playing = aiod_stream_playing(o, r->off);
	if (fstat(o->fd, &st) != 0) {
		req_end(r, -errno);
		return false;
	}
	o->file->known_size = (uint64_t)st.st_size;
	r->end = r->off + r->len;
	if (r->end > (uint64_t)st.st_size) {
		r->end = (uint64_t)st.st_size;
	}
	if (r->off >= r->end) {
		r->end = r->off;
		read0_finish(r);	/* EOF or zero length: 0 bytes */
		return false;
	}
	first = r->off / bs;
	last = (r->end - 1) / bs;

	/* Count what we would take from the free list and LRU before taking anything. */
	for (uint64_t blk = first; blk <= last; blk++) {
		struct aiod_block *b = aiod_cache_find(c, o->file->dev, o->file->ino, blk);
		uint64_t need_end = (blk == last ? r->end : (blk + 1) * bs) - blk * bs;

		if (b == NULL || (b->state == AIOD_BLK_VALID && b->valid < need_end)) {
			need_new++;
		} else if (b->refs == 0) {
			from_lru++;
		}
	}
	if (req_over_quota(r) || need_new + from_lru > c->free.count + c->lru.count) {
		req_block(r);
		return true;
	}
	demand_deadline = aiod_stream_deadline(ctx, o, r->off);
	/* Our own guard: waiters finishing early must not end r while we still use it. */
	r->pending++;
	for (uint64_t blk = first; blk <= last + 1; blk++) {
		uint32_t i = (uint32_t)(blk - first);
		uint64_t need_end;
		struct aiod_block *b = NULL;

		if (blk <= last) {
			need_end = (blk == last ? r->end : (blk + 1) * bs) - blk * bs;
			b = aiod_cache_find(c, o->file->dev, o->file->ino, blk);
			if (b != NULL && b->state == AIOD_BLK_VALID && b->valid < need_end) {
				/* Cached when the file was shorter: read it again. */
				aiod_cache_detach(c, b);
				b = NULL;
			}
		}
		/* Contiguous misses go to the disk as one request. */
		if (nrun > 0 && (blk > last || b != NULL)) {
			(void)load_submit(ctx, o, run, nrun, demand_deadline);	/* failures reach waiters */
			nrun = 0;
		}
		if (blk > last) {
			break;
		}
		if (b != NULL) {
			aiod_cache_ref(c, b);
			req_take(r, b);
			if (b->state == AIOD_BLK_LOADING) {
				wait_for(r, i, b);	/* coalesced miss */
				ctx->st.cache_misses++;
			} else {
				ctx->st.cache_hits++;
			}
			continue;
		}
		b = aiod_cache_get(c);	/* cannot fail: counted above */
		aiod_cache_insert(c, b, o->file->dev, o->file->ino, blk);
		aiod_cache_ref(c, b);	/* the request's pin; the load holds the other */
		req_take(r, b);
		ctx->st.cache_misses++;
		wait_for(r, i, b);
		run[nrun++] = b;
	}
	if (r->error == 0) {
		readahead(ctx, o, last, (uint64_t)st.st_size,
			  aiod_stream_observe(ctx, o, r->off, (uint32_t)(r->end - r->off)));
	}
	if (--r->pending == 0) {
		read0_finish(r);	/* every block was a hit, or the reads already finished */
	}
	return false;
}

/* ---- WRITE0 / WRITE1 ---- */

static bool write0_start(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;
	struct aiod_cache *c = ctx->cache;
	uint32_t bs = c->block_size;
	uint32_t n = req_span(r);
	struct rtio_io_rep rep;
	struct aiod_lease *l;

	if (req_over_quota(r) || n > c->free.count + c->lru.count) {
		req_block(r);
		return true;
	}
	l = aiod_lease_new(r->p);
	if (l == NULL) {
		req_end(r, -EBUSY);
		return false;
	}
	memset(&rep, 0, sizeof(rep));
	for (uint32_t i = 0; i < n; i++) {
		struct aiod_block *b = aiod_cache_get(c);

		b->state = AIOD_BLK_STAGING;
		l->blocks[i] = b;
		rep.seg[i].shm_off = block_shm_off(ctx, b);
		rep.seg[i].len = (i + 1 < n) ? bs : r->len - i * bs;
	}
	l->write = true;
	l->nblocks = n;
	aiod_peer_pin(r->p, n);
	l->open = r->open;
	r->open = NULL;
	l->off = r->off;
	l->len = r->len;
	rep.nseg = n;
	rtio_hdr_init(&rep.hdr, RTIO_OP_WRITE0, sizeof(rep), r->req_id);
	rep.hdr.flags = RTIO_F_REPLY;
	rep.hdr.result = (int32_t)r->len;
	rep.token = l->token;
	(void)aiod_session_reply(r->p->s, &rep, sizeof(rep));
	talloc_free(r);
	return false;
}

static void writeback_done(void *private_data, int result)
{
	struct aiod_load *wb = private_data;	/* only ctx and open are used */

	if (result < 0) {
		AIOD_DEBUG("writeback of %s: %s", wb->open->name, strerror(-result));
	}
	aiod_open_idle(wb->ctx, wb->open);
	talloc_free(wb);
}

/*
 * Write aggregation (paper: 1.1x write): the page cache already merges a
 * sequential writer's small writes; we make them reach the disk as large
 * contiguous writes, io_size at a time, as soon as that much is there, rather
 * than in a burst at the kernel's dirty expiry that would stall the streams'
 * reads. Writes stay acknowledged at page-cache time; this only schedules the
 * disk. Random writers are left to the kernel, and so is everything while no
 * stream is open: then there are no reads to protect, and starting the
 * write-back here would only move the kernel flusher's work into aiod.
 */
static void aggregate_writeback(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off,
				uint64_t len)
{
	uint64_t io = ctx->cfg->readahead_io_size;
	struct aiod_load *wb;

	if (off != o->wb_end) {
		o->wb_start = off;	/* not sequential: start a new run */
	}
	o->wb_end = off + len;
	if (o->wb_end - o->wb_start < io) {
		return;
	}
	if (ctx->streams == 0) {
		o->wb_start = o->wb_end;	/* the kernel writes this run back */
		return;
	}
	wb = talloc_zero(ctx, struct aiod_load);
	if (wb == NULL) {
		return;
	}
	wb->ctx = ctx;
	wb->open = o;
	aiod_open_busy(o);
	if (aiod_engine_writeback(ctx->engine, o->fd, o->wb_start,
				  (uint32_t)(o->wb_end - o->wb_start),
				  aiod_now_ns() + (uint64_t)ctx->cfg->be_deadline_ms * 1000000ull,
				  writeback_done, wb) != 0) {
		aiod_open_idle(ctx, o);
		talloc_free(wb);
		return;
	}
	ctx->st.writebacks++;
	o->wb_start = o->wb_end;
}

static void write1_finish(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;
	uint32_t bs = ctx->cache->block_size;
	uint64_t total = 0;
	bool prefix = true;

	for (uint32_t i = 0; i < r->nblocks; i++) {
		uint32_t want = (i + 1 < r->nblocks) ? bs : r->len - i * bs;
		uint32_t got = r->seg_done[i];

		/* Whatever reached the file must show in the cache, reported or not. */
		if (got > 0) {
			aiod_cache_write_through(ctx->cache, r->open->file->dev, r->open->file->ino,
						 r->off + (uint64_t)i * bs,
						 aiod_cache_block_data(ctx->cache, r->blocks[i]), got);
		}
		/* A write reports the prefix that made it. */
		if (prefix) {
			total += got;
			prefix = got == want;
		}
	}
	ctx->st.bytes_written += total;
	if (total > 0 && r->off + total > r->open->file->known_size) {
		r->open->file->known_size = r->off + total;
	}
	if (total > 0) {
		aggregate_writeback(ctx, r->open, r->off, total);
	}
	req_end(r, total > 0 || r->error == 0 ? (int)total : r->error);
}

static void write_seg_done(void *private_data, int result)
{
	struct aiod_wseg *w = private_data;
	struct aiod_req *r = w->r;

	r->ctx->st.disk_writes++;
	if (result < 0) {
		if (r->error == 0) {
			r->error = result;
		}
	} else {
		r->seg_done[w->i] = (uint32_t)result;
	}
	talloc_free(w);
	if (--r->pending == 0) {
		write1_finish(r);
	}
}

static void write1_start(struct aiod_req *r, struct aiod_lease *l)
{
	struct aiod_ctx *ctx = r->ctx;
	uint32_t bs = ctx->cache->block_size;
	uint64_t deadline = aiod_now_ns();	/* a client waits for every write */

	r->open = l->open;
	r->off = l->off;
	r->len = l->len;
	r->nblocks = l->nblocks;
	memcpy(r->blocks, l->blocks, sizeof(l->blocks[0]) * l->nblocks);
	memset(l, 0, sizeof(*l));	/* the request owns the pins and the busy count now */
	if (r->nblocks == 0) {
		req_end(r, 0);
		return;
	}
	for (uint32_t i = 0; i < r->nblocks; i++) {
		struct aiod_wseg *w = talloc(r, struct aiod_wseg);
		uint32_t len = (i + 1 < r->nblocks) ? bs : r->len - i * bs;
		int ret;

		if (w == NULL) {
			r->error = -ENOMEM;
			break;
		}
		w->r = r;
		w->i = i;
		/* r keeps r->open busy (and its fd open) until it ends. */
		ret = aiod_engine_write(ctx->engine, r->open->fd, r->blocks[i]->idx, 0, len,
					r->off + (uint64_t)i * bs, deadline, write_seg_done, w);
		if (ret != 0) {
			talloc_free(w);
			r->error = ret;
			break;
		}
		r->pending++;
	}
	if (r->pending == 0) {
		write1_finish(r);
	}
}

/* ---- WROTE ---- */

static void wrote_handle(struct aiod_ctx *ctx, struct aiod_session *s, struct aiod_open *o,
			 const struct rtio_io_req *m)
{
	uint64_t end = m->offset + m->length;

	/* Loading blocks of the range are detached too: they may hold the old bytes. */
	(void)aiod_cache_invalidate(ctx->cache, o->file->dev, o->file->ino, m->offset, m->length);
	if (m->length > 0) {
		ctx->st.bytes_written += m->length;
		if (end > o->file->known_size) {
			o->file->known_size = end;
		}
		aggregate_writeback(ctx, o, m->offset, m->length);
	}
	reply_simple(ctx, s, RTIO_OP_WROTE, m->hdr.req_id, 0);
}

/* ---- FSYNC ---- */

static void fsync_done(void *private_data, int result)
{
	req_end(private_data, result);
}

/* ---- dispatch ---- */

static void protocol_error(struct aiod_ctx *ctx, struct aiod_session *s, const void *m, size_t len,
			   int err)
{
	struct rtio_hdr h;

	(void)len;
	aiod_session_protocol_error(s, "dropped a malformed request", err);
	if (len < sizeof(h)) {
		return;
	}
	memcpy(&h, m, sizeof(h));
	/* Answer when we can tell what it was, so the client does not wait for nothing. */
	if (h.magic == RTIO_MAGIC && h.version == RTIO_PROTO_VERSION && h.opcode < RTIO_OP_MAX &&
	    h.opcode != RTIO_OP_READ1 && rtio_msg_expected_len(h.opcode, 1) != 0 &&
	    (h.opcode == RTIO_OP_READ0 || h.opcode == RTIO_OP_WRITE0 || h.opcode == RTIO_OP_WRITE1 ||
	     h.opcode == RTIO_OP_FSYNC || h.opcode == RTIO_OP_WROTE)) {
		reply_simple(ctx, s, h.opcode, h.req_id, err);
	}
}

void aiod_data_handle(struct aiod_ctx *ctx, struct aiod_session *s, const union rtio_msg *m,
		      size_t len)
{
	struct aiod_peer *p = aiod_peer_of(s);	/* the queue exists only after CONNECT */
	struct aiod_req *r;
	struct aiod_open *o = NULL;
	struct aiod_lease *l = NULL;
	int ret = rtio_msg_verify(m, len, 0);

	if (ret != 0) {
		protocol_error(ctx, s, m, len, ret);
		return;
	}
	ctx->st.requests++;
	switch (m->hdr.opcode) {
	case RTIO_OP_READ0:
	case RTIO_OP_WRITE0:
	case RTIO_OP_FSYNC:
	case RTIO_OP_WROTE:
		o = aiod_open_find(&p->opens, m->io_req.file_id);
		if (o == NULL) {
			reply_simple(ctx, s, m->hdr.opcode, m->hdr.req_id, -EBADF);
			return;
		}
		if ((m->hdr.opcode == RTIO_OP_READ0 && !o->readable) ||
		    ((m->hdr.opcode == RTIO_OP_WRITE0 || m->hdr.opcode == RTIO_OP_WROTE) &&
		     !o->writable)) {
			reply_simple(ctx, s, m->hdr.opcode, m->hdr.req_id, -EBADF);
			return;
		}
		if (m->hdr.opcode == RTIO_OP_WRITE0 &&
		    !(aiod_session_features(s) & RTIO_FEAT_SHM_WRITE)) {
			/*
			 * Its region is read-only: the staging blocks would reach the
			 * file with whatever they held before (another file's bytes).
			 */
			reply_simple(ctx, s, m->hdr.opcode, m->hdr.req_id, -EPERM);
			return;
		}
		if (m->hdr.opcode != RTIO_OP_FSYNC &&
		    ((m->hdr.opcode != RTIO_OP_WROTE && m->io_req.length > ctx->cfg->max_io) ||
		     m->io_req.offset > INT64_MAX ||
		     m->io_req.offset + m->io_req.length > (uint64_t)INT64_MAX)) {
			reply_simple(ctx, s, m->hdr.opcode, m->hdr.req_id, -EINVAL);
			return;
		}
		if (m->hdr.opcode == RTIO_OP_WROTE) {
			wrote_handle(ctx, s, o, &m->io_req);	/* no buffers, no disk: answered now */
			return;
		}
		break;
	case RTIO_OP_READ1:
		l = aiod_lease_find(p, m->release_req.token);
		if (l == NULL) {
			protocol_error(ctx, s, m, len, -ENOENT);
			return;
		}
		aiod_lease_release(p, l);
		aiod_data_retry_blocked(ctx);
		return;
	case RTIO_OP_WRITE1:
		l = aiod_lease_find(p, m->release_req.token);
		if (l == NULL || !l->write) {
			reply_simple(ctx, s, m->hdr.opcode, m->hdr.req_id, -ENOENT);
			return;
		}
		break;
	default:
		/* Control opcodes do not belong on the queue. */
		protocol_error(ctx, s, m, len, -EPROTO);
		return;
	}
	r = talloc_zero(ctx, struct aiod_req);
	if (r == NULL) {
		reply_simple(ctx, s, m->hdr.opcode, m->hdr.req_id, -ENOMEM);
		return;
	}
	r->ctx = ctx;
	r->p = p;
	r->opcode = m->hdr.opcode;
	r->req_id = m->hdr.req_id;
	req_link(p, r);
	talloc_set_destructor(r, req_destructor);
	switch (m->hdr.opcode) {
	case RTIO_OP_READ0:
	case RTIO_OP_WRITE0:
		r->open = o;
		aiod_open_busy(o);
		r->off = m->io_req.offset;
		r->len = m->io_req.length;
		if (m->hdr.opcode == RTIO_OP_READ0) {
			(void)read0_start(r);
		} else {
			(void)write0_start(r);
		}
		return;
	case RTIO_OP_WRITE1:
		write1_start(r, l);
		return;
	case RTIO_OP_FSYNC:
		r->open = o;
		aiod_open_busy(o);
		ret = aiod_engine_fsync(ctx->engine, o->fd, m->io_req.length == 1, aiod_now_ns(),
					fsync_done, r);
		if (ret != 0) {
			req_end(r, ret);
		}
		return;
	default:
		break;
	}
}

void aiod_data_orphan_all(struct aiod_peer *p)
{
	while (p->reqs != NULL) {
		struct aiod_req *r = p->reqs;

		req_unlink(p, r);
		req_orphan(r);
	}
}
