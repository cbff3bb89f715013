/*
 * Write-back runs (paper: write aggregation). The page cache already merges
 * a sequential writer's small writes; aiod makes them reach the disk as
 * large contiguous writes, io_size at a time, as soon as that much is there,
 * rather than in a burst at the kernel's dirty expiry that would stall the
 * streams' reads. Writes stay acknowledged at page-cache time; this only
 * schedules the disk. Which writers, and by when each run is due, is
 * record.c's rule.
 *
 * A run is planned device time: its operation holds an engine slot until
 * the data is on the device, so the disk writes one run at a time, when EDF
 * says, not whenever the kernel gets to what was merely queued.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "aiod.h"
#include "files.h"
#include "log.h"
#include "profile.h"
#include "record.h"
#include "writeback.h"

struct aiod_wb_twin {
	int fd;
};

struct writeback {
	struct aiod_ctx *ctx;
	struct aiod_open *open;		/* busy until the run is done: its descriptors stay open */
	uint64_t off;
	uint32_t len;
	uint64_t deadline_ns;
};

static int twin_destructor(struct aiod_wb_twin *t)
{
	close(t->fd);
	return 0;
}

/*
 * The descriptor a waiting write-back goes through. sync_file_range's waits
 * report a write-back error to the open file description they are made on
 * and mark it seen there (errseq): made on the client's descriptor, which
 * is smbd's own description, they would take from the client's next fsync
 * the error it must report. So aiod waits on a description of its own: the
 * O_DIRECT twin when there is one, else the file reopened through
 * /proc/self/fd with the client's own access, read-only where the client
 * may read, write-only where it may only write (sync_file_range needs
 * neither). A client that opens a file only to write it (libsmbclient's
 * O_WRONLY, bench/rt's bulk copy) had no such descriptor until 2026-12-07:
 * its runs were only started, each "done" once the kernel had queued it,
 * and the device had three runs of it at once while EDF believed it had
 * one (perf: ext4_writepages of three 16 MiB runs within 1 ms, then 300 ms
 * blocked).
 *
 * As deployed the write-only reopen is refused: aiod.service leaves root
 * CAP_DAC_READ_SEARCH but not CAP_DAC_OVERRIDE, and a file smbd created
 * for a user (mode 0744 by default) is not writable by root as "other".
 * Such a client's description is then reopened read-only, which
 * CAP_DAC_READ_SEARCH allows for any file: aiod reads nothing through it
 * (it only waits), and that capability lets it read every file anyway.
 * Without it a write-only client's runs were only started wherever aiod
 * ran as its unit runs it (found 2026-12-08; tests ran aiod as unconfined
 * root). -1: none, start the write-back only.
 */
