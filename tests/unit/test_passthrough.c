/*
 * Unit tests of a random reader's misses (aiod/passthrough.c) against the
 * fake engine: what reaches the device (offset, length), what the client
 * gets, where the blocks go afterwards, and that writes landing meanwhile
 * leave nothing stale. The rules tested:
 *  - a random read of a file larger than an eighth of the cache reads its
 *    pages only (rounded to 4 KiB), into blocks nobody else can find, which
 *    go back to the free list at READ1;
 *  - a sequential reader (from 0, or continuing its last read), a stream, a
 *    small file and a read into blocks already cached or loading keep the
 *    cached path: whole blocks, read-ahead, hits;
 *  - reads across a block boundary, up to EOF, and with O_DIRECT alignment.
 *
 * Geometry: 64 KiB blocks, a cache of 64 (4 MiB), the fixture's file "clip"
 * of 128 blocks (8 MiB).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define BS      (64u << 10)
#define NBLOCKS 64u

#include "dataplane_fixture.h"

#define FILE_SIZE ((uint64_t)2 * NBLOCKS * BS)

/* The one READ0 reply that must be there now. */
static void read_reply(struct fixture *f, union rtio_msg *m)
{
	assert_true(reply(f, m));
	assert_int_equal(m->hdr.opcode, RTIO_OP_READ0);
}

/* Exactly one device operation queued: a read of [off, off + len) through fd. */
static void expect_one_read(struct fixture *f, int fd, uint64_t off, uint64_t len)
{
	struct fake_engine_op_info op;

	assert_int_equal(fake_engine_pending(f->ctx->engine), 1);
	assert_true(fake_engine_op(f->ctx->engine, 0, &op));
	assert_int_equal(op.fd, fd);
	assert_int_equal(op.off, off);
	assert_int_equal(op.len, len);
}

/* Write pattern() bytes into dir/name (size bytes) and register it; its id. */
static uint64_t make_file(struct fixture *f, const char *name, uint64_t size)
{
	char path[160];
	uint8_t *data = malloc(size);
	uint64_t id;
	int fd;

	assert_non_null(data);
	for (uint64_t i = 0; i < size; i++) {
		data[i] = pattern(i);
	}
	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, size), (ssize_t)size);
	close(fd);
	free(data);
	assert_int_equal(open_as(f, name, O_RDWR, &id), 0);
	return id;
}

/*
 * A 4 KiB read of a file 16 times the size the cache keeps whole, away from
 * where the open last read: one device read of that page, into a block no
 * lookup finds, back on the free list at READ1. The same page again is read
 * again. An unaligned read takes the pages it touches.
 */
static void test_random_miss_reads_its_page_only(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct aiod_open *o = open_of(f, f->file_id);
	uint64_t off = 5 * BS + 3 * 4096;
	union rtio_msg m;

	for (int pass = 0; pass < 2; pass++) {
		send_io(f, RTIO_OP_READ0, off, 4096);
		assert_false(reply(f, &m));
		expect_one_read(f, o->fd, off, 4096);
		assert_int_equal(fake_engine_run(ctx->engine), 1);
		read_reply(f, &m);
		assert_int_equal(m.io_rep.nseg, 1);
		check_bytes(f, &m.io_rep, off, 4096);
		/* Pinned for the client, yet nobody finds it. */
		assert_int_equal(ctx->cache->pinned, 1);
		assert_int_equal(ctx->cache->free.count, NBLOCKS - 1);
		assert_null(aiod_cache_find(ctx->cache, o->file->dev, o->file->ino, 5));
		send_release(f, m.io_rep.token);
		assert_int_equal(ctx->cache->pinned, 0);
		assert_int_equal(ctx->cache->free.count, NBLOCKS);
		assert_int_equal(aiod_cache_used(ctx->cache), 0);
	}
	assert_int_equal(ctx->st.passthrough_reads, 2);
	assert_int_equal(ctx->st.passthrough_bytes, 2 * 4096);
	assert_int_equal(ctx->st.disk_read_bytes, 2 * 4096);
	assert_int_equal(ctx->st.bytes_read, 2 * 4096);

	/* 100 bytes into a page, 4 KiB long: that page and the next. */
	off = 7 * BS + 100;
	send_io(f, RTIO_OP_READ0, off, 4096);
	expect_one_read(f, o->fd, 7 * BS, 8192);
	assert_int_equal(fake_engine_run(ctx->engine), 1);
	read_reply(f, &m);
	check_bytes(f, &m.io_rep, off, 4096);
	send_release(f, m.io_rep.token);
	assert_int_equal(ctx->cache->free.count, NBLOCKS);
}

