/*
 * Unit tests: the io_uring engine's choice of what goes to the device next
 * and how large (aiod/engine.c), with a real ring on a temporary file. Queue depth 1, so
 * the order operations complete in is the order the engine handed them on.
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

#include "clock.h"
#include "engine.h"

#define BLK 4096u

struct order {
	char seen[8];
	unsigned n;
};

struct op_tag {
	struct order *o;
	char name;
};

static void done(void *private_data, int result)
{
	struct op_tag *t = private_data;

	assert_int_equal(result, (int)BLK);
	t->o->seen[t->o->n++] = t->name;
}

/* An unlinked temporary file of size bytes (its blocks zero unless written). */
static int scratch_file(off_t size)
{
	char path[] = "/tmp/rtio-engine.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ftruncate(fd, size), 0);
	return fd;
}

/* An engine of queue depth 1 over nblocks zeroed cache blocks, and its event loop, on mem. */
static struct aiod_engine *new_engine(TALLOC_CTX *mem, uint32_t nblocks,
				      struct tevent_context **ev)
{
	uint8_t *bufs = talloc_zero_array(mem, uint8_t, nblocks * BLK);
	char err[256];
	struct aiod_engine *e;

	*ev = tevent_context_init(mem);
	assert_non_null(*ev);
	assert_non_null(bufs);
	e = aiod_engine_create(mem, *ev, 1, bufs, BLK, nblocks, err, sizeof(err));
	assert_non_null(e);
	return e;
}

/* Runs ev until as many operations as expect names are done; they were done in that order. */
static void expect_order(struct tevent_context *ev, const struct order *o, const char *expect)
{
	while (o->n < strlen(expect)) {
		assert_int_equal(tevent_loop_once(ev), 0);
	}
	assert_memory_equal(o->seen, expect, strlen(expect));
}

/*
 * A (due first) is dispatched at once. Then B is the earliest deadline and C
 * starts where A ended: with request costs known and B's deadline far enough,
 * C goes first (no seek there and back); without them, plain EDF: B.
 */
/* aiod_engine_set_waited(): B's client waits for it (arg: which tag is waited for). */
static bool b_waited(void *arg, aiod_engine_done_fn fn, void *private_data)
{
	(void)fn;
	return private_data == arg;
}

static void run_waited(bool costs, uint64_t b_due_ms, bool waited, const char *expect)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev = tevent_context_init(mem);
	uint8_t *bufs = talloc_zero_array(mem, uint8_t, 3 * BLK);
	char err[256];
	struct aiod_engine *e;
	struct order o = { .n = 0 };
	struct op_tag a = { &o, 'A' }, b = { &o, 'B' }, c = { &o, 'C' };
	uint64_t now = aiod_now_ns();
	int fd = scratch_file(1 << 20);

	assert_non_null(ev);
	e = aiod_engine_create(mem, ev, 1, bufs, BLK, 3, err, sizeof(err));
	assert_non_null(e);
	if (costs) {
		aiod_engine_set_costs(e, 10000000, 100000000);	/* 10 ms, 100 MB/s */
	}
	if (waited) {
		aiod_engine_set_waited(e, b_waited, &b);
	}
	assert_int_equal(aiod_engine_read(e, fd, 0, 0, BLK, 0, now + 1000000, done, &a), 0);
	assert_int_equal(aiod_engine_read(e, fd, 1, 0, BLK, 512 * 1024, now + b_due_ms * 1000000,
					  done, &b), 0);
	assert_int_equal(aiod_engine_read(e, fd, 2, 0, BLK, BLK, now + 60000000000ull, done, &c), 0);
	expect_order(ev, &o, expect);
	close(fd);
	talloc_free(mem);
}

static void run(bool costs, uint64_t b_due_ms, const char *expect)
{
	run_waited(costs, b_due_ms, false, expect);
}

/*
 * A waited-for read that is not the head: H (another reader's read-ahead,
 * due 5 s) is the earliest deadline, B (a third reader's read its client
 * waits for, due 6 s: a best-effort read) after it, and C continues A. C
 * does not go before them: deadline order, H then B. With nobody waiting
 * for B, C goes first (it fits).
 */
