/*
 * A session's pair of POSIX message queues: requests in, replies out. Their
 * depth is the session's request slots (session_inflight, cut to what the
 * kernel allows without CAP_SYS_RESOURCE); their names are random and go at
 * once, so only the descriptors passed over the control socket reach them.
 * When the kernel will not give aiod more queues (no CAP_SYS_RESOURCE), the
 * session gets a socket pair instead (common/rtio_queue.h says why).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aiod.h"
#include "session.h"
#include "log.h"

/*
 * Requests one session may have outstanding: the configured value, cut to what
 * the kernel lets us put in a queue (fs.mqueue.msg_max, unless aiod may
 * exceed it with CAP_SYS_RESOURCE).
 */
uint32_t aiod_session_depth(const struct aiod_ctx *ctx)
{
	uint32_t d = ctx->cfg->session_inflight;

	if (ctx->mq_msg_max > 0 && d > ctx->mq_msg_max) {
		d = ctx->mq_msg_max;
	}
	return d;
}

uint32_t aiod_session_req_depth(const struct aiod_ctx *ctx)
{
	/* Room for the READ1s that follow replies; a full queue only makes the client wait. */
	uint32_t d = aiod_session_depth(ctx) + 4;

	if (ctx->mq_msg_max > 0 && d > ctx->mq_msg_max) {
		d = ctx->mq_msg_max;
	}
	return d;
}

static int dup_cloexec(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

static void close_queue(mqd_t *q)
{
	if (*q != (mqd_t)-1) {
		(void)mq_close(*q);
		*q = (mqd_t)-1;
	}
}

static void close_fds(int fds[2])
{
	for (int i = 0; i < 2; i++) {
		if (fds[i] >= 0) {
			close(fds[i]);
		}
		fds[i] = -1;
	}
}

/* The pair of POSIX message queues; on failure *step says which step failed. */
static int mq_pair(const struct aiod_ctx *ctx, uint32_t id, mqd_t *reqq, mqd_t *repq,
		   int fds[2], const char **step)
{
	uint32_t depth = aiod_session_depth(ctx);
	uint32_t req_depth = aiod_session_req_depth(ctx);
	struct mq_attr req_attr, rep_attr;
	char req_name[64], rep_name[64];
	uint64_t rnd = 0;
	int ret = 0;

	memset(&req_attr, 0, sizeof(req_attr));
	memset(&rep_attr, 0, sizeof(rep_attr));
	req_attr.mq_maxmsg = req_depth;
	req_attr.mq_msgsize = RTIO_MQ_MSGSIZE;
	rep_attr.mq_maxmsg = depth;
	rep_attr.mq_msgsize = RTIO_MQ_MSGSIZE;

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		rnd = aiod_now_ns();
	}
	snprintf(req_name, sizeof(req_name), "/rtio.%d.%u.%016llx.req", (int)getpid(), id,
		 (unsigned long long)rnd);
	snprintf(rep_name, sizeof(rep_name), "/rtio.%d.%u.%016llx.rep", (int)getpid(), id,
		 (unsigned long long)rnd);
	fds[0] = fds[1] = -1;
	*reqq = mq_open(req_name, O_CREAT | O_EXCL | O_RDONLY | O_NONBLOCK, 0600, &req_attr);
	if (*reqq == (mqd_t)-1) {
		*step = "creating request queue";
		return -errno;
	}
	*repq = mq_open(rep_name, O_CREAT | O_EXCL | O_WRONLY | O_NONBLOCK, 0600, &rep_attr);
	if (*repq == (mqd_t)-1) {
		*step = "creating reply queue";
		ret = -errno;
		goto out;
	}
	fds[0] = mq_open(req_name, O_WRONLY);
	fds[1] = mq_open(rep_name, O_RDONLY | O_NONBLOCK);
	if (fds[0] < 0 || fds[1] < 0) {
		*step = "opening client ends of the queues";
		ret = -errno;
	}
out:
	/* Names go right away: only descriptors passed over the socket reach the queues. */
	(void)mq_unlink(req_name);
	(void)mq_unlink(rep_name);
	if (ret != 0) {
		/* nothing stays open: the caller may try a socket pair instead */
		close_fds(fds);
		close_queue(reqq);
		close_queue(repq);
	}
	return ret;
}

/*
 * A SOCK_SEQPACKET socket pair standing in for both queues (rtio_queue.h):
 * aiod's end receives requests and sends replies, the client's end the
 * reverse; each side holds its end twice so the session code keeps one
 * descriptor per direction. Replies are small and a session never has more
 * than its depth of them out, far below a socket's send buffer.
 */
static int sock_pair(mqd_t *reqq, mqd_t *repq, int fds[2], const char **step)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) {
		*step = "creating a socket pair for its queues";
		return -errno;
	}
	*reqq = sv[0];
	*repq = dup_cloexec(sv[0]);
	fds[0] = sv[1];
	fds[1] = dup_cloexec(sv[1]);
	if (*repq < 0 || fds[1] < 0) {
		int err = errno;

		if (*repq >= 0) {
			close(*repq);
		}
		close(sv[0]);
		close_fds(fds);
		*reqq = *repq = (mqd_t)-1;
		*step = "duplicating a socket pair's ends";
		return -err;
	}
	return 0;
}

/* What mq_open says when the kernel's message-queue allowance is used up. */
static bool mq_exhausted(int err)
{
	/* EMFILE: RLIMIT_MSGQUEUE; ENOSPC: fs.mqueue.queues_max; ENOMEM: no memory for it */
	return err == -EMFILE || err == -ENOSPC || err == -ENOMEM;
}

int aiod_queues_create(struct aiod_session *s, mqd_t *reqq, mqd_t *repq, int fds[2], bool *sock)
{
	struct aiod_ctx *ctx = aiod_session_ctx(s);
	const char *step = NULL;
	int ret = mq_pair(ctx, aiod_session_id(s), reqq, repq, fds, &step);

	*sock = false;
	if (ret != 0 && mq_exhausted(ret)) {
		ret = sock_pair(reqq, repq, fds, &step);
		*sock = ret == 0;
	}
	if (ret != 0) {
		SESS_WARN_RL(&ctx->resource_log, s, "%s: %s", step, strerror(-ret));
	} else if (*sock) {
		ctx->nsessions_socketq++;
		SESS_WARN_RL(&ctx->socketq_log, s, "no message queues left (RLIMIT_MSGQUEUE or "
			     "fs.mqueue.queues_max; aiod lacks CAP_SYS_RESOURCE): this and %u other "
			     "sessions use a socket pair instead", ctx->nsessions_socketq - 1);
	}
	return ret;
}
