/*
 * Layout of the shared buffer region that aiod creates (memfd) and every
 * client maps. aiod writes the header once before any client connects;
 * clients only check it.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   0                 4096                       4096 + n * block_size
 *   +-----------------+-------+-------+-- ... --+
 *   | rtio_shm_header | blk 0 | blk 1 |         |
 *   +-----------------+-------+-------+-- ... --+
 *
 * Blocks start page aligned so they can be O_DIRECT targets and io_uring
 * fixed buffers.
 */
#ifndef RTIO_SHM_H
#define RTIO_SHM_H

#include <stddef.h>
#include <stdint.h>

#define RTIO_SHM_MAGIC    0x4d485352u	/* "RSHM" */
#define RTIO_SHM_VERSION  1
#define RTIO_SHM_DATA_OFF 4096u

struct rtio_shm_header {
	uint32_t magic;		/* aiod: RTIO_SHM_MAGIC */
	uint32_t version;	/* aiod: RTIO_SHM_VERSION */
	uint64_t size;		/* aiod: whole region, bytes */
	uint32_t block_size;	/* aiod */
	uint32_t nblocks;	/* aiod */
	uint64_t data_off;	/* aiod: RTIO_SHM_DATA_OFF */
	uint64_t aiod_pid;	/* aiod: for logs */
	uint8_t reserved[4056];
};
_Static_assert(sizeof(struct rtio_shm_header) == RTIO_SHM_DATA_OFF, "rtio_shm_header");

/* Where block number block lies in the region: what READ0/WRITE0 segments name. */
static inline uint64_t rtio_shm_block_off(uint32_t block_size, uint32_t block)
{
	return RTIO_SHM_DATA_OFF + (uint64_t)block * block_size;
}

/* Region size for nblocks of block_size. */
static inline uint64_t rtio_shm_region_size(uint32_t block_size, uint32_t nblocks)
{
	return RTIO_SHM_DATA_OFF + (uint64_t)block_size * nblocks;
}

/* 0 when hdr describes a region of exactly size bytes that fits; -EPROTO otherwise. */
int rtio_shm_check(const struct rtio_shm_header *hdr, uint64_t size);

#endif
