/*
 * Sessions are aiod's transport: one per client process (smbd), with its
 * control socket, its request/reply message queues and a pidfd. A session
 * moves messages in and replies out and tells when it ended; it knows
 * nothing of files, blocks or requests (its CONNECT reply hands over the
 * shared region, the QoS flow table and aiod's inotify descriptor, only as
 * descriptors). What arrives goes to the handlers
 * in ctx->handlers (handlers.c), which keep their own per-session state
 * (peer.c) as the session's owner.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_SESSION_H
#define AIOD_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <mqueue.h>
#include <stdint.h>
#include <sys/types.h>

struct aiod_ctx;
struct aiod_session;
union rtio_msg;

/* Where a session delivers what it receives; every entry is required. */
struct aiod_session_handlers {
	/* CONNECT succeeded so far: set up the owner; -errno refuses the CONNECT. */
	int (*connected)(struct aiod_session *s);
	/*
	 * One control message with the nfds descriptors it carried (the handler
	 * owns them); fd_err is -EMFILE when some could not be taken.
	 */
	void (*control)(struct aiod_session *s, const union rtio_msg *m, size_t len, int *fds,
			unsigned nfds, int fd_err);
	/* A batch of n messages from the request queue, in arrival order. */
	void (*data)(struct aiod_session *s, const union rtio_msg *m, const size_t *len,
		     unsigned n);
	/* The session ends (once, if connected was called): give back what its owner holds. */
	void (*closed)(struct aiod_session *s);
};

/*
 * An authenticated connection: the session waits for CONNECT (5 s idle). A
 * monitor connection, accepted beyond max_sessions, answers STATS and
 * FILE_STATS and refuses CONNECT (EUSERS).
 */
#define AIOD_MONITOR_SLOTS 4
struct aiod_session *aiod_session_create(struct aiod_ctx *ctx, int sock, pid_t pid, uid_t uid,
					 bool monitor);
/* End s: resources go now, memory after the handler that called this returned. */
void aiod_session_destroy(struct aiod_session *s, const char *why);
/*
 * Hand up to budget messages waiting on s's request queue to the data
 * handler now (nothing before CONNECT); stops when a handler ended s.
 */
void aiod_session_receive(struct aiod_session *s, unsigned budget);
/* A reply on the reply queue; a full queue ends the session. */
int aiod_session_reply(struct aiod_session *s, const void *msg, size_t len);
/* Send a control-socket reply, with descriptor fd unless it is -1; a failure ends the session. */
int aiod_session_control_reply(struct aiod_session *s, const void *msg, size_t len, int fd);
/* Count a malformed message from s and log it (rate limited). */
void aiod_session_protocol_error(struct aiod_session *s, const char *what, int err);

/* The handlers' state for s (peer.c), NULL before connected. */
void aiod_session_set_owner(struct aiod_session *s, void *owner);
void *aiod_session_owner(const struct aiod_session *s);

struct aiod_ctx *aiod_session_ctx(const struct aiod_session *s);
uint32_t aiod_session_id(const struct aiod_session *s);
pid_t aiod_session_pid(const struct aiod_session *s);
/* The client's uid (SO_PEERCRED) and the name it gave at CONNECT, for monitoring. */
uid_t aiod_session_uid(const struct aiod_session *s);
const char *aiod_session_client(const struct aiod_session *s);
/* RTIO_FEAT_* the session was granted at CONNECT. */
uint32_t aiod_session_features(const struct aiod_session *s);
bool aiod_session_connected(const struct aiod_session *s);
bool aiod_session_dying(const struct aiod_session *s);
/* Whether the client process has exited (its pidfd says so). */
bool aiod_session_client_exited(const struct aiod_session *s);
int aiod_session_sock(const struct aiod_session *s);
struct aiod_session *aiod_session_next(struct aiod_session *s);
/* queues.c: requests one session may have outstanding (session_inflight, cut to the queue limit). */
uint32_t aiod_session_depth(const struct aiod_ctx *ctx);
/* queues.c: messages the request queue holds (the depth and room for the READ1s). */
uint32_t aiod_session_req_depth(const struct aiod_ctx *ctx);
/*
 * s's queue pair, the client's ends in fds; 0 or -errno (logged, naming the
 * failed step). *sock: the kernel had no message queues left and the pair is
 * a socket pair (common/rtio_queue.h; logged, counted in the context).
 */
int aiod_queues_create(struct aiod_session *s, mqd_t *reqq, mqd_t *repq, int fds[2], bool *sock);

#endif
