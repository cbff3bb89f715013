/*
 * Unit tests of stream read-ahead (aiod/readahead.c, aiod/stream.c) against
 * the fake engine: which requests reach the device queue, how large, and with
 * which deadlines. The rules tested:
 *  - start-up ramp: a stream's first requests are small, then grow to io_size;
 *  - streams opened together each get their first data before any stream
 *    gets its second request;
 *  - catch-up: a stream behind its timeline gets earlier deadlines than one
 *    ahead of it, and asks for its whole gap at once;
 *  - the window is checked from where the reader is: cached blocks in it are
 *    protected from eviction, and a block evicted anyway is read again;
 *  - one round of refills: stream deadlines move earlier by the device time
 *    of one request per stream;
 *  - a read the client waits for is due now, and read-ahead when the reader
 *    gets there, counted from the start of its latest read;
 *  - blocks a stream played through are evicted first, except the file's
 *    head (what a replay from the start needs), whether the client copied
 *    them (HIT) or held them through a READ0 lease;
 *  - while streams are admitted, best-effort read-ahead goes to a disk in
 *    pieces (aiod_load_slice()), streams' loads whole (a client's miss:
 *    test_dataplane.c);
 *  - a stream that closes drops the read-ahead the device has not begun,
 *    unless another open of its file may read it, and gives back its
 *    reservation at once; one that jumps far (scrubbing) drops what it
 *    left behind, one whose reads arrive a block or two out of order
 *    keeps it.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "aiod.h"
#include "fake_engine.h"
#include "unit_ctx.h"
#include "dataplane.h"
#include "files.h"
#include "profile.h"
#include "region.h"
#include "streams.h"
#include "peer.h"
#include "requests.h"

#define BS        (64u << 10)	/* small blocks: the arithmetic is per block */
#define NBLOCKS   512u
#define FILE_BLKS 400u
#define NFILES    4

struct fixture {
	struct aiod_ctx *ctx;
	char dir[64];
	struct aiod_opens os;
	struct aiod_open *o[NFILES];
};

/*
 * A file of FILE_BLKS blocks named name in the fixture's directory, opened
 * into os as aiod opens a client's file; unlinked at once (the open keeps it).
 */
static struct aiod_open *open_file(struct fixture *f, struct aiod_opens *os, const char *name)
{
	struct aiod_open *o = NULL;
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)FILE_BLKS * BS), 0);
	assert_int_equal(aiod_open_add(f->ctx, os, fd, name, 0, &o), 0);
	assert_int_equal(unlink(path), 0);
	return o;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct aiod_config *cfg;

	assert_non_null(f);
	f->ctx = unit_ctx_new(NULL, (uint64_t)NBLOCKS * BS, BS);
	cfg = f->ctx->cfg;
	cfg->readahead_io_size = 16 * BS;
	cfg->n_classes = 1;
	cfg->classes[0].name = "hd";
	cfg->classes[0].match = "*.mxf";
	/* 8 blocks (512 KiB) a second: a block every 125 ms */
	cfg->classes[0].bitrate = 8ull * 8 * BS;
	cfg->classes[0].prebuffer_ms = 1000;
	cfg->admission_capacity = 0;
	f->ctx->capacity_Bps = 0;	/* no round guard unless a test sets one */
	snprintf(f->dir, sizeof(f->dir), "/tmp/rtio-ra.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	for (int i = 0; i < NFILES; i++) {
		char name[32];

		snprintf(name, sizeof(name), "s%d.mxf", i);
		f->o[i] = open_file(f, &f->os, name);
		assert_true(f->o[i]->rate_bps > 0);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	fake_engine_run(f->ctx->engine);
	aiod_load_close_all(f->ctx, &f->os);
	assert_int_equal(f->ctx->cache->pinned, 0);
	rmdir(f->dir);
	aiod_region_destroy(&f->ctx->region);
	talloc_free(f->ctx);
	free(f);
	return 0;
}

/* What a client read of [blk, blk + 1) does to read-ahead (read.c's calls); the window. */
static uint32_t client_read(struct fixture *f, int i, uint64_t blk)
{
	struct aiod_open *o = f->o[i];
	uint32_t n = aiod_stream_observe(f->ctx, o, blk * BS, BS);

	aiod_readahead(f->ctx, o, blk, (uint64_t)FILE_BLKS * BS, n);
	return n;
}

/* Which of the fixture's opens reads through descriptor fd. */
static int which(struct fixture *f, int fd)
{
	for (int i = 0; i < NFILES; i++) {
		if (f->o[i]->fd == fd || f->o[i]->direct_fd == fd) {
			return i;
		}
	}
	fail_msg("no open reads through fd %d", fd);
	return -1;
}

