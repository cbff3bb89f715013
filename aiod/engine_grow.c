/*
 * Growing, slicing and re-keying queued operations (engine.h:
 * aiod_engine_set_grow(), aiod_engine_set_slice(), aiod_engine_rekey()):
 * what a request's owner decides about it at the moment the device takes
 * it, not when it was queued.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "engine_private.h"

void aiod_engine_set_grow(struct aiod_engine *e, aiod_engine_grow_fn grow, void *arg)
{
	e->grow = grow;
	e->grow_arg = arg;
}

void aiod_engine_set_slice(struct aiod_engine *e, aiod_engine_slice_fn fn, void *arg)
{
	e->slice = fn;
	e->slice_arg = arg;
}

void aiod_engine_set_rekey(struct aiod_engine *e, aiod_engine_rekey_fn fn, void *arg)
{
	e->rekey = fn;
	e->rekey_arg = arg;
}

void aiod_engine_set_waited(struct aiod_engine *e, aiod_engine_waited_fn fn, void *arg)
{
	e->waited = fn;
	e->waited_arg = arg;
}

bool aiod_engine_expedite(struct aiod_engine *e, aiod_engine_match_fn match, void *arg,
			  uint64_t deadline_ns)
{
	bool matched = false, moved = false;

	/* One pass for every operation match() picks, one reorder at the end. */
	for (uint32_t i = 0; i < e->queue->count; i++) {
		struct engine_op *op = (struct engine_op *)e->queue->heap[i];

		if (!match(arg, op->done, op->private_data)) {
			continue;
		}
		matched = true;
		if (deadline_ns < op->item.deadline_ns) {
			op->item.deadline_ns = deadline_ns;
			e->st.expedited++;
			moved = true;
		}
	}
	if (moved) {
		aiod_edf_reorder(e->queue);
	}
	return matched;
}

void aiod_engine_rekey(struct aiod_engine *e, uint64_t old_round_ns, uint64_t new_round_ns)
{
	if (e->rekey == NULL || old_round_ns == new_round_ns || e->queue->count == 0) {
		return;
	}
	for (uint32_t i = 0; i < e->queue->count; i++) {
		struct engine_op *op = (struct engine_op *)e->queue->heap[i];

		op->item.deadline_ns = e->rekey(e->rekey_arg, op->done, op->private_data,
						op->item.deadline_ns, old_round_ns, new_round_ns);
	}
	aiod_edf_reorder(e->queue);
}

/* Whether op is a READ of one whole cache block, not yet begun. */
static bool engine_whole_block(const struct aiod_engine *e, const struct engine_op *op)
{
	return op->kind == ENGINE_READ && op->len == e->block_size && op->done_bytes == 0 &&
	       op->buf == e->bufs + (uint64_t)op->block * e->block_size;
}

/*
 * A read of one whole cache block (aiod_engine_readv() of one block queues
 * a plain READ, which can use the registered buffer) as the one-iovec READV
 * it is: growing appends iovecs. Without this a stream's first read, the
 * client's own single block, never grew: nine streams opened together
 * spent the first round on nine 1 MiB reads (21 ms each on the emulated
 * disk) before any read-ahead, and then no request size kept every chunk
 * within a 0.5 s client buffer (bench/results/rt-ab-20261207-first-read-grows.md).
 */
static bool engine_as_readv(struct aiod_engine *e, struct engine_op *op)
{
	if (op->kind == ENGINE_READV) {
		return true;
	}
	if (!engine_whole_block(e, op)) {
		return false;
	}
	op->kind = ENGINE_READV;
	op->niov = 1;
	op->iov[0].iov_base = op->buf;
	op->iov[0].iov_len = op->len;
	return true;
}

/* The queued read of the same callback that starts where op ends on op's fd. */
static struct engine_op *engine_next_along(struct aiod_engine *e, const struct engine_op *op)
{
	for (uint32_t i = 0; i < e->queue->count; i++) {
		struct engine_op *y = (struct engine_op *)e->queue->heap[i];

		if ((y->kind == ENGINE_READV || engine_whole_block(e, y)) && y->fd == op->fd &&
		    y->done == op->done &&
		    y->off == op->off + op->len && y->along == NULL && y->done_bytes == 0 &&
		    y->parent == NULL) {
			return y;
		}
	}
	return NULL;
}