static int writeback_fd(struct aiod_open *o)
{
	char path[64];
	int fd;

	if (o->direct_fd >= 0) {
		return o->direct_fd;
	}
	if (o->wb_twin != NULL) {
		return o->wb_twin->fd;
	}
	if (o->wb_twin_tried) {
		return -1;
	}
	o->wb_twin_tried = true;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", o->fd);
	fd = open(path, (o->readable ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
	if (fd < 0 && !o->readable && (errno == EACCES || errno == EPERM)) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		AIOD_INFO("%s: no descriptor of aiod's own (%s): its write-back is only started, "
			  "not waited for", o->name, strerror(errno));
		return -1;
	}
	o->wb_twin = talloc(o, struct aiod_wb_twin);
	if (o->wb_twin == NULL) {
		close(fd);
		return -1;
	}
	o->wb_twin->fd = fd;
	talloc_set_destructor(o->wb_twin, twin_destructor);
	return fd;
}

/*
 * Runs a writer may have queued before its writes wait (writehold.c says
 * why): one on the device and one due next keep the disk busy with it when
 * EDF gives it the time; a recorder's runs are due at its reserved rate and
 * leave room for two late ones before its writes wait.
 */
#define WRITEBACK_AHEAD_RUNS 2
#define WRITEBACK_AHEAD_RUNS_RESERVED 4
/*
 * A steady writer while no stream plays, where streams can play and the
 * device's capacity is known, is pumped (record.c): its runs go to the
 * device one after the other, about PUMP_INFLIGHT bytes of them queued at
 * once (a tenth of a second of a spindle; two runs at least: one on the
 * device and one next), and its writes wait only once pump_backlog() bytes
 * of it are not yet written back. Left to the kernel, a copy faster than
 * the disk (a camera card over a fast network onto one spindle) leaves
 * gigabytes dirty, and once that file has been dirty for 30 s, or dirty
 * data passes 10 % of memory, the flusher writes them at full speed, beside
 * aiod's schedule: an editor who starts to play then goes late for as long
 * as that takes. Bounded, the backlog a stream meets at its open is about a
 * second of disk time, and aiod drains it in deadline order. The cost: such
 * a copy goes at the disk's speed rather than the page cache's while
 * nothing plays.
 */
#define PUMP_INFLIGHT (16ull << 20)
#define PUMP_BACKLOG_RUNS 8

static uint64_t pump_inflight(const struct aiod_ctx *ctx)
{
	uint64_t io = ctx->cfg->readahead_io_size;
	uint64_t runs = (PUMP_INFLIGHT + io - 1) / io;

	return (runs < 2 ? 2 : runs) * io;
}

/* A second of what the device sustains (admission knows it), eight runs at least. */
static uint64_t pump_backlog(const struct aiod_ctx *ctx)
{
	uint64_t floor = PUMP_BACKLOG_RUNS * (uint64_t)ctx->cfg->readahead_io_size;
	uint64_t second = ctx->capacity_Bps;	/* known: record.c pumps only then */

	return second > floor ? second : floor;
}

static void writeback_pump(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t now);

/*
 * Bytes of one of o's runs: one device request. A recorder admission
 * reserved bandwidth for writes io_size runs on its schedule (the plan
 * counted them). Any other writer is best effort (a copy, a demoted
 * recorder), and where seeks cost (a device profile) and streams can play
 * (a class), its runs are cut as a best-effort reader's reads are
 * (aiod_load_slice()): while streams play, runs of [readahead]
 * blocks_with_streams blocks; while none plays, pumped, runs half as long
 * that go one behind the other (*behind, AIOD_WB_BEHIND), so the device
 * does not idle between them and a stream that opens next to a copy waits
 * for two half runs on the device, not for an io_size run (16 MiB: 115 ms
 * on the emulated disk, 4 MiB: 40). The runs are contiguous and spaced by
 * the bytes queued (record.c), not by their count.
 */
static uint64_t writeback_run(const struct aiod_ctx *ctx, const struct aiod_open *o,
			      bool *behind)
{
	uint64_t io = ctx->cfg->readahead_io_size, bs = ctx->cache->block_size;
	uint64_t piece = (uint64_t)ctx->cfg->readahead_blocks_streams * bs;

	*behind = false;
	if (o->reserved || ctx->profile == NULL || ctx->profile->request_us == 0 ||
	    ctx->cfg->n_classes == 0 || piece == 0 || piece >= io) {
		return io;
	}
	if (aiod_record_pumped(ctx, o)) {
		*behind = true;
		piece = piece / 2 >= bs ? piece / 2 / bs * bs : bs;
	}
	return piece;
}

static void writeback_done(void *private_data, int result)
{
	struct writeback *wb = private_data;
	struct aiod_ctx *ctx = wb->ctx;
	struct aiod_open *o = wb->open;

	if (result < 0) {
		/*
		 * The kernel recorded the error in the file's mapping, and aiod
		 * waited on a description of its own: the client's fsync still
		 * reports it as usual. aiod counts each and says so once per open.
		 */
		ctx->st.writeback_errors++;
		if (!o->wb_error_logged) {
			o->wb_error_logged = true;
			AIOD_WARN("write-back of %s at %llu (+%u): %s; its client's fsync reports it",
				  o->name, (unsigned long long)wb->off, wb->len, strerror(-result));
		}
	} else {
		ctx->st.writeback_bytes += wb->len;
		if (aiod_now_ns() > wb->deadline_ns) {
			ctx->st.writeback_late++;
		}
	}
	o->wb_queued -= wb->len;
	talloc_free(wb);
	if (!o->closing) {
		writeback_pump(ctx, o, aiod_now_ns());	/* runs the cap kept back */
	}
	/* Write replies held for o may go now; they keep o busy, as this run does. */
	if (ctx->written_back != NULL) {
		ctx->written_back(ctx);
	}
	aiod_open_idle(ctx, o);	/* last: it may free o */
}

static void writeback_queue(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint64_t len,
			    bool behind, uint64_t now)
{
	struct writeback *wb = talloc(ctx, struct writeback);
	int fd = writeback_fd(o);

	if (wb == NULL) {
		return;		/* the kernel writes it back */
	}
	*wb = (struct writeback){
		.ctx = ctx,
		.open = o,
		.off = off,
		.len = (uint32_t)len,
		.deadline_ns = aiod_record_run_due(ctx, o, len, now),
	};
	aiod_open_busy(o);
	if (aiod_engine_writeback(ctx->engine, fd >= 0 ? fd : o->fd, off, (uint32_t)len,
				  (fd >= 0 ? AIOD_WB_WAIT : 0) | (behind ? AIOD_WB_BEHIND : 0),
				  wb->deadline_ns, writeback_done, wb) != 0) {
		talloc_free(wb);
		aiod_open_idle(ctx, o);
		return;
	}
	o->wb_queued += len;
	ctx->st.writebacks++;
}

/*
 * Whole runs of o's data (writeback_run()) go to the engine, one request
 * each (each may cost the device a seek), up to the runs o may have queued at once:
 * scheduled writers (streams play, or a class recorder) twice the runs its
 * writes wait at (writehold.c keeps it near there; the cap only matters
 * when the hold's time limit lets writes through, or when a writer that was
 * pumped had a backlog as the first stream opened); a pumped one
 * pump_inflight(). The rest waits for writeback_done().
 */
static void writeback_pump(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t now)
{
	uint64_t io = ctx->cfg->readahead_io_size, run;
	uint64_t cap;
	bool behind;

	if (aiod_record_scheduled(ctx, o)) {
		cap = 2 * (o->reserved ? WRITEBACK_AHEAD_RUNS_RESERVED : WRITEBACK_AHEAD_RUNS) * io;
	} else if (aiod_record_pumped(ctx, o)) {
		cap = pump_inflight(ctx);
	} else {
		return;
	}
	run = writeback_run(ctx, o, &behind);
	while (o->wb_end - o->wb_start >= run && o->wb_queued < cap) {
		writeback_queue(ctx, o, o->wb_start, run, behind, now);
		o->wb_start += run;
	}
}

/*
 * The writer's unfinished run when it jumps or closes: a recorder's is
 * queued like a full one (a recorder that goes back to rewrite its header
 * must not leave its last data to the kernel's expiry). A scheduled
 * recorder's runs the cap kept back go too (the hold bounds them, and each
 * is due on its schedule); a pumped writer's backlog beyond the run being
 * filled (it wrote faster than the disk) stays the kernel's rather than
 * all queued at once.
 */
static void writeback_tail(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t now)
{
	uint64_t io = ctx->cfg->readahead_io_size, run;
	bool scheduled = aiod_record_scheduled(ctx, o), behind;
	uint64_t left;

	if (!o->recorder || (!scheduled && !aiod_record_pumped(ctx, o))) {
		o->wb_start = o->wb_end;	/* the kernel's */
		return;
	}
	run = writeback_run(ctx, o, &behind);
	if (scheduled) {
		while (o->wb_end - o->wb_start > run) {
			writeback_queue(ctx, o, o->wb_start, run, behind, now);
			o->wb_start += run;
		}
	}
	left = o->wb_end - o->wb_start;
	if (left <= io) {
		while (left > 0) {
			uint64_t len = left < run ? left : run;

			writeback_queue(ctx, o, o->wb_start, len, behind, now);
			o->wb_start += len;
			left -= len;
		}
	}
	o->wb_start = o->wb_end;
}

void aiod_writeback_wrote(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint64_t len)
{
	uint64_t io = ctx->cfg->readahead_io_size;
	uint64_t now = aiod_now_ns();
	bool was_recorder = o->recorder;
	enum aiod_record_seq seq;

	/* A WRITE1 that finishes after its session went: its open is closed, the kernel's. */
	if (o->closing) {
		return;
	}
	/*
	 * Out-of-order writes are told apart from a jump only for a recorder:
	 * a random writer's writes can land near each other too, and only a
	 * writer found steady (record.c) is trusted to fill its gaps.
	 */
	seq = aiod_record_seq(o->wb_end, off, len);
	if (!o->recorder && off != o->wb_end) {
		seq = AIOD_SEQ_JUMP;
	}
	switch (seq) {
	case AIOD_SEQ_JUMP:
		writeback_tail(ctx, o, now);	/* a jump ends the run */
		o->wb_start = off;
		o->wb_end = off + len;
		break;
	case AIOD_SEQ_EXTENDS:
		o->wb_end = off + len;		/* a gap before it is a write still in flight */
		break;
	case AIOD_SEQ_STRAGGLER:
		break;				/* inside the run, or in a run already queued */
	}
	aiod_record_observe(ctx, o, off, len, now);
	if (!was_recorder && o->recorder) {
		/*
		 * A steady writer found now: its run so far is aiod's too (the
		 * kernel would write it at its 30 s expiry, in the middle of
		 * whatever plays then). record.c measured the run from wr_off0,
		 * written without a jump, so it is one run with wb_start..wb_end.
		 */
		if (o->wr_off0 < o->wb_start) {
			o->wb_start = o->wr_off0;
		}
	}
	if (!aiod_record_scheduled(ctx, o) && !aiod_record_pumped(ctx, o)) {
		/* The kernel writes these runs back; aiod takes over from the next one. */
		o->wb_start += (o->wb_end - o->wb_start) / io * io;
		return;
	}
	writeback_pump(ctx, o, now);
}

bool aiod_writeback_ahead(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	uint64_t io = ctx->cfg->readahead_io_size;
	uint64_t runs = o->reserved ? WRITEBACK_AHEAD_RUNS_RESERVED : WRITEBACK_AHEAD_RUNS;

	if (o->closing) {
		return false;
	}
	if (aiod_record_scheduled(ctx, o)) {
		return o->wb_queued >= runs * io;
	}
	return aiod_record_pumped(ctx, o) &&
	       o->wb_queued + (o->wb_end - o->wb_start) >= pump_backlog(ctx);
}

void aiod_writeback_close(struct aiod_ctx *ctx, struct aiod_open *o)
{
	/* While aiod stops, the kernel writes it back: the engine gets no new work. */
	if (!ctx->stopping) {
		writeback_tail(ctx, o, aiod_now_ns());
	}
	o->wb_start = o->wb_end;
	aiod_record_forget(ctx, o);
}
