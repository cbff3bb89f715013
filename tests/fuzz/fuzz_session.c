/*
 * libFuzzer target for what a client of aiod reaches: the control socket and
 * the request queue of a session, against a real in-process aiod (the
 * harness in session_harness.c, the input format in session_ops.h).
 *
 * One aiod context lives for the whole run, as the daemon does: state an
 * input leaves behind (a session, a pinned block, a descriptor, a talloc
 * block) is a crash of that input, not noise in the next one.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "session_harness.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fz_world *world;

/* libFuzzer ends with exit(): the backing files and the socket go with it. */
static void world_end(void)
{
	fz_world_destroy(world);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	world = fz_world_create();
	if (atexit(world_end) != 0) {
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_world_run(world, data, size);
	return 0;
}
