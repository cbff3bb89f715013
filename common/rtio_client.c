/*
 * rtio client library: see rtio_client.h for the contract.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rtio_client.h"
#include "rtio_shm.h"
#include "rtio_sock.h"

enum rtio_io_kind { RTIO_IO_READ, RTIO_IO_WRITE, RTIO_IO_FSYNC, RTIO_IO_PIN, RTIO_IO_WROTE };

struct rtio_client_io {
	struct rtio_client *c;
	struct rtio_client_io *next;	/* in c->queue while waiting for a slot */
	enum rtio_io_kind kind;
	uint64_t file_id;
	uint8_t *buf;			/* NULL once cancelled: never touched again */
	size_t n;
	off_t off;
	size_t done_bytes;
	uint32_t chunk;			/* bytes asked for by the request in flight */
	bool datasync;
	bool in_write1;			/* WRITE0 answered, WRITE1 sent */
	bool cancelled;
	uint64_t req_id;		/* of the message in flight, 0 if none */
	struct rtio_pinned *pin;	/* RTIO_IO_PIN: where the segments go */
	rtio_client_done_fn done;
	void *private_data;
};

struct rtio_client {
	int sock;
	mqd_t reqq;
	mqd_t repq;
	uint8_t *shm;
	size_t shm_size;
	uint32_t session_id;
	uint32_t block_size;
	uint32_t max_inflight;
	uint32_t max_io;
	uint32_t features;		/* RTIO_FEAT_* both ends understand */
	pid_t owner;
	int timeout_ms;
	bool alive;
	uint64_t seq;
	struct rtio_client_io **slots;	/* max_inflight entries, index = req_id & 0xffff */
	unsigned inflight;
	struct rtio_client_io *queue, *queue_tail;
	unsigned pending;
	uint64_t replies;		/* replies handled: progress, for sync waits */
	struct rtio_client_io *starting;	/* being started: finishing it must not call back */
	ssize_t starting_result;
	bool starting_done;
};

#define RTIO_SLOT_BITS 16
#define RTIO_SLOT_MASK ((1u << RTIO_SLOT_BITS) - 1)

static void client_fail_all(struct rtio_client *c, int err);
static int client_drain(struct rtio_client *c, const bool *done);

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void client_close_fds(struct rtio_client *c)
{
	if (c->sock >= 0) {
		close(c->sock);
		c->sock = -1;
	}
	if (c->reqq != (mqd_t)-1) {
		mq_close(c->reqq);
		c->reqq = (mqd_t)-1;
	}
	if (c->repq != (mqd_t)-1) {
		mq_close(c->repq);
		c->repq = (mqd_t)-1;
	}
	if (c->shm != NULL) {
		munmap(c->shm, c->shm_size);
		c->shm = NULL;
	}
}

/* The session is unusable from here on; every pending operation fails with err. */
static void client_kill(struct rtio_client *c, int err)
{
	if (!c->alive) {
		return;
	}
	c->alive = false;
	client_close_fds(c);
	client_fail_all(c, err);
}

static int client_destructor(struct rtio_client *c)
{
	if (c->alive && c->owner == getpid() && c->sock >= 0) {
		struct rtio_hdr h;
		/* Best effort: aiod also notices the socket closing. */
		rtio_hdr_init(&h, RTIO_OP_DISCONNECT, sizeof(h), 0);
		(void)rtio_sock_send(c->sock, &h, sizeof(h), NULL, 0);
	}
	/* Callbacks must not run into a half-freed client: drop them. */
	for (struct rtio_client_io *io = c->queue; io != NULL; io = io->next) {
		io->done = NULL;
	}
	/* A connect that failed half way has max_inflight but no slots yet. */
	for (uint32_t i = 0; c->slots != NULL && i < c->max_inflight; i++) {
		if (c->slots[i] != NULL) {
			c->slots[i]->done = NULL;
		}
	}
	c->alive = false;
	client_close_fds(c);
	return 0;
}

/* One control round trip on the socket. */
static int client_control(struct rtio_client *c, void *req, size_t req_len,
			  const int *send_fds, unsigned n_send_fds,
			  union rtio_msg *rep, int *recv_fds, unsigned n_recv_fds)
{
	struct rtio_hdr *h = req;
	ssize_t got;
	unsigned nfds = n_recv_fds;
	int ret;

