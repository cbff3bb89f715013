/*
 * vfs_rtio: when a small file is registered with aiod.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * vfs_rtio_defer.h says why. Sizes are compared as "reaches": a file is
 * deferred when it is smaller than rtio:register min size at open, so one
 * that an I/O finds or makes at least that big is registered, the same rule
 * at open and later.
 */

#include <fcntl.h>

#include "vfs_rtio_defer.h"

struct vfs_rtio_defer_open vfs_rtio_defer_open(uint64_t min_size, int open_flags, uint64_t size)
{
	struct vfs_rtio_defer_open d = {
		.register_at = vfs_rtio_defer_small(min_size, size) ? min_size : 0,
		/* a new file may have the inode number of one removed while aiod cached it */
		.invalidate = (open_flags & O_TRUNC) || ((open_flags & O_CREAT) && size == 0),
	};

	return d;
}

/* offset + n, or UINT64_MAX where that does not fit */
static uint64_t vfs_rtio_defer_end(uint64_t offset, uint64_t n)
{
	return n > UINT64_MAX - offset ? UINT64_MAX : offset + n;
}

bool vfs_rtio_defer_write_reaches(uint64_t register_at, uint64_t offset, uint64_t n)
{
	if (register_at == VFS_RTIO_DEFER_NEVER) {
		return false;
	}
	return vfs_rtio_defer_end(offset, n) >= register_at;
}

bool vfs_rtio_defer_read_reaches(uint64_t register_at, uint64_t offset, uint64_t n,
				 uint64_t size)
{
	uint64_t end = vfs_rtio_defer_end(offset, n);

	/* a read returns nothing past the end of the file */
	return vfs_rtio_defer_write_reaches(register_at, 0, end < size ? end : size);
}
