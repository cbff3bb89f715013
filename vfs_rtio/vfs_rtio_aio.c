/*
 * vfs_rtio: tevent async data operations through aiod, and their local
 * fallback (vfs_rtio_aio_local.c: smbd's own descriptor; the request's
 * struct is in vfs_rtio_aio_private.h, shared by the two).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An async request goes to aiod when its fsp is registered in the live
 * session; otherwise, or when aiod fails it, the request is done on smbd's
 * own descriptor by the next module (rtio:fallback = no turns that into EIO).
 *
 * Writes (rtio:write = local, the default) are the exception: smbd writes
 * into the page cache through the next module, as it would without rtio,
 * and then tells aiod the range (WROTE) and completes only after aiod has
 * dropped its cached copy. Through aiod's shared buffer (rtio:write = aiod)
 * the data would be copied twice (smbd's buffer -> shared region -> page
 * cache) for the same result: the device sees the bytes at write-back
 * either way, and aiod schedules that write-back from WROTE as it does for
 * its own writes.
 * The client never sees an aiod failure and no byte is lost: a short or
 * failed transfer is completed locally from where aiod stopped, and writing
 * the same bytes to the same offset again is harmless.
 *
 *   vfs_rtio_aio_send()
 *     -> vfs_rtio_aio_plan(): not aiod's file, or smbd's own read
 *          -> SMB_VFS_NEXT_*_SEND(), returned as it is (no request of ours)
 *     -> vfs_rtio_aio_dispatch() (planned) or vfs_rtio_aio_submit() (after QoS)
 *          -> rtio_client_*_start()  ....  vfs_rtio_aio_done()      (reply)
 *          |                         ....  vfs_rtio_aio_timeout()   (timer)
 *          |                                 -> rtio_client_abort() -> _done(-ETIMEDOUT)
 *          |                         ....  vfs_rtio_aio_abandon()   (the session gave up)
 *          -> vfs_rtio_aio_failover() -> SMB_VFS_NEXT_*_SEND() -> vfs_rtio_aio_local_done()
 *
 * vfs_rtio_aio_done() runs from rtio_client_process() in the tevent fd
 * handler, but also from inside a sync wait of some other operation
 * (vfs_rtio_pread() -> rtio_client_pread() processes every reply that
 * arrives), and from rtio_client_abort(). That is why _send calls
 * tevent_req_defer_callback(): smbd's completion of this request always
 * runs from the event loop, never inside someone else's library call.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/tevent_unix.h"
#include "lib/util/sys_rw.h"

#include "vfs_rtio.h"
#include "vfs_rtio_aio_plan.h"
#include "vfs_rtio_aio_private.h"
#include "vfs_rtio_config.h"
#include "vfs_rtio_fsp.h"
#include "vfs_rtio_io.h"
#include "vfs_rtio_next.h"
#include "vfs_rtio_qos_gate.h"
#include "vfs_rtio_session.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

/*
 * rtio:timeout is how long aiod may go without answering any request before
 * the session is given up; a request still waiting behind others while
 * aiod makes progress is given up only after this many timeouts.
 */
#define VFS_RTIO_MAX_WAIT_TIMEOUTS  4

static void vfs_rtio_aio_done(ssize_t result, void *private_data);
static void vfs_rtio_aio_timeout(struct tevent_context *ev, struct tevent_timer *te,
				 struct timeval now, void *private_data);

void vfs_rtio_aio_finish(struct vfs_rtio_aio *a, int error)
{
	clock_gettime_mono(&a->end_time);
	if (error != 0) {
		tevent_req_error(a->req, error);
		return;
	}
	tevent_req_done(a->req);
}

/* Out of aiod's hands: off the session's list, timer gone. */
static void vfs_rtio_aio_unlist(struct vfs_rtio_aio *a)
{
	TALLOC_FREE(a->timer);
	vfs_rtio_session_req_remove(&a->sreq);
}

/* Whatever aiod still has of the request is forgotten: it must not touch the buffer. */
static void vfs_rtio_aio_cancel(struct vfs_rtio_aio *a)
{
	if (a->io != NULL) {
		rtio_client_io_cancel(a->io);
		a->io = NULL;
	}
	vfs_rtio_aio_unlist(a);
}

/* The session gave up its client while aiod owned the request. */
static void vfs_rtio_aio_abandon(void *private_data, int err)
{
	struct vfs_rtio_aio *a = talloc_get_type_abort(private_data, struct vfs_rtio_aio);

	vfs_rtio_aio_cancel(a);
	vfs_rtio_aio_failover(a, err);
}

