/*
 * Unit tests of aiod's request layer (request.c, read.c, waitq.c)
 * against a fake engine (fake_engine.c): no io_uring, no disk timing; the
 * test decides when the "device" completes. A real session (socketpair, real message
 * queues, the real CONNECT and OPEN) feeds aiod_data_handle() directly and
 * reads the replies from the reply queue (dataplane_fixture.h).
 * A random reader's misses: test_passthrough.c; writers' write-back:
 * test_writeback.c.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "log.h"
#include "dataplane.h"
#include "requests.h"
#include "streams.h"

#define BS      (1u << 20)
#define NBLOCKS 4u

#include "dataplane_fixture.h"

/*
 * A miss answers only once the device did the read; the same range again is
 * a hit. (The first read of an open at 0 is a sequential reader's: it loads
 * whole blocks. One elsewhere would read only its pages: test_passthrough.c.)
 */
static void test_read_miss_then_hit(void **state)
{
	struct fixture *f = *state;
	union rtio_msg m;
	uint64_t misses, hits;

	send_io(f, RTIO_OP_READ0, 0, 65536);
	assert_false(reply(f, &m));			/* waiting for the disk */
	assert_true(fake_engine_pending(f->ctx->engine) >= 1);
	misses = f->ctx->st.cache_misses;
	assert_true(fake_engine_run(f->ctx->engine) >= 1);
	assert_true(reply(f, &m));
	check_bytes(f, &m.io_rep, 0, 65536);
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

/*
 * A client's miss of several blocks goes to a disk in pieces where stream
 * classes exist, though no stream plays (one may open while the miss is on
 * the disk): half of blocks_with_streams (at least a block), one behind the
 * other; where none exists it goes whole. (Read-ahead:
 * test_readahead.c's test_ra_best_effort_loads_in_pieces.)
 */
static void test_miss_in_pieces_where_classes_exist(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct aiod_open *o = open_of(f, f->file_id);
	struct fake_engine_op_info op;
	union rtio_msg m;

	aiod_engine_set_slice(ctx->engine, aiod_load_slice, ctx);
	ctx->cfg->readahead_blocks_streams = 1;
	ctx->cfg->classes[0] = (struct aiod_stream_class){ .name = "hd", .match = "*.mxf",
							  .bitrate = 100000000ull,
							  .prebuffer_ms = 1000 };
	for (unsigned classes = 0; classes < 2; classes++) {
		uint64_t off = (uint64_t)classes * 2 * BS;	/* sequential: whole blocks */
		bool seen = false;

		ctx->cfg->n_classes = classes;
		for (uint64_t blk = off / BS; blk < off / BS + 2; blk++) {
			struct aiod_block *b = aiod_cache_find(ctx->cache, o->file->dev,
							       o->file->ino, blk);

			if (b != NULL) {
				aiod_cache_detach(ctx->cache, b);	/* round 0 read it ahead */
			}
		}
		send_io(f, RTIO_OP_READ0, off, 2 * BS);
		assert_int_equal(ctx->streams, 0);
		for (unsigned k = 0; fake_engine_op(ctx->engine, k, &op); k++) {
			if (op.off == off) {
				assert_int_equal(op.len, 2 * BS);
				assert_int_equal(op.piece, classes > 0 ? BS : 0);
				assert_int_equal(op.behind, classes > 0);
				seen = true;
			}
		}
		assert_true(seen);
		(void)fake_engine_run(ctx->engine);
		assert_true(reply(f, &m));
		check_bytes(f, &m.io_rep, off, 2 * BS);
		send_release(f, m.io_rep.token);
	}
	ctx->cfg->n_classes = 0;
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
		cmocka_unit_test_setup_teardown(test_miss_in_pieces_where_classes_exist, setup,
						teardown),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("dataplane", tests, NULL, NULL);
}
