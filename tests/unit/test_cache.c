/*
 * Unit tests: the block cache (aiod/cache.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cache.h"

#define BS 4096
#define NB 4

struct fixture {
	uint8_t data[BS * NB];
	struct aiod_cache *c;
};

static int setup(void **state)
{
	struct fixture *f = talloc_zero(NULL, struct fixture);

	assert_non_null(f);
	f->c = aiod_cache_create(f, f->data, BS, NB);
	assert_non_null(f->c);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	talloc_free(*state);
	return 0;
}

/* Load (dev 1, ino, blk) with n valid bytes of value v, leave it unreferenced. */
static struct aiod_block *load(struct aiod_cache *c, uint64_t ino, uint64_t blk, uint32_t n, int v)
{
	struct aiod_block *b = aiod_cache_get(c);

	assert_non_null(b);
	aiod_cache_insert(c, b, 1, ino, blk);
	memset(aiod_cache_block_data(c, b), v, n);
	aiod_cache_load_done(c, b, (int)n);
	aiod_cache_unref(c, b);
	return b;
}

static void test_cache_hit_after_load(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b = load(f->c, 10, 0, BS, 'a');

	assert_ptr_equal(aiod_cache_find(f->c, 1, 10, 0), b);
	assert_null(aiod_cache_find(f->c, 1, 10, 1));
	assert_null(aiod_cache_find(f->c, 2, 10, 0));	/* other device */
	assert_int_equal(b->state, AIOD_BLK_VALID);
	assert_int_equal(b->valid, BS);
	assert_int_equal(aiod_cache_used(f->c), 1);
	assert_int_equal(f->c->pinned, 0);
}

static void test_cache_evicts_only_unreferenced_lru_first(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b[NB];

	for (int i = 0; i < NB; i++) {
		b[i] = load(f->c, 10, (uint64_t)i, BS, i);
	}
	/* Pin block 0 (the oldest) and touch block 1 so block 2 is now the LRU victim. */
	aiod_cache_ref(f->c, b[0]);
	aiod_cache_ref(f->c, b[1]);
	aiod_cache_unref(f->c, b[1]);
	{
		struct aiod_block *n = aiod_cache_get(f->c);
		assert_ptr_equal(n, b[2]);
		assert_null(aiod_cache_find(f->c, 1, 10, 2));
		assert_ptr_equal(aiod_cache_find(f->c, 1, 10, 0), b[0]);
		aiod_cache_unref(f->c, n);	/* back to the free list, no data */
	}
	/* With all but the pinned one taken, the pinned one is never handed out. */
	{
		struct aiod_block *t[NB];
		int got = 0;
		while ((t[got] = aiod_cache_get(f->c)) != NULL) {
			assert_ptr_not_equal(t[got], b[0]);
			got++;
		}
		assert_int_equal(got, NB - 1);
		assert_int_equal(f->c->pinned, NB);
		for (int i = 0; i < got; i++) {
			aiod_cache_unref(f->c, t[i]);
		}
	}
	assert_int_equal(f->c->pinned, 1);
}

static int waiter_calls;
static int waiter_seen_valid;

static void waiter_fn(void *private_data, struct aiod_block *b)
{
	(void)private_data;
	waiter_calls++;
	waiter_seen_valid = (int)b->valid;
}

static void test_cache_coalesced_miss_wakes_all_waiters(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b = aiod_cache_get(f->c);
	struct aiod_block_waiter w1 = { NULL, waiter_fn, NULL }, w2 = { NULL, waiter_fn, NULL };

	aiod_cache_insert(f->c, b, 1, 20, 3);
	/* A second reader of the same block finds it loading and waits. */
	assert_ptr_equal(aiod_cache_find(f->c, 1, 20, 3), b);
	assert_int_equal(b->state, AIOD_BLK_LOADING);
	w1.next = b->waiters;
	b->waiters = &w1;
	w2.next = b->waiters;
	b->waiters = &w2;
	waiter_calls = 0;
	aiod_cache_load_done(f->c, b, 100);
	assert_int_equal(waiter_calls, 2);
	assert_int_equal(waiter_seen_valid, 100);
	assert_null(b->waiters);
	aiod_cache_unref(f->c, b);
	assert_ptr_equal(aiod_cache_find(f->c, 1, 20, 3), b);
}

