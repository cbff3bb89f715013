/*
 * rtio client library, synchronous calls: the control operations (one
 * round trip on the socket each) and the blocking data operations (start the
 * asynchronous one, then wait for its reply).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "rtio_client_priv.h"

/* ---- control operations ---- */

/*
 * req is zero but for the operation's own fields; len is the size of its
 * request struct. rep may be NULL when only the result matters.
 */
static int control_call(struct rtio_client *c, unsigned opcode, union rtio_msg *req, size_t len,
			const int *fds, unsigned nfds, union rtio_msg *rep)
{
	union rtio_msg scratch;

	rtio_hdr_init(&req->hdr, opcode, (uint32_t)len, 0);
	return rtio_cl_control(c, req, len, fds, nfds, rep != NULL ? rep : &scratch, NULL, 0);
}

int rtio_client_open(struct rtio_client *c, int fd, const char *name, uint32_t flags,
		     struct rtio_file *out)
{
	union rtio_msg req = { .open_req = { .flags = flags } };
	union rtio_msg rep;
	int ret;

	snprintf(req.open_req.name, sizeof(req.open_req.name), "%s", name != NULL ? name : "");
	ret = control_call(c, RTIO_OP_OPEN, &req, sizeof(req.open_req), &fd, 1, &rep);
	if (ret < 0) {
		return ret;
	}
	out->file_id = rep.open_rep.file_id;
	out->dev = rep.open_rep.dev;
	out->ino = rep.open_rep.ino;
	out->stream_class = rep.open_rep.stream_class;
	out->prebuffer_ms = rep.open_rep.prebuffer_ms;
	out->bitrate = rep.open_rep.bitrate;
	return 0;
}

int rtio_client_close(struct rtio_client *c, uint64_t file_id)
{
	union rtio_msg req = { .close_req = { .file_id = file_id } };

	return control_call(c, RTIO_OP_CLOSE, &req, sizeof(req.close_req), NULL, 0, NULL);
}

int rtio_client_ftruncate(struct rtio_client *c, uint64_t file_id, uint64_t length)
{
	union rtio_msg req = { .ftruncate_req = { .file_id = file_id, .length = length } };

	return control_call(c, RTIO_OP_FTRUNCATE, &req, sizeof(req.ftruncate_req), NULL, 0, NULL);
}

int rtio_client_unlink(struct rtio_client *c, uint64_t dev, uint64_t ino)
{
	union rtio_msg req = { .unlink_req = { .dev = dev, .ino = ino } };

	return control_call(c, RTIO_OP_UNLINK, &req, sizeof(req.unlink_req), NULL, 0, NULL);
}

int rtio_client_invalidate(struct rtio_client *c, uint64_t file_id, uint64_t offset,
			   uint64_t length)
{
	union rtio_msg req = {
		.invalidate_req = { .file_id = file_id, .offset = offset, .length = length },
	};

	return control_call(c, RTIO_OP_INVALIDATE, &req, sizeof(req.invalidate_req), NULL, 0, NULL);
}

int rtio_client_stats_len(struct rtio_client *c, struct rtio_stats_rep *out, size_t *len)
{
	union rtio_msg req = { .hdr = { 0 } };
	union rtio_msg rep;
	size_t got;
	int ret;

	ret = control_call(c, RTIO_OP_STATS, &req, sizeof(req.hdr), NULL, 0, &rep);
	if (ret < 0) {
		return ret;
	}
	/* verified: a whole number of counters, older or newer than ours (rtio_proto.h) */
	got = rep.hdr.length < sizeof(*out) ? rep.hdr.length : sizeof(*out);
	memset(out, 0, sizeof(*out));
	memcpy(out, &rep.stats_rep, got);
	if (len != NULL) {
		*len = got;
	}
	return 0;
}

int rtio_client_stats(struct rtio_client *c, struct rtio_stats_rep *out)
{
	return rtio_client_stats_len(c, out, NULL);
}

