/*
 * Recorders: the writers of streams. An ingest station records camera feeds
 * into files at a fixed bitrate; its writes land in the page cache at once,
 * so what can disturb playback is only when their write-back takes the
 * device. aiod plans that time like a stream's reads: a recorder's data goes
 * to the disk in io_size runs (writeback.c), each due when the next run
 * would be full at the recorder's rate. The device writes one run while the
 * recorder fills the next, so about two runs per recorder are ever dirty,
 * and EDF places those writes between the stream reads that are due. Runs
 * are never due closer together than the rate allows, so a writer faster
 * than its reservation gets what it reserved first and the rest later.
 *
 * A recorder is a writable open of a file matching a [stream.NAME] class
 * that writes sequentially (its rate is the class bitrate, and files.c
 * admitted it like a reader), or any writer that has kept writing
 * sequentially for a while (its rate is measured, as the read pattern
 * analyzer in stream.c measures a steady reader's).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "aiod.h"
#include "log.h"
#include "record.h"
#include "streams.h"

/*
 * Writes in a row that continue the previous one before a class-matched
 * writer counts as a recorder: an editor who rewrites a clip's header has
 * write access to a stream file too, but makes one write, not a run.
 */
#define RECORD_CLASS_RUN 2
/* A writer without a class: as long and as steady as the reader stream.c promotes. */
#define RECORD_STEADY_RUN 8
#define RECORD_STEADY_NS 2000000000ull

static void record_become(struct aiod_ctx *ctx, struct aiod_open *o)
{
	o->recorder = true;
	ctx->recorders++;
	aiod_admission_publish(ctx);
	AIOD_INFO("%s: recorder at %llu bit/s (%s), write-back scheduled by aiod", o->name,
		  (unsigned long long)aiod_record_rate(o),
		  o->file->sclass != NULL ? "stream class" : "measured");
}

/*
 * Writes a sequential writer may finish out of order: an SMB client can
 * keep several writes outstanding, and each reaches aiod when its own
 * pwrite ends. A write up to this many of its own length ahead of the
 * frontier extends the run (the gap is a write still in flight); one up to
 * as far behind is a straggler. Anything else, a 4 KiB header rewritten at
 * the start, a random writer, is a jump. More slack would take a random
 * writer's nearby writes for a run. smbclient's put needs none: its 8 MiB
 * writes reach aiod in order (log_level = 4 logs each write as seen here).
 */
#define RECORD_REORDER_WRITES 2

enum aiod_record_seq aiod_record_seq(uint64_t frontier, uint64_t off, uint64_t len)
{
	uint64_t slack = RECORD_REORDER_WRITES * len;

	if (off + len > frontier) {
		return off <= frontier + slack ? AIOD_SEQ_EXTENDS : AIOD_SEQ_JUMP;
	}
	return off + slack >= frontier ? AIOD_SEQ_STRAGGLER : AIOD_SEQ_JUMP;
}

void aiod_record_observe(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint64_t len,
			 uint64_t now)
{
	enum aiod_record_seq seq = aiod_record_seq(o->wr_next, off, len);

	AIOD_DEBUG("%s: wrote %llu+%llu, frontier %llu: %s", o->name, (unsigned long long)off,
		   (unsigned long long)len, (unsigned long long)o->wr_next,
		   seq == AIOD_SEQ_EXTENDS ? "extends" : seq == AIOD_SEQ_STRAGGLER ? "straggler" : "jump");
	if (seq == AIOD_SEQ_STRAGGLER) {
		return;		/* inside the run: neither longer nor broken */
	}
	if (seq == AIOD_SEQ_EXTENDS && o->wr_seq < UINT32_MAX) {
		o->wr_seq++;
	} else if (seq == AIOD_SEQ_JUMP) {
		/* A jump (a header rewritten, a random writer): a new run, measured afresh. */
		o->wr_seq = 0;
		o->wr_t0_ns = now;
		o->wr_off0 = off;
	}
	if (o->wr_t0_ns == 0) {
		o->wr_t0_ns = now;
		/* A first write just ahead of where it began: the gap is a write in flight. */
		o->wr_off0 = seq == AIOD_SEQ_EXTENDS ? o->wr_next : off;
	}
	o->wr_next = off + len;
	/*
	 * Steady: two seconds of it, or, where the device's capacity is known,
	 * a second of that written in a row. A copy at memory speed writes
	 * gigabytes in its first two seconds, and the kernel then stalls it
	 * for as long as the disk takes to write them (12 s seen on
	 * bench/emudisk); found by its bytes, it is pumped (writeback.c)
	 * before that.
	 */
	if (o->wr_seq >= RECORD_STEADY_RUN && now > o->wr_t0_ns &&
	    (now - o->wr_t0_ns >= RECORD_STEADY_NS ||
	     (ctx->capacity_Bps != 0 && o->wr_next - o->wr_off0 >= ctx->capacity_Bps))) {
		/* The average since the run began: steady writers are what we plan for. */
		o->wr_bps = (uint64_t)((unsigned __int128)(o->wr_next - o->wr_off0) * 8000000000ull /
				       (now - o->wr_t0_ns));
	}
	if (o->recorder) {
		return;
	}
	if (o->file->sclass != NULL && o->wr_seq >= RECORD_CLASS_RUN) {
		record_become(ctx, o);
	} else if (o->file->sclass == NULL && o->wr_bps > 0) {
		/* As for readers, only auto_stream turns a measured rate into a reservation. */
		if (ctx->cfg->auto_stream) {
			(void)aiod_admission_admit(ctx, o, o->wr_bps);
		}
		record_become(ctx, o);
	}
}