	if (!c->alive) {
		return -ENOTCONN;
	}
	h->req_id = ++c->seq;
	ret = rtio_sock_send(c->sock, req, req_len, send_fds, n_send_fds);
	if (ret < 0) {
		client_kill(c, -ENOTCONN);
		return -ENOTCONN;
	}
	got = rtio_sock_recv(c->sock, rep, sizeof(*rep), recv_fds, &nfds, c->timeout_ms);
	if (got < 0) {
		client_kill(c, got == -ETIMEDOUT ? -ETIMEDOUT : -ENOTCONN);
		return got == -ETIMEDOUT ? -ETIMEDOUT : -ENOTCONN;
	}
	if (rtio_msg_verify(rep, (size_t)got, 1) == 0 && rep->hdr.opcode == h->opcode &&
	    rep->hdr.req_id == h->req_id && rep->hdr.result < 0 && nfds == 0) {
		return rep->hdr.result;	/* aiod refused; the session itself is fine */
	}
	if (rtio_msg_verify(rep, (size_t)got, 1) != 0 || rep->hdr.opcode != h->opcode ||
	    rep->hdr.req_id != h->req_id || nfds != n_recv_fds) {
		for (unsigned i = 0; i < nfds; i++) {
			close(recv_fds[i]);
		}
		client_kill(c, -ENOTCONN);
		return -EPROTO;
	}
	return rep->hdr.result;
}

/* A client with nothing but its control socket, connected to aiod. */
static int client_new(TALLOC_CTX *mem_ctx, const char *socket_path, int timeout_ms,
		      struct rtio_client **out)
{
	struct rtio_client *c;
	int ret;

	*out = NULL;
	if (socket_path == NULL || timeout_ms <= 0) {
		return -EINVAL;
	}
	c = talloc_zero(mem_ctx, struct rtio_client);
	if (c == NULL) {
		return -ENOMEM;
	}
	c->sock = -1;
	c->reqq = (mqd_t)-1;
	c->repq = (mqd_t)-1;
	c->owner = getpid();
	c->timeout_ms = timeout_ms;
	talloc_set_destructor(c, client_destructor);

	ret = rtio_sock_connect(socket_path, timeout_ms);
	if (ret < 0) {
		talloc_free(c);
		return ret;
	}
	c->sock = ret;
	c->alive = true;
	*out = c;
	return 0;
}

int rtio_client_connect(TALLOC_CTX *mem_ctx, const char *socket_path, const char *name,
			int timeout_ms, struct rtio_client **out)
{
	return rtio_client_connect_features(mem_ctx, socket_path, name, timeout_ms, RTIO_FEAT_ALL,
					    out);
}

