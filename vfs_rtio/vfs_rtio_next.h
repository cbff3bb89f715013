/*
 * vfs_rtio: the next module's async data operations, chosen by op code
 * (vfs_rtio_next.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_NEXT_H
#define VFS_RTIO_NEXT_H

#include "vfs_rtio.h"

const char *vfs_rtio_op_name(enum vfs_rtio_op op);

/*
 * SMB_VFS_NEXT_{PREAD,PWRITE,FSYNC}_SEND(); buf, n and offset unused for
 * fsync. The next module has no WROTE: NULL.
 */
struct tevent_req *vfs_rtio_next_send(TALLOC_CTX *mem_ctx, struct tevent_context *ev,
				      struct vfs_handle_struct *handle,
				      struct files_struct *fsp, enum vfs_rtio_op op,
				      uint8_t *buf, size_t n, off_t offset);
/* The matching SMB_VFS_*_RECV(): bytes (0 for fsync) or -1 and aio_state->error. */
ssize_t vfs_rtio_next_recv(struct tevent_req *subreq, enum vfs_rtio_op op,
			   struct vfs_aio_state *aio_state);

#endif
