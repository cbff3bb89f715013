/*
 * vfs_rtio: who serves an async request (vfs_rtio_aio_plan.h).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/sys_rw.h"

#include "vfs_rtio.h"
#include "vfs_rtio_aio_plan.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_session.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

/* FSYNC and WROTE carry no data: they never register a deferred file. */
static enum vfs_rtio_fsp_access vfs_rtio_aio_access(enum vfs_rtio_op op)
{
	return op == VFS_RTIO_OP_PREAD	? VFS_RTIO_ACCESS_READ :
	       op == VFS_RTIO_OP_PWRITE ? VFS_RTIO_ACCESS_WRITE :
					  VFS_RTIO_ACCESS_NONE;
}

bool vfs_rtio_aio_appends(enum vfs_rtio_op op, struct files_struct *fsp, off_t offset)
{
	return op == VFS_RTIO_OP_PWRITE &&
	       (offset == VFS_PWRITE_APPEND_OFFSET || fsp->fsp_flags.posix_append);
}

void vfs_rtio_aio_route(struct vfs_handle_struct *handle, struct files_struct *fsp,
			enum vfs_rtio_op op, void *buf, size_t n, off_t offset,
			struct vfs_rtio_aio_plan *plan)
{
	plan->planned = true;
	plan->client = vfs_rtio_fsp_client(handle, fsp, vfs_rtio_aio_access(op), offset, n,
					   &plan->ext);
	plan->path = VFS_RTIO_READ_AIOD;
	if (plan->client != NULL && op == VFS_RTIO_OP_PREAD) {
		plan->path = vfs_rtio_read_route(handle, plan->client, fsp, plan->ext, buf, n,
						 offset);
	}
}

/*
 * A request rtio has nothing to do with goes to the next module as it is,
 * without a request of the module's around it (one tevent_req and one
 * deferred callback less: what a plain share pays). That is an operation
 * on a file that is not aiod's (a small file, one not registered yet), or a
 * read that is smbd's own (vfs_rtio_read_route() says LOCAL; aiod is told
 * of it now, by the bytes asked for). Only when no QoS flow may have to
 * hold it and it has a valid offset; vfs_rtio_aio_recv() tells such a
 * request from the module's own.
 */
void vfs_rtio_aio_plan(struct vfs_handle_struct *handle, struct files_struct *fsp,
		       enum vfs_rtio_op op, void *buf, size_t n, off_t offset,
		       struct vfs_rtio_aio_plan *plan)
{
	*plan = (struct vfs_rtio_aio_plan){ .path = VFS_RTIO_READ_AIOD };
	if (vfs_rtio_fsp_qos(handle, fsp) != NULL || vfs_rtio_aio_appends(op, fsp, offset) ||
	    (op != VFS_RTIO_OP_FSYNC && !sys_valid_io_range(offset, n))) {
		return;
	}
	vfs_rtio_aio_route(handle, fsp, op, buf, n, offset, plan);
	if (plan->client == NULL) {
		plan->next_only = plan->ext == NULL;
	} else if (plan->path == VFS_RTIO_READ_LOCAL) {
		vfs_rtio_session_count_local_read(plan->ext->session, n);
		plan->next_only = true;
	}
}
