/*
 * The session fuzzer's harness: a real aiod context in this process (config
 * defaults with a small cache, the shared region, the cache, the io_uring
 * engine, the listener and tevent's loop) and one or two clients that run a
 * fuzz input against it (session_ops.h). Used by the libFuzzer target
 * (fuzz_session.c) and by the corpus replay test (replay_session.c).
 *
 * Every broken invariant -- a malformed reply, wrong data, a session, pinned
 * block, descriptor or talloc block left after everything closed -- is
 * printed and abort()s, so libFuzzer records the input and a test run fails
 * with the reason.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef FUZZ_SESSION_HARNESS_H
#define FUZZ_SESSION_HARNESS_H

#include <stddef.h>
#include <stdint.h>

struct fz_world;

/*
 * Build the aiod context and the backing files (nameless, on tmpfs); the
 * listener's socket goes in /dev/shm/rtio-fuzz-session.PID, which the next
 * harness removes if this process dies without fz_world_destroy().
 */
struct fz_world *fz_world_create(void);

/* Run one input, tear its clients down and check that nothing of them is left. */
void fz_world_run(struct fz_world *w, const uint8_t *data, size_t size);

/* Stop aiod's parts and remove the backing files. */
void fz_world_destroy(struct fz_world *w);

/* Remove the backing files and the socket now: a crash is about to end the process. */
void fz_world_remove_files(struct fz_world *w);

#endif
