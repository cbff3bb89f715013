/*
 * Unit tests of writers' write-back through aiod's request layer: WROTE
 * (write.c), which writers aiod writes back and by when (record.c), the
 * runs (writeback.c), admission of a stream file opened for writing, and
 * the replies held while a writer is ahead (writehold.c), against a fake
 * engine (fake_engine.c) that completes a run when the test says. A real
 * session feeds aiod_data_handle() as in test_dataplane.c
 * (dataplane_fixture.h).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "profile.h"
#include "record.h"
#include "requests.h"
#include "streams.h"

#define BS      (1u << 20)
#define NBLOCKS 4u

#include "dataplane_fixture.h"

#define IO_SIZE (4 * BS)
#define RATE    100000000ull	/* the class's bits/s */
/* A full run of a recorder at RATE is due when its next run is full: IO_SIZE * 8 / RATE. */
#define RUN_NS  ((uint64_t)IO_SIZE * 8 * 1000000000ull / RATE)

static void use_recorder_class(struct fixture *f)
{
	struct aiod_config *cfg = f->ctx->cfg;

	cfg->n_classes = 1;
	cfg->classes[0] = (struct aiod_stream_class){ .name = "hd", .match = "*.mxf",
						      .bitrate = RATE, .prebuffer_ms = 1000 };
	cfg->readahead_io_size = IO_SIZE;
}


/*
 * A class-matched writer's runs go to the device whole, each due when the
 * next would be full at the class bitrate; the tail goes at CLOSE.
 *
 *   writes  |0|1|2|3|4|5|6|7|8|        1 MiB each
 *   runs    |   run 0 |  run 1  |8|    queued at writes 3 and 7; 8 at CLOSE
 *
 * The test writes far faster than the class: run 1 is due a run's time
 * after run 0 (record.c paces them), the tail a quarter run after that.
 */
static void test_recorder_runs_due_at_class_rate(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct fake_writeback wb[8];
	uint64_t id, t0[9], t1[9];
	struct aiod_open *o;

	use_recorder_class(f);
	assert_int_equal(open_as(f, "rec.mxf", O_RDWR, &id), 0);
	o = open_of(f, id);
	for (uint32_t i = 0; i < 9; i++) {
		wrote(f, id, (uint64_t)i * BS, BS, &t0[i], &t1[i]);
		assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), (i + 1) / 4);
	}
	assert_int_equal(ctx->recorders, 1);
	for (uint32_t k = 0; k < 2; k++) {
		assert_int_equal(wb[k].off, (uint64_t)k * IO_SIZE);
		assert_int_equal(wb[k].len, IO_SIZE);
		assert_true(wb[k].wait);		/* holds the device until written */
		assert_int_not_equal(wb[k].fd, o->fd);	/* never waits on smbd's description */
	}
	/* Due when the next run is full: at the rate, a run's time after it was complete. */
	assert_in_range(wb[0].deadline_ns, t0[3] + RUN_NS, t1[3] + RUN_NS);
	assert_int_equal(wb[1].deadline_ns, wb[0].deadline_ns + RUN_NS);
	assert_int_equal(close_id(f, id), 0);
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 3);
	assert_int_equal(wb[2].off, 2ull * IO_SIZE);
	assert_int_equal(wb[2].len, BS);
	assert_int_equal(wb[2].deadline_ns, wb[1].deadline_ns + RUN_NS / 4);
	assert_int_equal(ctx->recorders, 0);
	assert_int_equal(ctx->streams, 1);	/* the reservation lasts while its last run is due */
	assert_int_equal(fake_engine_run(ctx->engine), 3);
	assert_int_equal(ctx->st.writebacks, 3);
	assert_int_equal(ctx->st.writeback_bytes, 9ull * BS);
	assert_int_equal(ctx->st.writeback_late, 0);
	assert_int_equal(ctx->st.writeback_errors, 0);
	assert_int_equal(ctx->streams, 0);
	assert_int_equal(ctx->reserved_Bps, 0);
}

/*
 * A recorder that goes back (to rewrite its header, as MXF writers do when
 * they finish) ends its run: the unfinished run is queued then, not left to
 * the kernel's expiry.
 */
