/*
 * Unit tests: the io_uring engine's choice of what goes to the device next
 * (aiod/engine.c), with a real ring on a temporary file. Queue depth 1, so
 * the order operations complete in is the order the engine handed them on.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
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

/*
 * A (due first) is dispatched at once. Then B is the earliest deadline and C
 * starts where A ended: with request costs known and B's deadline far enough,
 * C goes first (no seek there and back); without them, plain EDF: B.
 */
static void run(bool costs, uint64_t b_due_ms, const char *expect)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct tevent_context *ev = tevent_context_init(mem);
	uint8_t *bufs = talloc_zero_array(mem, uint8_t, 3 * BLK);
	char path[] = "/tmp/rtio-engine.XXXXXX", err[256];
	struct aiod_engine *e;
	struct order o = { .n = 0 };
	struct op_tag a = { &o, 'A' }, b = { &o, 'B' }, c = { &o, 'C' };
	uint64_t now = aiod_now_ns();
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	assert_non_null(ev);
	e = aiod_engine_create(mem, ev, 1, bufs, BLK, 3, err, sizeof(err));
	assert_non_null(e);
	if (costs) {
		aiod_engine_set_costs(e, 10000000, 100000000);	/* 10 ms, 100 MB/s */
	}
	assert_int_equal(aiod_engine_read(e, fd, 0, 0, BLK, 0, now + 1000000, done, &a), 0);
	assert_int_equal(aiod_engine_read(e, fd, 1, 0, BLK, 512 * 1024, now + b_due_ms * 1000000,
					  done, &b), 0);
	assert_int_equal(aiod_engine_read(e, fd, 2, 0, BLK, BLK, now + 60000000000ull, done, &c), 0);
	while (o.n < 3) {
		assert_int_equal(tevent_loop_once(ev), 0);
	}
	assert_memory_equal(o.seen, expect, 3);
	close(fd);
	talloc_free(mem);
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_continues_when_it_fits),
		cmocka_unit_test(test_engine_plain_edf_without_costs),
		cmocka_unit_test(test_engine_no_continuation_past_a_deadline),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
