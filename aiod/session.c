/*
 * Sessions, aiod's transport (session.h): one per client process (smbd),
 * with its control socket, its request/reply message queues and a pidfd on
 * the client. Messages go to ctx->handlers; when the client dies we learn it
 * at once from the pidfd or the socket, not by polling (the paper polled),
 * and the handlers give back what the client held (closed).
 *
 * Ending a session gives everything back at once but frees the session
 * itself only from a tevent immediate: it may end deep inside a handler
 * that still holds the pointer (a reply that does not fit the reply queue,
 * found while receiving a batch of requests; a retry of blocked requests
 * answering another session). Until the immediate runs the dead session is
 * an empty shell whose dying flag every entry point checks.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <mqueue.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "aiod.h"
#include "session.h"
#include "files.h"
#include "qos.h"
#include "log.h"
#include "rtio_queue.h"
#include "rtio_sock.h"

struct aiod_session {
	struct aiod_session *prev, *next;
	struct aiod_ctx *ctx;
	uint32_t id;
	pid_t pid;
	uid_t uid;
	char client[32];
	bool connected;		/* CONNECT done: queues exist */
	bool monitor;		/* beyond max_sessions: monitoring (STATS, FILE_STATS...) only */
	bool dying;		/* ended: resources given back, memory freed by reap */
	bool released;		/* session_release() ran */
	struct tevent_immediate *reap;	/* frees the session after its handlers returned */
	int sock;
	struct tevent_fd *sock_fde;
	mqd_t reqq, repq;
	bool qsock;		/* reqq/repq are a socket pair's end (rtio_queue.h) */
	struct tevent_fd *reqq_fde;
	int pidfd;
	struct tevent_fd *pidfd_fde;
	struct tevent_timer *handshake_timer;
	void *owner;		/* the handlers' state (peer.c), from connected to closed */
	uint64_t protocol_errors;
	uint32_t features;	/* RTIO_FEAT_* granted at CONNECT */
};

bool aiod_session_connected(const struct aiod_session *s)
{
	return s->connected;
}

uint32_t aiod_session_features(const struct aiod_session *s)
{
	return s->features;
}

uint32_t aiod_session_id(const struct aiod_session *s)
{
	return s->id;
}

pid_t aiod_session_pid(const struct aiod_session *s)
{
	return s->pid;
}

uid_t aiod_session_uid(const struct aiod_session *s)
{
	return s->uid;
}

const char *aiod_session_client(const struct aiod_session *s)
{
	return s->client;
}

int aiod_session_sock(const struct aiod_session *s)
{
	return s->sock;
}

struct aiod_session *aiod_session_next(struct aiod_session *s)
{
	return s->next;
}

struct aiod_ctx *aiod_session_ctx(const struct aiod_session *s)
{
	return s->ctx;
}

void aiod_session_set_owner(struct aiod_session *s, void *owner)
{
	s->owner = owner;
}

void *aiod_session_owner(const struct aiod_session *s)
{
	return s->owner;
}

bool aiod_session_dying(const struct aiod_session *s)
{
	return s->dying;
}

/* Whether the client process is gone (its pidfd is readable). */
bool aiod_session_client_exited(const struct aiod_session *s)
{
	struct pollfd p = { .fd = s->pidfd, .events = POLLIN };

	return s->pidfd >= 0 && poll(&p, 1, 0) > 0;
}

/* ---- teardown ---- */

/* Give back everything the session holds; its memory stays until the reap. */
static void session_release(struct aiod_session *s)
{
	struct aiod_ctx *ctx = s->ctx;

	if (s->released) {
		return;
	}
	s->released = true;
	if (s->owner != NULL) {
		ctx->handlers->closed(s);	/* requests, leases, opens go back */
		s->owner = NULL;
	}
	TALLOC_FREE(s->sock_fde);
	TALLOC_FREE(s->reqq_fde);
	TALLOC_FREE(s->pidfd_fde);
	TALLOC_FREE(s->handshake_timer);
	if (s->sock >= 0) {
		close(s->sock);
		s->sock = -1;
	}
	if (s->qsock) {
		s->ctx->nsessions_socketq--;
		s->qsock = false;
	}
	if (s->reqq != (mqd_t)-1) {
		mq_close(s->reqq);
		s->reqq = (mqd_t)-1;
	}
	if (s->repq != (mqd_t)-1) {
		mq_close(s->repq);
		s->repq = (mqd_t)-1;
	}
	if (s->pidfd >= 0) {
		close(s->pidfd);
		s->pidfd = -1;
	}
	if (s->prev != NULL) {
		s->prev->next = s->next;
	} else {
		ctx->sessions = s->next;
	}
	if (s->next != NULL) {
		s->next->prev = s->prev;
	}
	s->prev = s->next = NULL;
	if (s->monitor) {
		ctx->nmonitors--;
	} else {
		ctx->nsessions--;
	}
}

