/*
 * Data requests from the message queues (READ0/READ1, WRITE0/WRITE1, FSYNC,
 * WROTE): their dispatch by opcode and their life -- the blocks a request
 * pins, its reply, its end, and what happens when its session goes.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>

#include "dataplane.h"
#include "log.h"
#include "files.h"
#include "requests.h"
#include "session.h"
#include "writeback.h"

static void req_link(struct aiod_peer *p, struct aiod_req *r)
{
	r->rprev = NULL;
	r->rnext = p->reqs;
	if (p->reqs != NULL) {
		p->reqs->rprev = r;
	}
	p->reqs = r;
	p->inflight++;
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
	p->inflight--;
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
		aiod_write1_cancel(r);
	}
}


static int req_destructor(struct aiod_req *r)
{
	struct aiod_ctx *ctx = r->ctx;

	if (r->blocked) {
		aiod_waitq_remove(ctx, r);
	}
	if (r->held) {
		aiod_write_hold_remove(ctx, r);
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
void aiod_req_take(struct aiod_req *r, struct aiod_block *b)
{
	r->blocks[r->nblocks++] = b;
	if (r->p != NULL) {
		aiod_peer_pin(r->p, 1);
	}
}

void aiod_req_unpin(struct aiod_req *r)
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

void aiod_reply_simple(struct aiod_ctx *ctx, struct aiod_session *s, uint16_t opcode,
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
void aiod_req_end(struct aiod_req *r, int result)
{
	struct aiod_ctx *ctx = r->ctx;

	aiod_req_unpin(r);
	aiod_reply_simple(ctx, r->p != NULL ? r->p->s : NULL, r->opcode, r->req_id, result);
	talloc_free(r);
	aiod_data_retry_blocked(ctx);
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
	    rtio_msg_expected_len(h.opcode, 1) != 0 &&
	    (h.opcode == RTIO_OP_READ0 || h.opcode == RTIO_OP_WRITE0 || h.opcode == RTIO_OP_WRITE1 ||
	     h.opcode == RTIO_OP_FSYNC || h.opcode == RTIO_OP_WROTE)) {
		aiod_reply_simple(ctx, s, h.opcode, h.req_id, err);
	}
}

/* A request of p for message m, in p's list; NULL (answered ENOMEM) when out of memory. */
static struct aiod_req *req_new(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m)
{
	struct aiod_req *r = talloc_zero(ctx, struct aiod_req);

	if (r == NULL) {
		aiod_reply_simple(ctx, p->s, m->hdr.opcode, m->hdr.req_id, -ENOMEM);
		return NULL;
	}
	r->ctx = ctx;
	r->p = p;
	r->opcode = m->hdr.opcode;
	r->req_id = m->hdr.req_id;
	r->arrived_ns = aiod_now_ns();
	req_link(p, r);
	p->requests++;
	talloc_set_destructor(r, req_destructor);
	return r;
}

/* READ0 and WRITE0: a request on o's range, holding o busy while it lives. */
static void start_range(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m,
			struct aiod_open *o)
{
	struct aiod_req *r = req_new(ctx, p, m);

	if (r == NULL) {
		return;
	}
	r->open = o;
	aiod_open_busy(o);
	r->off = m->io_req.offset;
	r->len = m->io_req.length;
	if (m->hdr.opcode == RTIO_OP_READ0) {
		(void)aiod_read0_start(r);
	} else {
		(void)aiod_write0_start(r);
	}
}

static void start_fsync(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m,
			struct aiod_open *o)
{
	struct aiod_req *r = req_new(ctx, p, m);
	int ret;

	if (r == NULL) {
		return;
	}
	r->open = o;
	aiod_open_busy(o);
	ret = aiod_engine_fsync(ctx->engine, o->fd, m->io_req.length == 1, aiod_now_ns(),
				aiod_fsync_done, r);
	if (ret != 0) {
		aiod_req_end(r, ret);
	}
}

/*
 * No buffers, no disk: answered now, unless the writer is ahead of its
 * write-back (writehold.c). Only then is it a request, kept until answered.
 */
static void start_wrote(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m,
			struct aiod_open *o)
{
	struct aiod_req *r;

	aiod_wrote_apply(ctx, p->s, o, &m->io_req);
	if (!aiod_writeback_ahead(ctx, o)) {
		aiod_reply_simple(ctx, p->s, RTIO_OP_WROTE, m->hdr.req_id, 0);
		return;
	}
	r = req_new(ctx, p, m);
	if (r == NULL) {
		return;		/* answered */
	}
	r->open = o;
	aiod_open_busy(o);
	aiod_write_reply(r, 0);
}

/* HIT has no reply: the client already has its bytes; aiod learns what was read. */
static void start_hit(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m,
		      struct aiod_open *o)
{
	aiod_read_hit(ctx, p, o, m->io_req.offset, m->io_req.length);
}

/* CREDITS: kept for aiodctl sessions (monitor.c), nothing else. */
static void start_credits(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m,
			  struct aiod_open *o)
{
	(void)ctx;
	(void)o;
	p->credits = m->credits_req;
}

/*
 * LOCAL_READS: reads the client made without aiod (rtio:random = local),
 * counted so that aiodctl stats and sessions show them; nothing else.
 */
