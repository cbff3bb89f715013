/*
 * Dropping read-ahead nobody will read: a stream that closes (its file's
 * last open) or that jumps far from where it was reading leaves loads queued
 * with deadlines of a timeline nobody plays any more. read.c takes them back
 * from the engine (aiod_load_cancel()); this file says which.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <inttypes.h>

#include "dataplane.h"
#include "files.h"
#include "log.h"
#include "requests.h"

/*
 * What aiod_load_close() and aiod_load_jump() drop: the loads of open
 * that read no block of [keep_lo, keep_hi) (an empty range keeps none), and
 * the blocks they held.
 */
struct load_drop {
	const struct aiod_open *open;
	uint64_t keep_lo, keep_hi;
	uint32_t blocks;
};

/* aiod_load_cancel()'s match: a load of the open outside the kept range (counted). */
static bool load_of_open_outside(const struct aiod_load *ld, void *arg)
{
	struct load_drop *drop = arg;
	uint64_t first = ld->b[0]->blkno;

	if (ld->open != drop->open) {
		return false;
	}
	if (first < drop->keep_hi && first + ld->n > drop->keep_lo) {
		return false;
	}
	drop->blocks += ld->n;	/* a match is dropped at once, so counted once */
	return true;
}

void aiod_load_jump(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off)
{
	uint64_t bs = ctx->cache->block_size;

	/*
	 * Where read-ahead got to (ra_next_blk) says how far the old window
	 * reaches; a read inside it, or near it, keeps everything: SMB clients
	 * send several reads at once, and one passed on out of order lands a
	 * block or two off the expected one. Only another open of the file
	 * could still want the loads of one that jumped: then they stay.
	 */
	if (off != o->next_off && o->ra_next_blk != 0 && o->file->opens <= 1) {
		uint64_t at = o->read_off / bs, to = off / bs;
		uint64_t span = o->ra_next_blk > at ? o->ra_next_blk - at : 1;
		struct load_drop drop = {
			.open = o,
			.keep_lo = to > span ? to - span : 0,
			.keep_hi = to + 2 * span,
		};

		if (at < drop.keep_lo || at >= drop.keep_hi) {
			uint32_t n = aiod_load_cancel(ctx, load_of_open_outside, &drop);

			if (n > 0) {
				AIOD_DEBUG("%s: jumped from %" PRIu64 " to %" PRIu64
					   "; %u queued read-ahead loads dropped (%u blocks)",
					   o->name, o->read_off, off, n, drop.blocks);
			}
		}
	}
}

void aiod_load_close(struct aiod_ctx *ctx, struct aiod_opens *os, struct aiod_open *o)
{
	/*
	 * Before aiod_open_close() marks o closing: a dropped load's callback
	 * makes o idle, and a closing idle open is freed.
	 */
	if (o->file->opens <= 1) {
		struct load_drop drop = { .open = o };
		uint32_t n = aiod_load_cancel(ctx, load_of_open_outside, &drop);

		if (n > 0) {
			AIOD_INFO("%s: closed; %u queued read-ahead loads dropped (%u blocks)",
				  o->name, n, drop.blocks);
		}
	}
	aiod_open_close(ctx, os, o);
}

void aiod_load_close_all(struct aiod_ctx *ctx, struct aiod_opens *os)
{
	while (os->head != NULL) {
		aiod_load_close(ctx, os, os->head);
	}
}
