/*
 * A best-effort read in pieces, one behind the other (engine.h:
 * aiod_engine_slice_fn's *behind). The read stays queued with the rest while
 * each piece it gives the device is an operation of its own, so the next
 * piece can go to the kernel while the device still reads the one ahead:
 * cut one at a time, the device idled between pieces for the round trip
 * through aiod (0.4 ms of every 25 ms piece on the emulated disk, 2.5 % of a
 * lone copy's speed).
 *
 * A piece completes into its parent, never into the read's callback; the
 * read's callback runs once, after its last piece is back, with the bytes
 * read from its start up to the first piece that came back short (end of
 * file, an error) or the whole read.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>

#include "engine_private.h"

struct engine_op *engine_split(struct aiod_engine *e, struct engine_op *op, uint32_t piece,
			       uint32_t niov)
{
	struct engine_op *c = talloc_zero(e, struct engine_op);

	if (c == NULL) {
		return NULL;
	}
	c->item.deadline_ns = op->item.deadline_ns;
	c->kind = ENGINE_READV;
	c->fd = op->fd;
	c->off = op->off;
	c->len = piece;
	c->own_len = piece;
	c->niov = niov;
	memcpy(c->iov, op->iov, niov * sizeof(op->iov[0]));
	c->piece_len = piece;
	c->piece_niov = niov;
	/* Its owner's callback and data: expedite() and rekey() see the read's own. */
	c->done = op->done;
	c->private_data = op->private_data;
	c->parent = op;
	c->parent_pos = op->done_bytes;
	e->st.sliced++;
	op->children++;
	engine_iov_advance(op, piece);
	op->off += piece;
	op->len -= piece;
	op->done_bytes += piece;
	if (aiod_edf_push(e->queue, &op->item) != 0) {
		/* The rest cannot wait in the queue: the read fails once this piece is back. */
		op->parked = true;
		op->park_res = -ENOMEM;
	}
	e->st.queued = e->queue->count;
	return c;
}

/* A piece of parent is back with res: the read stops at the first piece that came back short. */
static void engine_piece_back(struct aiod_engine *e, struct engine_op *c, int res)
{
	struct engine_op *x = c->parent;
	uint32_t pos = c->parent_pos + (res > 0 ? (uint32_t)res : 0);

	x->children--;
	if (res < (int)c->own_len && (!x->short_seen || pos < x->short_pos)) {
		x->short_seen = true;
		x->short_pos = pos;
		x->short_err = res < 0 ? res : 0;
		if (!x->in_kernel && !x->parked) {
			/* Reading the rest would not change the result. */
			aiod_edf_remove(e->queue, &x->item);
			e->st.queued = e->queue->count;
			x->parked = true;
			x->park_res = (int)x->done_bytes;
		}
	}
	if (x->children == 0 && x->parked) {
		engine_finish(e, x, x->park_res);
	}
}

bool engine_behind_finish(struct aiod_engine *e, struct engine_op *op, int *res)
{
	if (op->parent != NULL) {
		engine_piece_back(e, op, *res);
		talloc_free(op);
		return false;
	}
	if (op->children > 0) {
		/* The kernel still reads into its buffers: its callback must wait. */
		op->parked = true;
		op->park_res = *res;
		return false;
	}
	if (op->short_seen) {
		uint32_t got = op->done_bytes < op->short_pos ? op->done_bytes : op->short_pos;

		if (got > 0) {
			*res = (int)got;
		} else if (op->short_err != 0) {
			*res = op->short_err;
		} else if (*res > 0) {
			*res = 0;
		}
	}
	return true;
}
