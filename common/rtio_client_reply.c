/*
 * rtio client library, the reply queue: receive replies, find the operation
 * each answers by its slot, and hand it to the handler of the reply's opcode.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "rtio_client_priv.h"
#include "rtio_queue.h"
#include "rtio_shm.h"

/*
 * A handler gets the operation (already out of its slot) and the reply. It
 * returns 0 when it took care of io (finished it, queued its next chunk or
 * sent its next message), or -EPROTO, leaving io alone, when the reply does
 * not fit the operation: the dispatcher then fails io and kills the session.
 */
typedef int (*reply_handler_fn)(struct rtio_client_io *io, const union rtio_msg *m);

/*
 * The segments of a READ0/WRITE0 reply lie in the region's data part and
 * hold exactly bytes (aiod describes no more than it reports). Checked once,
 * before any of them is used.
 */
static int reply_check_segs(const struct rtio_client *c, const struct rtio_io_rep *rep,
			    size_t bytes)
{
	size_t pos = 0;

	/* rtio_msg_verify() bounded nseg by RTIO_MAX_SEGS. */
	for (uint32_t i = 0; i < rep->nseg; i++) {
		const struct rtio_seg *seg = &rep->seg[i];

		if (seg->shm_off < c->data_off || seg->shm_off > c->shm_size ||
		    seg->len > c->shm_size - seg->shm_off) {
			return -EPROTO;
		}
		pos += seg->len;
	}
	return pos == bytes ? 0 : -EPROTO;
}

/* Copy between the caller's buffer and the checked segments of a READ0/WRITE0 reply. */
static void reply_copy_segs(struct rtio_client_io *io, const struct rtio_io_rep *rep)
{
	uint8_t *user;

	if (io->buf == NULL) {
		return;	/* cancelled: the caller's buffer is not ours any more */
	}
	user = io->buf + io->done_bytes;
	for (uint32_t i = 0; i < rep->nseg; i++) {
		uint8_t *shm = io->c->shm + rep->seg[i].shm_off;

		if (io->kind == RTIO_IO_READ) {
			memcpy(user, shm, rep->seg[i].len);
		} else {
			memcpy(shm, user, rep->seg[i].len);
		}
		user += rep->seg[i].len;
	}
}

/* A chunk failed: what did arrive counts, the error only when nothing did. */
static void io_chunk_failed(struct rtio_client_io *io, int32_t res)
{
	rtio_cl_io_finish(io, io->done_bytes > 0 ? (ssize_t)io->done_bytes : res);
}

/* A chunk of res bytes is through: finish at EOF, when all is done or nobody waits; else go on. */
static void io_chunk_done(struct rtio_client_io *io, uint32_t res)
{
	io->done_bytes += res;
	if (io->cancelled || res < io->chunk || io->done_bytes == io->n) {
		rtio_cl_io_finish(io, (ssize_t)io->done_bytes);
		return;
	}
	rtio_cl_io_enqueue(io);
}

/* READ0 of a zero-copy read: the segments stay pinned for the caller. */
static void on_read0_pinned(struct rtio_client_io *io, const struct rtio_io_rep *rep)
{
	if (io->pin == NULL) {
		/* Cancelled: give the pinned blocks straight back. */
		(void)rtio_cl_send_release(io->c, rep->token);
	} else {
		io->pin->token = rep->token;
		io->pin->nseg = rep->nseg;
		memcpy(io->pin->seg, rep->seg, sizeof(io->pin->seg));
	}
	rtio_cl_io_finish(io, rep->hdr.result);
}

static int on_read0(struct rtio_client_io *io, const union rtio_msg *m)
{
	int32_t res = m->hdr.result;

	if (io->kind != RTIO_IO_READ && io->kind != RTIO_IO_PIN) {
		return -EPROTO;
	}
	if (res < 0) {
		io_chunk_failed(io, res);
		return 0;
	}
	if ((uint32_t)res > io->chunk || reply_check_segs(io->c, &m->io_rep, (size_t)res) != 0) {
		return -EPROTO;
	}
	if (io->kind == RTIO_IO_PIN) {
		on_read0_pinned(io, &m->io_rep);
		return 0;
	}
	reply_copy_segs(io, &m->io_rep);
	if (rtio_cl_send_release(io->c, m->io_rep.token) < 0) {
		rtio_cl_io_finish(io, -ENOTCONN);	/* io was in no slot: fail it here */
		return 0;
	}
	io_chunk_done(io, (uint32_t)res);
	return 0;
}

