/*
 * Unit tests: the pattern analyzer, read-ahead sizing, deadlines
 * (aiod/stream.c) and the admission arithmetic (aiod/admission.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "aiod.h"
#include "profile.h"
#include "streams.h"

#define BS (1u << 20)
#define NB 256

struct fixture {
	struct aiod_ctx ctx;
	struct aiod_file file;
	struct aiod_open open;
	uint8_t *data;
};

static int setup(void **state)
{
	struct fixture *f = talloc_zero(NULL, struct fixture);
	char err[256];

	assert_non_null(f);
	assert_int_equal(aiod_config_load(f, NULL, &f->ctx.cfg, err, sizeof(err)), 0);
	f->ctx.cfg->n_classes = 1;
	f->ctx.cfg->classes[0].name = "hd";
	f->ctx.cfg->classes[0].match = "*.mxf";
	f->ctx.cfg->classes[0].bitrate = 100000000;	/* 12.5 MB/s */
	f->ctx.cfg->classes[0].prebuffer_ms = 1000;
	/* The analyzer only looks at block size and count: no memory behind the blocks. */
	f->ctx.cache = aiod_cache_create(f, (uint8_t *)0x1000, BS, NB);
	assert_non_null(f->ctx.cache);
	f->open.file = &f->file;
	f->open.name = "clips/a.mxf";
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	talloc_free(*state);
	return 0;
}

static void test_stream_classify_by_pattern(void **state)
{
	struct fixture *f = *state;

	aiod_stream_classify(&f->ctx, &f->open);	/* base name matches *.mxf */
	assert_ptr_equal(f->file.sclass, &f->ctx.cfg->classes[0]);
	f->open.name = "clips/a.mov";
	aiod_stream_classify(&f->ctx, &f->open);
	assert_null(f->file.sclass);
}

static void test_stream_sequential_reader_gets_readahead(void **state)
{
	struct fixture *f = *state;
	uint64_t off = 5 * BS;

	/* Best effort: the first reads only establish the pattern. */
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 0);
	off += BS;
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 0);
	off += BS;
	f->ctx.cfg->readahead_blocks = 16;
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 16);
	off += BS;
	/* Never more than an eighth of the cache: bulk readers must not evict each other. */
	f->ctx.cfg->readahead_blocks = 64;
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), NB / 8);
	off += BS;
	/* While a stream is open a bulk reader gets the small window. */
	f->ctx.streams = 1;
	f->ctx.cfg->readahead_blocks_streams = 3;
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 3);
	f->ctx.streams = 0;
	/* A jump disables read-ahead until the reader is sequential again. */
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, 77 * BS, BS), 0);
	assert_int_equal(f->open.ra_next_blk, 0);
}

static void test_stream_playing_after_startup_only(void **state)
{
	struct fixture *f = *state;
	uint64_t now = aiod_now_ns();

	aiod_stream_classify(&f->ctx, &f->open);	/* prebuffer_ms 1000 */
	f->open.next_off = 10 * BS;
	f->open.ra_next_blk = 14;
	f->open.play_t0_ns = now - 2000000000ull;
	assert_true(aiod_stream_playing(&f->open, 10 * BS));
	/* a jump starts again */
	assert_false(aiod_stream_playing(&f->open, 30 * BS));
	/* still filling the client's buffer */
	f->open.play_t0_ns = now - 500000000ull;
	assert_false(aiod_stream_playing(&f->open, 10 * BS));
	/* nothing read ahead yet */
	f->open.play_t0_ns = now - 2000000000ull;
	f->open.ra_next_blk = 0;
	assert_false(aiod_stream_playing(&f->open, 10 * BS));
}

static void test_stream_readahead_covers_prebuffer(void **state)
{
	struct fixture *f = *state;
	uint32_t n = 0;

	f->file.sclass = &f->ctx.cfg->classes[0];
	f->open.rate_bps = 100000000;
	for (int i = 0; i < 3; i++) {
		n = aiod_stream_observe(&f->ctx, &f->open, (uint64_t)i * BS, BS);
	}
	/*
	 * The target is (prebuffer 1 s + 1 s of margin) at 12.5 MB/s = 25 MB =
	 * 24 blocks, rounded up; while the cache has room, more (work-conserving
	 * lead), here capped by an eighth of the 256-block cache.
	 */
	assert_int_equal(n, NB / 8);
	/* Ten streams share the cache: each gets its target, never less. */
	f->ctx.streams = 10;
	n = aiod_stream_observe(&f->ctx, &f->open, 3ull * BS, BS);
	assert_int_equal(n, 24);
	f->ctx.streams = 0;
	/* A stream never takes more than an eighth of the cache. */
	f->open.rate_bps = 10000000000ull;
	n = aiod_stream_observe(&f->ctx, &f->open, 4ull * BS, BS);
	assert_int_equal(n, NB / 8);
}

/*
 * stream.c asks qos.c whether a flow is behind its reservation and what it
 * reserves: stand-ins that say what the test sets (test_qos_flows tests
 * qos.c's answers).
 */