/* Freed directly (start-up failure, aiod's own teardown): release first. */
static int session_destructor(struct aiod_session *s)
{
	session_release(s);
	return 0;
}

static void session_reap(struct tevent_context *ev, struct tevent_immediate *im,
			 void *private_data)
{
	(void)ev;
	(void)im;
	talloc_free(private_data);
}

void aiod_session_destroy(struct aiod_session *s, const char *why)
{
	if (s->dying) {
		return;
	}
	s->dying = true;
	SESS_INFO(s, "closed: %s", why);
	session_release(s);
	tevent_schedule_immediate(s->reap, s->ctx->ev, session_reap, s);
}

/* ---- replies ---- */

int aiod_session_reply(struct aiod_session *s, const void *msg, size_t len)
{
	if (s->dying || !s->connected) {
		return -ENOTCONN;
	}
	if (rtio_queue_send((int)s->repq, s->qsock, msg, len) != 0) {
		int err = errno;
		/* The client never has more requests out than the queue holds: it broke the rules. */
		aiod_session_destroy(s, err == EAGAIN ? "reply queue full (client exceeded "
							"session_inflight)"
						      : "reply queue failed");
		return -err;
	}
	return 0;
}

/* ---- events ---- */

static void session_pidfd_ready(struct tevent_context *ev, struct tevent_fd *fde, uint16_t flags,
				void *private_data)
{
	(void)ev;
	(void)fde;
	(void)flags;
	aiod_session_destroy(private_data, "client process exited");
}

/*
 * Requests come in batches: the handler sees everything received so far at
 * once (it reads the change events once per batch, not once per request).
 */
#define SESSION_BATCH 16

void aiod_session_receive(struct aiod_session *s, unsigned budget)
{
	union rtio_msg m[SESSION_BATCH];
	size_t len[SESSION_BATCH];
	bool more = true;

	while (more && budget > 0 && !s->dying && s->connected) {
		unsigned n = 0;

		while (n < SESSION_BATCH && budget > 0) {
			ssize_t got = rtio_queue_recv((int)s->reqq, s->qsock, &m[n], sizeof(m[n]));

			if (got < 0 && errno == EINTR) {
				continue;
			}
			if (got < 0) {
				if (errno != EAGAIN) {
					aiod_session_destroy(s, "request queue failed");
				}
				more = false;
				break;
			}
			len[n++] = (size_t)got;
			budget--;
		}
		if (n > 0) {
			s->ctx->handlers->data(s, m, len, n);
		}
	}
}

static void session_reqq_ready(struct tevent_context *ev, struct tevent_fd *fde, uint16_t flags,
			       void *private_data)
{
	(void)ev;
	(void)fde;
	(void)flags;
	aiod_session_receive(private_data, 256);	/* do not starve other sessions */
}

/*
 * Answer CONNECT with err and end the session. The client learns why (it
 * may stop trying for a while when aiod has no room), rather than seeing the
 * connection drop; whether the answer arrives changes nothing here.
 */
static void session_connect_fail(struct aiod_session *s, struct rtio_connect_rep *rep, int err,
				 const char *why)
{
	rep->hdr.result = err;
	(void)rtio_sock_send(s->sock, rep, sizeof(*rep), NULL, 0);
	aiod_session_destroy(s, why);
}

