/*
 * rtio client library, asynchronous operations: starting them, the local
 * queue of operations waiting for a request slot, the slots themselves, and
 * sending on the request queue. Replies come back through rtio_client_reply.c.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "rtio_client_priv.h"
#include "rtio_queue.h"

/*
 * The request queue is non-blocking: when it is full we wait for room and
 * watch the control socket at the same time, so a dead aiod is noticed at
 * once (-ENOTCONN) rather than after the timeout.
 */
int rtio_cl_send(struct rtio_client *c, const void *msg, size_t len)
{
	int64_t deadline = -1;

	while (rtio_queue_send((int)c->reqq, c->qsock, msg, len) != 0) {
		struct pollfd p[2] = {
			{ .fd = (int)c->reqq, .events = POLLOUT },
			{ .fd = c->sock, .events = POLLIN },
		};
		int64_t left;

		if (errno == EINTR) {
			continue;
		}
		if (errno != EAGAIN) {
			rtio_cl_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		if (deadline < 0) {
			deadline = rtio_cl_now_ms() + c->timeout_ms;
		}
		left = deadline - rtio_cl_now_ms();
		if (left <= 0) {
			rtio_cl_kill(c, -ETIMEDOUT);
			return -ETIMEDOUT;
		}
		if (poll(p, 2, (int)left) < 0 && errno != EINTR) {
			rtio_cl_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			rtio_cl_kill(c, -ENOTCONN);	/* aiod closed the session or died */
			return -ENOTCONN;
		}
	}
	return 0;
}

int rtio_cl_send_release(struct rtio_client *c, uint64_t token)
{
	struct rtio_release_req rel;

	memset(&rel, 0, sizeof(rel));
	rtio_hdr_init(&rel.hdr, RTIO_OP_READ1, sizeof(rel), 0);
	rel.token = token;
	return rtio_cl_send(c, &rel, sizeof(rel));
}

void rtio_cl_io_finish(struct rtio_client_io *io, ssize_t result)
{
	struct rtio_client *c = io->c;
	rtio_client_done_fn done = io->done;
	void *private_data = io->private_data;

	c->pending--;
	c->changing -= rtio_cl_io_changes(io->kind);
	if (c->starting == io) {
		/* Failed inside its start function: the caller gets the error instead. */
		c->starting = NULL;
		c->starting_done = true;
		c->starting_result = result;
		done = NULL;
	}
	talloc_free(io);
	if (done != NULL) {
		done(result, private_data);
	}
}

int rtio_cl_slot_take(struct rtio_client *c, struct rtio_client_io *io)
{
	for (uint32_t i = 0; i < c->max_inflight; i++) {
		uint32_t s = (uint32_t)((c->seq + i) % c->max_inflight);
		if (c->slots[s] == NULL) {
			c->slots[s] = io;
			c->inflight++;
			c->seq++;
			io->req_id = (c->seq << RTIO_SLOT_BITS) | s;
			return 0;
		}
	}
	return -EBUSY;
}

void rtio_cl_slot_release(struct rtio_client *c, struct rtio_client_io *io)
{
	uint32_t s = (uint32_t)(io->req_id & RTIO_SLOT_MASK);

	if (io->req_id != 0 && s < c->max_inflight && c->slots[s] == io) {
		c->slots[s] = NULL;
		c->inflight--;
	}
	io->req_id = 0;
}

/* The request io sends next: a chunk of at most max_io of what is left, or its one message. */
static void io_next_request(struct rtio_client_io *io, struct rtio_io_req *req)
{
	const struct rtio_client *c = io->c;
	size_t left = io->n - io->done_bytes;
	uint32_t chunk = (uint32_t)(left < c->max_io ? left : c->max_io);

	memset(req, 0, sizeof(*req));
	switch (io->kind) {
	case RTIO_IO_READ:
	case RTIO_IO_PIN:
		io->chunk = chunk;
		rtio_hdr_init(&req->hdr, RTIO_OP_READ0, sizeof(*req), io->req_id);
		req->length = chunk;
		break;
	case RTIO_IO_WRITE:
		io->chunk = chunk;
		rtio_hdr_init(&req->hdr, RTIO_OP_WRITE0, sizeof(*req), io->req_id);
		req->length = chunk;
		break;
	case RTIO_IO_FSYNC:
		rtio_hdr_init(&req->hdr, RTIO_OP_FSYNC, sizeof(*req), io->req_id);
		req->length = io->datasync ? 1 : 0;
		break;
	case RTIO_IO_WROTE:
		rtio_hdr_init(&req->hdr, RTIO_OP_WROTE, sizeof(*req), io->req_id);
		req->length = (uint32_t)io->n;	/* bounded by io_check_args() */
		break;
	}
	req->file_id = io->file_id;
	req->offset = (uint64_t)io->off + io->done_bytes;
}

/* Send the next request of io. Needs a free slot. */
static void io_step(struct rtio_client_io *io)
{
	struct rtio_client *c = io->c;
	struct rtio_io_req req;

	if (!c->alive) {
		rtio_cl_io_finish(io, -ENOTCONN);
		return;
	}
	if (rtio_cl_slot_take(c, io) != 0) {
		/* Callers only step with a free slot. */
		rtio_cl_io_finish(io, -EBUSY);
		return;
	}
	io_next_request(io, &req);
	/* On failure rtio_cl_kill already failed every op in a slot, including io. */
	(void)rtio_cl_send(c, &req, sizeof(req));
}

void rtio_cl_kick_queue(struct rtio_client *c)
{
	while (c->alive && c->queue != NULL && c->inflight < c->max_inflight) {
		struct rtio_client_io *io = c->queue;
		c->queue = io->next;
		if (c->queue == NULL) {
			c->queue_tail = NULL;
		}
		io->next = NULL;
		io_step(io);
	}
}

void rtio_cl_io_enqueue(struct rtio_client_io *io)
{
	struct rtio_client *c = io->c;

	if (c->inflight < c->max_inflight && c->queue == NULL) {
		io_step(io);
		return;
	}
	if (c->queue_tail != NULL) {
		c->queue_tail->next = io;
	} else {
		c->queue = io;
	}
	c->queue_tail = io;
}

void rtio_cl_fail_all(struct rtio_client *c, int err)
{
	struct rtio_client_io *io;

	for (uint32_t i = 0; c->slots != NULL && i < c->max_inflight; i++) {
		io = c->slots[i];
		if (io != NULL) {
			rtio_cl_slot_release(c, io);
			rtio_cl_io_finish(io, err);
		}
	}
	while ((io = c->queue) != NULL) {
		c->queue = io->next;
		rtio_cl_io_finish(io, err);
	}
	c->queue_tail = NULL;
}

void rtio_cl_forget_callbacks(struct rtio_client *c)
{
	for (struct rtio_client_io *io = c->queue; io != NULL; io = io->next) {
		io->done = NULL;
	}
	/* A connect that failed half way has max_inflight but no slots yet. */
	for (uint32_t i = 0; c->slots != NULL && i < c->max_inflight; i++) {
		if (c->slots[i] != NULL) {
			c->slots[i]->done = NULL;
		}
	}
}

/* What a kind of operation needs of the session and its arguments before it may start. */
static int io_check_args(const struct rtio_client *c, const struct rtio_io_args *a)
{
	switch (a->kind) {
	case RTIO_IO_WRITE:
		if (!rtio_client_has_feature(c, RTIO_FEAT_SHM_WRITE)) {
			return -EPERM;	/* the region is mapped read-only: a store would fault */
		}
		break;
	case RTIO_IO_WROTE:
		if (!rtio_client_has_feature(c, RTIO_FEAT_WROTE)) {
			return -EOPNOTSUPP;
		}
		if (a->n > UINT32_MAX) {
			return -EINVAL;	/* one WROTE message carries the length in 32 bits */
		}
		break;
	case RTIO_IO_PIN:
		if (a->n > c->max_io) {
			return -EINVAL;	/* one READ0: its pins are handed out whole */
		}
		break;
	case RTIO_IO_READ:
	case RTIO_IO_FSYNC:
		break;
	}
	/* No getpid() here: a syscall per I/O. Callers check ownership after fork. */
	if (!c->alive) {
		return -ENOTCONN;
	}
	if (a->off < 0 || (a->kind != RTIO_IO_FSYNC && a->n > (size_t)SSIZE_MAX)) {
		return -EINVAL;
	}
	return 0;
}

int rtio_cl_io_start(struct rtio_client *c, const struct rtio_io_args *a, rtio_client_done_fn done,
		     void *private_data, struct rtio_client_io **out)
{
	struct rtio_client_io *io;
	int ret;

	*out = NULL;
	ret = io_check_args(c, a);
	if (ret < 0) {
		return ret;
	}
	io = talloc_zero(c, struct rtio_client_io);
	if (io == NULL) {
		return -ENOMEM;
	}
	io->c = c;
	io->kind = a->kind;
	io->file_id = a->file_id;
	io->buf = a->buf;
	io->n = a->n;
	io->off = a->off;
	io->datasync = a->datasync;
	io->pin = a->pin;
	io->done = done;
	io->private_data = private_data;
	c->pending++;
	c->changing += rtio_cl_io_changes(io->kind);
	/* Zero-length I/O also makes the round trip: aiod validates the file id. */
	c->starting = io;
	c->starting_done = false;
	rtio_cl_io_enqueue(io);
	if (c->starting_done) {
		/* io is gone already (the send failed and the session died). */
		return c->starting_result < 0 ? (int)c->starting_result : -ENOTCONN;
	}
	c->starting = NULL;
	*out = io;
	return 0;
}

int rtio_client_pread_start(struct rtio_client *c, uint64_t file_id, void *buf, size_t n,
			    off_t off, rtio_client_done_fn done, void *private_data,
			    struct rtio_client_io **out)
{
	const struct rtio_io_args a = {
		.kind = RTIO_IO_READ, .file_id = file_id, .buf = buf, .n = n, .off = off,
	};

	return rtio_cl_io_start(c, &a, done, private_data, out);
}

int rtio_client_pwrite_start(struct rtio_client *c, uint64_t file_id, const void *buf, size_t n,
			     off_t off, rtio_client_done_fn done, void *private_data,
			     struct rtio_client_io **out)
{
	/* The library never writes through buf for a write. */
	const struct rtio_io_args a = {
		.kind = RTIO_IO_WRITE, .file_id = file_id, .buf = (void *)(uintptr_t)buf, .n = n,
		.off = off,
	};

	return rtio_cl_io_start(c, &a, done, private_data, out);
}

int rtio_client_fsync_start(struct rtio_client *c, uint64_t file_id, bool datasync,
			    rtio_client_done_fn done, void *private_data,
			    struct rtio_client_io **out)
{
	const struct rtio_io_args a = {
		.kind = RTIO_IO_FSYNC, .file_id = file_id, .datasync = datasync,
	};

	return rtio_cl_io_start(c, &a, done, private_data, out);
}

int rtio_client_wrote_start(struct rtio_client *c, uint64_t file_id, size_t n, off_t off,
			    rtio_client_done_fn done, void *private_data,
			    struct rtio_client_io **out)
{
	const struct rtio_io_args a = {
		.kind = RTIO_IO_WROTE, .file_id = file_id, .n = n, .off = off,
	};

	return rtio_cl_io_start(c, &a, done, private_data, out);
}

void rtio_client_abort(struct rtio_client *c)
{
	rtio_cl_kill(c, -ETIMEDOUT);
}

void rtio_client_io_cancel(struct rtio_client_io *io)
{
	struct rtio_client *c;

	if (io == NULL) {
		return;
	}
	c = io->c;
	io->done = NULL;
	io->buf = NULL;
	io->pin = NULL;
	io->cancelled = true;
	/* Still queued locally: nothing reached aiod, just drop it. */
	for (struct rtio_client_io **pp = &c->queue; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == io) {
			*pp = io->next;
			if (c->queue_tail == io) {
				c->queue_tail = NULL;
				for (struct rtio_client_io *q = c->queue; q != NULL; q = q->next) {
					c->queue_tail = q;
				}
			}
			c->pending--;
			c->changing -= rtio_cl_io_changes(io->kind);
			talloc_free(io);
			return;
		}
	}
	/* In flight: the reply handler releases aiod's buffers and frees io. */
}

