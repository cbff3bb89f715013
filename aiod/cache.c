/*
 * Shared buffer cache bookkeeping: see cache.h.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "cache.h"
#include "cache_dir.h"

static void list_del(struct aiod_block_list *l, struct aiod_block *b)
{
	if (b->prev != NULL) {
		b->prev->next = b->next;
	} else {
		l->head = b->next;
	}
	if (b->next != NULL) {
		b->next->prev = b->prev;
	} else {
		l->tail = b->prev;
	}
	b->prev = b->next = NULL;
	l->count--;
}

static void list_add_tail(struct aiod_block_list *l, struct aiod_block *b)
{
	b->next = NULL;
	b->prev = l->tail;
	if (l->tail != NULL) {
		l->tail->next = b;
	} else {
		l->head = b;
	}
	l->tail = b;
	l->count++;
}

static void list_add_head(struct aiod_block_list *l, struct aiod_block *b)
{
	b->prev = NULL;
	b->next = l->head;
	if (l->head != NULL) {
		l->head->prev = b;
	} else {
		l->tail = b;
	}
	l->head = b;
	l->count++;
}

static uint32_t hash_key(const struct aiod_cache *c, uint64_t dev, uint64_t ino, uint64_t blkno)
{
	return rtio_shm_hash(dev, ino, blkno, c->hash_mask);
}

struct aiod_cache *aiod_cache_create(TALLOC_CTX *mem_ctx, uint8_t *data, uint32_t block_size,
				     uint32_t nblocks)
{
	struct aiod_cache *c = talloc_zero(mem_ctx, struct aiod_cache);
	uint32_t nhash = 1;

	if (c == NULL || nblocks == 0) {
		talloc_free(c);
		return NULL;
	}
	while (nhash < nblocks * 2) {
		nhash <<= 1;
	}
	c->data = data;
	c->block_size = block_size;
	c->nblocks = nblocks;
	c->blocks = talloc_zero_array(c, struct aiod_block, nblocks);
	c->hash = talloc_zero_array(c, struct aiod_block *, nhash);
	if (c->blocks == NULL || c->hash == NULL) {
		talloc_free(c);
		return NULL;
	}
	c->hash_mask = nhash - 1;
	for (uint32_t i = 0; i < nblocks; i++) {
		c->blocks[i].idx = i;
		c->blocks[i].state = AIOD_BLK_FREE;
		list_add_tail(&c->free, &c->blocks[i]);
	}
	return c;
}

struct aiod_block *aiod_cache_find(struct aiod_cache *c, uint64_t dev, uint64_t ino,
				   uint64_t blkno)
{
	for (struct aiod_block *b = c->hash[hash_key(c, dev, ino, blkno)]; b != NULL; b = b->hnext) {
		if (b->dev == dev && b->ino == ino && b->blkno == blkno) {
			return b;
		}
	}
	return NULL;
}

static void hash_remove(struct aiod_cache *c, struct aiod_block *b)
{
	struct aiod_block **pp = &c->hash[hash_key(c, b->dev, b->ino, b->blkno)];

	while (*pp != NULL && *pp != b) {
		pp = &(*pp)->hnext;
	}
	if (*pp == b) {
		*pp = b->hnext;
	}
	aiod_cache_dir_unlink(c, b);
	b->hnext = NULL;
	b->hashed = false;
}

void aiod_cache_ref(struct aiod_cache *c, struct aiod_block *b)
{
	if (b->refs++ == 0) {
		c->pinned++;
		if (b->hashed && b->state == AIOD_BLK_VALID) {
			list_del(&c->lru, b);
		}
	}
}

void aiod_cache_touch(struct aiod_cache *c, struct aiod_block *b)
{
	if (b->refs == 0 && b->hashed && b->state == AIOD_BLK_VALID) {
		list_del(&c->lru, b);
		list_add_tail(&c->lru, b);
	}
}

void aiod_cache_demote(struct aiod_cache *c, struct aiod_block *b)
{
	if (b->refs == 0 && b->hashed && b->state == AIOD_BLK_VALID) {
		list_del(&c->lru, b);
		list_add_head(&c->lru, b);
	}
}

/* An unreferenced block: keep it as cache if it holds valid hashed data. */
static void block_park(struct aiod_cache *c, struct aiod_block *b)
{
	if (b->hashed && b->state == AIOD_BLK_VALID) {
		list_add_tail(&c->lru, b);
		return;
	}
	if (b->hashed) {
		hash_remove(c, b);
	}
	b->state = AIOD_BLK_FREE;
	b->valid = 0;
	b->error = 0;
	list_add_tail(&c->free, b);
}

void aiod_cache_unref(struct aiod_cache *c, struct aiod_block *b)
{
	if (b->refs == 0) {
		return;		/* a bug elsewhere; never go negative */
	}
	if (--b->refs == 0) {
		c->pinned--;
		block_park(c, b);
	}
}

struct aiod_block *aiod_cache_get(struct aiod_cache *c)
{
	struct aiod_block *b = c->free.head;

	if (b != NULL) {
		list_del(&c->free, b);
	} else {
		b = c->lru.head;
		if (b == NULL) {
			return NULL;
		}
		list_del(&c->lru, b);
		hash_remove(c, b);
		c->evictions++;
	}
	b->state = AIOD_BLK_FREE;
	b->valid = 0;
	b->error = 0;
	b->waiters = NULL;
	b->refs = 1;
	c->pinned++;
	return b;
}

