/*
 * Write-back runs (writeback.c): aiod pushes a writer's dirty data to the
 * device in io_size runs, at moments the EDF queue chooses.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_WRITEBACK_H
#define AIOD_WRITEBACK_H

#include "aiod.h"

/* o's client wrote [off, off + len) into the page cache (WROTE, or WRITE1 through aiod). */
void aiod_writeback_wrote(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint64_t len);
/* o is closing: a recorder's last, partial run is queued too. */
void aiod_writeback_close(struct aiod_ctx *ctx, struct aiod_open *o);
/*
 * Whether o's writer is ahead of the disk, so that its next write's answer
 * waits (writehold.c): while it is scheduled (record.c), when its runs
 * queued or on the device are worth two io_size runs (four for a recorder
 * with a reservation, whose runs are due at its rate anyway); while it is
 * pumped (a steady writer, no stream open), when about a second of the
 * device's capacity of its data is not yet written back.
 */
bool aiod_writeback_ahead(const struct aiod_ctx *ctx, const struct aiod_open *o);

#endif