static void test_ra_startup_ramp(void **state)
{
	struct fixture *f = *state;
	struct fake_engine_op_info op;
	uint64_t expect_off = BS, last_deadline = 0, prev = 0;
	unsigned k;

	client_read(f, 0, 0);
	/*
	 * No device profile: twice the client's read first, then a third more
	 * with every request, until io_size; in file order, with deadlines along
	 * the timeline.
	 */
	for (k = 0; fake_engine_op(f->ctx->engine, k, &op); k++) {
		uint64_t blocks = op.len / BS;

		assert_int_equal(op.off, expect_off);
		if (k == 0) {
			assert_int_equal(blocks, 2);
		} else {
			assert_true(blocks >= prev);
			assert_true(blocks <= prev + (prev / 3 > 1 ? prev / 3 : 1));
		}
		assert_true(blocks <= 16);
		assert_true(op.deadline_ns > last_deadline);
		last_deadline = op.deadline_ns;
		expect_off += op.len;
		prev = blocks;
	}
	assert_true(k >= 4);
	/* The ramp goes on from where it got to as the stream plays, up to io_size. */
	for (uint64_t b = 1; b < 200; b++) {
		client_read(f, 0, b);
		fake_engine_run(f->ctx->engine);
	}
	assert_int_equal(f->o[0]->ra_size, 16);
}

/* A slow device for the fixture: 100 ms per request, 10 MB/s. */
static void slow_device(struct fixture *f, struct aiod_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->version = 2;
	p->request_us = 100000;
	p->npoints = 1;
	p->points[0].size = 16 * BS;
	p->points[0].random_Bps = 9000000;
	p->points[0].sequential_Bps = 10000000;
	f->ctx->profile = p;
}

static void test_ra_ramp_starts_where_the_device_keeps_up(void **state)
{
	struct fixture *f = *state;
	struct aiod_profile p;
	struct fake_engine_op_info op;

	/*
	 * A slow device: 100 ms per request, 10 MB/s. Four streams of a block
	 * each 125 ms: a round of requests of s blocks takes 4 * (100 + 6.55 s)
	 * ms and plays for 125 s ms, so s must be at least 5.
	 */
	slow_device(f, &p);
	client_read(f, 0, 0);
	assert_true(fake_engine_op(f->ctx->engine, 0, &op));
	assert_int_equal(op.len, 5 * BS);
	f->ctx->profile = NULL;
}

/* What alone_on_slow_device() changed, for the test to put back. */
struct admitted {
	uint32_t streams;
	uint64_t reserved_Bps;
};

/* Stream 0 the only one admitted, on the slow device: one block keeps up (ramp from 2). */
static void alone_on_slow_device(struct fixture *f, struct aiod_profile *p, struct admitted *was)
{
	was->streams = f->ctx->streams;
	was->reserved_Bps = f->ctx->reserved_Bps;
	slow_device(f, p);
	f->ctx->streams = 1;	/* s >= 100 / (125 - 6.55): 1 block */
	f->ctx->reserved_Bps = f->o[0]->rate_bps / 8;
}

static void all_admitted_again(struct fixture *f, const struct admitted *was)
{
	f->ctx->streams = was->streams;
	f->ctx->reserved_Bps = was->reserved_Bps;
}

/*
 * Streams opened together are admitted one after the other: one that began
 * its ramp while it was alone grows it to what keeps up with every stream
 * as soon as the others are in, not a third at a time from 2 blocks.
 */
static void test_ra_ramp_follows_streams_joining(void **state)
{
	struct fixture *f = *state;
	struct aiod_profile p;
	struct fake_engine_op_info op;
	struct aiod_open *o = f->o[0];
	struct admitted was;

	alone_on_slow_device(f, &p, &was);
	/* a window of 2 blocks: one request, then the ramp stands at 3 */
	(void)aiod_stream_observe(f->ctx, o, 0, BS);
	aiod_readahead(f->ctx, o, 0, (uint64_t)FILE_BLKS * BS, 2);
	assert_true(fake_engine_op(f->ctx->engine, 0, &op));
	assert_int_equal(op.len, 2 * BS);
	fake_engine_run(f->ctx->engine);
	assert_int_equal(o->ra_size, 3);
	all_admitted_again(f, &was);	/* the other three are in: 5 blocks keep up */
	(void)aiod_stream_observe(f->ctx, o, BS, BS);
	aiod_readahead(f->ctx, o, 1, (uint64_t)FILE_BLKS * BS, 16);
	assert_true(fake_engine_op(f->ctx->engine, 0, &op));
	assert_int_equal(op.off, 3 * BS);
	assert_int_equal(op.len, 5 * BS);
	f->ctx->profile = NULL;
}

