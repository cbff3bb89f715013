/*
 * vfs_rtio: sync data operations through aiod, and their local fallback.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * smbd blocks in these anyway, so the library's sync wait is fine. As in
 * the async path (vfs_rtio_aio.c): a read goes to aiod when the fsp is
 * registered in the live session; a write is done by smbd and aiod is told
 * (WROTE), unless rtio:write = aiod; whatever aiod did not do is done here
 * from where it stopped, or, with rtio:fallback = no, reported.
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "vfs_rtio.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_io.h"
#include "vfs_rtio_session.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

enum vfs_rtio_sync_op {
	VFS_RTIO_SYNC_PREAD,
	VFS_RTIO_SYNC_PWRITE,
	VFS_RTIO_SYNC_WROTE,	/* smbd wrote n bytes at offset: aiod drops its copy */
};

struct vfs_rtio_sync {
	struct vfs_handle_struct *handle;
	struct files_struct *fsp;
	struct vfs_rtio_fsp *ext;
	enum vfs_rtio_sync_op op;
	uint8_t *buf;		/* only aiod's shared buffer and the local pwrite read it for writes */
	size_t n;
	off_t offset;
};

static ssize_t vfs_rtio_sync_call(struct rtio_client *client, void *private_data)
{
	const struct vfs_rtio_sync *io = private_data;

	switch (io->op) {
	case VFS_RTIO_SYNC_PREAD:
		return rtio_client_pread(client, io->ext->file_id, io->buf, io->n, io->offset);
	case VFS_RTIO_SYNC_PWRITE:
		return rtio_client_pwrite(client, io->ext->file_id, io->buf, io->n, io->offset);
	case VFS_RTIO_SYNC_WROTE:
		return rtio_client_wrote(client, io->ext->file_id, io->n, io->offset);
	}
	return -EINVAL;
}

/*
 * Sync counterpart of vfs_rtio_aio_failover(): finish locally from done
 * bytes on, or (rtio:fallback = no) report aiod's answer (err -errno, or 0
 * for a short count).
 */
static ssize_t vfs_rtio_sync_failover(const struct vfs_rtio_sync *io, size_t done, ssize_t err)
{
	uint8_t *buf = io->buf + done;
	size_t n = io->n - done;
	off_t offset = io->offset + (off_t)done;
	ssize_t ret;
	int saved_errno;

	if (!vfs_rtio_fallback(io->handle)) {
		if (err == 0) {
			return (ssize_t)done;
		}
		errno = vfs_rtio_no_fallback_errno(err);
		return -1;
	}
	if (io->op == VFS_RTIO_SYNC_PREAD) {
		ret = SMB_VFS_NEXT_PREAD(io->handle, io->fsp, buf, n, offset);
		return ret == -1 ? -1 : (ssize_t)done + ret;
	}
	ret = SMB_VFS_NEXT_PWRITE(io->handle, io->fsp, buf, n, offset);
	saved_errno = errno;
	vfs_rtio_fsp_invalidate(io->handle, io->fsp, io->ext, offset, n);
	errno = saved_errno;
	return ret == -1 ? -1 : (ssize_t)done + ret;
}

/* Through aiod (client is the fsp's, NULL when detached), the rest locally. */
static ssize_t vfs_rtio_sync_io(const struct vfs_rtio_sync *io, struct rtio_client *client)
{
	ssize_t ret;

	if (client == NULL) {
		return vfs_rtio_sync_failover(io, 0, -ENOTCONN);
	}
	ret = vfs_rtio_session_call(io->ext->session, vfs_rtio_sync_call, discard_const(io));
	if (ret < 0) {
		return vfs_rtio_sync_failover(io, 0, ret);
	}
	if ((size_t)ret >= io->n) {
		return ret;
	}
	return vfs_rtio_sync_failover(io, (size_t)ret, 0);
}

ssize_t vfs_rtio_pread(struct vfs_handle_struct *handle, struct files_struct *fsp,
		       void *data, size_t n, off_t offset)
{
	struct vfs_rtio_sync io = {
		.handle = handle, .fsp = fsp, .op = VFS_RTIO_SYNC_PREAD,
		.buf = data, .n = n, .offset = offset,
	};
	struct rtio_client *client = vfs_rtio_fsp_client(handle, fsp, &io.ext);

	if (io.ext == NULL) {
		return SMB_VFS_NEXT_PREAD(handle, fsp, data, n, offset);
	}
	return vfs_rtio_sync_io(&io, client);
}

/* As the async path: smbd writes, then aiod's cache is told (WROTE). */
static ssize_t vfs_rtio_sync_write_locally(const struct vfs_rtio_sync *io)
{
	struct vfs_rtio_sync wrote = *io;
	ssize_t ret, told;
	int saved_errno;

	ret = SMB_VFS_NEXT_PWRITE(io->handle, io->fsp, io->buf, io->n, io->offset);
	saved_errno = errno;
	wrote.op = VFS_RTIO_SYNC_WROTE;
	wrote.n = ret >= 0 ? (size_t)ret : io->n;
	told = vfs_rtio_session_call(io->ext->session, vfs_rtio_sync_call, &wrote);
	if (told < 0) {
		vfs_rtio_fsp_invalidate(io->handle, io->fsp, io->ext, io->offset, io->n);
	}
	errno = saved_errno;
	return ret;
}

ssize_t vfs_rtio_pwrite(struct vfs_handle_struct *handle, struct files_struct *fsp,
			const void *data, size_t n, off_t offset)
{
	struct vfs_rtio_sync io = {
		.handle = handle, .fsp = fsp, .op = VFS_RTIO_SYNC_PWRITE,
		.buf = discard_const(data), .n = n, .offset = offset,
	};
	struct rtio_client *client = NULL;
	ssize_t ret;

	if (offset == VFS_PWRITE_APPEND_OFFSET || fsp->fsp_flags.posix_append) {
		io.ext = VFS_FETCH_FSP_EXTENSION(handle, fsp);
		ret = SMB_VFS_NEXT_PWRITE(handle, fsp, data, n, offset);
		if (io.ext != NULL) {
			int saved_errno = errno;
			vfs_rtio_fsp_invalidate(handle, fsp, io.ext, 0, 0);	/* where it appended is unknown */
			errno = saved_errno;
		}
		return ret;
	}
	client = vfs_rtio_fsp_client(handle, fsp, &io.ext);
	if (io.ext == NULL) {
		return SMB_VFS_NEXT_PWRITE(handle, fsp, data, n, offset);
	}
	if (client != NULL && vfs_rtio_writes_locally(handle, client)) {
		return vfs_rtio_sync_write_locally(&io);
	}
	return vfs_rtio_sync_io(&io, client);
}
