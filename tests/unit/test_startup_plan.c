/*
 * Unit tests: the start-up plan (aiod/startup_plan.c), aiod's read-ahead
 * played forward on a model of the device. The rules tested:
 *  - admission's margin: one io_size request's device time;
 *  - the request size that keeps up with every stream (what read-ahead's
 *    ramp starts from), and that none does once the streams reserve the
 *    media rate;
 *  - streams opened together on the emulated disk (15.2 ms per request as
 *    calibrated, 168 MB/s): the plan holds what bench/rt measured clean
 *    and makes data late where bench/rt measured late chunks (8 of 100
 *    Mbit/s hold with a 0.5 s client buffer, 9 do not; 10 with 1 s, not
 *    11; the mix 4 x 200 + 4 x 50 Mbit/s is late at 0.5 s);
 *  - best effort beside the streams (a greedy reader's 8 MiB read now and
 *    one each 2.3 s deadline) costs a stream: 9 hold with 1 s, not 10;
 *    bench/rt measured 9 of 100 Mbit/s next to a greedy reader late at
 *    0.5 s where 8 were clean, and the plan still holds 8;
 *  - a stream already ahead is not late because one more starts, a stream
 *    behind its client is, and the plan names it;
 *  - nothing to plan (no streams, no device): nothing late.
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

#include "startup_plan.h"

#define MIB 1048576u
#define S   1000000000ll
#define MS  1000000ll

/* The emulated disk of bench/rt as aiod --calibrate measures it; 1 MiB blocks, io_size 16M. */
static const struct aiod_plan_device emudisk = {
	.request_ns = 15200000, .media_Bps = 168000000, .block_size = MIB, .io_blocks = 16,
};

static const uint64_t horizon = 20 * S;

/* n streams of bps each (and m more of bps2) opened now on d, with buffer_ms of client buffer. */
static struct aiod_plan_result together_on(const struct aiod_plan_device *d, uint32_t n,
					   uint64_t bps, uint32_t m, uint64_t bps2,
					   uint32_t buffer_ms)
{
	struct aiod_plan_stream s[32];

	assert_true(n + m <= 32);
	for (uint32_t i = 0; i < n + m; i++) {
		s[i] = (struct aiod_plan_stream){
			.rate_Bps = (i < n ? bps : bps2) / 8,
			.read_blocks = 1,
			.buffer_ns = (uint64_t)buffer_ms * MS,
		};
	}
	return aiod_plan_startup(d, s, n + m, horizon);
}

/* The same on the emulated disk without best effort. */
static struct aiod_plan_result together(uint32_t n, uint64_t bps, uint32_t m, uint64_t bps2,
					uint32_t buffer_ms)
{
	return together_on(&emudisk, n, bps, m, bps2, buffer_ms);
}

static void test_plan_sustain_blocks(void **state)
{
	struct aiod_plan_device none = { .block_size = MIB, .io_blocks = 16 };

	(void)state;
	/* 9 x 12.5 MB/s: a round of 9 x 15.2 ms / (1 - 112.5 / 168) = 414 ms, 4.9 MiB. */
	assert_int_equal(aiod_plan_sustain_blocks(&emudisk, 9, 9 * 12500000ull, 12500000), 5);
	assert_int_equal(aiod_plan_sustain_blocks(&emudisk, 8, 8 * 12500000ull, 12500000), 4);
	/* A 50 Mbit/s stream in the same round needs half as much as a 100 Mbit/s one. */
	assert_true(aiod_plan_sustain_blocks(&emudisk, 9, 9 * 12500000ull, 6250000) <
		    aiod_plan_sustain_blocks(&emudisk, 9, 9 * 12500000ull, 12500000));
	/* The stream asking is counted even before its reservation is. */
	assert_int_equal(aiod_plan_sustain_blocks(&emudisk, 1, 0, 12500000),
			 aiod_plan_sustain_blocks(&emudisk, 1, 12500000, 12500000));
	assert_int_equal(aiod_plan_sustain_blocks(&emudisk, 14, 14 * 12500000ull, 12500000),
			 UINT32_MAX);
	assert_int_equal(aiod_plan_sustain_blocks(&none, 9, 9 * 12500000ull, 12500000), 0);
}

static void test_plan_together_half_second(void **state)
{
	struct aiod_plan_result r8 = together(8, 100000000, 0, 0, 504);
	struct aiod_plan_result r9 = together(9, 100000000, 0, 0, 504);
	struct aiod_plan_device none = { .block_size = MIB, .io_blocks = 16 };

	(void)state;
	/* The margin admission wants: one 16 MiB request, 15.2 + 99.9 ms. */
	assert_int_equal(aiod_plan_margin_ns(&emudisk) / MS, 115);
	assert_int_equal(aiod_plan_margin_ns(&none), 0);
	assert_true(r8.least_slack_ns > (int64_t)aiod_plan_margin_ns(&emudisk));
	assert_true(r9.least_slack_ns < 0);
	/* Late in the start-up (rt-20261206-0506.md measured the first 2 s), not in the long run. */
	assert_true(r9.at_ns < 5 * S);
}

