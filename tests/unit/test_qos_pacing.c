/*
 * Unit tests: the QoS flow table and its GCRA pacing (common/rtio_qos.c).
 * Time is simulated (the caller passes now) except in the threaded test,
 * which hammers one slot from four threads on the real clock.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "rtio_qos.h"

#define NS 1000000000ull
#define MB 1000000ull

/* A one-slot table on the heap, as a test fixture. */
static struct rtio_qos_header *table_new(uint32_t nflows)
{
	struct rtio_qos_header *hdr = aligned_alloc(64, rtio_qos_region_size(nflows));

	assert_non_null(hdr);
	rtio_qos_init(hdr, nflows, 1);
	return hdr;
}

static struct rtio_qos_flow *flow_new(struct rtio_qos_header **hdr, uint64_t rate_Bps,
				      uint64_t burst)
{
	struct rtio_qos_rates r = { .rate_Bps = rate_Bps, .burst_bytes = burst };

	*hdr = table_new(1);
	rtio_qos_assign(rtio_qos_slot(*hdr, 0), &r);
	return rtio_qos_slot(*hdr, 0);
}

/* Bytes rate allows in elapsed ns after a full bucket of burst. */
static uint64_t allowance(uint64_t rate, uint64_t elapsed_ns, uint64_t burst)
{
	return (uint64_t)((unsigned __int128)rate * elapsed_ns / NS) + burst;
}

static void test_qos_pacing_layout(void **state)
{
	struct rtio_qos_header *hdr = table_new(3);
	uint64_t size = rtio_qos_region_size(3);

	(void)state;
	assert_int_equal(size, 64 + 3 * 192);
	assert_int_equal(rtio_qos_check(hdr, size), 0);
	assert_int_equal(rtio_qos_check(hdr, size - 1), -EPROTO);
	assert_int_equal(rtio_qos_check(hdr, 8), -EPROTO);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal((uintptr_t)rtio_qos_slot(hdr, i) % 64, 0);
		assert_int_equal(rtio_qos_slot(hdr, i)->generation, 0);
	}
	hdr->version = 2;
	assert_int_equal(rtio_qos_check(hdr, size), -EPROTO);
	hdr->version = RTIO_QOS_VERSION;
	hdr->magic ^= 1;
	assert_int_equal(rtio_qos_check(hdr, size), -EPROTO);
	free(hdr);
}

static void test_qos_pacing_generation(void **state)
{
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f = flow_new(&hdr, 1 * MB, 0);
	struct rtio_qos_rates r = { .rate_Bps = 1 * MB };
	struct rtio_qos_counters c;
	uint64_t gen = f->generation;

	(void)state;
	assert_int_equal(gen, 1);
	assert_int_equal(rtio_qos_charge(f, false, 10 * MB, 0), 10 * NS - 50000000ull);
	assert_true(rtio_qos_current(f, gen));
	/* aiod gives the slot to someone else while our request waits */
	assert_int_equal(rtio_qos_assign(f, &r), 2);
	assert_false(rtio_qos_current(f, gen));
	rtio_qos_wait_done(f, gen);
	rtio_qos_read_counters(f, &c);
	assert_int_equal(c.waiting, 0);
	assert_int_equal(c.bytes_read, 0);
	/* the new flow starts with a full bucket, not the old one's backlog */
	assert_int_equal(rtio_qos_charge(f, false, 1000, 1000), 0);
	free(hdr);
}

/* The policy generation: 0 until aiod publishes, then moves at each load. */
static void test_qos_pacing_policy_gen(void **state)
{
	struct rtio_qos_header *hdr = table_new(1);
	uint32_t n = 99;

	(void)state;
	assert_int_equal(rtio_qos_policy_get(hdr, &n), 0);	/* an aiod that does not say */
	assert_int_equal(n, 0);
	rtio_qos_policy_set(hdr, 0);
	assert_int_equal(rtio_qos_policy_get(hdr, &n), 1);
	assert_int_equal(n, 0);
	rtio_qos_policy_set(hdr, 3);	/* a reload added three rules */
	assert_int_equal(rtio_qos_policy_get(hdr, &n), 2);
	assert_int_equal(n, 3);
	rtio_qos_policy_set(hdr, 3);	/* the same count again is still a new load */
	assert_int_equal(rtio_qos_policy_get(hdr, &n), 3);
	free(hdr);
}

