/*
 * io_uring engine: see engine.h.
 *
 * Submission is batched: queueing an operation only arms a tevent immediate;
 * the immediate hands every operation that fits in the device queue to the
 * kernel with one io_uring_submit(). Completions wake us through an eventfd
 * registered with the ring and are reaped in one batch.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "edf.h"
#include "clock.h"

#include "engine_private.h"

static int engine_destructor(struct aiod_engine *e)
{
	if (e->ring_ok) {
		io_uring_queue_exit(&e->ring);
	}
	if (e->efd >= 0) {
		close(e->efd);
	}
	return 0;
}

static void engine_submit(struct tevent_context *ev, struct tevent_immediate *im, void *private_data);

static void engine_arm(struct aiod_engine *e)
{
	if (!e->submit_armed) {
		e->submit_armed = true;
		tevent_schedule_immediate(e->submit_im, e->ev, engine_submit, e);
	}
}

static void engine_prep(struct aiod_engine *e, struct io_uring_sqe *sqe, struct engine_op *op)
{
	switch (op->kind) {
	case ENGINE_READ:
		if (e->st.fixed_buffers) {
			io_uring_prep_read_fixed(sqe, op->fd, op->buf, op->len, op->off, (int)op->block);
		} else {
			io_uring_prep_read(sqe, op->fd, op->buf, op->len, op->off);
		}
		break;
	case ENGINE_READV:
		io_uring_prep_readv(sqe, op->fd, op->iov, op->piece_niov, op->off);
		break;
	case ENGINE_WRITE:
		if (e->st.fixed_buffers) {
			io_uring_prep_write_fixed(sqe, op->fd, op->buf, op->len, op->off, (int)op->block);
		} else {
			io_uring_prep_write(sqe, op->fd, op->buf, op->len, op->off);
		}
		break;
	case ENGINE_FSYNC:
		io_uring_prep_fsync(sqe, op->fd, op->datasync ? IORING_FSYNC_DATASYNC : 0);
		break;
	case ENGINE_WRITEBACK:
		/* IORING_OP_SYNC_FILE_RANGE always runs in io-wq: its waits block a worker, not us. */
		io_uring_prep_sync_file_range(sqe, op->fd, op->len, op->off, op->sfr_flags);
		break;
	}
	io_uring_sqe_set_data(sqe, op);
}

/*
 * At debug level, every operation as it goes to the device and comes back:
 * fd, offset, length, how far its deadline is (negative: already late) and
 * how many wait behind it, then how long the device took. Where a stream
 * went late on a busy disk, this is the order the disk was given.
 */
static void engine_trace_submit(struct aiod_engine *e, struct engine_op *op)
{
	if (!aiod_log_enabled(AIOD_LOG_DEBUG)) {
		return;
	}
	op->submit_ns = aiod_now_ns();
	AIOD_DEBUG("engine: submit kind %d fd %d off %" PRIu64 " len %" PRIu32 " deadline %+.1f ms, %u queued",
		   (int)op->kind, op->fd, op->off, op->len,
		   ((double)op->item.deadline_ns - (double)op->submit_ns) / 1e6, e->queue->count);
}

static void engine_trace_complete(const struct engine_op *op, int res)
{
	uint64_t now;

	if (op->submit_ns == 0 || !aiod_log_enabled(AIOD_LOG_DEBUG)) {
		return;
	}
	now = aiod_now_ns();
	AIOD_DEBUG("engine: done fd %d off %" PRIu64 " res %d in %.1f ms, deadline %+.1f ms",
		   op->fd, op->off, res, (double)(now - op->submit_ns) / 1e6,
		   ((double)op->item.deadline_ns - (double)now) / 1e6);
}

