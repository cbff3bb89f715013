/*
 * vfs_rtio: the async paths' QoS hold (vfs_rtio_qos_gate.h).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "vfs_rtio_qos_gate.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

static void vfs_rtio_qos_gate_fired(struct tevent_context *ev, struct tevent_timer *te,
				    struct timeval now, void *private_data);

/* Wait up to VFS_RTIO_QOS_RECHECK_NS of wait_ns, then ask again; false: go now. */
static bool vfs_rtio_qos_gate_arm(struct vfs_rtio_qos_gate *g, uint64_t wait_ns)
{
	if (wait_ns == 0) {
		return false;
	}
	g->timer = tevent_add_timer(g->ev, g->mem_ctx,
				    timeval_current_ofs_usec(MIN(wait_ns, VFS_RTIO_QOS_RECHECK_NS) /
							     1000),
				    vfs_rtio_qos_gate_fired, g);
	return g->timer != NULL;
}

static void vfs_rtio_qos_gate_release(struct vfs_rtio_qos_gate *g)
{
	vfs_rtio_qos_release(&g->read);
	vfs_rtio_qos_release(&g->write);
}

static void vfs_rtio_qos_gate_fired(struct tevent_context *ev, struct tevent_timer *te,
				    struct timeval now, void *private_data)
{
	struct vfs_rtio_qos_gate *g = private_data;

	uint64_t r = vfs_rtio_qos_left(&g->read), w = vfs_rtio_qos_left(&g->write);

	g->timer = NULL;	/* tevent frees a timer after it fired */
	if (vfs_rtio_qos_gate_arm(g, MAX(r, w))) {
		return;
	}
	vfs_rtio_qos_gate_release(g);
	g->go(g->private_data);
}

bool vfs_rtio_qos_gate_hold(struct vfs_rtio_qos_gate *g, TALLOC_CTX *mem_ctx,
			    struct tevent_context *ev, struct vfs_rtio_qos *q, unsigned int dirs,
			    uint64_t n, vfs_rtio_qos_go_fn go, void *private_data)
{
	uint64_t wait_ns = 0, w;

	*g = (struct vfs_rtio_qos_gate){
		.mem_ctx = mem_ctx, .ev = ev, .go = go, .private_data = private_data,
	};
	/* (not inside MAX(), which would evaluate a charge twice) */
	if ((dirs & VFS_RTIO_QOS_READ) != 0) {
		wait_ns = vfs_rtio_qos_charge(q, false, n, &g->read);
	}
	if ((dirs & VFS_RTIO_QOS_WRITE) != 0) {
		w = vfs_rtio_qos_charge(q, true, n, &g->write);
		wait_ns = MAX(wait_ns, w);
	}
	if (vfs_rtio_qos_gate_arm(g, wait_ns)) {
		return true;
	}
	vfs_rtio_qos_gate_release(g);
	return false;
}

void vfs_rtio_qos_gate_cancel(struct vfs_rtio_qos_gate *g)
{
	if (g->timer != NULL) {
		TALLOC_FREE(g->timer);
		vfs_rtio_qos_gate_release(g);
	}
}
