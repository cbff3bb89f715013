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
/*
 * Bytes transferred (0 for FSYNC), or -1 with vfs_aio_state->error. op is
 * what req was sent for: a request rtio had nothing to do with is the next
 * module's own, received as such.
 */
ssize_t vfs_rtio_aio_recv(struct tevent_req *req, enum vfs_rtio_op op,
			  struct vfs_aio_state *vfs_aio_state);

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

/* Who serves a read of a registered file (vfs_rtio_read_route()). */
enum vfs_rtio_read_path {
	VFS_RTIO_READ_AIOD,	/* a READ round trip to aiod */
	VFS_RTIO_READ_HIT,	/* copied out of aiod's cache here: buf holds the bytes */
	VFS_RTIO_READ_LOCAL,	/* smbd's own read through the next module */
	VFS_RTIO_READ_PAGECACHE,	/* smbd's own too: the page cache holds it whole */
};

/*
 * The one place a read of an fsp registered with client is routed (async
 * and sync alike):
 * - rtio:hits = local: what aiod's cache holds whole is copied here, on
 *   smbd's thread, without a round trip (rtio_client_read_cached());
 * - rtio:random = local: a random read of a large file that is not a stream
 *   is smbd's own while aiod says nothing on the device is owed a rate
 *   (rtio_client_read_yourself()): what a plain share costs;
 * - rtio:hits = local: what the page cache holds whole of a file that is
 *   not a stream is smbd's own too: a file just written (render output, an
 *   ingest) or read outside aiod. aiod would read it from the device
 *   (direct_io = yes: O_DIRECT, after writing its dirty pages back), where a
 *   plain share copies it from memory;
 * - anything else goes to aiod.
 * Moves the open's read position, so the next read can tell whether it continues this one.
 */
static inline enum vfs_rtio_read_path vfs_rtio_read_route(struct vfs_handle_struct *handle,
							  struct rtio_client *client,
							  struct files_struct *fsp,
							  struct vfs_rtio_fsp *ext, void *buf,
							  size_t n, off_t offset)
{
	const struct rtio_file f = {
		.file_id = ext->file_id, .dev = ext->dev, .ino = ext->ino,
		.stream_class = ext->stream ? 1 : 0,
	};
	bool continues = rtio_client_read_continues(client, &ext->read_pos, offset, n);

	if (vfs_rtio_hits_local(handle) &&
	    rtio_client_read_cached(client, &f, buf, n, offset) == (ssize_t)n) {
		return VFS_RTIO_READ_HIT;
	}
	if (vfs_rtio_random_local(handle) &&
	    rtio_client_read_yourself(client, &f, (uint64_t)fsp->fsp_name->st.st_ex_size, continues,
				      offset, n)) {
		return VFS_RTIO_READ_LOCAL;
	}
	if (vfs_rtio_hits_local(handle) && !ext->stream && vfs_rtio_fsp_page_cached(fsp, offset, n)) {
		return VFS_RTIO_READ_PAGECACHE;
	}
	return VFS_RTIO_READ_AIOD;
}

/* With rtio:fallback = no, what the client sees of aiod's -errno. */
static inline int vfs_rtio_no_fallback_errno(ssize_t err)
{
	return vfs_rtio_session_lost(err) ? EIO : (int)-err;
}

#endif
