/*
 * vfs_rtio: files aiod may still cache under an identity that is no longer
 * theirs (vfs_rtio_stale.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A file removed, or written locally, while the process was detached: aiod
 * must drop its blocks at the next attach. The session owns one set; this
 * file knows nothing of aiod.
 */
#ifndef VFS_RTIO_STALE_H
#define VFS_RTIO_STALE_H

struct vfs_rtio_stale {
	uint64_t dev;
	uint64_t ino;
};

struct vfs_rtio_stale_set {
	struct vfs_rtio_stale *entries;	/* talloc array, NULL when empty */
	size_t n;
	bool overflow_logged;
};

/* Remember dev/ino (once); entries are allocated under mem_ctx. */
void vfs_rtio_stale_add(TALLOC_CTX *mem_ctx, struct vfs_rtio_stale_set *set, uint64_t dev,
			uint64_t ino);
/* Remove dev/ino; whether it was there. */
bool vfs_rtio_stale_take(struct vfs_rtio_stale_set *set, uint64_t dev, uint64_t ino);
/* The entry to hand aiod next, NULL when the set is empty. */
const struct vfs_rtio_stale *vfs_rtio_stale_last(const struct vfs_rtio_stale_set *set);
/* aiod has been told about vfs_rtio_stale_last(): drop it. */
void vfs_rtio_stale_drop_last(struct vfs_rtio_stale_set *set);

#endif
