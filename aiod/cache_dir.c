/*
 * The cache's index as clients read it: cache.c calls these whenever a
 * block's identity, valid length or bytes change, and they keep the region's
 * directory (rtio_shm.h) in step, so a client can copy a hot read itself.
 *
 * aiod is the only writer. Every change follows the sequence-lock rule: the
 * entry's seq turns odd before anything a reader checks (key, valid, bytes)
 * changes, and even again only once the block holds exactly what the entry
 * says. A hashed block whose load is in flight stays odd until it is done.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "cache.h"
#include "cache_dir.h"

static struct rtio_shm_dirent *dirent(const struct aiod_cache *c, const struct aiod_block *b)
{
	return &c->dir[b->idx];
}

void aiod_cache_dir_attach(struct aiod_cache *c, struct rtio_shm_dirent *dir, uint32_t *buckets,
			   uint32_t hash_mask)
{
	c->dir = dir;
	c->dir_buckets = buckets;
	c->dir_mask = hash_mask;
	for (uint32_t i = 0; i <= hash_mask; i++) {
		buckets[i] = RTIO_SHM_NONE;
	}
	for (uint32_t i = 0; i < c->nblocks; i++) {
		dir[i] = (struct rtio_shm_dirent){ .seq = 1, .next = RTIO_SHM_NONE };
	}
}

void aiod_cache_dir_begin(struct aiod_cache *c, const struct aiod_block *b)
{
	struct rtio_shm_dirent *e;
	uint64_t s;

	if (c->dir == NULL) {
		return;
	}
	e = dirent(c, b);
	s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	if ((s & 1) == 0) {
		__atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
		/* Readers that see a later change see the odd seq first. */
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
}

void aiod_cache_dir_publish(struct aiod_cache *c, const struct aiod_block *b)
{
	struct rtio_shm_dirent *e;
	uint64_t s;

	if (c->dir == NULL) {
		return;
	}
	e = dirent(c, b);
	__atomic_store_n(&e->valid, b->valid, __ATOMIC_RELAXED);
	s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	/* Everything above (and the block's bytes) before the even seq. */
	__atomic_store_n(&e->seq, (s & 1) ? s + 1 : s + 2, __ATOMIC_RELEASE);
}

void aiod_cache_dir_link(struct aiod_cache *c, const struct aiod_block *b)
{
	struct rtio_shm_dirent *e;
	uint32_t h;

	if (c->dir == NULL) {
		return;
	}
	e = dirent(c, b);
	aiod_cache_dir_begin(c, b);	/* already odd: a free block */
	h = rtio_shm_hash(b->dev, b->ino, b->blkno, c->dir_mask);
	__atomic_store_n(&e->dev, b->dev, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ino, b->ino, __ATOMIC_RELAXED);
	__atomic_store_n(&e->blkno, b->blkno, __ATOMIC_RELAXED);
	__atomic_store_n(&e->valid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->next, c->dir_buckets[h], __ATOMIC_RELAXED);
	__atomic_store_n(&c->dir_buckets[h], b->idx, __ATOMIC_RELEASE);
}

void aiod_cache_dir_unlink(struct aiod_cache *c, const struct aiod_block *b)
{
	uint32_t *pp;

	if (c->dir == NULL) {
		return;
	}
	aiod_cache_dir_begin(c, b);
	pp = &c->dir_buckets[rtio_shm_hash(b->dev, b->ino, b->blkno, c->dir_mask)];
	/* Chains are as long as aiod's own (a few entries): bounded by nblocks anyway. */
	for (uint32_t steps = 0; *pp < c->nblocks && steps < c->nblocks; steps++) {
		if (*pp == b->idx) {
			__atomic_store_n(pp, dirent(c, b)->next, __ATOMIC_RELEASE);
			break;
		}
		pp = &c->dir[*pp].next;
	}
	/*
	 * A reader standing on this entry may still follow next into the rest of
	 * its old chain: that is why next is left as it was.
	 */
}