static void test_recorder_jump_queues_its_run(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct fake_writeback wb[4];
	uint64_t id, t0, t1;

	use_recorder_class(f);
	assert_int_equal(open_as(f, "take.mxf", O_RDWR, &id), 0);
	for (uint32_t i = 0; i < 3; i++) {
		wrote(f, id, (uint64_t)i * BS, BS, &t0, &t1);
	}
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 4), 0);
	wrote(f, id, 0, 4096, &t0, &t1);	/* the header */
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 4), 1);
	assert_int_equal(wb[0].off, 0);
	assert_int_equal(wb[0].len, 3 * BS);
	assert_in_range(wb[0].deadline_ns, t0 + RUN_NS, t1 + RUN_NS);
	assert_int_equal(ctx->recorders, 1);	/* still one */
	assert_int_equal(close_id(f, id), 0);
	assert_int_equal(fake_engine_run(ctx->engine), 2);	/* and the header at CLOSE */
	assert_int_equal(ctx->st.writeback_bytes, 3ull * BS + 4096);
}

/* Writes that never make a run, even to a stream file with a stream open: the kernel's. */
static void test_random_writer_left_to_kernel(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	static const uint32_t at[] = { 6, 1, 4, 0, 9, 3, 7 };	/* in MiB, 2 MiB each */
	struct fake_writeback wb[4];
	uint64_t id, t0, t1;

	use_recorder_class(f);
	assert_int_equal(open_as(f, "edit.mxf", O_RDWR, &id), 0);
	assert_int_equal(ctx->streams, 1);	/* scheduling is on: only the pattern decides */
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		wrote(f, id, (uint64_t)at[i] * BS, 2 * BS, &t0, &t1);
	}
	assert_int_equal(ctx->recorders, 0);
	assert_int_equal(close_id(f, id), 0);
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 4), 0);
	assert_int_equal(ctx->st.writebacks, 0);
}

/*
 * A writable open of a stream file reserves the class bitrate once, whatever
 * its access, gives it back at close, and is refused like a reader when the
 * device is full.
 */
static void test_recorder_admission(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct fake_writeback wb[4];
	uint64_t rw, wo, id, t0, t1;

	use_recorder_class(f);
	assert_int_equal(open_as(f, "a.mxf", O_RDWR, &rw), 0);
	assert_int_equal(open_as(f, "b.mxf", O_WRONLY, &wo), 0);
	assert_int_equal(ctx->streams, 2);
	assert_int_equal(ctx->reserved_Bps, 2 * RATE / 8);
	assert_int_equal(open_of(f, rw)->file->reserved_bps, RATE);
	/*
	 * Write-only (libsmbclient's O_WRONLY; smbclient's put asks for read
	 * and write): aiod waits on a description of its own
	 * with the client's access, write-only, so the run holds the device
	 * until its data is there. Writes of 1.5 MiB: a run is still io_size,
	 * the rest waits.
	 */
	for (uint32_t i = 0; i < 3; i++) {
		wrote(f, wo, (uint64_t)i * (3 * BS / 2), 3 * BS / 2, &t0, &t1);
	}
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 4), 1);
	assert_int_equal(wb[0].off, 0);
	assert_int_equal(wb[0].len, IO_SIZE);
	assert_true(wb[0].wait);
	assert_int_not_equal(wb[0].fd, open_of(f, wo)->fd);
	assert_int_equal(fcntl(wb[0].fd, F_GETFL) & O_ACCMODE, O_WRONLY);
	assert_int_equal(close_id(f, rw), 0);
	assert_int_equal(close_id(f, wo), 0);
	(void)fake_engine_run(ctx->engine);
	assert_int_equal(ctx->streams, 0);
	assert_int_equal(ctx->reserved_Bps, 0);

	ctx->cfg->admission_mode = "refuse";
	ctx->capacity_Bps = 2 * RATE / 8;	/* less the 5 % headroom: room for one */
	assert_int_equal(open_as(f, "c.mxf", O_RDWR, &id), 0);
	assert_int_equal(open_as(f, "d.mxf", O_WRONLY, &wo), -ENOBUFS);
	assert_int_equal(ctx->admission_refused, 1);
	assert_int_equal(ctx->streams, 1);
	assert_int_equal(close_id(f, id), 0);
	assert_int_equal(ctx->streams, 0);
}

/*
 * A recorder demoted by admission is still scheduled, with no stream open,
 * so its dirty data stays bounded; without a reservation it is no more
 * urgent than best effort. A writer without a class is the kernel's then.
 */
