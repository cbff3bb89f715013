/*
 * vfs_rtio: the aiod session of this smbd process.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One session per smbd process and socket path, shared by every tree connect
 * of the process: aiod sizes its per-session resources (queues, in-flight
 * slots) for an smbd process, not for a share.
 *
 * Life cycle:
 *
 *   never attached --attach ok--> attached --client dies / times out--> detached
 *        |                           ^                                     |
 *        +--attach fails--> detached +----- next I/O, >= 1 s later --------+
 *
 * (1 s doubling to 60 s while aiod does not answer; 60 s while it answers
 * that it has no room for this process.)
 *
 * Every transition is logged once. While detached the module does the I/O
 * itself; a file_id learnt in an older session is told by its generation,
 * and the file is registered again on its next I/O.
 *
 * The client library runs completion callbacks from inside its calls (and
 * from inside a sync wait for another request), so the client is never freed
 * while any call into the library is on the stack: every call goes through
 * vfs_rtio_session_call(), which counts depth.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/dlinklist.h"

#include "vfs_rtio.h"
#include "vfs_rtio_retry.h"
#include "vfs_rtio_session.h"
#include "vfs_rtio_stale.h"
#include "vfs_rtio_watch.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

/*
 * client is NULL while detached; generation grows at every attach, so a
 * file_id learnt in an older session is recognised as stale and the file is
 * registered again.
 */
struct vfs_rtio_session {
	struct vfs_rtio_session *prev, *next;
	const char *socket_path;
	int timeout_ms;
	bool shm_write;			/* a share writes through aiod's buffer (rtio:write = aiod) */
	pid_t pid;
	unsigned nconn;			/* tree connects using this session */
	struct tevent_context *ev;
	struct rtio_client *client;
	uint64_t generation;
	uint32_t session_id;
	bool ever_attached;
	bool detach_logged;		/* the current detached state was logged */
	int last_error;			/* -errno of the last failure, for the log */
	struct vfs_rtio_retry retry;	/* when to attach again */
	struct timespec last_answer;	/* aiod last completed one of our async requests */
	/*
	 * Calls into the client library nest (a sync wait runs callbacks of
	 * async requests). The client may only be freed at depth 0.
	 */
	unsigned depth;
	struct vfs_rtio_watch watch;	/* the client's event fds, while attached */
	struct vfs_rtio_session_req *inflight;	/* async requests aiod currently owns */
	struct vfs_rtio_stale_set stale;	/* files aiod may hold stale blocks of */
};

static struct vfs_rtio_session *vfs_rtio_sessions;

/*
 * smbd forks a child per client connection. A child must neither use nor
 * DISCONNECT its parent's session: forget it (the library skips DISCONNECT
 * when the owner pid differs) and start over in this process.
 */
static void vfs_rtio_session_reset_after_fork(struct vfs_rtio_session *s)
{
	vfs_rtio_watch_stop(&s->watch);
	TALLOC_FREE(s->client);
	s->inflight = NULL;	/* the parent's requests */
	s->depth = 0;
	s->generation++;
	s->pid = getpid();
	vfs_rtio_retry_init(&s->retry);
}

static int vfs_rtio_session_destructor(struct vfs_rtio_session *s)
{
	DLIST_REMOVE(vfs_rtio_sessions, s);
	vfs_rtio_watch_stop(&s->watch);
	return 0;
}

struct vfs_rtio_session *vfs_rtio_session_get(const struct vfs_rtio_config *config,
					      struct tevent_context *ev)
{
	struct vfs_rtio_session *s;

	for (s = vfs_rtio_sessions; s != NULL; s = s->next) {
		if (strcmp(s->socket_path, config->socket_path) == 0) {
			if (s->pid != getpid()) {
				vfs_rtio_session_reset_after_fork(s);
				s->ev = ev;
			}
			s->nconn++;
			/* Asked for at the next attach; until then its writes go WROTE. */
			s->shm_write |= !config->write_local;
			return s;
		}
	}
	/* Not under the tree connect: it outlives it, until the last one goes. */
	s = talloc_zero(NULL, struct vfs_rtio_session);
	if (s == NULL) {
		return NULL;
	}
	s->socket_path = talloc_strdup(s, config->socket_path);
	if (s->socket_path == NULL) {
		TALLOC_FREE(s);
		return NULL;
	}
	s->timeout_ms = config->timeout_ms;
	s->shm_write = !config->write_local;
	s->pid = getpid();
	s->ev = ev;
	vfs_rtio_watch_init(&s->watch);
	vfs_rtio_retry_init(&s->retry);
	s->nconn = 1;
	DLIST_ADD(vfs_rtio_sessions, s);
	talloc_set_destructor(s, vfs_rtio_session_destructor);
	return s;
}