/*
 * The device takes a stream's first load (the client's own block) as large
 * as its read-ahead ramp starts, twice the client's read, even where one
 * block keeps up with the streams admitted so far (the first ones opened
 * together are admitted alone): a first read of one block left the stream
 * opened first one chunk of lead, and its next request waited for every
 * other stream's first (rt-ab-20261208-first-load-ramp.md). Its later loads
 * grow only to what keeps up.
 */
static void test_ra_first_load_grows_to_the_ramp_start(void **state)
{
	struct fixture *f = *state;
	struct aiod_profile p;
	struct fake_engine_op_info op;
	struct admitted was;

	alone_on_slow_device(f, &p, &was);
	/* the client's block 0 (read.c queues it before the read-ahead: not here) */
	client_read(f, 0, 0);
	assert_true(fake_engine_op(f->ctx->engine, 0, &op));
	assert_int_equal(op.off, BS);
	assert_int_equal(aiod_load_grow(f->ctx, op.done, op.private_data), 2 * BS);
	/* taken: its next load grows only to what keeps up, one block */
	assert_true(fake_engine_op(f->ctx->engine, 1, &op));
	assert_int_equal(op.off, 3 * BS);
	assert_int_equal(aiod_load_grow(f->ctx, op.done, op.private_data), BS);
	all_admitted_again(f, &was);
	f->ctx->profile = NULL;
}

/*
 * Mixed bitrates: each stream's first request brings what it plays in one
 * round of requests, one per stream. Stream 0 at twice the others' rate:
 * the admitted streams take 2.62 of the device's 10 MB/s, a round of 4
 * requests lasts 4 x 100 ms / (1 - 0.262) = 542 ms: stream 0 needs 9
 * blocks of it, the others 5 (sized as if all four were as fast as stream
 * 0, it was 12).
 */
static void test_ra_ramp_mixed_bitrates(void **state)
{
	struct fixture *f = *state;
	struct aiod_profile p;
	struct fake_engine_op_info op;
	uint64_t base = f->o[0]->rate_bps;

	slow_device(f, &p);
	f->o[0]->rate_bps = 2 * base;
	f->ctx->reserved_Bps += base / 8;
	client_read(f, 0, 0);
	client_read(f, 1, 0);
	for (unsigned k = 0; fake_engine_op(f->ctx->engine, k, &op); k++) {
		if (op.off == BS) {
			assert_int_equal(op.len, (which(f, op.fd) == 0 ? 9 : 5) * BS);
		}
	}
	f->ctx->reserved_Bps -= base / 8;
	f->o[0]->rate_bps = base;
	f->ctx->profile = NULL;
}

static void test_ra_streams_together_each_start_first(void **state)
{
	struct fixture *f = *state;
	struct fake_engine_op_info op;
	bool seen[NFILES] = { false };

	for (int i = 0; i < NFILES; i++) {
		client_read(f, i, 0);
	}
	/* The device gets every stream's first (small) request before anybody's second. */
	for (unsigned k = 0; k < NFILES; k++) {
		int i;

		assert_true(fake_engine_op(f->ctx->engine, k, &op));
		i = which(f, op.fd);
		assert_false(seen[i]);
		seen[i] = true;
		assert_int_equal(op.off, BS);
		assert_int_equal(op.len, 2 * BS);
	}
}

/*
 * Best-effort sequential readers (files no class names) started together:
 * the device gets each one's first read-ahead request, a small one, before
 * anybody's second, and each reader's farther requests are due later. Due
 * all at once, the first reader's whole window (here 4 requests of 16
 * blocks) went before the others' first data.
 */
