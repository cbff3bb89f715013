/*
 * The fake engine's controls (tests/unit/fake_engine.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef FAKE_ENGINE_H
#define FAKE_ENGINE_H

#include <stdint.h>

struct aiod_engine;

/* Operations queued and not yet run. */
unsigned fake_engine_pending(const struct aiod_engine *e);
/* The earliest deadline among them, UINT64_MAX if none. */
uint64_t fake_engine_first_deadline(const struct aiod_engine *e);
/* Run every queued operation (and those their callbacks queue), earliest deadline first. */
unsigned fake_engine_run(struct aiod_engine *e);

#endif
