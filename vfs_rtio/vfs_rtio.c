/*
 * vfs_rtio: Samba VFS module that hands smbd's data I/O to aiod, the rtio
 * real-time I/O daemon, and does it itself whenever aiod cannot.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   [share]
 *       vfs objects = rtio
 *       rtio:socket = /run/aiod/aiod.sock
 *
 * This file: the function table, tree connect, open/close, and the
 * namespace and size operations that must keep aiod's cache truthful.
 * Data operations are in vfs_rtio_io.c.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/util/tevent_ntstatus.h"

#include <sys/sendfile.h>
#include <sys/socket.h>

#include "vfs_rtio.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

/*
 * Every function below was checked against the 4.22 (version 50) signatures;
 * a new interface version must be looked at before it is claimed.
 */
#if SMB_VFS_INTERFACE_VERSION != 50
#error "vfs_rtio supports SMB_VFS_INTERFACE_VERSION 50 (Samba 4.22) only"
#endif

static int vfs_rtio_connect(struct vfs_handle_struct *handle, const char *service,
			    const char *user)
{
	struct vfs_rtio_config *config = NULL;
	struct rtio_client *client;
	int ret;

	ret = SMB_VFS_NEXT_CONNECT(handle, service, user);
	if (ret < 0) {
		return ret;
	}
	ret = vfs_rtio_config_load(handle, handle->conn, &config);
	if (ret != 0) {
		DBG_ERR("rtio: cannot read the %s:* parameters of [%s]: %s\n", MODULE_NAME,
			service, strerror(-ret));
		SMB_VFS_NEXT_DISCONNECT(handle);
		errno = -ret;
		return -1;
	}
	config->session = vfs_rtio_session_get(config, handle->conn->sconn->ev_ctx);
	if (config->session == NULL) {
		DBG_ERR("rtio: no memory for the aiod session\n");
		TALLOC_FREE(config);
		SMB_VFS_NEXT_DISCONNECT(handle);
		errno = ENOMEM;
		return -1;
	}
	SMB_VFS_HANDLE_SET_DATA(handle, config, NULL, struct vfs_rtio_config, {
		vfs_rtio_session_put(config->session);
		TALLOC_FREE(config);
		SMB_VFS_NEXT_DISCONNECT(handle);
		errno = EINVAL;
		return -1;
	});

	/* The first tree connect of the process sets up the session. */
	client = vfs_rtio_session_client(config->session, false);
	if (client != NULL) {
		VFS_RTIO_STATUS("rtio: attached to aiod at %s (session %" PRIu32 ")\n",
				config->socket_path, config->session->session_id);
	} else if (!vfs_rtio_session_no_room(config->session)) {
		/* (no room in aiod: the session logged that, once for the whole process) */
		int err = config->session->last_error;

		VFS_RTIO_STATUS("rtio: aiod not available at %s (%s), doing I/O locally\n",
				config->socket_path,
				err != 0 ? strerror(-err) : "connection lost");
	}
	return 0;
}

static void vfs_rtio_disconnect(struct vfs_handle_struct *handle)
{
	struct vfs_rtio_config *config = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, {
		SMB_VFS_NEXT_DISCONNECT(handle);
		return;
	});
	vfs_rtio_session_put(config->session);
	config->session = NULL;
	SMB_VFS_NEXT_DISCONNECT(handle);
}

static int vfs_rtio_openat(struct vfs_handle_struct *handle, const struct files_struct *dirfsp,
			   const struct smb_filename *smb_fname, struct files_struct *fsp,
			   const struct vfs_open_how *how)
{
	int fd = SMB_VFS_NEXT_OPENAT(handle, dirfsp, smb_fname, fsp, how);

	if (fd == -1) {
		return -1;
	}
	/*
	 * Registration failing only means local I/O for this file, except when
	 * aiod's admission control turns a stream down: then the open fails.
	 */
	if (vfs_rtio_fsp_open(handle, fsp, how, fd) == -ENOBUFS) {
		DBG_NOTICE("rtio: aiod refused the stream %s: the device is fully booked\n",
			   fsp_str_dbg(fsp));
		close(fd);
		errno = ENOBUFS;
		return -1;
	}
	return fd;
}

