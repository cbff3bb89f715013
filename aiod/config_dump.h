/*
 * aiod --dump-config (config_dump.c): the configuration aiod would run with.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_CONFIG_DUMP_H
#define AIOD_CONFIG_DUMP_H

#include <stdio.h>
#include <talloc.h>

#include "config.h"

/*
 * Derive what cfg leaves to its [admission] profile (as aiod does at start,
 * quietly), then write every key, ini style, with where its value came
 * from: "default", "PATH:LINE" (path: the aiod.ini, NULL when none was read)
 * or "derived from profile P". Returns 0 or -errno of the write.
 */
int aiod_config_dump(TALLOC_CTX *mem, FILE *f, struct aiod_config *cfg, const char *path);

#endif