static void test_cache_failed_load_is_not_found(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b = aiod_cache_get(f->c);

	aiod_cache_insert(f->c, b, 1, 21, 0);
	aiod_cache_load_done(f->c, b, -5);
	assert_int_equal(b->error, -5);
	assert_null(aiod_cache_find(f->c, 1, 21, 0));
	aiod_cache_unref(f->c, b);
	assert_int_equal(aiod_cache_used(f->c), 0);
}

static void test_cache_truncate_trims_and_drops(void **state)
{
	struct fixture *f = *state;

	load(f->c, 30, 0, BS, 'x');
	load(f->c, 30, 1, BS, 'y');
	load(f->c, 30, 2, 100, 'z');
	load(f->c, 31, 0, BS, 'o');	/* another file: untouched */
	/*
	 * blocks of ino 30:  |0 ......|1 ......|2 ..|
	 * new size:                  ^ BS + 10
	 *   block 0 stays, block 1 keeps 10 bytes, block 2 goes.
	 */
	assert_int_equal(aiod_cache_truncate(f->c, 1, 30, BS + 10), 1);
	assert_non_null(aiod_cache_find(f->c, 1, 30, 0));
	assert_int_equal(aiod_cache_find(f->c, 1, 30, 1)->valid, 10);
	assert_null(aiod_cache_find(f->c, 1, 30, 2));
	assert_non_null(aiod_cache_find(f->c, 1, 31, 0));
	/* Unlink: everything of the file goes. */
	assert_int_equal(aiod_cache_truncate(f->c, 1, 30, 0), 2);
	assert_null(aiod_cache_find(f->c, 1, 30, 0));
	assert_int_equal(aiod_cache_used(f->c), 1);
}

static void test_cache_truncate_keeps_pinned_bytes_for_holder(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b = load(f->c, 40, 0, BS, 'p');

	aiod_cache_ref(f->c, b);	/* a client is copying out of it */
	aiod_cache_truncate(f->c, 1, 40, 0);
	assert_null(aiod_cache_find(f->c, 1, 40, 0));	/* new readers miss */
	assert_int_equal(aiod_cache_block_data(f->c, b)[0], 'p');	/* holder's bytes intact */
	assert_int_equal(f->c->free.count, NB - 1);
	aiod_cache_unref(f->c, b);
	assert_int_equal(f->c->free.count, NB);		/* freed when released */
}

static void test_cache_write_through_updates_and_fills_hole(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b0 = load(f->c, 50, 0, BS, 'a');
	struct aiod_block *b1 = load(f->c, 50, 1, 10, 'b');	/* EOF at BS + 10 */
	uint8_t data[BS];
	uint8_t *p1 = aiod_cache_block_data(f->c, b1);

	memset(data, 'W', sizeof(data));
	/*
	 * write [BS - 4, BS + 20):  |0 ....WWWW|1 bbbbbbbbbb..........|
	 *                                        ^10 old EOF   ^20 + ...
	 * then a write at [BS + 30, BS + 32) leaves a hole [BS + 20, BS + 30): zeros.
	 */
	aiod_cache_write_through(f->c, 1, 50, BS - 4, data, 24);
	assert_memory_equal(aiod_cache_block_data(f->c, b0) + BS - 4, "WWWW", 4);
	assert_int_equal(aiod_cache_block_data(f->c, b0)[BS - 5], 'a');
	assert_int_equal(b1->valid, 20);
	memset(p1 + 20, 0x55, 10);	/* garbage beyond EOF must not show */
	aiod_cache_write_through(f->c, 1, 50, BS + 30, data, 2);
	assert_int_equal(b1->valid, 32);
	for (int i = 20; i < 30; i++) {
		assert_int_equal(p1[i], 0);
	}
	assert_int_equal(p1[30], 'W');
}

static void test_cache_write_through_detaches_loading(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b = aiod_cache_get(f->c);
	uint8_t d = 'q';

	aiod_cache_insert(f->c, b, 1, 60, 0);
	aiod_cache_write_through(f->c, 1, 60, 5, &d, 1);
	/* The read in flight may predate the write: later readers must not use it. */
	assert_null(aiod_cache_find(f->c, 1, 60, 0));
	aiod_cache_load_done(f->c, b, BS);
	aiod_cache_unref(f->c, b);
	assert_int_equal(aiod_cache_used(f->c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cache_hit_after_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_evicts_only_unreferenced_lru_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_coalesced_miss_wakes_all_waiters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_failed_load_is_not_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_truncate_trims_and_drops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_truncate_keeps_pinned_bytes_for_holder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_write_through_updates_and_fills_hole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_write_through_detaches_loading, setup, teardown),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
