/*
 * Layout of the shared buffer region that aiod creates (memfd) and every
 * client maps. aiod writes the header once before any client connects;
 * clients only check it.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   0        4096                   hash_off           data_off
 *   +--------+----------------------+------------------+-------+-------+--
 *   | header | directory: one entry | hash buckets     | blk 0 | blk 1 |
 *   |        | per block            | (u32 heads)      |       |       |
 *   +--------+----------------------+------------------+-------+-------+--
 *
 * Blocks start page aligned so they can be O_DIRECT targets and io_uring
 * fixed buffers.
 *
 * The directory is aiod's cache index as clients may read it (aiod only
 * writes it; clients map the region read-only): which file block each
 * cache block holds, hashed by (dev, ino, block number) with chains through
 * the entries. A client that finds every block of a read there copies the
 * bytes itself instead of asking aiod (rtio_shm_dir.c): no round trip for a
 * hot read. Each entry is a sequence lock: seq is even while the entry's key
 * and valid describe the block's bytes, odd while aiod changes either (a
 * load in flight, a write through the cache, eviction). A reader copies,
 * then checks seq did not move; if it moved, it asks aiod instead. Chains
 * change under a reader too: a walk is bounded, and an entry only counts
 * when its own key matches.
 */
#ifndef RTIO_SHM_H
#define RTIO_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RTIO_SHM_MAGIC    0x4d485352u	/* "RSHM" */
#define RTIO_SHM_VERSION  2
#define RTIO_SHM_DIR_OFF  4096u		/* the directory follows the header */
#define RTIO_SHM_PAGE     4096u
#define RTIO_SHM_NONE     UINT32_MAX	/* end of a hash chain, empty bucket */

struct rtio_shm_header {
	uint32_t magic;		/* aiod: RTIO_SHM_MAGIC */
	uint32_t version;	/* aiod: RTIO_SHM_VERSION */
	uint64_t size;		/* aiod: whole region, bytes */
	uint32_t block_size;	/* aiod */
	uint32_t nblocks;	/* aiod */
	uint64_t data_off;	/* aiod: block 0 (rtio_shm_layout()) */
	uint64_t aiod_pid;	/* aiod: for logs */
	uint64_t dir_off;	/* aiod: RTIO_SHM_DIR_OFF, nblocks struct rtio_shm_dirent */
	uint64_t hash_off;	/* aiod: hash_mask + 1 bucket heads (uint32_t block or NONE) */
	uint32_t hash_mask;	/* aiod: buckets - 1, a power of two minus one */
	/*
	 * aiod: 1 while nothing on the device is owed a rate (no admitted
	 * stream or recorder, no QoS reservation): a client may then read a
	 * random reader's cache misses from the file itself, as a plain share
	 * would (rtio_client_read_yourself()). 0 (also what an older aiod
	 * leaves here): every read goes through aiod, whose deadlines order it.
	 */
	uint32_t random_local;
	/*
	 * aiod: odd while it reads and applies inotify events (outside writers),
	 * so a client that found none pending knows whether aiod took some
	 * meanwhile whose invalidation it may not see yet.
	 */
	uint64_t watch_seq;
	/*
	 * aiod: CLOCK_MONOTONIC (ns) of its event loop's last heartbeat, every
	 * RTIO_SHM_HEARTBEAT_MS. A client whose request waits tells a busy aiod
	 * (a fresh heartbeat: the request is queued behind the device's work,
	 * and reading it itself would only add seeks) from a hung one. 0: an
	 * older aiod that has none.
	 */
	uint64_t heartbeat_ns;
	/*
	 * aiod: 1 while a client may read a random reader's cache misses
	 * itself: when random_local is 1, and also while rates are owed on a
	 * device so fast that a random read cannot make them late ([admission]
	 * local_random_us). 0 (also what an older aiod leaves here): ask
	 * random_local.
	 */
	uint32_t random_direct;
	uint8_t reserved[4012];
};
_Static_assert(sizeof(struct rtio_shm_header) == RTIO_SHM_DIR_OFF, "rtio_shm_header");
_Static_assert(offsetof(struct rtio_shm_header, dir_off) == 40, "rtio_shm_header.dir_off");
_Static_assert(offsetof(struct rtio_shm_header, heartbeat_ns) == 72, "rtio_shm_header.heartbeat_ns");
_Static_assert(offsetof(struct rtio_shm_header, random_direct) == 80, "rtio_shm_header.random_direct");
#define RTIO_SHM_HEARTBEAT_MS 100

