/*
 * Unit tests of aiod's request layer (request.c, read.c, waitq.c) against a
 * fake engine (fake_engine.c): no io_uring, no disk timing; the test decides
 * when the "device" completes. A real session (socketpair, real message
 * queues, the real CONNECT and OPEN) feeds aiod_data_handle() directly and
 * reads the replies from the reply queue.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "aiod.h"
#include "fake_engine.h"
#include "unit_ctx.h"
#include "log.h"
#include "rtio_shm.h"
#include "rtio_sock.h"
#include "region.h"
#include "files.h"
#include "streams.h"
#include "requests.h"
#include "handlers.h"
#include "session.h"

#define BS      (1u << 20)
#define NBLOCKS 4u

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

static uint8_t pattern(uint64_t off)
{
	return (uint8_t)(off * 13 + off / BS);
}

/* One control round trip, handled by aiod's loop; the reply's result. */
static int control(struct fixture *f, void *msg, size_t len, int *fd, union rtio_msg *rep,
		   int *fds, unsigned nfds)
{
	unsigned got = nfds;

	assert_int_equal(rtio_sock_send(f->sock, msg, len, fd, fd != NULL ? 1 : 0), 0);
	assert_int_equal(tevent_loop_once(f->ctx->ev), 0);
	assert_true(rtio_sock_recv(f->sock, rep, sizeof(*rep), fds, &got, 1000) > 0);
	return rep->hdr.result;
}

static void send_io(struct fixture *f, uint16_t op, uint64_t off, uint32_t len)
{
	struct rtio_io_req m;

	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, op, sizeof(m), ++f->next_req);
	m.file_id = f->file_id;
	m.offset = off;
	m.length = len;
	aiod_data_handle(f->ctx, f->s, (const union rtio_msg *)&m, sizeof(m));
}

static void send_release(struct fixture *f, uint64_t token)
{
	struct rtio_release_req m;

	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, RTIO_OP_READ1, sizeof(m), ++f->next_req);
	m.token = token;
	aiod_data_handle(f->ctx, f->s, (const union rtio_msg *)&m, sizeof(m));
}

/* The next reply on the reply queue; false when there is none. */
static bool reply(struct fixture *f, union rtio_msg *m)
{
	return mq_receive(f->repq, (char *)m, sizeof(*m), NULL) > 0;
}

/* The reply's segments hold the file's bytes [off, off + len). */
static void check_bytes(struct fixture *f, const struct rtio_io_rep *r, uint64_t off, uint32_t len)
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

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct aiod_ctx *ctx;
	struct rtio_connect_req cr;
	struct rtio_open_req op;
	union rtio_msg rep;
	uint8_t *data = malloc(NBLOCKS * 2 * BS);
	char path[128];
	int sv[2], fds[3] = { -1, -1, -1 };

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
	assert_int_equal(control(f, &cr, sizeof(cr), NULL, &rep, fds, 3), 0);
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

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[128];

	close(f->sock);		/* the session sees it go */
	(void)tevent_loop_once(f->ctx->ev);
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

/* A miss answers only once the device did the read; the same range again is a hit. */
static void test_read_miss_then_hit(void **state)
{
	struct fixture *f = *state;
	union rtio_msg m;
	uint64_t misses, hits;

	send_io(f, RTIO_OP_READ0, 4096, 65536);
	assert_false(reply(f, &m));			/* waiting for the disk */
	assert_true(fake_engine_pending(f->ctx->engine) >= 1);
	misses = f->ctx->st.cache_misses;
	assert_true(fake_engine_run(f->ctx->engine) >= 1);
	assert_true(reply(f, &m));
	check_bytes(f, &m.io_rep, 4096, 65536);
	send_release(f, m.io_rep.token);

	hits = f->ctx->st.cache_hits;
	send_io(f, RTIO_OP_READ0, 8192, 4096);
	assert_true(reply(f, &m));			/* answered at once */
	assert_int_equal(fake_engine_pending(f->ctx->engine), 0);
	check_bytes(f, &m.io_rep, 8192, 4096);
	assert_int_equal(f->ctx->st.cache_hits, hits + 1);
	assert_int_equal(f->ctx->st.cache_misses, misses);
	send_release(f, m.io_rep.token);
}

/*
 * Every block pinned: the next read waits (one timer armed), starts when a
 * lease is released, and the timer goes once nothing waits.
 */
static void test_read_waits_for_a_free_block(void **state)
{
	struct fixture *f = *state;
	union rtio_msg m;
	uint64_t tokens[NBLOCKS];

	for (uint32_t i = 0; i < NBLOCKS; i++) {
		send_io(f, RTIO_OP_READ0, (uint64_t)i * BS, BS);
		(void)fake_engine_run(f->ctx->engine);
		assert_true(reply(f, &m));
		check_bytes(f, &m.io_rep, (uint64_t)i * BS, BS);
		tokens[i] = m.io_rep.token;
	}
	assert_int_equal(f->ctx->cache->pinned, NBLOCKS);
	send_io(f, RTIO_OP_READ0, (uint64_t)NBLOCKS * BS, 4096);
	assert_false(reply(f, &m));
	assert_non_null(f->ctx->blocked);
	assert_non_null(f->ctx->blocked_timer);

	send_release(f, tokens[0]);			/* a block comes back: the waiter starts */
	assert_null(f->ctx->blocked);
	(void)fake_engine_run(f->ctx->engine);
	assert_true(reply(f, &m));
	check_bytes(f, &m.io_rep, (uint64_t)NBLOCKS * BS, 4096);
	assert_null(f->ctx->blocked_timer);		/* nothing waits: no timer */
	send_release(f, m.io_rep.token);
	for (uint32_t i = 1; i < NBLOCKS; i++) {
		send_release(f, tokens[i]);
	}
}

/* Dispatch rules come from the opcode's row: unknown file, bad range, control op. */
static void test_dispatch_rejects(void **state)
{
	struct fixture *f = *state;
	union rtio_msg m;
	uint64_t perr = f->ctx->st.protocol_errors;

	f->file_id += 100;
	send_io(f, RTIO_OP_READ0, 0, 4096);
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.result, -EBADF);
	f->file_id -= 100;
	send_io(f, RTIO_OP_READ0, 0, f->ctx->cfg->max_io + 1);
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.result, -EINVAL);
	send_io(f, RTIO_OP_FSYNC, 0, 0);
	assert_int_equal(fake_engine_run(f->ctx->engine), 1);
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.result, 0);
	send_release(f, 12345);			/* READ1 of a token never handed out */
	assert_false(reply(f, &m));
	assert_int_equal(f->ctx->st.protocol_errors, perr + 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_miss_then_hit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_waits_for_a_free_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dispatch_rejects, setup, teardown),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("dataplane", tests, NULL, NULL);
}