static void session_connect(struct aiod_session *s, const struct rtio_connect_req *req)
{
	struct aiod_ctx *ctx = s->ctx;
	const struct aiod_config *cfg = ctx->cfg;
	struct rtio_connect_rep rep;
	int fds[RTIO_CONNECT_MAX_FDS];
	unsigned nfds = 3;
	int ret;

	memset(&rep, 0, sizeof(rep));
	rtio_hdr_init(&rep.hdr, RTIO_OP_CONNECT, sizeof(rep), req->hdr.req_id);
	rep.hdr.flags = RTIO_F_REPLY;
	memcpy(s->client, req->client, sizeof(s->client) - 1);
	if (s->uid != 0) {
		/*
		 * The region holds every cached byte of every file: only root, which
		 * can read the files anyway, may map it. allow_users/allow_groups
		 * grant monitoring (STATS, FILE_STATS), not data.
		 */
		session_connect_fail(s, &rep, -EACCES,
				     "CONNECT from a non-root user: data sessions need root");
		return;
	}
	if (s->monitor) {
		/* Accepted beyond max_sessions for monitoring: no room for a session. */
		AIOD_WARN_RL(&ctx->full_log, "refused client pid %d (%s): [global] max_sessions = "
			     "%u reached; it does its I/O itself", (int)s->pid, s->client,
			     cfg->max_sessions);
		session_connect_fail(s, &rep, -EUSERS, "CONNECT refused: max_sessions reached");
		return;
	}
	if ((pid_t)req->pid != s->pid) {
		/* SO_PEERCRED is the truth; a different claim is only worth a note. */
		SESS_WARN(s, "CONNECT claims pid %u", req->pid);
	}
	ret = aiod_queues_create(s, &s->reqq, &s->repq, fds, &s->qsock);
	if (ret != 0) {
		session_connect_fail(s, &rep, ret, "could not create its queues");
		return;
	}
	rep.features = req->features & RTIO_FEAT_ALL;
	if (aiod_qos_fd(ctx) < 0) {
		rep.features &= ~RTIO_FEAT_QOS;
	}
	if (!(rep.features & RTIO_FEAT_HIT) || aiod_watch_fd(ctx) < 0) {
		rep.features &= ~RTIO_FEAT_CONNECT_WATCH;
	}
	fds[2] = (rep.features & RTIO_FEAT_SHM_WRITE) ? ctx->region.fd : ctx->region.ro_fd;
	if (rep.features & RTIO_FEAT_QOS) {
		fds[nfds++] = aiod_qos_fd(ctx);
	}
	if (rep.features & RTIO_FEAT_CONNECT_WATCH) {
		fds[nfds++] = aiod_watch_fd(ctx);	/* polled by the client, never read */
	}
	s->features = rep.features;
	s->reqq_fde = tevent_add_fd(ctx->ev, s, (int)s->reqq, TEVENT_FD_READ, session_reqq_ready, s);
	ret = s->reqq_fde == NULL ? -ENOMEM : ctx->handlers->connected(s);
	if (ret != 0) {
		close(fds[0]);
		close(fds[1]);
		session_connect_fail(s, &rep, ret, "out of memory");
		return;
	}
	rep.session_id = s->id;
	rep.shm_size = ctx->region.size;
	rep.block_size = ctx->region.block_size;
	rep.max_inflight = aiod_session_depth(ctx);
	rep.max_io = cfg->max_io;
	/* the QoS flow table goes to every client that paces (read-write: they charge it) */
	ret = rtio_sock_send(s->sock, &rep, sizeof(rep), fds, nfds);
	close(fds[0]);
	close(fds[1]);
	if (ret != 0) {
		aiod_session_destroy(s, "CONNECT reply failed");
		return;
	}
	s->connected = true;
	TALLOC_FREE(s->handshake_timer);
	ctx->st.sessions_total++;
	SESS_INFO(s, "connected (%s, uid %u)", s->client, (unsigned)s->uid);
}

void aiod_session_protocol_error(struct aiod_session *s, const char *what, int err)
{
	s->ctx->st.protocol_errors++;
	/* A misbehaving client must not flood the log: the first few tell the story. */
	if (s->protocol_errors++ < 5) {
		SESS_WARN(s, "%s: %s", what, strerror(-err));
	} else if (s->protocol_errors == 6) {
		SESS_WARN(s, "more protocol errors; not logging them (see aiodctl stats)");
	}
}

/* Before CONNECT a connection may only connect, monitor (rtio_proto.h) or leave. */
static bool allowed_before_connect(uint16_t opcode)
{
	return opcode == RTIO_OP_CONNECT || opcode == RTIO_OP_DISCONNECT ||
	       rtio_op_is_monitoring(opcode);
}

static void session_handshake_timeout(struct tevent_context *ev, struct tevent_timer *te,
				      struct timeval now, void *private_data)
{
	struct aiod_session *s = private_data;

	(void)ev;
	(void)te;
	(void)now;
	s->handshake_timer = NULL;
	aiod_session_destroy(s, "5 seconds without CONNECT or a request");
}

/* A connection without CONNECT goes after 5 idle seconds: a monitor asking on stays. */
static bool session_idle_restart(struct aiod_session *s)
{
	TALLOC_FREE(s->handshake_timer);
	s->handshake_timer = tevent_add_timer(s->ctx->ev, s, tevent_timeval_current_ofs(5, 0),
					      session_handshake_timeout, s);
	return s->handshake_timer != NULL;
}