static void test_ra_best_effort_readers_together(void **state)
{
	struct fixture *f = *state;
	struct aiod_opens os;
	struct aiod_open *b[NFILES];
	struct fake_engine_op_info op;
	bool seen[NFILES] = { false };
	uint64_t last_deadline[NFILES] = { 0 };
	unsigned k;

	/* No stream open: best-effort readers get the whole [readahead] blocks window. */
	aiod_load_close_all(f->ctx, &f->os);
	assert_int_equal(f->ctx->streams, 0);
	memset(&os, 0, sizeof(os));
	for (int i = 0; i < NFILES; i++) {
		char name[32];

		snprintf(name, sizeof(name), "b%d.mov", i);
		b[i] = open_file(f, &os, name);
		assert_int_equal(b[i]->rate_bps, 0);
	}
	/* The second sequential read establishes the pattern; read-ahead starts after it. */
	for (uint64_t blk = 0; blk < 2; blk++) {
		for (int i = 0; i < NFILES; i++) {
			aiod_readahead(f->ctx, b[i], blk, (uint64_t)FILE_BLKS * BS,
				       aiod_stream_observe(f->ctx, b[i], blk * BS, BS));
		}
	}
	for (k = 0; fake_engine_op(f->ctx->engine, k, &op); k++) {
		int i = -1;

		for (int j = 0; j < NFILES; j++) {
			i = b[j]->fd == op.fd || b[j]->direct_fd == op.fd ? j : i;
		}
		assert_true(i >= 0);
		if (k < NFILES) {
			assert_false(seen[i]);
			seen[i] = true;
			assert_int_equal(op.off, 2 * BS);
			assert_int_equal(op.len, 2 * BS);
		}
		assert_true(op.deadline_ns > last_deadline[i]);
		last_deadline[i] = op.deadline_ns;
	}
	assert_true(k > 2 * NFILES);	/* the windows were filled, in more than one request each */
	fake_engine_run(f->ctx->engine);
	aiod_load_close_all(f->ctx, &os);
}

/*
 * While streams are admitted, a best-effort reader's loads go to a disk in
 * pieces of blocks_with_streams blocks (aiod_load_slice()), so a stream
 * read that falls due waits for one piece, not the reader's whole request;
 * a stream's own loads go whole. With no stream admitted but classes that
 * one may open under, the pieces are half as large and go one behind the
 * other (a lone copy loses no disk time between them); without classes
 * read-ahead is not cut.
 */
static void test_ra_best_effort_loads_in_pieces(void **state)
{
	struct fixture *f = *state;
	struct aiod_opens os;
	struct aiod_open *b;
	struct fake_engine_op_info op;
	unsigned k, be = 0, streams = 0;

	aiod_engine_set_slice(f->ctx->engine, aiod_load_slice, f->ctx);
	f->ctx->cfg->readahead_blocks_streams = 3;
	memset(&os, 0, sizeof(os));
	b = open_file(f, &os, "b0.mov");
	assert_int_equal(b->rate_bps, 0);
	assert_true(f->ctx->streams > 0);
	for (uint64_t blk = 0; blk < 2; blk++) {
		client_read(f, 0, blk);
		aiod_readahead(f->ctx, b, blk, (uint64_t)FILE_BLKS * BS,
			       aiod_stream_observe(f->ctx, b, blk * BS, BS));
	}
	for (k = 0; fake_engine_op(f->ctx->engine, k, &op); k++) {
		if (op.fd == b->fd || op.fd == b->direct_fd) {
			assert_int_equal(op.piece, 3 * BS);
			assert_false(op.behind);
			be++;
		} else {
			assert_int_equal(op.piece, 0);
			streams++;
		}
	}
	assert_true(be > 0 && streams > 0);
	fake_engine_run(f->ctx->engine);

	aiod_load_close_all(f->ctx, &f->os);
	assert_int_equal(f->ctx->streams, 0);
	assert_true(f->ctx->cfg->n_classes > 0);
	for (uint64_t blk = 2; blk < 4; blk++) {
		aiod_readahead(f->ctx, b, blk, (uint64_t)FILE_BLKS * BS,
			       aiod_stream_observe(f->ctx, b, blk * BS, BS));
	}
	assert_true(fake_engine_op(f->ctx->engine, 0, &op));
	for (k = 0; fake_engine_op(f->ctx->engine, k, &op); k++) {
		assert_int_equal(op.piece, BS);	/* 3 / 2 blocks */
		assert_true(op.behind);
	}
	fake_engine_run(f->ctx->engine);

	f->ctx->cfg->n_classes = 0;
	for (uint64_t blk = 4; blk < 6; blk++) {
		aiod_readahead(f->ctx, b, blk, (uint64_t)FILE_BLKS * BS,
			       aiod_stream_observe(f->ctx, b, blk * BS, BS));
	}
	assert_true(fake_engine_op(f->ctx->engine, 0, &op));
	for (k = 0; fake_engine_op(f->ctx->engine, k, &op); k++) {
		assert_int_equal(op.piece, 0);
		assert_false(op.behind);
	}
	fake_engine_run(f->ctx->engine);
	aiod_load_close_all(f->ctx, &os);
}

/* Play stream i from block 0 to block upto, the device keeping up. */
static void play(struct fixture *f, int i, uint64_t upto)
{
	for (uint64_t b = 0; b <= upto; b++) {
		client_read(f, i, b);
		fake_engine_run(f->ctx->engine);
	}
}