static uint32_t stub_behind_slot = RTIO_QOS_NO_FLOW;
static uint64_t stub_reserve_Bps;

bool aiod_qos_slot_behind(const struct aiod_ctx *ctx, uint32_t slot)
{
	(void)ctx;
	return slot != RTIO_QOS_NO_FLOW && slot == stub_behind_slot;
}

uint64_t aiod_qos_slot_reserve(const struct aiod_ctx *ctx, uint32_t slot)
{
	(void)ctx;
	return slot != RTIO_QOS_NO_FLOW && slot == stub_behind_slot ? stub_reserve_Bps : 0;
}

static uint32_t stub_limit_slot = RTIO_QOS_NO_FLOW;
static uint64_t stub_read_limit_Bps;

uint64_t aiod_qos_slot_read_limit(const struct aiod_ctx *ctx, uint32_t slot)
{
	(void)ctx;
	return slot != RTIO_QOS_NO_FLOW && slot == stub_limit_slot ? stub_read_limit_Bps : 0;
}

/*
 * A best-effort reader whose flow has a read limit gets one second of it
 * read ahead (at least two requests), never the whole window: read-ahead is
 * device time the flow is not charged for until its clients read it.
 */
static void test_stream_readahead_bounded_by_read_limit(void **state)
{
	struct fixture *f = *state;
	uint64_t off = 5 * BS;

	f->ctx.cfg->readahead_blocks = 24;
	f->ctx.cfg->readahead_io_size = 2 * BS;
	f->open.qos_slot = 7;
	for (int i = 0; i < 2; i++, off += BS) {
		assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 0);
	}
	/* A flow without a read limit: the whole window. */
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 24);
	off += BS;
	stub_limit_slot = 7;
	/* 10 MiB/s: ten blocks of 1 MiB */
	stub_read_limit_Bps = 10ull * BS;
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 10);
	off += BS;
	/* a part of a block rounds up */
	stub_read_limit_Bps = 10ull * BS + 1;
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 11);
	off += BS;
	/* 1 MiB/s: still two read-ahead requests, so one is refilled while the other is read */
	stub_read_limit_Bps = BS;
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 4);
	off += BS;
	/* a limit above the window changes nothing */
	stub_read_limit_Bps = 100ull * BS;
	assert_int_equal(aiod_stream_observe(&f->ctx, &f->open, off, BS), 24);
	off += BS;
	/* an admitted stream's window follows its bitrate, whatever its flow's limit */
	stub_read_limit_Bps = BS;
	f->file.sclass = &f->ctx.cfg->classes[0];
	f->open.rate_bps = 100000000;
	assert_true(aiod_stream_observe(&f->ctx, &f->open, off, BS) >= 24);
	stub_limit_slot = RTIO_QOS_NO_FLOW;
}

static void test_stream_deadlines_follow_playback(void **state)
{
	struct fixture *f = *state;
	uint64_t now, d1, d10;

	f->open.rate_bps = 80000000;	/* 10 MB/s: 1 MB is due every 100 ms */
	f->open.next_off = 0;
	now = aiod_now_ns();
	d1 = aiod_stream_deadline(&f->ctx, &f->open, 1000000, 0);
	d10 = aiod_stream_deadline(&f->ctx, &f->open, 10000000, 0);
	assert_true(d1 >= now + 99000000ull && d1 <= now + 150000000ull);
	assert_true(d10 >= now + 999000000ull && d10 <= now + 1050000000ull);
	/* Data behind the reader is due now. */
	f->open.next_off = 20000000;
	assert_true(aiod_stream_deadline(&f->ctx, &f->open, 0, 0) <= aiod_now_ns());
	/* Best effort: due best_effort_deadline_ms from now. */
	f->open.rate_bps = 0;
	now = aiod_now_ns();
	d1 = aiod_stream_deadline(&f->ctx, &f->open, 0, 0);
	assert_true(d1 >= now + 499000000ull && d1 <= now + 550000000ull);
}

/*
 * A stream whose reader fell behind its timeline gets its refills due when
 * its timeline needs them (catch-up), not when a reader that stays behind
 * would ask; a pause longer than the prebuffer starts the timeline again.
 */