/* Give every request aiod owns back to its owner, which completes it without aiod. */
static void vfs_rtio_session_abandon_all(struct vfs_rtio_session *s, int err)
{
	while (s->inflight != NULL) {
		struct vfs_rtio_session_req *req = s->inflight;

		DLIST_REMOVE(s->inflight, req);
		req->session = NULL;
		req->abandon(req->private_data, err);
	}
}

/* Count a local read of *bytes (private_data), or with NULL report what is counted now. */
static ssize_t vfs_rtio_session_local_call(struct rtio_client *client, void *private_data)
{
	const size_t *bytes = private_data;
	int ret = bytes != NULL ? rtio_client_count_local_read(client, *bytes) :
				  rtio_client_report_local_reads(client);

	/*
	 * An older aiod (ENOTSUP) or a full request queue (EAGAIN: the counts
	 * stay for the next try; at the session's end the last second is lost)
	 * is no failure of the session.
	 */
	return ret == -ENOTSUP || ret == -EAGAIN ? 0 : ret;
}

/* The session ends cleanly: what smbd read itself since the last report goes before DISCONNECT. */
static void vfs_rtio_session_report_local_reads(struct vfs_rtio_session *s)
{
	ssize_t ret = vfs_rtio_session_call(s, vfs_rtio_session_local_call, NULL);

	if (ret < 0 && ret != -ENOTCONN) {
		DBG_DEBUG("rtio: last LOCAL_READS report: %s\n", strerror((int)-ret));
	}
}

void vfs_rtio_session_put(struct vfs_rtio_session *s)
{
	SMB_ASSERT(s->nconn > 0);
	if (--s->nconn > 0) {
		return;
	}
	if (s->pid == getpid()) {
		/*
		 * smbd closes every file of a share (freeing their requests)
		 * before disconnecting it; whatever is left completes locally.
		 */
		SMB_ASSERT(s->depth == 0);
		vfs_rtio_session_abandon_all(s, -ESHUTDOWN);
		vfs_rtio_watch_stop(&s->watch);
		vfs_rtio_session_report_local_reads(s);
		TALLOC_FREE(s->client);	/* sends DISCONNECT */
		DBG_DEBUG("rtio: last share of this process disconnected from aiod at %s\n",
			  s->socket_path);
	}
	TALLOC_FREE(s);
}

static void vfs_rtio_session_enter(struct vfs_rtio_session *s)
{
	s->depth++;
}

/* Give up the client: pending requests are completed (by fallback), fds unwatched. */
static void vfs_rtio_session_detach(struct vfs_rtio_session *s)
{
	int err = s->last_error != 0 ? s->last_error : -ENOTCONN;

	/*
	 * A dead client has already completed every request with an error;
	 * anything still listed here is completed by fallback now, before
	 * freeing the client frees the library's handles.
	 */
	vfs_rtio_session_abandon_all(s, err);
	vfs_rtio_watch_stop(&s->watch);
	TALLOC_FREE(s->client);
	vfs_rtio_retry_start(&s->retry);
	if (!s->detach_logged) {
		VFS_RTIO_STATUS("rtio: detached from aiod at %s (session %" PRIu32 ": %s), "
				"doing I/O locally\n", s->socket_path, s->session_id,
				strerror(-err));
		s->detach_logged = true;
	}
}

static void vfs_rtio_session_leave(struct vfs_rtio_session *s)
{
	SMB_ASSERT(s->depth > 0);
	if (--s->depth > 0) {
		return;
	}
	if (s->client != NULL && !rtio_client_alive(s->client)) {
		vfs_rtio_session_detach(s);
	}
}

bool vfs_rtio_session_lost(ssize_t err)
{
	return err == -ENOTCONN || err == -ETIMEDOUT;
}

/* Record why a call failed, if it means the session is gone (for the log). */
static void vfs_rtio_session_failed(struct vfs_rtio_session *s, ssize_t err)
{
	if (vfs_rtio_session_lost(err) || err == -EPROTO) {
		s->last_error = (int)err;
	}
}

ssize_t vfs_rtio_session_call(struct vfs_rtio_session *s, vfs_rtio_session_fn fn,
			      void *private_data)
{
	ssize_t ret;

	if (s->client == NULL) {
		return -ENOTCONN;
	}
	vfs_rtio_session_enter(s);
	ret = fn(s->client, private_data);
	vfs_rtio_session_failed(s, ret);
	vfs_rtio_session_leave(s);	/* may free the client */
	return ret;
}

