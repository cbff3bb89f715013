/*
 * vfs_rtio: one async data operation (vfs_rtio_aio_send()), shared by the
 * two files that carry it: vfs_rtio_aio.c (the request, aiod's side) and
 * vfs_rtio_aio_local.c (smbd's own descriptor: not aiod's, or failover).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_AIO_PRIVATE_H
#define VFS_RTIO_AIO_PRIVATE_H

#include "vfs_rtio_io.h"
#include "vfs_rtio_qos_gate.h"
#include "vfs_rtio_session.h"

struct vfs_rtio_aio {
	struct vfs_rtio_session_req sreq;	/* listed in the session while aiod owns it */
	struct tevent_req *req;
	struct tevent_context *ev;
	struct vfs_handle_struct *handle;
	struct files_struct *fsp;
	struct vfs_rtio_fsp *ext;		/* NULL: not an rtio file */
	enum vfs_rtio_op op;
	uint8_t *buf;
	size_t n;
	off_t offset;
	size_t done;				/* bytes transferred, by aiod then locally */
	struct rtio_client_io *io;		/* the library's request, while pending */
	struct tevent_timer *timer;
	struct vfs_rtio_qos_gate gate;		/* QoS holds it until its flow's rate lets it go */
	struct timespec start_time;
	struct timespec end_time;
	bool write_local;			/* written by smbd; aiod is told afterwards */
	bool read_local;			/* routed to smbd's own read: aiod counts it */
	bool notifying;				/* WROTE in flight */
	int local_error;			/* errno of the local write, reported at the end */
};

/* vfs_rtio_aio.c */
/* Complete the request: done, or error (an errno). */
void vfs_rtio_aio_finish(struct vfs_rtio_aio *a, int error);
/* A write_local request's local write is done: tell aiod (WROTE), then complete. */
void vfs_rtio_aio_notify(struct vfs_rtio_aio *a);

/* vfs_rtio_aio_local.c */
/* Do (the rest of) the request on smbd's descriptor, through the next module. */
void vfs_rtio_aio_local(struct vfs_rtio_aio *a);
/* A read the page cache holds, copied without waiting; true when that completed it. */
bool vfs_rtio_aio_read_cached(struct vfs_rtio_aio *a);
/* aiod did not (fully) do it (err -errno, 0 short): the rest locally, or aiod's answer. */
void vfs_rtio_aio_failover(struct vfs_rtio_aio *a, int err);

#endif
