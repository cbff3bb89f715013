/*
 * Unit tests: a read given to the device in pieces one behind the other
 * (aiod/engine_behind.c; aiod_engine_slice_fn's *behind), with a real ring
 * on a temporary file and queue depth 1: the device holds at most the piece
 * it reads and the one behind it, the read's callback runs once with its
 * bytes up to the end of the file, and a read due sooner waits for no more
 * than the two pieces already in the kernel.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "clock.h"
#include "engine.h"

#define BLK 4096u

struct rec {
	struct aiod_engine *e;
	int result;
	unsigned calls;
	unsigned order;		/* completions before this one */
	uint64_t sliced;	/* the engine's pieces so far when it completed */
	unsigned *count;
};

static void rdone(void *private_data, int result)
{
	struct rec *r = private_data;
	struct aiod_engine_stats st;

	aiod_engine_get_stats(r->e, &st);
	r->result = result;
	r->sliced = st.sliced;
	r->order = (*r->count)++;
	r->calls++;
}

static bool match_any(void *private_data, void *arg)
{
	(void)private_data;
	(void)arg;
	return true;
}

/* X (arg) in one-block pieces, one behind the other. */
static uint32_t slice_behind(void *arg, aiod_engine_done_fn fn, void *private_data, bool *behind)
{
	if (fn != rdone || private_data != arg) {
		return 0;
	}
	*behind = true;
	return BLK;
}

/* A temporary file of size bytes, byte k of block i being 0x30 + i. */
static int pattern_file(uint32_t size)
{
	char path[] = "/tmp/rtio-engine-behind.XXXXXX";
	uint8_t block[BLK];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(unlink(path), 0);
	for (uint32_t off = 0; off < size; off += BLK) {
		uint32_t n = size - off < BLK ? size - off : BLK;

		memset(block, 0x30 + (int)(off / BLK), sizeof(block));
		assert_int_equal(pwrite(fd, block, n, off), (ssize_t)n);
	}
	return fd;
}

/* Run the loop until a (and b, unless NULL) completed, never more than two requests in the kernel. */
static void drive(struct tevent_context *ev, struct aiod_engine *e, const struct rec *a,
		  const struct rec *b)
{
	struct aiod_engine_stats st;

	while (a->calls == 0 || (b != NULL && b->calls == 0)) {
		assert_int_equal(tevent_loop_once(ev), 0);
		aiod_engine_get_stats(e, &st);
		assert_true(st.inflight <= 2);
	}
}

/* The first n bytes of bufs are the file's (pattern_file()). */
static void check_pattern(const uint8_t *bufs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (bufs[i] != 0x30 + i / BLK) {
			fail_msg("byte %u: 0x%02x", i, bufs[i]);
		}
	}
}

/*
 * X, a 4-block read of a file of file_bytes, goes in pieces one behind the
 * other; B, a one-block read elsewhere due b_due_ms from now, is queued
 * once the first two pieces are in the kernel (b_due_ms 0: no B). Asserts
 * X's result (its bytes up to the end of the file), the
 * buffers, that the device never held more than two requests, and that B
 * completed after pieces_before_b of X's pieces were handed out.
 */