static void test_demoted_recorder_scheduled_without_streams(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	uint64_t be = (uint64_t)ctx->cfg->be_deadline_ms * 1000000ull;
	struct fake_writeback wb[4];
	uint64_t rec, bulk, t0 = 0, t1 = 0;

	assert_true(be > RUN_NS);
	use_recorder_class(f);
	ctx->capacity_Bps = 1000;
	assert_int_equal(open_as(f, "late.mxf", O_RDWR, &rec), 0);
	assert_int_equal(open_as(f, "bulk.bin", O_RDWR, &bulk), 0);
	assert_int_equal(ctx->streams, 0);
	assert_int_equal(ctx->admission_demoted, 1);
	for (uint32_t i = 0; i < 4; i++) {
		wrote(f, bulk, (uint64_t)i * BS, BS, &t0, &t1);
	}
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 4), 0);
	for (uint32_t i = 0; i < 4; i++) {
		wrote(f, rec, (uint64_t)i * BS, BS, &t0, &t1);
	}
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 4), 1);
	assert_int_equal(wb[0].len, IO_SIZE);
	assert_in_range(wb[0].deadline_ns, t0 + be, t1 + be);
	assert_int_equal(close_id(f, rec), 0);
	assert_int_equal(close_id(f, bulk), 0);
	(void)fake_engine_run(ctx->engine);
}

/*
 * Where seeks cost (a device profile) and streams can play, a best-effort
 * writer's runs are cut as a best-effort reader's reads are: while a stream
 * plays, runs of [readahead] blocks_with_streams blocks (here two), one at
 * a time, due as one io_size run would be (spaced by the bytes queued); a
 * recorder admission reserved bandwidth for keeps its io_size runs. With
 * no stream open, a pumped copy's runs are half as long and may wait in
 * the kernel one behind the other.
 */
static void test_best_effort_writer_runs_are_pieces(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	uint64_t be = (uint64_t)ctx->cfg->be_deadline_ms * 1000000ull;
	struct aiod_profile p = { .version = 2, .request_us = 15000, .npoints = 1 };
	struct fake_writeback wb[16];
	uint64_t rec, copy, t0 = 0, t1 = 0, first = 0;

	use_recorder_class(f);
	p.points[0].size = IO_SIZE;
	p.points[0].random_Bps = 100000000;
	p.points[0].sequential_Bps = 150000000;
	ctx->profile = &p;
	ctx->cfg->readahead_blocks_streams = 2;
	ctx->capacity_Bps = 32 * BS;
	assert_int_equal(open_as(f, "rec.mxf", O_RDWR, &rec), 0);
	assert_int_equal(open_as(f, "copy.bin", O_RDWR, &copy), 0);
	assert_int_equal(ctx->streams, 1);
	assert_false(fake_engine_writeback_behind(ctx->engine));	/* none behind another now */
	for (uint32_t i = 0; i < 4; i++) {
		wrote(f, copy, (uint64_t)i * BS, BS, i == 0 ? &first : &t0, &t1);
	}
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 2);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(wb[i].off, (uint64_t)i * 2 * BS);
		assert_int_equal(wb[i].len, 2 * BS);
		assert_true(wb[i].wait);
		assert_false(wb[i].behind);
		assert_in_range(wb[i].deadline_ns, first + be, t1 + be);
	}
	assert_int_equal(fake_engine_run(ctx->engine), 2);
	for (uint32_t i = 0; i < 4; i++) {
		wrote(f, rec, (uint64_t)i * BS, BS, &t0, &t1);
	}
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 1);
	assert_int_equal(wb[0].len, IO_SIZE);
	assert_false(wb[0].behind);
	assert_int_equal(close_id(f, rec), 0);
	assert_int_equal(fake_engine_run(ctx->engine), 1);

	/* No stream open: the copy, steady for 3 s, is pumped in one-block runs one behind the other. */
	assert_int_equal(ctx->streams, 0);
	assert_true(fake_engine_writeback_behind(ctx->engine));
	for (uint32_t i = 4; i < 8; i++) {
		wrote(f, copy, (uint64_t)i * BS, BS, &t0, &t1);
	}
	open_of(f, copy)->wr_t0_ns -= 3000000000ull;
	wrote(f, copy, 8ull * BS, BS, &t0, &t1);
	assert_true(aiod_record_pumped(ctx, open_of(f, copy)));
	/* From the start of its steady run (record.c): blocks 0-8. */
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 16), 9);
	for (uint32_t i = 0; i < 9; i++) {
		assert_int_equal(wb[i].off, (uint64_t)i * BS);
		assert_int_equal(wb[i].len, BS);
		assert_true(wb[i].behind);
	}
	assert_int_equal(close_id(f, copy), 0);
	(void)fake_engine_run(ctx->engine);
	ctx->profile = NULL;
}

