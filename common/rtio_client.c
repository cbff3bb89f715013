/*
 * rtio client library, the session: connect (with or without CONNECT),
 * teardown, what was negotiated, and the control round trip on the socket.
 * See rtio_client.h for the contract, rtio_client_priv.h for the other files.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rtio_client_priv.h"
#include "rtio_queue.h"
#include "rtio_shm.h"
#include "rtio_sock.h"

int64_t rtio_cl_now_ms(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC exists on every Linux aiod runs on: it cannot fail here. */
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Nothing to do about a failing close/munmap of our own descriptors: the
 * session is going away either way, and aiod notices the socket closing.
 */
static void client_close_fds(struct rtio_client *c)
{
	if (c->sock >= 0) {
		(void)close(c->sock);
		c->sock = -1;
	}
	/* mq_close is close() on Linux: right for a socket pair's ends too */
	if (c->reqq != (mqd_t)-1) {
		(void)mq_close(c->reqq);
		c->reqq = (mqd_t)-1;
	}
	if (c->repq != (mqd_t)-1) {
		(void)mq_close(c->repq);
		c->repq = (mqd_t)-1;
	}
	if (c->shm != NULL) {
		(void)munmap(c->shm, c->shm_size);
		c->shm = NULL;
	}
	if (c->watch_fd >= 0) {
		(void)close(c->watch_fd);
		c->watch_fd = -1;
	}
	if (c->qos_fd >= 0) {
		(void)close(c->qos_fd);
		c->qos_fd = -1;
	}
}

void rtio_cl_kill(struct rtio_client *c, int err)
{
	if (!c->alive) {
		return;
	}
	c->alive = false;
	client_close_fds(c);
	rtio_cl_fail_all(c, err);
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
	rtio_cl_forget_callbacks(c);
	c->alive = false;
	client_close_fds(c);
	return 0;
}

static void close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		(void)close(fds[i]);	/* unused descriptors aiod sent: only release them */
	}
}

