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
 * itself; fsps registered in an older session are registered again on their
 * next I/O (their extension remembers the generation).
 *
 * The client library runs completion callbacks from inside its calls (and
 * from inside a sync wait for another request), so the client is never freed
 * while any call into the library is on the stack: see depth.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/dlinklist.h"

#include "vfs_rtio.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

/* Files aiod may still cache under an identity that is no longer theirs. */
struct vfs_rtio_stale {
	uint64_t dev;
	uint64_t ino;
};
#define VFS_RTIO_MAX_STALE 4096

static struct vfs_rtio_session *vfs_rtio_sessions;

static void vfs_rtio_session_unwatch(struct vfs_rtio_session *s)
{
	for (int i = 0; i < 2; i++) {
		TALLOC_FREE(s->fde[i]);
		if (s->watch_fd[i] != -1) {
			close(s->watch_fd[i]);
			s->watch_fd[i] = -1;
		}
	}
}

/*
 * smbd forks a child per client connection. A child must neither use nor
 * DISCONNECT its parent's session: forget it (the library skips DISCONNECT
 * when the owner pid differs) and start over in this process.
 */
static void vfs_rtio_session_reset_after_fork(struct vfs_rtio_session *s)
{
	vfs_rtio_session_unwatch(s);
	TALLOC_FREE(s->client);
	s->inflight = NULL;	/* the parent's requests */
	s->depth = 0;
	s->generation++;
	s->pid = getpid();
	s->last_attempt = (struct timespec){ 0 };
	/* A new process: aiod may well have room for it. */
	s->retry_ms = VFS_RTIO_RECONNECT_MS;
	s->no_room = false;
}

static int vfs_rtio_session_destructor(struct vfs_rtio_session *s)
{
	DLIST_REMOVE(vfs_rtio_sessions, s);
	vfs_rtio_session_unwatch(s);
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
	s->watch_fd[0] = s->watch_fd[1] = -1;
	s->retry_ms = VFS_RTIO_RECONNECT_MS;
	s->nconn = 1;
	DLIST_ADD(vfs_rtio_sessions, s);
	talloc_set_destructor(s, vfs_rtio_session_destructor);
	return s;
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
		while (s->inflight != NULL) {
			vfs_rtio_aio_abandon(s->inflight, -ESHUTDOWN);
		}
		vfs_rtio_session_unwatch(s);
		TALLOC_FREE(s->client);	/* sends DISCONNECT */
		DBG_DEBUG("rtio: last share of this process disconnected from aiod at %s\n",
			  s->socket_path);
	}
	TALLOC_FREE(s);
}

void vfs_rtio_session_enter(struct vfs_rtio_session *s)
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
	while (s->inflight != NULL) {
		vfs_rtio_aio_abandon(s->inflight, err);
	}
	vfs_rtio_session_unwatch(s);
	TALLOC_FREE(s->client);
	clock_gettime_mono(&s->last_attempt);
	if (!s->detach_logged) {
		VFS_RTIO_STATUS("rtio: detached from aiod at %s (session %" PRIu32 ": %s), "
				"doing I/O locally\n", s->socket_path, s->session_id,
				strerror(-err));
		s->detach_logged = true;
	}
}

void vfs_rtio_session_leave(struct vfs_rtio_session *s)
{
	SMB_ASSERT(s->depth > 0);
	if (--s->depth > 0) {
		return;
	}
	if (s->client != NULL && !rtio_client_alive(s->client)) {
		vfs_rtio_session_detach(s);
	}
}

void vfs_rtio_session_failed(struct vfs_rtio_session *s, int err)
{
	if (err == -ENOTCONN || err == -ETIMEDOUT || err == -EPROTO) {
		s->last_error = err;
	}
}

void vfs_rtio_session_abort(struct vfs_rtio_session *s)
{
	if (s->client == NULL) {
		return;
	}
	s->last_error = -ETIMEDOUT;
	vfs_rtio_session_enter(s);
	rtio_client_abort(s->client);	/* every pending request completes with -ETIMEDOUT */
	vfs_rtio_session_leave(s);
}