static void test_stream_deadlines_catch_up(void **state)
{
	struct fixture *f = *state;
	const uint64_t ms = 1000000ull;
	uint64_t now, d;

	aiod_stream_classify(&f->ctx, &f->open);	/* class hd: prebuffer 1000 ms */
	f->open.rate_bps = 80000000;	/* 10 MB/s: 1 MB is due every 100 ms */
	(void)aiod_stream_observe(&f->ctx, &f->open, 0, BS);
	assert_int_not_equal(f->open.play_t0_ns, 0);
	/* On time: the reader's position and the timeline agree. */
	now = aiod_now_ns();
	d = aiod_stream_deadline(&f->ctx, &f->open, 10000000, 0);
	assert_true(d >= now + 990 * ms && d <= now + 1050 * ms);
	/* 300 ms behind (the first read was 300 ms earlier): due 300 ms sooner than the reader says. */
	f->open.play_t0_ns -= 300 * ms;
	(void)aiod_stream_observe(&f->ctx, &f->open, BS, BS);
	now = aiod_now_ns();
	d = aiod_stream_deadline(&f->ctx, &f->open, 10000000, 0);
	assert_true(d <= now + 710 * ms);
	assert_true(d + 50 * ms >= now + 700 * ms);
	/* Ahead of its timeline (filling its buffer): the reader's position counts. */
	f->open.play_t0_ns += 800 * ms;
	now = aiod_now_ns();
	d = aiod_stream_deadline(&f->ctx, &f->open, 10000000, 0);
	assert_true(d >= now + 890 * ms && d <= now + 950 * ms);
	/* Paused for 2 s, more than the prebuffer: the timeline starts again at the next read. */
	f->open.play_t0_ns -= 2500 * ms;
	(void)aiod_stream_observe(&f->ctx, &f->open, 2ull * BS, BS);
	now = aiod_now_ns();
	assert_true(f->open.play_t0_ns + 50 * ms >= now);
	assert_int_equal(f->open.play_off0, 2ull * BS);
	d = aiod_stream_deadline(&f->ctx, &f->open, 2ull * BS + 10000000, 0);
	assert_true(d >= now + 990 * ms && d <= now + 1050 * ms);
}

/*
 * A QoS flow behind its reservation reads like a stream at the reserved
 * rate: what its client waits for is due now (before best effort's
 * read-ahead, however long that has queued), a block ahead when the reader
 * gets there at that rate. Once the flow has its reservation, best effort.
 */
static void test_stream_deadlines_reserved_flow(void **state)
{
	struct fixture *f = *state;
	const uint64_t ms = 1000000ull;
	uint64_t now, d;

	f->open.rate_bps = 0;
	f->open.qos_slot = 3;
	stub_behind_slot = 3;
	stub_reserve_Bps = 32ull << 20;	/* 32 MiB/s: 16 MiB is due in half a second */
	(void)aiod_stream_observe(&f->ctx, &f->open, 0, BS);
	now = aiod_now_ns();
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 0);
	assert_true(d >= now && d <= now + 50 * ms);
	d = aiod_stream_deadline(&f->ctx, &f->open, 16ull << 20, 0);
	assert_true(d >= now + 499 * ms && d <= now + 550 * ms);
	/* Data behind the reader: now. */
	assert_true(aiod_stream_deadline(&f->ctx, &f->open, 0, 0) <= aiod_now_ns());
	/*
	 * Its flow got the reservation: best effort (best_effort_deadline_ms
	 * 500), read-ahead 16 blocks past the read a quarter of the 64-block
	 * window's deadline later.
	 */
	stub_behind_slot = RTIO_QOS_NO_FLOW;
	now = aiod_now_ns();
	d = aiod_stream_deadline(&f->ctx, &f->open, 16ull << 20, 0);
	assert_true(d >= now + 624 * ms && d <= now + 675 * ms);
	/* While a stream is admitted best effort gives way: its read-ahead is due as its read. */
	f->ctx.streams = 1;
	d = aiod_stream_deadline(&f->ctx, &f->open, 16ull << 20, 0);
	assert_true(d >= now + 499 * ms && d <= now + 550 * ms);
	f->ctx.streams = 0;
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 0);
	assert_true(d >= now + 499 * ms && d <= now + 550 * ms);
	/* A flow without a reservation is never due sooner (behind, but reserving 0). */
	stub_behind_slot = 3;
	stub_reserve_Bps = 0;
	now = aiod_now_ns();
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 0);
	assert_true(d >= now + 499 * ms);
	stub_behind_slot = RTIO_QOS_NO_FLOW;
}

/*
 * Best effort's share next to admitted streams (aiod_best_effort_due):
 * requests are due one after another at the unreserved fraction of the
 * device, never later than best_effort_deadline_ms, and with nothing owed
 * as before (a best-effort deadline after the read).
 */