int rtio_client_connect_features(TALLOC_CTX *mem_ctx, const char *socket_path, const char *name,
				 int timeout_ms, uint32_t features, struct rtio_client **out)
{
	struct rtio_client *c;
	struct rtio_connect_req req;
	union rtio_msg rep;
	int fds[3] = { -1, -1, -1 };
	struct mq_attr attr;
	void *map;
	int ret;

	ret = client_new(mem_ctx, socket_path, timeout_ms, &c);
	if (ret < 0) {
		return ret;
	}
	*out = NULL;

	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_CONNECT, sizeof(req), 0);
	req.pid = (uint32_t)c->owner;
	req.features = features & RTIO_FEAT_ALL;
	snprintf(req.client, sizeof(req.client), "%s", name != NULL ? name : "client");
	ret = client_control(c, &req, sizeof(req), NULL, 0, &rep, fds, 3);
	if (ret < 0) {
		if (ret != -ENOTCONN && ret != -ETIMEDOUT && ret != -EPROTO) {
			/* aiod answered with an error (e.g. EACCES): no descriptors came */
		}
		talloc_free(c);
		return ret;
	}
	c->reqq = fds[0];
	c->repq = fds[1];
	c->session_id = rep.connect_rep.session_id;
	c->block_size = rep.connect_rep.block_size;
	c->max_inflight = rep.connect_rep.max_inflight;
	c->max_io = rep.connect_rep.max_io;
	c->features = rep.connect_rep.features & RTIO_FEAT_ALL;
	c->shm_size = rep.connect_rep.shm_size;
	if (c->max_inflight == 0 || c->max_inflight > RTIO_SLOT_MASK || c->max_io == 0 ||
	    c->shm_size < RTIO_SHM_DATA_OFF) {
		close(fds[2]);
		talloc_free(c);
		return -EPROTO;
	}
	map = mmap(NULL, c->shm_size,
		   (c->features & RTIO_FEAT_SHM_WRITE) ? PROT_READ | PROT_WRITE : PROT_READ,
		   MAP_SHARED, fds[2], 0);
	ret = errno;
	close(fds[2]);
	if (map == MAP_FAILED) {
		talloc_free(c);
		return -ret;
	}
	/*
	 * Huge pages where aiod got them: one fault per 2 MiB instead of one per
	 * 64 KiB the first time this process reads a block (harmless otherwise).
	 */
	(void)madvise(map, c->shm_size, MADV_HUGEPAGE);
	c->shm = map;
	if (rtio_shm_check((const struct rtio_shm_header *)c->shm, c->shm_size) != 0) {
		talloc_free(c);
		return -EPROTO;
	}
	c->slots = talloc_zero_array(c, struct rtio_client_io *, c->max_inflight);
	if (c->slots == NULL) {
		talloc_free(c);
		return -ENOMEM;
	}
	/* Both queues are used without blocking: waits go through poll() with the socket. */
	attr.mq_flags = O_NONBLOCK;
	if (mq_setattr(c->repq, &attr, NULL) != 0 || mq_setattr(c->reqq, &attr, NULL) != 0) {
		ret = -errno;
		talloc_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

bool rtio_client_alive(const struct rtio_client *c)
{
	return c != NULL && c->alive && c->owner == getpid();
}

pid_t rtio_client_owner(const struct rtio_client *c)
{
	return c->owner;
}

uint32_t rtio_client_session_id(const struct rtio_client *c)
{
	return c->session_id;
}

void rtio_client_set_timeout(struct rtio_client *c, int timeout_ms)
{
	if (timeout_ms > 0) {
		c->timeout_ms = timeout_ms;
	}
}

bool rtio_client_has_feature(const struct rtio_client *c, uint32_t feature)
{
	return (c->features & feature) == feature;
}

uint32_t rtio_client_max_inflight(const struct rtio_client *c)
{
	return c->max_inflight;
}

uint32_t rtio_client_max_io(const struct rtio_client *c)
{
	return c->max_io;
}

uint32_t rtio_client_block_size(const struct rtio_client *c)
{
	return c->block_size;
}

unsigned rtio_client_pending(const struct rtio_client *c)
{
	return c->pending;
}

void rtio_client_event_fds(const struct rtio_client *c, int fds[2])
{
	fds[0] = c->alive ? (int)c->repq : -1;
	fds[1] = c->alive ? c->sock : -1;
}

const void *rtio_client_shm(const struct rtio_client *c, uint64_t off, size_t len)
{
	if (c->shm == NULL || off > c->shm_size || len > c->shm_size - off) {
		return NULL;
	}
	return c->shm + off;
}

/* ---- control operations ---- */

int rtio_client_open(struct rtio_client *c, int fd, const char *name, uint32_t flags,
		     struct rtio_file *out)
{
	struct rtio_open_req req;
	union rtio_msg rep;
	int ret;

	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_OPEN, sizeof(req), 0);
	req.flags = flags;
	snprintf(req.name, sizeof(req.name), "%s", name != NULL ? name : "");
	ret = client_control(c, &req, sizeof(req), &fd, 1, &rep, NULL, 0);
	if (ret < 0) {
		return ret;
	}
	out->file_id = rep.open_rep.file_id;
	out->dev = rep.open_rep.dev;
	out->ino = rep.open_rep.ino;
	out->stream_class = rep.open_rep.stream_class;
	out->bitrate = rep.open_rep.bitrate;
	return 0;
}

int rtio_client_close(struct rtio_client *c, uint64_t file_id)
{
	struct rtio_close_req req;
	union rtio_msg rep;

	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_CLOSE, sizeof(req), 0);
	req.file_id = file_id;
	return client_control(c, &req, sizeof(req), NULL, 0, &rep, NULL, 0);
}

int rtio_client_ftruncate(struct rtio_client *c, uint64_t file_id, uint64_t length)
{
	struct rtio_ftruncate_req req;
	union rtio_msg rep;

	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_FTRUNCATE, sizeof(req), 0);
	req.file_id = file_id;
	req.length = length;
	return client_control(c, &req, sizeof(req), NULL, 0, &rep, NULL, 0);
}

int rtio_client_unlink(struct rtio_client *c, uint64_t dev, uint64_t ino)
{
	struct rtio_unlink_req req;
	union rtio_msg rep;

	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_UNLINK, sizeof(req), 0);
	req.dev = dev;
	req.ino = ino;
	return client_control(c, &req, sizeof(req), NULL, 0, &rep, NULL, 0);
}

int rtio_client_invalidate(struct rtio_client *c, uint64_t file_id, uint64_t offset,
			   uint64_t length)
{
	struct rtio_invalidate_req req;
	union rtio_msg rep;

	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_INVALIDATE, sizeof(req), 0);
	req.file_id = file_id;
	req.offset = offset;
	req.length = length;
	return client_control(c, &req, sizeof(req), NULL, 0, &rep, NULL, 0);
}

