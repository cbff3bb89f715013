/*
 * Write replies held while their writer is ahead of the disk.
 *
 * A write is acknowledged once it is in the page cache, so a writer goes as
 * fast as memory: a bulk copy onto the share (a camera card offloaded next
 * to the editors) writes 200-400 MB/s at a disk that takes 168. While
 * streams play, aiod writes a sequential writer's data back itself, in
 * io_size runs at moments EDF chooses (writeback.c), and a best-effort
 * writer's run is due best_effort_deadline_ms after it was queued. Left
 * alone, the runs of a writer faster than the disk pile up, the oldest
 * become due before every stream's next read, and EDF serves the pile
 * first: with bench/rt's --greedy-write, five 100 Mbit/s streams next to
 * one copy were 25 s late before this file (a plain share: six clean).
 *
 * So once a writer has runs of its own queued or on the device worth
 * aiod_writeback_ahead(), aiod answers its next write (WROTE, WRITE1) only
 * when one of them is done. vfs_rtio completes the SMB write only with that
 * answer, so the client's own write credits slow the copy down to the disk
 * time EDF leaves it: the kernel's dirty throttling, at a few runs per
 * writer instead of gigabytes for the machine. While no stream plays, only
 * a steady writer's writes wait, and only once about a second of disk
 * time of its data is not yet on the disk (writeback.c says why).
 *
 * A reply waits at most WRITE_HOLD_MAX_MS. vfs_rtio gives a request up only
 * after 4 x rtio:timeout while aiod's heartbeat goes on (vfs_rtio_aio.c), so
 * a held write never looks like a hung aiod unless rtio:timeout is set
 * below WRITE_HOLD_MAX_MS / 4.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "dataplane.h"
#include "requests.h"
#include "writeback.h"

#define WRITE_HOLD_MAX_MS 1000
/* How often the held replies are looked at for their time limit (and orphans). */
#define WRITE_HOLD_TICK_MS 100

static void held_timer(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
		       void *private_data);

/* One timer while any reply is held, none otherwise (a failed one: the next hold retries). */
static void held_arm(struct aiod_ctx *ctx)
{
	if (ctx->held == NULL || ctx->held_timer != NULL) {
		return;
	}
	ctx->held_timer = tevent_add_timer(ctx->ev, ctx,
					   tevent_timeval_current_ofs(0, WRITE_HOLD_TICK_MS * 1000),
					   held_timer, ctx);
}

void aiod_write_hold_remove(struct aiod_ctx *ctx, struct aiod_req *r)
{
	struct aiod_req **pp = &ctx->held;

	while (*pp != NULL && *pp != r) {
		pp = &(*pp)->hnext;
	}
	if (*pp == r) {
		*pp = r->hnext;
	}
	r->hnext = NULL;
	r->held = false;
}

void aiod_write_reply(struct aiod_req *r, int result)
{
	struct aiod_ctx *ctx = r->ctx;
	struct aiod_req **pp = &ctx->held;

	/* A failed write changed nothing to slow down for. */
	if (result < 0 || r->p == NULL || r->open == NULL || !aiod_writeback_ahead(ctx, r->open)) {
		aiod_req_end(r, result);
		return;
	}
	/* A WRITE1's staging blocks are written: they go back now, only the answer waits. */
	aiod_req_unpin(r);
	aiod_data_retry_blocked(ctx);
	r->held = true;
	r->held_result = result;
	r->held_since_ns = aiod_now_ns();
	while (*pp != NULL) {
		pp = &(*pp)->hnext;
	}
	r->hnext = NULL;
	*pp = r;
	ctx->st.writes_held++;
	held_arm(ctx);
}

/*
 * Answer every held reply that may go: its writer is no longer ahead (a run
 * done, the last stream closed, the file closing), it waited long enough, or
 * nobody waits for it any more (its session went).
 */
static void held_release(struct aiod_ctx *ctx, uint64_t now)
{
	uint64_t limit = WRITE_HOLD_MAX_MS * 1000000ull;
	struct aiod_req **pp = &ctx->held;

	while (*pp != NULL) {
		struct aiod_req *r = *pp;

		if (r->p != NULL && now - r->held_since_ns < limit &&
		    aiod_writeback_ahead(ctx, r->open)) {
			pp = &r->hnext;
			continue;
		}
		aiod_write_hold_remove(ctx, r);	/* *pp is its successor now */
		aiod_req_end(r, r->held_result);
	}
}

/* The list is a few writers long: every held reply is looked at, whoever's run was done. */
void aiod_data_written_back(struct aiod_ctx *ctx)
{
	held_release(ctx, aiod_now_ns());
}

static void held_timer(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
		       void *private_data)
{
	struct aiod_ctx *ctx = private_data;

	(void)ev;
	(void)te;
	(void)now;
	ctx->held_timer = NULL;	/* tevent frees a timer that fired */
	held_release(ctx, aiod_now_ns());
	held_arm(ctx);
}