void aiod_cache_insert(struct aiod_cache *c, struct aiod_block *b, uint64_t dev, uint64_t ino,
		       uint64_t blkno)
{
	uint32_t h = hash_key(c, dev, ino, blkno);

	b->dev = dev;
	b->ino = ino;
	b->blkno = blkno;
	b->state = AIOD_BLK_LOADING;
	b->valid = 0;
	b->hashed = true;
	b->hnext = c->hash[h];
	c->hash[h] = b;
	aiod_cache_dir_link(c, b);
}

void aiod_cache_load_done(struct aiod_cache *c, struct aiod_block *b, int result)
{
	struct aiod_block_waiter *w = b->waiters;

	b->waiters = NULL;
	if (result < 0) {
		b->error = result;
		b->valid = 0;
		/* Nobody may find a failed block; its waiters still see the error. */
		if (b->hashed) {
			hash_remove(c, b);
		}
	} else {
		b->valid = (uint32_t)result;
	}
	b->state = AIOD_BLK_VALID;
	if (b->hashed) {
		aiod_cache_dir_publish(c, b);	/* clients may copy it themselves now */
	}
	while (w != NULL) {
		struct aiod_block_waiter *next = w->next;
		w->fn(w->private_data, b);
		w = next;
	}
}

void aiod_cache_detach(struct aiod_cache *c, struct aiod_block *b)
{
	if (!b->hashed) {
		return;
	}
	if (b->refs == 0) {
		/* Only unreferenced VALID blocks sit on the LRU. */
		list_del(&c->lru, b);
		hash_remove(c, b);
		block_park(c, b);
		return;
	}
	hash_remove(c, b);
}

uint32_t aiod_cache_truncate(struct aiod_cache *c, uint64_t dev, uint64_t ino, uint64_t new_size)
{
	uint32_t dropped = 0;

	/* Truncate and unlink are rare: a scan beats a per-file index on the hot path. */
	for (uint32_t i = 0; i < c->nblocks; i++) {
		struct aiod_block *b = &c->blocks[i];
		uint64_t start;

		if (!b->hashed || b->dev != dev || b->ino != ino) {
			continue;
		}
		start = b->blkno * c->block_size;
		/*
		 *   block:     |start ........ start+bs|
		 *   new size:           ^ (inside: trim)      ^ (after: keep)
		 *             ^ (before or at start: drop)
		 */
		if (new_size <= start || b->state == AIOD_BLK_LOADING) {
			aiod_cache_detach(c, b);
			dropped++;
		} else if (new_size - start < b->valid) {
			aiod_cache_dir_begin(c, b);
			b->valid = (uint32_t)(new_size - start);
			aiod_cache_dir_publish(c, b);
		}
	}
	return dropped;
}

uint32_t aiod_cache_invalidate(struct aiod_cache *c, uint64_t dev, uint64_t ino, uint64_t off,
			       uint64_t len)
{
	uint64_t first = off / c->block_size;
	uint64_t last = len == 0 || off + len < off ? UINT64_MAX : (off + len - 1) / c->block_size;
	uint32_t dropped = 0;

	if (last - first < c->nblocks) {
		/* A bounded range (every write reported by WROTE): look its blocks up. */
		for (uint64_t blk = first; blk <= last; blk++) {
			struct aiod_block *b = aiod_cache_find(c, dev, ino, blk);

			if (b != NULL) {
				aiod_cache_detach(c, b);
				dropped++;
			}
		}
		return dropped;
	}
	for (uint32_t i = 0; i < c->nblocks; i++) {
		struct aiod_block *b = &c->blocks[i];

		if (b->hashed && b->dev == dev && b->ino == ino && b->blkno >= first &&
		    b->blkno <= last) {
			aiod_cache_detach(c, b);
			dropped++;
		}
	}
	return dropped;
}

void aiod_cache_write_through(struct aiod_cache *c, uint64_t dev, uint64_t ino, uint64_t off,
			      const uint8_t *data, uint32_t len)
{
	while (len > 0) {
		uint64_t blkno = off / c->block_size;
		uint32_t in_blk = (uint32_t)(off % c->block_size);
		uint32_t n = c->block_size - in_blk;
		struct aiod_block *b;

		if (n > len) {
			n = len;
		}
		b = aiod_cache_find(c, dev, ino, blkno);
		if (b != NULL && b->state == AIOD_BLK_LOADING) {
			aiod_cache_detach(c, b);
		} else if (b != NULL) {
			uint8_t *p = aiod_cache_block_data(c, b);

			aiod_cache_dir_begin(c, b);	/* a client copying it now must retry */
			/*
			 * A block shorter than block_size ended at EOF when it was read.
			 * Bytes between that EOF and this write are a hole: zeros.
			 */
			if (in_blk > b->valid) {
				memset(p + b->valid, 0, in_blk - b->valid);
			}
			memcpy(p + in_blk, data, n);
			if (in_blk + n > b->valid) {
				b->valid = in_blk + n;
			}
			aiod_cache_dir_publish(c, b);
		}
		off += n;
		data += n;
		len -= n;
	}
}

uint32_t aiod_cache_used(const struct aiod_cache *c)
{
	return c->nblocks - c->free.count;
}

uint32_t aiod_cache_drop_all(struct aiod_cache *c)
{
	uint32_t dropped = 0;

	for (uint32_t i = 0; i < c->nblocks; i++) {
		if (c->blocks[i].hashed) {
			aiod_cache_detach(c, &c->blocks[i]);
			dropped++;
		}
	}
	return dropped;
}

void aiod_cache_for_each_file(const struct aiod_cache *c,
			      void (*fn)(void *private_data, uint64_t dev, uint64_t ino),
			      void *private_data)
{
	for (uint32_t i = 0; i < c->nblocks; i++) {
		const struct aiod_block *b = &c->blocks[i];

		if (b->hashed) {
			fn(private_data, b->dev, b->ino);
		}
	}
}