/* aiod's answer to the request (bytes or -errno): finish it, or the rest of it locally. */
static void vfs_rtio_aio_result(struct vfs_rtio_aio *a, ssize_t result)
{
	if (result < 0) {
		vfs_rtio_aio_failover(a, (int)result);
		return;
	}
	if (a->notifying) {
		a->notifying = false;
		vfs_rtio_aio_finish(a, a->local_error);
		return;
	}
	if (a->op == VFS_RTIO_OP_FSYNC) {
		vfs_rtio_aio_finish(a, 0);
		return;
	}
	if ((size_t)result > a->n - a->done) {
		DBG_ERR("rtio: aiod claims %zd bytes for a %zu byte %s\n", result, a->n,
			vfs_rtio_op_name(a->op));
		vfs_rtio_aio_failover(a, -EPROTO);
		return;
	}
	a->done += (size_t)result;
	if (a->done == a->n) {
		vfs_rtio_aio_finish(a, 0);
		return;
	}
	/*
	 * Short: end of file for a read, or a later piece failed. The file
	 * has the answer either way (at EOF the local read returns 0).
	 */
	vfs_rtio_aio_failover(a, 0);
}

static void vfs_rtio_aio_done(ssize_t result, void *private_data)
{
	struct vfs_rtio_aio *a = talloc_get_type_abort(private_data, struct vfs_rtio_aio);

	/* The library freed its request before calling us. */
	a->io = NULL;
	vfs_rtio_session_req_done(&a->sreq, result);
	vfs_rtio_aio_unlist(a);
	vfs_rtio_aio_result(a, result);
}

/* Bytes a local write may have changed: all it was asked for when it failed. */
static size_t vfs_rtio_aio_wrote_len(const struct vfs_rtio_aio *a)
{
	return a->local_error == 0 ? a->done : a->n;
}

/* What aiod is asked: the request, or the WROTE after smbd wrote it. */
static enum vfs_rtio_op vfs_rtio_aio_aiod_op(const struct vfs_rtio_aio *a)
{
	return a->notifying ? VFS_RTIO_OP_WROTE : a->op;
}

/*
 * smb_vfs_fsync_sync() (smbd's sync_file(), for "strict sync") runs an
 * async request on a private event context of its own and polls only that
 * one; aiod's replies are watched on smbd's main context. The caller blocks
 * anyway, so wait for aiod's answer (to the request or its WROTE) here instead.
 */
static void vfs_rtio_aio_submit_sync(struct vfs_rtio_aio *a)
{
	struct vfs_rtio_io_call c = {
		.op = vfs_rtio_aio_aiod_op(a),
		.file_id = a->ext->file_id,
		.buf = a->buf,
		.n = a->notifying ? vfs_rtio_aio_wrote_len(a) : a->n,
		.offset = a->offset,
	};

	vfs_rtio_aio_result(a, vfs_rtio_session_call(a->ext->session, vfs_rtio_io_call, &c));
}

/* Start a->op (or its WROTE) with aiod and watch it; -errno if it could not start. */
static ssize_t vfs_rtio_aio_start_call(struct rtio_client *client, void *private_data)
{
	struct vfs_rtio_aio *a = talloc_get_type_abort(private_data, struct vfs_rtio_aio);
	struct vfs_rtio_session *s = a->ext->session;
	int ret = 0;

	vfs_rtio_session_req_add(s, &a->sreq, vfs_rtio_aio_abandon, a);
	switch (vfs_rtio_aio_aiod_op(a)) {
	case VFS_RTIO_OP_PREAD:
		ret = rtio_client_pread_start(client, a->ext->file_id, a->buf, a->n, a->offset,
					      vfs_rtio_aio_done, a, &a->io);
		break;
	case VFS_RTIO_OP_PWRITE:
		ret = rtio_client_pwrite_start(client, a->ext->file_id, a->buf, a->n, a->offset,
					       vfs_rtio_aio_done, a, &a->io);
		break;
	case VFS_RTIO_OP_FSYNC:
		ret = rtio_client_fsync_start(client, a->ext->file_id, false, vfs_rtio_aio_done, a,
					      &a->io);
		break;
	case VFS_RTIO_OP_WROTE:
		ret = rtio_client_wrote_start(client, a->ext->file_id, vfs_rtio_aio_wrote_len(a),
					      a->offset, vfs_rtio_aio_done, a, &a->io);
		break;
	}
	if (ret < 0) {
		a->io = NULL;
		vfs_rtio_aio_unlist(a);
	} else if (a->io != NULL) {
		/* a->io is NULL when the library failed it already, through _done */
		a->timer = tevent_add_timer(a->ev, a,
					    timeval_current_ofs_msec(vfs_rtio_fsp_wait_ms(a->ext, s)),
					    vfs_rtio_aio_timeout, a);
		if (a->timer == NULL) {
			DBG_ERR("rtio: no memory for a timer, doing %s locally\n",
				vfs_rtio_op_name(a->op));
			vfs_rtio_aio_cancel(a);
			ret = -ENOMEM;
		}
	}
	return ret;
}