static int on_write0(struct rtio_client_io *io, const union rtio_msg *m)
{
	struct rtio_client *c = io->c;
	struct rtio_release_req rel;
	int32_t res = m->hdr.result;

	if (io->kind != RTIO_IO_WRITE) {
		return -EPROTO;
	}
	if (res < 0) {
		io_chunk_failed(io, res);
		return 0;
	}
	if ((uint32_t)res != io->chunk || reply_check_segs(c, &m->io_rep, (size_t)res) != 0) {
		return -EPROTO;
	}
	if (io->cancelled) {
		/* Nothing was copied: give the space back without writing. */
		(void)rtio_cl_send_release(c, m->io_rep.token);
		rtio_cl_io_finish(io, -ECANCELED);
		return 0;
	}
	reply_copy_segs(io, &m->io_rep);
	if (rtio_cl_slot_take(c, io) != 0) {
		return -EPROTO;	/* we just released one */
	}
	io->in_write1 = true;
	memset(&rel, 0, sizeof(rel));
	rtio_hdr_init(&rel.hdr, RTIO_OP_WRITE1, sizeof(rel), io->req_id);
	rel.token = m->io_rep.token;
	/* On failure rtio_cl_kill already failed io: it holds a slot again. */
	(void)rtio_cl_send(c, &rel, sizeof(rel));
	return 0;
}

static int on_write1(struct rtio_client_io *io, const union rtio_msg *m)
{
	int32_t res = m->hdr.result;

	if (io->kind != RTIO_IO_WRITE || !io->in_write1) {
		return -EPROTO;
	}
	io->in_write1 = false;
	if (res < 0) {
		io_chunk_failed(io, res);
		return 0;
	}
	if ((uint32_t)res > io->chunk) {
		return -EPROTO;
	}
	io_chunk_done(io, (uint32_t)res);
	return 0;
}

static int on_fsync(struct rtio_client_io *io, const union rtio_msg *m)
{
	if (io->kind != RTIO_IO_FSYNC) {
		return -EPROTO;
	}
	rtio_cl_io_finish(io, m->hdr.result);
	return 0;
}

static int on_wrote(struct rtio_client_io *io, const union rtio_msg *m)
{
	if (io->kind != RTIO_IO_WROTE || m->hdr.result > 0) {
		return -EPROTO;	/* WROTE answers 0 or -errno, never a byte count */
	}
	rtio_cl_io_finish(io, m->hdr.result);
	return 0;
}

/* The data-path replies; every other opcode on the reply queue is a protocol error. */
static const reply_handler_fn reply_handlers[RTIO_OP_MAX] = {
	[RTIO_OP_READ0] = on_read0,
	[RTIO_OP_WRITE0] = on_write0,
	[RTIO_OP_WRITE1] = on_write1,
	[RTIO_OP_FSYNC] = on_fsync,
	[RTIO_OP_WROTE] = on_wrote,
};

static void client_on_reply(struct rtio_client *c, const union rtio_msg *m)
{
	uint32_t s = (uint32_t)(m->hdr.req_id & RTIO_SLOT_MASK);
	reply_handler_fn handler = NULL;
	struct rtio_client_io *io;

	if (s >= c->max_inflight || c->slots[s] == NULL || c->slots[s]->req_id != m->hdr.req_id) {
		/* Not ours: aiod is confused or malicious; do not guess. */
		rtio_cl_kill(c, -ENOTCONN);
		return;
	}
	io = c->slots[s];
	rtio_cl_slot_release(c, io);
	if (m->hdr.opcode < RTIO_OP_MAX) {
		handler = reply_handlers[m->hdr.opcode];
	}
	if (handler != NULL && handler(io, m) == 0) {
		return;
	}
	/* A reply that does not fit the request: the session cannot be trusted. */
	rtio_cl_io_finish(io, -EPROTO);
	rtio_cl_kill(c, -ENOTCONN);
}

int rtio_cl_drain(struct rtio_client *c, const bool *done)
{
	union rtio_msg m;

	for (;;) {
		/* A sync wait whose reply came needs no extra, empty receive. */
		if (done != NULL && *done) {
			break;
		}
		ssize_t n = rtio_queue_recv((int)c->repq, c->qsock, &m, sizeof(m));

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno == EAGAIN) {
				break;
			}
			rtio_cl_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		if (rtio_msg_verify(&m, (size_t)n, 1) != 0) {
			rtio_cl_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		c->replies++;
		client_on_reply(c, &m);
		if (!c->alive) {
			return -ENOTCONN;
		}
	}
	rtio_cl_kick_queue(c);
	return c->alive ? 0 : -ENOTCONN;
}

int rtio_client_process(struct rtio_client *c)
{
	struct pollfd p;

	if (!c->alive) {
		return -ENOTCONN;
	}
	/* The socket only becomes readable when aiod closes it (or misbehaves). */
	p = (struct pollfd){ .fd = c->sock, .events = POLLIN };
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
		rtio_cl_kill(c, -ENOTCONN);
		return -ENOTCONN;
	}
	return rtio_cl_drain(c, NULL);
}