static void engine_submit(struct tevent_context *ev, struct tevent_immediate *im, void *private_data)
{
	struct aiod_engine *e = private_data;
	unsigned n = 0;
	int ret;

	(void)ev;
	(void)im;
	e->submit_armed = false;
	/* With every slot taken, one piece more may go behind the last (engine_pick_behind()). */
	while (e->st.inflight <= e->depth) {
		bool slot = e->st.inflight < e->depth, behind;
		struct engine_op *op = slot ? engine_pick(e) : engine_pick_behind(e);
		struct io_uring_sqe *sqe;

		if (op == NULL) {
			break;
		}
		sqe = io_uring_get_sqe(&e->ring);
		if (sqe == NULL) {
			break;
		}
		aiod_edf_remove(e->queue, &op->item);
		engine_grow(e, op);
		op->piece_len = engine_piece(e, op, &op->piece_niov, &behind);
		if (behind && op->piece_len < op->len) {
			struct engine_op *piece = engine_split(e, op, op->piece_len, op->piece_niov);

			if (piece != NULL) {
				op = piece;	/* the read itself is back in the queue with the rest */
			}
		}
		if (engine_is_read(op)) {
			e->last_fd = op->fd;
			e->last_end = op->off + op->piece_len;
		}
		e->last_wb_fd = -1;
		if (op->kind == ENGINE_WRITEBACK) {
			e->last_wb_fd = op->fd;
			e->last_wb_end = op->off + op->len;
		}
		op->in_kernel = true;
		if (!slot) {
			e->st.behind++;
		}
		engine_prep(e, sqe, op);
		engine_trace_submit(e, op);
		e->st.inflight++;
		n++;
	}
	if (n == 0) {
		return;
	}
	do {
		ret = io_uring_submit(&e->ring);
	} while (ret == -EINTR);
	if (ret < 0) {
		/* The SQEs stay in the ring; the next arm retries them. */
		AIOD_ERR("io_uring_submit: %s", strerror(-ret));
		engine_arm(e);
		return;
	}
	e->st.submitted += n;
}

void engine_finish(struct aiod_engine *e, struct engine_op *op, int res)
{
	if ((op->parent != NULL || op->children > 0 || op->short_seen) &&
	    !engine_behind_finish(e, op, &res)) {
		return;	/* a piece, or a read whose pieces are still in the kernel */
	}
	e->st.completed++;
	op->done(op->private_data, res < 0 || op->own_len == 0 ? res :
				   (int)((uint32_t)res < op->own_len ? (uint32_t)res : op->own_len));
	engine_done_along(e, op, res);
	talloc_free(op);
}

static void engine_complete(struct aiod_engine *e, struct engine_op *op, int res)
{
	e->st.inflight--;
	op->in_kernel = false;
	engine_trace_complete(op, res);
	if (res == -EAGAIN || res == -EINTR) {
		e->st.resubmits++;
		goto requeue;
	}
	if (res > 0 && op->kind != ENGINE_FSYNC && op->kind != ENGINE_WRITEBACK) {
		op->done_bytes += (uint32_t)res;
		if ((uint32_t)res < op->len && !op->short_seen) {
			/*
			 * A piece (aiod_engine_set_slice()) or a short transfer:
			 * the rest goes back in the queue, from where it stopped.
			 */
			/* A vectored read has no flat buffer (buf is NULL): its iovecs move instead. */
			if (op->kind == ENGINE_READV) {
				engine_iov_advance(op, (uint32_t)res);
			} else {
				op->buf += res;
			}
			op->off += (uint32_t)res;
			op->len -= (uint32_t)res;
			if ((uint32_t)res == op->piece_len) {
				e->st.sliced++;
			} else {
				e->st.resubmits++;
			}
			goto requeue;
		}
		res = (int)op->done_bytes;
	} else if (res == 0 && op->kind != ENGINE_FSYNC && op->kind != ENGINE_WRITEBACK) {
		res = (int)op->done_bytes;	/* EOF */
		if (op->kind == ENGINE_WRITE && res == 0) {
			res = -EIO;	/* a write that makes no progress would loop forever */
		}
	} else if (res < 0 && op->done_bytes > 0) {
		res = (int)op->done_bytes;	/* report what made it */
	}
	engine_finish(e, op, res);
	return;
requeue:
	if (aiod_edf_push(e->queue, &op->item) != 0) {
		engine_finish(e, op, -ENOMEM);
		return;
	}
	e->st.queued = e->queue->count;
}

static void engine_reap(struct tevent_context *ev, struct tevent_fd *fde, uint16_t flags,
			void *private_data)
{
	struct aiod_engine *e = private_data;
	eventfd_t v;

	(void)ev;
	(void)fde;
	(void)flags;
	(void)eventfd_read(e->efd, &v);	/* clear the wakeup; the CQ is the truth */
	for (;;) {
		struct io_uring_cqe *cqe;
		struct engine_op *done[64];
		int res[64];
		unsigned head, count = 0;

		io_uring_for_each_cqe(&e->ring, head, cqe) {
			done[count] = io_uring_cqe_get_data(cqe);
			res[count] = cqe->res;
			if (++count == 64) {
				break;
			}
		}
		if (count == 0) {
			break;
		}
		io_uring_cq_advance(&e->ring, count);
		for (unsigned i = 0; i < count; i++) {
			engine_complete(e, done[i], res[i]);
		}
	}
	if (aiod_edf_peek(e->queue) != NULL) {
		engine_arm(e);
	}
}

