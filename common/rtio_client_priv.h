/*
 * rtio client library, private: the session and operation structs and what
 * the library's files call of each other. Nothing outside common/ includes it.
 *
 *   rtio_client.c       connect, monitor connect, teardown, features, the control round trip
 *   rtio_client_io.c    asynchronous operations: queueing, request slots, sending, waiting for room
 *   rtio_client_reply.c the reply queue: receiving, one handler per reply opcode
 *   rtio_client_sync.c  synchronous wrappers and control calls
 *   rtio_client_cached.c reads copied from the cache without a round trip (HIT)
 *
 * Calls go down that list from the bottom: sync -> reply -> io -> session.
 * The one call up is rtio_cl_kill() failing every pending operation
 * (rtio_cl_fail_all()): a dead session must not leave callers waiting.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef RTIO_CLIENT_PRIV_H
#define RTIO_CLIENT_PRIV_H

#include <mqueue.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtio_client.h"

enum rtio_io_kind { RTIO_IO_READ, RTIO_IO_WRITE, RTIO_IO_FSYNC, RTIO_IO_PIN, RTIO_IO_WROTE };

struct rtio_client_io {
	struct rtio_client *c;
	struct rtio_client_io *next;	/* in c->queue while waiting for a slot */
	enum rtio_io_kind kind;
	uint64_t file_id;
	uint8_t *buf;			/* NULL once cancelled: never touched again */
	size_t n;
	off_t off;
	size_t done_bytes;
	uint32_t chunk;			/* bytes asked for by the request in flight */
	bool datasync;
	bool in_write1;			/* WRITE0 answered, WRITE1 sent */
	bool cancelled;
	uint64_t req_id;		/* of the message in flight, 0 if none */
	struct rtio_pinned *pin;	/* RTIO_IO_PIN: where the segments go */
	rtio_client_done_fn done;
	void *private_data;
};

struct rtio_client {
	int sock;
	mqd_t reqq;
	mqd_t repq;
	bool qsock;		/* the queues are a socket pair (rtio_queue.h) */
	uint8_t *shm;
	size_t shm_size;
	uint64_t data_off;	/* block 0 in shm: segments lie past it */
	int qos_fd;		/* the QoS flow table (RTIO_FEAT_QOS), -1 = none */
	int watch_fd;		/* aiod's inotify descriptor, polled only (RTIO_FEAT_HIT), -1 = none */
	uint32_t session_id;
	uint32_t block_size;
	uint32_t max_inflight;
	uint32_t max_io;
	uint32_t features;		/* RTIO_FEAT_* both ends understand */
	pid_t owner;
	int timeout_ms;
	bool alive;
	uint64_t seq;
	struct rtio_client_io **slots;	/* max_inflight entries, index = req_id & 0xffff */
	unsigned inflight;
	struct rtio_client_io *queue, *queue_tail;
	unsigned pending;
	unsigned changing;		/* of them, writes and WROTEs (rtio_cl_io_changes()) */
	uint64_t replies;		/* replies handled: progress, for sync waits */
	/* reads the caller made itself (rtio:random = local), not yet told to aiod: LOCAL_READS */
	uint64_t local_reads, local_bytes;
	int64_t local_report_ms;	/* CLOCK_MONOTONIC_COARSE when the last report was queued */
	struct rtio_client_io *starting;	/* being started: finishing it must not call back */
	ssize_t starting_result;
	bool starting_done;
};

/* The low bits of a data request's req_id name its slot, so a reply finds it without a search. */
#define RTIO_SLOT_BITS 16
#define RTIO_SLOT_MASK ((1u << RTIO_SLOT_BITS) - 1)

/*
 * Whether an operation of kind changes file bytes aiod may cache. While one
 * is pending, reads go to aiod: the cache may not reflect it yet, and only
 * aiod's queue orders a read after it.
 */
static inline unsigned rtio_cl_io_changes(enum rtio_io_kind kind)
{
	return kind == RTIO_IO_WRITE || kind == RTIO_IO_WROTE;
}

/* What one asynchronous operation asks for (the public _start functions fill it). */
struct rtio_io_args {
	enum rtio_io_kind kind;
	uint64_t file_id;
	void *buf;			/* READ: filled; WRITE: read only */
	size_t n;
	off_t off;
	bool datasync;			/* FSYNC */
	struct rtio_pinned *pin;	/* PIN: receives the segments */
};

/* ---- rtio_client.c ---- */

int64_t rtio_cl_now_ms(void);
/* The session is unusable from here on; every pending operation fails with err. */
void rtio_cl_kill(struct rtio_client *c, int err);
/*
 * One control round trip on the socket: send req (with send_fds), wait for its
 * reply in rep (with exactly n_recv_fds descriptors unless aiod refused).
 * Returns the reply's result, -ENOTCONN/-ETIMEDOUT (session killed) or
 * -EPROTO (reply does not match: session killed).
 */
int rtio_cl_control(struct rtio_client *c, void *req, size_t req_len, const int *send_fds,
		    unsigned n_send_fds, union rtio_msg *rep, int *recv_fds, unsigned n_recv_fds);

/* ---- rtio_client_io.c ---- */

/*
 * Queue a message that has no reply (HIT, CREDITS, LOCAL_READS) without
 * waiting: 0, -EAGAIN when the queue is full (or the send was interrupted),
 * -ENOTCONN when the queue failed and c was killed.
 */
int rtio_cl_send_oneway(struct rtio_client *c, const void *msg, size_t len);
/* Queue a message on the request queue, waiting (bounded) for room. 0 or -errno (session killed). */
int rtio_cl_send(struct rtio_client *c, const void *msg, size_t len);
/* Tell aiod a READ0/WRITE0 reservation named by token is no longer needed (READ1). */
int rtio_cl_send_release(struct rtio_client *c, uint64_t token);
int rtio_cl_io_start(struct rtio_client *c, const struct rtio_io_args *a, rtio_client_done_fn done,
		     void *private_data, struct rtio_client_io **out);
/* io is done: free it, then run its callback (unless it failed inside its start function). */
void rtio_cl_io_finish(struct rtio_client_io *io, ssize_t result);
/* Send io's next request now, or queue it behind others until a slot is free. */
void rtio_cl_io_enqueue(struct rtio_client_io *io);
int rtio_cl_slot_take(struct rtio_client *c, struct rtio_client_io *io);
void rtio_cl_slot_release(struct rtio_client *c, struct rtio_client_io *io);
/* Start what waits in the queue while slots are free. */
void rtio_cl_kick_queue(struct rtio_client *c);
/* Complete every operation, in a slot or queued, with err. */
void rtio_cl_fail_all(struct rtio_client *c, int err);
/* Drop every callback: the client is being freed under them. */
void rtio_cl_forget_callbacks(struct rtio_client *c);

/* ---- rtio_client_reply.c ---- */

/*
 * Receive and handle replies until the queue is empty, or (sync waits) until
 * *done turns true. 0, or -ENOTCONN when the session died.
 */
int rtio_cl_drain(struct rtio_client *c, const bool *done);

#endif