uint64_t aiod_record_rate(const struct aiod_open *o)
{
	if (o->reserved && o->rate_bps > 0) {
		return o->rate_bps;
	}
	if (o->file->sclass != NULL) {
		return o->file->sclass->bitrate;
	}
	return o->wr_bps;
}

static uint64_t record_ns_at(uint64_t bytes, uint64_t rate)
{
	return (uint64_t)((unsigned __int128)bytes * 8000000000ull / rate);
}

uint64_t aiod_record_run_due(const struct aiod_ctx *ctx, struct aiod_open *o, uint64_t len,
			     uint64_t now)
{
	uint64_t rate = aiod_record_rate(o);
	uint64_t be_ns = (uint64_t)ctx->cfg->be_deadline_ms * 1000000ull;
	uint64_t best_effort = now + be_ns;
	uint64_t due = best_effort, paced, spaced;

	if (rate != 0) {
		/* The next run is full io_size * 8 / rate seconds from now: this one must be out by then. */
		due = now + record_ns_at(ctx->cfg->readahead_io_size, rate);
		/*
		 * Runs are due no closer together than the rate allows: a writer
		 * faster than its class (a clip copied onto the share) gets the
		 * disk time it reserved in EDF order, and the rest after the
		 * streams that are due.
		 */
		paced = o->wr_due_ns + record_ns_at(len, rate);
		if (o->wr_due_ns != 0 && paced > due) {
			due = paced;
		}
	}
	if (o->reserved) {
		o->wr_due_ns = due;
		return due;
	}
	/*
	 * Only bandwidth admission reserved may be more urgent than best effort:
	 * a demoted recorder, or a fast bulk copy that merely writes steadily,
	 * must not take the disk ahead of the streams that were promised it.
	 */
	if (due < best_effort) {
		due = best_effort;
	}
	o->wr_due_ns = due;
	/*
	 * And it gets the disk as a best-effort reader with one request
	 * outstanding does: each of its runs already queued or on the device
	 * puts this one a best-effort period later (counted from what is
	 * queued now, so a copy served early is not pushed ever later). A copy
	 * pumped while nothing played meets the first stream with a backlog
	 * that becomes queued at once; due together, its runs went to the
	 * device back to back (4 runs, 311 ms) while the streams still caught
	 * up with their start (bench/results/HISTORY.md, 2026-12-07). EDF still
	 * gives the copy every moment nothing else is due.
	 */
	spaced = best_effort + o->wb_queued / ctx->cfg->readahead_io_size * be_ns;
	return spaced > due ? spaced : due;
}

/*
 * Scheduled: every full run is queued on the writer's schedule and its
 * writes wait when it is ahead (writeback.c, writehold.c). That is for a
 * recorder matched by a class (admission counted its bandwidth, and its
 * dirty data stays at about two runs instead of piling up for the kernel's
 * 30 s expiry and hitting the disk in one burst just as an editor starts to
 * play), and for every sequential writer while a stream is open. With no
 * stream open, a recorder found by its rate is pumped instead (writeback.c:
 * its runs go one after the other, its writes wait only past about a
 * second of disk time), and other writers are the kernel's: there are no
 * reads to protect.
 */
bool aiod_record_scheduled(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	return (o->recorder && o->file->sclass != NULL) || ctx->streams > 0;
}

/*
 * Pumped only where a stream can open (a [stream.NAME] class, or
 * auto_stream), and only where admission knows what the device sustains
 * (a profile, or [admission] capacity): the bound is a second of that.
 * Elsewhere a bounded backlog would only slow the copy down, with no
 * playback to protect, or at a guessed bound: 256 MiB cost 6 GiB copies
 * onto a fast disk 7 % of their speed (bench/results/smb-2026-11-24-0757.md).
 */
bool aiod_record_pumped(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	return o->recorder && !aiod_record_scheduled(ctx, o) && ctx->capacity_Bps != 0 &&
	       (ctx->cfg->n_classes > 0 || ctx->cfg->auto_stream);
}

void aiod_record_forget(struct aiod_ctx *ctx, struct aiod_open *o)
{
	if (o->recorder) {
		o->recorder = false;
		ctx->recorders--;
		aiod_admission_publish(ctx);
	}
}