int rtio_client_file_stats(struct rtio_client *c, uint32_t index, struct rtio_file_stats_rep *out)
{
	union rtio_msg req = { .file_stats_req = { .index = index } };
	union rtio_msg rep;
	int ret;

	ret = control_call(c, RTIO_OP_FILE_STATS, &req, sizeof(req.file_stats_req), NULL, 0, &rep);
	if (ret < 0) {
		return ret;
	}
	*out = rep.file_stats_rep;
	out->name[sizeof(out->name) - 1] = '\0';	/* aiod's string, our terminator */
	return 0;
}

int rtio_client_session_stats(struct rtio_client *c, uint32_t index,
			      struct rtio_session_stats_rep *out)
{
	union rtio_msg req = { .index_req = { .index = index } };
	union rtio_msg rep;
	int ret;

	ret = control_call(c, RTIO_OP_SESSION_STATS, &req, sizeof(req.index_req), NULL, 0, &rep);
	if (ret < 0) {
		return ret;
	}
	*out = rep.session_stats_rep;
	out->client[sizeof(out->client) - 1] = '\0';
	return 0;
}

int rtio_client_info(struct rtio_client *c, uint32_t index, struct rtio_info_rep *out)
{
	union rtio_msg req = { .index_req = { .index = index } };
	union rtio_msg rep;
	int ret;

	ret = control_call(c, RTIO_OP_INFO, &req, sizeof(req.index_req), NULL, 0, &rep);
	if (ret < 0) {
		return ret;
	}
	*out = rep.info_rep;
	out->version[sizeof(out->version) - 1] = '\0';
	out->class_name[sizeof(out->class_name) - 1] = '\0';
	out->class_match[sizeof(out->class_match) - 1] = '\0';
	return 0;
}

int rtio_client_qos_bind(struct rtio_client *c, const struct rtio_qos_bind_req *who,
			 struct rtio_qos_bind_rep *out)
{
	union rtio_msg req = { .qos_bind_req = *who };
	union rtio_msg rep;
	int ret;

	ret = control_call(c, RTIO_OP_QOS_BIND, &req, sizeof(req.qos_bind_req), NULL, 0, &rep);
	if (ret < 0) {
		return ret;
	}
	*out = rep.qos_bind_rep;
	out->rule[sizeof(out->rule) - 1] = '\0';
	return 0;
}

int rtio_client_qos_policy(struct rtio_client *c, const struct rtio_qos_bind_req *who,
			   struct rtio_qos_policy_rep *out)
{
	union rtio_msg req = { .qos_policy_req = *who };
	union rtio_msg rep;
	int ret;

	/* an aiod that does not know the opcode would drop the whole session */
	if (!(c->features & RTIO_FEAT_QOS_POLICY)) {
		return -EOPNOTSUPP;
	}
	ret = control_call(c, RTIO_OP_QOS_POLICY, &req, sizeof(req.qos_policy_req), NULL, 0, &rep);
	if (ret < 0) {
		return ret;
	}
	*out = rep.qos_policy_rep;
	out->rule[sizeof(out->rule) - 1] = '\0';
	return 0;
}

int rtio_client_qos_list(struct rtio_client *c, uint32_t index, struct rtio_qos_list_rep *out)
{
	union rtio_msg req = { .qos_list_req = { .index = index } };
	union rtio_msg rep;
	int ret;

	ret = control_call(c, RTIO_OP_QOS_LIST, &req, sizeof(req.qos_list_req), NULL, 0, &rep);
	if (ret < 0) {
		return ret;
	}
	*out = rep.qos_list_rep;
	out->rule[sizeof(out->rule) - 1] = '\0';
	out->principal[sizeof(out->principal) - 1] = '\0';
	return 0;
}

/* ---- synchronous data operations ---- */

struct sync_state {
	bool done;
	ssize_t result;
};

static void sync_done(ssize_t result, void *private_data)
{
	struct sync_state *st = private_data;

	st->done = true;
	st->result = result;
}