static void test_qos_pacing_unlimited_never_waits(void **state)
{
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f = flow_new(&hdr, 0, 0);
	struct rtio_qos_counters c;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(rtio_qos_charge(f, (i & 1) != 0, 1 << 20, 5), 0);
	}
	rtio_qos_read_counters(f, &c);
	assert_int_equal(c.bytes_read, 500ull << 20);
	assert_int_equal(c.bytes_written, 500ull << 20);
	assert_int_equal(c.ops, 1000);
	assert_int_equal(c.paced, 0);
	free(hdr);
}

static void test_qos_pacing_burst(void **state)
{
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f = flow_new(&hdr, 10 * MB, 1 * MB);
	uint64_t t = 100 * NS;

	(void)state;
	/* an idle flow's full bucket: the burst goes at once... */
	assert_int_equal(rtio_qos_charge(f, false, 1 * MB, t), 0);
	/* ...the next byte waits for the bucket to refill */
	assert_int_equal(rtio_qos_charge(f, false, 1 * MB, t), NS / 10);
	/* idle long enough: full again, never fuller */
	t += 10 * NS;
	assert_int_equal(rtio_qos_charge(f, false, 1 * MB, t), 0);
	assert_true(rtio_qos_charge(f, false, 1, t) > 0);
	/* larger than the burst: allowed, waiting for its excess over the burst */
	t += 10 * NS;
	assert_int_equal(rtio_qos_charge(f, true, 3 * MB, t), 2 * NS / 10);
	free(hdr);
}

/*
 * One process issuing back to back from t0 with random sizes; every request
 * goes when charge says. Checks that bytes sent by any instant stay under
 * rate * elapsed + burst, that every 1-second window stays under rate +
 * burst, and that the rate is actually reached (pacing is not too strict).
 */
struct send_log {
	uint64_t at[200000];
	uint64_t bytes[200000];
	size_t n;
};

static void check_windows(const struct send_log *log, uint64_t rate, uint64_t burst)
{
	uint64_t in_window = 0;
	size_t lo = 0;

	for (size_t hi = 0; hi < log->n; hi++) {
		in_window += log->bytes[hi];
		while (log->at[hi] - log->at[lo] >= NS) {
			in_window -= log->bytes[lo++];
		}
		assert_true(in_window <= rate + burst);
	}
}

static void run_single(struct rtio_qos_flow *f, struct send_log *log, uint64_t t0,
		       uint64_t until, uint64_t rate, uint64_t burst)
{
	uint64_t now = t0, sent = 0;

	while (now < until && log->n < 200000) {
		uint64_t bytes = 4096 + (uint64_t)(rand() % (int)(burst - 4096));
		uint64_t go = now + rtio_qos_charge(f, false, bytes, now);

		sent += bytes;
		assert_true(sent <= allowance(rate, go - t0, burst));
		log->at[log->n] = go;
		log->bytes[log->n++] = bytes;
		now = go;
	}
}

static void test_qos_pacing_rate_10s_random(void **state)
{
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f = flow_new(&hdr, 20 * MB, 1 * MB);
	struct send_log *log = calloc(1, sizeof(*log));
	uint64_t total = 0;

	(void)state;
	assert_non_null(log);
	srand(7);
	run_single(f, log, 5 * NS, 15 * NS, 20 * MB, 1 * MB);
	for (size_t i = 0; i < log->n; i++) {
		total += log->bytes[i];
	}
	/* run_single checked the ceiling; the floor: the last went at 15 s or later */
	assert_true(log->at[log->n - 1] >= 15 * NS);
	assert_true(total >= 200 * MB);
	check_windows(log, 20 * MB, 1 * MB);
	free(log);
	free(hdr);
}

/* Requests of 10 s of backlog at the old rate, charged at t. */
static void queue_backlog(struct rtio_qos_flow *f, uint64_t rate, uint64_t t)
{
	for (int i = 0; i < 10; i++) {
		(void)rtio_qos_charge(f, false, rate, t);
	}
}