int rtio_cl_send_oneway(struct rtio_client *c, const void *msg, size_t len)
{
	if (rtio_queue_send((int)c->reqq, c->qsock, msg, len) == 0) {
		return 0;
	}
	if (errno == EAGAIN || errno == EINTR) {
		return -EAGAIN;
	}
	rtio_cl_kill(c, -ENOTCONN);
	return -ENOTCONN;
}

/* Fire and forget, like HIT: nothing waits for aiod to take it. */
int rtio_client_report_credits(struct rtio_client *c, uint32_t granted, uint32_t max,
			       uint32_t orig, uint32_t wanted, uint32_t held)
{
	struct rtio_credits_req r;

	if (!c->alive || !(c->features & RTIO_FEAT_CREDITS)) {
		return -ENOTSUP;
	}
	memset(&r, 0, sizeof(r));
	rtio_hdr_init(&r.hdr, RTIO_OP_CREDITS, sizeof(r), 0);
	r.granted = granted;
	r.max = max;
	r.orig = orig;
	r.wanted = wanted;
	r.held = held;
	return rtio_cl_send_oneway(c, &r, sizeof(r)) == 0 ? 0 : -EAGAIN;
}

/* One report a second at most: the reads it counts can be thousands a second. */
#define RTIO_LOCAL_REPORT_MS 1000

