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
	struct aiod_edf_item **scratch;	/* aiod_edf_fits_first(): the queue in deadline order */
	uint32_t scratch_cap;
};

/* Device time of serving a queued item after a seek (aiod_edf_fits_first()). */
typedef uint64_t (*aiod_edf_cost_fn)(const struct aiod_edf_item *it, void *arg);

struct aiod_edf *aiod_edf_create(TALLOC_CTX *mem_ctx);
/* 0 or -ENOMEM. */
int aiod_edf_push(struct aiod_edf *q, struct aiod_edf_item *it);
/* Earliest deadline, NULL when empty. */
struct aiod_edf_item *aiod_edf_peek(const struct aiod_edf *q);
struct aiod_edf_item *aiod_edf_pop(struct aiod_edf *q);
/*
 * Whether serving the queued item c first, for c_ns of device time, still
 * leaves every other queued item on time when they follow in deadline order,
 * each costing cost(it, arg). An item already past its deadline says no.
 * What a disk scheduler asks before it lets a reader go on where the head is
 * rather than seek to the earliest deadline.
 */
bool aiod_edf_fits_first(struct aiod_edf *q, const struct aiod_edf_item *c, uint64_t c_ns,
			 uint64_t now_ns, aiod_edf_cost_fn cost, void *arg);
/* Remove an item that is queued (heap_pos valid). */
void aiod_edf_remove(struct aiod_edf *q, struct aiod_edf_item *it);
/* The items' deadlines were changed in place: restore the queue's order. */
void aiod_edf_reorder(struct aiod_edf *q);

#endif