static void run_waited_behind_head(bool waited, const char *expect)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev;
	struct aiod_engine *e = new_engine(mem, 4, &ev);
	struct order o = { .n = 0 };
	struct op_tag a = { &o, 'A' }, h = { &o, 'H' }, b = { &o, 'B' }, c = { &o, 'C' };
	uint64_t now = aiod_now_ns();
	int fa = scratch_file(1 << 20), fh = scratch_file(1 << 20), fb = scratch_file(1 << 20);

	aiod_engine_set_costs(e, 10000000, 100000000);	/* 10 ms, 100 MB/s */
	if (waited) {
		aiod_engine_set_waited(e, b_waited, &b);
	}
	assert_int_equal(aiod_engine_read(e, fa, 0, 0, BLK, 0, now + 1000000, done, &a), 0);
	assert_int_equal(aiod_engine_read(e, fh, 1, 0, BLK, 0, now + 5000000000ull, done, &h), 0);
	assert_int_equal(aiod_engine_read(e, fb, 2, 0, BLK, 0, now + 6000000000ull, done, &b), 0);
	assert_int_equal(aiod_engine_read(e, fa, 3, 0, BLK, BLK, now + 60000000000ull, done, &c), 0);
	expect_order(ev, &o, expect);
	close(fa);
	close(fh);
	close(fb);
	talloc_free(mem);
}

static void test_engine_no_continuation_past_a_waited_read_behind_the_head(void **state)
{
	(void)state;
	run_waited_behind_head(true, "AHBC");
	run_waited_behind_head(false, "ACHB");
}

static void test_engine_continues_when_it_fits(void **state)
{
	(void)state;
	run(true, 5000, "ACB");
}

static void test_engine_plain_edf_without_costs(void **state)
{
	(void)state;
	run(false, 5000, "ABC");
}

static void test_engine_no_continuation_past_a_deadline(void **state)
{
	(void)state;
	/* B is due before A's data could even be read: nothing goes ahead of it. */
	run(true, 1, "ABC");
}

static bool is_tag(void *arg, aiod_engine_done_fn fn, void *private_data)
{
	(void)fn;
	return private_data == arg;
}

/*
 * A queued read a client now waits for is made due sooner (read-ahead found
 * still queued by a reader that got there early): C was due before B, and
 * after B is expedited B goes first; an expedite to a later deadline, or of
 * nothing queued, changes nothing.
 */
static void test_engine_expedite(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev;
	struct aiod_engine *e = new_engine(mem, 3, &ev);
	struct aiod_engine_stats st;
	struct order o = { .n = 0 };
	struct op_tag a = { &o, 'A' }, b = { &o, 'B' }, c = { &o, 'C' }, none = { &o, 'N' };
	uint64_t now = aiod_now_ns();
	int fd = scratch_file(1 << 20);

	(void)state;
	assert_int_equal(aiod_engine_read(e, fd, 0, 0, BLK, 0, now + 1000000, done, &a), 0);
	assert_int_equal(aiod_engine_read(e, fd, 1, 0, BLK, 8 * BLK, now + 60000000000ull, done, &b), 0);
	assert_int_equal(aiod_engine_read(e, fd, 2, 0, BLK, 4 * BLK, now + 5000000000ull, done, &c), 0);
	assert_true(aiod_engine_expedite(e, is_tag, &c, now + 9000000000ull));	/* later: no change */
	assert_true(aiod_engine_expedite(e, is_tag, &b, now + 2000000));
	assert_false(aiod_engine_expedite(e, is_tag, &none, now));
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.expedited, 1);
	while (o.n < 3) {
		assert_int_equal(tevent_loop_once(ev), 0);
	}
	assert_memory_equal(o.seen, "ABC", 3);
	close(fd);
	talloc_free(mem);
}

/* A read waits on blocks of two queued loads (B, D): one call makes both due, C stays last. */
struct tag_set {
	const void *tags[2];
};

static bool is_in_set(void *arg, aiod_engine_done_fn fn, void *private_data)
{
	const struct tag_set *set = arg;

	(void)fn;
	return private_data == set->tags[0] || private_data == set->tags[1];
}