static int vfs_rtio_close(struct vfs_handle_struct *handle, struct files_struct *fsp)
{
	vfs_rtio_fsp_close(handle, fsp);
	return SMB_VFS_NEXT_CLOSE(handle, fsp);
}

/*
 * sendfile ("use sendfile = yes", "aio read size = 0", unsigned sessions):
 * the data goes from aiod's shared cache straight to the socket, never
 * through smbd's buffers: READ0 pins the blocks, sendmsg() hands the kernel
 * the pinned pages, READ1 unpins them. Like sys_sendfile(), the header goes
 * first (corked with MSG_MORE) and the socket is made blocking for the
 * duration, because nothing else may be sent on it in between.
 *
 * If aiod cannot serve the first piece, nothing has been sent yet and the
 * kernel's sendfile from smbd's descriptor does it all. If aiod goes away
 * mid-way, the kernel sends the rest from the descriptor: the client still
 * gets every byte once.
 */
static ssize_t vfs_rtio_send_all(int fd, struct iovec *iov, int iovcnt, bool more)
{
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = iovcnt };
	ssize_t total = 0;

	while (msg.msg_iovlen > 0) {
		ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | (more ? MSG_MORE : 0));

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -1;
		}
		total += n;
		while (msg.msg_iovlen > 0 && (size_t)n >= msg.msg_iov[0].iov_len) {
			n -= (ssize_t)msg.msg_iov[0].iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen > 0) {
			msg.msg_iov[0].iov_base = (uint8_t *)msg.msg_iov[0].iov_base + n;
			msg.msg_iov[0].iov_len -= (size_t)n;
		}
	}
	return total;
}

static ssize_t vfs_rtio_sendfile(struct vfs_handle_struct *handle, int tofd,
				 files_struct *fromfsp, const DATA_BLOB *hdr, off_t offset,
				 size_t n)
{
	struct vfs_rtio_fsp *ext = NULL;
	struct rtio_client *client = vfs_rtio_fsp_client(handle, fromfsp, &ext);
	struct rtio_pinned pin;
	size_t hdr_len = hdr != NULL ? hdr->length : 0;
	size_t sent = 0;
	ssize_t got;
	int old_flags;
	ssize_t ret = -1;

	if (client == NULL || n == 0) {
		return SMB_VFS_NEXT_SENDFILE(handle, tofd, fromfsp, hdr, offset, n);
	}
	got = rtio_client_read_pinned(client, ext->file_id,
				      MIN(n, (size_t)rtio_client_max_io(client)), offset, &pin);
	if (got < 0) {
		return SMB_VFS_NEXT_SENDFILE(handle, tofd, fromfsp, hdr, offset, n);
	}
	old_flags = fcntl(tofd, F_GETFL, 0);
	if (old_flags == -1 || fcntl(tofd, F_SETFL, old_flags & ~O_NONBLOCK) == -1) {
		rtio_client_release(client, &pin);
		return -1;
	}
	if (hdr_len > 0) {
		struct iovec iov = { .iov_base = hdr->data, .iov_len = hdr_len };
		if (vfs_rtio_send_all(tofd, &iov, 1, true) < 0) {
			rtio_client_release(client, &pin);
			goto out;
		}
	}
	for (;;) {
		struct iovec iov[RTIO_MAX_SEGS];
		bool last;

		for (uint32_t i = 0; i < pin.nseg; i++) {
			iov[i].iov_base = (void *)(uintptr_t)rtio_client_shm(client, pin.seg[i].shm_off,
									    pin.seg[i].len);
			iov[i].iov_len = pin.seg[i].len;
			if (iov[i].iov_base == NULL) {
				rtio_client_release(client, &pin);
				errno = EIO;
				goto out;
			}
		}
		last = sent + (size_t)got == n || (size_t)got < MIN(n - sent,
							       (size_t)rtio_client_max_io(client));
		if (got > 0 && vfs_rtio_send_all(tofd, iov, (int)pin.nseg, !last) < 0) {
			rtio_client_release(client, &pin);
			goto out;
		}
		rtio_client_release(client, &pin);
		sent += (size_t)got;
		if (last) {
			break;	/* done, or EOF: a short count like sys_sendfile's */
		}
		got = rtio_client_read_pinned(client, ext->file_id,
					      MIN(n - sent, (size_t)rtio_client_max_io(client)),
					      offset + (off_t)sent, &pin);
		if (got < 0) {
			/* aiod went away mid-way: the kernel sends the rest. */
			off_t pos = offset + (off_t)sent;
			while (sent < n) {
				ssize_t k = sendfile(tofd, fsp_get_io_fd(fromfsp), &pos, n - sent);
				if (k < 0 && errno == EINTR) {
					continue;
				}
				if (k <= 0) {
					if (k < 0) {
						goto out;
					}
					break;
				}
				sent += (size_t)k;
			}
			break;
		}
	}
	ret = (ssize_t)(hdr_len + sent);
	DBG_INFO("rtio: sendfile of %zu bytes of %s from aiod's cache\n", sent, fsp_str_dbg(fromfsp));
out:
	{
		int saved_errno = errno;
		if (fcntl(tofd, F_SETFL, old_flags) == -1 && ret != -1) {
			ret = -1;
		} else {
			errno = saved_errno;
		}
	}
	return ret;
}