static void test_plan_together_one_second(void **state)
{
	(void)state;
	assert_true(together(10, 100000000, 0, 0, 1000).least_slack_ns > 0);
	assert_true(together(11, 100000000, 0, 0, 1000).least_slack_ns < 0);
	/* A larger buffer never makes the plan later. */
	assert_true(together(9, 100000000, 0, 0, 1000).least_slack_ns >
		    together(9, 100000000, 0, 0, 504).least_slack_ns);
}

static void test_plan_mixed_bitrates(void **state)
{
	(void)state;
	/* 4 x 200 + 4 x 50 Mbit/s: late start-up chunks in most bench/rt runs. */
	assert_true(together(4, 200000000, 4, 50000000, 504).least_slack_ns < 0);
	/* Two of each fit with room. */
	assert_true(together(2, 200000000, 2, 50000000, 504).least_slack_ns > 100 * MS);
}

static void test_plan_best_effort(void **state)
{
	struct aiod_plan_device be = emudisk;
	struct aiod_plan_result r8, r8be;

	(void)state;
	/* A greedy reader's 8 MiB reads, served once a best-effort deadline during the start. */
	be.be_blocks = 8;
	be.be_period_ns = 2304 * MS;
	assert_true(together_on(&be, 9, 100000000, 0, 0, 1000).least_slack_ns > 0);
	assert_true(together(10, 100000000, 0, 0, 1000).least_slack_ns > 0);
	assert_true(together_on(&be, 10, 100000000, 0, 0, 1000).least_slack_ns < 0);
	/* 8 with 0.5 s still hold, with less to spare: the reader's first read goes first. */
	r8 = together(8, 100000000, 0, 0, 504);
	r8be = together_on(&be, 8, 100000000, 0, 0, 504);
	assert_true(r8be.least_slack_ns > 0);
	assert_true(r8be.least_slack_ns < r8.least_slack_ns - 40 * MS);
	/* No blocks (or no period): no best effort. */
	be.be_blocks = 0;
	assert_int_equal(together_on(&be, 10, 100000000, 0, 0, 1000).least_slack_ns,
			 together(10, 100000000, 0, 0, 1000).least_slack_ns);
	be.be_blocks = 8;
	be.be_period_ns = 0;
	assert_int_equal(together_on(&be, 10, 100000000, 0, 0, 1000).least_slack_ns,
			 together(10, 100000000, 0, 0, 1000).least_slack_ns);
}

static void test_plan_started_streams(void **state)
{
	struct aiod_plan_stream s[2] = {
		/* Playing for 4 s, 3 s of data ahead of its timeline in the cache. */
		{ .rate_Bps = 12500000, .t0_ns = -4 * S, .have = 7 * 12500000ull, .ramp = 16,
		  .read_blocks = 1, .buffer_ns = 500 * MS },
		/* Opening now. */
		{ .rate_Bps = 12500000, .read_blocks = 1, .buffer_ns = 500 * MS },
	};
	struct aiod_plan_result r;

	(void)state;
	r = aiod_plan_startup(&emudisk, s, 2, horizon);
	assert_true(r.least_slack_ns > 0);
	/* The first one has only what its client read, and that was due 1.5 s ago: late, named. */
	s[0].have = 2 * 12500000ull;
	r = aiod_plan_startup(&emudisk, s, 2, horizon);
	assert_true(r.least_slack_ns < -1 * S);
	assert_int_equal(r.worst, 0);
	/* At the end of its first request: one io_size request, 115 ms. */
	assert_true(r.at_ns < 200 * MS);
}

static void test_plan_nothing_to_plan(void **state)
{
	struct aiod_plan_device none = { .block_size = MIB, .io_blocks = 16 };
	struct aiod_plan_stream s = { .rate_Bps = 12500000, .read_blocks = 1 };

	(void)state;
	assert_int_equal(aiod_plan_startup(&emudisk, &s, 0, horizon).least_slack_ns, INT64_MAX);
	assert_int_equal(aiod_plan_startup(&none, &s, 1, horizon).least_slack_ns, INT64_MAX);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_sustain_blocks),
		cmocka_unit_test(test_plan_together_half_second),
		cmocka_unit_test(test_plan_together_one_second),
		cmocka_unit_test(test_plan_mixed_bitrates),
		cmocka_unit_test(test_plan_best_effort),
		cmocka_unit_test(test_plan_started_streams),
		cmocka_unit_test(test_plan_nothing_to_plan),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("startup_plan", tests, NULL, NULL);
}
