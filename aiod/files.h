/*
 * Files and opens (files.c), and the watch for outside writers (watch.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_FILES_H
#define AIOD_FILES_H

#include "aiod.h"

/* The file table and its watch (watch.c); needs ctx->ev. */
int aiod_files_init(struct aiod_ctx *ctx);
struct aiod_file *aiod_file_get(struct aiod_ctx *ctx, uint64_t dev, uint64_t ino);
void aiod_file_put(struct aiod_ctx *ctx, struct aiod_file *f);
struct aiod_file *aiod_file_find(struct aiod_ctx *ctx, uint64_t dev, uint64_t ino);
void aiod_file_forget(struct aiod_ctx *ctx, uint64_t dev, uint64_t ino);
/*
 * f changed behind aiod's back (watch.c saw it, or its stamp differs at an
 * OPEN): drop every cached block, count it; returns how many went.
 */
uint32_t aiod_file_changed_outside(struct aiod_ctx *ctx, struct aiod_file *f);
/* The kernel dropped f's watch (inode gone): forget f unless it is open. */
void aiod_file_unwatched(struct aiod_ctx *ctx, struct aiod_file *f);
/* The index-th file record, in a linear walk when indexes come in order; NULL past the end. */
struct aiod_file *aiod_file_at(struct aiod_ctx *ctx, uint32_t index);
struct aiod_open *aiod_open_find(const struct aiod_opens *os, uint64_t id);
/* Register fd (the client's descriptor, owned by the open on success) in os. */
int aiod_open_add(struct aiod_ctx *ctx, struct aiod_opens *os, int fd, const char *name,
		  uint32_t flags, struct aiod_open **out);
void aiod_open_close(struct aiod_ctx *ctx, struct aiod_opens *os, struct aiod_open *o);
/* Whether os has (dev, ino) open. */
bool aiod_opens_has(const struct aiod_opens *os, uint64_t dev, uint64_t ino);
void aiod_open_busy(struct aiod_open *o);
void aiod_open_idle(struct aiod_ctx *ctx, struct aiod_open *o);

/* watch.c */
int aiod_watch_init(struct aiod_ctx *ctx);
/* Watch f through fd, a descriptor of it; -errno when the kernel refuses. */
int aiod_watch_add(struct aiod_ctx *ctx, struct aiod_file *f, int fd);
void aiod_watch_remove(struct aiod_ctx *ctx, struct aiod_file *f);
/* Act on every change queued so far; before answering a read from the cache. */
void aiod_watch_drain(struct aiod_ctx *ctx);
/* The inotify descriptor (clients poll it: WATCH_FD), -1 when aiod has none. */
int aiod_watch_fd(const struct aiod_ctx *ctx);
uint32_t aiod_watch_count(const struct aiod_ctx *ctx);

#endif
