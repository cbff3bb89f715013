/*
 * Unit tests: who is a recorder and when its write-back is due
 * (aiod/record.c), on a clock the test turns: no files, no engine.
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
#include "record.h"
#include "streams.h"

#define MiB      (1ull << 20)
#define SEC      1000000000ull
#define IO_SIZE  (16 * MiB)

struct fixture {
	struct aiod_ctx ctx;
	struct aiod_file file;
	struct aiod_open open;
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
	f->ctx.cfg->classes[0].bitrate = 100000000;
	f->ctx.cfg->readahead_io_size = IO_SIZE;
	f->ctx.capacity_Bps = 1000000000;
	f->open.file = &f->file;
	f->open.name = "ingest/cam1.bin";
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	talloc_free(*state);
	return 0;
}

/* n sequential writes of len bytes from off, every gap_ns from t; returns the time after. */
static uint64_t write_run(struct fixture *f, uint64_t off, uint64_t len, unsigned n, uint64_t t,
			  uint64_t gap_ns)
{
	for (unsigned i = 0; i < n; i++, t += gap_ns) {
		aiod_record_observe(&f->ctx, &f->open, off + i * len, len, t);
	}
	return t;
}

/*
 * A writer without a class becomes a recorder once it has written
 * sequentially for two seconds, at the rate it showed; its runs are due when
 * the next would be full at that rate.
 */
static void test_record_steady_writer_measured(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 1000 * SEC;
	uint64_t gap = 1 * MiB * 8 * SEC / 100000000;	/* 1 MiB at 100 Mbit/s */
	uint64_t due;

	t = write_run(f, 0, MiB, 20, t, gap);		/* 1.6 s: not yet */
	assert_false(f->open.recorder);
	assert_int_equal(f->ctx.recorders, 0);
	t = write_run(f, 20 * MiB, MiB, 10, t, gap);	/* past 2 s */
	assert_true(f->open.recorder);
	assert_int_equal(f->ctx.recorders, 1);
	assert_in_range(aiod_record_rate(&f->open), 95000000, 106000000);
	assert_false(f->open.reserved);		/* auto_stream is off: measured, not reserved */
	due = aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t) - t;
	assert_in_range(due, IO_SIZE * 8 * SEC / 106000000, IO_SIZE * 8 * SEC / 95000000);
	aiod_record_forget(&f->ctx, &f->open);
	aiod_record_forget(&f->ctx, &f->open);
	assert_int_equal(f->ctx.recorders, 0);
}

/* A fast steady writer (a bulk copy) is measured, but never more urgent than best effort. */
static void test_record_fast_writer_not_urgent(void **state)
{
	struct fixture *f = *state;
	uint64_t t = write_run(f, 0, 8 * MiB, 300, 1000 * SEC, SEC / 100);	/* 800 MiB/s, 3 s */
	uint64_t be = (uint64_t)f->ctx.cfg->be_deadline_ms * 1000000ull;

	assert_true(f->open.recorder);
	assert_true(aiod_record_rate(&f->open) > 6000000000ull);
	assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t), t + be);
	/* Nothing known about a writer: best effort too. */
	f->open.wr_bps = 0;
	assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t), t + be);
}

/*
 * The runs of a writer nothing was reserved for are due a best-effort
 * period apart while earlier ones are queued or on the device: a pumped
 * copy's backlog, queued at once as the first stream opens, must not
 * become due all together. A reserved recorder's runs keep its rate.
 */
static void test_record_best_effort_runs_spaced(void **state)
{
	struct fixture *f = *state;
	uint64_t t = write_run(f, 0, 8 * MiB, 300, 1000 * SEC, SEC / 100);	/* a bulk copy */
	uint64_t be = (uint64_t)f->ctx.cfg->be_deadline_ms * 1000000ull;
	uint64_t run = IO_SIZE * 8 * SEC / 100000000;

	assert_true(f->open.recorder);
	for (uint64_t k = 0; k < 4; k++) {
		f->open.wb_queued = k * IO_SIZE;
		assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t), t + (k + 1) * be);
	}
	/* Its runs done, the next is due at best effort again. */
	f->open.wb_queued = 0;
	assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t + SEC), t + SEC + be);
	/* A part of a run queued counts for nothing: runs are what the device is given. */
	f->open.wb_queued = IO_SIZE / 2;
	assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t + 2 * SEC),
			 t + 2 * SEC + be);

	/* A reserved recorder with runs queued: at its rate, not spaced. */
	talloc_free(*state);
	assert_int_equal(setup(state), 0);
	f = *state;
	f->file.sclass = &f->ctx.cfg->classes[0];
	assert_int_equal(aiod_admission_admit(&f->ctx, &f->open, 100000000), 0);
	f->open.wb_queued = 3 * IO_SIZE;
	assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t), t + run);
}