/* A write-back that fails is counted (and logged once); one done after its deadline is late. */
static void test_writeback_error_and_late_counted(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	uint64_t id, t0, t1;

	use_recorder_class(f);
	assert_int_equal(open_as(f, "bad.mxf", O_RDWR, &id), 0);
	for (uint32_t i = 0; i < 4; i++) {
		wrote(f, id, (uint64_t)i * BS, BS, &t0, &t1);
	}
	fake_engine_fail_next(ctx->engine, -EIO);
	assert_int_equal(fake_engine_run(ctx->engine), 1);
	assert_int_equal(ctx->st.writeback_errors, 1);
	assert_int_equal(ctx->st.writeback_bytes, 0);
	assert_true(open_of(f, id)->wb_error_logged);

	/* A class so fast that its next run is full at once: due now, done later. */
	ctx->cfg->classes[0].bitrate = 1000000000000000ull;
	ctx->cfg->admission_mode = "off";	/* reserved: not floored at best effort */
	assert_int_equal(close_id(f, id), 0);	/* the reservation goes with it */
	assert_int_equal(open_as(f, "fast.mxf", O_RDWR, &id), 0);
	for (uint32_t i = 0; i < 4; i++) {
		wrote(f, id, (uint64_t)i * BS, BS, &t0, &t1);
	}
	usleep(2000);
	assert_int_equal(fake_engine_run(ctx->engine), 1);
	assert_int_equal(ctx->st.writeback_late, 1);
	assert_int_equal(ctx->st.writeback_bytes, IO_SIZE);
	assert_int_equal(ctx->st.writeback_errors, 1);
	assert_int_equal(close_id(f, id), 0);
}

/*
 * A writer ahead of its write-back while a stream plays (a bulk copy next to
 * the editors): once two runs of it are queued, the answer to its next write
 * waits until one of them is on the device, or WRITE_HOLD_MAX_MS at most
 * (writehold.c). Without a stream playing nothing waits (the kernel writes
 * back; test_demoted_recorder_scheduled_without_streams).
 */
static void test_writer_ahead_waits_for_its_writeback(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	union rtio_msg m;
	uint64_t play, copy, t0, t1;

	use_recorder_class(f);
	ctx->written_back = aiod_data_written_back;
	assert_int_equal(open_as(f, "play.mxf", O_RDONLY, &play), 0);
	assert_int_equal(ctx->streams, 1);
	assert_int_equal(open_as(f, "copy.bin", O_RDWR, &copy), 0);
	for (uint32_t i = 0; i < 7; i++) {
		wrote(f, copy, (uint64_t)i * BS, BS, &t0, &t1);	/* one run queued at the 4th */
	}
	assert_int_equal(ctx->st.writes_held, 0);
	send_io_to(f, copy, RTIO_OP_WROTE, 7ull * BS, BS);	/* the second run: ahead */
	assert_false(reply(f, &m));
	assert_int_equal(ctx->st.writes_held, 1);
	assert_non_null(ctx->held);
	assert_non_null(ctx->held_timer);
	assert_true(fake_engine_run_one(ctx->engine));		/* run 0 is on the device */
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.opcode, RTIO_OP_WROTE);
	assert_int_equal(m.hdr.result, 0);
	assert_null(ctx->held);

	/* Still a run behind the next write: it waits, and goes after the time limit. */
	send_io_to(f, copy, RTIO_OP_WROTE, 8ull * BS, 4 * BS);
	assert_false(reply(f, &m));
	assert_int_equal(ctx->st.writes_held, 2);
	usleep(1100 * 1000);
	while (ctx->held != NULL) {
		assert_int_equal(tevent_loop_once(ctx->ev), 0);
	}
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.result, 0);

	/* Held again; the last stream closes: nothing left to protect, it goes at the next tick. */
	send_io_to(f, copy, RTIO_OP_WROTE, 12ull * BS, 4 * BS);
	assert_false(reply(f, &m));
	assert_int_equal(ctx->st.writes_held, 3);
	t0 = aiod_now_ns();
	assert_int_equal(close_id(f, play), 0);
	assert_int_equal(ctx->streams, 0);
	while (ctx->held != NULL) {
		assert_int_equal(tevent_loop_once(ctx->ev), 0);
	}
	assert_true(aiod_now_ns() - t0 < 500000000ull);	/* well before the 1 s limit */
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.result, 0);
	assert_int_equal(close_id(f, copy), 0);
	(void)fake_engine_run(ctx->engine);
	assert_null(ctx->held);
}

