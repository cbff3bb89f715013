/*
 * vfs_rtio: data operations through aiod and their local fallback,
 * tevent async (vfs_rtio_aio.c) and sync (vfs_rtio_sync.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_IO_H
#define VFS_RTIO_IO_H

#include "rtio_client.h"
#include "vfs_rtio.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_session.h"

/* vfs_rtio_sync.c */

/* One blocking data call into aiod. */
struct vfs_rtio_io_call {
	enum vfs_rtio_op op;
	uint64_t file_id;
	uint8_t *buf;		/* written to for PREAD, read for PWRITE */
	size_t n;
	off_t offset;
};
/* A vfs_rtio_session_fn: private_data is a struct vfs_rtio_io_call. */
ssize_t vfs_rtio_io_call(struct rtio_client *client, void *private_data);

ssize_t vfs_rtio_pread(struct vfs_handle_struct *handle, struct files_struct *fsp,
		       void *data, size_t n, off_t offset);
ssize_t vfs_rtio_pwrite(struct vfs_handle_struct *handle, struct files_struct *fsp,
			const void *data, size_t n, off_t offset);

/* vfs_rtio_aio.c: op is PREAD, PWRITE (buf is only read) or FSYNC (no buf). */
struct tevent_req *vfs_rtio_aio_send(struct vfs_handle_struct *handle, TALLOC_CTX *mem_ctx,
				     struct tevent_context *ev, struct files_struct *fsp,
				     enum vfs_rtio_op op, void *buf, size_t n, off_t offset);
/* Bytes transferred (0 for FSYNC), or -1 with vfs_aio_state->error. */
ssize_t vfs_rtio_aio_recv(struct tevent_req *req, struct vfs_aio_state *vfs_aio_state);

/*
 * rtio:write = local (or the session's region is read-only because it was
 * attached for such a share), and this aiod understands WROTE: smbd writes,
 * aiod is told.
 */
static inline bool vfs_rtio_writes_locally(struct vfs_handle_struct *handle,
					   struct rtio_client *client)
{
	return (vfs_rtio_write_local(handle) ||
		!rtio_client_has_feature(client, RTIO_FEAT_SHM_WRITE)) &&
	       rtio_client_has_feature(client, RTIO_FEAT_WROTE);
}

/*
 * rtio:hits = local: a read of an fsp registered with client that aiod's
 * cache holds whole is copied here, on smbd's thread, without a round trip
 * (rtio_client_read_cached()). True when buf now holds the n bytes.
 */
static inline bool vfs_rtio_read_hit(struct vfs_handle_struct *handle, struct rtio_client *client,
				     const struct vfs_rtio_fsp *ext, void *buf, size_t n,
				     off_t offset)
{
	const struct rtio_file f = { .file_id = ext->file_id, .dev = ext->dev, .ino = ext->ino };

	return vfs_rtio_hits_local(handle) &&
	       rtio_client_read_cached(client, &f, buf, n, offset) == (ssize_t)n;
}

/* With rtio:fallback = no, what the client sees of aiod's -errno. */
static inline int vfs_rtio_no_fallback_errno(ssize_t err)
{
	return vfs_rtio_session_lost(err) ? EIO : (int)-err;
}

#endif