void vfs_rtio_session_count_local_read(struct vfs_rtio_session *s, size_t bytes)
{
	/* -ENOTCONN (detached, or sending killed the client) is handled by the call itself */
	(void)vfs_rtio_session_call(s, vfs_rtio_session_local_call, &bytes);
}

static ssize_t vfs_rtio_session_abort_call(struct rtio_client *client, void *private_data)
{
	rtio_client_abort(client);	/* every pending request completes with -ETIMEDOUT */
	return 0;
}

void vfs_rtio_session_abort(struct vfs_rtio_session *s)
{
	if (s->client == NULL) {
		return;
	}
	s->last_error = -ETIMEDOUT;
	vfs_rtio_session_call(s, vfs_rtio_session_abort_call, NULL);
}

static ssize_t vfs_rtio_session_process_call(struct rtio_client *client, void *private_data)
{
	return rtio_client_process(client);
}

static void vfs_rtio_session_fd_handler(struct tevent_context *ev, struct tevent_fd *fde,
					uint16_t flags, void *private_data)
{
	struct vfs_rtio_session *s = talloc_get_type_abort(private_data,
							   struct vfs_rtio_session);

	vfs_rtio_session_call(s, vfs_rtio_session_process_call, NULL);
}

static ssize_t vfs_rtio_session_unlink_call(struct rtio_client *client, void *private_data)
{
	const struct vfs_rtio_stale *st = private_data;

	return rtio_client_unlink(client, st->dev, st->ino);
}

/* Tell aiod to drop the blocks of st; false when the session is lost. */
static bool vfs_rtio_session_unlink(struct vfs_rtio_session *s, const struct vfs_rtio_stale *st)
{
	ssize_t ret = vfs_rtio_session_call(s, vfs_rtio_session_unlink_call, discard_const(st));

	if (vfs_rtio_session_lost(ret)) {
		return false;
	}
	if (ret < 0) {
		/* EPERM: this process never registered it with aiod, which keeps its blocks */
		DBG_DEBUG("rtio: UNLINK %" PRIu64 ":%" PRIu64 ": %s\n", st->dev, st->ino,
			  strerror((int)-ret));
	}
	return true;
}

/* Tell a new session about files it may cache wrongly; stop at a dead session. */
static void vfs_rtio_session_flush_stale(struct vfs_rtio_session *s)
{
	const struct vfs_rtio_stale *st;

	while ((st = vfs_rtio_stale_last(&s->stale)) != NULL && rtio_client_alive(s->client)) {
		if (!vfs_rtio_session_unlink(s, st)) {
			return;
		}
		vfs_rtio_stale_drop_last(&s->stale);
	}
}

static int vfs_rtio_session_attach(struct vfs_rtio_session *s)
{
	struct rtio_client *client = NULL;
	int ret;

	if (s->client != NULL) {
		return 0;
	}
	vfs_rtio_retry_start(&s->retry);
	/*
	 * aiod admits root (and listed users) by SO_PEERCRED, which records the
	 * credentials of connect(): those of the impersonated user when this
	 * runs on behalf of a tree connect or an I/O request.
	 */
	become_root();
	/* Without writes through aiod's buffer the region is mapped read-only. */
	ret = rtio_client_connect_features(s, s->socket_path, "smbd", s->timeout_ms,
					   s->shm_write ? RTIO_FEAT_ALL
							: RTIO_FEAT_ALL & ~RTIO_FEAT_SHM_WRITE,
					   &client);
	unbecome_root();
	if (ret < 0) {
		s->last_error = ret;
		return ret;
	}
	s->client = client;
	ret = vfs_rtio_watch_start(&s->watch, s, s->ev, client, vfs_rtio_session_fd_handler, s);
	if (ret < 0) {
		DBG_ERR("rtio: cannot watch the aiod session: %s\n", strerror(-ret));
		vfs_rtio_watch_stop(&s->watch);
		TALLOC_FREE(s->client);
		s->last_error = ret;
		return ret;
	}
	s->generation++;
	s->session_id = rtio_client_session_id(client);
	clock_gettime_mono(&s->last_answer);
	s->last_error = 0;
	s->detach_logged = false;
	s->ever_attached = true;
	vfs_rtio_session_flush_stale(s);
	if (s->client == NULL) {
		/* died while we told it about stale files */
		return s->last_error != 0 ? s->last_error : -ENOTCONN;
	}
	return 0;
}