static void run_behind(uint32_t file_bytes, uint64_t b_due_ms, uint64_t pieces_before_b)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev = tevent_context_init(mem);
	uint8_t *bufs = talloc_zero_array(mem, uint8_t, 5 * BLK);
	char err[256];
	struct aiod_engine *e;
	struct aiod_engine_stats st;
	unsigned count = 0;
	struct rec x = { .count = &count }, b = { .count = &count };
	uint32_t xb[] = { 0, 1, 2, 3 }, expect = file_bytes < 4 * BLK ? file_bytes : 4 * BLK;
	uint64_t now = aiod_now_ns();
	int fd = pattern_file(file_bytes < 8 * BLK ? 8 * BLK : file_bytes);

	if (file_bytes < 8 * BLK) {
		assert_int_equal(ftruncate(fd, file_bytes), 0);
	}
	memset(bufs, 0xee, 5 * BLK);
	e = aiod_engine_create(mem, ev, 1, bufs, BLK, 5, err, sizeof(err));
	assert_non_null(e);
	x.e = b.e = e;
	aiod_engine_set_costs(e, 10000000, 100000000);	/* 10 ms, 100 MB/s */
	aiod_engine_set_slice(e, slice_behind, &x);
	assert_int_equal(aiod_engine_readv(e, fd, xb, 4, 0, now + 120000000000ull, rdone, &x), 0);
	assert_int_equal(tevent_loop_once(ev), 0);	/* X's first piece, and the one behind it */
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.inflight, 2);
	assert_int_equal(st.sliced, 2);
	assert_int_equal(st.behind, 1);	/* the second piece, with the one slot taken */
	/* Its pieces are in the kernel: a cancel leaves the read to finish. */
	assert_int_equal(aiod_engine_cancel(e, rdone, match_any, NULL), 0);
	if (b_due_ms > 0) {
		assert_int_equal(aiod_engine_read(e, fd, 4, 0, BLK, 6 * BLK,
						  now + b_due_ms * 1000000, rdone, &b), 0);
	}
	drive(ev, e, &x, b_due_ms > 0 ? &b : NULL);
	assert_int_equal(x.calls, 1);
	assert_int_equal(x.result, (int)expect);
	check_pattern(bufs, expect);
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.completed, b_due_ms > 0 ? 2 : 1);
	if (b_due_ms > 0) {
		assert_int_equal(b.result, (int)BLK);
		assert_int_equal(bufs[4 * BLK], 0x36);
		assert_int_equal(b.sliced, pieces_before_b);
	}
	close(fd);
	talloc_free(mem);
}

/* The whole read: pieces 1 and 2, then 3 behind 2; the last block goes as the read itself. */
static void test_behind_whole_read(void **state)
{
	(void)state;
	run_behind(8 * BLK, 0, 0);
}

/* The file ends inside the third piece, at a piece's end, inside the first, at its start. */
static void test_behind_end_of_file(void **state)
{
	(void)state;
	run_behind(2 * BLK + BLK / 2, 0, 0);
	run_behind(2 * BLK, 0, 0);
	run_behind(BLK / 2, 0, 0);
	run_behind(0, 0, 0);
}

/*
 * B is due at once: no piece goes behind the two in the kernel, and B goes
 * next (after two pieces of X); due in a minute, X's pieces go on first.
 */
static void test_behind_due_read_waits_for_two_pieces(void **state)
{
	(void)state;
	run_behind(8 * BLK, 1, 2);
	run_behind(8 * BLK, 60000, 3);
}

/* Every read of rdone in one-block pieces, one behind the other. */
static uint32_t slice_all(void *arg, aiod_engine_done_fn fn, void *private_data, bool *behind)
{
	(void)arg;
	(void)private_data;
	if (fn != rdone) {
		return 0;
	}
	*behind = true;
	return BLK;
}

/*
 * X, one block, and then Y, the next 4 blocks of the same file (a reader's
 * next read-ahead): Y's first piece goes to the kernel behind X, in the
 * same submission (with the one slot taken by X); both read whole, never
 * more than two requests in the kernel.
 */
