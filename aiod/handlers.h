/*
 * The table sessions deliver to (handlers.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_HANDLERS_H
#define AIOD_HANDLERS_H

#include "session.h"

/* For ctx->handlers (set by main.c and by tests that build a context). */
extern const struct aiod_session_handlers aiod_handlers;

#endif