static void test_ra_behind_catches_up(void **state)
{
	struct fixture *f = *state;
	struct fake_engine_op_info op;
	uint64_t d_behind = UINT64_MAX, d_ahead = UINT64_MAX, asked_behind = 0;

	/* Stream 1 has its whole window; stream 0's last read-ahead was lost (evicted). */
	play(f, 0, 20);
	play(f, 1, 20);
	assert_int_equal(fake_engine_pending(f->ctx->engine), 0);
	for (uint64_t b = 22; b < 22 + 40; b++) {
		struct aiod_block *blk = aiod_cache_find(f->ctx->cache, f->o[0]->file->dev,
							 f->o[0]->file->ino, b);
		if (blk != NULL) {
			aiod_cache_detach(f->ctx->cache, blk);
		}
	}
	client_read(f, 1, 21);
	client_read(f, 0, 21);
	for (unsigned k = 0; fake_engine_op(f->ctx->engine, k, &op); k++) {
		if (which(f, op.fd) == 0) {
			d_behind = op.deadline_ns < d_behind ? op.deadline_ns : d_behind;
			asked_behind += op.len / BS;
		} else {
			d_ahead = op.deadline_ns < d_ahead ? op.deadline_ns : d_ahead;
		}
	}
	/* The stream that fell behind is served first, and asks for the whole gap at once. */
	assert_true(d_behind < d_ahead);
	assert_true(asked_behind >= 32);
}

static void test_ra_protects_and_rereads_window(void **state)
{
	struct fixture *f = *state;
	struct aiod_cache *c = f->ctx->cache;
	struct aiod_open *o = f->o[0];
	struct aiod_block *b, *held[NBLOCKS];
	struct fake_engine_op_info op;
	uint32_t window, nheld = 0, lru, ncached = 0;
	bool reread = false, was_cached[NBLOCKS] = { false };

	/*
	 * Oldest first: stream 2 played long ago, then stream 0 (its start and
	 * read-ahead stay cached), then stream 1.
	 */
	play(f, 2, 10);
	play(f, 0, 10);
	play(f, 1, 30);
	/* Stream 0 replays from the start: its window is checked, and touched. */
	o->next_off = 0;
	o->seq_hits = 0;
	window = client_read(f, 0, 0);
	assert_true(window > 16);
	assert_int_equal(fake_engine_pending(f->ctx->engine), 0);	/* nothing to read yet */
	for (uint64_t k = 1; k <= window; k++) {
		was_cached[k] = aiod_cache_find(c, o->file->dev, o->file->ino, k) != NULL;
		ncached += was_cached[k];
	}
	assert_true(ncached > 32);
	/* Another reader takes all but window blocks: the window is what stays. */
	while ((b = aiod_cache_get(c)) != NULL && c->free.count > 0) {
		held[nheld++] = b;
	}
	assert_non_null(b);
	held[nheld++] = b;
	lru = c->lru.count;
	assert_true(lru > ncached);
	for (uint32_t k = 0; k < lru - ncached; k++) {
		held[nheld++] = aiod_cache_get(c);
	}
	/* Every block of the window that was cached still is. */
	for (uint64_t k = 1; k <= window; k++) {
		assert_int_equal(aiod_cache_find(c, o->file->dev, o->file->ino, k) != NULL,
				 was_cached[k]);
	}
	for (uint32_t k = 0; k < nheld; k++) {
		aiod_cache_unref(c, held[k]);
	}
	/* A block of the window that went anyway is found missing and read again. */
	b = aiod_cache_find(c, o->file->dev, o->file->ino, 5);
	assert_non_null(b);
	aiod_cache_detach(c, b);
	client_read(f, 0, 1);
	for (unsigned k = 0; fake_engine_op(f->ctx->engine, k, &op); k++) {
		if (which(f, op.fd) == 0 && op.off <= 5ull * BS && op.off + op.len > 5ull * BS) {
			reread = true;
		}
	}
	assert_true(reread);
}

static void test_ra_no_ramp_with_a_cached_lead(void **state)
{
	struct fixture *f = *state;
	struct aiod_cache *c = f->ctx->cache;
	struct aiod_open *o = f->o[0];
	struct fake_engine_op_info op;

	/* An earlier playback cached blocks up to ~55; drop 40 on. */
	play(f, 0, 10);
	for (uint64_t b = 40; b < 80; b++) {
		struct aiod_block *blk = aiod_cache_find(c, o->file->dev, o->file->ino, b);

		if (blk != NULL) {
			aiod_cache_detach(c, blk);
		}
	}
	/* The replay jumps back to block 5 and plays on: 30+ blocks of lead are cached. */
	client_read(f, 0, 5);
	client_read(f, 0, 6);
	assert_true(fake_engine_op(f->ctx->engine, 0, &op));
	assert_int_equal(op.off, 40ull * BS);
	assert_int_equal(op.len, 16ull * BS);	/* io_size at once: no start-up ramp */
}

