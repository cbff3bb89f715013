/*
 * The shared region (region.c): created sealed and locked, destroyed at exit.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_REGION_H
#define AIOD_REGION_H

#include "aiod.h"
#include "rtio_shm.h"

int aiod_region_create(struct aiod_ctx *ctx, char *err, size_t errlen);
void aiod_region_destroy(struct aiod_region *r);
/*
 * The cache over the region's blocks, publishing its index in the region's
 * directory for clients (cache_dir.h). NULL when out of memory.
 */
struct aiod_cache *aiod_region_cache(struct aiod_ctx *ctx);
/*
 * Write aiod's heartbeat into the region header every RTIO_SHM_HEARTBEAT_MS
 * while the event loop keeps beating (region.c); stopped by
 * aiod_region_stop_heartbeat() or aiod_region_destroy().
 */
void aiod_region_start_heartbeat(struct aiod_ctx *ctx);
void aiod_region_stop_heartbeat(struct aiod_region *r);
/*
 * Tell clients whether they may read random misses themselves
 * (rtio_shm_header.random_local: nothing is owed a rate; random_direct: or
 * the device cannot be hurt by them); admission.c decides. A no-op before
 * the region exists.
 */
static inline void aiod_region_set_random(struct aiod_region *r, bool local, bool direct)
{
	struct rtio_shm_header *h = (struct rtio_shm_header *)r->base;

	if (h != NULL) {
		__atomic_store_n(&h->random_local, (uint32_t)local, __ATOMIC_RELEASE);
		__atomic_store_n(&h->random_direct, (uint32_t)(local || direct), __ATOMIC_RELEASE);
	}
}

#endif
