/*
 * vfs_rtio: when a small file is registered with aiod (vfs_rtio_defer.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Registering a file costs one round trip to aiod (OPEN, with the descriptor)
 * and one more at close. A file smaller than rtio:register min size gets
 * nothing for it: there is nothing to read ahead of a file the client reads in
 * one or two requests, and aiod's cache holds it no better than the page cache
 * does. So such a file is not registered at open; smbd does its I/O itself,
 * exactly as without the module, and the first I/O that finds or makes the
 * file at least that big registers it (a file copied in, a recording that
 * grows, a small file another client appended to). From then on it is an
 * aiod file like any other.
 *
 * Only arithmetic here, no Samba and no aiod: tests/unit/test_defer.c tries
 * every case.
 */
#ifndef VFS_RTIO_DEFER_H
#define VFS_RTIO_DEFER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * rtio:register min size by default: one cache block at aiod's default
 * [cache] block_size. A smaller file fits in one block, which its first read
 * loads whole; read-ahead has nothing left to do, and a client reads such a
 * file in one request anyway (Windows asks for up to 1 MiB at a time).
 */
#define VFS_RTIO_DEFAULT_REGISTER_MIN_SIZE (1024 * 1024)

/* register_at of a file aiod refused when it grew (admission): smbd's for good. */
#define VFS_RTIO_DEFER_NEVER UINT64_MAX

/* What an open decides. */
struct vfs_rtio_defer_open {
	/*
	 * 0: register now. Otherwise the size an I/O must find or make the
	 * file reach to register it.
	 */
	uint64_t register_at;
	/*
	 * The open changed the file behind aiod's back (O_TRUNC), or created
	 * it, and its inode number may be that of a file aiod still caches:
	 * the registration, now or later, asks aiod to drop what it holds.
	 */
	bool invalidate;
};

/* Whether a file of size bytes is one rtio:register min size (min_size) leaves to smbd. */
static inline bool vfs_rtio_defer_small(uint64_t min_size, uint64_t size)
{
	return min_size != 0 && size < min_size;
}

/*
 * An open with open_flags (O_TRUNC, O_CREAT...) of a file that is size bytes
 * long now (after the open: O_TRUNC made it 0). min_size 0 registers every
 * file at open.
 */
struct vfs_rtio_defer_open vfs_rtio_defer_open(uint64_t min_size, int open_flags, uint64_t size);

/*
 * Whether a write (or a truncate: n = 0 at the new size) of n bytes at offset
 * makes a file deferred until register_at reach it. 0 is "not deferred":
 * always true; VFS_RTIO_DEFER_NEVER: never.
 */
bool vfs_rtio_defer_write_reaches(uint64_t register_at, uint64_t offset, uint64_t n);

/*
 * Whether a read of n bytes at offset could find the file that long: the
 * cheap test, on the request alone. A read that passes it may still ask past
 * the end of a small file (clients ask for more than there is): then
 * vfs_rtio_defer_read_reaches() decides with the file's size.
 */
static inline bool vfs_rtio_defer_read_may_reach(uint64_t register_at, uint64_t offset,
						 uint64_t n)
{
	return vfs_rtio_defer_write_reaches(register_at, offset, n);
}

/* Whether a read of n bytes at offset of a file size bytes long reaches register_at. */
bool vfs_rtio_defer_read_reaches(uint64_t register_at, uint64_t offset, uint64_t n,
				 uint64_t size);

#endif
