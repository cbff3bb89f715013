/*
 * Earliest-deadline-first queue of device requests waiting for a slot in the
 * bounded device queue. Ties (equal deadlines) go first-come first-served.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_EDF_H
#define AIOD_EDF_H

#include <stdbool.h>
#include <stdint.h>
#include <talloc.h>

struct aiod_edf_item {
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC */
	uint64_t seq;		/* set by push: arrival order */
	uint32_t heap_pos;	/* set by the queue */
};

struct aiod_edf {
	struct aiod_edf_item **heap;
	uint32_t count;
	uint32_t capacity;
	uint64_t seq;
};

struct aiod_edf *aiod_edf_create(TALLOC_CTX *mem_ctx);
/* 0 or -ENOMEM. */
int aiod_edf_push(struct aiod_edf *q, struct aiod_edf_item *it);
/* Earliest deadline, NULL when empty. */
struct aiod_edf_item *aiod_edf_peek(const struct aiod_edf *q);
struct aiod_edf_item *aiod_edf_pop(struct aiod_edf *q);
/* Remove an item that is queued (heap_pos valid). */
void aiod_edf_remove(struct aiod_edf *q, struct aiod_edf_item *it);

#endif
