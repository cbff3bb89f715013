/*
 * EDF queue: a binary min-heap on (deadline, arrival).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdlib.h>

#include "edf.h"

static bool before(const struct aiod_edf_item *a, const struct aiod_edf_item *b)
{
	if (a->deadline_ns != b->deadline_ns) {
		return a->deadline_ns < b->deadline_ns;
	}
	return a->seq < b->seq;
}

static void place(struct aiod_edf *q, uint32_t i, struct aiod_edf_item *it)
{
	q->heap[i] = it;
	it->heap_pos = i;
}

static void sift_up(struct aiod_edf *q, uint32_t i)
{
	struct aiod_edf_item *it = q->heap[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!before(it, q->heap[parent])) {
			break;
		}
		place(q, i, q->heap[parent]);
		i = parent;
	}
	place(q, i, it);
}

static void sift_down(struct aiod_edf *q, uint32_t i)
{
	struct aiod_edf_item *it = q->heap[i];

	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		struct aiod_edf_item *best = it;

		if (l < q->count && before(q->heap[l], best)) {
			m = l;
			best = q->heap[l];
		}
		if (r < q->count && before(q->heap[r], best)) {
			m = r;
			best = q->heap[r];
		}
		if (m == i) {
			break;
		}
		place(q, i, best);
		i = m;
	}
	place(q, i, it);
}

void aiod_edf_reorder(struct aiod_edf *q)
{
	for (uint32_t i = q->count / 2; i-- > 0;) {
		sift_down(q, i);
	}
}

struct aiod_edf *aiod_edf_create(TALLOC_CTX *mem_ctx)
{
	return talloc_zero(mem_ctx, struct aiod_edf);
}

int aiod_edf_push(struct aiod_edf *q, struct aiod_edf_item *it)
{
	if (q->count == q->capacity) {
		uint32_t cap = q->capacity ? q->capacity * 2 : 64;
		struct aiod_edf_item **h = talloc_realloc(q, q->heap, struct aiod_edf_item *, cap);
		if (h == NULL) {
			return -ENOMEM;
		}
		q->heap = h;
		q->capacity = cap;
	}
	it->seq = q->seq++;
	place(q, q->count, it);
	sift_up(q, q->count++);
	return 0;
}

struct aiod_edf_item *aiod_edf_peek(const struct aiod_edf *q)
{
	return q->count ? q->heap[0] : NULL;
}

void aiod_edf_remove(struct aiod_edf *q, struct aiod_edf_item *it)
{
	uint32_t i = it->heap_pos;

	if (i >= q->count || q->heap[i] != it) {
		return;
	}
	q->count--;
	if (i == q->count) {
		return;
	}
	{
		struct aiod_edf_item *moved = q->heap[q->count];

		place(q, i, moved);
		sift_down(q, i);
		sift_up(q, moved->heap_pos);
	}
}

struct aiod_edf_item *aiod_edf_pop(struct aiod_edf *q)
{
	struct aiod_edf_item *it = aiod_edf_peek(q);

	if (it != NULL) {
		aiod_edf_remove(q, it);
	}
	return it;
}

static int by_deadline(const void *a, const void *b)
{
	const struct aiod_edf_item *x = *(struct aiod_edf_item *const *)a;
	const struct aiod_edf_item *y = *(struct aiod_edf_item *const *)b;

	return before(x, y) ? -1 : (before(y, x) ? 1 : 0);
}

bool aiod_edf_fits_first(struct aiod_edf *q, const struct aiod_edf_item *c, uint64_t c_ns,
			 uint64_t now_ns, aiod_edf_cost_fn cost, void *arg)
{
	uint64_t t = now_ns + c_ns;
	uint32_t n = 0;

	if (q->scratch_cap < q->count) {
		struct aiod_edf_item **s = talloc_realloc(q, q->scratch, struct aiod_edf_item *,
							  q->capacity);
		if (s == NULL) {
			return false;	/* plain EDF then */
		}
		q->scratch = s;
		q->scratch_cap = q->capacity;
	}
	for (uint32_t i = 0; i < q->count; i++) {
		if (q->heap[i] != c) {
			q->scratch[n++] = q->heap[i];
		}
	}
	qsort(q->scratch, n, sizeof(q->scratch[0]), by_deadline);
	for (uint32_t i = 0; i < n; i++) {
		t += cost(q->scratch[i], arg);
		if (t > q->scratch[i]->deadline_ns) {
			return false;
		}
	}
	return true;
}