/* Start a->op (or its WROTE) with aiod, or do it locally. */
static void vfs_rtio_aio_start(struct vfs_rtio_aio *a)
{
	ssize_t ret = vfs_rtio_session_call(a->ext->session, vfs_rtio_aio_start_call, a);

	if (ret < 0) {
		vfs_rtio_aio_failover(a, (int)ret);
	}
}

/*
 * The local write of a write_local request is done (it may have failed
 * after changing some bytes): tell aiod, then complete.
 */
void vfs_rtio_aio_notify(struct vfs_rtio_aio *a)
{
	struct rtio_client *client = vfs_rtio_fsp_client(a->handle, a->fsp, VFS_RTIO_ACCESS_NONE,
							  0, 0, &a->ext);

	a->notifying = true;
	if (client == NULL || !rtio_client_has_feature(client, RTIO_FEAT_WROTE)) {
		vfs_rtio_aio_failover(a, -ENOTCONN);	/* invalidates as it can */
		return;
	}
	if (a->ev != vfs_rtio_session_ev(a->ext->session)) {
		vfs_rtio_aio_submit_sync(a);
		return;
	}
	vfs_rtio_aio_start(a);
}

/*
 * Where a request goes once its file's session (client) and, for a read,
 * its route are known. client NULL: the file is not aiod's (ext NULL: not
 * rtio's, or not yet: deferred) or its session is gone (ext set).
 */
static void vfs_rtio_aio_dispatch(struct vfs_rtio_aio *a, struct rtio_client *client,
				  enum vfs_rtio_read_path path)
{
	if (client == NULL) {
		if (a->ext == NULL) {
			vfs_rtio_aio_local(a);	/* not ours, or not yet (deferred) */
			return;
		}
		vfs_rtio_aio_failover(a, -ENOTCONN);
		return;
	}
	if (path == VFS_RTIO_READ_HIT) {
		a->done = a->n;
		vfs_rtio_aio_finish(a, 0);	/* vfs_rtio_aio_send() posts it */
		return;
	}
	if (path == VFS_RTIO_READ_LOCAL || path == VFS_RTIO_READ_PAGECACHE) {
		a->read_local = true;
		if (path == VFS_RTIO_READ_PAGECACHE && vfs_rtio_aio_read_cached(a)) {
			return;
		}
		vfs_rtio_aio_local(a);	/* smbd's thread pool, as without the module */
		return;
	}
	if (a->op == VFS_RTIO_OP_PWRITE && vfs_rtio_writes_locally(a->handle, client)) {
		a->write_local = true;
		vfs_rtio_aio_local(a);	/* then vfs_rtio_aio_notify() */
		return;
	}
	if (a->ev != vfs_rtio_session_ev(a->ext->session)) {
		vfs_rtio_aio_submit_sync(a);
		return;
	}
	vfs_rtio_aio_start(a);
}

/* After QoS let it go (or at once, when vfs_rtio_aio_plan() left it to this). */
static void vfs_rtio_aio_submit(struct vfs_rtio_aio *a)
{
	struct vfs_rtio_aio_plan plan;

	if (vfs_rtio_aio_appends(a->op, a->fsp, a->offset)) {
		a->ext = VFS_FETCH_FSP_EXTENSION(a->handle, a->fsp);
		vfs_rtio_aio_local(a);
		return;
	}
	vfs_rtio_aio_route(a->handle, a->fsp, a->op, a->buf, a->n, a->offset, &plan);
	a->ext = plan.ext;
	vfs_rtio_aio_dispatch(a, plan.client, plan.path);
}

static void vfs_rtio_aio_timeout(struct tevent_context *ev, struct tevent_timer *te,
				 struct timeval now, void *private_data)
{
	struct vfs_rtio_aio *a = talloc_get_type_abort(private_data, struct vfs_rtio_aio);
	struct vfs_rtio_session *s = a->sreq.session;
	int timeout_ms = vfs_rtio_session_timeout_ms(s), silent_max = vfs_rtio_fsp_wait_ms(a->ext, s);
	int64_t silent_ms, waited_ms;

	a->timer = NULL;	/* tevent frees a timer after it fired */
	/*
	 * Under load a request may wait behind many others (the library
	 * queues what does not fit aiod's in-flight limit): that is not a
	 * stuck aiod as long as answers keep coming.
	 */
	silent_ms = vfs_rtio_session_silent_ms(s);
	waited_ms = vfs_rtio_elapsed_ms(&a->start_time);
	if (silent_ms < silent_max && waited_ms < (int64_t)timeout_ms * VFS_RTIO_MAX_WAIT_TIMEOUTS) {
		a->timer = tevent_add_timer(a->ev, a,
					    timeval_current_ofs_msec(silent_max - silent_ms),
					    vfs_rtio_aio_timeout, a);
		if (a->timer != NULL) {
			return;
		}
	}
	DBG_DEBUG("rtio: aiod did not answer %s of %s (waited %" PRId64 " ms, no answer "
		  "for %" PRId64 " ms)\n", vfs_rtio_op_name(a->op), fsp_str_dbg(a->fsp),
		  waited_ms, silent_ms);
	/*
	 * aiod is stuck (or lost this request): give up the whole session
	 * rather than wait out every other request's timer. Every pending
	 * request, this one included, completes with -ETIMEDOUT and fails over.
	 */
	vfs_rtio_session_abort(s);
}