static void session_sock_ready(struct tevent_context *ev, struct tevent_fd *fde, uint16_t flags,
			       void *private_data)
{
	struct aiod_session *s = private_data;
	union rtio_msg m;
	int fds[RTIO_SOCK_MAX_FDS];
	unsigned nfds = RTIO_SOCK_MAX_FDS;
	bool fds_lost = false;
	ssize_t n;
	int ret;

	(void)ev;
	(void)fde;
	(void)flags;
	n = rtio_sock_recv_lossy(s->sock, &m, sizeof(m), fds, &nfds, 0, &fds_lost);
	if (n == -ETIMEDOUT || n == -EAGAIN) {
		return;
	}
	if (n == 0) {
		/* An empty message may still carry descriptors (SCM_RIGHTS): they are ours to close. */
		for (unsigned i = 0; i < nfds; i++) {
			close(fds[i]);
		}
		aiod_session_destroy(s, "client closed the connection");
		return;
	}
	if (n < 0) {
		aiod_session_protocol_error(s, "control message", (int)n);
		aiod_session_destroy(s, "unreadable control message");
		return;
	}
	ret = rtio_msg_verify(&m, (size_t)n, 0);
	if (ret != 0 || (s->connected && m.hdr.opcode == RTIO_OP_CONNECT) ||
	    (!s->connected && !allowed_before_connect(m.hdr.opcode))) {
		for (unsigned i = 0; i < nfds; i++) {
			close(fds[i]);
		}
		aiod_session_protocol_error(s, s->connected ? "bad control message" :
					    "not allowed before CONNECT", ret != 0 ? ret : -EPROTO);
		/* The control channel is strict: a client that breaks it goes. */
		aiod_session_destroy(s, "protocol error on the control socket");
		return;
	}
	if (m.hdr.opcode == RTIO_OP_CONNECT) {
		for (unsigned i = 0; i < nfds; i++) {
			close(fds[i]);
		}
		session_connect(s, &m.connect_req);
		return;
	}
	if (!s->connected && !session_idle_restart(s)) {
		for (unsigned i = 0; i < nfds; i++) {
			close(fds[i]);
		}
		aiod_session_destroy(s, "out of memory");
		return;
	}
	s->ctx->handlers->control(s, &m, (size_t)n, fds, nfds, fds_lost ? -EMFILE : 0);
}

int aiod_session_control_reply(struct aiod_session *s, const void *msg, size_t len, int fd)
{
	int ret;

	if (s->dying) {
		return -ENOTCONN;
	}
	ret = rtio_sock_send(s->sock, msg, len, fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0);
	if (ret != 0) {
		aiod_session_destroy(s, "control reply failed");
	}
	return ret;
}

struct aiod_session *aiod_session_create(struct aiod_ctx *ctx, int sock, pid_t pid, uid_t uid,
					 bool monitor)
{
	struct aiod_session *s = talloc_zero(ctx, struct aiod_session);

	if (s == NULL) {
		return NULL;
	}
	s->ctx = ctx;
	s->id = ++ctx->next_session_id;
	s->pid = pid;
	s->uid = uid;
	s->sock = -1;
	s->reqq = s->repq = (mqd_t)-1;
	s->pidfd = -1;
	s->next = ctx->sessions;
	if (ctx->sessions != NULL) {
		ctx->sessions->prev = s;
	}
	ctx->sessions = s;
	s->monitor = monitor;
	if (monitor) {
		ctx->nmonitors++;
	} else {
		ctx->nsessions++;
	}
	talloc_set_destructor(s, session_destructor);
	s->sock = sock;
	/* A monitor holds nothing to give back: the socket closing is news enough. */
	s->pidfd = monitor ? -1 : (int)syscall(SYS_pidfd_open, pid, 0);
	if (s->pidfd < 0 && !monitor) {
		SESS_WARN_RL(&ctx->resource_log, s, "pidfd_open: %s; relying on the socket to see it "
			     "go", strerror(errno));
	} else if (s->pidfd >= 0) {
		s->pidfd_fde = tevent_add_fd(ctx->ev, s, s->pidfd, TEVENT_FD_READ,
					     session_pidfd_ready, s);
	}
	s->sock_fde = tevent_add_fd(ctx->ev, s, sock, TEVENT_FD_READ, session_sock_ready, s);
	s->handshake_timer = tevent_add_timer(ctx->ev, s, tevent_timeval_current_ofs(5, 0),
					      session_handshake_timeout, s);
	/* Made now, so that ending the session later never needs memory. */
	s->reap = tevent_create_immediate(s);
	if (s->sock_fde == NULL || s->handshake_timer == NULL || s->reap == NULL) {
		s->sock = -1;	/* the caller closes it */
		talloc_free(s);
		return NULL;
	}
	return s;
}
