/*
 * Unit tests: deciding each QoS flow's rate (aiod/qos_rates.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qos_rates.h"

#define MB 1000000ull
#define NS 1000000000ull

/* A flow that has asked for more than it got: some of its requests waited. */
static struct aiod_qos_flow_state paced(uint64_t demand)
{
	return (struct aiod_qos_flow_state){ .demand_Bps = demand, .wants_more = true };
}

static struct aiod_qos_flow_state best_effort(uint64_t demand)
{
	struct aiod_qos_flow_state s = paced(demand);

	s.best_effort = true;
	return s;
}

static const struct aiod_qos_device saturated_1000 = { .capacity_Bps = 1000 * MB,
						       .saturated = true };

static void test_qos_rates_unsaturated_unlimited(void **state)
{
	struct aiod_qos_flow_state f[4] = { best_effort(900 * MB), paced(10 * MB), paced(10 * MB),
					    paced(0) };
	struct aiod_qos_device dev = { .capacity_Bps = 1000 * MB };

	(void)state;
	f[1].reserve_Bps = 300 * MB;
	f[2].limit_Bps = 200 * MB;
	f[2].limit_iops = 500;
	f[3].limit_read_Bps = 50 * MB;
	f[3].limit_write_Bps = 20 * MB;
	aiod_qos_decide(&dev, f, 4);
	/* nobody without a limit is paced, however much it moves */
	assert_int_equal(f[0].out.rate_Bps, 0);
	assert_int_equal(f[1].out.rate_Bps, 0);
	/* a limit is a limit even when the device has room */
	assert_int_equal(f[2].out.rate_Bps, 200 * MB);
	assert_int_equal(f[2].out.rate_iops, 500);
	assert_int_equal(f[3].out.rate_Bps, 0);
	assert_int_equal(f[3].out.rate_read_Bps, 50 * MB);
	assert_int_equal(f[3].out.rate_write_Bps, 20 * MB);
}

static void test_qos_rates_reservation_first(void **state)
{
	struct aiod_qos_flow_state f[5] = { paced(100 * MB), best_effort(300 * MB),
					    best_effort(300 * MB), best_effort(300 * MB),
					    best_effort(300 * MB) };
	struct aiod_qos_device dev = saturated_1000;
	uint64_t sum = 0;

	(void)state;
	dev.streams_Bps = 200 * MB;
	/* paced at 100 MB/s so far, it wants more: it gets all of its 300 at once */
	f[0].reserve_Bps = 300 * MB;
	aiod_qos_decide(&dev, f, 5);
	assert_true(f[0].out.rate_Bps >= 300 * MB);
	for (int i = 0; i < 5; i++) {
		sum += f[i].given_Bps;
	}
	/* and the streams' 200 stay theirs */
	assert_true(sum <= 800 * MB);
	assert_true(sum >= 800 * MB - 10);
	assert_int_equal(f[1].out.rate_Bps, 125 * MB);
}

static void test_qos_rates_overcommitted_reservations_scale(void **state)
{
	struct aiod_qos_flow_state f[2] = { paced(500 * MB), paced(500 * MB) };

	(void)state;
	f[0].reserve_Bps = 600 * MB;
	f[1].reserve_Bps = 900 * MB;
	aiod_qos_decide(&saturated_1000, f, 2);
	assert_int_equal(f[0].out.rate_Bps, 400 * MB);
	assert_int_equal(f[1].out.rate_Bps, 600 * MB);
}

static void test_qos_rates_idle_reservation_redistributed(void **state)
{
	struct aiod_qos_flow_state f[3] = { paced(0), best_effort(400 * MB),
					    best_effort(400 * MB) };

	(void)state;
	f[0].wants_more = false;
	f[0].reserve_Bps = 600 * MB;
	aiod_qos_decide(&saturated_1000, f, 3);
	/* the idle reservation is the others' at once */
	assert_int_equal(f[1].out.rate_Bps, 500 * MB);
	assert_int_equal(f[2].out.rate_Bps, 500 * MB);
	/* and the idle flow may start at its reservation without waiting a tick */
	assert_int_equal(f[0].out.rate_Bps, 600 * MB);
	/* unless its limit is lower */
	f[0].limit_Bps = 400 * MB;
	aiod_qos_decide(&saturated_1000, f, 3);
	assert_int_equal(f[0].out.rate_Bps, 400 * MB);
}

