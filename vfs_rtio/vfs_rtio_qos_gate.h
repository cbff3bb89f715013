/*
 * vfs_rtio: the async paths' QoS hold. An async I/O is charged to its flow
 * (vfs_rtio_qos.h) before it is submitted; when the flow is over its rate
 * it waits on a timer on smbd's event loop instead, never on a thread, and
 * then goes once. Sync paths sleep in vfs_rtio_qos_pace() instead.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_QOS_GATE_H
#define VFS_RTIO_QOS_GATE_H

#include "vfs_rtio_qos.h"

/* What an I/O is charged as: a server-side copy reads and writes its bytes. */
enum vfs_rtio_qos_dir {
	VFS_RTIO_QOS_READ = 1,
	VFS_RTIO_QOS_WRITE = 2,
};

typedef void (*vfs_rtio_qos_go_fn)(void *private_data);

/* Embedded in the request's state; all zero until vfs_rtio_qos_gate_hold(). */
struct vfs_rtio_qos_gate {
	TALLOC_CTX *mem_ctx;			/* owns the timer */
	struct tevent_context *ev;
	struct tevent_timer *timer;		/* armed while the I/O is held */
	struct vfs_rtio_qos_ticket read, write;
	vfs_rtio_qos_go_fn go;
	void *private_data;
};

/*
 * Charge n bytes to q (NULL: no QoS) in the directions dirs. true: the I/O
 * is held and go(private_data) runs from ev once the flow's rates let it go
 * (they are asked again at least every VFS_RTIO_QOS_RECHECK_NS, so a rate
 * aiod raised meanwhile counts). false: it goes now and nothing is held,
 * also when no timer could be had: a request is never lost to pacing.
 * The gate must live as long as mem_ctx's timer: embed it in mem_ctx.
 */
bool vfs_rtio_qos_gate_hold(struct vfs_rtio_qos_gate *g, TALLOC_CTX *mem_ctx,
			    struct tevent_context *ev, struct vfs_rtio_qos *q, unsigned int dirs,
			    uint64_t n, vfs_rtio_qos_go_fn go, void *private_data);

/* The I/O was abandoned: if it is held, it never goes and its charges are released. */
void vfs_rtio_qos_gate_cancel(struct vfs_rtio_qos_gate *g);

#endif
