/*
 * The control socket (listener.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_LISTENER_H
#define AIOD_LISTENER_H

#include "aiod.h"

int aiod_listener_start(struct aiod_ctx *ctx, char *err, size_t errlen);
void aiod_listener_stop(struct aiod_ctx *ctx);

#endif
