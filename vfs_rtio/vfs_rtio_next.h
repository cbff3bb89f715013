/*
 * vfs_rtio: the next module's async data operations, chosen by op code
 * (vfs_rtio_next.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_NEXT_H
#define VFS_RTIO_NEXT_H

enum vfs_rtio_aio_op {
	VFS_RTIO_AIO_PREAD,
	VFS_RTIO_AIO_PWRITE,
	VFS_RTIO_AIO_FSYNC,
};

const char *vfs_rtio_aio_op_name(enum vfs_rtio_aio_op op);

/* SMB_VFS_NEXT_{PREAD,PWRITE,FSYNC}_SEND(); buf, n and offset unused for fsync. */
struct tevent_req *vfs_rtio_next_send(TALLOC_CTX *mem_ctx, struct tevent_context *ev,
				      struct vfs_handle_struct *handle,
				      struct files_struct *fsp, enum vfs_rtio_aio_op op,
				      uint8_t *buf, size_t n, off_t offset);
/* The matching SMB_VFS_*_RECV(): bytes (0 for fsync) or -1 and aio_state->error. */
ssize_t vfs_rtio_next_recv(struct tevent_req *subreq, enum vfs_rtio_aio_op op,
			   struct vfs_aio_state *aio_state);

#endif
