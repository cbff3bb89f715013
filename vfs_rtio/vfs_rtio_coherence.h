/*
 * vfs_rtio: changes to files that aiod's cache must hear of
 * (vfs_rtio_coherence.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_COHERENCE_H
#define VFS_RTIO_COHERENCE_H

int vfs_rtio_ftruncate(struct vfs_handle_struct *handle, struct files_struct *fsp, off_t len);
int vfs_rtio_fallocate(struct vfs_handle_struct *handle, struct files_struct *fsp,
		       uint32_t mode, off_t offset, off_t len);
int vfs_rtio_unlinkat(struct vfs_handle_struct *handle, struct files_struct *dirfsp,
		      const struct smb_filename *smb_fname, int flags);
int vfs_rtio_renameat(struct vfs_handle_struct *handle, struct files_struct *srcdir_fsp,
		      const struct smb_filename *smb_fname_src, struct files_struct *dstdir_fsp,
		      const struct smb_filename *smb_fname_dst, const struct vfs_rename_how *how);
struct tevent_req *vfs_rtio_offload_write_send(struct vfs_handle_struct *handle,
					       TALLOC_CTX *mem_ctx, struct tevent_context *ev,
					       uint32_t fsctl, DATA_BLOB *token,
					       off_t transfer_offset, struct files_struct *dest_fsp,
					       off_t dest_off, off_t to_copy);
NTSTATUS vfs_rtio_offload_write_recv(struct vfs_handle_struct *handle, struct tevent_req *req,
				     off_t *copied);

#endif
