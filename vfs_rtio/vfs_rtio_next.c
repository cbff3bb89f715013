/*
 * vfs_rtio: the next module's async data operations, chosen by op code.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * For a caller with one request type for all three operations: this is
 * where the op code becomes the VFS call.
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "vfs_rtio_next.h"

const char *vfs_rtio_op_name(enum vfs_rtio_op op)
{
	switch (op) {
	case VFS_RTIO_OP_PREAD:
		return "pread";
	case VFS_RTIO_OP_PWRITE:
		return "pwrite";
	case VFS_RTIO_OP_FSYNC:
		return "fsync";
	case VFS_RTIO_OP_WROTE:
		return "wrote";
	}
	return "?";
}

struct tevent_req *vfs_rtio_next_send(TALLOC_CTX *mem_ctx, struct tevent_context *ev,
				      struct vfs_handle_struct *handle,
				      struct files_struct *fsp, enum vfs_rtio_op op,
				      uint8_t *buf, size_t n, off_t offset)
{
	switch (op) {
	case VFS_RTIO_OP_PREAD:
		return SMB_VFS_NEXT_PREAD_SEND(mem_ctx, ev, handle, fsp, buf, n, offset);
	case VFS_RTIO_OP_PWRITE:
		return SMB_VFS_NEXT_PWRITE_SEND(mem_ctx, ev, handle, fsp, buf, n, offset);
	case VFS_RTIO_OP_FSYNC:
		return SMB_VFS_NEXT_FSYNC_SEND(mem_ctx, ev, handle, fsp);
	case VFS_RTIO_OP_WROTE:
		break;
	}
	return NULL;
}

ssize_t vfs_rtio_next_recv(struct tevent_req *subreq, enum vfs_rtio_op op,
			   struct vfs_aio_state *aio_state)
{
	switch (op) {
	case VFS_RTIO_OP_PREAD:
		return SMB_VFS_PREAD_RECV(subreq, aio_state);
	case VFS_RTIO_OP_PWRITE:
		return SMB_VFS_PWRITE_RECV(subreq, aio_state);
	case VFS_RTIO_OP_FSYNC:
		return SMB_VFS_FSYNC_RECV(subreq, aio_state);
	case VFS_RTIO_OP_WROTE:
		break;
	}
	return -1;
}