struct aiod_engine *aiod_engine_create(TALLOC_CTX *mem_ctx, struct tevent_context *ev,
				       uint32_t queue_depth, uint8_t *bufs, uint32_t block_size,
				       uint32_t nblocks, char *err, size_t errlen)
{
	struct aiod_engine *e = talloc_zero(mem_ctx, struct aiod_engine);
	struct io_uring_params p;
	struct iovec *iov;
	unsigned entries = 1;
	int ret;

	if (e == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->efd = -1;
	e->last_fd = -1;
	e->last_wb_fd = -1;
	e->wb_behind_on = true;
	e->ev = ev;
	e->bufs = bufs;
	e->block_size = block_size;
	e->nblocks = nblocks;
	e->depth = queue_depth;
	talloc_set_destructor(e, engine_destructor);
	/* One entry more: a piece may go behind another with every slot taken (engine_pick_behind()). */
	while (entries < queue_depth + 1) {
		entries <<= 1;
	}
	memset(&p, 0, sizeof(p));
	ret = io_uring_queue_init_params(entries, &e->ring, &p);
	if (ret < 0) {
		snprintf(err, errlen, "io_uring_queue_init(%u): %s", entries, strerror(-ret));
		talloc_free(e);
		return NULL;
	}
	e->ring_ok = true;
	iov = talloc_array(e, struct iovec, nblocks);
	if (iov == NULL) {
		snprintf(err, errlen, "out of memory");
		talloc_free(e);
		return NULL;
	}
	for (uint32_t i = 0; i < nblocks; i++) {
		iov[i].iov_base = bufs + (uint64_t)i * block_size;
		iov[i].iov_len = block_size;
	}
	ret = io_uring_register_buffers(&e->ring, iov, nblocks);
	if (ret == 0) {
		e->st.fixed_buffers = true;
	} else {
		AIOD_WARN("cannot register %u cache blocks as io_uring fixed buffers (%s); "
			  "using plain reads", nblocks, strerror(-ret));
	}
	talloc_free(iov);
	e->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (e->efd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		talloc_free(e);
		return NULL;
	}
	ret = io_uring_register_eventfd(&e->ring, e->efd);
	if (ret < 0) {
		snprintf(err, errlen, "io_uring_register_eventfd: %s", strerror(-ret));
		talloc_free(e);
		return NULL;
	}
	e->queue = aiod_edf_create(e);
	e->submit_im = tevent_create_immediate(e);
	e->efd_fde = tevent_add_fd(ev, e, e->efd, TEVENT_FD_READ, engine_reap, e);
	if (e->queue == NULL || e->submit_im == NULL || e->efd_fde == NULL) {
		snprintf(err, errlen, "out of memory");
		talloc_free(e);
		return NULL;
	}
	return e;
}

/* Every operation enters the EDF queue here: one place counts it and arms the ring. */
static int engine_push(struct aiod_engine *e, struct engine_op *op, uint64_t deadline_ns,
		       aiod_engine_done_fn done, void *private_data)
{
	op->done = done;
	op->private_data = private_data;
	op->item.deadline_ns = deadline_ns;
	if (aiod_edf_push(e->queue, &op->item) != 0) {
		talloc_free(op);
		return -ENOMEM;
	}
	e->st.queued = e->queue->count;
	engine_arm(e);
	return 0;
}

static int engine_queue(struct aiod_engine *e, enum engine_op_kind kind, int fd, uint32_t block,
			uint32_t buf_off, uint32_t len, uint64_t off, bool datasync,
			uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data)
{
	struct engine_op *op;

	if (kind != ENGINE_FSYNC && (block >= e->nblocks || buf_off > e->block_size ||
				     len > e->block_size - buf_off)) {
		return -EINVAL;
	}
	op = talloc_zero(e, struct engine_op);
	if (op == NULL) {
		return -ENOMEM;
	}
	op->kind = kind;
	op->fd = fd;
	op->block = block;
	op->buf = kind == ENGINE_FSYNC ? NULL : e->bufs + (uint64_t)block * e->block_size + buf_off;
	op->len = len;
	op->off = off;
	op->datasync = datasync;
	return engine_push(e, op, deadline_ns, done, private_data);
}

int aiod_engine_read(struct aiod_engine *e, int fd, uint32_t block, uint32_t buf_off, uint32_t len,
		     uint64_t off, uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data)
{
	return engine_queue(e, ENGINE_READ, fd, block, buf_off, len, off, false, deadline_ns, done,
			    private_data);
}

int aiod_engine_readv(struct aiod_engine *e, int fd, const uint32_t *blocks, uint32_t n,
		      uint64_t off, uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data)
{
	struct engine_op *op;

	if (n == 1) {
		return aiod_engine_read(e, fd, blocks[0], 0, e->block_size, off, deadline_ns, done,
					private_data);
	}
	if (n == 0 || n > ENGINE_MAX_IOV || (uint64_t)n * e->block_size > INT32_MAX) {
		return -EINVAL;
	}
	op = talloc_zero(e, struct engine_op);
	if (op == NULL) {
		return -ENOMEM;
	}
	op->kind = ENGINE_READV;
	op->fd = fd;
	op->len = n * e->block_size;
	op->off = off;
	op->niov = n;
	for (uint32_t i = 0; i < n; i++) {
		if (blocks[i] >= e->nblocks) {
			talloc_free(op);
			return -EINVAL;
		}
		op->iov[i].iov_base = e->bufs + (uint64_t)blocks[i] * e->block_size;
		op->iov[i].iov_len = e->block_size;
	}
	return engine_push(e, op, deadline_ns, done, private_data);
}

int aiod_engine_write(struct aiod_engine *e, int fd, uint32_t block, uint32_t buf_off, uint32_t len,
		      uint64_t off, uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data)
{
	return engine_queue(e, ENGINE_WRITE, fd, block, buf_off, len, off, false, deadline_ns, done,
			    private_data);
}

int aiod_engine_fsync(struct aiod_engine *e, int fd, bool datasync, uint64_t deadline_ns,
		      aiod_engine_done_fn done, void *private_data)
{
	return engine_queue(e, ENGINE_FSYNC, fd, 0, 0, 0, 0, datasync, deadline_ns, done,
			    private_data);
}

int aiod_engine_writeback(struct aiod_engine *e, int fd, uint64_t off, uint32_t len,
			  unsigned flags, uint64_t deadline_ns, aiod_engine_done_fn done,
			  void *private_data)
{
	struct engine_op *op = talloc_zero(e, struct engine_op);
	bool wait = (flags & AIOD_WB_WAIT) != 0;

	if (op == NULL) {
		return -ENOMEM;
	}
	op->kind = ENGINE_WRITEBACK;
	op->fd = fd;
	op->len = len;
	op->off = off;
	op->sfr_flags = wait ? SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			       SYNC_FILE_RANGE_WAIT_AFTER
			     : SYNC_FILE_RANGE_WRITE;
	op->wb_behind = wait && (flags & AIOD_WB_BEHIND) != 0;
	return engine_push(e, op, deadline_ns, done, private_data);
}

void aiod_engine_set_writeback_behind(struct aiod_engine *e, bool on)
{
	e->wb_behind_on = on;
}

unsigned aiod_engine_cancel(struct aiod_engine *e, aiod_engine_done_fn done,
			    bool (*match)(void *private_data, void *arg), void *arg)
{
	unsigned n = 0;
	uint32_t i = 0;

	while (i < e->queue->count) {
		struct engine_op *op = (struct engine_op *)e->queue->heap[i];

		/* A read in pieces (or one of them) has buffers in the kernel: it finishes normally. */
		if (op->done != done || op->parent != NULL || op->children > 0 ||
		    !match(op->private_data, arg)) {
			i++;
			continue;
		}
		aiod_edf_remove(e->queue, &op->item);	/* the heap shifts: look at i again */
		e->st.completed++;
		op->done(op->private_data, -ECANCELED);
		/* A read grown at dispatch and back in the queue after a short transfer. */
		engine_done_along(e, op, -ECANCELED);
		talloc_free(op);
		n++;
		i = 0;	/* the callback may have queued or cancelled more */
	}
	return n;
}

void aiod_engine_get_stats(const struct aiod_engine *e, struct aiod_engine_stats *out)
{
	*out = e->st;
	out->queued = e->queue->count;
}
