/*
 * Prometheus text exposition format 0.0.4 of a snapshot (aiodctl_prom.c),
 * for node_exporter's textfile collector. Pure: writes to any FILE, so
 * test_aiodctl checks it on a memory stream.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIODCTL_PROM_H
#define AIODCTL_PROM_H

#include <stddef.h>
#include <stdio.h>

#include "aiodctl_snapshot.h"

/* Every metric of s, with HELP and TYPE lines; 0, or -EIO when f failed. */
int aiodctl_prom_write(FILE *f, const struct aiodctl_snapshot *s);
/*
 * A label value as the format wants it: backslash, double quote and newline
 * escaped. Cut (at a whole escape) to fit len; returns out.
 */
char *aiodctl_prom_escape(const char *in, char *out, size_t len);

#endif
