/*
 * JSON of what aiodctl shows, built with jansson (aiodctl_json.c): no
 * string is put together by hand, so names and values are always escaped.
 * Builders return a new reference or NULL (out of memory).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIODCTL_JSON_H
#define AIODCTL_JSON_H

#include <jansson.h>

#include "aiodctl_snapshot.h"

/* {"version", "pid", "start_time", "uptime_seconds", "block_size", "stream_classes": [...]} */
json_t *aiodctl_json_daemon(const struct aiodctl_snapshot *s);
/* aiod's counters by their stats key (aiodctl_fields.h) */
json_t *aiodctl_json_stats(const struct rtio_stats_rep *st, size_t len);
json_t *aiodctl_json_file(const struct rtio_file_stats_rep *f);
json_t *aiodctl_json_session(const struct aiodctl_session *s);
/* Set key of obj to v (a new reference, taken even on failure); -1 on any failure. */
int aiodctl_json_put(json_t *obj, const char *key, json_t *v);
/* A counter: exact up to 2^63, then a (rounded) real rather than a negative number. */
json_t *aiodctl_json_u64(uint64_t v);
/* Print root to stdout, indented, and drop it; AIODCTL_EXIT_* */
int aiodctl_json_print(json_t *root);

#endif