static void vfs_rtio_session_fd_handler(struct tevent_context *ev, struct tevent_fd *fde,
					uint16_t flags, void *private_data)
{
	struct vfs_rtio_session *s = talloc_get_type_abort(private_data,
							   struct vfs_rtio_session);
	int ret;

	if (s->client == NULL) {
		return;
	}
	vfs_rtio_session_enter(s);
	ret = rtio_client_process(s->client);
	if (ret < 0) {
		vfs_rtio_session_failed(s, ret);
	}
	vfs_rtio_session_leave(s);
}

/*
 * Watch duplicates of the client's descriptors: the library closes its own
 * the moment it sees the session die, possibly deep inside a callback, and a
 * tevent_fd must never outlive its descriptor number (the number may be
 * reused by the next open). Ours stay valid until we unwatch.
 */
static int vfs_rtio_session_watch(struct vfs_rtio_session *s)
{
	int fds[2];

	rtio_client_event_fds(s->client, fds);
	for (int i = 0; i < 2; i++) {
		if (fds[i] == -1) {
			return -ENOTCONN;
		}
		s->watch_fd[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
		if (s->watch_fd[i] == -1) {
			return -errno;
		}
		s->fde[i] = tevent_add_fd(s->ev, s, s->watch_fd[i], TEVENT_FD_READ,
					  vfs_rtio_session_fd_handler, s);
		if (s->fde[i] == NULL) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* Tell a new session about files it may cache wrongly; stop at a dead session. */
static void vfs_rtio_session_flush_stale(struct vfs_rtio_session *s)
{
	while (s->nstale > 0 && rtio_client_alive(s->client)) {
		struct vfs_rtio_stale *st = &s->stale[s->nstale - 1];
		int ret;

		vfs_rtio_session_enter(s);
		ret = rtio_client_unlink(s->client, st->dev, st->ino);
		vfs_rtio_session_failed(s, ret);
		vfs_rtio_session_leave(s);
		if (ret == -ENOTCONN || ret == -ETIMEDOUT) {
			return;
		}
		if (ret < 0) {
			/* EPERM: this process never registered it with aiod, which keeps its blocks */
			DBG_DEBUG("rtio: UNLINK %" PRIu64 ":%" PRIu64 ": %s\n", st->dev, st->ino,
				  strerror(-ret));
		}
		s->nstale--;
	}
	if (s->nstale == 0) {
		TALLOC_FREE(s->stale);
	}
}

static int vfs_rtio_session_attach(struct vfs_rtio_session *s)
{
	struct rtio_client *client = NULL;
	int ret;

	if (s->client != NULL) {
		return 0;
	}
	clock_gettime_mono(&s->last_attempt);
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
	ret = vfs_rtio_session_watch(s);
	if (ret < 0) {
		DBG_ERR("rtio: cannot watch the aiod session: %s\n", strerror(-ret));
		vfs_rtio_session_unwatch(s);
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

int64_t vfs_rtio_elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime_mono(&now);
	return (int64_t)(now.tv_sec - since->tv_sec) * 1000 +
	       (now.tv_nsec - since->tv_nsec) / 1000000;
}

/*
 * aiod answered but has no room for this process: [global] max_sessions
 * reached (EUSERS), or it cannot create our message queues (RLIMIT_MSGQUEUE:
 * EMFILE, fs.mqueue.queues_max: ENOSPC, memory) -- or this smbd is out of
 * descriptors or memory itself. None of that passes in a second: asking on
 * every I/O would cost both sides and fill the logs.
 */
static bool vfs_rtio_no_room_error(int err)
{
	return err == -EUSERS || err == -EMFILE || err == -ENFILE || err == -ENOSPC ||
	       err == -ENOMEM;
}

bool vfs_rtio_session_no_room(const struct vfs_rtio_session *s)
{
	return s->client == NULL && s->no_room;
}

/* The attach failed with err: when to try again, and what to log. */
static void vfs_rtio_session_attach_failed(struct vfs_rtio_session *s, int err)
{
	if (vfs_rtio_no_room_error(err)) {
		s->retry_ms = VFS_RTIO_RECONNECT_MAX_MS;
		if (!s->no_room) {
			VFS_RTIO_STATUS("rtio: aiod at %s has no room for this process (%s), "
					"doing I/O locally; asking again every %d s\n",
					s->socket_path, strerror(-err),
					VFS_RTIO_RECONNECT_MAX_MS / 1000);
			s->no_room = true;
			s->detach_logged = true;	/* that line says it all */
		}
	} else if (err == -ETIMEDOUT || err == -EPROTO || err == -ENOTCONN) {
		/* aiod is there but stuck, or it dropped us unanswered: overloaded. */
		s->retry_ms = MIN(s->retry_ms * 2, VFS_RTIO_RECONNECT_MAX_MS);
	} else {
		s->retry_ms = VFS_RTIO_RECONNECT_MS;
	}
	DBG_DEBUG("rtio: aiod at %s still not available: %s, next try in %d ms\n",
		  s->socket_path, strerror(-err), s->retry_ms);
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
	if ((s->last_attempt.tv_sec != 0 || s->last_attempt.tv_nsec != 0) &&
	    vfs_rtio_elapsed_ms(&s->last_attempt) < s->retry_ms) {
		return NULL;
	}
	was_attached = s->ever_attached;
	ret = vfs_rtio_session_attach(s);
	if (ret < 0) {
		vfs_rtio_session_attach_failed(s, ret);
		return NULL;
	}
	s->retry_ms = VFS_RTIO_RECONNECT_MS;
	s->no_room = false;
	if (log_attach) {
		VFS_RTIO_STATUS("rtio: %s aiod at %s (session %" PRIu32 ")\n",
				was_attached ? "re-attached to" : "attached to",
				s->socket_path, s->session_id);
	}
	return s->client;
}

static ssize_t vfs_rtio_session_find_stale(struct vfs_rtio_session *s, uint64_t dev,
					   uint64_t ino)
{
	for (size_t i = 0; i < s->nstale; i++) {
		if (s->stale[i].dev == dev && s->stale[i].ino == ino) {
			return (ssize_t)i;
		}
	}
	return -1;
}

void vfs_rtio_session_add_stale(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino)
{
	struct vfs_rtio_stale *stale;

	if (vfs_rtio_session_find_stale(s, dev, ino) >= 0) {
		return;
	}
	if (s->nstale >= VFS_RTIO_MAX_STALE) {
		if (!s->stale_overflow_logged) {
			DBG_ERR("rtio: more than %d files changed while detached from aiod; "
				"aiod may serve old cached data of the others until it restarts\n",
				VFS_RTIO_MAX_STALE);
			s->stale_overflow_logged = true;
		}
		return;
	}
	stale = talloc_realloc(s, s->stale, struct vfs_rtio_stale, s->nstale + 1);
	if (stale == NULL) {
		DBG_ERR("rtio: out of memory remembering a changed file\n");
		return;
	}
	s->stale = stale;
	s->stale[s->nstale++] = (struct vfs_rtio_stale){ .dev = dev, .ino = ino };
}

bool vfs_rtio_session_take_stale(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino)
{
	ssize_t i = vfs_rtio_session_find_stale(s, dev, ino);

	if (i < 0) {
		return false;
	}
	s->stale[i] = s->stale[--s->nstale];
	return true;
}

void vfs_rtio_session_forget(struct vfs_rtio_session *s, uint64_t dev, uint64_t ino)
{
	int ret;

	if (s->pid != getpid() || s->client == NULL || !rtio_client_alive(s->client)) {
		vfs_rtio_session_add_stale(s, dev, ino);
		return;
	}
	vfs_rtio_session_enter(s);
	ret = rtio_client_unlink(s->client, dev, ino);
	vfs_rtio_session_failed(s, ret);
	vfs_rtio_session_leave(s);
	if (ret == -ENOTCONN || ret == -ETIMEDOUT) {
		vfs_rtio_session_add_stale(s, dev, ino);
	} else if (ret < 0) {
		DBG_DEBUG("rtio: UNLINK %" PRIu64 ":%" PRIu64 ": %s\n", dev, ino, strerror(-ret));
	}
}
