/*
 * The fixture of the request-layer tests (test_dataplane.c,
 * test_passthrough.c): an aiod context with a fake engine (fake_engine.c),
 * a real session (socketpair, real message queues, the real CONNECT and
 * OPEN) whose requests go to aiod_data_handle() directly and whose replies
 * are read from the reply queue, and one file "clip" of 2 * NBLOCKS blocks
 * of pattern() bytes, registered as f->file_id.
 *
 * The including test defines BS (block size) and NBLOCKS (cache blocks)
 * first, and includes cmocka.h and what this needs before.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DATAPLANE_FIXTURE_H
#define DATAPLANE_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aiod.h"
#include "fake_engine.h"
#include "unit_ctx.h"
#include "rtio_shm.h"
#include "rtio_sock.h"
#include "region.h"
#include "files.h"
#include "requests.h"
#include "handlers.h"
#include "peer.h"
#include "session.h"

#if !defined(BS) || !defined(NBLOCKS)
#error "define BS and NBLOCKS before including dataplane_fixture.h"
#endif

struct fixture {
	struct aiod_ctx *ctx;
	struct aiod_session *s;
	char dir[64];
	int sock;		/* the client's end */
	mqd_t repq;		/* the client's end of the reply queue */
	int region_fd;
	int file_fd;
	uint64_t file_id;
	uint64_t next_req;
};

static inline uint8_t pattern(uint64_t off)
{
	return (uint8_t)(off * 13 + off / BS);
}

/* One control round trip, handled by aiod's loop; the reply's result. */
static inline int control(struct fixture *f, void *msg, size_t len, int *fd,
			  union rtio_msg *rep, int *fds, unsigned nfds)
{
	struct pollfd pfd = { .fd = f->sock, .events = POLLIN };
	unsigned got = nfds;

	assert_int_equal(rtio_sock_send(f->sock, msg, len, fd, fd != NULL ? 1 : 0), 0);
	/* Other events may come first (the watch sees the tests' unlinks). */
	for (int i = 0; i < 16 && poll(&pfd, 1, 0) == 0; i++) {
		assert_int_equal(tevent_loop_once(f->ctx->ev), 0);
	}
	assert_true(rtio_sock_recv(f->sock, rep, sizeof(*rep), fds, &got, 1000) > 0);
	return rep->hdr.result;
}

static inline void send_io_to(struct fixture *f, uint64_t file_id, uint16_t op,
			      uint64_t off, uint32_t len)
{
	struct rtio_io_req m;

	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, op, sizeof(m), ++f->next_req);
	m.file_id = file_id;
	m.offset = off;
	m.length = len;
	aiod_data_handle(f->ctx, f->s, (const union rtio_msg *)&m, sizeof(m));
}

static inline void send_io(struct fixture *f, uint16_t op, uint64_t off, uint32_t len)
{
	send_io_to(f, f->file_id, op, off, len);
}

static inline void send_release(struct fixture *f, uint64_t token)
{
	struct rtio_release_req m;

	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, RTIO_OP_READ1, sizeof(m), ++f->next_req);
	m.token = token;
	aiod_data_handle(f->ctx, f->s, (const union rtio_msg *)&m, sizeof(m));
}

/* The next reply on the reply queue; false when there is none. */
static inline bool reply(struct fixture *f, union rtio_msg *m)
{
	return mq_receive(f->repq, (char *)m, sizeof(*m), NULL) > 0;
}

/* The reply's segments hold the file's bytes [off, off + len). */
static inline void check_bytes(struct fixture *f, const struct rtio_io_rep *r, uint64_t off,
			       uint32_t len)
{
	uint64_t pos = off;

	assert_int_equal(r->hdr.result, (int32_t)len);
	for (uint32_t i = 0; i < r->nseg; i++) {
		const uint8_t *p = f->ctx->region.base + r->seg[i].shm_off;

		for (uint32_t k = 0; k < r->seg[i].len; k += 4093) {
			assert_int_equal(p[k], pattern(pos + k));
		}
		pos += r->seg[i].len;
	}
	assert_int_equal(pos, off + len);
}