/*
 * A class-matched writer is a recorder from its second write in a row, at
 * the class rate; an editor's single write is not. A jump starts a new run
 * but keeps the recorder.
 */
static void test_record_class_writer(void **state)
{
	struct fixture *f = *state;
	uint64_t t = 1000 * SEC;

	f->file.sclass = &f->ctx.cfg->classes[0];
	aiod_record_observe(&f->ctx, &f->open, 5 * MiB, 4096, t);	/* a header update */
	assert_false(f->open.recorder);
	aiod_record_observe(&f->ctx, &f->open, 0, MiB, t);
	aiod_record_observe(&f->ctx, &f->open, MiB, MiB, t);
	assert_false(f->open.recorder);
	aiod_record_observe(&f->ctx, &f->open, 2 * MiB, MiB, t);
	assert_true(f->open.recorder);
	assert_int_equal(aiod_record_rate(&f->open), 100000000);
	/* Reserved (admitted at OPEN): due exactly when the next run is full, even before best effort. */
	f->ctx.cfg->readahead_io_size = 2 * MiB;
	assert_int_equal(aiod_admission_admit(&f->ctx, &f->open, 100000000), 0);
	assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, 2 * MiB, t),
			 t + 2 * MiB * 8 * SEC / 100000000);
	aiod_record_observe(&f->ctx, &f->open, 0, 4096, t);	/* back to the header */
	assert_int_equal(f->open.wr_seq, 0);
	assert_true(f->open.recorder);
	assert_int_equal(f->ctx.recorders, 1);
	/* Scheduled even when no other stream is open. */
	aiod_admission_release(&f->ctx, &f->open);
	assert_int_equal(f->ctx.streams, 0);
	assert_true(aiod_record_scheduled(&f->ctx, &f->open));
	/* Demoted (not reserved): no earlier than best effort. */
	assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, 2 * MiB, t),
			 t + (uint64_t)f->ctx.cfg->be_deadline_ms * 1000000ull);
}

/*
 * A reserved recorder at its rate: each run is due when the next is full,
 * io_size * 8 / rate after it was complete. One that writes faster (a clip
 * copied onto the share) has its runs due no closer together than that: it
 * gets the disk time it reserved in EDF order, not more.
 */
static void test_record_runs_paced_at_rate(void **state)
{
	struct fixture *f = *state;
	uint64_t run = IO_SIZE * 8 * SEC / 100000000;	/* 1.34 s */
	uint64_t t = 1000 * SEC;

	f->file.sclass = &f->ctx.cfg->classes[0];
	assert_int_equal(aiod_admission_admit(&f->ctx, &f->open, 100000000), 0);
	for (int k = 0; k < 3; k++, t += run) {
		assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t), t + run);
	}
	/* Three runs complete at once: due one run's time apart. */
	for (int k = 1; k <= 3; k++) {
		assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t), t + k * run);
	}
	/* A partial run (the tail) takes its own length's time. */
	assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE / 4, t),
			 t + 3 * run + run / 4);
	/* After a pause, the next run is due from when it is complete. */
	t += 60 * SEC;
	assert_int_equal(aiod_record_run_due(&f->ctx, &f->open, IO_SIZE, t), t + run);
}

/* Without a class, the kernel writes back unless a stream is open. */
static void test_record_scheduled_only_with_streams(void **state)
{
	struct fixture *f = *state;

	assert_false(aiod_record_scheduled(&f->ctx, &f->open));
	f->open.recorder = true;	/* a measured recorder is no different */
	assert_false(aiod_record_scheduled(&f->ctx, &f->open));
	f->ctx.streams = 1;
	assert_true(aiod_record_scheduled(&f->ctx, &f->open));
}

/* auto_stream: a steady writer reserves its measured rate, like a steady reader. */
static void test_record_auto_stream_admits(void **state)
{
	struct fixture *f = *state;
	uint64_t gap = 1 * MiB * 8 * SEC / 100000000;

	f->ctx.cfg->auto_stream = true;
	(void)write_run(f, 0, MiB, 30, 1000 * SEC, gap);
	assert_true(f->open.recorder);
	assert_true(f->open.reserved);
	assert_int_equal(f->ctx.streams, 1);
	assert_int_equal(f->ctx.reserved_Bps, f->open.rate_bps / 8);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_steady_writer_measured, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_fast_writer_not_urgent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_best_effort_runs_spaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_class_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_runs_paced_at_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_scheduled_only_with_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_auto_stream_admits, setup, teardown),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("record", tests, NULL, NULL);
}