static void test_qos_pacing_rate_change(void **state)
{
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f = flow_new(&hdr, 20 * MB, 1 * MB);
	struct rtio_qos_rates slow = { .rate_Bps = 2 * MB, .burst_bytes = 1 * MB };
	struct rtio_qos_rates fast = { .rate_Bps = 200 * MB, .burst_bytes = 1 * MB };
	struct send_log *log = calloc(1, sizeof(*log));
	uint64_t second = 0, t, t1;

	(void)state;
	assert_non_null(log);
	srand(11);
	run_single(f, log, 0, 5 * NS, 20 * MB, 1 * MB);
	t = log->at[log->n - 1];
	/* lowered mid-run: what was queued at 20 MB/s now counts at 2 MB/s */
	rtio_qos_publish(f, &slow, t);
	t1 = t;
	for (size_t i = log->n; i < 200000; i++) {
		uint64_t go = t + rtio_qos_charge(f, false, 100000, t);

		if (go > t1 + 5 * NS) {
			break;
		}
		second += 100000;
		t = go;
	}
	assert_true(second <= 5 * 2 * MB + 2 * MB);
	assert_true(second >= 5 * 2 * MB - 2 * MB);
	/* raised after a 10 s backlog at 1 MB/s: it shrinks to 50 ms at 200 MB/s */
	slow.rate_Bps = 1 * MB;
	rtio_qos_publish(f, &slow, t);
	queue_backlog(f, 1 * MB, t);
	rtio_qos_publish(f, &fast, t);
	assert_true(rtio_qos_charge(f, false, 1, t) <= NS / 10);
	free(log);
	free(hdr);
}

static void test_qos_pacing_unlimited_to_limited(void **state)
{
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f = flow_new(&hdr, 1 * MB, 1 * MB);
	struct rtio_qos_rates off = { 0 }, on = { .rate_Bps = 1 * MB, .burst_bytes = 1 * MB };

	(void)state;
	/* a 10 s backlog, then unlimited for a moment: gigabytes go unpaced */
	queue_backlog(f, 1 * MB, NS);
	rtio_qos_publish(f, &off, NS);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(rtio_qos_charge(f, false, 10 * MB, NS + (uint64_t)i), 0);
	}
	/* limited again 1 s later: a full bucket, not the stale 10 s backlog */
	rtio_qos_publish(f, &on, 2 * NS);
	assert_int_equal(rtio_qos_charge(f, false, 1 * MB, 2 * NS), 0);
	assert_int_equal(rtio_qos_charge(f, false, 1 * MB, 2 * NS), NS);
	free(hdr);
}

/*
 * A request held at an old rate follows the new one: four 1 MB reads charged
 * at 1 MB/s (the last waits 4 s) go at once when the flow becomes
 * unlimited, and within 4/56 s when the rate is raised to 56 MB/s; a changed
 * write limit does not move a read's wait; a lowered rate lengthens it.
 */
static void test_qos_pacing_hold_follows_rate(void **state)
{
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f = flow_new(&hdr, 1 * MB, 1);
	struct rtio_qos_rates fast = { .rate_Bps = 56 * MB, .burst_bytes = 1 };
	struct rtio_qos_rates off = { 0 };
	struct rtio_qos_rates slow = { .rate_Bps = 1 * MB, .burst_bytes = 1, .rate_write_Bps = 5 * MB };
	struct rtio_qos_hold h[4];
	uint64_t wait = 0, left;

	(void)state;
	for (int i = 0; i < 4; i++) {
		wait = rtio_qos_charge_hold(f, false, 1 * MB, NS, &h[i]);
	}
	assert_true(wait >= 4 * NS - NS / 100 && wait <= 4 * NS);
	assert_int_equal(h[3].go_ns, NS + wait);
	/* unchanged rates: what is left of the wait, and 0 once it passed */
	assert_int_equal(rtio_qos_hold_left(f, &h[3], 2 * NS), wait - NS);
	assert_int_equal(rtio_qos_hold_left(f, &h[0], 10 * NS), 0);
	/* raised 1 s in: the 3 s left at 1 MB/s are 3/56 s at 56 MB/s */
	rtio_qos_publish(f, &fast, 2 * NS);
	left = rtio_qos_hold_left(f, &h[3], 2 * NS);
	assert_true(left <= (wait - NS) / 56 + 1 && left + 1 >= (wait - NS) / 56);
	assert_int_equal(h[3].go_ns, 2 * NS + left);
	assert_true(rtio_qos_hold_left(f, &h[2], 2 * NS) < left);
	/* unlimited: nothing holds it */
	rtio_qos_publish(f, &off, 2 * NS);
	assert_int_equal(rtio_qos_hold_left(f, &h[1], 2 * NS), 0);
	/* a write limit added: a read's wait is what it was at the read rate it had */
	h[2] = (struct rtio_qos_hold){ .go_ns = 3 * NS, .at = { .rate_Bps = 1 * MB, .burst_bytes = 1 } };
	rtio_qos_publish(f, &slow, 2 * NS);
	assert_int_equal(rtio_qos_hold_left(f, &h[2], 2 * NS), NS);
	/* lowered to half: a second left becomes two */
	slow.rate_Bps = MB / 2;
	rtio_qos_publish(f, &slow, 2 * NS);
	assert_int_equal(rtio_qos_hold_left(f, &h[2], 2 * NS), 2 * NS);
	free(hdr);
}