static inline int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct aiod_ctx *ctx;
	struct rtio_connect_req cr;
	struct rtio_open_req op;
	union rtio_msg rep;
	uint8_t *data = malloc(NBLOCKS * 2 * BS);
	char path[128];
	int sv[2], fds[RTIO_CONNECT_MAX_FDS] = { -1, -1, -1, -1, -1 };

	assert_non_null(f);
	assert_non_null(data);
	snprintf(f->dir, sizeof(f->dir), "/tmp/rtio-dataplane.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/clip", f->dir);
	for (uint64_t i = 0; i < NBLOCKS * 2 * BS; i++) {
		data[i] = pattern(i);
	}
	f->file_fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(f->file_fd >= 0);
	assert_int_equal(write(f->file_fd, data, NBLOCKS * 2 * BS), NBLOCKS * 2 * BS);
	free(data);

	ctx = unit_ctx_new(NULL, NBLOCKS * BS, BS);
	f->ctx = ctx;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	f->s = aiod_session_create(ctx, sv[1], getpid(), getuid(), false);
	assert_non_null(f->s);
	f->sock = sv[0];
	memset(&cr, 0, sizeof(cr));
	rtio_hdr_init(&cr.hdr, RTIO_OP_CONNECT, sizeof(cr), 1);
	cr.pid = (uint32_t)getpid();
	cr.features = RTIO_FEAT_ALL;
	assert_int_equal(control(f, &cr, sizeof(cr), NULL, &rep, fds, RTIO_CONNECT_MAX_FDS), 0);
	assert_true(rep.connect_rep.features & RTIO_FEAT_QOS);
	assert_true(rep.connect_rep.features & RTIO_FEAT_CONNECT_WATCH);
	close(fds[3]);		/* the QoS flow table: not paced here */
	close(fds[4]);		/* aiod's inotify descriptor: no hot reads here */
	close(fds[0]);		/* requests go to aiod_data_handle() directly */
	f->repq = fds[1];
	f->region_fd = fds[2];

	memset(&op, 0, sizeof(op));
	rtio_hdr_init(&op.hdr, RTIO_OP_OPEN, sizeof(op), 2);
	snprintf(op.name, sizeof(op.name), "clip");
	assert_int_equal(control(f, &op, sizeof(op), &f->file_fd, &rep, NULL, 0), 0);
	f->file_id = rep.open_rep.file_id;
	*state = f;
	return 0;
}

static inline int teardown(void **state)
{
	struct fixture *f = *state;
	char path[128];

	close(f->sock);		/* the session sees it go (after the watch's events, if any) */
	for (int i = 0; i < 16 && f->ctx->sessions != NULL; i++) {
		(void)tevent_loop_once(f->ctx->ev);
	}
	assert_null(f->ctx->sessions);
	assert_int_equal(f->ctx->cache->pinned, 0);
	assert_null(f->ctx->blocked);
	assert_null(f->ctx->blocked_timer);
	mq_close(f->repq);
	close(f->region_fd);
	close(f->file_fd);
	aiod_region_destroy(&f->ctx->region);
	talloc_free(f->ctx);
	snprintf(path, sizeof(path), "%s/clip", f->dir);
	unlink(path);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Create dir/name, open it with flags and register it with aiod; OPEN's result. */
static inline int open_as(struct fixture *f, const char *name, int flags, uint64_t *id)
{
	struct rtio_open_req op;
	union rtio_msg rep;
	char path[160];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fd = open(path, flags | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	memset(&op, 0, sizeof(op));
	rtio_hdr_init(&op.hdr, RTIO_OP_OPEN, sizeof(op), ++f->next_req);
	op.flags = (flags & O_ACCMODE) != O_RDONLY ? RTIO_OPEN_WRITABLE : 0;
	snprintf(op.name, sizeof(op.name), "%s", name);
	ret = control(f, &op, sizeof(op), &fd, &rep, NULL, 0);
	close(fd);		/* aiod holds its own copy */
	unlink(path);		/* aiod's descriptor keeps the inode; the directory empties */
	*id = rep.open_rep.file_id;
	return ret;
}

static inline int close_id(struct fixture *f, uint64_t id)
{
	struct rtio_close_req m;
	union rtio_msg rep;

	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, RTIO_OP_CLOSE, sizeof(m), ++f->next_req);
	m.file_id = id;
	return control(f, &m, sizeof(m), NULL, &rep, NULL, 0);
}

/* smbd wrote [off, off + len) of id into the page cache; the time around aiod's handling. */
static inline void wrote(struct fixture *f, uint64_t id, uint64_t off, uint32_t len,
			 uint64_t *t0, uint64_t *t1)
{
	union rtio_msg m;

	*t0 = aiod_now_ns();
	send_io_to(f, id, RTIO_OP_WROTE, off, len);
	*t1 = aiod_now_ns();
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.result, 0);
}

static inline struct aiod_open *open_of(struct fixture *f, uint64_t id)
{
	struct aiod_open *o = aiod_open_find(&aiod_peer_of(f->s)->opens, id);

	assert_non_null(o);
	return o;
}

#endif