/*
 * recvfile ("min receivefile size", SMB1 only) splices the socket into
 * smbd's descriptor, past aiod: its cached blocks of the file are stale now.
 */
static ssize_t vfs_rtio_recvfile(struct vfs_handle_struct *handle, int fromfd,
				 files_struct *tofsp, off_t offset, size_t n)
{
	ssize_t ret = SMB_VFS_NEXT_RECVFILE(handle, fromfd, tofsp, offset, n);
	int saved_errno = errno;

	if (n > 0) {
		vfs_rtio_fsp_invalidate(handle, tofsp, NULL, offset, n);
	}
	errno = saved_errno;
	return ret;
}

/*
 * smbd's own stack changes the size, as it decides (strict allocate, sparse
 * files, vfs_default's fallback for filesystems that cannot extend); aiod
 * only has to make its cache agree: its FTRUNCATE trims the cached blocks
 * of the file to the new length, in order with its own I/O.
 *
 * The size has changed before aiod hears of it, so rtio:fallback = no makes
 * no difference here: a failed trim just drops the whole file from aiod's
 * cache, now or at its next registration.
 */
static int vfs_rtio_ftruncate(struct vfs_handle_struct *handle, struct files_struct *fsp,
			      off_t len)
{
	struct vfs_rtio_fsp *ext = NULL;
	struct rtio_client *client;
	int ret = SMB_VFS_NEXT_FTRUNCATE(handle, fsp, len);
	int saved_errno = errno;
	int trimmed = -EIO;

	client = vfs_rtio_fsp_client(handle, fsp, &ext);
	if (ext == NULL) {
		errno = saved_errno;
		return ret;
	}
	if (client != NULL && ret == 0) {
		vfs_rtio_session_enter(ext->session);
		trimmed = rtio_client_ftruncate(client, ext->file_id, (uint64_t)len);
		vfs_rtio_session_failed(ext->session, trimmed);
		vfs_rtio_session_leave(ext->session);
	}
	if (trimmed != 0) {
		/* a failed truncate may still have changed the file */
		DBG_DEBUG("rtio: FTRUNCATE of %s to %jd: %s\n", fsp_str_dbg(fsp), (intmax_t)len,
			  client == NULL ? "not registered" : strerror(-trimmed));
		vfs_rtio_fsp_invalidate(handle, fsp, ext, 0, 0);
	}
	errno = saved_errno;
	return ret;
}

static int vfs_rtio_fallocate(struct vfs_handle_struct *handle, struct files_struct *fsp,
			      uint32_t mode, off_t offset, off_t len)
{
	int ret = SMB_VFS_NEXT_FALLOCATE(handle, fsp, mode, offset, len);
	int saved_errno = errno;

	/*
	 * Allocating with KEEP_SIZE changes no byte a reader sees. Punching a
	 * hole (FSCTL_SET_ZERO_DATA) or extending the file does, behind aiod's
	 * back, even when it failed half way.
	 */
	if (mode != VFS_FALLOCATE_FL_KEEP_SIZE) {
		vfs_rtio_fsp_invalidate(handle, fsp, NULL, offset, (size_t)len);
	}
	errno = saved_errno;
	return ret;
}

