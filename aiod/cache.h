/*
 * The shared buffer cache: fixed-size blocks of the shared region, keyed by
 * (device, inode, block number), reference counted, with LRU eviction of
 * unreferenced blocks only (paper 3.1.3.2.4).
 *
 * Pure bookkeeping: no I/O, no tevent, so the unit tests drive it directly.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_CACHE_H
#define AIOD_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <talloc.h>

enum aiod_block_state {
	AIOD_BLK_FREE,		/* on the free list (or just taken from it) */
	AIOD_BLK_LOADING,	/* hashed, a disk read is filling it */
	AIOD_BLK_VALID,		/* hashed, holds valid bytes [0, valid) of the block */
	AIOD_BLK_STAGING,	/* unhashed, holds a client's write before it reaches the file */
	AIOD_BLK_PASSTHROUGH,	/* unhashed, holds bytes [0, valid) one random read fetched for
				 * one client (passthrough.c): nobody else finds it */
};

struct aiod_block;
struct rtio_shm_dirent;

/* Someone waiting for a LOADING block to finish. */
struct aiod_block_waiter {
	struct aiod_block_waiter *next;
	void (*fn)(void *private_data, struct aiod_block *b);
	void *private_data;
};

struct aiod_block {
	uint32_t idx;		/* position in the region */
	uint32_t refs;		/* clients holding it + I/O in flight */
	enum aiod_block_state state;
	bool hashed;
	uint64_t dev, ino, blkno;
	uint32_t valid;		/* VALID, PASSTHROUGH: bytes from the block start that are file data */
	int error;		/* LOADING that failed: -errno for the waiters */
	struct aiod_block *hnext;		/* hash chain */
	struct aiod_block *prev, *next;		/* free list or LRU list */
	struct aiod_block_waiter *waiters;
};

struct aiod_block_list {
	struct aiod_block *head, *tail;
	uint32_t count;
};

struct aiod_cache {
	uint8_t *data;		/* block 0 */
	uint32_t block_size;
	uint32_t nblocks;
	struct aiod_block *blocks;
	struct aiod_block **hash;
	uint32_t hash_mask;
	struct aiod_block_list free;	/* never hold data */
	struct aiod_block_list lru;	/* hashed, VALID, refs == 0: head is evicted first */
	uint32_t pinned;		/* blocks with refs > 0 */
	uint64_t evictions;
	/* The index clients read (cache_dir.h), NULL when none is attached. */
	struct rtio_shm_dirent *dir;
	uint32_t *dir_buckets;
	uint32_t dir_mask;
};

struct aiod_cache *aiod_cache_create(TALLOC_CTX *mem_ctx, uint8_t *data, uint32_t block_size,
				     uint32_t nblocks);

static inline uint8_t *aiod_cache_block_data(const struct aiod_cache *c, const struct aiod_block *b)
{
	return c->data + (uint64_t)b->idx * c->block_size;
}

/* Look a block up without changing its references. */
struct aiod_block *aiod_cache_find(struct aiod_cache *c, uint64_t dev, uint64_t ino,
				   uint64_t blkno);

void aiod_cache_ref(struct aiod_cache *c, struct aiod_block *b);
/*
 * b will be needed soon (it lies in a stream's read-ahead window): make it
 * the most recently used, so eviction takes blocks nobody is about to read.
 */
void aiod_cache_touch(struct aiod_cache *c, struct aiod_block *b);
/*
 * b was just played through by a stream: make it the first to be evicted.
 * Under plain LRU the block a stream has just consumed would be the most
 * recently used, and the blocks it (or a replay) will read next the least.
 */
void aiod_cache_demote(struct aiod_cache *c, struct aiod_block *b);
/* Drop a reference; an unreferenced block goes to the LRU (VALID, hashed) or the free list. */
void aiod_cache_unref(struct aiod_cache *c, struct aiod_block *b);

/*
 * A block with no data and one reference, from the free list or by evicting
 * the least recently used unreferenced block. NULL when every block is pinned.
 */
struct aiod_block *aiod_cache_get(struct aiod_cache *c);

/* Make a block from aiod_cache_get() the cache's copy of (dev, ino, blkno), LOADING. */
void aiod_cache_insert(struct aiod_cache *c, struct aiod_block *b, uint64_t dev, uint64_t ino,
		       uint64_t blkno);

/* Load finished: VALID with valid bytes, or failed with -errno. Runs and clears the waiters. */
void aiod_cache_load_done(struct aiod_cache *c, struct aiod_block *b, int result);

/* Remove from the hash: later lookups miss; current holders keep their bytes. */
void aiod_cache_detach(struct aiod_cache *c, struct aiod_block *b);

/*
 * The file (dev, ino) now ends at new_size (UINT64_MAX... use 0 to forget the
 * whole file): blocks wholly past it are detached, the block holding it is
 * trimmed. Returns how many blocks were dropped.
 */
uint32_t aiod_cache_truncate(struct aiod_cache *c, uint64_t dev, uint64_t ino, uint64_t new_size);

/*
 * Bytes [off, off + len) of (dev, ino) changed behind aiod's back (len 0: to
 * the end): blocks overlapping them are detached. Returns how many.
 */
uint32_t aiod_cache_invalidate(struct aiod_cache *c, uint64_t dev, uint64_t ino, uint64_t off,
			       uint64_t len);

/*
 * Bytes [off, off + len) of (dev, ino) were written with data: update VALID
 * cached copies so every reader sees the new bytes; detach LOADING ones (their
 * read may predate the write).
 */
void aiod_cache_write_through(struct aiod_cache *c, uint64_t dev, uint64_t ino, uint64_t off,
			      const uint8_t *data, uint32_t len);

/* Every block goes (events were lost: nothing cached can be trusted). Returns how many. */
uint32_t aiod_cache_drop_all(struct aiod_cache *c);

/* Call fn for every hashed block's file (once per block: a file may come many times). */
void aiod_cache_for_each_file(const struct aiod_cache *c,
			      void (*fn)(void *private_data, uint64_t dev, uint64_t ino),
			      void *private_data);

/* Blocks holding file data (hashed). */
uint32_t aiod_cache_used(const struct aiod_cache *c);

#endif
