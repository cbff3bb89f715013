/*
 * The asynchronous I/O engine: io_uring behind a bounded device queue fed in
 * earliest-deadline-first order. The only part of aiod that knows liburing.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_ENGINE_H
#define AIOD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <talloc.h>
#include <tevent.h>

struct aiod_engine;

/* result: bytes transferred (a read is short only at EOF), 0 for fsync, or -errno. */
typedef void (*aiod_engine_done_fn)(void *private_data, int result);

struct aiod_engine_stats {
	uint64_t submitted;	/* SQEs handed to the kernel, resubmissions included */
	uint64_t completed;	/* operations finished */
	uint64_t resubmits;	/* short transfers and -EAGAIN */
	uint32_t queued;	/* waiting for a device slot */
	uint32_t inflight;	/* in the kernel */
	bool fixed_buffers;	/* the region is registered with the ring */
	uint64_t continued;	/* reads served where the last one ended, ahead of the head */
	uint64_t waited_first;	/* heads served first because a client waited for them */
	uint64_t expedited;	/* queued operations made due sooner: a client waited for them */
	uint64_t merged;	/* queued reads taken along by the one before them (grow) */
	uint64_t sliced;	/* pieces of a read after which the rest went back in the queue */
	uint64_t behind;	/* requests handed to the kernel behind the last with every slot taken */
};

/*
 * bufs/block_size/nblocks describe the shared region's blocks, registered as
 * fixed buffers when the kernel allows it.
 */
struct aiod_engine *aiod_engine_create(TALLOC_CTX *mem_ctx, struct tevent_context *ev,
				       uint32_t queue_depth, uint8_t *bufs, uint32_t block_size,
				       uint32_t nblocks, char *err, size_t errlen);

/*
 * What a request costs the device: request_ns before any transfer (a seek
 * and rotation on a disk) and then media_Bps. Known (from the device
 * profile) and at least a millisecond, the engine lets a read that starts
 * where the previous one ended go before the earliest deadline, as long as
 * every queued operation is still served by its deadline after it
 * (aiod_edf_fits_first()): on a disk that saves the seek there and back, and
 * a stream's consecutive requests become one long read whenever the others
 * have the slack. 0 for either: plain earliest-deadline-first.
 */
void aiod_engine_set_costs(struct aiod_engine *e, uint64_t request_ns, uint64_t media_Bps);

/*
 * Whether a queued operation of done/private_data is one a client waits for
 * now. While one is queued (at the head, or behind others' read-ahead with
 * earlier deadlines), no read of another descriptor that has not begun is
 * taken ahead of deadline order for starting where the last one ended,
 * however far the waited-for deadline. A best-effort read is due
 * best_effort_deadline_ms (2.4 s on a disk) after it is asked for, so a
 * client that waits for it was always "on time" for that rule, and a
 * reader's whole read-ahead window (4 x 16 MiB) went before the next
 * reader's first read: of clips no stream class names, started together, 2
 * played clean where a plain share played 7.
 * NULL (the default): no operation counts as waited for.
 */
typedef bool (*aiod_engine_waited_fn)(void *arg, aiod_engine_done_fn done, void *private_data);
void aiod_engine_set_waited(struct aiod_engine *e, aiod_engine_waited_fn fn, void *arg);

/*
 * A client now waits for the queued operations match() picks (arg passed to
 * it): make each due no later than deadline_ns, in one pass over the queue.
 * Read-ahead is queued with the deadline of when its reader was expected to
 * get there; a reader that gets there sooner (a reserved flow back behind its reservation, a best-effort
 * reader faster than its window's spread) must not wait out that deadline.
 * Whether any queued operation matched (one at the device cannot be moved).
 */
typedef bool (*aiod_engine_match_fn)(void *arg, aiod_engine_done_fn done, void *private_data);
bool aiod_engine_expedite(struct aiod_engine *e, aiod_engine_match_fn match, void *arg,
			  uint64_t deadline_ns);

/*
 * How large (bytes) a queued vectored read of done/private_data may grow
 * when the device takes it; 0: as queued. The engine then takes the reads of
 * the same callback that follow it on the same fd along in one request
 * while it is still smaller than that (up to 16 blocks), and each completes
 * with its own part. A size decided when a read was queued can be stale by
 * the time the device is free: a stream's start-up read-ahead is queued for
 * its whole window at its first reads, in requests sized for the streams
 * admitted by then, and streams opened together are admitted one by one.
 */
typedef uint64_t (*aiod_engine_grow_fn)(void *arg, aiod_engine_done_fn done, void *private_data);
void aiod_engine_set_grow(struct aiod_engine *e, aiod_engine_grow_fn grow, void *arg);