/* The caller gave up on the request (or received it): aiod must not touch its buffer. */
static void vfs_rtio_aio_cleanup(struct tevent_req *req, enum tevent_req_state req_state)
{
	struct vfs_rtio_aio *a = tevent_req_data(req, struct vfs_rtio_aio);

	vfs_rtio_qos_gate_cancel(&a->gate);	/* abandoned while QoS held it */
	vfs_rtio_aio_cancel(a);
}

/* QoS let the held request go. */
static void vfs_rtio_aio_go(void *private_data)
{
	vfs_rtio_aio_submit(talloc_get_type_abort(private_data, struct vfs_rtio_aio));
}

/*
 * Charge a read or write to its QoS flow; true when the flow holds it
 * (vfs_rtio_aio_go() submits it later).
 */
static bool vfs_rtio_aio_held(struct vfs_rtio_aio *a)
{
	if (a->op != VFS_RTIO_OP_PREAD && a->op != VFS_RTIO_OP_PWRITE) {
		return false;
	}
	return vfs_rtio_qos_gate_hold(&a->gate, a, a->ev, vfs_rtio_fsp_qos(a->handle, a->fsp),
				      a->op == VFS_RTIO_OP_PWRITE ? VFS_RTIO_QOS_WRITE
								  : VFS_RTIO_QOS_READ,
				      a->n, vfs_rtio_aio_go, a);
}

struct tevent_req *vfs_rtio_aio_send(struct vfs_handle_struct *handle, TALLOC_CTX *mem_ctx,
				     struct tevent_context *ev, struct files_struct *fsp,
				     enum vfs_rtio_op op, void *buf, size_t n, off_t offset)
{
	struct tevent_req *req;
	struct vfs_rtio_aio *a;
	struct vfs_rtio_aio_plan plan;

	vfs_rtio_aio_plan(handle, fsp, op, buf, n, offset, &plan);
	if (plan.next_only) {
		return vfs_rtio_next_send(mem_ctx, ev, handle, fsp, op, buf, n, offset);
	}
	req = tevent_req_create(mem_ctx, &a, struct vfs_rtio_aio);
	if (req == NULL) {
		return NULL;
	}
	a->req = req;
	a->ev = ev;
	a->handle = handle;
	a->fsp = fsp;
	a->op = op;
	a->buf = buf;
	a->n = n;
	a->offset = offset;
	clock_gettime_mono(&a->start_time);
	tevent_req_set_cleanup_fn(req, vfs_rtio_aio_cleanup);

	if (op != VFS_RTIO_OP_FSYNC && !sys_valid_io_range(offset, n) &&
	    !(op == VFS_RTIO_OP_PWRITE && offset == VFS_PWRITE_APPEND_OFFSET)) {
		tevent_req_error(req, EINVAL);
		return tevent_req_post(req, ev);
	}

	if (plan.planned) {
		a->ext = plan.ext;
		vfs_rtio_aio_dispatch(a, plan.client, plan.path);
	} else if (!vfs_rtio_aio_held(a)) {
		vfs_rtio_aio_submit(a);
	}
	if (!tevent_req_is_in_progress(req)) {
		return tevent_req_post(req, ev);
	}
	tevent_req_defer_callback(req, ev);
	return req;
}

ssize_t vfs_rtio_aio_recv(struct tevent_req *req, enum vfs_rtio_op op,
			  struct vfs_aio_state *vfs_aio_state)
{
	/* (tevent_req_data() does not check the type: talloc_get_type() does) */
	struct vfs_rtio_aio *a = talloc_get_type(_tevent_req_data(req), struct vfs_rtio_aio);
	ssize_t ret;

	if (a == NULL) {
		/* the next module's own request (vfs_rtio_aio_plan()) */
		return vfs_rtio_next_recv(req, op, vfs_aio_state);
	}
	vfs_aio_state->duration = nsec_time_diff(&a->end_time, &a->start_time);
	if (tevent_req_is_unix_error(req, &vfs_aio_state->error)) {
		tevent_req_received(req);
		return -1;
	}
	vfs_aio_state->error = 0;
	ret = (ssize_t)a->done;
	tevent_req_received(req);
	return ret;
}