static void test_qos_rates_idle_without_reservation_joins(void **state)
{
	struct aiod_qos_flow_state f[2] = { best_effort(0), best_effort(900 * MB) };

	(void)state;
	f[0].wants_more = false;
	aiod_qos_decide(&saturated_1000, f, 2);
	assert_int_equal(f[1].out.rate_Bps, 1000 * MB);
	/* what it would get as the second of two equal flows */
	assert_int_equal(f[0].out.rate_Bps, 500 * MB);
}

static void test_qos_rates_weights_split(void **state)
{
	struct aiod_qos_flow_state f[2] = { paced(1000 * MB), paced(1000 * MB) };

	(void)state;
	f[0].weight = 100;
	f[1].weight = 300;
	aiod_qos_decide(&saturated_1000, f, 2);
	assert_int_equal(f[0].out.rate_Bps, 250 * MB);
	assert_int_equal(f[1].out.rate_Bps, 750 * MB);
}

/* Paced at their last rates, 1:3 weights converge from an even start within a second. */
static void test_qos_rates_weights_converge(void **state)
{
	struct aiod_qos_flow_state f[2] = { paced(500 * MB), paced(500 * MB) };

	(void)state;
	f[0].weight = 100;
	f[1].weight = 300;
	for (int tick = 0; tick < 10; tick++) {
		aiod_qos_decide(&saturated_1000, f, 2);
		f[0].demand_Bps = f[0].out.rate_Bps;
		f[1].demand_Bps = f[1].out.rate_Bps;
	}
	assert_in_range(f[0].out.rate_Bps, 240 * MB, 260 * MB);
	assert_in_range(f[1].out.rate_Bps, 740 * MB, 760 * MB);
}

/*
 * Beyond the reservations, rules and best effort share by weight: a reserved
 * flow keeps its reservation and gets no more than an equal share on top.
 */
static void test_qos_rates_best_effort_shares_by_weight(void **state)
{
	struct aiod_qos_flow_state f[2] = { paced(1000 * MB), best_effort(1000 * MB) };
	struct aiod_qos_flow_state g[2] = { paced(1000 * MB), best_effort(1000 * MB) };

	(void)state;
	f[0].weight = 300;
	aiod_qos_decide(&saturated_1000, f, 2);
	assert_int_equal(f[0].out.rate_Bps, 750 * MB);
	assert_int_equal(f[1].out.rate_Bps, 250 * MB);
	g[0].reserve_Bps = 300 * MB;
	aiod_qos_decide(&saturated_1000, g, 2);
	assert_int_equal(g[0].out.rate_Bps, 650 * MB);
	assert_int_equal(g[1].out.rate_Bps, 350 * MB);
}

static void test_qos_rates_headroom(void **state)
{
	struct aiod_qos_flow_state f[3] = { best_effort(100 * MB), best_effort(1000),
					    best_effort(2000 * MB) };

	(void)state;
	f[0].wants_more = false;
	f[1].wants_more = false;
	aiod_qos_decide(&saturated_1000, f, 3);
	/* not paced: a quarter above what it moved, so it can show more next tick */
	assert_int_equal(f[0].out.rate_Bps, 125 * MB);
	/* a trickle may still grow by a step */
	assert_int_equal(f[1].out.rate_Bps, 1000 + AIOD_QOS_MIN_STEP_Bps);
	/* the paced one takes the rest */
	assert_int_equal(f[2].out.rate_Bps, 875 * MB - 1000 - AIOD_QOS_MIN_STEP_Bps);
}

/*
 * A paced flow whose readers charged nothing in a tick (they waited on the
 * device, or on a wait decided at a lower rate) still wants the rate it
 * had: next to a reserved reader it keeps its share instead of being paced
 * down to the minimum, tick after tick.
 */
