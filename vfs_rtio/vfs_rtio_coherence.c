/*
 * vfs_rtio: changes to files that aiod's cache must hear of.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * smbd's own stack makes these changes, as it would without rtio; aiod
 * serves reads from its cache, so it is told afterwards which blocks no
 * longer hold the file's bytes: a new size, a punched hole, a copy into the
 * file past aiod, or a file removed (its inode number may come back with
 * another file).
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/tevent_ntstatus.h"

#include "vfs_rtio.h"
#include "vfs_rtio_coherence.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_defer.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_qos_gate.h"
#include "vfs_rtio_session.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

/*
 * smbd's own stack changes the size, as it decides (strict allocate, sparse
 * files, vfs_default's fallback for filesystems that cannot extend); aiod
 * only has to make its cache agree: its FTRUNCATE trims the cached blocks
 * of the file to the new length, in order with its own I/O.
 *
 * The size has changed before aiod hears of it, so rtio:fallback = no makes
 * no difference here: a failed trim just drops the whole file from aiod's
 * cache, now or at its next registration.
 *
 * A file whose registration is deferred (smaller than rtio:register min size
 * at open) has nothing to trim through this handle, and the truncate costs no
 * round trip: if aiod caches the file for some other open, its inotify watch
 * sees the new size (IN_MODIFY, queued before ftruncate returns) and drops
 * the blocks before it answers any later read; if this handle registers the
 * file later, the registration drops them too (RTIO_OPEN_INVALIDATE). Only a
 * truncate that makes the file that big registers it, as a write there would
 * (a client that sets the size before copying a big file in).
 */
struct vfs_rtio_ftruncate_call {
	uint64_t file_id;
	off_t len;
};

static ssize_t vfs_rtio_ftruncate_call(struct rtio_client *client, void *private_data)
{
	const struct vfs_rtio_ftruncate_call *c = private_data;

	return rtio_client_ftruncate(client, c->file_id, (uint64_t)c->len);
}

int vfs_rtio_ftruncate(struct vfs_handle_struct *handle, struct files_struct *fsp, off_t len)
{
	struct vfs_rtio_fsp *ext = NULL;
	struct rtio_client *client;
	int ret = SMB_VFS_NEXT_FTRUNCATE(handle, fsp, len);
	int saved_errno = errno;
	ssize_t trimmed = -EIO;

	client = vfs_rtio_fsp_client(handle, fsp, VFS_RTIO_ACCESS_WRITE, ret == 0 ? len : 0, 0,
				     &ext);
	if (ext == NULL) {
		errno = saved_errno;
		return ret;
	}
	if (client != NULL && ret == 0) {
		struct vfs_rtio_ftruncate_call c = { .file_id = ext->file_id, .len = len };

		trimmed = vfs_rtio_session_call(ext->session, vfs_rtio_ftruncate_call, &c);
	}
	if (trimmed != 0) {
		/* a failed truncate may still have changed the file */
		DBG_DEBUG("rtio: FTRUNCATE of %s to %jd: %s\n", fsp_str_dbg(fsp), (intmax_t)len,
			  client == NULL ? "not registered" : strerror((int)-trimmed));
		vfs_rtio_fsp_invalidate(handle, fsp, ext, 0, 0);
	}
	errno = saved_errno;
	return ret;
}

int vfs_rtio_fallocate(struct vfs_handle_struct *handle, struct files_struct *fsp,
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

/*
 * A file is gone: aiod must not serve its blocks to a later file with the
 * same inode number.
 *
 * Except a file smaller than rtio:register min size, which no open of this
 * share registered unless it was bigger then: telling aiod would cost a round
 * trip per deleted small file (an unpack cleaned up, a thumbnail cache
 * emptied), and aiod refuses the UNLINK of a file the session never had. If
 * aiod does cache it, its watch sees the inode go (IN_DELETE_SELF), and a
 * new file that gets the number is checked at OPEN (stamp) or registered with
 * RTIO_OPEN_INVALIDATE (created, so deferred).
 */
static void vfs_rtio_forget(struct vfs_handle_struct *handle, const SMB_STRUCT_STAT *st)
{
	struct vfs_rtio_config *config = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, config, struct vfs_rtio_config, return);
	if (vfs_rtio_defer_small(config->register_min_size, (uint64_t)st->st_ex_size)) {
		return;
	}
	vfs_rtio_session_forget(config->session, (uint64_t)st->st_ex_dev,
				(uint64_t)st->st_ex_ino);
}

/* Only the last name of a regular file takes its inode with it. */
static bool vfs_rtio_last_link(const SMB_STRUCT_STAT *st)
{
	return S_ISREG(st->st_ex_mode) && st->st_ex_nlink == 1;
}