/* A file is gone: aiod must not serve its blocks to a later file with the same inode number. */
static void vfs_rtio_forget(struct vfs_handle_struct *handle, const SMB_STRUCT_STAT *st)
{
	struct vfs_rtio_config *config = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, return);
	vfs_rtio_session_forget(config->session, (uint64_t)st->st_ex_dev,
				(uint64_t)st->st_ex_ino);
}

/* Only the last name of a regular file takes its inode with it. */
static bool vfs_rtio_last_link(const SMB_STRUCT_STAT *st)
{
	return S_ISREG(st->st_ex_mode) && st->st_ex_nlink == 1;
}

static int vfs_rtio_unlinkat(struct vfs_handle_struct *handle, struct files_struct *dirfsp,
			     const struct smb_filename *smb_fname, int flags)
{
	SMB_STRUCT_STAT st;
	bool forget = false;
	int ret;

	if (!(flags & AT_REMOVEDIR) && !is_named_stream(smb_fname)) {
		ret = SMB_VFS_NEXT_FSTATAT(handle, dirfsp, smb_fname, &st, AT_SYMLINK_NOFOLLOW);
		forget = ret == 0 && vfs_rtio_last_link(&st);
	}
	ret = SMB_VFS_NEXT_UNLINKAT(handle, dirfsp, smb_fname, flags);
	if (ret == 0 && forget) {
		vfs_rtio_forget(handle, &st);
	}
	return ret;
}

static int vfs_rtio_renameat(struct vfs_handle_struct *handle, struct files_struct *srcdir_fsp,
			     const struct smb_filename *smb_fname_src,
			     struct files_struct *dstdir_fsp,
			     const struct smb_filename *smb_fname_dst,
			     const struct vfs_rename_how *how)
{
	SMB_STRUCT_STAT src_st, dst_st;
	bool forget = false;
	int ret;

	if (!is_named_stream(smb_fname_src) && !is_named_stream(smb_fname_dst) &&
	    SMB_VFS_NEXT_FSTATAT(handle, dstdir_fsp, smb_fname_dst, &dst_st,
				 AT_SYMLINK_NOFOLLOW) == 0 &&
	    vfs_rtio_last_link(&dst_st) &&
	    SMB_VFS_NEXT_FSTATAT(handle, srcdir_fsp, smb_fname_src, &src_st,
				 AT_SYMLINK_NOFOLLOW) == 0) {
		/* renaming a file onto one of its own names replaces nothing */
		forget = src_st.st_ex_dev != dst_st.st_ex_dev ||
			 src_st.st_ex_ino != dst_st.st_ex_ino;
	}
	ret = SMB_VFS_NEXT_RENAMEAT(handle, srcdir_fsp, smb_fname_src, dstdir_fsp,
				    smb_fname_dst, how);
	if (ret == 0 && forget) {
		vfs_rtio_forget(handle, &dst_st);
	}
	return ret;
}

/*
 * Leases and oplocks stay smbd's business. They protect what SMB clients
 * cache; aiod's cache is not one of those: it is write-through (a write is
 * in the file before aiod answers it) and shared by every smbd process, so
 * all of them see the same bytes whether or not a lease is held. A lease
 * break therefore concerns only client caches, and the kernel lease is set
 * on smbd's own descriptor as always (aiod works on a duplicate of it, which
 * shares the open file description and does not break the lease).
 */
static int vfs_rtio_linux_setlease(struct vfs_handle_struct *handle, struct files_struct *fsp,
				   int leasetype)
{
	return SMB_VFS_NEXT_LINUX_SETLEASE(handle, fsp, leasetype);
}

/*
 * Server-side copy (FSCTL_SRV_COPYCHUNK, FSCTL_DUP_EXTENTS_TO_FILE):
 * vfs_default copies with copy_file_range() or a reflink straight between
 * the two descriptors, past aiod. The destination's cached blocks are stale
 * once it is done, before the client hears the copy finished.
 */