static void test_ra_played_blocks_go_first(void **state)
{
	struct fixture *f = *state;
	struct aiod_cache *c = f->ctx->cache;
	struct aiod_open *o = f->o[0];
	struct aiod_peer peer;
	uint32_t head = aiod_stream_head_blocks(f->ctx, o);
	struct aiod_block *b;
	unsigned k, played = 0;

	memset(&peer, 0, sizeof(peer));
	assert_int_equal(head, 16);	/* (1 s prebuffer + 1 s) at 8 blocks a second */
	/* Another stream's blocks, older: plain LRU would evict these first. */
	play(f, 1, 30);
	/* Stream 0 plays 0..40, each read copied out of the cache (HIT). */
	client_read(f, 0, 0);
	fake_engine_run(f->ctx->engine);
	for (uint64_t blk = 1; blk <= 40; blk++) {
		/* (a block read before its read-ahead landed is loaded after: not played from cache) */
		if (blk >= head && aiod_cache_find(c, o->file->dev, o->file->ino, blk) != NULL) {
			played++;
		}
		aiod_read_hit(f->ctx, &peer, o, blk * BS, BS);
		fake_engine_run(f->ctx->engine);
	}
	assert_true(played >= 20);
	/* The first blocks eviction takes are the ones stream 0 played through past its head. */
	for (k = 0, b = c->lru.head; k < played && b != NULL; k++, b = b->next) {
		assert_int_equal(b->ino, o->file->ino);
		assert_true(b->blkno >= head && b->blkno <= 40);
	}
	assert_int_equal(k, played);
	/* ...and then stream 1's older blocks, which plain LRU would have taken first. */
	assert_non_null(b);
	assert_int_equal(b->ino, f->o[1]->file->ino);
	/* The head stays cached (block 0 was never loaded: client_read() only reads ahead). */
	for (uint64_t blk = 1; blk < head; blk++) {
		assert_non_null(aiod_cache_find(c, o->file->dev, o->file->ino, blk));
	}
	/* A read that ends inside a block has not played it through: not demoted. */
	b = c->lru.head;
	aiod_cache_touch(c, b);		/* as if read ahead again: the most recently used */
	aiod_read_hit(f->ctx, &peer, o, b->blkno * BS, BS / 2);
	assert_ptr_not_equal(c->lru.head, b);
	/* The same read to the block's end demotes it. */
	aiod_read_hit(f->ctx, &peer, o, b->blkno * BS + BS / 2, BS / 2);
	assert_ptr_equal(c->lru.head, b);
}

/* Release a READ0 lease of o on block b, read [off, off + len). */
static void release_lease(struct aiod_ctx *ctx, struct aiod_peer *peer, struct aiod_open *o,
			  struct aiod_block *b, uint64_t off, uint32_t len, bool write)
{
	struct aiod_lease *l = aiod_lease_new(peer);

	assert_non_null(l);
	aiod_cache_ref(ctx->cache, b);
	aiod_open_busy(o);
	l->write = write;
	l->open = o;
	l->off = off;
	l->len = len;
	l->blocks[0] = b;
	l->nblocks = 1;
	aiod_lease_release(peer, l);
}

/* The same rule on the READ0 path (sendfile, rtio:hits = aiod): the lease's release demotes. */
static void test_ra_played_blocks_go_first_read0(void **state)
{
	struct fixture *f = *state;
	struct aiod_cache *c = f->ctx->cache;
	struct aiod_open *o = f->o[0];
	uint32_t head = aiod_stream_head_blocks(f->ctx, o);
	struct aiod_lease leases[2];
	struct aiod_peer peer;
	struct aiod_block *b, *h;

	memset(&peer, 0, sizeof(peer));
	memset(leases, 0, sizeof(leases));
	peer.ctx = f->ctx;
	peer.leases = leases;
	peer.nleases = 2;
	play(f, 0, 4);
	b = aiod_cache_find(c, o->file->dev, o->file->ino, head + 2);
	h = aiod_cache_find(c, o->file->dev, o->file->ino, head - 2);
	assert_non_null(b);
	assert_non_null(h);
	/* Read to its end through a lease: first to go once released. */
	release_lease(f->ctx, &peer, o, b, (head + 2) * (uint64_t)BS, BS, false);
	assert_ptr_equal(c->lru.head, b);
	assert_int_equal(b->refs, 0);
	/* Ending inside the block: the most recently used, as before. */
	release_lease(f->ctx, &peer, o, b, (head + 2) * (uint64_t)BS, BS / 2, false);
	assert_ptr_equal(c->lru.tail, b);
	/* A write lease is no playback. */
	release_lease(f->ctx, &peer, o, b, (head + 2) * (uint64_t)BS, BS, true);
	assert_ptr_equal(c->lru.tail, b);
	/* The head stays, for a replay. */
	release_lease(f->ctx, &peer, o, h, (head - 2) * (uint64_t)BS, BS, false);
	assert_ptr_equal(c->lru.tail, h);
	assert_int_equal(peer.pinned, 0);
}