static void test_best_effort_share_next_to_streams(void **state)
{
	struct fixture *f = *state;
	const uint64_t ms = 1000000ull;
	struct aiod_file file = { .ino = 3 };
	struct aiod_open s[6];
	uint64_t now, d, prev, clock;

	f->ctx.cfg->be_deadline_ms = 2400;
	f->ctx.cfg->admission_capacity = 100000000;	/* 100 MB/s, no profile: bytes / capacity */
	f->ctx.cfg->admission_headroom_pct = 0;
	aiod_admission_init(&f->ctx);
	/* Nothing owed: a demand read is due a whole best-effort deadline later. */
	now = aiod_now_ns();
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 1000000);
	assert_true(d >= now + 2400 * ms && d <= now + 2450 * ms);
	file.sclass = &f->ctx.cfg->classes[0];
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 6; i++) {
		s[i].name = "z.mxf";
		s[i].file = &file;
		assert_int_equal(aiod_admission_admit(&f->ctx, &s[i], 100000000), 0);
	}
	assert_int_equal(f->ctx.reserved_Bps, 75000000);	/* a quarter is nobody's */
	/*
	 * 1 MB is 10 ms of the device: due then, and it takes 40 ms of best
	 * effort's quarter of the clock; the next starts behind it.
	 */
	now = aiod_now_ns();
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 1000000);
	assert_true(d >= now + 10 * ms && d <= now + 30 * ms);
	assert_true(f->ctx.be_clock_ns >= now + 40 * ms && f->ctx.be_clock_ns <= now + 60 * ms);
	/* The read-ahead it starts (4 MB, 40 ms) is due right after it: one burst, no seek between. */
	prev = d;
	clock = f->ctx.be_clock_ns;
	d = aiod_stream_deadline(&f->ctx, &f->open, 4000000, 4000000);
	assert_true(d >= prev + 40 * ms && d <= prev + 41 * ms);
	/* ... yet it took its 160 ms of the clock. */
	assert_true(f->ctx.be_clock_ns >= clock + 160 * ms && f->ctx.be_clock_ns <= clock + 161 * ms);
	/* The next read (a later turn) starts where the clock is: 1 MB due 10 ms after it. */
	f->ctx.be_burst_ns = 0;
	clock = f->ctx.be_clock_ns;
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 1000000);
	assert_true(d >= clock + 10 * ms && d <= clock + 11 * ms);
	/* A reader that asks for more than the share: never later than the deadline. */
	for (int i = 0; i < 100; i++) {
		d = aiod_stream_demand_deadline(&f->ctx, &f->open, 4000000);
		assert_true(d <= aiod_now_ns() + 2400 * ms);
	}
	assert_true(d >= aiod_now_ns() + 2350 * ms);
	/* The clock went no further: the next reader is not behind that backlog. */
	assert_true(f->ctx.be_clock_ns <= aiod_now_ns() + 2400 * ms);
	/* The headroom is not best effort's: 20 % of it leaves 5 MB/s, 1 MB takes 200 ms of clock. */
	f->ctx.cfg->admission_headroom_pct = 20;
	f->ctx.be_clock_ns = 0;
	f->ctx.be_burst_ns = 0;
	now = aiod_now_ns();
	(void)aiod_stream_demand_deadline(&f->ctx, &f->open, 1000000);
	assert_true(f->ctx.be_clock_ns >= now + 200 * ms && f->ctx.be_clock_ns <= now + 220 * ms);
	/* Reservations up to the limit: nothing left, best effort its deadline. */
	f->ctx.cfg->admission_headroom_pct = 25;
	now = aiod_now_ns();
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 1000000);
	assert_true(d >= now + 2400 * ms && d <= now + 2450 * ms);
	f->ctx.cfg->admission_headroom_pct = 0;
	/* A reservation that takes the whole capacity leaves best effort its deadline. */
	f->ctx.be_clock_ns = 0;
	f->ctx.be_burst_ns = 0;
	f->ctx.reserved_Bps = 100000000;
	now = aiod_now_ns();
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 1000000);
	assert_true(d >= now + 2400 * ms && d <= now + 2450 * ms);
	f->ctx.reserved_Bps = 75000000;
	/* A stream starts: best effort gives way for its prebuffer, a second and a round. */
	f->ctx.be_clock_ns = 0;
	(void)aiod_stream_observe(&f->ctx, &s[0], 0, BS);
	now = aiod_now_ns();
	assert_true(f->ctx.be_hold_ns >= now + 1999 * ms + aiod_stream_round_ns(&f->ctx));
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 1000000);
	assert_true(d >= now + 2400 * ms);
	assert_int_equal(f->ctx.be_clock_ns, 0);
	/* Once it has started, the share again. */
	f->ctx.be_hold_ns = 0;
	f->ctx.be_burst_ns = 0;
	now = aiod_now_ns();
	d = aiod_stream_demand_deadline(&f->ctx, &f->open, 1000000);
	assert_true(d >= now + 10 * ms && d <= now + 30 * ms);
	for (int i = 0; i < 6; i++) {
		aiod_admission_release(&f->ctx, &s[i]);
	}
	assert_int_equal(f->ctx.reserved_Bps, 0);
}

