/*
 * vfs_rtio: when a detached process asks aiod again (vfs_rtio_retry.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The session's reconnect policy, on its own: it knows the attempts and
 * their errors, not the session.
 */
#ifndef VFS_RTIO_RETRY_H
#define VFS_RTIO_RETRY_H

struct vfs_rtio_retry {
	struct timespec last_attempt;	/* zero: never tried */
	int retry_ms;			/* current interval */
	bool no_room;			/* aiod has no room for us; logged */
};

/* A new process: try at once, and aiod may well have room for it. */
void vfs_rtio_retry_init(struct vfs_rtio_retry *r);
/* Whether an attach may be tried now. */
bool vfs_rtio_retry_due(const struct vfs_rtio_retry *r);
/* An attach is being tried, or the session was just given up: the interval starts now. */
void vfs_rtio_retry_start(struct vfs_rtio_retry *r);
/*
 * The attach failed with err (-errno): when to try again, and what to log.
 * True when that log line already says the process works without aiod.
 */
bool vfs_rtio_retry_failed(struct vfs_rtio_retry *r, int err, const char *socket_path);
void vfs_rtio_retry_succeeded(struct vfs_rtio_retry *r);

#endif