static void test_engine_expedite_every_match(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev;
	struct aiod_engine *e = new_engine(mem, 4, &ev);
	struct aiod_engine_stats st;
	struct order o = { .n = 0 };
	struct op_tag a = { &o, 'A' }, b = { &o, 'B' }, c = { &o, 'C' }, d = { &o, 'D' };
	struct tag_set bd = { { &b, &d } };
	uint64_t now = aiod_now_ns();
	int fd = scratch_file(1 << 20);

	(void)state;
	assert_int_equal(aiod_engine_read(e, fd, 0, 0, BLK, 0, now + 1000000, done, &a), 0);
	assert_int_equal(aiod_engine_read(e, fd, 1, 0, BLK, 8 * BLK, now + 60000000000ull, done, &b), 0);
	assert_int_equal(aiod_engine_read(e, fd, 2, 0, BLK, 4 * BLK, now + 5000000000ull, done, &c), 0);
	assert_int_equal(aiod_engine_read(e, fd, 3, 0, BLK, 12 * BLK, now + 50000000000ull, done, &d), 0);
	assert_true(aiod_engine_expedite(e, is_in_set, &bd, now + 2000000));
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.expedited, 2);
	while (o.n < 4) {
		assert_int_equal(tevent_loop_once(ev), 0);
	}
	assert_int_equal(o.seen[0], 'A');
	assert_true((o.seen[1] == 'B' && o.seen[2] == 'D') || (o.seen[1] == 'D' && o.seen[2] == 'B'));
	assert_int_equal(o.seen[3], 'C');
	close(fd);
	talloc_free(mem);
}

/* done(), or a dropped operation (-ECANCELED): its name in lower case. */
static void done_or_dropped(void *private_data, int result)
{
	struct op_tag *t = private_data;

	if (result == -ECANCELED) {
		t->o->seen[t->o->n++] = (char)(t->name - 'A' + 'a');
		return;
	}
	done(private_data, result);
}

/* aiod_engine_cancel()'s match: the operation is one of the set arg. */
static bool in_set(void *private_data, void *arg)
{
	return is_in_set(arg, done_or_dropped, private_data);
}

/*
 * Dropped operations (a closed stream's read-ahead, a cancelled write):
 * B and D are taken off the queue, their callbacks run with -ECANCELED
 * before the call returns, and the device never reads them; A and C are
 * read as if B and D had never been queued. One the device has begun is
 * not dropped: A, in the kernel.
 */
static void test_engine_cancel(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev;
	struct aiod_engine *e = new_engine(mem, 4, &ev);
	struct aiod_engine_stats st;
	struct order o = { .n = 0 };
	struct op_tag a = { &o, 'A' }, b = { &o, 'B' }, c = { &o, 'C' }, d = { &o, 'D' };
	struct tag_set bd = { { &b, &d } }, just_a = { { &a, &a } };
	uint64_t now = aiod_now_ns();
	int fd = scratch_file(1 << 20);

	(void)state;
	assert_int_equal(aiod_engine_read(e, fd, 0, 0, BLK, 0, now + 1000000, done_or_dropped, &a), 0);
	assert_int_equal(aiod_engine_read(e, fd, 1, 0, BLK, 8 * BLK, now + 2000000, done_or_dropped,
					  &b), 0);
	assert_int_equal(aiod_engine_read(e, fd, 2, 0, BLK, 4 * BLK, now + 5000000000ull,
					  done_or_dropped, &c), 0);
	assert_int_equal(aiod_engine_read(e, fd, 3, 0, BLK, 12 * BLK, now + 3000000, done_or_dropped,
					  &d), 0);
	/* The first turn of the loop hands A to the kernel; its completion comes later. */
	assert_int_equal(tevent_loop_once(ev), 0);
	assert_int_equal(o.n, 0);
	assert_int_equal(aiod_engine_cancel(e, done_or_dropped, in_set, &just_a), 0);
	assert_int_equal(aiod_engine_cancel(e, done, in_set, &bd), 0);	/* another callback's */
	assert_int_equal(aiod_engine_cancel(e, done_or_dropped, in_set, &bd), 2);
	assert_int_equal(o.n, 2);
	assert_true((o.seen[0] == 'b' && o.seen[1] == 'd') || (o.seen[0] == 'd' && o.seen[1] == 'b'));
	assert_int_equal(aiod_engine_cancel(e, done_or_dropped, in_set, &bd), 0);	/* none left */
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.queued, 1);	/* C */
	while (o.n < 4) {
		assert_int_equal(tevent_loop_once(ev), 0);
	}
	assert_memory_equal(o.seen + 2, "AC", 2);
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.submitted, 2);	/* B and D never went to the device */
	close(fd);
	talloc_free(mem);
}

static void test_engine_no_continuation_past_a_waited_read(void **state)
{
	(void)state;
	/*
	 * B's deadline is far (a best-effort read: 5 s), but a client waits for
	 * it now: C does not go first, though it starts where A ended.
	 */
	run_waited(true, 5000, true, "ABC");
}

