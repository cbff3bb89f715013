/*
 * What the device gets next (engine.h: aiod_engine_set_costs()): the
 * earliest deadline, or the read that continues the last one where that
 * keeps every queued operation on time. engine.c's submission asks
 * engine_pick() for each free device slot.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "clock.h"
#include "edf.h"

#include "engine_private.h"

void aiod_engine_set_costs(struct aiod_engine *e, uint64_t request_ns, uint64_t media_Bps)
{
	bool on = request_ns >= 1000000 && media_Bps > 0;

	e->request_ns = on ? request_ns : 0;
	e->media_Bps = on ? media_Bps : 0;
}

static uint64_t engine_transfer_ns(const struct aiod_engine *e, uint32_t len)
{
	return (uint64_t)((unsigned __int128)len * 1000000000ull / e->media_Bps);
}

static uint64_t engine_cost(const struct aiod_edf_item *it, void *arg)
{
	const struct aiod_engine *e = arg;

	return e->request_ns + engine_transfer_ns(e, ((const struct engine_op *)it)->len);
}

/* A queued read that starts where the last one handed to the kernel ended. */
static struct engine_op *engine_continuation(struct aiod_engine *e)
{
	for (uint32_t i = 0; i < e->queue->count; i++) {
		struct engine_op *op = (struct engine_op *)e->queue->heap[i];

		if (engine_is_read(op) && op->fd == e->last_fd && op->off == e->last_end) {
			return op;
		}
	}
	return NULL;
}

/*
 * Whether a client waits for a queued operation of another reader than op's
 * (another descriptor): not only the head. Read-ahead is due by when its
 * reader was expected, a best-effort read a client waits for best effort's
 * deadline after it was asked for, so the read a client waits for can sit
 * behind others' read-ahead in deadline order, and "on time" by that
 * deadline is seconds: clips of no stream class started together next to a
 * greedy reader waited up to 1.4 s while the reader's reads went on one
 * after the other (2 played clean where a plain share plays 4).
 */
static bool engine_other_waited(struct aiod_engine *e, const struct engine_op *op)
{
	for (uint32_t i = 0; i < e->queue->count; i++) {
		const struct engine_op *q = (const struct engine_op *)e->queue->heap[i];

		if (q->fd != op->fd && e->waited(e->waited_arg, q->done, q->private_data)) {
			return true;
		}
	}
	return false;
}

/*
 * Whether op, the read that starts where the last one ended, may go to the
 * device before head for piece_ns, the device being free from start_ns: a
 * client waiting for head, or for another reader's queued read, stops a
 * read not yet begun (aiod_engine_set_waited()), and every queued operation
 * must stay on time (aiod_edf_fits_first()).
 * The rest of a read the device has begun (its next piece,
 * aiod_engine_set_slice()) gives way only to what would otherwise be late:
 * whole, that read could not have been overtaken at all, and letting a
 * waiting best-effort reader in between its pieces would cost two bulk
 * readers a seek every piece.
 */
static bool engine_before_head(struct aiod_engine *e, const struct engine_op *head,
			       struct engine_op *op, uint64_t piece_ns, uint64_t start_ns)
{
	if (op->done_bytes == 0 && e->waited != NULL &&
	    (e->waited(e->waited_arg, head->done, head->private_data) ||
	     engine_other_waited(e, op))) {
		e->st.waited_first++;
		return false;
	}
	if (!aiod_edf_fits_first(e->queue, &op->item, piece_ns, start_ns, engine_cost, e)) {
		return false;
	}
	e->st.continued++;
	return true;
}

/* The read that starts where the last request handed to the kernel ends: head if it does. */
static struct engine_op *engine_next_in_line(struct aiod_engine *e, struct engine_op *head)
{
	return head->fd == e->last_fd && head->off == e->last_end ? head : engine_continuation(e);
}

/*
 * The operation to hand the device next: the earliest deadline, or the read
 * that starts where the last one ended if engine_before_head() lets it
 * (aiod_engine_set_costs(): only where seeks cost).
 */
struct engine_op *engine_pick(struct aiod_engine *e)
{
	struct engine_op *head = (struct engine_op *)aiod_edf_peek(e->queue);
	struct engine_op *op;
	uint32_t niov;
	bool behind;

	if (head == NULL || e->request_ns == 0 || e->last_fd < 0) {
		return head;
	}
	op = engine_next_in_line(e, head);
	/* Only the piece the device would be given now goes first (engine_piece()). */
	if (op == NULL || op == head ||
	    !engine_before_head(e, head, op, engine_transfer_ns(e, engine_piece(e, op, &niov, &behind)),
				aiod_now_ns())) {
		return head;
	}
	return op;
}

/*
 * With every device slot taken: a write-back run that continues the one
 * handed to the kernel last and is due first, or the read that starts
 * where the last request handed to the kernel ends (the rest of the same read, or the next read of
 * the same reader), to wait in the kernel right behind it when its owner
 * gives it in pieces one behind the other (aiod_engine_slice_fn's *behind).
 * Before the head, by engine_before_head(), counting the piece ahead of it.
 */
struct engine_op *engine_pick_behind(struct aiod_engine *e)
{
	struct engine_op *head = (struct engine_op *)aiod_edf_peek(e->queue);
	struct engine_op *op;
	uint32_t niov;
	uint64_t piece_ns;
	bool behind;

	if (head == NULL || e->request_ns == 0) {
		return NULL;
	}
	/* A write-back run behind its writer's last one (AIOD_WB_BEHIND): only when it is due first. */
	if (head->kind == ENGINE_WRITEBACK) {
		return e->wb_behind_on && head->wb_behind && head->fd == e->last_wb_fd &&
		       head->off == e->last_wb_end ? head : NULL;
	}
	if (e->last_fd < 0) {
		return NULL;
	}
	op = engine_next_in_line(e, head);
	if (op == NULL) {
		return NULL;
	}
	piece_ns = engine_transfer_ns(e, engine_piece(e, op, &niov, &behind));
	if (!behind ||
	    (op != head && !engine_before_head(e, head, op, piece_ns, aiod_now_ns() + piece_ns))) {
		return NULL;
	}
	return op;
}
