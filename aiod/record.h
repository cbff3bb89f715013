/*
 * Recorders (record.c): writers whose write-back aiod plans like a stream's
 * reads. writeback.c asks these rules which writers it schedules and when
 * each run of theirs is due.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_RECORD_H
#define AIOD_RECORD_H

#include "aiod.h"

/*
 * Where a write lands against a sequential writer's frontier (the end of
 * its furthest write): it extends the run, it is a straggler inside it (an
 * SMB client keeps several writes in flight, and smbd finishes them in any
 * order), or it jumps elsewhere.
 */
enum aiod_record_seq { AIOD_SEQ_EXTENDS, AIOD_SEQ_STRAGGLER, AIOD_SEQ_JUMP };
enum aiod_record_seq aiod_record_seq(uint64_t frontier, uint64_t off, uint64_t len);
/* o wrote [off, off + len) at now (CLOCK_MONOTONIC ns): follow its runs and its rate. */
void aiod_record_observe(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint64_t len,
			 uint64_t now);
/* The bits/s o writes at as far as aiod knows: reserved, its class's, measured; 0 = unknown. */
uint64_t aiod_record_rate(const struct aiod_open *o);
/* When o's next run, len bytes complete at now, is due on the device (o remembers it). */
uint64_t aiod_record_run_due(const struct aiod_ctx *ctx, struct aiod_open *o, uint64_t len,
			     uint64_t now);
/* Whether o's runs are queued on its schedule, its writes waiting when it is ahead (record.c). */
bool aiod_record_scheduled(const struct aiod_ctx *ctx, const struct aiod_open *o);
/* Whether o's write-back is aiod's while it is not scheduled: a steady writer where streams can play. */
bool aiod_record_pumped(const struct aiod_ctx *ctx, const struct aiod_open *o);
/* o is closing: it no longer counts as a recorder. */
void aiod_record_forget(struct aiod_ctx *ctx, struct aiod_open *o);

#endif