static void test_admission_refuses_overcommit(void **state)
{
	struct fixture *f = *state;
	struct aiod_open o[4];

	f->ctx.cfg->admission_mode = "refuse";
	f->ctx.cfg->admission_headroom_pct = 10;
	f->ctx.capacity_Bps = 40000000;	/* 90 % = 36 MB/s: two 12.5 MB/s streams, not three */
	memset(o, 0, sizeof(o));
	for (int i = 0; i < 4; i++) {
		o[i].name = "x.mxf";
		o[i].file = &f->file;
	}
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[0], 100000000), 0);
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[1], 100000000), 0);
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[2], 100000000), -ENOBUFS);
	assert_int_equal(f->ctx.streams, 2);
	assert_int_equal(f->ctx.reserved_Bps, 25000000);
	assert_int_equal(f->ctx.admission_refused, 1);
	/* Demote mode: admitted, but as best effort. */
	f->ctx.cfg->admission_mode = "demote";
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[2], 100000000), 0);
	assert_int_equal(o[2].rate_bps, 0);
	assert_false(o[2].reserved);
	/* A small stream still fits. */
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[3], 50000000), 0);
	assert_int_equal(f->ctx.reserved_Bps, 31250000);
	/* Releasing gives the reservation back, once. */
	aiod_admission_release(&f->ctx, &o[0]);
	aiod_admission_release(&f->ctx, &o[0]);
	assert_int_equal(f->ctx.reserved_Bps, 18750000);
	assert_int_equal(f->ctx.streams, 2);
	aiod_admission_release(&f->ctx, &o[2]);	/* demoted: nothing reserved */
	assert_int_equal(f->ctx.streams, 2);
}

/*
 * A class's stream demoted while the device was fully booked gets its
 * reservation when one is released, oldest first, as far as the room goes;
 * one that is closing does not, and a demoted stream that closes leaves the
 * queue. A file of no class (auto_stream's measured rate) is not queued.
 */
static void test_admission_promotes_demoted_stream(void **state)
{
	struct fixture *f = *state;
	struct aiod_file noclass = { .ino = 3 };
	struct aiod_open o[5];

	/* Streams started long ago: the start-up check is another test's. */
	f->ctx.cfg->admission_startup_s = 0;
	f->ctx.cfg->admission_mode = "demote";
	f->ctx.cfg->admission_headroom_pct = 10;
	f->ctx.capacity_Bps = 40000000;	/* 90 % = 36 MB/s: two 12.5 MB/s streams, not three */
	f->file.sclass = &f->ctx.cfg->classes[0];
	memset(o, 0, sizeof(o));
	for (int i = 0; i < 5; i++) {
		o[i].name = "x.mxf";
		o[i].file = &f->file;
	}
	o[4].file = &noclass;
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[0], 100000000), 0);
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[1], 100000000), 0);
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[2], 100000000), 0);
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[3], 100000000), 0);
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[4], 100000000), 0);
	assert_false(o[2].reserved);
	assert_int_equal(o[2].rate_bps, 0);
	assert_true(o[2].demoted && o[3].demoted);
	assert_false(o[4].demoted);
	assert_ptr_equal(f->ctx.demoted, &o[2]);
	assert_int_equal(f->ctx.admission_demoted, 3);
	assert_int_equal(aiod_admission_waiting(&f->ctx), 2);	/* o[4] is of no class */

	/* o[2] played 5 MiB as best effort, falling behind its timeline from 1 ns. */
	o[2].play_t0_ns = 1;
	o[2].play_off0 = 0;
	o[2].next_off = 5 * BS;
	aiod_admission_release(&f->ctx, &o[0]);
	assert_true(o[2].reserved);
	assert_int_equal(o[2].rate_bps, 100000000);
	assert_false(o[2].demoted);
	assert_int_equal(f->ctx.streams, 2);
	assert_int_equal(f->ctx.reserved_Bps, 25000000);
	assert_int_equal(f->file.reserved_bps, 200000000ull);
	/* its timeline starts where it reads: no debt from its best-effort past */
	assert_int_equal(o[2].play_off0, 5 * BS);
	assert_true(o[2].play_t0_ns > 1);
	/* the next one waits: no room for it */
	assert_false(o[3].reserved);
	assert_ptr_equal(f->ctx.demoted, &o[3]);
	assert_int_equal(aiod_admission_waiting(&f->ctx), 1);

	/* closing: not promoted, and gone from the queue once released */
	o[3].closing = true;
	aiod_admission_release(&f->ctx, &o[1]);
	assert_false(o[3].reserved);
	assert_int_equal(f->ctx.streams, 1);
	aiod_admission_release(&f->ctx, &o[3]);
	assert_false(o[3].demoted);
	assert_null(f->ctx.demoted);
	assert_null(f->ctx.demoted_last);
	assert_int_equal(aiod_admission_waiting(&f->ctx), 0);
	assert_int_equal(f->ctx.streams, 1);
	assert_int_equal(f->ctx.reserved_Bps, 12500000);
}

