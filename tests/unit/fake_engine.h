/*
 * The fake engine's controls (tests/unit/fake_engine.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef FAKE_ENGINE_H
#define FAKE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

struct aiod_engine;

/* A queued write-back, as aiod asked for it. */
struct fake_writeback {
	int fd;
	uint64_t off;
	uint32_t len;
	bool wait;		/* holds the device until the data is there */
	bool behind;		/* may wait in the kernel behind its writer's last run */
	uint64_t deadline_ns;
};

/* Operations queued and not yet run. */
unsigned fake_engine_pending(const struct aiod_engine *e);
/* The earliest deadline among them, UINT64_MAX if none. */
uint64_t fake_engine_first_deadline(const struct aiod_engine *e);
/* A queued operation as the device would get it. */
struct fake_engine_op_info {
	int fd;
	uint64_t off;
	uint64_t len;		/* bytes (a vectored read: its blocks' worth) */
	uint64_t deadline_ns;
	uint32_t piece;		/* its owner's aiod_engine_set_slice() answer (0: none set, or whole) */
	bool behind;		/* and whether its pieces go one behind the other */
	/* its callback: a test asks the owner what the real engine would (aiod_load_grow()) */
	aiod_engine_done_fn done;
	void *private_data;
};

/*
 * The queued operation at position i in the order the device would get them
 * (earliest deadline first, ties in arrival order); false past the end.
 */
bool fake_engine_op(const struct aiod_engine *e, unsigned i, struct fake_engine_op_info *out);
/*
 * The device does the I/O of the queued operation at position i (as
 * fake_engine_op() counts) now, but aiod hears of it only when it is run:
 * a read that took the file's bytes before a write changed them and
 * completes after. False past the end.
 */
bool fake_engine_io_now(struct aiod_engine *e, unsigned i);
/* Run the one operation the device would get first; false when none is queued. */
bool fake_engine_run_one(struct aiod_engine *e);
/* Run every queued operation (and those their callbacks queue), earliest deadline first. */
unsigned fake_engine_run(struct aiod_engine *e);
/* Whether write-back runs may go behind one another now (aiod_engine_set_writeback_behind()). */
bool fake_engine_writeback_behind(const struct aiod_engine *e);
/* The queued write-backs into out (max entries: pass room for all), by file offset; how many are queued. */
unsigned fake_engine_writebacks(const struct aiod_engine *e, struct fake_writeback *out,
				unsigned max);
/* The next operation run completes with result (-EIO...) instead of doing its I/O. */
void fake_engine_fail_next(struct aiod_engine *e, int result);

#endif