static void test_qos_pacing_directions_and_iops(void **state)
{
	struct rtio_qos_header *hdr = table_new(1);
	struct rtio_qos_flow *f = rtio_qos_slot(hdr, 0);
	struct rtio_qos_rates r = { .rate_read_Bps = 10 * MB, .rate_write_Bps = 1 * MB,
				    .rate_iops = 100, .burst_bytes = 1 * MB, .burst_ops = 1 };
	uint64_t t = NS;

	(void)state;
	rtio_qos_assign(f, &r);
	/* reads and writes have their own buckets */
	assert_int_equal(rtio_qos_charge(f, false, 1 * MB, t), 0);
	assert_int_equal(rtio_qos_charge(f, true, 1 * MB, t + 10000000), 0);
	assert_int_equal(rtio_qos_charge(f, true, 1 * MB, t + 20000000), NS + 10000000 - 20000000);
	assert_int_equal(rtio_qos_charge(f, false, 1 * MB, t + 30000000), NS / 10 - 30000000);
	/* 100 IOPS, burst 1: tiny reads go 10 ms apart */
	t += 100 * NS;
	assert_int_equal(rtio_qos_charge(f, false, 1, t), 0);
	assert_int_equal(rtio_qos_charge(f, false, 1, t), 10000000);
	assert_int_equal(rtio_qos_charge(f, false, 1, t), 20000000);
	free(hdr);
}

/*
 * Eight simulated processes with four requests in flight each, every one
 * reading the clock a little late (charges arrive out of clock order, as
 * they do across processes), all charging one slot: together they still
 * stay under rate * t + burst and reach the rate.
 */
struct sim_proc {
	uint64_t ready_ns[4];
};

static size_t sim_next(const struct sim_proc *p, size_t n, size_t *slot)
{
	size_t best = 0;

	*slot = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t s = 0; s < 4; s++) {
			if (p[i].ready_ns[s] < p[best].ready_ns[*slot]) {
				best = i;
				*slot = s;
			}
		}
	}
	return best;
}

static void test_qos_pacing_many_processes(void **state)
{
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f = flow_new(&hdr, 50 * MB, 2 * MB);
	struct sim_proc procs[8] = { 0 };
	struct send_log *log = calloc(1, sizeof(*log));
	uint64_t total = 0, horizon = 10 * NS;

	(void)state;
	assert_non_null(log);
	srand(3);
	while (log->n < 200000) {
		size_t s, i = sim_next(procs, 8, &s);
		uint64_t now = procs[i].ready_ns[s];
		uint64_t bytes = 4096 + (uint64_t)(rand() % (1 << 20));
		uint64_t late = (uint64_t)(rand() % 200000);
		uint64_t go;

		if (now >= horizon) {
			break;
		}
		/* the process read its clock before another one's charge */
		go = now + rtio_qos_charge(f, false, bytes, now > late ? now - late : 0);
		go = go > now ? go : now;
		log->at[log->n] = go;
		log->bytes[log->n++] = bytes;
		procs[i].ready_ns[s] = go + (uint64_t)(rand() % 2000000);
	}
	for (size_t i = 0; i < log->n; i++) {
		if (log->at[i] <= horizon) {
			total += log->bytes[i];
		}
	}
	assert_true(total <= allowance(50 * MB, horizon, 2 * MB));
	assert_true(total >= 50 * MB * 10 * 98 / 100);
	free(log);
	free(hdr);
}

/* ---- four real threads on one slot ---- */

struct hammer {
	struct rtio_qos_flow *f;
	uint64_t gen;
	uint64_t end_ns;
	uint64_t admitted;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NS), .tv_nsec = (long)(ns % NS) };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
	}
}

static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;
	uint64_t now;

	while ((now = mono_ns()) < h->end_ns) {
		uint64_t wait = rtio_qos_charge(h->f, false, 65536, now);

		if (now + wait <= h->end_ns) {
			h->admitted += 65536;
		}
		if (wait > 0) {
			sleep_ns(wait);
			rtio_qos_wait_done(h->f, h->gen);
		}
	}
	return NULL;
}

