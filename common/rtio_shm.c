/*
 * The shared region seen from a client: checking aiod's header, and reading
 * cached blocks straight from the directory (rtio_shm.h) without asking aiod.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>

#include "rtio_shm.h"

int rtio_shm_check(const struct rtio_shm_header *hdr, uint64_t size)
{
	struct rtio_shm_layout l;

	if (hdr->magic != RTIO_SHM_MAGIC || hdr->version != RTIO_SHM_VERSION ||
	    hdr->block_size == 0 || hdr->nblocks == 0 || hdr->size != size) {
		return -EPROTO;
	}
	rtio_shm_layout(hdr->block_size, hdr->nblocks, &l);
	if (hdr->dir_off != l.dir_off || hdr->hash_off != l.hash_off ||
	    hdr->hash_mask != l.hash_mask || hdr->data_off != l.data_off || l.size > size) {
		return -EPROTO;
	}
	return 0;
}

/*
 * The entry holding (dev, ino, blkno) with at least need valid bytes, stable
 * when looked at: its index and the sequence seen, or RTIO_SHM_NONE.
 */
static uint32_t dir_find(const struct rtio_shm_header *h, const struct rtio_shm_dirent *dir,
			 const uint32_t *buckets, uint64_t dev, uint64_t ino, uint64_t blkno,
			 uint32_t need, uint64_t *seq)
{
	uint32_t idx = __atomic_load_n(&buckets[rtio_shm_hash(dev, ino, blkno, h->hash_mask)],
				       __ATOMIC_ACQUIRE);

	for (unsigned step = 0; step < RTIO_SHM_MAX_STEPS && idx < h->nblocks; step++) {
		const struct rtio_shm_dirent *e = &dir[idx];
		uint64_t s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

		if ((s & 1) == 0 && __atomic_load_n(&e->blkno, __ATOMIC_RELAXED) == blkno &&
		    __atomic_load_n(&e->ino, __ATOMIC_RELAXED) == ino &&
		    __atomic_load_n(&e->dev, __ATOMIC_RELAXED) == dev) {
			if (__atomic_load_n(&e->valid, __ATOMIC_RELAXED) < need) {
				return RTIO_SHM_NONE;	/* short: EOF inside, or cached shorter */
			}
			*seq = s;
			return idx;
		}
		idx = __atomic_load_n(&e->next, __ATOMIC_RELAXED);
	}
	return RTIO_SHM_NONE;
}

/* buf NULL: only look (rtio_shm_dir_holds()) */
static size_t dir_walk(const uint8_t *base, uint64_t dev, uint64_t ino, void *buf, size_t n,
		       uint64_t off)
{
	const struct rtio_shm_header *h = (const struct rtio_shm_header *)base;
	const struct rtio_shm_dirent *dir = (const struct rtio_shm_dirent *)(base + h->dir_off);
	const uint32_t *buckets = (const uint32_t *)(base + h->hash_off);
	uint32_t bs = h->block_size;
	uint8_t *out = buf;
	size_t done = 0;

	if (n == 0 || off + n < off) {
		return 0;
	}
	while (done < n) {
		uint64_t pos = off + done;
		uint32_t in_blk = (uint32_t)(pos % bs);
		size_t len = bs - in_blk;
		uint64_t seq = 0;
		uint32_t idx;

		if (len > n - done) {
			len = n - done;
		}
		idx = dir_find(h, dir, buckets, dev, ino, pos / bs, in_blk + (uint32_t)len, &seq);
		if (idx == RTIO_SHM_NONE) {
			return 0;
		}
		if (out == NULL) {
			done += len;
			continue;
		}
		memcpy(out + done, base + h->data_off + (uint64_t)idx * bs + in_blk, len);
		/* The copy must be complete before seq is read again (seqlock read side). */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&dir[idx].seq, __ATOMIC_RELAXED) != seq) {
			return 0;	/* aiod changed the block while we copied */
		}
		done += len;
	}
	return n;
}

size_t rtio_shm_dir_copy(const uint8_t *base, uint64_t dev, uint64_t ino, void *buf, size_t n,
			 uint64_t off)
{
	return buf != NULL ? dir_walk(base, dev, ino, buf, n, off) : 0;
}

bool rtio_shm_dir_holds(const uint8_t *base, uint64_t dev, uint64_t ino, size_t n, uint64_t off)
{
	return dir_walk(base, dev, ino, NULL, n, off) == n;
}
