/*
 * vfs_rtio: files aiod may still cache under an identity that is no longer
 * theirs.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "includes.h"

#include "vfs_rtio_stale.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

#define VFS_RTIO_MAX_STALE 4096

static ssize_t vfs_rtio_stale_find(const struct vfs_rtio_stale_set *set, uint64_t dev,
				   uint64_t ino)
{
	for (size_t i = 0; i < set->n; i++) {
		if (set->entries[i].dev == dev && set->entries[i].ino == ino) {
			return (ssize_t)i;
		}
	}
	return -1;
}

void vfs_rtio_stale_add(TALLOC_CTX *mem_ctx, struct vfs_rtio_stale_set *set, uint64_t dev,
			uint64_t ino)
{
	struct vfs_rtio_stale *entries;

	if (vfs_rtio_stale_find(set, dev, ino) >= 0) {
		return;
	}
	if (set->n >= VFS_RTIO_MAX_STALE) {
		if (!set->overflow_logged) {
			DBG_ERR("rtio: more than %d files changed while detached from aiod; "
				"aiod may serve old cached data of the others until it restarts\n",
				VFS_RTIO_MAX_STALE);
			set->overflow_logged = true;
		}
		return;
	}
	entries = talloc_realloc(mem_ctx, set->entries, struct vfs_rtio_stale, set->n + 1);
	if (entries == NULL) {
		DBG_ERR("rtio: out of memory remembering a changed file\n");
		return;
	}
	set->entries = entries;
	set->entries[set->n++] = (struct vfs_rtio_stale){ .dev = dev, .ino = ino };
}

void vfs_rtio_stale_drop_last(struct vfs_rtio_stale_set *set)
{
	SMB_ASSERT(set->n > 0);
	if (--set->n == 0) {
		TALLOC_FREE(set->entries);
	}
}

bool vfs_rtio_stale_take(struct vfs_rtio_stale_set *set, uint64_t dev, uint64_t ino)
{
	ssize_t i = vfs_rtio_stale_find(set, dev, ino);

	if (i < 0) {
		return false;
	}
	set->entries[i] = set->entries[set->n - 1];
	vfs_rtio_stale_drop_last(set);
	return true;
}

const struct vfs_rtio_stale *vfs_rtio_stale_last(const struct vfs_rtio_stale_set *set)
{
	return set->n > 0 ? &set->entries[set->n - 1] : NULL;
}