int rtio_client_stats(struct rtio_client *c, struct rtio_stats_rep *out)
{
	struct rtio_hdr req;
	union rtio_msg rep;
	int ret;

	rtio_hdr_init(&req, RTIO_OP_STATS, sizeof(req), 0);
	ret = client_control(c, &req, sizeof(req), NULL, 0, &rep, NULL, 0);
	if (ret < 0) {
		return ret;
	}
	*out = rep.stats_rep;
	return 0;
}

int rtio_client_file_stats(struct rtio_client *c, uint32_t index, struct rtio_file_stats_rep *out)
{
	struct rtio_file_stats_req req;
	union rtio_msg rep;
	int ret;

	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_FILE_STATS, sizeof(req), 0);
	req.index = index;
	ret = client_control(c, &req, sizeof(req), NULL, 0, &rep, NULL, 0);
	if (ret < 0) {
		return ret;
	}
	*out = rep.file_stats_rep;
	out->name[sizeof(out->name) - 1] = '\0';
	return 0;
}

/* ---- data path ---- */

/*
 * Queue a request. The request queue is non-blocking: when it is full we wait
 * for room and watch the control socket at the same time, so a dead aiod is
 * noticed at once (-ENOTCONN) rather than after the timeout.
 */
static int client_send(struct rtio_client *c, const void *msg, size_t len)
{
	int64_t deadline = -1;

	while (mq_send(c->reqq, msg, len, 0) != 0) {
		struct pollfd p[2] = {
			{ .fd = (int)c->reqq, .events = POLLOUT },
			{ .fd = c->sock, .events = POLLIN },
		};
		int64_t left;

		if (errno == EINTR) {
			continue;
		}
		if (errno != EAGAIN) {
			client_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		if (deadline < 0) {
			deadline = now_ms() + c->timeout_ms;
		}
		left = deadline - now_ms();
		if (left <= 0) {
			client_kill(c, -ETIMEDOUT);
			return -ETIMEDOUT;
		}
		if (poll(p, 2, (int)left) < 0 && errno != EINTR) {
			client_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			client_kill(c, -ENOTCONN);	/* aiod closed the session or died */
			return -ENOTCONN;
		}
	}
	return 0;
}

static void io_finish(struct rtio_client_io *io, ssize_t result)
{
	struct rtio_client *c = io->c;
	rtio_client_done_fn done = io->done;
	void *private_data = io->private_data;

	c->pending--;
	if (c->starting == io) {
		/* Failed inside its start function: the caller gets the error instead. */
		c->starting = NULL;
		c->starting_done = true;
		c->starting_result = result;
		done = NULL;
	}
	talloc_free(io);
	if (done != NULL) {
		done(result, private_data);
	}
}

/* Send the next request of io (or finish it). Needs a free slot. */
static void io_step(struct rtio_client_io *io);

static void client_kick_queue(struct rtio_client *c)
{
	while (c->alive && c->queue != NULL && c->inflight < c->max_inflight) {
		struct rtio_client_io *io = c->queue;
		c->queue = io->next;
		if (c->queue == NULL) {
			c->queue_tail = NULL;
		}
		io->next = NULL;
		io_step(io);
	}
}

static void io_enqueue(struct rtio_client_io *io)
{
	struct rtio_client *c = io->c;

	if (c->inflight < c->max_inflight && c->queue == NULL) {
		io_step(io);
		return;
	}
	if (c->queue_tail != NULL) {
		c->queue_tail->next = io;
	} else {
		c->queue = io;
	}
	c->queue_tail = io;
}

static int slot_take(struct rtio_client *c, struct rtio_client_io *io)
{
	for (uint32_t i = 0; i < c->max_inflight; i++) {
		uint32_t s = (uint32_t)((c->seq + i) % c->max_inflight);
		if (c->slots[s] == NULL) {
			c->slots[s] = io;
			c->inflight++;
			c->seq++;
			io->req_id = (c->seq << RTIO_SLOT_BITS) | s;
			return 0;
		}
	}
	return -EBUSY;
}

static void slot_release(struct rtio_client *c, struct rtio_client_io *io)
{
	uint32_t s = (uint32_t)(io->req_id & RTIO_SLOT_MASK);

	if (io->req_id != 0 && s < c->max_inflight && c->slots[s] == io) {
		c->slots[s] = NULL;
		c->inflight--;
	}
	io->req_id = 0;
}

static void io_step(struct rtio_client_io *io)
{
	struct rtio_client *c = io->c;
	struct rtio_io_req req;
	size_t left = io->n - io->done_bytes;
	int ret;

	if (!c->alive) {
		io_finish(io, -ENOTCONN);
		return;
	}
	if (slot_take(c, io) != 0) {
		/* Callers only step with a free slot. */
		io_finish(io, -EBUSY);
		return;
	}
	memset(&req, 0, sizeof(req));
	switch (io->kind) {
	case RTIO_IO_READ:
	case RTIO_IO_PIN:
		io->chunk = (uint32_t)(left < c->max_io ? left : c->max_io);
		rtio_hdr_init(&req.hdr, RTIO_OP_READ0, sizeof(req), io->req_id);
		req.length = io->chunk;
		break;
	case RTIO_IO_WRITE:
		io->chunk = (uint32_t)(left < c->max_io ? left : c->max_io);
		rtio_hdr_init(&req.hdr, RTIO_OP_WRITE0, sizeof(req), io->req_id);
		req.length = io->chunk;
		break;
	case RTIO_IO_FSYNC:
		rtio_hdr_init(&req.hdr, RTIO_OP_FSYNC, sizeof(req), io->req_id);
		req.length = io->datasync ? 1 : 0;
		break;
	case RTIO_IO_WROTE:
		rtio_hdr_init(&req.hdr, RTIO_OP_WROTE, sizeof(req), io->req_id);
		req.length = (uint32_t)io->n;	/* bounded by rtio_client_wrote_start() */
		break;
	}
	req.file_id = io->file_id;
	req.offset = (uint64_t)io->off + io->done_bytes;
	ret = client_send(c, &req, sizeof(req));
	if (ret < 0) {
		/* client_kill already failed every op in a slot, including io */
		return;
	}
}

/* The segments of a reply lie in the region's data part and hold exactly bytes. */
static int io_check_segs(const struct rtio_client *c, const struct rtio_io_rep *rep, size_t bytes)
{
	size_t pos = 0;

	for (uint32_t i = 0; i < rep->nseg && i < RTIO_MAX_SEGS; i++) {
		if (rep->seg[i].shm_off < RTIO_SHM_DATA_OFF || rep->seg[i].shm_off > c->shm_size ||
		    rep->seg[i].len > c->shm_size - rep->seg[i].shm_off) {
			return -EPROTO;
		}
		pos += rep->seg[i].len;
	}
	return pos == bytes ? 0 : -EPROTO;
}

/* Copy between the caller's buffer and the segments of a READ0/WRITE0 reply. */
static int io_copy_segs(struct rtio_client_io *io, const struct rtio_io_rep *rep, size_t bytes)
{
	struct rtio_client *c = io->c;
	size_t pos = 0;

	for (uint32_t i = 0; i < rep->nseg && pos < bytes; i++) {
		size_t len = rep->seg[i].len;
		uint8_t *p;

		if (len > bytes - pos) {
			len = bytes - pos;
		}
		if (rep->seg[i].shm_off > c->shm_size || len > c->shm_size - rep->seg[i].shm_off ||
		    rep->seg[i].shm_off < RTIO_SHM_DATA_OFF) {
			return -EPROTO;
		}
		p = c->shm + rep->seg[i].shm_off;
		if (io->buf != NULL) {
			if (io->kind == RTIO_IO_READ) {
				memcpy(io->buf + io->done_bytes + pos, p, len);
			} else {
				memcpy(p, io->buf + io->done_bytes + pos, len);
			}
		}
		pos += len;
	}
	return pos == bytes ? 0 : -EPROTO;
}

static void io_on_reply(struct rtio_client *c, const union rtio_msg *m)
{
	uint32_t s = (uint32_t)(m->hdr.req_id & RTIO_SLOT_MASK);
	struct rtio_client_io *io;
	struct rtio_release_req rel;
	int32_t res = m->hdr.result;

	if (s >= c->max_inflight || c->slots[s] == NULL || c->slots[s]->req_id != m->hdr.req_id) {
		/* Not ours: aiod is confused or malicious; do not guess. */
		client_kill(c, -ENOTCONN);
		return;
	}
	io = c->slots[s];
	slot_release(c, io);

	switch (m->hdr.opcode) {
	case RTIO_OP_READ0:
		if (io->kind == RTIO_IO_PIN) {
			if (res >= 0 && ((uint32_t)res > io->chunk ||
					 io_check_segs(c, &m->io_rep, (size_t)res) != 0)) {
				break;
			}
			if (res >= 0 && io->pin == NULL) {
				/* Cancelled: give the pinned blocks straight back. */
				struct rtio_release_req drop;
				memset(&drop, 0, sizeof(drop));
				rtio_hdr_init(&drop.hdr, RTIO_OP_READ1, sizeof(drop), 0);
				drop.token = m->io_rep.token;
				(void)client_send(c, &drop, sizeof(drop));
			} else if (res >= 0) {
				io->pin->token = m->io_rep.token;
				io->pin->nseg = m->io_rep.nseg;
				memcpy(io->pin->seg, m->io_rep.seg, sizeof(io->pin->seg));
			}
			io_finish(io, res);
			return;
		}
		if (io->kind != RTIO_IO_READ) {
			break;
		}
		if (res < 0) {
			io_finish(io, io->done_bytes > 0 ? (ssize_t)io->done_bytes : res);
			return;
		}
		if ((uint32_t)res > io->chunk || io_copy_segs(io, &m->io_rep, (size_t)res) != 0) {
			break;
		}
		memset(&rel, 0, sizeof(rel));
		rtio_hdr_init(&rel.hdr, RTIO_OP_READ1, sizeof(rel), 0);
		rel.token = m->io_rep.token;
		if (client_send(c, &rel, sizeof(rel)) < 0) {
			io_finish(io, -ENOTCONN);	/* io was in no slot: fail it here */
			return;
		}
		io->done_bytes += (size_t)res;
		if (io->cancelled || (uint32_t)res < io->chunk || io->done_bytes == io->n) {
			io_finish(io, (ssize_t)io->done_bytes);
			return;
		}
		io_enqueue(io);
		return;
	case RTIO_OP_WRITE0:
		if (io->kind != RTIO_IO_WRITE) {
			break;
		}
		if (res < 0) {
			io_finish(io, io->done_bytes > 0 ? (ssize_t)io->done_bytes : res);
			return;
		}
		if ((uint32_t)res != io->chunk || io_copy_segs(io, &m->io_rep, (size_t)res) != 0) {
			break;
		}
		memset(&rel, 0, sizeof(rel));
		rel.token = m->io_rep.token;
		if (io->cancelled) {
			/* Nothing was copied: give the space back without writing. */
			rtio_hdr_init(&rel.hdr, RTIO_OP_READ1, sizeof(rel), 0);
			(void)client_send(c, &rel, sizeof(rel));
			io_finish(io, -ECANCELED);
			return;
		}
		if (slot_take(c, io) != 0) {
			break;	/* we just released one */
		}
		io->in_write1 = true;
		rtio_hdr_init(&rel.hdr, RTIO_OP_WRITE1, sizeof(rel), io->req_id);
		(void)client_send(c, &rel, sizeof(rel));
		return;
	case RTIO_OP_WRITE1:
		if (io->kind != RTIO_IO_WRITE || !io->in_write1) {
			break;
		}
		io->in_write1 = false;
		if (res < 0) {
			io_finish(io, io->done_bytes > 0 ? (ssize_t)io->done_bytes : res);
			return;
		}
		if ((uint32_t)res > io->chunk) {
			break;
		}
		io->done_bytes += (size_t)res;
		if (io->cancelled || (uint32_t)res < io->chunk || io->done_bytes == io->n) {
			io_finish(io, (ssize_t)io->done_bytes);
			return;
		}
		io_enqueue(io);
		return;
	case RTIO_OP_FSYNC:
		if (io->kind != RTIO_IO_FSYNC) {
			break;
		}
		io_finish(io, res);
		return;
	case RTIO_OP_WROTE:
		if (io->kind != RTIO_IO_WROTE || res > 0) {
			break;
		}
		io_finish(io, res);
		return;
	default:
		break;
	}
	/* A reply that does not fit the request: the session cannot be trusted. */
	io_finish(io, -EPROTO);
	client_kill(c, -ENOTCONN);
}

static void client_fail_all(struct rtio_client *c, int err)
{
	struct rtio_client_io *io;

	for (uint32_t i = 0; c->slots != NULL && i < c->max_inflight; i++) {
		io = c->slots[i];
		if (io != NULL) {
			slot_release(c, io);
			io_finish(io, err);
		}
	}
	while ((io = c->queue) != NULL) {
		c->queue = io->next;
		io_finish(io, err);
	}
	c->queue_tail = NULL;
}

int rtio_client_process(struct rtio_client *c)
{
	if (!c->alive) {
		return -ENOTCONN;
	}
	/* The socket only becomes readable when aiod closes it (or misbehaves). */
	{
		struct pollfd p = { .fd = c->sock, .events = POLLIN };
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
			client_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
	}
	return client_drain(c, NULL);
}

/*
 * Receive and handle replies until the queue is empty, or (sync waits) until
 * *done turns true: then there is no need for the extra, empty receive.
 */
static int client_drain(struct rtio_client *c, const bool *done)
{
	union rtio_msg m;

	for (;;) {
		if (done != NULL && *done) {
			break;
		}
		ssize_t n = mq_receive(c->repq, (char *)&m, sizeof(m), NULL);

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno == EAGAIN) {
				break;
			}
			client_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		if (rtio_msg_verify(&m, (size_t)n, 1) != 0) {
			client_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		c->replies++;
		io_on_reply(c, &m);
		if (!c->alive) {
			return -ENOTCONN;
		}
	}
	client_kick_queue(c);
	return c->alive ? 0 : -ENOTCONN;
}

static int io_start(struct rtio_client *c, enum rtio_io_kind kind, uint64_t file_id, void *buf,
		    size_t n, off_t off, bool datasync, rtio_client_done_fn done, void *private_data,
		    struct rtio_client_io **out)
{
	struct rtio_client_io *io;

	*out = NULL;
	/* No getpid() here: a syscall per I/O. Callers check ownership after fork. */
	if (!c->alive) {
		return -ENOTCONN;
	}
	if (off < 0 || (kind != RTIO_IO_FSYNC && n > (size_t)SSIZE_MAX)) {
		return -EINVAL;
	}
	io = talloc_zero(c, struct rtio_client_io);
	if (io == NULL) {
		return -ENOMEM;
	}
	io->c = c;
	io->kind = kind;
	io->file_id = file_id;
	io->buf = buf;
	io->n = n;
	io->off = off;
	io->datasync = datasync;
	io->done = done;
	io->private_data = private_data;
	c->pending++;
	/* Zero-length I/O also makes the round trip: aiod validates the file id. */
	c->starting = io;
	c->starting_done = false;
	io_enqueue(io);
	if (c->starting_done) {
		/* io is gone already (the send failed and the session died). */
		return c->starting_result < 0 ? (int)c->starting_result : -ENOTCONN;
	}
	c->starting = NULL;
	*out = io;
	return 0;
}

int rtio_client_pread_start(struct rtio_client *c, uint64_t file_id, void *buf, size_t n,
			    off_t off, rtio_client_done_fn done, void *private_data,
			    struct rtio_client_io **out)
{
	return io_start(c, RTIO_IO_READ, file_id, buf, n, off, false, done, private_data, out);
}

int rtio_client_pwrite_start(struct rtio_client *c, uint64_t file_id, const void *buf, size_t n,
			     off_t off, rtio_client_done_fn done, void *private_data,
			     struct rtio_client_io **out)
{
	*out = NULL;
	if (!rtio_client_has_feature(c, RTIO_FEAT_SHM_WRITE)) {
		return -EPERM;	/* the region is mapped read-only: a store would fault */
	}
	/* The library never writes through buf for a write. */
	return io_start(c, RTIO_IO_WRITE, file_id, (void *)(uintptr_t)buf, n, off, false, done,
			private_data, out);
}

int rtio_client_fsync_start(struct rtio_client *c, uint64_t file_id, bool datasync,
			    rtio_client_done_fn done, void *private_data,
			    struct rtio_client_io **out)
{
	return io_start(c, RTIO_IO_FSYNC, file_id, NULL, 0, 0, datasync, done, private_data, out);
}

int rtio_client_wrote_start(struct rtio_client *c, uint64_t file_id, size_t n, off_t off,
			    rtio_client_done_fn done, void *private_data,
			    struct rtio_client_io **out)
{
	*out = NULL;
	if (!rtio_client_has_feature(c, RTIO_FEAT_WROTE)) {
		return -EOPNOTSUPP;
	}
	if (n > UINT32_MAX) {
		return -EINVAL;
	}
	return io_start(c, RTIO_IO_WROTE, file_id, NULL, n, off, false, done, private_data, out);
}

void rtio_client_abort(struct rtio_client *c)
{
	client_kill(c, -ETIMEDOUT);
}

void rtio_client_io_cancel(struct rtio_client_io *io)
{
	struct rtio_client *c;

	if (io == NULL) {
		return;
	}
	c = io->c;
	io->done = NULL;
	io->buf = NULL;
	io->pin = NULL;
	io->cancelled = true;
	/* Still queued locally: nothing reached aiod, just drop it. */
	for (struct rtio_client_io **pp = &c->queue; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == io) {
			*pp = io->next;
			if (c->queue_tail == io) {
				c->queue_tail = NULL;
				for (struct rtio_client_io *q = c->queue; q != NULL; q = q->next) {
					c->queue_tail = q;
				}
			}
			c->pending--;
			talloc_free(io);
			return;
		}
	}
	/* In flight: the reply handler releases aiod's buffers and frees io. */
}