/*
 * A steady writer with no stream open (a copy started before anyone plays),
 * where a stream class exists and the device's capacity is known: once
 * record.c finds it steady, its whole run so far is aiod's and goes to the
 * device 16 MiB (four runs here) at a time; its writes wait only once a
 * second of the device's capacity (32 MiB here) is not yet written back.
 * When a stream opens it is scheduled: up to twice the runs its writes wait
 * at are queued, and they wait at two (writehold.c). Only the run being
 * filled goes at CLOSE.
 */
static void test_steady_writer_pumped_without_streams(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct fake_writeback wb[8];
	union rtio_msg m;
	uint64_t copy, play, t0, t1;

	use_recorder_class(f);
	ctx->written_back = aiod_data_written_back;
	ctx->capacity_Bps = 32 * BS;
	assert_int_equal(open_as(f, "copy.bin", O_RDWR, &copy), 0);
	for (uint32_t i = 0; i < 16; i++) {
		wrote(f, copy, (uint64_t)i * BS, BS, &t0, &t1);
	}
	assert_int_equal(ctx->recorders, 0);	/* not steady for long enough yet */
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 0);
	open_of(f, copy)->wr_t0_ns -= 3000000000ull;	/* its run began 3 s ago */
	wrote(f, copy, 16ull * BS, BS, &t0, &t1);
	assert_int_equal(ctx->recorders, 1);
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 4);
	assert_int_equal(wb[0].off, 0);			/* from the start of its run */
	assert_int_equal(wb[3].off, 3ull * IO_SIZE);
	assert_int_equal(wb[3].len, IO_SIZE);
	for (uint32_t i = 17; i < 20; i++) {
		wrote(f, copy, (uint64_t)i * BS, BS, &t0, &t1);	/* answered at once */
	}
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 4);
	assert_true(fake_engine_run_one(ctx->engine));
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 4);	/* the next one */
	assert_int_equal(wb[3].off, 4ull * IO_SIZE);

	/* 16 MiB not yet written back; at 32 (a second) its answer waits for a run. */
	for (uint32_t i = 20; i < 35; i++) {
		wrote(f, copy, (uint64_t)i * BS, BS, &t0, &t1);
	}
	assert_int_equal(ctx->st.writes_held, 0);
	send_io_to(f, copy, RTIO_OP_WROTE, 35ull * BS, BS);
	assert_false(reply(f, &m));
	assert_int_equal(ctx->st.writes_held, 1);
	assert_true(fake_engine_run_one(ctx->engine));
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.result, 0);
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 4);

	/* A stream opens: four runs of the backlog queued, and the writer waits at two. */
	assert_int_equal(open_as(f, "play.mxf", O_RDONLY, &play), 0);
	send_io_to(f, copy, RTIO_OP_WROTE, 36ull * BS, BS);
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 4);
	assert_int_equal(wb[3].off, 5ull * IO_SIZE);
	assert_false(reply(f, &m));
	assert_int_equal(ctx->st.writes_held, 2);
	assert_int_equal(fake_engine_run(ctx->engine), 7);	/* the rest, four at a time */
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.result, 0);
	assert_int_equal(close_id(f, play), 0);
	assert_int_equal(close_id(f, copy), 0);
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 1);
	assert_int_equal(wb[0].off, 9ull * IO_SIZE);
	assert_int_equal(wb[0].len, BS);
	assert_int_equal(fake_engine_run(ctx->engine), 1);
	assert_int_equal(ctx->st.writeback_bytes, 37ull * BS);
	assert_int_equal(ctx->recorders, 0);

	/*
	 * Where the device's capacity is unknown, or no stream can play (no
	 * class, no auto_stream), the kernel writes it back.
	 */
	for (int k = 0; k < 2; k++) {
		if (k == 0) {
			ctx->capacity_Bps = 0;
		} else {
			ctx->capacity_Bps = 32 * BS;
			ctx->cfg->n_classes = 0;
		}
		assert_int_equal(open_as(f, "copy2.bin", O_RDWR, &copy), 0);
		for (uint32_t i = 0; i < 16; i++) {
			wrote(f, copy, (uint64_t)i * BS, BS, &t0, &t1);
		}
		open_of(f, copy)->wr_t0_ns -= 3000000000ull;
		for (uint32_t i = 16; i < 48; i++) {
			wrote(f, copy, (uint64_t)i * BS, BS, &t0, &t1);	/* never waits */
		}
		assert_int_equal(ctx->recorders, 1);
		assert_int_equal(close_id(f, copy), 0);
		assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 0);
		assert_int_equal(ctx->st.writeback_bytes, 37ull * BS);
	}

	/* A second of the device's capacity written in a row is steady at once. */
	ctx->cfg->n_classes = 1;
	assert_int_equal(open_as(f, "copy3.bin", O_RDWR, &copy), 0);
	for (uint32_t i = 0; i < 31; i++) {
		wrote(f, copy, (uint64_t)i * BS, BS, &t0, &t1);
	}
	assert_int_equal(ctx->recorders, 0);
	send_io_to(f, copy, RTIO_OP_WROTE, 31ull * BS, BS);
	assert_int_equal(ctx->recorders, 1);
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 4);
	assert_int_equal(wb[0].off, 0);
	assert_false(reply(f, &m));		/* and a second of it not yet written back */
	assert_true(fake_engine_run_one(ctx->engine));
	assert_true(reply(f, &m));
	assert_int_equal(m.hdr.result, 0);
	assert_int_equal(close_id(f, copy), 0);
	(void)fake_engine_run(ctx->engine);
}

