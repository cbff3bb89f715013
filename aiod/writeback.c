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
 * /proc/self/fd, read-only and only if the client may read it (aiod never
 * holds access the client lacks). -1: none, start the write-back only.
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
	if (o->wb_twin_tried || !o->readable) {
		return -1;
	}
	o->wb_twin_tried = true;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", o->fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
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
	/* Write replies held for o may go now; they keep o busy, as this run does. */
	if (ctx->written_back != NULL) {
		ctx->written_back(ctx);
	}
	aiod_open_idle(ctx, o);	/* last: it may free o */
}

static void writeback_queue(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint64_t len,
			    uint64_t now)
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
	if (aiod_engine_writeback(ctx->engine, fd >= 0 ? fd : o->fd, off, (uint32_t)len, fd >= 0,
				  wb->deadline_ns, writeback_done, wb) != 0) {
		talloc_free(wb);
		aiod_open_idle(ctx, o);
		return;
	}
	o->wb_queued += len;
	ctx->st.writebacks++;
}

void aiod_writeback_wrote(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint64_t len)
{
	uint64_t io = ctx->cfg->readahead_io_size;
	uint64_t now = aiod_now_ns();

	/* A WRITE1 that finishes after its session went: its open is closed, the kernel's. */
	if (o->closing) {
		return;
	}
	if (off != o->wb_end) {
		/*
		 * A jump ends the run. A recorder's unfinished run is due like a
		 * full one (a recorder that goes back to rewrite its header must
		 * not leave its last data to the kernel's expiry).
		 */
		if (o->recorder && o->wb_end > o->wb_start && aiod_record_scheduled(ctx, o)) {
			writeback_queue(ctx, o, o->wb_start, o->wb_end - o->wb_start, now);
		}
		o->wb_start = off;
	}
	o->wb_end = off + len;
	aiod_record_observe(ctx, o, off, len, now);
	if (!aiod_record_scheduled(ctx, o)) {
		/* The kernel writes these runs back; aiod takes over from the next one. */
		o->wb_start += (o->wb_end - o->wb_start) / io * io;
		return;
	}
	/* Whole io_size runs: one request each, so each costs the device one seek. */
	while (o->wb_end - o->wb_start >= io) {
		writeback_queue(ctx, o, o->wb_start, io, now);
		o->wb_start += io;
	}
}

/*
 * Runs a writer may have queued before its writes wait (writehold.c says
 * why): one on the device and one due next keep the disk busy with it when
 * EDF gives it the time; a recorder's runs are due at its reserved rate and
 * leave room for two late ones before its writes wait.
 */
#define WRITEBACK_AHEAD_RUNS 2
#define WRITEBACK_AHEAD_RUNS_RESERVED 4

bool aiod_writeback_ahead(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	uint64_t runs = o->reserved ? WRITEBACK_AHEAD_RUNS_RESERVED : WRITEBACK_AHEAD_RUNS;

	return !o->closing && aiod_record_scheduled(ctx, o) &&
	       o->wb_queued >= runs * ctx->cfg->readahead_io_size;
}

void aiod_writeback_close(struct aiod_ctx *ctx, struct aiod_open *o)
{
	/* While aiod stops, the kernel writes it back: the engine gets no new work. */
	if (o->recorder && o->wb_end > o->wb_start && !ctx->stopping &&
	    aiod_record_scheduled(ctx, o)) {
		writeback_queue(ctx, o, o->wb_start, o->wb_end - o->wb_start, aiod_now_ns());
	}
	o->wb_start = o->wb_end;
	aiod_record_forget(ctx, o);
}