/*
 * A reader from 0 on, each read continuing the last, loads whole blocks
 * and gets read-ahead; no read of it is passed through.
 *
 *   reads   |16K|16K|16K|16K|...     from 0
 *   device  |    block 0    | read-ahead: whole blocks ...
 */
static void test_sequential_reader_keeps_whole_blocks(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	union rtio_msg m;

	for (uint64_t off = 0; off < 2 * BS; off += 16384) {
		struct fake_engine_op_info op;

		send_io(f, RTIO_OP_READ0, off, 16384);
		for (unsigned i = 0; fake_engine_op(ctx->engine, i, &op); i++) {
			assert_int_equal(op.off % BS, 0);
			assert_int_equal(op.len % BS, 0);
		}
		(void)fake_engine_run(ctx->engine);
		read_reply(f, &m);
		check_bytes(f, &m.io_rep, off, 16384);
		send_release(f, m.io_rep.token);
	}
	assert_true(ctx->st.readahead_blocks > 0);
	assert_int_equal(ctx->st.passthrough_reads, 0);
	assert_true(aiod_cache_used(ctx->cache) > 2);	/* what it read stays cached */
}

/*
 * Across a block boundary the read still goes to the device as one request
 * while it fits one block; longer, one request per block's worth.
 *
 *   file blocks   |    2    |    3    |         |    9    |   10    |
 *   read (a)               [-8K+8K]
 *   read (b)                                         [+100 ... 1 block]
 *   device (b)                                       [ BS       ][4K]
 */
static void test_random_read_straddles_blocks(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct aiod_open *o = open_of(f, f->file_id);
	struct fake_engine_op_info op;
	uint64_t off = 3 * BS - 8192;
	union rtio_msg m;

	send_io(f, RTIO_OP_READ0, off, 16384);
	expect_one_read(f, o->fd, off, 16384);
	assert_int_equal(fake_engine_run(ctx->engine), 1);
	read_reply(f, &m);
	assert_int_equal(m.io_rep.nseg, 1);
	check_bytes(f, &m.io_rep, off, 16384);
	send_release(f, m.io_rep.token);

	off = 9 * BS + BS / 2 + 100;
	send_io(f, RTIO_OP_READ0, off, BS);
	assert_int_equal(fake_engine_pending(ctx->engine), 2);
	assert_true(fake_engine_op(ctx->engine, 0, &op));
	assert_int_equal(op.off, 9 * BS + BS / 2);
	assert_int_equal(op.len, BS);
	assert_true(fake_engine_op(ctx->engine, 1, &op));
	assert_int_equal(op.off, 10 * BS + BS / 2);
	assert_int_equal(op.len, 4096);
	assert_int_equal(fake_engine_run(ctx->engine), 2);
	read_reply(f, &m);
	assert_int_equal(m.io_rep.nseg, 2);
	check_bytes(f, &m.io_rep, off, BS);
	assert_int_equal(ctx->cache->pinned, 2);
	send_release(f, m.io_rep.token);
	assert_int_equal(ctx->cache->pinned, 0);
	assert_int_equal(ctx->cache->free.count, NBLOCKS);
}

/* A random read over EOF answers what is there; past EOF, nothing and no device read. */
static void check_eof(struct fixture *f, uint64_t id, int fd, uint64_t size)
{
	struct aiod_ctx *ctx = f->ctx;
	uint64_t off = size - 3000;
	union rtio_msg m;

	send_io_to(f, id, RTIO_OP_READ0, off, 8192);
	expect_one_read(f, fd, off & ~4095ull, ((size + 4095) & ~4095ull) - (off & ~4095ull));
	assert_int_equal(fake_engine_run(ctx->engine), 1);
	read_reply(f, &m);
	check_bytes(f, &m.io_rep, off, 3000);
	send_release(f, m.io_rep.token);

	send_io_to(f, id, RTIO_OP_READ0, size + 8192, 4096);
	read_reply(f, &m);
	assert_int_equal(m.hdr.result, 0);
	assert_int_equal(fake_engine_pending(ctx->engine), 0);
	send_release(f, m.io_rep.token);
	assert_int_equal(ctx->cache->free.count, NBLOCKS);
}