/*
 * Growing a read when the device takes it (aiod_engine_set_grow):
 * W is in the kernel; X (blocks 0-1 of the file, or block 0 alone), Z
 * (elsewhere, due before Y) and Y (the two blocks or the one right after X)
 * wait. X may grow to want_blocks: it takes Y along when that fits, and Y
 * completes with its own part of the request (its bytes where its buffers
 * are), before Z. A read of one block is queued as a plain READ (the
 * registered buffer): it grows, and is taken along, all the same.
 */
struct vtag {
	struct order *o;
	char name;
	int result;
};

static void vdone(void *private_data, int result)
{
	struct vtag *t = private_data;

	t->result = result;
	t->o->seen[t->o->n++] = t->name;
}

struct grow_arg {
	void *who;
	uint64_t bytes;
};

static uint64_t grow_x(void *arg, aiod_engine_done_fn fn, void *private_data)
{
	struct grow_arg *g = arg;

	return fn == vdone && private_data == g->who ? g->bytes : 0;
}

static void run_grow_sized(uint32_t x_blocks, uint32_t y_blocks, uint32_t want_blocks,
			   off_t file_blocks, const char *expect, int y_result)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev = tevent_context_init(mem);
	uint8_t *bufs = talloc_zero_array(mem, uint8_t, 8 * BLK), pattern[BLK];
	char err[256];
	struct aiod_engine *e;
	struct aiod_engine_stats st;
	struct order o = { .n = 0 };
	struct vtag w = { &o, 'W', 0 }, x = { &o, 'X', 0 }, y = { &o, 'Y', 0 }, z = { &o, 'Z', 0 };
	struct grow_arg g = { &x, (uint64_t)want_blocks * BLK };
	uint64_t now = aiod_now_ns();
	uint32_t xb[] = { 1, 2 }, yb[] = { 4, 3 }, zb[] = { 5, 6 };
	/* W and Z read far from X and Y: within the file, or past its end when it is short */
	int fd = scratch_file(file_blocks < 4 ? file_blocks * BLK : 1 << 20);

	for (off_t i = 0; i < file_blocks; i++) {
		memset(pattern, (int)(0x10 + i), sizeof(pattern));
		assert_int_equal(pwrite(fd, pattern, BLK, i * BLK), (ssize_t)BLK);
	}
	e = aiod_engine_create(mem, ev, 1, bufs, BLK, 8, err, sizeof(err));
	assert_non_null(e);
	aiod_engine_set_grow(e, grow_x, &g);
	assert_int_equal(aiod_engine_read(e, fd, 0, 0, BLK, 64 * BLK, now, vdone, &w), 0);
	assert_int_equal(aiod_engine_readv(e, fd, xb, x_blocks, 0, now + 1000000, vdone, &x), 0);
	assert_int_equal(aiod_engine_readv(e, fd, zb, 2, 32 * BLK, now + 2000000, vdone, &z), 0);
	assert_int_equal(aiod_engine_readv(e, fd, yb, y_blocks, x_blocks * BLK, now + 3000000, vdone,
					   &y), 0);
	while (o.n < 4) {
		assert_int_equal(tevent_loop_once(ev), 0);
	}
	assert_memory_equal(o.seen, expect, 4);
	assert_int_equal(x.result, (int)(x_blocks * BLK));
	assert_int_equal(y.result, y_result);
	/* X's blocks (1, 2) hold file blocks 0 (and 1); Y's (4, 3) the ones after where the file has them */
	assert_int_equal(bufs[1 * BLK], 0x10);
	if (x_blocks == 2) {
		assert_int_equal(bufs[2 * BLK + BLK - 1], 0x11);
	}
	if (y_result >= (int)BLK) {
		assert_int_equal(bufs[4 * BLK], 0x10 + x_blocks);
		assert_int_equal(bufs[4 * BLK + BLK - 1], 0x10 + x_blocks);
	}
	if (y_result >= (int)(2 * BLK)) {
		assert_int_equal(bufs[3 * BLK], 0x11 + x_blocks);
	}
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.merged, strcmp(expect, "WXYZ") == 0 ? 1 : 0);
	assert_int_equal(st.completed, 4);
	close(fd);
	talloc_free(mem);
}

static void run_grow(uint32_t want_blocks, off_t file_blocks, const char *expect, int y_result)
{
	run_grow_sized(2, 2, want_blocks, file_blocks, expect, y_result);
}

