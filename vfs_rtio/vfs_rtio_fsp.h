/*
 * vfs_rtio: registration of open files with aiod (vfs_rtio_fsp.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_FSP_H
#define VFS_RTIO_FSP_H

#include "vfs_rtio_session.h"

/* Per open file (fsp extension) of an eligible regular file. */
struct vfs_rtio_fsp {
	struct vfs_rtio_session *session;
	struct vfs_rtio_qos *qos;	/* the file's own QoS flow (a match_file rule), NULL: the tree's */
	int fd;			/* the descriptor aiod was given */
	uint64_t dev;
	uint64_t ino;
	uint64_t file_id;
	uint64_t generation;	/* session generation of file_id; 0: not registered */
	uint64_t tried_generation;	/* registration failed in this generation: stay local */
	/*
	 * Registration deferred (vfs_rtio_defer.h): 0 once the file is aiod's
	 * (registered at open, or by an I/O since); else the size an I/O must
	 * reach to register it, VFS_RTIO_DEFER_NEVER after aiod refused it then.
	 * While deferred, the file's I/O is smbd's, as without the module.
	 */
	uint64_t register_at;
	struct rtio_read_pos read_pos;	/* where its reader is: random or sequential */
	bool stream;		/* aiod matched a stream class at registration */
	uint32_t slack_ms;	/* a stream's wait for a silent aiod, 0: rtio:timeout's */
	bool writable;
	bool wrote_locally;	/* written behind aiod's back since registration (or open) */
};

/* How an I/O reaches into the file, for a registration deferred at open. */
enum vfs_rtio_fsp_access {
	VFS_RTIO_ACCESS_NONE,	/* no data (fsync, WROTE): never registers a deferred file */
	VFS_RTIO_ACCESS_READ,	/* offset + n, or the end of the file if that is nearer */
	VFS_RTIO_ACCESS_WRITE,	/* offset + n; a truncate is a write of 0 bytes at the new size */
};

/*
 * After a successful open: register eligible regular files, or defer a small
 * one. 0, or -ENOBUFS when aiod's admission control refused the stream: the
 * open must fail.
 */
int vfs_rtio_fsp_open(struct vfs_handle_struct *handle, struct files_struct *fsp,
		      const struct vfs_open_how *how, int fd);
/*
 * How long a request on ext may go without aiod answering anything before
 * the session is given up: rtio:timeout, or a stream's slack (half its
 * class's prebuffer_ms) when that is shorter, so playback does not wait out
 * a 5 s timeout on a hung aiod before smbd reads itself.
 */
static inline int vfs_rtio_fsp_wait_ms(const struct vfs_rtio_fsp *ext,
				       const struct vfs_rtio_session *s)
{
	int timeout_ms = vfs_rtio_session_timeout_ms(s);

	return ext != NULL && ext->slack_ms > 0 && (int)ext->slack_ms < timeout_ms ?
		       (int)ext->slack_ms : timeout_ms;
}

/* The QoS flow fsp's I/O is paced by: its own (match_file) or its tree connect's; NULL: none. */
struct vfs_rtio_qos *vfs_rtio_fsp_qos(struct vfs_handle_struct *handle, struct files_struct *fsp);
/* Before close: unregister, unless fsp's current descriptor is not the registered one. */
void vfs_rtio_fsp_close(struct vfs_handle_struct *handle, struct files_struct *fsp);
/*
 * The client to use for an access of n bytes at offset of fsp, registering it
 * if it was registered in an older session, or deferred and this access
 * reaches rtio:register min size; NULL means local I/O. *pext is the fsp's
 * extension, NULL when the I/O is none of aiod's: not an rtio file, or one
 * still deferred (then smbd does it as if the module were not loaded; a
 * deferred write is remembered for the registration).
 */
struct rtio_client *vfs_rtio_fsp_client(struct vfs_handle_struct *handle,
					 struct files_struct *fsp,
					 enum vfs_rtio_fsp_access access, off_t offset,
					 size_t n, struct vfs_rtio_fsp **pext);
/*
 * Whether the kernel's page cache holds every page of [offset, offset + n)
 * of fsp, clipped to the file's size (common/rtio_client_pagecache.c: asked
 * as root). Reading those from smbd's descriptor costs no device time and at
 * most the copy aiod's cache would cost.
 */
bool vfs_rtio_fsp_page_cached(struct files_struct *fsp, off_t offset, size_t n);
/*
 * Read what the page cache holds on this thread, as the HIT path copies out
 * of aiod's cache, instead of handing it to smbd's thread pool (a wake-up
 * and a context switch each way: hot 1 GiB gets from the page cache took
 * 0.59 CPU s/GiB that way, 0.34 this way; smb-2026-11-24-1410.md, -1413.md).
 * RWF_NOWAIT: if a page went meanwhile the kernel says so (-1, EAGAIN) or
 * returns short rather than block the thread on the device.
 */
ssize_t vfs_rtio_fsp_read_nowait(struct files_struct *fsp, void *buf, size_t n, off_t offset);
/*
 * The file changed behind aiod's back (local write in fallback, copy_file_range,
 * punch hole, recvfile): make aiod drop its cached blocks now if the fsp is
 * registered in the live session, else at its next registration. ext may be
 * NULL (looked up; nothing to do for a file that is not ours).
 */
void vfs_rtio_fsp_invalidate(struct vfs_handle_struct *handle, struct files_struct *fsp,
			     struct vfs_rtio_fsp *ext, off_t offset, size_t length);

#endif
