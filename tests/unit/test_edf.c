/*
 * Unit tests: the earliest-deadline-first queue (aiod/edf.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "edf.h"

static void test_edf_pops_in_deadline_order(void **state)
{
	struct aiod_edf *q = aiod_edf_create(NULL);
	struct aiod_edf_item it[500];
	uint64_t last = 0;

	(void)state;
	srand(42);
	for (int i = 0; i < 500; i++) {
		it[i].deadline_ns = (uint64_t)(rand() % 1000);
		assert_int_equal(aiod_edf_push(q, &it[i]), 0);
	}
	for (int i = 0; i < 500; i++) {
		struct aiod_edf_item *p = aiod_edf_pop(q);
		assert_non_null(p);
		assert_true(p->deadline_ns >= last);
		last = p->deadline_ns;
	}
	assert_null(aiod_edf_pop(q));
	talloc_free(q);
}

static void test_edf_equal_deadlines_fifo(void **state)
{
	struct aiod_edf *q = aiod_edf_create(NULL);
	struct aiod_edf_item it[10];

	(void)state;
	for (int i = 0; i < 10; i++) {
		it[i].deadline_ns = 7;
		aiod_edf_push(q, &it[i]);
	}
	for (int i = 0; i < 10; i++) {
		assert_ptr_equal(aiod_edf_pop(q), &it[i]);
	}
	talloc_free(q);
}

static void test_edf_urgent_overtakes_bulk(void **state)
{
	struct aiod_edf *q = aiod_edf_create(NULL);
	struct aiod_edf_item bulk[32], urgent = { .deadline_ns = 5 };

	(void)state;
	/* A deep queue of best-effort reads due at 500... */
	for (int i = 0; i < 32; i++) {
		bulk[i].deadline_ns = 500 + (uint64_t)i;
		aiod_edf_push(q, &bulk[i]);
	}
	/* ...does not delay a stream read due sooner, arriving last. */
	aiod_edf_push(q, &urgent);
	assert_ptr_equal(aiod_edf_pop(q), &urgent);
	assert_ptr_equal(aiod_edf_pop(q), &bulk[0]);
	talloc_free(q);
}

static void test_edf_remove_middle(void **state)
{
	struct aiod_edf *q = aiod_edf_create(NULL);
	struct aiod_edf_item it[64];
	uint64_t last = 0;

	(void)state;
	for (int i = 0; i < 64; i++) {
		it[i].deadline_ns = (uint64_t)((i * 37) % 64);
		aiod_edf_push(q, &it[i]);
	}
	for (int i = 0; i < 64; i += 3) {
		aiod_edf_remove(q, &it[i]);
	}
	assert_int_equal(q->count, 64 - 22);
	while (q->count > 0) {
		struct aiod_edf_item *p = aiod_edf_pop(q);
		assert_true((p - it) % 3 != 0);
		assert_true(p->deadline_ns >= last);
		last = p->deadline_ns;
	}
	talloc_free(q);
}

/* Every item costs 10 (a seek and a transfer), as an engine would say. */
static uint64_t cost10(const struct aiod_edf_item *it, void *arg)
{
	(void)it;
	(void)arg;
	return 10;
}

/*
 * Serving a reader's next request ahead of the earliest deadline is allowed
 * only while every queued request, in deadline order after it, still meets
 * its deadline: the sum of what goes before each one, not just the head.
 */
static void test_edf_fits_first(void **state)
{
	struct aiod_edf *q = aiod_edf_create(NULL);
	struct aiod_edf_item head = { .deadline_ns = 1000 }, second = { .deadline_ns = 1005 };
	struct aiod_edf_item cont = { .deadline_ns = 5000 }, late = { .deadline_ns = 50 };

	(void)state;
	assert_int_equal(aiod_edf_push(q, &cont), 0);
	assert_int_equal(aiod_edf_push(q, &head), 0);
	/* now 900: cont (20) then head (10) by 930 <= 1000 */
	assert_true(aiod_edf_fits_first(q, &cont, 20, 900, cost10, NULL));
	/* now 975: head would end at 1005 */
	assert_false(aiod_edf_fits_first(q, &cont, 20, 975, cost10, NULL));
	/*
	 * A second item due just after the head: at 968 the head would end at
	 * 998, in time, but the second at 1008, late.
	 */
	assert_int_equal(aiod_edf_push(q, &second), 0);
	assert_true(aiod_edf_fits_first(q, &cont, 20, 960, cost10, NULL));
	assert_false(aiod_edf_fits_first(q, &cont, 20, 968, cost10, NULL));
	/* Anything already past its deadline says no. */
	assert_int_equal(aiod_edf_push(q, &late), 0);
	assert_false(aiod_edf_fits_first(q, &cont, 1, 60, cost10, NULL));
	/* The queue is untouched. */
	assert_ptr_equal(aiod_edf_peek(q), &late);
	assert_int_equal(q->count, 4);
	talloc_free(q);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edf_pops_in_deadline_order),
		cmocka_unit_test(test_edf_equal_deadlines_fifo),
		cmocka_unit_test(test_edf_urgent_overtakes_bulk),
		cmocka_unit_test(test_edf_remove_middle),
		cmocka_unit_test(test_edf_fits_first),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("edf", tests, NULL, NULL);
}