bool vfs_rtio_session_no_room(const struct vfs_rtio_session *s)
{
	return s->client == NULL && s->retry.no_room;
}

struct rtio_client *vfs_rtio_session_live_client(const struct vfs_rtio_session *s)
{
	return s->client != NULL && rtio_client_alive(s->client) ? s->client : NULL;
}

uint64_t vfs_rtio_session_generation(const struct vfs_rtio_session *s)
{
	return s->generation;
}

uint32_t vfs_rtio_session_id(const struct vfs_rtio_session *s)
{
	return s->session_id;
}

int vfs_rtio_session_last_error(const struct vfs_rtio_session *s)
{
	return s->last_error;
}

struct tevent_context *vfs_rtio_session_ev(const struct vfs_rtio_session *s)
{
	return s->ev;
}

int vfs_rtio_session_timeout_ms(const struct vfs_rtio_session *s)
{
	return s->timeout_ms;
}

int64_t vfs_rtio_session_silent_ms(const struct vfs_rtio_session *s)
{
	int64_t silent = vfs_rtio_elapsed_ms(&s->last_answer);
	int64_t beat = s->client != NULL ? rtio_client_aiod_silent_ms(s->client) : -1;

	/*
	 * An answer to this smbd, or aiod's heartbeat in the shared region:
	 * a stream read queued behind a busy disk is not a hung aiod, and
	 * reading it here instead would add seeks to the disk that is behind
	 * already (on the emulated disk, 8 streams where 7 play clean: half
	 * the reads went local and every stream fell seconds behind).
	 */
	return beat >= 0 && beat < silent ? beat : silent;
}

void vfs_rtio_session_req_add(struct vfs_rtio_session *s, struct vfs_rtio_session_req *req,
			      void (*abandon)(void *private_data, int err), void *private_data)
{
	req->session = s;
	req->abandon = abandon;
	req->private_data = private_data;
	DLIST_ADD_END(s->inflight, req);
}

void vfs_rtio_session_req_remove(struct vfs_rtio_session_req *req)
{
	if (req->session != NULL) {
		DLIST_REMOVE(req->session->inflight, req);
		req->session = NULL;
	}
}

void vfs_rtio_session_req_done(struct vfs_rtio_session_req *req, ssize_t result)
{
	struct vfs_rtio_session *s = req->session;

	if (s == NULL) {
		return;
	}
	vfs_rtio_session_failed(s, result);
	if (!vfs_rtio_session_lost(result)) {
		/* even an error is an answer: aiod is alive */
		clock_gettime_mono(&s->last_answer);
	}
	vfs_rtio_session_req_remove(req);
}

struct rtio_client *vfs_rtio_session_client(struct vfs_rtio_session *s, bool log_attach)
{
	bool was_attached;
	int ret;

	if (s->pid != getpid()) {
		vfs_rtio_session_reset_after_fork(s);
	}
	if (s->client != NULL) {
		if (rtio_client_alive(s->client)) {
			return s->client;
		}
		if (s->depth > 0) {
			return NULL;
		}
		vfs_rtio_session_detach(s);
	}
	/* No reconnect from inside a library call (a completion callback). */
	if (s->depth > 0) {
		return NULL;
	}
	if (!vfs_rtio_retry_due(&s->retry)) {
		return NULL;
	}
	was_attached = s->ever_attached;
	ret = vfs_rtio_session_attach(s);
	if (ret < 0) {
		if (vfs_rtio_retry_failed(&s->retry, ret, s->socket_path)) {
			s->detach_logged = true;	/* that line says it all */
		}
		return NULL;
	}
	vfs_rtio_retry_succeeded(&s->retry);
	if (log_attach) {
		VFS_RTIO_STATUS("rtio: %s aiod at %s (session %" PRIu32 ")\n",
				was_attached ? "re-attached to" : "attached to",
				s->socket_path, s->session_id);
	}
	return s->client;
}

void vfs_rtio_session_add_stale(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino)
{
	vfs_rtio_stale_add(s, &s->stale, dev, ino);
}

bool vfs_rtio_session_take_stale(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino)
{
	return vfs_rtio_stale_take(&s->stale, dev, ino);
}

void vfs_rtio_session_forget(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino)
{
	const struct vfs_rtio_stale st = { .dev = dev, .ino = ino };

	if (s->pid != getpid() || vfs_rtio_session_live_client(s) == NULL ||
	    !vfs_rtio_session_unlink(s, &st)) {
		vfs_rtio_session_add_stale(s, dev, ino);
	}
}