static void test_qos_rates_paced_flow_keeps_its_rate(void **state)
{
	struct aiod_qos_flow_state f[2] = { paced(49 * MB), best_effort(0) };
	struct aiod_qos_device dev = { .capacity_Bps = 56 * MB, .saturated = true };
	uint64_t first;

	(void)state;
	f[0].reserve_Bps = 30 * MB;
	f[1].demand_Bps = 9 * MB;
	aiod_qos_decide(&dev, f, 2);
	first = f[1].out.rate_Bps;
	assert_true(first >= 11 * MB);	/* (56 - 30) / 2, at most its want */
	for (int tick = 0; tick < 10; tick++) {
		f[1].demand_Bps = 0;	/* four readers, each still waiting */
		aiod_qos_decide(&dev, f, 2);
		assert_true(f[1].out.rate_Bps >= first);
		assert_true(f[0].out.rate_Bps >= 30 * MB);
		assert_true(f[0].out.rate_Bps + f[1].out.rate_Bps <= 56 * MB);
	}
	/* nobody waiting and nothing charged: it is idle, not paced */
	f[1].wants_more = false;
	aiod_qos_decide(&dev, f, 2);
	assert_int_equal(f[0].out.rate_Bps, 56 * MB);
}

/* When a tick counts toward saturation (aiod_qos_device_busy). */
static void test_qos_rates_device_busy(void **state)
{
	struct aiod_qos_flow_state f[2] = { paced(40 * MB), best_effort(10 * MB) };
	struct aiod_qos_device_seen queue = { .queued = 3, .inflight = 1 };
	struct aiod_qos_device_seen working = { .inflight = 1 };
	struct aiod_qos_device_seen idle = { 0 };

	(void)state;
	f[0].reserve_Bps = 30 * MB;
	f[0].out.rate_Bps = 43 * MB;
	f[1].out.rate_Bps = 13 * MB;
	/* requests queued in aiod while two flows compete */
	assert_true(aiod_qos_device_busy(&queue, f, 2));
	/* nobody held by a share, aiod's queue empty: the device keeps up */
	assert_false(aiod_qos_device_busy(&working, f, 2));
	/* best effort held by its share while the device works: still the bottleneck */
	f[1].seen.waiting = 4;
	assert_true(aiod_qos_device_busy(&working, f, 2));
	assert_false(aiod_qos_device_busy(&idle, f, 2));
	/* held by its own limit, not by a share: that says nothing of the device */
	f[1].limit_Bps = 13 * MB;
	assert_false(aiod_qos_device_busy(&working, f, 2));
	/* a flow alone has nobody to share with... */
	f[0].demand_Bps = 0;
	f[0].wants_more = false;
	f[1].limit_Bps = 0;
	assert_false(aiod_qos_device_busy(&queue, f, 2));
	/* ...unless admitted streams need their room */
	queue.streams_Bps = 20 * MB;
	assert_true(aiod_qos_device_busy(&queue, f, 2));
}

static void test_qos_rates_unknown_capacity(void **state)
{
	struct aiod_qos_flow_state f[2] = { paced(300 * MB), paced(100 * MB) };
	struct aiod_qos_device dev = { .saturated = true };

	(void)state;
	f[0].weight = 100;
	f[1].weight = 300;
	aiod_qos_decide(&dev, f, 2);
	/*
	 * What the saturated device delivered, 400, split by weight (100 and 300)
	 * as far as each wants: the second wants only 125 (100 and a quarter),
	 * the first takes the rest.
	 */
	assert_int_equal(f[0].out.rate_Bps, 275 * MB);
	assert_int_equal(f[1].out.rate_Bps, 125 * MB);
}

/* A random flow: any mix of rule, demand and pacing. */
static struct aiod_qos_flow_state random_flow(void)
{
	struct aiod_qos_flow_state s = { 0 };

	s.best_effort = rand() % 3 == 0;
	s.limit_Bps = rand() % 2 ? (uint64_t)(rand() % 800 + 1) * MB : 0;
	s.limit_read_Bps = rand() % 4 == 0 ? (uint64_t)(rand() % 800 + 1) * MB : 0;
	s.reserve_Bps = rand() % 3 == 0 ? (uint64_t)(rand() % 400) * MB : 0;
	s.weight = (uint32_t)(rand() % 400);
	s.demand_Bps = rand() % 4 ? (uint64_t)(rand() % 1000) * MB : 0;
	s.wants_more = rand() % 2;
	return s;
}