/*
 * A read the client waits for goes before read-ahead another stream queued
 * a moment earlier: read-ahead is due when the reader gets there, one read
 * after the one it made (1 block = 125 ms here), not as early as that read.
 */
static void test_ra_demand_before_readahead(void **state)
{
	struct fixture *f = *state;
	struct fake_engine_op_info op;
	uint64_t period = 125000000ull, now, demand;

	f->ctx->capacity_Bps = 1600000;	/* a round guard, the same for both */
	client_read(f, 0, 0);
	assert_true(fake_engine_op(f->ctx->engine, 0, &op));
	assert_int_equal(op.off, BS);
	now = aiod_now_ns();
	demand = aiod_stream_demand_deadline(f->ctx, f->o[1], 0);
	assert_true(demand >= now - aiod_stream_round_ns(f->ctx) - 1000000ull);
	/* stream 1's first read, asked after stream 0's read-ahead was queued, is due first */
	assert_true(demand < op.deadline_ns);
	assert_true(op.deadline_ns + aiod_stream_round_ns(f->ctx) >= now + period - 50000000ull);
	/* A jump forward is wanted now too, not when playback would have got there. */
	client_read(f, 1, 0);
	f->o[1]->next_off = BS;
	assert_true(aiod_stream_demand_deadline(f->ctx, f->o[1], 0) <= demand + 50000000ull);
	/* The read-ahead after a read of block b is due one block on. */
	client_read(f, 2, 10);
	client_read(f, 2, 11);
	now = aiod_now_ns();
	assert_true(aiod_stream_deadline(f->ctx, f->o[2], 12ull * BS, 0) + aiod_stream_round_ns(f->ctx) >=
		    now + period - 1000000ull);
}

static void test_ra_round_guard(void **state)
{
	struct fixture *f = *state;
	struct aiod_open *o = f->o[0];
	uint64_t now, d, round;

	/* 4 streams admitted, 16-block requests at 1.6 MB/s: 16 * 64 KiB / 1.6 MB/s * 4. */
	f->ctx->capacity_Bps = 1600000;
	round = aiod_stream_round_ns(f->ctx);
	assert_int_equal(f->ctx->streams, NFILES);
	assert_true(round > 2600000000ull && round < 2630000000ull);
	/* A refill due in 8 s (64 blocks at 8 blocks/s) is due a round earlier. */
	o->next_off = 0;
	now = aiod_now_ns();
	d = aiod_stream_deadline(f->ctx, o, 64ull * BS, 0);
	assert_true(d >= now + 8000000000ull - round - 1000000ull);
	assert_true(d <= now + 8000000000ull - round + 50000000ull);
	/* Without a known capacity there is no guard. */
	f->ctx->capacity_Bps = 0;
	assert_int_equal(aiod_stream_round_ns(f->ctx), 0);
}

/*
 * A stream that closes, its file's last open: the read-ahead the device has
 * not begun is dropped (its blocks free again), and its reservation goes at
 * once, not when its loads are back (aiod_load_close()).
 */
static void test_ra_close_drops_readahead(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	uint32_t streams = ctx->streams, free_before = ctx->cache->free.count;

	assert_true(f->o[0]->reserved);
	client_read(f, 0, 0);
	assert_true(fake_engine_pending(ctx->engine) > 0);
	assert_true(ctx->cache->pinned > 0);
	assert_true(ctx->cache->free.count < free_before);
	aiod_load_close(ctx, &f->os, f->o[0]);
	f->o[0] = NULL;
	assert_int_equal(fake_engine_pending(ctx->engine), 0);
	assert_int_equal(ctx->cache->pinned, 0);
	assert_int_equal(ctx->cache->free.count, free_before);
	assert_int_equal(ctx->streams, streams - 1);
}