/*
 * Grow a read about to go to the device (a vectored one, or one whole
 * block) by the queued reads that follow it, while it is smaller than its
 * owner now wants (aiod_engine_grow_fn).
 * Once only, before any of it was transferred; the reads taken along keep
 * their own callbacks (engine_complete splits the result).
 */
void engine_grow(struct aiod_engine *e, struct engine_op *op)
{
	struct engine_op **tail = &op->along;
	uint64_t want;

	if (e->grow == NULL || (op->kind != ENGINE_READV && !engine_whole_block(e, op)) ||
	    op->along != NULL || op->done_bytes > 0 || op->parent != NULL) {
		return;
	}
	want = e->grow(e->grow_arg, op->done, op->private_data);
	op->own_len = op->len;
	while (op->len < want) {
		struct engine_op *y = engine_next_along(e, op);

		if (y == NULL || (uint64_t)op->len + y->len > INT32_MAX ||
		    (op->kind == ENGINE_READV ? op->niov : 1) +
		    (y->kind == ENGINE_READV ? y->niov : 1) > ENGINE_MAX_IOV) {
			break;
		}
		/* Only now, when something is taken along: a lone READ keeps its fixed buffer. */
		if (!engine_as_readv(e, op) || !engine_as_readv(e, y)) {
			break;
		}
		aiod_edf_remove(e->queue, &y->item);
		memcpy(op->iov + op->niov, y->iov, y->niov * sizeof(y->iov[0]));
		op->niov += y->niov;
		op->len += y->len;
		*tail = y;
		tail = &y->along;
		y->along = NULL;
		e->st.merged++;
	}
	e->st.queued = e->queue->count;
}

/*
 * How much of op the device is given now (aiod_engine_set_slice()): all of
 * it, or whole iovecs up to its piece; *niov says how many. Nothing is cut
 * where seeks cost nothing (no costs set): there a second request only adds
 * its own latency. A piece is never cut again.
 */
uint32_t engine_piece(const struct aiod_engine *e, const struct engine_op *op, uint32_t *niov,
		      bool *behind)
{
	uint32_t piece, len = 0, i;

	*niov = op->niov;
	*behind = false;
	if (op->kind != ENGINE_READV || e->slice == NULL || e->request_ns == 0 || op->parent != NULL) {
		return op->len;
	}
	piece = e->slice(e->slice_arg, op->done, op->private_data, behind);
	if (piece == 0 || piece >= op->len) {
		return op->len;
	}
	for (i = 0; i < op->niov; i++) {
		if (i > 0 && len + op->iov[i].iov_len > piece) {
			break;
		}
		len += (uint32_t)op->iov[i].iov_len;
	}
	*niov = i;
	return len;
}

/*
 * After op's own callback, the reads it took along (engine_grow), each with its part of res, the
 * bytes of the whole request (or an error for all): what lies beyond op's
 * own length, in order; past EOF a part is 0, as a read there would return.
 */
void engine_done_along(struct aiod_engine *e, struct engine_op *op, int res)
{
	uint64_t pos = op->own_len;

	while (op->along != NULL) {
		struct engine_op *y = op->along;
		int part = res;

		op->along = y->along;
		if (res >= 0) {
			uint64_t got = (uint64_t)res > pos ? (uint64_t)res - pos : 0;

			part = (int)(got < y->len ? got : y->len);
		}
		pos += y->len;
		e->st.completed++;
		y->done(y->private_data, part);
		talloc_free(y);
	}
}

void engine_iov_advance(struct engine_op *op, uint32_t n)
{
	uint32_t i = 0;

	while (i < op->niov && n >= op->iov[i].iov_len) {
		n -= (uint32_t)op->iov[i].iov_len;
		i++;
	}
	memmove(op->iov, op->iov + i, (op->niov - i) * sizeof(op->iov[0]));
	op->niov -= i;
	if (op->niov > 0) {
		op->iov[0].iov_base = (uint8_t *)op->iov[0].iov_base + n;
		op->iov[0].iov_len -= n;
	}
}
