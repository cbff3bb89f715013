/*
 * vfs_rtio: sendfile straight from aiod's cache, and recvfile past it
 * (vfs_rtio_sendfile.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_SENDFILE_H
#define VFS_RTIO_SENDFILE_H

ssize_t vfs_rtio_sendfile(struct vfs_handle_struct *handle, int tofd, files_struct *fromfsp,
			  const DATA_BLOB *hdr, off_t offset, size_t n);
ssize_t vfs_rtio_recvfile(struct vfs_handle_struct *handle, int fromfd, files_struct *tofsp,
			  off_t offset, size_t n);

#endif