/*
 * An SMB client keeps several writes in flight and smbd finishes them in
 * any order: a copy whose writes reach aiod pairwise swapped (1, 0, 3, 2...)
 * is still one sequential run, found steady by its bytes, and written back
 * from its start; a 4 KiB write far behind is still a jump.
 */
static void test_reordered_copy_found_steady(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct fake_writeback wb[8];
	union rtio_msg m;
	uint64_t copy, t0, t1;

	use_recorder_class(f);
	ctx->written_back = aiod_data_written_back;
	ctx->capacity_Bps = 32 * BS;
	assert_int_equal(aiod_record_seq(8 * BS, 9 * BS, BS), AIOD_SEQ_EXTENDS);
	assert_int_equal(aiod_record_seq(8 * BS, 6 * BS, BS), AIOD_SEQ_STRAGGLER);
	assert_int_equal(aiod_record_seq(8 * BS, 0, 4096), AIOD_SEQ_JUMP);
	assert_int_equal(aiod_record_seq(8 * BS, 20 * BS, BS), AIOD_SEQ_JUMP);
	assert_int_equal(open_as(f, "copy.bin", O_RDWR, &copy), 0);
	for (uint32_t i = 0; i < 30; i += 2) {
		wrote(f, copy, (uint64_t)(i + 1) * BS, BS, &t0, &t1);
		wrote(f, copy, (uint64_t)i * BS, BS, &t0, &t1);
	}
	assert_int_equal(ctx->recorders, 0);	/* 30 MiB in a row: not a second yet */
	send_io_to(f, copy, RTIO_OP_WROTE, 31ull * BS, BS);
	assert_int_equal(ctx->recorders, 1);
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 4);
	assert_int_equal(wb[0].off, 0);				/* from its very start */
	assert_int_equal(wb[3].off, 3ull * IO_SIZE);
	assert_false(reply(f, &m));		/* a second of it not yet written back */
	assert_true(fake_engine_run_one(ctx->engine));
	assert_true(reply(f, &m));
	wrote(f, copy, 30ull * BS, BS, &t0, &t1);	/* the straggler: no jump */
	assert_int_equal(fake_engine_writebacks(ctx->engine, wb, 8), 4);
	assert_int_equal(close_id(f, copy), 0);
	assert_int_equal(fake_engine_run(ctx->engine), 4);
	/* Five runs went; the 12 MiB it was ahead of them at CLOSE are the kernel's. */
	assert_int_equal(ctx->st.writeback_bytes, 20ull * BS);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_recorder_runs_due_at_class_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recorder_jump_queues_its_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_writer_left_to_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recorder_admission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_demoted_recorder_scheduled_without_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_best_effort_writer_runs_are_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writeback_error_and_late_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_ahead_waits_for_its_writeback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_steady_writer_pumped_without_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reordered_copy_found_steady, setup, teardown),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("writeback", tests, NULL, NULL);
}