int vfs_rtio_unlinkat(struct vfs_handle_struct *handle, struct files_struct *dirfsp,
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

int vfs_rtio_renameat(struct vfs_handle_struct *handle, struct files_struct *srcdir_fsp,
		      const struct smb_filename *smb_fname_src, struct files_struct *dstdir_fsp,
		      const struct smb_filename *smb_fname_dst, const struct vfs_rename_how *how)
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
 * Server-side copy (FSCTL_SRV_COPYCHUNK, FSCTL_DUP_EXTENTS_TO_FILE):
 * vfs_default copies with copy_file_range() or a reflink straight between
 * the two descriptors, past aiod. The destination's cached blocks are stale
 * once it is done, before the client hears the copy finished.
 *
 * A copy chunk reads and writes its bytes on the server's disk as a client's
 * read and write would, so it is charged to the destination's QoS flow (the
 * principal that asked for the copy) both ways before it starts; a reflink
 * moves no data and is not charged. When copy_file_range() is refused
 * (another filesystem, overlapping ranges) vfs_default copies through
 * SMB_VFS_PREAD/PWRITE_SEND, which charge again: such a copy counts twice
 * against the flow, never less than once.
 */
struct vfs_rtio_offload_write_state {
	struct vfs_handle_struct *handle;
	struct tevent_context *ev;
	uint32_t fsctl;
	DATA_BLOB *token;
	off_t transfer_offset;
	struct files_struct *dest_fsp;
	off_t dest_off;
	off_t to_copy;
	off_t copied;
	struct vfs_rtio_qos_gate gate;		/* QoS holds the copy until its flow's rate lets it go */
};

static void vfs_rtio_offload_write_done(struct tevent_req *subreq);

static void vfs_rtio_offload_write_cleanup(struct tevent_req *req, enum tevent_req_state req_state)
{
	struct vfs_rtio_offload_write_state *state =
		tevent_req_data(req, struct vfs_rtio_offload_write_state);

	vfs_rtio_qos_gate_cancel(&state->gate);	/* abandoned while QoS held it */
}

static void vfs_rtio_offload_write_start(void *private_data)
{
	struct tevent_req *req = talloc_get_type_abort(private_data, struct tevent_req);
	struct vfs_rtio_offload_write_state *state =
		tevent_req_data(req, struct vfs_rtio_offload_write_state);
	struct tevent_req *subreq;

	subreq = SMB_VFS_NEXT_OFFLOAD_WRITE_SEND(state->handle, state, state->ev, state->fsctl,
						 state->token, state->transfer_offset,
						 state->dest_fsp, state->dest_off, state->to_copy);
	if (tevent_req_nomem(subreq, req)) {
		return;
	}
	tevent_req_set_callback(subreq, vfs_rtio_offload_write_done, req);
}

/*
 * Charge a copy chunk to the destination's flow, as a read and a write;
 * true when the flow holds it (vfs_rtio_offload_write_start() runs later).
 */
static bool vfs_rtio_offload_write_held(struct tevent_req *req)
{
	struct vfs_rtio_offload_write_state *state =
		tevent_req_data(req, struct vfs_rtio_offload_write_state);

	if ((state->fsctl != FSCTL_SRV_COPYCHUNK && state->fsctl != FSCTL_SRV_COPYCHUNK_WRITE) ||
	    state->to_copy <= 0) {
		return false;
	}
	return vfs_rtio_qos_gate_hold(&state->gate, state, state->ev,
				      vfs_rtio_fsp_qos(state->handle, state->dest_fsp),
				      VFS_RTIO_QOS_READ | VFS_RTIO_QOS_WRITE, (uint64_t)state->to_copy,
				      vfs_rtio_offload_write_start, req);
}

struct tevent_req *vfs_rtio_offload_write_send(struct vfs_handle_struct *handle,
					       TALLOC_CTX *mem_ctx, struct tevent_context *ev,
					       uint32_t fsctl, DATA_BLOB *token,
					       off_t transfer_offset, struct files_struct *dest_fsp,
					       off_t dest_off, off_t to_copy)
{
	struct tevent_req *req;
	struct vfs_rtio_offload_write_state *state;

	req = tevent_req_create(mem_ctx, &state, struct vfs_rtio_offload_write_state);
	if (req == NULL) {
		return NULL;
	}
	*state = (struct vfs_rtio_offload_write_state){
		.handle = handle, .ev = ev, .fsctl = fsctl, .token = token,
		.transfer_offset = transfer_offset, .dest_fsp = dest_fsp, .dest_off = dest_off,
		.to_copy = to_copy,
	};
	tevent_req_set_cleanup_fn(req, vfs_rtio_offload_write_cleanup);
	if (!vfs_rtio_offload_write_held(req)) {
		vfs_rtio_offload_write_start(req);
	}
	if (!tevent_req_is_in_progress(req)) {
		return tevent_req_post(req, ev);
	}
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

NTSTATUS vfs_rtio_offload_write_recv(struct vfs_handle_struct *handle, struct tevent_req *req,
				     off_t *copied)
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