static void test_qos_pacing_threads(void **state)
{
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f = flow_new(&hdr, 40 * MB, 1 * MB);
	struct hammer h[4];
	pthread_t tid[4];
	uint64_t start = mono_ns(), total = 0;
	struct rtio_qos_counters c;

	(void)state;
	for (int i = 0; i < 4; i++) {
		h[i] = (struct hammer){ .f = f, .gen = f->generation, .end_ns = start + NS / 2 };
		assert_int_equal(pthread_create(&tid[i], NULL, hammer_thread, &h[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(tid[i], NULL), 0);
		total += h[i].admitted;
	}
	/* the bucket was full at start: rate * 0.5 s + burst at most */
	assert_true(total <= allowance(40 * MB, NS / 2, 1 * MB));
	/* and pacing, not the test's two shared CPUs, is what held them back */
	assert_true(total >= allowance(40 * MB, NS / 2, 1 * MB) / 2);
	rtio_qos_read_counters(f, &c);
	assert_int_equal(c.waiting, 0);
	assert_true(c.paced > 0);
	free(hdr);
}

/*
 * The credit ceiling that goes with a flow's rates: a second of I/O at the
 * byte rate in 64 KiB credits, a power of two; none while a direction is
 * unbounded; published with the rates and changed with them.
 */
static void test_qos_pacing_credit_ceiling(void **state)
{
	const uint64_t MiB = 1048576;
	struct rtio_qos_header *hdr;
	struct rtio_qos_flow *f;
	struct rtio_qos_rates r;

	(void)state;
	/* 24 MiB/s: 384 credits, rounded up to 512 */
	r = (struct rtio_qos_rates){ .rate_Bps = 24 * MiB };
	assert_int_equal(rtio_qos_credit_ceiling(&r), 512);
	/* exactly 8 MiB/s is 128 credits, already a power of two */
	r = (struct rtio_qos_rates){ .rate_Bps = 8 * MiB };
	assert_int_equal(rtio_qos_credit_ceiling(&r), 128);
	/* 1 B/s still leaves one credit */
	r = (struct rtio_qos_rates){ .rate_Bps = 1 };
	assert_int_equal(rtio_qos_credit_ceiling(&r), 1);
	/* only reads bounded: writes may go at any rate, so no ceiling */
	r = (struct rtio_qos_rates){ .rate_read_Bps = 8 * MiB };
	assert_int_equal(rtio_qos_credit_ceiling(&r), 0);
	/* both bounded: the faster direction decides */
	r = (struct rtio_qos_rates){ .rate_read_Bps = 8 * MiB, .rate_write_Bps = 60 * MiB };
	assert_int_equal(rtio_qos_credit_ceiling(&r), 1024);
	/* a total and a tighter read limit: reads at 4, writes at the total 16 */
	r = (struct rtio_qos_rates){ .rate_Bps = 16 * MiB, .rate_read_Bps = 4 * MiB };
	assert_int_equal(rtio_qos_credit_ceiling(&r), 256);
	/* an IOPS limit alone bounds no bytes */
	r = (struct rtio_qos_rates){ .rate_iops = 100 };
	assert_int_equal(rtio_qos_credit_ceiling(&r), 0);
	/* beyond 16 bits: the largest count there is */
	r = (struct rtio_qos_rates){ .rate_Bps = 100000 * MiB };
	assert_int_equal(rtio_qos_credit_ceiling(&r), 65535);

	/* the slot carries it from assign and publish on */
	f = flow_new(&hdr, 24 * MiB, 0);
	assert_int_equal(rtio_qos_credits(f), 512);
	r = (struct rtio_qos_rates){ .rate_Bps = 2 * MiB };
	rtio_qos_publish(f, &r, 5 * NS);
	assert_int_equal(rtio_qos_credits(f), 32);
	r = (struct rtio_qos_rates){ 0 };
	rtio_qos_publish(f, &r, 6 * NS);
	assert_int_equal(rtio_qos_credits(f), 0);
	free(hdr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qos_pacing_layout),
		cmocka_unit_test(test_qos_pacing_generation),
		cmocka_unit_test(test_qos_pacing_policy_gen),
		cmocka_unit_test(test_qos_pacing_unlimited_never_waits),
		cmocka_unit_test(test_qos_pacing_burst),
		cmocka_unit_test(test_qos_pacing_rate_10s_random),
		cmocka_unit_test(test_qos_pacing_rate_change),
		cmocka_unit_test(test_qos_pacing_unlimited_to_limited),
		cmocka_unit_test(test_qos_pacing_hold_follows_rate),
		cmocka_unit_test(test_qos_pacing_directions_and_iops),
		cmocka_unit_test(test_qos_pacing_many_processes),
		cmocka_unit_test(test_qos_pacing_threads),
		cmocka_unit_test(test_qos_pacing_credit_ceiling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
