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
 * This file: the function table, tree connect, open/close. vfs_rtio.h
 * lists the other files and which may call which.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"

#include "rtio_samba.h"
#include "rtio_version.h"
#include "vfs_rtio.h"
#include "vfs_rtio_coherence.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_io.h"
#include "vfs_rtio_qos.h"
#include "vfs_rtio_sendfile.h"
#include "vfs_rtio_session.h"
#include "vfs_rtio_sqos.h"

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
	struct timespec t0, t1;
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
	clock_gettime_mono(&t0);
	client = vfs_rtio_session_client(config->session, false);
	/* QoS: which flow paces this connection (bound later if aiod is not there yet) */
	config->qos = vfs_rtio_qos_connect(config, handle, config->session);
	clock_gettime_mono(&t1);
	if (client != NULL) {
		/* the time it took: aiod answers every smbd from one event loop */
		VFS_RTIO_STATUS("rtio: attached to aiod at %s (session %" PRIu32 ", %" PRId64 " ms)\n",
				config->socket_path, vfs_rtio_session_id(config->session),
				nsec_time_diff(&t1, &t0) / 1000000);
	} else if (!vfs_rtio_session_no_room(config->session)) {
		/* (no room in aiod: the session logged that, once for the whole process) */
		int err = vfs_rtio_session_last_error(config->session);

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

/* The async data operations, one request type for all (vfs_rtio_aio.c). */
static struct tevent_req *vfs_rtio_pread_send(struct vfs_handle_struct *handle,
					      TALLOC_CTX *mem_ctx, struct tevent_context *ev,
					      struct files_struct *fsp, void *data, size_t n,
					      off_t offset)
{
	return vfs_rtio_aio_send(handle, mem_ctx, ev, fsp, VFS_RTIO_OP_PREAD, data, n, offset);
}

static struct tevent_req *vfs_rtio_pwrite_send(struct vfs_handle_struct *handle,
					       TALLOC_CTX *mem_ctx, struct tevent_context *ev,
					       struct files_struct *fsp, const void *data,
					       size_t n, off_t offset)
{
	/* Only aiod's shared buffer and the local pwrite read from data. */
	return vfs_rtio_aio_send(handle, mem_ctx, ev, fsp, VFS_RTIO_OP_PWRITE,
				 discard_const(data), n, offset);
}

static struct tevent_req *vfs_rtio_fsync_send(struct vfs_handle_struct *handle,
					      TALLOC_CTX *mem_ctx, struct tevent_context *ev,
					      struct files_struct *fsp)
{
	return vfs_rtio_aio_send(handle, mem_ctx, ev, fsp, VFS_RTIO_OP_FSYNC, NULL, 0, 0);
}

static ssize_t vfs_rtio_pread_recv(struct tevent_req *req, struct vfs_aio_state *vfs_aio_state)
{
	return vfs_rtio_aio_recv(req, VFS_RTIO_OP_PREAD, vfs_aio_state);
}

static ssize_t vfs_rtio_pwrite_recv(struct tevent_req *req, struct vfs_aio_state *vfs_aio_state)
{
	return vfs_rtio_aio_recv(req, VFS_RTIO_OP_PWRITE, vfs_aio_state);
}

static int vfs_rtio_fsync_recv(struct tevent_req *req, struct vfs_aio_state *vfs_aio_state)
{
	return vfs_rtio_aio_recv(req, VFS_RTIO_OP_FSYNC, vfs_aio_state) == -1 ? -1 : 0;
}

/*
 * Only the operations rtio changes; the rest falls through to the next module.
 *
 * No linux_setlease: leases and oplocks stay smbd's business. They protect
 * what SMB clients cache; aiod's cache is not one of those: it is
 * write-through (a write is in the file before aiod answers it) and shared
 * by every smbd process, so all of them see the same bytes whether or not a
 * lease is held. A lease break therefore concerns only client caches, and the
 * kernel lease is set on smbd's own descriptor as always (aiod works on a
 * duplicate of it, which shares the open file description and does not
 * break the lease).
 */
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
	.offload_write_send_fn = vfs_rtio_offload_write_send,
	.offload_write_recv_fn = vfs_rtio_offload_write_recv,
	.fsctl_fn = vfs_rtio_sqos_fsctl,
};

/*
 * smbd looks for this name when it loads a module from its modules
 * directory; the only symbol the module needs to export.
 */
/*
 * Which Samba this file was linked against, as a plain string in the file:
 * aiodctl doctor reads it without loading the module, since a module whose
 * Samba was upgraded away cannot be loaded to be asked. "used" keeps it
 * although nothing here reads it.
 */
__attribute__((used)) static const char vfs_rtio_samba_built_for[] =
	RTIO_SAMBA_MARK RTIO_SAMBA_BUILT_FOR;

NTSTATUS samba_init_module(TALLOC_CTX *ctx);
_PUBLIC_ NTSTATUS samba_init_module(TALLOC_CTX *ctx)
{
	return smb_register_vfs(SMB_VFS_INTERFACE_VERSION, MODULE_NAME, &vfs_rtio_fns);
}
