/*
 * The request layer's shared parts (private to request.c, waitq.c, read.c,
 * passthrough.c, readahead.c and write.c): a data request from a message
 * queue, and what the files of the layer call of each other.
 *
 *   request.c    a request's life: dispatch by opcode, pins, replies, end
 *   waitq.c      requests waiting for free cache blocks; the pin quota
 *   read.c       READ0: hits, misses, loads from the disk
 *   passthrough.c a random reader's miss: only its pages, in private blocks
 *   readahead.c  what a sequential or stream reader will need next
 *   write.c      WRITE0/WRITE1, WROTE (their write-back: writeback.c), FSYNC
 *   writehold.c  write replies held while their writer is ahead of the disk
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_DATAPLANE_H
#define AIOD_DATAPLANE_H

#include "aiod.h"
#include "peer.h"
#include "rtio_shm.h"

struct aiod_req {
	struct aiod_req *rprev, *rnext;	/* the peer's requests in flight */
	struct aiod_req *bnext;		/* ctx->blocked */
	struct aiod_req *hnext;		/* ctx->held */
	struct aiod_ctx *ctx;
	struct aiod_peer *p;		/* NULL once its session went away */
	uint16_t opcode;
	uint64_t req_id;
	uint64_t arrived_ns;		/* when aiod took it: the trace's wait (log level 4) */
	struct aiod_open *open;		/* busy while the request lives */
	uint64_t off;
	uint32_t len;
	uint64_t end;			/* READ0: min(off + len, size) */
	uint64_t base;			/* READ0: file offset blocks[0] starts at: a pass-through
					 * read's first page; 0 for cached blocks, whose offsets
					 * are multiples of the block size */
	uint32_t nblocks;
	struct aiod_block *blocks[RTIO_MAX_SEGS];
	struct aiod_block_waiter waiters[RTIO_MAX_SEGS];
	uint32_t seg_done[RTIO_MAX_SEGS];	/* WRITE1: bytes written per block */
	uint32_t pending;		/* block loads / writes outstanding */
	int error;
	bool waited_for_disk;
	bool playing;			/* READ0: the stream was past its start-up when it came */
	bool blocked;
	uint64_t blocked_since_ns;
	bool held;			/* a write's reply waits for its write-back (writeback.c) */
	int held_result;
	uint64_t held_since_ns;
};

/*
 * One disk read of a run of contiguous file blocks: one vectored request, so
 * a large read-ahead reaches the device as one large request (one seek on a
 * disk) rather than many block-sized ones.
 */
struct aiod_load {
	struct aiod_ctx *ctx;
	struct aiod_open *open;
	uint32_t n;
	struct aiod_block *b[RTIO_MAX_SEGS];
};

/* Per device I/O of one block of a request: a WRITE1 staging block, a pass-through read. */
struct aiod_wseg {
	struct aiod_req *r;
	uint32_t i;
};

/* Where block b lies in the shared region, as clients address it. */
static inline uint64_t aiod_block_shm_off(const struct aiod_ctx *ctx, const struct aiod_block *b)
{
	return rtio_shm_block_off(ctx->region.data_off, ctx->cache->block_size, b->idx);
}

/* request.c */
/* r pins b on behalf of its peer. */
void aiod_req_take(struct aiod_req *r, struct aiod_block *b);
void aiod_req_unpin(struct aiod_req *r);
/* A reply with only a result (s may be NULL: nobody to answer). */
void aiod_reply_simple(struct aiod_ctx *ctx, struct aiod_session *s, uint16_t opcode,
		       uint64_t req_id, int result);
/* Done with r: answer (unless orphaned) and free it. */
void aiod_req_end(struct aiod_req *r, int result);

/* waitq.c */
/* Blocks r pins at most: those its range spans (a read), or its staging blocks (a write). */
uint32_t aiod_req_span(const struct aiod_req *r);
/* Whether r would take its peer past its share of the cache. */
bool aiod_req_over_quota(const struct aiod_req *r);
/* r waits for free blocks (FIFO, pin_wait_ms at most). */
void aiod_req_block(struct aiod_req *r);
void aiod_waitq_remove(struct aiod_ctx *ctx, struct aiod_req *r);

/* read.c: both start functions return true when r had to wait for free blocks (waitq.c). */
bool aiod_read0_start(struct aiod_req *r);
/* r's blocks hold its bytes (or r->error says why not): answer with them, under a lease. */
void aiod_read0_finish(struct aiod_req *r);
/*
 * HIT: p's client copied len bytes at off of o's file out of the cache
 * itself (rtio_shm.h). Counted as a hit read, the blocks made recent, and
 * the stream's read-ahead moved on, as if READ0 had found them.
 */
void aiod_read_hit(struct aiod_ctx *ctx, struct aiod_peer *p, struct aiod_open *o, uint64_t off,
		   uint32_t len);
/*
 * One disk read of the n contiguous LOADING blocks b of o's file.
 */
int aiod_load_submit(struct aiod_ctx *ctx, struct aiod_open *o, struct aiod_block **b, uint32_t n,
		     uint64_t deadline_ns);
