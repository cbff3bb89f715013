/*
 * vfs_rtio: who serves an async request, decided before the module makes
 * a request of its own for it (vfs_rtio_aio_plan.c, used by vfs_rtio_aio.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_AIO_PLAN_H
#define VFS_RTIO_AIO_PLAN_H

#include "vfs_rtio_io.h"

struct vfs_rtio_aio_plan {
	bool planned;			/* false: decided later, after QoS (vfs_rtio_aio_route()) */
	bool next_only;			/* the next module's request is the answer */
	struct rtio_client *client;	/* NULL: not aiod's file (ext NULL) or no session */
	struct vfs_rtio_fsp *ext;
	enum vfs_rtio_read_path path;	/* a read's route; VFS_RTIO_READ_AIOD otherwise */
};

/* An append (no offset): aiod writes at offsets; appending is the kernel's job. */
bool vfs_rtio_aio_appends(enum vfs_rtio_op op, struct files_struct *fsp, off_t offset);

/* The file's session and, for a read, its route (vfs_rtio_read_route()): plan->planned. */
void vfs_rtio_aio_route(struct vfs_handle_struct *handle, struct files_struct *fsp,
			enum vfs_rtio_op op, void *buf, size_t n, off_t offset,
			struct vfs_rtio_aio_plan *plan);

/*
 * Before QoS: plan->next_only when rtio has nothing to do with the request
 * (vfs_rtio_aio_plan.c says when); plan->planned when it was routed.
 */
void vfs_rtio_aio_plan(struct vfs_handle_struct *handle, struct files_struct *fsp,
		       enum vfs_rtio_op op, void *buf, size_t n, off_t offset,
		       struct vfs_rtio_aio_plan *plan);

#endif
