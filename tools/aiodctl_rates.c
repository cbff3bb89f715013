/*
 * Rates between two snapshots. aiod keeps only counters (cheap, and exact
 * for Prometheus, which takes its own rate()); the bytes/s that `sessions`
 * and `top` show are the growth over the interval between two looks.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "aiodctl_snapshot.h"

uint64_t aiodctl_rate(uint64_t before, uint64_t after, uint64_t dt_ns)
{
	if (dt_ns == 0 || after <= before) {
		return 0;
	}
	/* in double: a byte count times 1e9 overflows 64 bits past 18 GB */
	return (uint64_t)((double)(after - before) * 1e9 / (double)dt_ns);
}

static const struct aiodctl_session *find(const struct aiodctl_snapshot *s, uint32_t id)
{
	for (uint32_t i = 0; i < s->n_sessions; i++) {
		if (s->sessions[i].rep.session_id == id) {
			return &s->sessions[i];
		}
	}
	return NULL;
}

void aiodctl_rates(const struct aiodctl_snapshot *prev, struct aiodctl_snapshot *cur)
{
	uint64_t dt = cur->taken_ns > prev->taken_ns ? cur->taken_ns - prev->taken_ns : 0;

	for (uint32_t i = 0; i < cur->n_sessions; i++) {
		struct aiodctl_session *n = &cur->sessions[i];
		const struct aiodctl_session *o = find(prev, n->rep.session_id);

		if (o == NULL || dt == 0) {
			continue;	/* new since the first look: no rate yet */
		}
		n->read_Bps = aiodctl_rate(o->rep.bytes_read, n->rep.bytes_read, dt);
		n->write_Bps = aiodctl_rate(o->rep.bytes_written, n->rep.bytes_written, dt);
		n->have_rate = true;
	}
}
