/*
 * Leases: the blocks a client holds pinned between READ0 and READ1 (it
 * copies out of them) or WRITE0 and WRITE1 (it copies into them). A fixed
 * table per peer, two per request slot; the token names the slot and a
 * generation, so a stale or forged token finds nothing.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "aiod.h"
#include "peer.h"
#include "files.h"
#include "streams.h"

struct aiod_lease *aiod_lease_new(struct aiod_peer *p)
{
	for (uint32_t i = 0; i < p->nleases; i++) {
		struct aiod_lease *l = &p->leases[i];

		if (l->token == 0) {
			uint64_t gen = ++p->ctx->next_token_gen;
			memset(l, 0, sizeof(*l));
			l->token = (gen << 16) | i;
			return l;
		}
	}
	return NULL;
}

struct aiod_lease *aiod_lease_find(struct aiod_peer *p, uint64_t token)
{
	uint32_t i = (uint32_t)(token & 0xffff);

	if (token == 0 || i >= p->nleases || p->leases[i].token != token) {
		return NULL;
	}
	return &p->leases[i];
}

void aiod_lease_release(struct aiod_peer *p, struct aiod_lease *l)
{
	struct aiod_ctx *ctx = p->ctx;

	aiod_peer_unpin(p, l->nblocks);
	for (uint32_t i = 0; i < l->nblocks; i++) {
		struct aiod_block *b = l->blocks[i];

		aiod_cache_unref(ctx->cache, b);
		/*
		 * As aiod_read_hit() for a copied read: a block a stream read to
		 * its end through READ0 (rtio:hits = aiod, sendfile) goes to the
		 * front of the eviction order once the client let go of it,
		 * not to the back as the most recently used.
		 */
		if (!l->write && l->open != NULL &&
		    aiod_stream_played(ctx, l->open, b->blkno, l->off + l->len)) {
			aiod_cache_demote(ctx->cache, b);
		}
	}
	if (l->open != NULL) {
		aiod_open_idle(ctx, l->open);
	}
	memset(l, 0, sizeof(*l));
}

void aiod_lease_release_all(struct aiod_peer *p)
{
	for (uint32_t i = 0; i < p->nleases; i++) {
		if (p->leases[i].token != 0) {
			aiod_lease_release(p, &p->leases[i]);
		}
	}
}