static void test_qos_rates_limits_never_exceeded(void **state)
{
	struct aiod_qos_flow_state f[8];

	(void)state;
	srand(5);
	for (int iter = 0; iter < 2000; iter++) {
		struct aiod_qos_device dev = { .capacity_Bps = (uint64_t)(rand() % 2000) * MB,
					       .streams_Bps = (uint64_t)(rand() % 500) * MB,
					       .saturated = rand() % 4 != 0 };
		size_t n = (size_t)(rand() % 8) + 1;
		uint64_t given = 0, measured = 0;

		for (size_t i = 0; i < n; i++) {
			f[i] = random_flow();
			measured += f[i].demand_Bps;
		}
		aiod_qos_decide(&dev, f, n);
		for (size_t i = 0; i < n; i++) {
			given += f[i].given_Bps;
			if (f[i].limit_Bps != 0) {
				assert_in_range(f[i].out.rate_Bps, 1, f[i].limit_Bps);
			}
			assert_int_equal(f[i].out.rate_read_Bps, f[i].limit_read_Bps);
			assert_true(!dev.saturated || f[i].out.rate_Bps != 0);
		}
		/* the active flows never share more than the streams left them */
		if (dev.capacity_Bps != 0) {
			assert_true(given <= (dev.capacity_Bps > dev.streams_Bps ?
					      dev.capacity_Bps - dev.streams_Bps : 0));
		} else {
			assert_true(given <= measured);
		}
	}
}

static void test_qos_rates_observe(void **state)
{
	struct rtio_qos_rates r = { .rate_Bps = 10 * MB, .burst_bytes = 2 * MB };
	struct rtio_qos_flow *f = aligned_alloc(64, sizeof(*f));
	struct aiod_qos_flow_state s = { 0 };
	uint64_t now = 5 * NS, gen;

	(void)state;
	assert_non_null(f);
	memset(f, 0, sizeof(*f));
	gen = rtio_qos_assign(f, &r);
	aiod_qos_observe(&s, f, now);
	assert_int_equal(s.demand_Bps, 0);
	/* 1 MB in 100 ms, none of it held back */
	(void)rtio_qos_charge(f, false, MB / 2, now);
	(void)rtio_qos_charge(f, true, MB / 2, now);
	now += NS / 10;
	aiod_qos_observe(&s, f, now);
	assert_int_equal(s.demand_Bps, 10 * MB);
	assert_false(s.wants_more);
	/* then more than the burst: the rest waited, the flow wants more */
	assert_true(rtio_qos_charge(f, false, 3 * MB, now) > 0);
	now += NS / 10;
	aiod_qos_observe(&s, f, now);
	assert_int_equal(s.demand_Bps, 30 * MB);
	assert_true(s.wants_more);
	rtio_qos_wait_done(f, gen);	/* the held request went */
	/* a tick without a charge keeps the demand (its readers may wait for the device)... */
	for (unsigned t = 0; t < AIOD_QOS_QUIET_TICKS; t++) {
		now += NS / 10;
		aiod_qos_observe(&s, f, now);
		assert_int_equal(s.demand_Bps, 30 * MB);
	}
	/* ...until it was quiet for longer: then it is idle */
	now += NS / 10;
	aiod_qos_observe(&s, f, now);
	assert_int_equal(s.demand_Bps, 0);
	/* the slot given to another flow: its counters start again, no negative demand */
	rtio_qos_assign(f, &r);
	(void)rtio_qos_charge(f, false, MB / 10, now);
	now += NS / 10;
	aiod_qos_observe(&s, f, now);
	assert_int_equal(s.demand_Bps, MB);
	assert_false(s.wants_more);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qos_rates_unsaturated_unlimited),
		cmocka_unit_test(test_qos_rates_reservation_first),
		cmocka_unit_test(test_qos_rates_overcommitted_reservations_scale),
		cmocka_unit_test(test_qos_rates_idle_reservation_redistributed),
		cmocka_unit_test(test_qos_rates_idle_without_reservation_joins),
		cmocka_unit_test(test_qos_rates_weights_split),
		cmocka_unit_test(test_qos_rates_weights_converge),
		cmocka_unit_test(test_qos_rates_best_effort_shares_by_weight),
		cmocka_unit_test(test_qos_rates_headroom),
		cmocka_unit_test(test_qos_rates_paced_flow_keeps_its_rate),
		cmocka_unit_test(test_qos_rates_device_busy),
		cmocka_unit_test(test_qos_rates_unknown_capacity),
		cmocka_unit_test(test_qos_rates_limits_never_exceeded),
		cmocka_unit_test(test_qos_rates_observe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