/* ---- synchronous wrappers ---- */

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
	int64_t deadline = now_ms() + c->timeout_ms;
	uint64_t seen = c->replies;

	while (!st->done) {
		struct pollfd p[2] = {
			{ .fd = (int)c->repq, .events = POLLIN },
			{ .fd = c->sock, .events = POLLIN },
		};
		int64_t left = deadline - now_ms();
		int ret;

		if (left <= 0) {
			rtio_client_io_cancel(io);
			client_kill(c, -ETIMEDOUT);
			return -ETIMEDOUT;
		}
		ret = poll(p, 2, (int)left);
		if (ret < 0 && errno != EINTR) {
			rtio_client_io_cancel(io);
			client_kill(c, -ENOTCONN);
			return -ENOTCONN;
		}
		if (ret > 0) {
			if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
				client_kill(c, -ENOTCONN);	/* fails io, st gets the error */
				break;
			}
			(void)client_drain(c, &st->done);
			client_kick_queue(c);
			if (c->replies != seen) {
				/*
				 * aiod is answering, just busy (our request may queue behind
				 * others): only silence counts against the timeout.
				 */
				seen = c->replies;
				deadline = now_ms() + c->timeout_ms;
			}
		}
	}
	return st->result;
}

ssize_t rtio_client_pread(struct rtio_client *c, uint64_t file_id, void *buf, size_t n, off_t off)
{
	struct sync_state st = { false, 0 };
	struct rtio_client_io *io;
	int ret = rtio_client_pread_start(c, file_id, buf, n, off, sync_done, &st, &io);

	if (ret < 0) {
		return ret;
	}
	return st.done ? st.result : sync_wait(c, io, &st);
}