struct vfs_rtio_offload_write_state {
	struct vfs_handle_struct *handle;
	struct files_struct *dest_fsp;
	off_t copied;
};

static void vfs_rtio_offload_write_done(struct tevent_req *subreq);

static struct tevent_req *vfs_rtio_offload_write_send(struct vfs_handle_struct *handle,
						      TALLOC_CTX *mem_ctx,
						      struct tevent_context *ev,
						      uint32_t fsctl, DATA_BLOB *token,
						      off_t transfer_offset,
						      struct files_struct *dest_fsp,
						      off_t dest_off, off_t to_copy)
{
	struct tevent_req *req, *subreq;
	struct vfs_rtio_offload_write_state *state;

	req = tevent_req_create(mem_ctx, &state, struct vfs_rtio_offload_write_state);
	if (req == NULL) {
		return NULL;
	}
	state->handle = handle;
	state->dest_fsp = dest_fsp;

	subreq = SMB_VFS_NEXT_OFFLOAD_WRITE_SEND(handle, state, ev, fsctl, token,
						 transfer_offset, dest_fsp, dest_off, to_copy);
	if (tevent_req_nomem(subreq, req)) {
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, vfs_rtio_offload_write_done, req);
	return req;
}

static void vfs_rtio_offload_write_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq, struct tevent_req);
	struct vfs_rtio_offload_write_state *state =
		tevent_req_data(req, struct vfs_rtio_offload_write_state);
	NTSTATUS status;

	status = SMB_VFS_NEXT_OFFLOAD_WRITE_RECV(state->handle, subreq, &state->copied);
	TALLOC_FREE(subreq);
	if (state->copied > 0 || !NT_STATUS_IS_OK(status)) {
		vfs_rtio_fsp_invalidate(state->handle, state->dest_fsp, NULL, 0, 0);
	}
	if (tevent_req_nterror(req, status)) {
		return;
	}
	tevent_req_done(req);
}

static NTSTATUS vfs_rtio_offload_write_recv(struct vfs_handle_struct *handle,
					    struct tevent_req *req, off_t *copied)
{
	struct vfs_rtio_offload_write_state *state =
		tevent_req_data(req, struct vfs_rtio_offload_write_state);
	NTSTATUS status;

	*copied = state->copied;
	if (tevent_req_is_nterror(req, &status)) {
		tevent_req_received(req);
		return status;
	}
	tevent_req_received(req);
	return NT_STATUS_OK;
}

static struct vfs_fn_pointers vfs_rtio_fns = {
	.connect_fn = vfs_rtio_connect,
	.disconnect_fn = vfs_rtio_disconnect,
	.openat_fn = vfs_rtio_openat,
	.close_fn = vfs_rtio_close,
	.pread_fn = vfs_rtio_pread,
	.pwrite_fn = vfs_rtio_pwrite,
	.pread_send_fn = vfs_rtio_pread_send,
	.pread_recv_fn = vfs_rtio_pread_recv,
	.pwrite_send_fn = vfs_rtio_pwrite_send,
	.pwrite_recv_fn = vfs_rtio_pwrite_recv,
	.fsync_send_fn = vfs_rtio_fsync_send,
	.fsync_recv_fn = vfs_rtio_fsync_recv,
	.sendfile_fn = vfs_rtio_sendfile,
	.recvfile_fn = vfs_rtio_recvfile,
	.ftruncate_fn = vfs_rtio_ftruncate,
	.fallocate_fn = vfs_rtio_fallocate,
	.unlinkat_fn = vfs_rtio_unlinkat,
	.renameat_fn = vfs_rtio_renameat,
	.linux_setlease_fn = vfs_rtio_linux_setlease,
	.offload_write_send_fn = vfs_rtio_offload_write_send,
	.offload_write_recv_fn = vfs_rtio_offload_write_recv,
};

/*
 * smbd looks for this name when it loads a module from its modules
 * directory; the only symbol the module needs to export.
 */
NTSTATUS samba_init_module(TALLOC_CTX *ctx);
_PUBLIC_ NTSTATUS samba_init_module(TALLOC_CTX *ctx)
{
	return smb_register_vfs(SMB_VFS_INTERFACE_VERSION, MODULE_NAME, &vfs_rtio_fns);
}
