/*
 * Writes. WRITE0 reserves staging blocks; the client copies its data in;
 * WRITE1 writes them to the file through the client's descriptor and, once
 * the kernel has the data, copies it into any cached blocks so every reader
 * sees it, then answers. Nothing acknowledged lives only in aiod.
 *
 * WROTE is the cheaper path vfs_rtio takes by default: smbd already wrote
 * the bytes into the page cache itself (one copy instead of two), and aiod
 * drops the cached blocks of the range before it answers, so no reader after
 * the acknowledgement can see old bytes, and schedules the write-back as for
 * its own writes (writeback.c: write aggregation, recorders).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>

#include "dataplane.h"
#include "log.h"
#include "files.h"
#include "session.h"
#include "writeback.h"

static void write_seg_done(void *private_data, int result);

static bool wseg_of(void *private_data, void *arg)
{
	return ((struct aiod_wseg *)private_data)->r == arg;
}

void aiod_write1_cancel(struct aiod_req *r)
{
	(void)aiod_engine_cancel(r->ctx->engine, write_seg_done, wseg_of, r);
}

/* ---- WRITE0 / WRITE1 ---- */

bool aiod_write0_start(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;
	struct aiod_cache *c = ctx->cache;
	uint32_t bs = c->block_size;
	uint32_t n = aiod_req_span(r);
	struct rtio_io_rep rep;
	struct aiod_lease *l;

	if (aiod_req_over_quota(r) || n > c->free.count + c->lru.count) {
		aiod_req_block(r);
		return true;
	}
	l = aiod_lease_new(r->p);
	if (l == NULL) {
		aiod_req_end(r, -EBUSY);
		return false;
	}
	memset(&rep, 0, sizeof(rep));
	for (uint32_t i = 0; i < n; i++) {
		struct aiod_block *b = aiod_cache_get(c);

		b->state = AIOD_BLK_STAGING;
		l->blocks[i] = b;
		rep.seg[i].shm_off = aiod_block_shm_off(ctx, b);
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
	if (r->p != NULL) {	/* an orphan's write still lands: the session is gone */
		r->p->bytes_written += total;
	}
	if (total > 0 && r->off + total > r->open->file->known_size) {
		r->open->file->known_size = r->off + total;
	}
	if (total > 0) {
		aiod_writeback_wrote(ctx, r->open, r->off, total);
	}
	aiod_write_reply(r, total > 0 || r->error == 0 ? (int)total : r->error);
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

void aiod_write1_start(struct aiod_req *r, struct aiod_lease *l)
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
		aiod_req_end(r, 0);
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

void aiod_wrote_apply(struct aiod_ctx *ctx, struct aiod_session *s, struct aiod_open *o,
		      const struct rtio_io_req *m)
{
	uint64_t end = m->offset + m->length;

	/* Loading blocks of the range are detached too: they may hold the old bytes. */
	(void)aiod_cache_invalidate(ctx->cache, o->file->dev, o->file->ino, m->offset, m->length);
	if (m->length > 0) {
		ctx->st.bytes_written += m->length;
		if (aiod_peer_of(s) != NULL) {
			aiod_peer_of(s)->bytes_written += m->length;
		}
		if (end > o->file->known_size) {
			o->file->known_size = end;
		}
		aiod_writeback_wrote(ctx, o, m->offset, m->length);
	}
}

/* ---- FSYNC ---- */

void aiod_fsync_done(void *private_data, int result)
{
	aiod_req_end(private_data, result);
}