/* The coarse clock is enough for "a second passed" and costs no more than a load. */
static int64_t coarse_now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) {
		return 0;	/* cannot happen on Linux; 0 only delays the next report */
	}
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Fire and forget, like CREDITS; unlike them the counts are kept until one is queued. */
int rtio_client_report_local_reads(struct rtio_client *c)
{
	struct rtio_local_reads_req r;
	int ret;

	if (!c->alive || !(c->features & RTIO_FEAT_LOCAL_READS)) {
		return -ENOTSUP;
	}
	if (c->local_reads == 0) {
		return 0;
	}
	memset(&r, 0, sizeof(r));
	rtio_hdr_init(&r.hdr, RTIO_OP_LOCAL_READS, sizeof(r), 0);
	r.reads = c->local_reads;
	r.bytes = c->local_bytes;
	ret = rtio_cl_send_oneway(c, &r, sizeof(r));
	if (ret != 0) {
		return ret;
	}
	c->local_reads = 0;
	c->local_bytes = 0;
	c->local_report_ms = coarse_now_ms();
	return 0;
}

int rtio_client_count_local_read(struct rtio_client *c, size_t bytes)
{
	if (!c->alive || !(c->features & RTIO_FEAT_LOCAL_READS)) {
		return -ENOTSUP;
	}
	c->local_reads++;
	c->local_bytes += bytes;
	if (coarse_now_ms() - c->local_report_ms < RTIO_LOCAL_REPORT_MS) {
		return 0;
	}
	return rtio_client_report_local_reads(c);
}
