/*
 * Requests that wait for free cache blocks, oldest first, and the pin quota.
 *
 * Each session may hold at most its share of the cache pinned ([cache]
 * session_pin_pct): beyond it its requests wait for its own blocks to come
 * back (and fail with ENOBUFS after pin_wait_ms), while the other sessions'
 * requests go past them.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>

#include "dataplane.h"
#include "log.h"
#include "requests.h"

static void blocked_fix_tail(struct aiod_ctx *ctx)
{
	ctx->blocked_tail = NULL;
	for (struct aiod_req *q = ctx->blocked; q != NULL; q = q->bnext) {
		ctx->blocked_tail = q;
	}
}

/* Take r off ctx->blocked, wherever it waits. */
void aiod_waitq_remove(struct aiod_ctx *ctx, struct aiod_req *r)
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
uint32_t aiod_req_span(const struct aiod_req *r)
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
bool aiod_req_over_quota(const struct aiod_req *r)
{
	return r->p != NULL && r->p->pinned + aiod_req_span(r) > session_pin_quota(r->ctx);
}

static void blocked_timer(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
			  void *private_data);

/*
 * One timer while anything waits, none otherwise. If it cannot be made
 * (no memory) the waiters still go at the next release of blocks, and every
 * later block, retry and release tries to arm it again: nothing waits
 * unbounded for want of a timer without the log saying so.
 */
static void waitq_arm(struct aiod_ctx *ctx)
{
	if (ctx->blocked == NULL) {
		TALLOC_FREE(ctx->blocked_timer);
		return;
	}
	if (ctx->blocked_timer != NULL) {
		return;
	}
	ctx->blocked_timer = tevent_add_timer(ctx->ev, ctx, tevent_timeval_current_ofs(0, 100000),
					      blocked_timer, ctx);
	if (ctx->blocked_timer == NULL) {
		AIOD_ERR("out of memory for the timer of requests waiting for cache blocks: "
			 "they go only when blocks are released");
	}
}

void aiod_req_block(struct aiod_req *r)
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
	}
	ctx->blocked_tail = r;
	waitq_arm(ctx);
}

static struct aiod_req *blocked_pop(struct aiod_ctx *ctx)
{
	struct aiod_req *r = ctx->blocked;

	if (r != NULL) {
		aiod_waitq_remove(ctx, r);
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
		if (aiod_req_over_quota(r)) {
			pp = &r->bnext;
			continue;
		}
		/* Off the list while it starts (*pp is its successor now): it may end at once. */
		aiod_waitq_remove(ctx, r);
		if (r->opcode == RTIO_OP_READ0 ? aiod_read0_start(r) : aiod_write0_start(r)) {
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
	waitq_arm(ctx);
}

static void blocked_timer(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
			  void *private_data)
{
	struct aiod_ctx *ctx = private_data;
	uint64_t limit = (uint64_t)ctx->cfg->pin_wait_ms * 1000000ull;
	uint64_t t = aiod_now_ns();

	(void)ev;
	(void)te;
	(void)now;
	ctx->blocked_timer = NULL;	/* tevent frees a timer that fired */
	/* Oldest first: retries put a request back in its place, new ones go last. */
	while (ctx->blocked != NULL && t - ctx->blocked->blocked_since_ns >= limit) {
		struct aiod_req *r = blocked_pop(ctx);

		if (r->p != NULL && aiod_req_over_quota(r)) {
			SESS_WARN(r->p->s, "%s refused: the session held its share of the cache "
				  "([cache] session_pin_pct, %u blocks) pinned for %u ms",
				  rtio_op_name(r->opcode), session_pin_quota(ctx),
				  ctx->cfg->pin_wait_ms);
		} else if (r->p != NULL) {
			SESS_WARN(r->p->s, "%s refused: every cache block pinned for %u ms "
				  "(raise [cache] size)", rtio_op_name(r->opcode), ctx->cfg->pin_wait_ms);
		}
		aiod_req_end(r, -ENOBUFS);
	}
	waitq_arm(ctx);
}