/*
 * The engine's aiod_engine_grow_fn (arg: the aiod_ctx): a stream's load may
 * grow, when the device takes it, to what keeps up with every stream
 * admitted by then (aiod_readahead_sustain_bytes()), its first at least as
 * large as its ramp starts (aiod_readahead_first_bytes()); anything else
 * stays as it was queued.
 */
uint64_t aiod_load_grow(void *arg, aiod_engine_done_fn done, void *private_data);
/*
 * The engine's aiod_engine_slice_fn (arg: the aiod_ctx): a best-effort load
 * goes to a disk in pieces of [readahead] blocks_with_streams blocks while
 * streams are admitted, so a stream's read that falls due waits for one
 * piece, not for a bulk reader's whole request (a client's 8 MiB read).
 * While none is admitted but stream classes exist (one may open while the
 * load is on the disk), in pieces half as large, one behind the other. A
 * stream's load and anything else go whole.
 */
uint32_t aiod_load_slice(void *arg, aiod_engine_done_fn done, void *private_data, bool *behind);
/*
 * The engine's aiod_engine_rekey_fn (arg: the aiod_ctx): a stream's load
 * queued with old_round_ns is due new_round_ns earlier instead; anything
 * else keeps its deadline.
 */
uint64_t aiod_load_rekey(void *arg, aiod_engine_done_fn done, void *private_data,
			 uint64_t deadline_ns, uint64_t old_round_ns, uint64_t new_round_ns);
/*
 * The engine's aiod_engine_waited_fn: whether a request waits on a block of
 * this load (a client's miss, or a client that found the block still
 * loading from read-ahead).
 */
bool aiod_load_waited(void *arg, aiod_engine_done_fn done, void *private_data);
/*
 * Take back the queued loads (not yet in the kernel) that no request waits
 * on and that match() picks (aiod_engine_cancel()): each completes with
 * -ECANCELED, never read, its blocks back to the free list. How many.
 */
uint32_t aiod_load_cancel(struct aiod_ctx *ctx, bool (*match)(const struct aiod_load *ld, void *arg),
			  void *arg);
/* load_drop.c */
/*
 * Close o (aiod_open_close()); if it is its file's last open, first drop
 * its read-ahead the device has not begun and no request waits on
 * (aiod_engine_cancel()): nobody plays that timeline any more, and after a
 * playback of eight streams stopped, 208 MiB of it (1.4 s of the emulated
 * disk) went before the next playback's first reads. The blocks go back to
 * the cache's free list. (aiod_load_close_all(), requests.h: every open of
 * a session that ended.)
 */
void aiod_load_close(struct aiod_ctx *ctx, struct aiod_opens *os, struct aiod_open *o);
/*
 * A client reads o's file at off (before anything of the read is done, or
 * told to read-ahead). A read far from where o was reading (an editor
 * scrubbing to another scene, a player that seeks) drops o's read-ahead
 * that the device has not begun, that no request waits on and that lies
 * away from the new place, as aiod_load_close() does: due by the timeline
 * o left, it would go to the disk before the new place's first reads and
 * every other stream's refills. Far: past where read-ahead got to by more
 * than the window's reach (from where o read last to where read-ahead
 * got), or two reaches back; loads within a reach behind the new place or
 * two ahead of it stay.
 */
void aiod_load_jump(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off);

/* passthrough.c */
/*
 * Whether r's miss (o's file is size bytes now) is a random reader's that
 * reads only its own pages, without the cache.
 */
bool aiod_passthrough_wanted(const struct aiod_req *r, uint64_t size);
/* Read r's range [off, end) into private blocks; true when it waits for free blocks. */
bool aiod_passthrough_start(struct aiod_req *r);

/* readahead.c */
void aiod_readahead(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t last, uint64_t size,
		    uint32_t want);
/*
 * Bytes a request of stream o must bring now so that one round of requests,
 * one per admitted stream, loses no lead (at most io_size); 0 for a reader
 * without a bitrate or without a device profile.
 */
uint64_t aiod_readahead_sustain_bytes(const struct aiod_ctx *ctx, const struct aiod_open *o);
/* The size a stream's read-ahead ramp starts at (readahead.c): twice the client's read, at least sustain. */
uint64_t aiod_readahead_first_bytes(const struct aiod_ctx *ctx, const struct aiod_open *o);

/* write.c */
bool aiod_write0_start(struct aiod_req *r);
void aiod_write1_start(struct aiod_req *r, struct aiod_lease *l);
/* The peer went away: WRITE1 segments still waiting for the device are taken back. */
void aiod_write1_cancel(struct aiod_req *r);
/* WROTE: smbd wrote m's range itself; aiod drops its copy and plans the write-back (no reply). */
void aiod_wrote_apply(struct aiod_ctx *ctx, struct aiod_session *s, struct aiod_open *o,
		      const struct rtio_io_req *m);

/* writehold.c */
/* Answer a write (WROTE, WRITE1) now, or once its writer is no longer ahead of its write-back. */
void aiod_write_reply(struct aiod_req *r, int result);
/* r's session or r itself goes: off the list of held replies. */
void aiod_write_hold_remove(struct aiod_ctx *ctx, struct aiod_req *r);
void aiod_fsync_done(void *private_data, int result);

#endif