static void test_behind_next_read_follows(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev = tevent_context_init(mem);
	uint8_t *bufs = talloc_zero_array(mem, uint8_t, 5 * BLK);
	char err[256];
	struct aiod_engine *e;
	struct aiod_engine_stats st;
	unsigned count = 0;
	struct rec x = { .count = &count }, y = { .count = &count };
	uint32_t yb[] = { 1, 2, 3, 4 };
	uint64_t now = aiod_now_ns();
	int fd = pattern_file(8 * BLK);

	(void)state;
	e = aiod_engine_create(mem, ev, 1, bufs, BLK, 5, err, sizeof(err));
	assert_non_null(e);
	x.e = y.e = e;
	aiod_engine_set_costs(e, 10000000, 100000000);
	aiod_engine_set_slice(e, slice_all, NULL);
	assert_int_equal(aiod_engine_read(e, fd, 0, 0, BLK, 0, now + 60000000000ull, rdone, &x), 0);
	assert_int_equal(aiod_engine_readv(e, fd, yb, 4, BLK, now + 61000000000ull, rdone, &y), 0);
	assert_int_equal(tevent_loop_once(ev), 0);	/* X, and Y's first piece behind it */
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.inflight, 2);
	assert_int_equal(st.behind, 1);
	assert_int_equal(st.sliced, 1);
	drive(ev, e, &x, &y);
	assert_int_equal(x.result, (int)BLK);
	assert_int_equal(y.result, (int)(4 * BLK));
	assert_int_equal(x.order, 0);
	check_pattern(bufs, 5 * BLK);
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.completed, 2);
	close(fd);
	talloc_free(mem);
}

/*
 * Three write-back runs of one file, A (blocks 0-1), B (2-3) and C (5-6),
 * due in that order, waited (AIOD_WB_WAIT), with flags: B goes to the
 * kernel behind A in the same submission when it may (AIOD_WB_BEHIND, and
 * the engine allows it) and starts where A ends; C, which does not continue
 * B, never goes behind.
 */
static void run_writeback_behind(unsigned b_flags, bool allowed, unsigned expect_behind)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev = tevent_context_init(mem);
	uint8_t *bufs = talloc_zero_array(mem, uint8_t, BLK);
	char err[256];
	struct aiod_engine *e;
	struct aiod_engine_stats st;
	unsigned count = 0;
	struct rec a = { .count = &count }, b = { .count = &count }, c = { .count = &count };
	uint64_t now = aiod_now_ns();
	unsigned both = AIOD_WB_WAIT | AIOD_WB_BEHIND;
	int fd = pattern_file(8 * BLK);	/* its pages dirty */

	e = aiod_engine_create(mem, ev, 1, bufs, BLK, 1, err, sizeof(err));
	assert_non_null(e);
	a.e = b.e = c.e = e;
	aiod_engine_set_costs(e, 10000000, 100000000);
	if (!allowed) {
		aiod_engine_set_writeback_behind(e, false);
	}
	assert_int_equal(aiod_engine_writeback(e, fd, 0, 2 * BLK, both, now + 1000000000ull,
					       rdone, &a), 0);
	assert_int_equal(aiod_engine_writeback(e, fd, 2 * BLK, 2 * BLK, b_flags,
					       now + 2000000000ull, rdone, &b), 0);
	assert_int_equal(aiod_engine_writeback(e, fd, 5 * BLK, 2 * BLK, both, now + 3000000000ull,
					       rdone, &c), 0);
	assert_int_equal(tevent_loop_once(ev), 0);
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.behind, expect_behind);
	assert_int_equal(st.inflight, 1 + expect_behind);
	while (c.calls == 0) {
		assert_int_equal(tevent_loop_once(ev), 0);
		aiod_engine_get_stats(e, &st);
		assert_true(st.inflight <= 2);
	}
	assert_int_equal(a.result, 0);
	assert_int_equal(b.result, 0);
	assert_int_equal(c.result, 0);
	assert_int_equal(c.order, 2);
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.behind, expect_behind);	/* C never went behind B */
	close(fd);
	talloc_free(mem);
}

static void test_behind_writeback_runs(void **state)
{
	(void)state;
	run_writeback_behind(AIOD_WB_WAIT | AIOD_WB_BEHIND, true, 1);
	run_writeback_behind(AIOD_WB_WAIT, true, 0);
	/* while streams are admitted (aiod turns it off) */
	run_writeback_behind(AIOD_WB_WAIT | AIOD_WB_BEHIND, false, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_behind_whole_read),
		cmocka_unit_test(test_behind_end_of_file),
		cmocka_unit_test(test_behind_due_read_waits_for_two_pieces),
		cmocka_unit_test(test_behind_next_read_follows),
		cmocka_unit_test(test_behind_writeback_runs),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("engine_behind", tests, NULL, NULL);
}
