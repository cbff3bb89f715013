/*
 * The io_uring engine's own structures, shared by engine.c (queue, ring,
 * completions), engine_pick.c (what goes next), engine_grow.c (a queued
 * read grown, cut or re-keyed when the device takes it) and engine_behind.c
 * (a read's pieces one behind the other). Nothing outside the engine
 * includes this.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_ENGINE_PRIVATE_H
#define AIOD_ENGINE_PRIVATE_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "edf.h"
#include "engine.h"

enum engine_op_kind { ENGINE_READ, ENGINE_READV, ENGINE_WRITE, ENGINE_FSYNC, ENGINE_WRITEBACK };

#define ENGINE_MAX_IOV 16

struct engine_op {
	struct aiod_edf_item item;	/* first: the queue hands us back this pointer */
	enum engine_op_kind kind;
	int fd;
	uint32_t block;
	uint8_t *buf;
	uint32_t len;		/* still to transfer */
	uint64_t off;
	uint32_t done_bytes;
	bool datasync;
	unsigned sfr_flags;	/* WRITEBACK: sync_file_range flags */
	bool wb_behind;		/* WRITEBACK: may wait in the kernel behind its writer's run */
	uint32_t niov;		/* READV: blocks left; iov advances over short reads */
	struct iovec iov[ENGINE_MAX_IOV];
	aiod_engine_done_fn done;
	void *private_data;
	uint64_t submit_ns;	/* handed to the kernel; for the debug trace */
	/* what the kernel was handed this time: all of len, or a piece (aiod_engine_set_slice()) */
	uint32_t piece_len;
	uint32_t piece_niov;
	/* READV grown at dispatch: the reads it took along, and its own length */
	struct engine_op *along;
	uint32_t own_len;
	/*
	 * A read in pieces one behind the other (engine_behind.c): each piece
	 * is an op of its own whose parent is the read; the read itself keeps
	 * the rest. short_pos (with short_seen): where the first piece that
	 * came back short ended, bytes from the read's start, short_err its
	 * error if it failed; parked: the read is done but for its pieces,
	 * with park_res its own result.
	 */
	struct engine_op *parent;
	uint32_t parent_pos;	/* a piece: where it starts, bytes from its parent's start */
	uint32_t children;	/* a read: its pieces not back yet */
	bool short_seen;
	uint32_t short_pos;
	int short_err;
	int park_res;
	bool parked;
	bool in_kernel;
};

struct aiod_engine {
	struct io_uring ring;
	bool ring_ok;
	int efd;
	struct tevent_context *ev;
	struct tevent_fd *efd_fde;
	struct tevent_immediate *submit_im;
	bool submit_armed;
	struct aiod_edf *queue;
	uint8_t *bufs;
	uint32_t block_size;
	uint32_t nblocks;
	uint32_t depth;
	struct aiod_engine_stats st;
	/* aiod_engine_set_costs(): 0 = plain EDF */
	uint64_t request_ns;
	uint64_t media_Bps;
	/* where the last read handed to the kernel ends */
	int last_fd;
	uint64_t last_end;
	/* where the last request handed to the kernel ends if it was a write-back (else fd -1) */
	int last_wb_fd;
	uint64_t last_wb_end;
	bool wb_behind_on;	/* aiod_engine_set_writeback_behind() */
	/* aiod_engine_set_grow() */
	aiod_engine_grow_fn grow;
	void *grow_arg;
	/* aiod_engine_set_rekey() */
	aiod_engine_rekey_fn rekey;
	void *rekey_arg;
	/* aiod_engine_set_slice() */
	aiod_engine_slice_fn slice;
	void *slice_arg;
	/* aiod_engine_set_waited() */
	aiod_engine_waited_fn waited;
	void *waited_arg;
};

static inline bool engine_is_read(const struct engine_op *op)
{
	return op->kind == ENGINE_READ || op->kind == ENGINE_READV;
}

/* engine_pick.c: the queued operation the device gets next (NULL: none queued). */
struct engine_op *engine_pick(struct aiod_engine *e);
/* engine_grow.c: grow op (about to go to the device) by the reads after it. */
void engine_grow(struct aiod_engine *e, struct engine_op *op);
/*
 * engine_grow.c: the bytes (and iovecs) of op the device is given now;
 * *behind: the next piece may follow it into the kernel (aiod_engine_slice_fn).
 */
uint32_t engine_piece(const struct aiod_engine *e, const struct engine_op *op, uint32_t *niov,
		      bool *behind);
/* engine_grow.c: drop the first n bytes of a READV's vector. */
void engine_iov_advance(struct engine_op *op, uint32_t n);
/* engine_pick.c: a read's next piece to go behind the one the device is on, or NULL. */
struct engine_op *engine_pick_behind(struct aiod_engine *e);
/* engine_behind.c: the piece of op the device is given now, as an op of its own; NULL: none. */
struct engine_op *engine_split(struct aiod_engine *e, struct engine_op *op, uint32_t piece,
			       uint32_t niov);
/*
 * engine_behind.c: op (a piece, or a read that was given out in pieces)
 * ended with *res. A piece tells its parent and is freed; a read whose
 * pieces are still in the kernel waits for them. Returns true when op's
 * callback is to run now, with *res (the read's bytes up to its first
 * short piece).
 */
bool engine_behind_finish(struct aiod_engine *e, struct engine_op *op, int *res);
/* engine.c: run op's callback (and those of the reads it took along) with res, and free it. */
void engine_finish(struct aiod_engine *e, struct engine_op *op, int res);
/* engine_grow.c: after op's own callback, those of the reads it took along. */
void engine_done_along(struct aiod_engine *e, struct engine_op *op, int res);

#endif
