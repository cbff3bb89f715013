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
#include "vfs_rtio_qos.h"
#include "vfs_rtio_session.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

ssize_t vfs_rtio_io_call(struct rtio_client *client, void *private_data)
{
	const struct vfs_rtio_io_call *c = private_data;

	switch (c->op) {
	case VFS_RTIO_OP_PREAD:
		return rtio_client_pread(client, c->file_id, c->buf, c->n, c->offset);
	case VFS_RTIO_OP_PWRITE:
		return rtio_client_pwrite(client, c->file_id, c->buf, c->n, c->offset);
	case VFS_RTIO_OP_FSYNC:
		return rtio_client_fsync(client, c->file_id, false);
	case VFS_RTIO_OP_WROTE:
		return rtio_client_wrote(client, c->file_id, c->n, c->offset);
	}
	return -EINVAL;
}

/* A sync pread or pwrite of an rtio file. */
struct vfs_rtio_sync {
	struct vfs_handle_struct *handle;
	struct files_struct *fsp;
	struct vfs_rtio_fsp *ext;
	struct vfs_rtio_io_call call;	/* file_id set once ext is known */
};

/*
 * Sync counterpart of vfs_rtio_aio_failover(): finish locally from done
 * bytes on, or (rtio:fallback = no) report aiod's answer (err -errno, or 0
 * for a short count).
 */
static ssize_t vfs_rtio_sync_failover(const struct vfs_rtio_sync *io, size_t done, ssize_t err)
{
	uint8_t *buf = io->call.buf + done;
	size_t n = io->call.n - done;
	off_t offset = io->call.offset + (off_t)done;
	ssize_t ret;
	int saved_errno;

	if (!vfs_rtio_fallback(io->handle)) {
		if (err == 0) {
			return (ssize_t)done;
		}
		errno = vfs_rtio_no_fallback_errno(err);
		return -1;
	}
	if (io->call.op == VFS_RTIO_OP_PREAD) {
		ret = SMB_VFS_NEXT_PREAD(io->handle, io->fsp, buf, n, offset);
		return ret == -1 ? -1 : (ssize_t)done + ret;
	}
	ret = SMB_VFS_NEXT_PWRITE(io->handle, io->fsp, buf, n, offset);
	saved_errno = errno;
	vfs_rtio_fsp_invalidate(io->handle, io->fsp, io->ext, offset, n);
	errno = saved_errno;
	return ret == -1 ? -1 : (ssize_t)done + ret;
}

/* A read routed to smbd itself: counted for aiod's stats when it returned bytes. */
static ssize_t vfs_rtio_sync_read_local(const struct vfs_rtio_sync *io)
{
	ssize_t ret = SMB_VFS_NEXT_PREAD(io->handle, io->fsp, io->call.buf, io->call.n,
					 io->call.offset);

	if (ret >= 0) {
		vfs_rtio_session_count_local_read(io->ext->session, (size_t)ret);
	}
	return ret;
}

/* Through aiod (client is the fsp's, NULL when detached), the rest locally. */
static ssize_t vfs_rtio_sync_io(struct vfs_rtio_sync *io, struct rtio_client *client)
{
	ssize_t ret;

	if (client == NULL) {
		return vfs_rtio_sync_failover(io, 0, -ENOTCONN);
	}
	if (io->call.op == VFS_RTIO_OP_PREAD) {
		switch (vfs_rtio_read_route(io->handle, client, io->fsp, io->ext, io->call.buf,
					    io->call.n, io->call.offset)) {
		case VFS_RTIO_READ_HIT:
			return (ssize_t)io->call.n;
		case VFS_RTIO_READ_LOCAL:
		case VFS_RTIO_READ_PAGECACHE:
			return vfs_rtio_sync_read_local(io);
		case VFS_RTIO_READ_AIOD:
			break;
		}
	}
	io->call.file_id = io->ext->file_id;
	ret = vfs_rtio_session_call(io->ext->session, vfs_rtio_io_call, &io->call);
	if (ret < 0) {
		return vfs_rtio_sync_failover(io, 0, ret);
	}
	if ((size_t)ret >= io->call.n) {
		return ret;
	}
	return vfs_rtio_sync_failover(io, (size_t)ret, 0);
}

ssize_t vfs_rtio_pread(struct vfs_handle_struct *handle, struct files_struct *fsp,
		       void *data, size_t n, off_t offset)
{
	struct vfs_rtio_sync io = {
		.handle = handle, .fsp = fsp,
		.call = { .op = VFS_RTIO_OP_PREAD, .buf = data, .n = n, .offset = offset },
	};
	struct rtio_client *client;

	vfs_rtio_qos_pace(vfs_rtio_fsp_qos(handle, fsp), false, n);
	client = vfs_rtio_fsp_client(handle, fsp, VFS_RTIO_ACCESS_READ, offset, n, &io.ext);
	if (io.ext == NULL) {
		return SMB_VFS_NEXT_PREAD(handle, fsp, data, n, offset);	/* not aiod's (yet) */
	}
	return vfs_rtio_sync_io(&io, client);
}

/* As the async path: smbd writes, then aiod's cache is told (WROTE). */
static ssize_t vfs_rtio_sync_write_locally(const struct vfs_rtio_sync *io)
{
	const struct vfs_rtio_io_call *c = &io->call;
	struct vfs_rtio_io_call wrote = {
		.op = VFS_RTIO_OP_WROTE, .file_id = io->ext->file_id, .offset = c->offset,
	};
	ssize_t ret, told;
	int saved_errno;

	ret = SMB_VFS_NEXT_PWRITE(io->handle, io->fsp, c->buf, c->n, c->offset);
	saved_errno = errno;
	wrote.n = ret >= 0 ? (size_t)ret : c->n;
	told = vfs_rtio_session_call(io->ext->session, vfs_rtio_io_call, &wrote);
	if (told < 0) {
		vfs_rtio_fsp_invalidate(io->handle, io->fsp, io->ext, c->offset, c->n);
	}
	errno = saved_errno;
	return ret;
}

ssize_t vfs_rtio_pwrite(struct vfs_handle_struct *handle, struct files_struct *fsp,
			const void *data, size_t n, off_t offset)
{
	struct vfs_rtio_sync io = {
		.handle = handle, .fsp = fsp,
		.call = { .op = VFS_RTIO_OP_PWRITE, .buf = discard_const(data), .n = n,
			  .offset = offset },
	};
	struct rtio_client *client = NULL;
	ssize_t ret;

	vfs_rtio_qos_pace(vfs_rtio_fsp_qos(handle, fsp), true, n);
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
	client = vfs_rtio_fsp_client(handle, fsp, VFS_RTIO_ACCESS_WRITE, offset, n, &io.ext);
	if (io.ext == NULL) {
		return SMB_VFS_NEXT_PWRITE(handle, fsp, data, n, offset);	/* not aiod's (yet) */
	}
	if (client != NULL && vfs_rtio_writes_locally(handle, client)) {
		return vfs_rtio_sync_write_locally(&io);
	}
	return vfs_rtio_sync_io(&io, client);
}