/*
 * How many bytes of a queued vectored read of done/private_data the device
 * is given at a time (whole iovecs, at least one); 0: all of it. Only on a
 * device with a seek cost (aiod_engine_set_costs()). A request the device
 * has started cannot be overtaken: a bulk reader's 8 MiB read (65 ms on the
 * emulated disk) went to the device just before a 200 Mbit/s stream opened,
 * and the stream's first chunk missed a client buffer of 84 ms. After each
 * piece the rest goes back in the queue with its deadline: a read due
 * sooner, or one a client waits for, is taken next when the rest would make
 * it late, and otherwise the rest follows at once where the piece ended
 * (the read that continues the last one, engine_pick()), without a seek.
 * The read completes once, with all its bytes.
 *
 * *behind (false unless set): the next piece goes to the kernel while the
 * device still reads this one, one behind the other, so the device never
 * idles between them (on the emulated disk each gap cost a copy 0.4 ms of
 * every 25 ms piece); so does the first piece of the reader's next read,
 * behind the last of this one. The device may then hold one request more
 * than queue_depth, and a read due sooner waits for up to two pieces. A
 * piece goes behind only where it keeps every queued operation on time
 * counting the piece ahead of it (engine_pick_behind()).
 */
typedef uint32_t (*aiod_engine_slice_fn)(void *arg, aiod_engine_done_fn done, void *private_data,
					 bool *behind);
void aiod_engine_set_slice(struct aiod_engine *e, aiod_engine_slice_fn fn, void *arg);

/*
 * Stream deadlines are set one round of refills earlier than the data is
 * needed (stream.c), and a round grows with the streams admitted: reads
 * queued before a stream was admitted would sort after the later ones' by
 * the difference. aiod_engine_rekey() gives the new deadline of every
 * queued operation (fn as set here: its deadline for old_round_ns and
 * new_round_ns) and restores the queue's order; admission calls it when the
 * round changes.
 */
typedef uint64_t (*aiod_engine_rekey_fn)(void *arg, aiod_engine_done_fn done, void *private_data,
					 uint64_t deadline_ns, uint64_t old_round_ns,
					 uint64_t new_round_ns);
void aiod_engine_set_rekey(struct aiod_engine *e, aiod_engine_rekey_fn fn, void *arg);
void aiod_engine_rekey(struct aiod_engine *e, uint64_t old_round_ns, uint64_t new_round_ns);

/*
 * Queue an operation. fd must stay open until done runs; done never runs
 * before the call returns. deadline_ns (CLOCK_MONOTONIC) orders waiting
 * operations. Returns 0 or -ENOMEM.
 */
int aiod_engine_read(struct aiod_engine *e, int fd, uint32_t block, uint32_t buf_off, uint32_t len,
		     uint64_t off, uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data);
/* Read n cache blocks' worth (whole blocks, in order) starting at off with one request. */
int aiod_engine_readv(struct aiod_engine *e, int fd, const uint32_t *blocks, uint32_t n,
		      uint64_t off, uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data);
int aiod_engine_write(struct aiod_engine *e, int fd, uint32_t block, uint32_t buf_off, uint32_t len,
		      uint64_t off, uint64_t deadline_ns, aiod_engine_done_fn done, void *private_data);
int aiod_engine_fsync(struct aiod_engine *e, int fd, bool datasync, uint64_t deadline_ns,
		      aiod_engine_done_fn done, void *private_data);

/*
 * Write back fd's dirty pages in [off, off + len) (sync_file_range). With
 * AIOD_WB_WAIT, the operation holds its device slot until the data is on
 * the device (WAIT_BEFORE | WRITE | WAIT_AFTER): the EDF queue, not the
 * kernel flusher, decides when the device spends that time. Without it, it
 * ends once the write is queued in the kernel. A wait reports a write-back
 * error to fd's open file description and marks it seen there (errseq):
 * wait only on a description of aiod's own, never on the client's
 * (writeback.c). With AIOD_WB_BEHIND, where seeks cost
 * (aiod_engine_set_costs()) and while aiod_engine_set_writeback_behind()
 * allows it, the run may go to the kernel while the device still writes
 * the one before it when it is next in deadline order and starts where
 * that one, handed to the kernel last, ends: the device does not idle
 * between a writer's runs for the round trip through aiod, as with a
 * best-effort read's pieces (aiod_engine_slice_fn's *behind).
 */
#define AIOD_WB_WAIT   1u
#define AIOD_WB_BEHIND 2u
int aiod_engine_writeback(struct aiod_engine *e, int fd, uint64_t off, uint32_t len,
			  unsigned flags, uint64_t deadline_ns, aiod_engine_done_fn done,
			  void *private_data);

/*
 * Whether AIOD_WB_BEHIND runs may go behind one another now (on when the
 * engine is created): aiod turns it off while streams are admitted, when
 * a second run in the kernel would be one more a due stream read waits for
 * (admission.c), whenever the run was queued.
 */
void aiod_engine_set_writeback_behind(struct aiod_engine *e, bool on);

/*
 * Take back queued operations (not yet in the kernel) of callback done for
 * which match(private_data, arg) is true; each completes with -ECANCELED.
 * Operations already in the kernel finish normally. Returns how many.
 */
unsigned aiod_engine_cancel(struct aiod_engine *e, aiod_engine_done_fn done,
			    bool (*match)(void *private_data, void *arg), void *arg);

void aiod_engine_get_stats(const struct aiod_engine *e, struct aiod_engine_stats *out);

#endif