/* A reload that raises the capacity admits the demoted streams it makes room for. */
static void test_admission_reload_promotes(void **state)
{
	struct fixture *f = *state;
	struct aiod_open o[4];

	/* Streams started long ago: the start-up check is another test's. */
	f->ctx.cfg->admission_startup_s = 0;
	f->ctx.cfg->admission_mode = "demote";
	f->ctx.cfg->admission_headroom_pct = 10;
	f->ctx.cfg->admission_capacity = 40000000;	/* 36 MB/s: two streams */
	aiod_admission_init(&f->ctx);
	f->file.sclass = &f->ctx.cfg->classes[0];
	memset(o, 0, sizeof(o));
	for (int i = 0; i < 4; i++) {
		o[i].name = "x.mxf";
		o[i].file = &f->file;
		assert_int_equal(aiod_admission_admit(&f->ctx, &o[i], 100000000), 0);
	}
	assert_int_equal(f->ctx.streams, 2);
	assert_true(o[2].demoted && o[3].demoted);
	/* 45 MB/s: room for one more, the one demoted first */
	f->ctx.cfg->admission_capacity = 50000000;
	aiod_admission_init(&f->ctx);
	assert_int_equal(f->ctx.streams, 3);
	assert_true(o[2].reserved);
	assert_false(o[3].reserved);
	assert_ptr_equal(f->ctx.demoted, &o[3]);
	assert_int_equal(aiod_admission_waiting(&f->ctx), 1);
	/* mode off: everything in */
	f->ctx.cfg->admission_mode = "off";
	aiod_admission_init(&f->ctx);
	assert_int_equal(f->ctx.streams, 4);
	assert_null(f->ctx.demoted);
	for (int i = 0; i < 4; i++) {
		aiod_admission_release(&f->ctx, &o[i]);
	}
	assert_int_equal(f->ctx.streams, 0);
	assert_int_equal(f->ctx.reserved_Bps, 0);
}

/*
 * Streams that start together: each admitted stream owes its window, and
 * the debt drains at the capacity the reservations leave over. One that
 * opens while there is debt is admitted only if what would be left over
 * pays the debt and its own window within startup_s; the one that is not
 * waits as best effort, and so does any that opens after it, until the
 * debt is paid. 100 MB/s, 12.5 MB/s streams with a 12.5 MB window
 * (prebuffer 0), startup_s 2: the fifth finds 50 MB owed and 37.5 MB/s
 * would be left (62.5 MB in 1.7 s), a sixth 62.5 MB and 25 MB/s (75 MB in
 * 3 s); the 62.5 MB drain at 37.5 MB/s in 1.7 s.
 */
static void test_admission_streams_that_start_together(void **state)
{
	struct fixture *f = *state;
	struct aiod_file proxy = { .ino = 4 };
	struct aiod_open o[7];
	uint64_t t0;

	f->ctx.ev = tevent_context_init(f);
	assert_non_null(f->ctx.ev);
	f->ctx.cfg->n_classes = 2;
	f->ctx.cfg->classes[1].name = "proxy";
	f->ctx.cfg->classes[1].match = "*.mov";
	f->ctx.cfg->classes[1].bitrate = 10000000;
	f->ctx.cfg->classes[1].prebuffer_ms = 0;
	proxy.sclass = &f->ctx.cfg->classes[1];
	f->ctx.cfg->admission_mode = "demote";
	f->ctx.cfg->admission_headroom_pct = 0;
	f->ctx.cfg->classes[0].prebuffer_ms = 0;
	f->ctx.capacity_Bps = 100000000;
	f->file.sclass = &f->ctx.cfg->classes[0];
	memset(o, 0, sizeof(o));
	for (int i = 0; i < 7; i++) {
		o[i].name = "x.mxf";
		o[i].file = &f->file;
	}
	o[6].name = "x.mov";
	o[6].file = &proxy;
	/* Without the check, the capacity alone decides: six fit. */
	f->ctx.cfg->admission_startup_s = 0;
	for (int i = 0; i < 6; i++) {
		assert_int_equal(aiod_admission_admit(&f->ctx, &o[i], 100000000), 0);
		assert_true(o[i].reserved);
	}
	assert_int_equal(f->ctx.startup_debt, 0);	/* and nothing is counted */
	for (int i = 0; i < 6; i++) {
		aiod_admission_release(&f->ctx, &o[i]);
	}
	assert_int_equal(f->ctx.streams, 0);

	/* With it, five; each owes its window (less what drained in the microseconds between). */
	f->ctx.cfg->admission_startup_s = 2;
	for (int i = 0; i < 5; i++) {
		assert_int_equal(aiod_admission_admit(&f->ctx, &o[i], 100000000), 0);
		assert_true(o[i].reserved);
	}
	assert_true(aiod_admission_startup_debt(&f->ctx) <= 5 * 12500000 &&
		    aiod_admission_startup_debt(&f->ctx) > 5 * 12400000);
	/* The sixth would fit the capacity, but not in time: refused, or ... */
	f->ctx.cfg->admission_mode = "refuse";
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[5], 100000000), -ENOBUFS);
	assert_int_equal(f->ctx.admission_refused, 1);
	/* ... demoted, with a timer to ask again while the debt drains. */
	f->ctx.cfg->admission_mode = "demote";
	t0 = aiod_now_ns();
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[5], 100000000), 0);
	assert_false(o[5].reserved);
	assert_true(o[5].demoted);
	assert_int_equal(o[5].rate_bps, 0);
	assert_non_null(f->ctx.promote_timer);
	assert_int_equal(f->ctx.streams, 5);

	/*
	 * A 10 Mbit/s stream would start in time (63.75 MB owed, 36.25 MB/s
	 * left over for 2 s), but waits behind it.
	 */
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[6], 10000000), 0);
	assert_false(o[6].reserved);
	assert_ptr_equal(f->ctx.demoted_last, &o[6]);
	/*
	 * One of the five closes (no timer pending, as if none could be had):
	 * room, but not for starting yet; the promotion looks again later.
	 */
	TALLOC_FREE(f->ctx.promote_timer);
	aiod_admission_release(&f->ctx, &o[4]);
	assert_false(o[5].reserved);
	assert_non_null(f->ctx.promote_timer);

	/* Once the windows are paid (62.5 MB at 50 MB/s: 1.25 s), the sixth is admitted. */
	for (int i = 0; i < 50 && !o[5].reserved; i++) {
		assert_int_equal(tevent_loop_once(f->ctx.ev), 0);
	}
	assert_true(o[5].reserved);
	assert_false(o[5].demoted);
	assert_int_equal(o[5].rate_bps, 100000000);
	assert_true(aiod_now_ns() - t0 >= 1200000000ull);
	assert_int_equal(f->ctx.streams, 5);
	/* ... and it owes its own window: the next waits for that (0.33 s at 37.5 MB/s). */
	assert_false(o[6].reserved);
	assert_non_null(f->ctx.promote_timer);
	for (int i = 0; i < 50 && !o[6].reserved; i++) {
		assert_int_equal(tevent_loop_once(f->ctx.ev), 0);
	}
	assert_true(o[6].reserved);
	assert_int_equal(o[6].rate_bps, 10000000);
	assert_null(f->ctx.promote_timer);	/* nobody waits: no timer */
	assert_int_equal(f->ctx.streams, 6);
	for (int i = 0; i < 7; i++) {
		aiod_admission_release(&f->ctx, &o[i]);
	}
	assert_int_equal(f->ctx.streams, 0);
	assert_null(f->ctx.demoted);
}