static void start_local_reads(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m,
			      struct aiod_open *o)
{
	(void)o;
	ctx->st.local_reads += m->local_reads_req.reads;
	ctx->st.local_bytes += m->local_reads_req.bytes;
	p->local_reads += m->local_reads_req.reads;
	p->local_bytes += m->local_reads_req.bytes;
}

/* READ1 has no reply: a token it does not know is the client's mistake, counted. */
static void start_read1(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m,
			struct aiod_open *o)
{
	struct aiod_lease *l = aiod_lease_find(p, m->release_req.token);

	(void)o;
	if (l == NULL) {
		protocol_error(ctx, p->s, m, sizeof(m->release_req), -ENOENT);
		return;
	}
	aiod_lease_release(p, l);
	aiod_data_retry_blocked(ctx);
}

static void start_write1(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m,
			 struct aiod_open *o)
{
	struct aiod_lease *l = aiod_lease_find(p, m->release_req.token);
	struct aiod_req *r;

	(void)o;
	if (l == NULL || !l->write) {
		aiod_reply_simple(ctx, p->s, m->hdr.opcode, m->hdr.req_id, -ENOENT);
		return;
	}
	r = req_new(ctx, p, m);
	if (r != NULL) {
		aiod_write1_start(r, l);
	}
}

/* What the dispatch checks of a data opcode before its start function runs. */
struct data_op {
	bool on_open;		/* names a file id of the peer's opens */
	bool reads, writes;	/* the open must be readable / writable */
	bool ranged;		/* offset + length must stay below 2^63 */
	bool bounded;		/* and length at most max_io */
	bool shm_write;		/* the client copies into the region: it must be writable */
	bool no_reply;		/* the client waits for nothing: a refusal is only counted */
	void (*start)(struct aiod_ctx *ctx, struct aiod_peer *p, const union rtio_msg *m,
		      struct aiod_open *o);
};

static const struct data_op data_ops[RTIO_OP_MAX] = {
	[RTIO_OP_READ0] = { .on_open = true, .reads = true, .ranged = true, .bounded = true,
			    .start = start_range },
	[RTIO_OP_WRITE0] = { .on_open = true, .writes = true, .ranged = true, .bounded = true,
			     .shm_write = true, .start = start_range },
	[RTIO_OP_WROTE] = { .on_open = true, .writes = true, .ranged = true,
			    .start = start_wrote },
	[RTIO_OP_FSYNC] = { .on_open = true, .start = start_fsync },
	[RTIO_OP_HIT] = { .on_open = true, .reads = true, .ranged = true, .bounded = true,
			  .no_reply = true, .start = start_hit },
	[RTIO_OP_CREDITS] = { .no_reply = true, .start = start_credits },
	[RTIO_OP_LOCAL_READS] = { .no_reply = true, .start = start_local_reads },
	[RTIO_OP_READ1] = { .start = start_read1 },
	[RTIO_OP_WRITE1] = { .start = start_write1 },
};

/* 0, or the -errno m gets for o under op's rules. */
static int data_op_check(const struct aiod_ctx *ctx, const struct aiod_session *s,
			 const struct data_op *op, const union rtio_msg *m,
			 const struct aiod_open *o)
{
	if (o == NULL || (op->reads && !o->readable) || (op->writes && !o->writable)) {
		return -EBADF;
	}
	if (op->shm_write && !(aiod_session_features(s) & RTIO_FEAT_SHM_WRITE)) {
		/* Its region is read-only: the staging blocks would reach the file with
		 * whatever they held before (another file's bytes). */
		return -EPERM;
	}
	if (op->ranged && ((op->bounded && m->io_req.length > ctx->cfg->max_io) ||
			   m->io_req.offset > INT64_MAX ||
			   m->io_req.offset + m->io_req.length > (uint64_t)INT64_MAX)) {
		return -EINVAL;
	}
	return 0;
}

void aiod_data_handle(struct aiod_ctx *ctx, struct aiod_session *s, const union rtio_msg *m,
		      size_t len)
{
	struct aiod_peer *p = aiod_peer_of(s);	/* the queue exists only after CONNECT */
	const struct data_op *op;
	struct aiod_open *o = NULL;
	int ret = rtio_msg_verify(m, len, 0);

	if (ret != 0) {
		protocol_error(ctx, s, m, len, ret);
		return;
	}
	ctx->st.requests++;
	op = &data_ops[m->hdr.opcode];	/* verify checked opcode < RTIO_OP_MAX */
	if (op->start == NULL) {
		/* Control opcodes do not belong on the queue. */
		protocol_error(ctx, s, m, len, -EPROTO);
		return;
	}
	if (op->on_open) {
		o = aiod_open_find(&p->opens, m->io_req.file_id);
		ret = data_op_check(ctx, s, op, m, o);
		if (ret != 0 && op->no_reply) {
			/* e.g. a HIT racing the file's CLOSE: nobody to tell */
			ctx->st.errors++;
			return;
		}
		if (ret != 0) {
			aiod_reply_simple(ctx, s, m->hdr.opcode, m->hdr.req_id, ret);
			return;
		}
	}
	op->start(ctx, p, m, o);
}

void aiod_data_orphan_all(struct aiod_peer *p)
{
	while (p->reqs != NULL) {
		struct aiod_req *r = p->reqs;

		req_unlink(p, r);
		req_orphan(r);
	}
}
