/*
 * aiod's STATS counters, described once: the key of `aiodctl stats` and
 * of the JSON, the Prometheus name, its type and help. Every output reads
 * this table, so a counter aiod adds appears everywhere with one row (and
 * test_aiodctl checks that every field of struct rtio_stats_rep has one).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIODCTL_FIELDS_H
#define AIODCTL_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtio_proto.h"

enum aiodctl_metric_type {
	AIODCTL_COUNTER,	/* only grows while aiod runs; Prometheus name ends in _total */
	AIODCTL_GAUGE,
};

struct aiodctl_stat_field {
	const char *key;	/* aiod's name: stats key=value and the JSON */
	size_t offset;		/* in struct rtio_stats_rep */
	enum aiodctl_metric_type type;
	const char *metric;	/* Prometheus name, unit in the name */
	const char *help;
};

extern const struct aiodctl_stat_field aiodctl_stat_fields[];
extern const size_t aiodctl_n_stat_fields;

uint64_t aiodctl_stat_value(const struct rtio_stats_rep *st, const struct aiodctl_stat_field *f);
/*
 * Whether a STATS reply of len bytes holds f: an aiod older than this
 * aiodctl sends fewer counters (rtio_proto.h), and the ones it does not
 * send are left out of every output rather than shown as 0.
 */
bool aiodctl_stat_sent(size_t len, const struct aiodctl_stat_field *f);
/* On stderr, when len leaves counters out: how many, and why. */
void aiodctl_stats_note(size_t len);

#endif