static void test_engine_grow_takes_the_next_read_along(void **state)
{
	(void)state;
	run_grow(4, 8, "WXYZ", (int)(2 * BLK));
}

static void test_engine_grow_not_beyond_what_is_wanted(void **state)
{
	(void)state;
	/* X is already as large as its owner wants: plain EDF, Z before Y */
	run_grow(2, 8, "WXZY", (int)(2 * BLK));
}

static void test_engine_grow_splits_a_short_read(void **state)
{
	(void)state;
	/* the file ends in Y's first block: X gets its two, Y the one there is */
	run_grow(4, 3, "WXYZ", (int)BLK);
}

static void test_engine_grow_a_one_block_read(void **state)
{
	(void)state;
	/* a stream's first read, the client's one block, grows by the read-ahead behind it */
	run_grow_sized(1, 2, 3, 8, "WXYZ", (int)(2 * BLK));
}

static void test_engine_grow_takes_a_one_block_read_along(void **state)
{
	(void)state;
	run_grow_sized(2, 1, 3, 8, "WXYZ", (int)BLK);
}

static void test_engine_grow_one_block_not_beyond_what_is_wanted(void **state)
{
	(void)state;
	/* one block is all its owner wants: it goes alone, Z before Y */
	run_grow_sized(1, 2, 1, 8, "WXZY", (int)(2 * BLK));
}

/*
 * aiod_engine_rekey(): deadlines of queued operations change in place (the
 * stream round grew) and the queue follows them: X, due first when queued,
 * is moved after Y by its owner's rekey function; Y keeps its deadline.
 */
static uint64_t rekey_x(void *arg, aiod_engine_done_fn fn, void *private_data,
			uint64_t deadline_ns, uint64_t old_round_ns, uint64_t new_round_ns)
{
	(void)fn;
	return private_data == arg ? deadline_ns + old_round_ns + new_round_ns : deadline_ns;
}

static void test_engine_rekey_reorders_the_queue(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev = tevent_context_init(mem);
	uint8_t *bufs = talloc_zero_array(mem, uint8_t, 4 * BLK);
	char err[256];
	struct aiod_engine *e;
	struct order o = { .n = 0 };
	struct vtag w = { &o, 'W', 0 }, x = { &o, 'X', 0 }, y = { &o, 'Y', 0 }, z = { &o, 'Z', 0 };
	uint64_t now = aiod_now_ns();
	int fd = scratch_file(1 << 20);

	(void)state;
	e = aiod_engine_create(mem, ev, 1, bufs, BLK, 4, err, sizeof(err));
	assert_non_null(e);
	aiod_engine_set_rekey(e, rekey_x, &x);
	assert_int_equal(aiod_engine_read(e, fd, 0, 0, BLK, 0, now, vdone, &w), 0);
	assert_int_equal(aiod_engine_read(e, fd, 1, 0, BLK, 64 * BLK, now + 1000000, vdone, &x), 0);
	assert_int_equal(aiod_engine_read(e, fd, 2, 0, BLK, 128 * BLK, now + 2000000, vdone, &y), 0);
	assert_int_equal(aiod_engine_read(e, fd, 3, 0, BLK, 192 * BLK, now + 3000000, vdone, &z), 0);
	aiod_engine_rekey(e, 1000000, 1500000);	/* X: now + 3.5 ms, after Z */
	aiod_engine_rekey(e, 7, 7);		/* an unchanged round moves nothing */
	while (o.n < 4) {
		assert_int_equal(tevent_loop_once(ev), 0);
	}
	assert_memory_equal(o.seen, "WYZX", 4);
	close(fd);
	talloc_free(mem);
}

/*
 * aiod_engine_set_slice(): X, a 4-block read due last, reaches the device
 * first, one block at a time. B, a read elsewhere queued while X's first
 * block is at the device, is due before the rest of X could be read: it
 * goes next, and X completes after it with all four blocks. Due after the
 * rest of X, B waits for it (the rest starts where the piece ended). With no
 * slice function X goes whole and B waits either way.
 */
static uint32_t slice_x(void *arg, aiod_engine_done_fn fn, void *private_data, bool *behind)
{
	(void)behind;
	return fn == vdone && private_data == arg ? BLK : 0;
}