ssize_t rtio_client_pwrite(struct rtio_client *c, uint64_t file_id, const void *buf, size_t n,
			   off_t off)
{
	struct sync_state st = { false, 0 };
	struct rtio_client_io *io;
	int ret = rtio_client_pwrite_start(c, file_id, buf, n, off, sync_done, &st, &io);

	if (ret < 0) {
		return ret;
	}
	return st.done ? st.result : sync_wait(c, io, &st);
}

ssize_t rtio_client_read_pinned(struct rtio_client *c, uint64_t file_id, size_t n, off_t off,
				struct rtio_pinned *p)
{
	struct sync_state st = { false, 0 };
	struct rtio_client_io *io;
	int ret;

	if (n > c->max_io) {
		return -EINVAL;
	}
	memset(p, 0, sizeof(*p));
	ret = io_start(c, RTIO_IO_PIN, file_id, NULL, n, off, false, sync_done, &st, &io);
	if (ret < 0) {
		return ret;
	}
	io->pin = p;
	return st.done ? st.result : sync_wait(c, io, &st);
}

void rtio_client_release(struct rtio_client *c, const struct rtio_pinned *p)
{
	struct rtio_release_req rel;

	if (p->token == 0 || !rtio_client_alive(c)) {
		return;	/* nothing pinned, or aiod released it with the session */
	}
	memset(&rel, 0, sizeof(rel));
	rtio_hdr_init(&rel.hdr, RTIO_OP_READ1, sizeof(rel), 0);
	rel.token = p->token;
	(void)client_send(c, &rel, sizeof(rel));
}

int rtio_client_wrote(struct rtio_client *c, uint64_t file_id, size_t n, off_t off)
{
	struct sync_state st = { false, 0 };
	struct rtio_client_io *io;
	int ret = rtio_client_wrote_start(c, file_id, n, off, sync_done, &st, &io);

	if (ret < 0) {
		return ret;
	}
	return (int)(st.done ? st.result : sync_wait(c, io, &st));
}

int rtio_client_fsync(struct rtio_client *c, uint64_t file_id, bool datasync)
{
	struct sync_state st = { false, 0 };
	struct rtio_client_io *io;
	int ret = rtio_client_fsync_start(c, file_id, datasync, sync_done, &st, &io);

	if (ret < 0) {
		return ret;
	}
	return (int)(st.done ? st.result : sync_wait(c, io, &st));
}

/* ---- monitoring ---- */

int rtio_client_monitor_connect(TALLOC_CTX *mem_ctx, const char *socket_path, int timeout_ms,
				struct rtio_client **out)
{
	/* No CONNECT: aiod answers STATS and FILE_STATS on the bare socket. */
	return client_new(mem_ctx, socket_path, timeout_ms, out);
}
