/*
 * vfs_rtio: an async data operation done on smbd's own descriptor, through
 * the next module (vfs_rtio_aio.c sends it to aiod): a file that is not
 * aiod's, a read left to smbd (random, or in the page cache), the write of
 * rtio:write = local, and the rest of whatever aiod did not do (failover).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/tevent_unix.h"

#include "vfs_rtio.h"
#include "vfs_rtio_aio_private.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_next.h"
#include "vfs_rtio_session.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

static void vfs_rtio_aio_local_done(struct tevent_req *subreq);

/* Do (the rest of) the request on smbd's descriptor, through the next module. */
void vfs_rtio_aio_local(struct vfs_rtio_aio *a)
{
	struct tevent_req *subreq;
	off_t offset = a->offset == VFS_PWRITE_APPEND_OFFSET ? a->offset
							      : a->offset + (off_t)a->done;

	subreq = vfs_rtio_next_send(a, a->ev, a->handle, a->fsp, a->op, a->buf + a->done,
				    a->n - a->done, offset);
	if (tevent_req_nomem(subreq, a->req)) {
		return;
	}
	tevent_req_set_callback(subreq, vfs_rtio_aio_local_done, a->req);
}

/* The page cache holds the read: copied here (vfs_rtio_fsp_read_nowait()); true when done. */
bool vfs_rtio_aio_read_cached(struct vfs_rtio_aio *a)
{
	ssize_t got = vfs_rtio_fsp_read_nowait(a->fsp, a->buf, a->n, a->offset);

	if (got < 0) {
		return false;	/* EAGAIN (a page is not there now), or an error: the pool's */
	}
	a->done = (size_t)got;
	vfs_rtio_session_count_local_read(a->ext->session, a->done);
	if (got > 0 && a->done < a->n) {
		return false;	/* short: the pool reads the rest (or finds the end) */
	}
	vfs_rtio_aio_finish(a, 0);	/* all of it, or 0 at the end of the file */
	return true;
}

/*
 * aiod did not (fully) do it: err is -errno, or 0 for a short count. Finish
 * locally, or, with rtio:fallback = no, report what aiod said.
 */
void vfs_rtio_aio_failover(struct vfs_rtio_aio *a, int err)
{
	if (a->notifying) {
		/*
		 * aiod did not confirm a write smbd already made: it must not
		 * serve the old bytes, now or after it re-attaches. The write
		 * itself stands; the client sees its result.
		 */
		a->notifying = false;
		vfs_rtio_fsp_invalidate(a->handle, a->fsp, a->ext, a->offset, a->n);
		vfs_rtio_aio_finish(a, a->local_error);
		return;
	}
	if (!vfs_rtio_fallback(a->handle)) {
		if (err == 0) {
			vfs_rtio_aio_finish(a, 0);	/* aiod's short count stands */
			return;
		}
		vfs_rtio_aio_finish(a, vfs_rtio_no_fallback_errno(err));
		return;
	}
	DBG_DEBUG("%s %s %zu@%jd locally after aiod: %s\n", vfs_rtio_op_name(a->op),
		  fsp_str_dbg(a->fsp), a->n - a->done, (intmax_t)(a->offset + (off_t)a->done),
		  err != 0 ? strerror(-err) : "short");
	vfs_rtio_aio_local(a);
}

static void vfs_rtio_aio_local_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq, struct tevent_req);
	struct vfs_rtio_aio *a = tevent_req_data(req, struct vfs_rtio_aio);
	struct vfs_aio_state aio_state = { 0 };
	ssize_t ret = vfs_rtio_next_recv(subreq, a->op, &aio_state);

	TALLOC_FREE(subreq);
	if (a->write_local) {
		a->write_local = false;
		if (ret == -1) {
			a->local_error = aio_state.error;
		} else {
			a->done += (size_t)ret;
		}
		vfs_rtio_aio_notify(a);
		return;
	}
	if (a->op == VFS_RTIO_OP_PWRITE && a->ext != NULL) {
		/* even a failed write may have changed some bytes */
		vfs_rtio_fsp_invalidate(a->handle, a->fsp, a->ext, a->offset, a->n);
	}
	if (ret == -1) {
		vfs_rtio_aio_finish(a, aio_state.error);
		return;
	}
	if (a->op != VFS_RTIO_OP_FSYNC) {
		a->done += (size_t)ret;
	}
	if (a->read_local) {
		vfs_rtio_session_count_local_read(a->ext->session, (size_t)ret);
	}
	vfs_rtio_aio_finish(a, 0);
}