static ssize_t sync_wait(struct rtio_client *c, struct rtio_client_io *io, struct sync_state *st)
{
	int64_t deadline = rtio_cl_now_ms() + c->timeout_ms;
	uint64_t seen = c->replies;

	while (!st->done) {
		struct pollfd p[2] = {
			{ .fd = (int)c->repq, .events = POLLIN },
			{ .fd = c->sock, .events = POLLIN },
		};
		int64_t left = deadline - rtio_cl_now_ms();
		int ret;

		if (left <= 0) {
			rtio_client_io_cancel(io);
			rtio_cl_kill(c, -ETIMEDOUT);
			return -ETIMEDOUT;
		}
		ret = poll(p, 2, (int)left);
		if (ret < 0 && errno != EINTR) {
			rtio_client_io_cancel(io);
			rtio_cl_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		if (ret > 0) {
			if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
				rtio_cl_kill(c, -ENOTCONN);	/* fails io, st gets the error */
				break;
			}
			/* A dead session shows in st (every operation failed), not here. */
			(void)rtio_cl_drain(c, &st->done);
			rtio_cl_kick_queue(c);
			if (c->replies != seen) {
				/*
				 * aiod is answering, just busy (our request may queue behind
				 * others): only silence counts against the timeout.
				 */
				seen = c->replies;
				deadline = rtio_cl_now_ms() + c->timeout_ms;
			}
		}
	}
	return st->result;
}

/* Start the operation a describes and wait for it. */
static ssize_t sync_io(struct rtio_client *c, const struct rtio_io_args *a)
{
	struct sync_state st = { false, 0 };
	struct rtio_client_io *io;
	int ret = rtio_cl_io_start(c, a, sync_done, &st, &io);

	if (ret < 0) {
		return ret;
	}
	return st.done ? st.result : sync_wait(c, io, &st);
}

ssize_t rtio_client_pread(struct rtio_client *c, uint64_t file_id, void *buf, size_t n, off_t off)
{
	const struct rtio_io_args a = {
		.kind = RTIO_IO_READ, .file_id = file_id, .buf = buf, .n = n, .off = off,
	};

	return sync_io(c, &a);
}

ssize_t rtio_client_pwrite(struct rtio_client *c, uint64_t file_id, const void *buf, size_t n,
			   off_t off)
{
	/* The library never writes through buf for a write. */
	const struct rtio_io_args a = {
		.kind = RTIO_IO_WRITE, .file_id = file_id, .buf = (void *)(uintptr_t)buf, .n = n,
		.off = off,
	};

	return sync_io(c, &a);
}

int rtio_client_fsync(struct rtio_client *c, uint64_t file_id, bool datasync)
{
	const struct rtio_io_args a = {
		.kind = RTIO_IO_FSYNC, .file_id = file_id, .datasync = datasync,
	};

	return (int)sync_io(c, &a);
}

int rtio_client_wrote(struct rtio_client *c, uint64_t file_id, size_t n, off_t off)
{
	const struct rtio_io_args a = {
		.kind = RTIO_IO_WROTE, .file_id = file_id, .n = n, .off = off,
	};

	return (int)sync_io(c, &a);
}

ssize_t rtio_client_read_pinned(struct rtio_client *c, uint64_t file_id, size_t n, off_t off,
				struct rtio_pinned *p)
{
	const struct rtio_io_args a = {
		.kind = RTIO_IO_PIN, .file_id = file_id, .n = n, .off = off, .pin = p,
	};

	/* token 0 until a reply fills it: rtio_client_release() of a failed read does nothing. */
	memset(p, 0, sizeof(*p));
	return sync_io(c, &a);
}

void rtio_client_release(struct rtio_client *c, const struct rtio_pinned *p)
{
	if (p->token == 0 || !rtio_client_alive(c)) {
		return;	/* nothing pinned, or aiod released it with the session */
	}
	/* A failure killed the session, and aiod releases a dead session's pins. */
	(void)rtio_cl_send_release(c, p->token);
}