static void run_slice(bool slice, uint64_t b_due_ms, bool b_is_waited, const char *expect,
		      uint64_t pieces)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev = tevent_context_init(mem);
	uint8_t *bufs = talloc_zero_array(mem, uint8_t, 5 * BLK), pattern[BLK];
	char err[256];
	struct aiod_engine *e;
	struct aiod_engine_stats st;
	struct order o = { .n = 0 };
	struct vtag x = { &o, 'X', 0 }, b = { &o, 'B', 0 };
	uint64_t now = aiod_now_ns();
	uint32_t xb[] = { 0, 1, 2, 3 };
	int fd = scratch_file(1 << 20);

	for (off_t i = 0; i < 4; i++) {
		memset(pattern, (int)(0x20 + i), sizeof(pattern));
		assert_int_equal(pwrite(fd, pattern, BLK, i * BLK), (ssize_t)BLK);
	}
	e = aiod_engine_create(mem, ev, 1, bufs, BLK, 5, err, sizeof(err));
	assert_non_null(e);
	aiod_engine_set_costs(e, 10000000, 100000000);	/* 10 ms, 100 MB/s */
	if (slice) {
		aiod_engine_set_slice(e, slice_x, &x);
	}
	if (b_is_waited) {
		aiod_engine_set_waited(e, b_waited, &b);
	}
	assert_int_equal(aiod_engine_readv(e, fd, xb, 4, 0, now + 120000000000ull, vdone, &x), 0);
	assert_int_equal(tevent_loop_once(ev), 0);	/* X (or its first piece) to the device */
	assert_int_equal(aiod_engine_read(e, fd, 4, 0, BLK, 128 * BLK, now + b_due_ms * 1000000,
					  vdone, &b), 0);
	while (o.n < 2) {
		assert_int_equal(tevent_loop_once(ev), 0);
	}
	assert_memory_equal(o.seen, expect, 2);
	assert_int_equal(x.result, (int)(4 * BLK));
	assert_int_equal(b.result, (int)BLK);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(bufs[i * BLK], 0x20 + i);
		assert_int_equal(bufs[i * BLK + BLK - 1], 0x20 + i);
	}
	aiod_engine_get_stats(e, &st);
	assert_int_equal(st.sliced, pieces);
	assert_int_equal(st.resubmits, 0);
	assert_int_equal(st.completed, 2);
	close(fd);
	talloc_free(mem);
}

static void test_engine_slice_lets_a_due_read_in(void **state)
{
	(void)state;
	run_slice(true, 1, false, "BX", 3);
}

static void test_engine_slice_rest_follows_when_it_fits(void **state)
{
	(void)state;
	run_slice(true, 60000, false, "XB", 3);
}

/*
 * A client waiting for B does not let B in between X's pieces while B is
 * still on time after the rest (two bulk readers would seek every piece);
 * one that would be late goes first.
 */
static void test_engine_slice_waited_read_in_only_when_due(void **state)
{
	(void)state;
	run_slice(true, 60000, true, "XB", 3);
	run_slice(true, 1, true, "BX", 3);
}

static void test_engine_slice_off_reads_whole(void **state)
{
	(void)state;
	run_slice(false, 1, false, "XB", 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_continues_when_it_fits),
		cmocka_unit_test(test_engine_plain_edf_without_costs),
		cmocka_unit_test(test_engine_no_continuation_past_a_deadline),
		cmocka_unit_test(test_engine_no_continuation_past_a_waited_read),
		cmocka_unit_test(test_engine_no_continuation_past_a_waited_read_behind_the_head),
		cmocka_unit_test(test_engine_expedite),
		cmocka_unit_test(test_engine_expedite_every_match),
		cmocka_unit_test(test_engine_cancel),
		cmocka_unit_test(test_engine_grow_takes_the_next_read_along),
		cmocka_unit_test(test_engine_grow_not_beyond_what_is_wanted),
		cmocka_unit_test(test_engine_grow_splits_a_short_read),
		cmocka_unit_test(test_engine_grow_a_one_block_read),
		cmocka_unit_test(test_engine_grow_takes_a_one_block_read_along),
		cmocka_unit_test(test_engine_grow_one_block_not_beyond_what_is_wanted),
		cmocka_unit_test(test_engine_rekey_reorders_the_queue),
		cmocka_unit_test(test_engine_slice_lets_a_due_read_in),
		cmocka_unit_test(test_engine_slice_rest_follows_when_it_fits),
		cmocka_unit_test(test_engine_slice_off_reads_whole),
		cmocka_unit_test(test_engine_slice_waited_read_in_only_when_due),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