/*
 * Opens the first n of o together at bps: how many admission reserved. The
 * ones it reserves are the first ones (asserted): a later open never gets
 * in where an earlier one was held back.
 */
static int admit_together(struct fixture *f, struct aiod_open *o, int n, uint64_t bps)
{
	int admitted = 0;

	for (int i = 0; i < n; i++) {
		assert_int_equal(aiod_admission_admit(&f->ctx, &o[i], bps), 0);
		if (o[i].reserved) {
			assert_int_equal(admitted, i);
			admitted++;
		}
	}
	return admitted;
}

/* Releases the first n of o and forgets the start-up debt they left: the next case starts clean. */
static void release_all(struct fixture *f, struct aiod_open *o, int n)
{
	for (int i = 0; i < n; i++) {
		aiod_admission_release(&f->ctx, &o[i]);
	}
	f->ctx.startup_debt = 0;
}

/*
 * Streams that start together on a calibrated device: admission also plays
 * aiod's start-up forward (startup_plan.h), each client playing its class's
 * prebuffer_ms after it asks. The emulated disk of bench/rt (15.2 ms per
 * request, 168 MB/s, 146 MB/s in 16 MiB requests), 100 Mbit/s streams
 * opened at once: with 0.5 s of buffer the debt check alone (startup_s 20)
 * admits nine and bench/rt measured nine late; the plan admits eight. With
 * 1 s it admits ten, which bench/rt measured clean. Streams that have
 * played a while have their lead in the cache, and the plan counts it: a
 * ninth may start next to eight that are 3 s ahead.
 */