int rtio_cl_control(struct rtio_client *c, void *req, size_t req_len, const int *send_fds,
		    unsigned n_send_fds, union rtio_msg *rep, int *recv_fds, unsigned n_recv_fds)
{
	/* room for a newer aiod's longer STATS reply (rtio_proto.h); *rep gets what fits */
	union {
		union rtio_msg m;
		uint8_t raw[sizeof(union rtio_msg) + RTIO_STATS_REP_ROOM];
	} in;
	struct rtio_hdr *h = req;
	ssize_t got;
	unsigned nfds = n_recv_fds;
	bool matches;
	int ret;

	if (!c->alive) {
		return -ENOTCONN;
	}
	h->req_id = ++c->seq;
	ret = rtio_sock_send(c->sock, req, req_len, send_fds, n_send_fds);
	if (ret < 0) {
		rtio_cl_kill(c, -ENOTCONN);
		return -ENOTCONN;
	}
	got = rtio_sock_recv(c->sock, &in, sizeof(in), recv_fds, &nfds, c->timeout_ms);
	if (got < 0) {
		ret = got == -ETIMEDOUT ? -ETIMEDOUT : -ENOTCONN;
		rtio_cl_kill(c, ret);
		return ret;
	}
	matches = rtio_msg_verify(&in, (size_t)got, 1) == 0 && in.m.hdr.opcode == h->opcode &&
		  in.m.hdr.req_id == h->req_id;
	memcpy(rep, &in, (size_t)got < sizeof(*rep) ? (size_t)got : sizeof(*rep));
	if (matches && rep->hdr.result < 0 && nfds == 0) {
		return rep->hdr.result;	/* aiod refused; the session itself is fine */
	}
	/* CONNECT: how many descriptors come depends on what was granted */
	if (matches && h->opcode == RTIO_OP_CONNECT && n_recv_fds == RTIO_CONNECT_MAX_FDS &&
	    nfds == rtio_connect_rep_nfds(rep->connect_rep.features)) {
		return rep->hdr.result;
	}
	if (!matches || nfds != n_recv_fds) {
		close_fds(recv_fds, nfds);
		rtio_cl_kill(c, -ENOTCONN);
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
	c->qos_fd = -1;
	c->watch_fd = -1;
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

/*
 * Reads copied from the cache need aiod's inotify descriptor to see writes
 * aiod has not applied yet (rtio_client_cached.c): without it, no such reads.
 */
static void client_get_watch_fd(struct rtio_client *c)
{
	struct rtio_hdr req;
	union rtio_msg rep;
	int fd = -1;

	rtio_hdr_init(&req, RTIO_OP_WATCH_FD, sizeof(req), 0);
	if (rtio_cl_control(c, &req, sizeof(req), NULL, 0, &rep, &fd, 1) == 0 && fd >= 0) {
		c->watch_fd = fd;
		return;
	}
	if (fd >= 0) {
		(void)close(fd);
	}
	c->features &= ~RTIO_FEAT_HIT;
}

_Static_assert(RTIO_CONNECT_MAX_FDS <= RTIO_SOCK_MAX_FDS, "a CONNECT reply fits rtio_sock_recv");

int rtio_client_connect_features(TALLOC_CTX *mem_ctx, const char *socket_path, const char *name,
				 int timeout_ms, uint32_t features, struct rtio_client **out)
{
	struct rtio_client *c;
	struct rtio_connect_req req;
	union rtio_msg rep;
	int fds[RTIO_CONNECT_MAX_FDS] = { -1, -1, -1, -1, -1 };
	unsigned next_fd = 3;
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
	ret = rtio_cl_control(c, &req, sizeof(req), NULL, 0, &rep, fds, RTIO_CONNECT_MAX_FDS);
	if (ret < 0) {
		/* a refusal (e.g. -EUSERS) carries no descriptors; a bad reply had its closed */
		talloc_free(c);
		return ret;
	}
	/* The destructor closes the queues from here on, the region descriptor is ours. */
	c->reqq = fds[0];
	c->repq = fds[1];
	c->session_id = rep.connect_rep.session_id;
	c->block_size = rep.connect_rep.block_size;
	c->max_inflight = rep.connect_rep.max_inflight;
	c->max_io = rep.connect_rep.max_io;
	c->features = rep.connect_rep.features & RTIO_FEAT_ALL;
	c->shm_size = rep.connect_rep.shm_size;
	/* The QoS flow table stays open: whoever paces maps it itself (rtio_client_qos_fd). */
	c->qos_fd = (c->features & RTIO_FEAT_QOS) ? fds[next_fd++] : -1;
	/* Polled, never read: reading would take aiod's events (rtio_client_cached.c). */
	c->watch_fd = (c->features & RTIO_FEAT_CONNECT_WATCH) ? fds[next_fd++] : -1;
	if (c->max_inflight == 0 || c->max_inflight > RTIO_SLOT_MASK || c->max_io == 0 ||
	    c->shm_size < RTIO_SHM_DIR_OFF) {
		(void)close(fds[2]);
		talloc_free(c);
		return -EPROTO;
	}
	map = mmap(NULL, c->shm_size,
		   (c->features & RTIO_FEAT_SHM_WRITE) ? PROT_READ | PROT_WRITE : PROT_READ,
		   MAP_SHARED, fds[2], 0);
	ret = errno;
	(void)close(fds[2]);	/* the mapping, if any, keeps the region */
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
	c->data_off = ((const struct rtio_shm_header *)c->shm)->data_off;
	c->slots = talloc_zero_array(c, struct rtio_client_io *, c->max_inflight);
	if (c->slots == NULL) {
		talloc_free(c);
		return -ENOMEM;
	}
	/*
	 * Both queues are used without blocking: waits go through poll() with the
	 * socket. A socket pair's sends and receives say so on each call.
	 */
	c->qsock = rtio_queue_is_socket((int)c->reqq);
	attr.mq_flags = O_NONBLOCK;
	if (!c->qsock &&
	    (mq_setattr(c->repq, &attr, NULL) != 0 || mq_setattr(c->reqq, &attr, NULL) != 0)) {
		ret = -errno;
		talloc_free(c);
		return ret;
	}
	if ((c->features & RTIO_FEAT_HIT) && c->watch_fd < 0) {
		client_get_watch_fd(c);	/* an aiod that does not send it with CONNECT */
	}
	*out = c;
	return 0;
}

int rtio_client_monitor_connect(TALLOC_CTX *mem_ctx, const char *socket_path, int timeout_ms,
				struct rtio_client **out)
{
	/* No CONNECT: aiod answers STATS and FILE_STATS on the bare socket. */
	return client_new(mem_ctx, socket_path, timeout_ms, out);
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

int rtio_client_qos_fd(const struct rtio_client *c)
{
	return c->alive ? c->qos_fd : -1;
}

bool rtio_client_uses_socket_queue(const struct rtio_client *c)
{
	return c->qsock;
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