/*
 * The same file open twice (two clients on one clip): the one that closes
 * leaves the read-ahead to the other, but still gives back its reservation
 * now. Its descriptor stays until the loads that use it are back.
 */
static void test_ra_close_keeps_readahead_of_a_shared_file(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct aiod_open *twin = NULL;
	uint32_t streams;
	unsigned pending;
	int fd = dup(f->o[0]->fd);

	assert_true(fd >= 0);
	assert_int_equal(aiod_open_add(ctx, &f->os, fd, "s0.mxf", 0, &twin), 0);
	assert_ptr_equal(twin->file, f->o[0]->file);
	streams = ctx->streams;
	client_read(f, 0, 0);
	pending = fake_engine_pending(ctx->engine);
	assert_true(pending > 0);
	aiod_load_close(ctx, &f->os, f->o[0]);
	f->o[0] = NULL;
	assert_int_equal(fake_engine_pending(ctx->engine), pending);
	assert_int_equal(ctx->streams, streams - 1);
	assert_int_equal(fake_engine_run(ctx->engine), pending);
}

/*
 * A stream that jumps far ahead (an editor scrubbing to another scene): the
 * read-ahead it queued where it was goes, its blocks back to the free
 * list; another stream's stays, and the new place reads ahead from there.
 */
static void test_ra_jump_drops_readahead_left_behind(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct fake_engine_op_info op;
	uint32_t free_before = ctx->cache->free.count;
	unsigned mine, others;

	client_read(f, 0, 0);
	mine = fake_engine_pending(ctx->engine);
	assert_true(mine >= 2);
	client_read(f, 1, 0);
	others = fake_engine_pending(ctx->engine) - mine;
	assert_true(others >= 2);
	aiod_load_jump(ctx, f->o[0], 300 * (uint64_t)BS);
	assert_int_equal(fake_engine_pending(ctx->engine), others);
	for (unsigned k = 0; fake_engine_op(ctx->engine, k, &op); k++) {
		assert_int_equal(which(f, op.fd), 1);
	}
	fake_engine_run(ctx->engine);
	aiod_load_close(ctx, &f->os, f->o[1]);	/* its blocks back too */
	f->o[1] = NULL;
	assert_int_equal(ctx->cache->pinned, 0);
	assert_int_equal(ctx->cache->free.count + ctx->cache->lru.count, free_before);
	/* From the new place on: its first read, then read-ahead past it. */
	client_read(f, 0, 300);
	client_read(f, 0, 301);
	assert_true(fake_engine_op(ctx->engine, 0, &op));
	for (unsigned k = 0; fake_engine_op(ctx->engine, k, &op); k++) {
		assert_true(op.off >= 302 * (uint64_t)BS);
	}
}

/*
 * Reads that arrive a little out of order (a client sends several at once)
 * are not a jump away from the window: nothing is dropped, ahead or behind;
 * a jump back by two reaches is.
 */
static void test_ra_near_reads_keep_readahead(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct aiod_open *o = f->o[0];
	unsigned pending;
	uint64_t b = 150;	/* playing from the middle: a jump back to the start is far */

	for (; b < 190; b++) {
		client_read(f, 0, b);
		fake_engine_run(ctx->engine);
	}
	/* Playing on until a refill is queued (one goes once a whole request fits). */
	for (; fake_engine_pending(ctx->engine) == 0 && b < FILE_BLKS - 20; b++) {
		client_read(f, 0, b);
	}
	pending = fake_engine_pending(ctx->engine);
	assert_true(pending >= 1);
	aiod_load_jump(ctx, o, (b + 1) * (uint64_t)BS);	/* b expected: b + 1 came first */
	assert_int_equal(fake_engine_pending(ctx->engine), pending);
	aiod_load_jump(ctx, o, (b - 2) * (uint64_t)BS);	/* a read of the block before */
	assert_int_equal(fake_engine_pending(ctx->engine), pending);
	aiod_load_jump(ctx, o, 0);			/* back to the start: far */
	assert_int_equal(fake_engine_pending(ctx->engine), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ra_startup_ramp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_ramp_starts_where_the_device_keeps_up, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ra_ramp_follows_streams_joining, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_first_load_grows_to_the_ramp_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_ramp_mixed_bitrates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_best_effort_readers_together, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_best_effort_loads_in_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_streams_together_each_start_first, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ra_behind_catches_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_protects_and_rereads_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_no_ramp_with_a_cached_lead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_round_guard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_demand_before_readahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_played_blocks_go_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_played_blocks_go_first_read0, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_close_drops_readahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ra_close_keeps_readahead_of_a_shared_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ra_jump_drops_readahead_left_behind, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ra_near_reads_keep_readahead, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