/*
 * EOF inside the read: short. With [cache] direct_io the read goes through
 * the O_DIRECT descriptor, so offset and length must be aligned (the fake
 * engine does the real pread: a misaligned one fails with EINVAL), and an
 * unaligned client read in the middle of the file works too.
 */
static void test_random_read_at_eof(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	uint64_t size = FILE_SIZE - 1000, id, off;
	struct aiod_open *o;
	union rtio_msg m;

	assert_int_equal(ftruncate(f->file_fd, (off_t)size), 0);
	check_eof(f, f->file_id, open_of(f, f->file_id)->fd, size);

	ctx->cfg->direct_io = true;
	size = 24 * BS + 1000;		/* still past what the cache keeps whole */
	id = make_file(f, "direct.bin", size);
	o = open_of(f, id);
	if (o->direct_fd < 0) {
		print_message("no O_DIRECT under %s: the aligned case is not tested\n", f->dir);
		assert_int_equal(close_id(f, id), 0);
		return;
	}
	check_eof(f, id, o->direct_fd, size);
	off = 11 * BS + 4096 + 100;
	send_io_to(f, id, RTIO_OP_READ0, off, 5000);
	expect_one_read(f, o->direct_fd, 11 * BS + 4096, 8192);
	assert_int_equal(fake_engine_run(ctx->engine), 1);
	read_reply(f, &m);
	check_bytes(f, &m.io_rep, off, 5000);
	send_release(f, m.io_rep.token);
	assert_int_equal(close_id(f, id), 0);
}

/* A WRITE1 of [off, off + len) with byte v through staging blocks; its WRITE0 reply. */
static void write0(struct fixture *f, uint64_t off, uint32_t len, uint8_t v, uint64_t *token)
{
	union rtio_msg m;

	send_io(f, RTIO_OP_WRITE0, off, len);
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.opcode, RTIO_OP_WRITE0);
	assert_int_equal(m.hdr.result, (int32_t)len);
	assert_int_equal(m.io_rep.nseg, 1);
	memset(f->ctx->region.base + m.io_rep.seg[0].shm_off, v, len);
	*token = m.io_rep.token;
}

static void send_write1(struct fixture *f, uint64_t token)
{
	struct rtio_release_req m;

	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, RTIO_OP_WRITE1, sizeof(m), ++f->next_req);
	m.token = token;
	aiod_data_handle(f->ctx, f->s, (const union rtio_msg *)&m, sizeof(m));
}

/* A fresh random read of [off, off + 4096) holds byte v throughout. */
static void expect_page(struct fixture *f, uint64_t off, uint8_t v)
{
	union rtio_msg m;
	const uint8_t *p;

	send_io(f, RTIO_OP_READ0, off, 4096);
	(void)fake_engine_run(f->ctx->engine);
	read_reply(f, &m);
	assert_int_equal(m.hdr.result, 4096);
	p = f->ctx->region.base + m.io_rep.seg[0].shm_off;
	for (uint32_t k = 0; k < 4096; k++) {
		assert_int_equal(p[k], v);
	}
	send_release(f, m.io_rep.token);
}

/*
 * A random read took the old bytes from the device; before it completes the
 * page is written, once by smbd (WROTE) and once through aiod (WRITE1, which
 * updates cached copies). Whatever the read in flight answers, the next
 * read must see the new bytes: the pass-through block is nobody's cache.
 *
 *   time    READ0 ---- device read (old) ------------ reply   READ0 -> new
 *                         WROTE / WRITE1 (new) done ^
 */