/* One cache block as clients see it. Written by aiod only. */
struct rtio_shm_dirent {
	uint64_t seq;		/* even: stable and cached; odd: changing, or no file data */
	uint64_t dev;
	uint64_t ino;
	uint64_t blkno;		/* file offset / block_size */
	uint32_t valid;		/* bytes from the block start that are file data */
	uint32_t next;		/* next entry in the same hash chain, RTIO_SHM_NONE at the end */
	uint64_t reserved;
};
_Static_assert(sizeof(struct rtio_shm_dirent) == 48, "rtio_shm_dirent");

/* Where the parts of a region for nblocks of block_size lie. */
struct rtio_shm_layout {
	uint64_t dir_off;
	uint64_t hash_off;
	uint32_t hash_mask;
	uint64_t data_off;
	uint64_t size;
};

/* Buckets: the power of two at or above 2 * nblocks (chains stay short). */
static inline void rtio_shm_layout(uint32_t block_size, uint32_t nblocks,
				   struct rtio_shm_layout *l)
{
	uint64_t nhash = 1;

	while (nhash < (uint64_t)nblocks * 2) {
		nhash <<= 1;
	}
	l->dir_off = RTIO_SHM_DIR_OFF;
	l->hash_off = l->dir_off + (uint64_t)nblocks * sizeof(struct rtio_shm_dirent);
	l->hash_mask = (uint32_t)(nhash - 1);
	l->data_off = (l->hash_off + nhash * sizeof(uint32_t) + RTIO_SHM_PAGE - 1) &
		      ~(uint64_t)(RTIO_SHM_PAGE - 1);
	l->size = l->data_off + (uint64_t)block_size * nblocks;
}

/* Where block number block lies in the region: what READ0/WRITE0 segments name. */
static inline uint64_t rtio_shm_block_off(uint64_t data_off, uint32_t block_size, uint32_t block)
{
	return data_off + (uint64_t)block * block_size;
}

/* Region size for nblocks of block_size. */
static inline uint64_t rtio_shm_region_size(uint32_t block_size, uint32_t nblocks)
{
	struct rtio_shm_layout l;

	rtio_shm_layout(block_size, nblocks, &l);
	return l.size;
}

/* The bucket of a file block (aiod and clients must agree). */
static inline uint32_t rtio_shm_hash(uint64_t dev, uint64_t ino, uint64_t blkno, uint32_t mask)
{
	uint64_t h = dev * 0x9e3779b97f4a7c15ull ^ ino * 0xc2b2ae3d27d4eb4full ^ blkno;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h & mask;
}

/*
 * 0 when hdr describes a region of exactly size bytes laid out as
 * rtio_shm_layout() says; -EPROTO otherwise.
 */
int rtio_shm_check(const struct rtio_shm_header *hdr, uint64_t size);

/*
 * Copy n bytes at off of file (dev, ino) out of the region at base (checked
 * with rtio_shm_check()) when every byte is in a cached block the directory
 * shows as stable, and still was after the copy. Returns n, or 0 when any
 * part is missing, short (EOF, a file that grew) or changed during the copy:
 * then buf holds garbage and the caller asks aiod. Never more than
 * RTIO_SHM_MAX_STEPS chain entries per block, whatever aiod does meanwhile.
 */
#define RTIO_SHM_MAX_STEPS 16
size_t rtio_shm_dir_copy(const uint8_t *base, uint64_t dev, uint64_t ino, void *buf, size_t n,
			 uint64_t off);

/*
 * Whether the directory shows every byte of [off, off + n) of (dev, ino) in
 * a stable cached block now: rtio_shm_dir_copy() without the copy. Advice
 * only (aiod may evict a block the next moment): for choosing a path.
 */
bool rtio_shm_dir_holds(const uint8_t *base, uint64_t dev, uint64_t ino, size_t n, uint64_t off);

#endif