static void test_admission_plans_start_up(void **state)
{
	struct fixture *f = *state;
	struct aiod_profile p = {
		.request_us = 15200, .npoints = 1,
		.points = { { .size = 16u << 20, .random_Bps = 146000000, .sequential_Bps = 168000000 } },
	};
	struct aiod_open o[11];
	uint64_t now;

	f->ctx.cfg->admission_mode = "demote";
	f->ctx.cfg->admission_startup_s = 20;
	f->ctx.cfg->readahead_io_size = 16u << 20;
	f->ctx.capacity_Bps = 146000000;
	f->file.sclass = &f->ctx.cfg->classes[0];
	f->file.ino = 7;
	memset(o, 0, sizeof(o));
	for (int i = 0; i < 11; i++) {
		o[i].name = "x.mxf";
		o[i].file = &f->file;
	}

	/* No profile, no plan: the debt check alone lets nine start with 0.5 s buffers. */
	f->ctx.cfg->classes[0].prebuffer_ms = 500;
	assert_int_equal(admit_together(f, o, 9, 100000000), 9);
	release_all(f, o, 9);
	assert_null(f->ctx.admitted);

	/* With the profile: eight, the ninth served best effort. */
	f->ctx.profile = &p;
	assert_int_equal(admit_together(f, o, 9, 100000000), 8);
	assert_true(o[8].demoted);
	assert_int_equal(f->ctx.streams, 8);
	/*
	 * Their windows paid (no debt), the eight have still read nothing: the
	 * plan keeps the ninth demoted, and promotion asks it.
	 */
	f->ctx.startup_debt = 0;
	aiod_admission_init(&f->ctx);
	assert_true(o[8].demoted);
	assert_false(o[8].reserved);
	release_all(f, o, 9);
	assert_null(f->ctx.admitted);
	assert_null(f->ctx.demoted);

	/*
	 * 1 s buffers: nine. The tenth is planned 59 ms early, less than one
	 * io_size request takes (115 ms): the plan's margin.
	 */
	f->ctx.cfg->classes[0].prebuffer_ms = 1000;
	assert_int_equal(admit_together(f, o, 11, 100000000), 9);
	release_all(f, o, 11);

	/*
	 * 0.5 s buffers next to a copy that just read 8 MiB from the device:
	 * its reads go once a best-effort deadline, and one goes first. Seven.
	 */
	f->ctx.cfg->classes[0].prebuffer_ms = 500;
	f->ctx.cfg->be_deadline_ms = 2304;
	now = aiod_now_ns();
	aiod_best_effort_seen(&f->ctx, 8u << 20, now);
	assert_int_equal(aiod_best_effort_recent(&f->ctx, now), 8u << 20);
	assert_int_equal(admit_together(f, o, 8, 100000000), 7);
	assert_true(o[7].demoted);
	release_all(f, o, 8);
	/* A copy last seen two deadlines ago is gone: eight again. */
	f->ctx.be_seen_ns = aiod_now_ns() - 2 * 2304 * 1000000ull - 1;
	assert_int_equal(aiod_best_effort_recent(&f->ctx, aiod_now_ns()), 0);
	assert_int_equal(admit_together(f, o, 8, 100000000), 8);
	release_all(f, o, 8);

	/*
	 * 0.5 s again, eight admitted and playing for 4 s, each with 3 s of
	 * data cached ahead of its reader (own files: the cache is per file).
	 */
	f->ctx.cfg->classes[0].prebuffer_ms = 500;
	now = aiod_now_ns();
	for (int i = 0; i < 8; i++) {
		struct aiod_file *file = talloc_zero(f, struct aiod_file);

		assert_non_null(file);
		file->ino = 100 + (uint64_t)i;
		file->sclass = &f->ctx.cfg->classes[0];
		o[i].file = file;
		assert_int_equal(aiod_admission_admit(&f->ctx, &o[i], 100000000), 0);
		assert_true(o[i].reserved);
		o[i].play_t0_ns = now - 4000000000ull;
		o[i].next_off = 4u * 12500000;	/* read to where it plays, 0.5 s ahead */
		o[i].ra_size = 16;
		for (uint64_t blk = o[i].next_off / BS; blk < 7u * 12500000 / BS; blk++) {
			struct aiod_block *b = aiod_cache_get(f->ctx.cache);

			assert_non_null(b);
			aiod_cache_insert(f->ctx.cache, b, 0, file->ino, blk);
			aiod_cache_load_done(f->ctx.cache, b, BS);
			aiod_cache_unref(f->ctx.cache, b);
		}
	}
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[8], 100000000), 0);
	assert_true(o[8].reserved);
	/* Demoted (the debt, here), it is promoted once the plan holds. */
	aiod_admission_release(&f->ctx, &o[8]);
	f->ctx.startup_debt = 1000000000000ull;
	f->ctx.startup_at_ns = aiod_now_ns();
	assert_int_equal(aiod_admission_admit(&f->ctx, &o[8], 100000000), 0);
	assert_true(o[8].demoted);
	f->ctx.startup_debt = 0;
	aiod_admission_init(&f->ctx);
	assert_false(o[8].demoted);
	assert_true(o[8].reserved);
	for (int i = 0; i < 9; i++) {
		aiod_admission_release(&f->ctx, &o[i]);
	}
	assert_int_equal(f->ctx.streams, 0);
	f->ctx.profile = NULL;
}

static void test_admission_unknown_capacity_admits(void **state)
{
	struct fixture *f = *state;
	struct aiod_file file = { .ino = 2 };
	struct aiod_open o = { .name = "y.mxf", .file = &file };

	f->ctx.cfg->admission_mode = "refuse";
	f->ctx.capacity_Bps = 0;
	for (int i = 0; i < 100; i++) {
		o.reserved = false;
		assert_int_equal(aiod_admission_admit(&f->ctx, &o, 100000000), 0);
	}
	assert_int_equal(f->ctx.streams, 100);
	/* The file's sum of reservations (aiodctl files) follows its opens. */
	assert_int_equal(file.reserved_bps, 100ull * 100000000);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stream_classify_by_pattern, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_sequential_reader_gets_readahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_playing_after_startup_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_readahead_covers_prebuffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_readahead_bounded_by_read_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_deadlines_follow_playback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_deadlines_catch_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_deadlines_reserved_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_best_effort_share_next_to_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admission_refuses_overcommit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admission_promotes_demoted_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admission_reload_promotes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admission_streams_that_start_together, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admission_plans_start_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admission_unknown_capacity_admits, setup, teardown),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("stream", tests, NULL, NULL);
}