static void test_write_during_random_read_not_stale(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	uint64_t off = 20 * BS, token, t0, t1;
	union rtio_msg m, rep[2];
	uint8_t buf[4096];

	send_io(f, RTIO_OP_READ0, off, 4096);
	assert_true(fake_engine_io_now(ctx->engine, 0));	/* the old bytes */
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(pwrite(f->file_fd, buf, sizeof(buf), (off_t)off), (ssize_t)sizeof(buf));
	wrote(f, f->file_id, off, sizeof(buf), &t0, &t1);
	assert_int_equal(fake_engine_run(ctx->engine), 1);
	read_reply(f, &m);
	check_bytes(f, &m.io_rep, off, 4096);			/* concurrent: old is fine */
	send_release(f, m.io_rep.token);
	expect_page(f, off, 0xa5);

	off += 3 * BS;
	send_io(f, RTIO_OP_READ0, off, 4096);
	assert_true(fake_engine_io_now(ctx->engine, 0));
	write0(f, off, 4096, 0x5a, &token);
	send_write1(f, token);
	assert_int_equal(fake_engine_run(ctx->engine), 2);	/* the read, the write */
	assert_true(reply(f, &rep[0]));
	assert_true(reply(f, &rep[1]));
	if (rep[0].hdr.opcode != RTIO_OP_READ0) {
		m = rep[0];
		rep[0] = rep[1];
		rep[1] = m;
	}
	assert_int_equal(rep[0].hdr.opcode, RTIO_OP_READ0);
	assert_int_equal(rep[1].hdr.opcode, RTIO_OP_WRITE1);
	assert_int_equal(rep[1].hdr.result, 4096);
	check_bytes(f, &rep[0].io_rep, off, 4096);
	send_release(f, rep[0].io_rep.token);
	expect_page(f, off, 0x5a);
	assert_int_equal(ctx->cache->pinned, 0);
}

/*
 * Reads at random offsets keep the cached path when the cache can help: a
 * file small enough to be cached whole (its re-reads hit), a stream's file
 * (read ahead on its timeline), and a block that is already loading (the
 * read waits for it instead of reading it again).
 */
static void test_cached_path_kept_where_it_helps(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct aiod_config *cfg = ctx->cfg;
	uint64_t small = (uint64_t)NBLOCKS * BS / 8, id;
	struct aiod_open *o;
	union rtio_msg m;

	id = make_file(f, "small.db", small);
	o = open_of(f, id);
	send_io_to(f, id, RTIO_OP_READ0, 3 * BS + 4096, 4096);
	expect_one_read(f, o->fd, 3 * BS, BS);
	(void)fake_engine_run(ctx->engine);
	read_reply(f, &m);
	send_release(f, m.io_rep.token);
	send_io_to(f, id, RTIO_OP_READ0, 3 * BS + 40960, 4096);
	read_reply(f, &m);					/* a hit */
	send_release(f, m.io_rep.token);
	assert_int_equal(close_id(f, id), 0);

	cfg->n_classes = 1;
	cfg->classes[0] = (struct aiod_stream_class){ .name = "hd", .match = "*.mxf",
						      .bitrate = 100000000ull, .prebuffer_ms = 1000 };
	id = make_file(f, "take.mxf", FILE_SIZE);
	o = open_of(f, id);
	assert_true(o->rate_bps > 0);
	send_io_to(f, id, RTIO_OP_READ0, 40 * BS + 4096, 4096);
	expect_one_read(f, o->fd, 40 * BS, BS);
	(void)fake_engine_run(ctx->engine);
	read_reply(f, &m);
	check_bytes(f, &m.io_rep, 40 * BS + 4096, 4096);
	send_release(f, m.io_rep.token);
	assert_int_equal(close_id(f, id), 0);

	/* The open's first read, at 0, loads block 0; one further into it waits for that load. */
	send_io(f, RTIO_OP_READ0, 0, 4096);
	send_io(f, RTIO_OP_READ0, 8192, 4096);
	expect_one_read(f, open_of(f, f->file_id)->fd, 0, BS);
	assert_int_equal(fake_engine_run(ctx->engine), 1);
	for (int i = 0; i < 2; i++) {
		read_reply(f, &m);	/* in either order: the block's waiters run newest first */
		check_bytes(f, &m.io_rep, m.hdr.req_id == f->next_req ? 8192 : 0, 4096);
		send_release(f, m.io_rep.token);
	}
	assert_int_equal(ctx->st.passthrough_reads, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_random_miss_reads_its_page_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sequential_reader_keeps_whole_blocks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_random_read_straddles_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_read_at_eof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_during_random_read_not_stale, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cached_path_kept_where_it_helps, setup, teardown),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("passthrough", tests, NULL, NULL);
}
