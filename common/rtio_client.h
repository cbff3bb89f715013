/*
 * rtio client library: one aiod session, used by vfs_rtio, the fio engine,
 * aiodctl and the tests.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session is one control socket + a request and a reply message queue + the
 * mapped shared buffer. It is single-threaded: one thread (smbd's main loop,
 * or one fio job) uses a session at a time.
 *
 * Async use: start operations with rtio_client_pread_start() and friends;
 * watch rtio_client_event_fds() for readability and call
 * rtio_client_process() whenever one is readable; completion callbacks run
 * from rtio_client_process() (or from a sync wait, see below), never from
 * the start function.
 *
 * Sync use: rtio_client_pread() etc. block until their own reply arrives
 * (or the timeout passes). While they wait, replies for other pending
 * asynchronous operations are processed too and their callbacks run:
 * callers that cannot take a callback at that point must defer it
 * (vfs_rtio uses tevent_req_defer_callback()).
 *
 * Errors are -errno. -ENOTCONN means the session is dead (aiod died or
 * dropped us); -ETIMEDOUT means aiod answered nothing for the timeout. In
 * both cases the caller does the I/O itself. After -ETIMEDOUT the session is
 * marked dead too: a late reply is never acted upon, and pinned buffers of
 * abandoned requests are released by aiod when the session closes.
 */
#ifndef RTIO_CLIENT_H
#define RTIO_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <talloc.h>

#include "rtio_proto.h"

struct rtio_client;
struct rtio_client_io;

struct rtio_file {
	uint64_t file_id;
	uint64_t dev;
	uint64_t ino;
	uint32_t stream_class;
	uint32_t prebuffer_ms;	/* the class's client buffer, 0 = not a stream (or an older aiod) */
	uint64_t bitrate;
};

/*
 * Connect to aiod at socket_path. name shows in aiod's logs. timeout_ms bounds
 * every wait for aiod (connect, each reply). The session is a talloc child of
 * mem_ctx; talloc_free() closes it (sends DISCONNECT if still alive).
 */
int rtio_client_connect(TALLOC_CTX *mem_ctx, const char *socket_path, const char *name,
			int timeout_ms, struct rtio_client **out);
/*
 * The same, asking only for the RTIO_FEAT_* in features. Without
 * RTIO_FEAT_SHM_WRITE the shared region is mapped read-only and
 * rtio_client_pwrite*() fail with -EPERM (use WROTE instead).
 */
int rtio_client_connect_features(TALLOC_CTX *mem_ctx, const char *socket_path, const char *name,
				 int timeout_ms, uint32_t features, struct rtio_client **out);

/*
 * A connection for the monitoring calls only (rtio_client_stats(),
 * _file_stats(), _session_stats(), _info()):
 * no CONNECT, so no queues and no shared region. aiod accepts a few of these
 * beyond [global] max_sessions, so monitoring works when the sessions are
 * exhausted. Other calls fail (aiod closes a connection that asks for more).
 */
int rtio_client_monitor_connect(TALLOC_CTX *mem_ctx, const char *socket_path, int timeout_ms,
				struct rtio_client **out);

/* True until aiod died, timed out or broke protocol. */
bool rtio_client_alive(const struct rtio_client *c);
/*
 * Per-call timeout from now on (connect used its own argument): a call fails
 * with -ETIMEDOUT when aiod made no progress for this long.
 */
void rtio_client_set_timeout(struct rtio_client *c, int timeout_ms);
/* The pid that connected (a fork()ed child must not use its parent's session). */
pid_t rtio_client_owner(const struct rtio_client *c);
uint32_t rtio_client_session_id(const struct rtio_client *c);
/*
 * The QoS flow table aiod passed at CONNECT (rtio_qos.h), -1 if none: map it
 * read-write with its own mmap (the mapping outlives the session, so the
 * last published rates stay in force when aiod goes). Owned by the client.
 */
int rtio_client_qos_fd(const struct rtio_client *c);

/*
 * QOS_BIND (rtio_proto.h): the flow whose slot paces I/O of this principal
 * (file NULL: the tree connect's) and the flags; -errno on failure.
 */
int rtio_client_qos_bind(struct rtio_client *c, const struct rtio_qos_bind_req *who,
			 struct rtio_qos_bind_rep *out);
/*
 * QOS_POLICY: the rule the principal who (and its file, if named) falls
 * under and that rule's configured values; -EOPNOTSUPP, without asking,
 * when aiod did not grant RTIO_FEAT_QOS_POLICY (an older aiod).
 */
int rtio_client_qos_policy(struct rtio_client *c, const struct rtio_qos_bind_req *who,
			   struct rtio_qos_policy_rep *out);
/* QOS_LIST: the index-th flow in use; -ENOENT past the last. */
int rtio_client_qos_list(struct rtio_client *c, uint32_t index, struct rtio_qos_list_rep *out);

/* Whether aiod gave this session a socket pair instead of message queues (rtio_queue.h). */
bool rtio_client_uses_socket_queue(const struct rtio_client *c);
uint32_t rtio_client_block_size(const struct rtio_client *c);

/* Control operations (synchronous, over the socket). */
int rtio_client_open(struct rtio_client *c, int fd, const char *name, uint32_t flags,
		     struct rtio_file *out);
int rtio_client_close(struct rtio_client *c, uint64_t file_id);
int rtio_client_ftruncate(struct rtio_client *c, uint64_t file_id, uint64_t length);
int rtio_client_unlink(struct rtio_client *c, uint64_t dev, uint64_t ino);
/* Bytes [offset, offset + length) changed without aiod (length 0: to EOF): drop them. */
int rtio_client_invalidate(struct rtio_client *c, uint64_t file_id, uint64_t offset,
			   uint64_t length);
int rtio_client_stats(struct rtio_client *c, struct rtio_stats_rep *out);
/*
 * As rtio_client_stats(); *len is how many bytes of *out aiod sent: less
 * than sizeof(*out) from an older aiod (the rest of *out is zero), so a
 * counter is aiod's when its offset + 8 <= *len.
 */
int rtio_client_stats_len(struct rtio_client *c, struct rtio_stats_rep *out, size_t *len);
/* The index-th file aiod knows (0, 1, ...); -ENOENT past the last. */
int rtio_client_file_stats(struct rtio_client *c, uint32_t index, struct rtio_file_stats_rep *out);
/* The index-th connected session (0, 1, ...); -ENOENT past the last. */
int rtio_client_session_stats(struct rtio_client *c, uint32_t index,
			      struct rtio_session_stats_rep *out);
/* aiod's version and uptime, and its index-th stream class (zeroed past the last). */
int rtio_client_info(struct rtio_client *c, uint32_t index, struct rtio_info_rep *out);

/* Synchronous data operations. Return bytes (may be short only at EOF for reads) or -errno. */
ssize_t rtio_client_pread(struct rtio_client *c, uint64_t file_id, void *buf, size_t n, off_t off);
ssize_t rtio_client_pwrite(struct rtio_client *c, uint64_t file_id, const void *buf, size_t n,
			   off_t off);
int rtio_client_fsync(struct rtio_client *c, uint64_t file_id, bool datasync);
int rtio_client_wrote(struct rtio_client *c, uint64_t file_id, size_t n, off_t off);

/*
 * Tell aiod the SMB2 connection's credit state (rtio_credits_req; no reply),
 * for aiodctl sessions. 0, or -ENOTSUP when aiod lacks RTIO_FEAT_CREDITS,
 * -EAGAIN when the request queue is full (the report is dropped: the next
 * one says the same and newer). Never blocks.
 */
int rtio_client_report_credits(struct rtio_client *c, uint32_t granted, uint32_t max,
			       uint32_t orig, uint32_t wanted, uint32_t held);

/*
 * The caller made a read itself that rtio_client_read_yourself() gave it,
 * and it returned bytes (count only reads that succeeded). Counted here and
 * told to aiod (LOCAL_READS, no reply) at most once a second, when a count
 * finds a second passed since the last report, so aiodctl stats shows these
 * reads too. 0; -ENOTSUP (not counted) when aiod lacks RTIO_FEAT_LOCAL_READS
 * or the session is dead; -EAGAIN when the report was due and the request
 * queue was full (the counts stay for the next try); -ENOTCONN when sending
 * killed the session. Never blocks.
 */
int rtio_client_count_local_read(struct rtio_client *c, size_t bytes);
/*
 * Report what rtio_client_count_local_read() counted and aiod was not told
 * yet, now: when the session ends cleanly, before it is freed (aiod reads
 * its queue before it takes DISCONNECT). 0 (also when there was nothing),
 * -ENOTSUP, -EAGAIN (kept), -ENOTCONN as above. Never blocks.
 */
int rtio_client_report_local_reads(struct rtio_client *c);

/*
 * A read served from aiod's cache without asking aiod: n when every byte of
 * [off, off + n) of f was in the cache and is now in buf (aiod is told
 * afterwards, without a reply), 0 when not, or when the request queue had
 * no room to tell aiod (buf holds garbage: use rtio_client_pread*()). Never blocks. 0 as well while a write or WROTE of
 * this session is pending, or when aiod lacks RTIO_FEAT_HIT.
 */
ssize_t rtio_client_read_cached(struct rtio_client *c, const struct rtio_file *f, void *buf,
				size_t n, off_t off);

/*
 * Whether nothing on the device is owed a rate now (no admitted stream or
 * recorder, no QoS reservation: rtio_shm_header.random_local), so a read
 * the caller makes itself cannot cost anybody a deadline.
 */
bool rtio_client_nothing_owed(const struct rtio_client *c);

/*
 * Whether a random reader's cache miss may be read by the caller itself:
 * nothing is owed a rate, or aiod says the device is too fast for such a
 * read to make an owed rate late (rtio_shm_header.random_direct).
 */
bool rtio_client_random_direct(const struct rtio_client *c);

/*
 * Whether aiod's cache holds every byte of [off, off + n) of f now, as its
 * directory in the shared region shows (advice: a block may go the next
 * moment). Also true when the client cannot tell (aiod away, an aiod
 * without the directory): the caller then asks aiod, as it would anyway.
 */
bool rtio_client_may_hold(const struct rtio_client *c, const struct rtio_file *f, off_t off,
			  size_t n);

/*
 * Whether the kernel's page cache holds every page of [off, off + len) of
 * fd (cachestat(2)): 1 yes, 0 no, -errno when it cannot tell (-ENOSYS
 * before Linux 6.5, -EINVAL for len 0, -EPERM unless the caller owns the
 * file, may write it or is root). Pages past the end of the file are
 * never cached: clip len to the file first. rtio_client_pagecache.c says
 * why the sendfile path asks.
 */
int rtio_page_cached(int fd, uint64_t off, uint64_t len);

/*
 * Where the reader of one open file is: the caller keeps one per open,
 * zeroed at open (a first read at offset 0 then continues it), and moves it
 * with rtio_client_read_continues() on every read of the open.
 */
struct rtio_read_pos {
	uint64_t end;	/* where the previous read ended */
	bool jumped;	/* the previous read did not continue the one before it */
};

/*
 * The caller reads [off, off + n) of the open pos follows: whether the read
 * continues a sequential reader, which aiod reads ahead for. It does when it
 * starts within two blocks (or two reads) of where the previous read ended,
 * which leaves room for requests that arrive a little out of order, and the
 * previous read did too. One near read after a jump is not enough: a random
 * reader's next read lands that near now and then, and aiod, sent it, read
 * ahead for it (bench/mixed, 64 KiB random reads of a 4 GiB file: 0.3-0.4 %
 * of the reads reached aiod as misses, the device read 5 % more than asked,
 * 0.90x direct io_uring's IOPS; with the rule a fifth as many misses). A
 * reader that seeks and plays on makes its first two reads after the seek
 * itself, then aiod reads ahead. Moves pos; never blocks.
 */
bool rtio_client_read_continues(const struct rtio_client *c, struct rtio_read_pos *pos, off_t off,
				size_t n);

/*
 * Whether the caller should read [off, off + n) of f from the file itself
 * (its own descriptor, through the page cache) instead of asking aiod: a
 * random read (continues is what rtio_client_read_continues() said of it)
 * of a file of file_size bytes too large for aiod to cache for a random
 * reader (over an eighth of the cache: aiod would read the same bytes into a
 * private buffer, aiod_passthrough_wanted()), not a stream, while aiod says
 * nothing on the device is owed a rate or the device is too fast for it to
 * matter (rtio_client_random_direct()).
 * The file always holds every acknowledged write, so the read is as
 * coherent as aiod's; it saves the round trip and keeps the page cache a
 * plain share would have. Ask after rtio_client_read_cached() missed.
 */
bool rtio_client_read_yourself(const struct rtio_client *c, const struct rtio_file *f,
			       uint64_t file_size, bool continues, off_t off, size_t n);
/*
 * How long ago aiod's event loop last beat (rtio_shm_header.heartbeat_ns),
 * in ms; -1 when unknown (no region, or an aiod without a heartbeat). A
 * request that waits while this stays small waits behind the device's work,
 * not on a hung aiod.
 */
int64_t rtio_client_aiod_silent_ms(const struct rtio_client *c);

/*
 * Read without copying: on success p describes up to n bytes at off, pinned
 * in the shared buffer (rtio_client_shm() maps the segments), until
 * rtio_client_release(). n must not exceed rtio_client_max_io(). For sendfile
 * straight from the cache. Returns bytes (short only at EOF) or -errno.
 */
struct rtio_pinned {
	uint64_t token;
	uint32_t nseg;
	struct rtio_seg seg[RTIO_MAX_SEGS];
};
ssize_t rtio_client_read_pinned(struct rtio_client *c, uint64_t file_id, size_t n, off_t off,
				struct rtio_pinned *p);
void rtio_client_release(struct rtio_client *c, const struct rtio_pinned *p);
uint32_t rtio_client_max_io(const struct rtio_client *c);
/* Requests a session keeps outstanding; more wait in the library. */
uint32_t rtio_client_max_inflight(const struct rtio_client *c);
/* Whether aiod negotiated RTIO_FEAT_x at CONNECT. */
bool rtio_client_has_feature(const struct rtio_client *c, uint32_t feature);

/*
 * Asynchronous data operations. On success (0) *out is a handle owned by the
 * client; done(result, private_data) runs exactly once later, with bytes
 * transferred or -errno, after which the handle is gone. On failure (-errno,
 * e.g. -ENOTCONN when the session died while starting) done never runs. buf
 * must stay valid until done runs or until rtio_client_io_cancel() returned.
 */
typedef void (*rtio_client_done_fn)(ssize_t result, void *private_data);

int rtio_client_pread_start(struct rtio_client *c, uint64_t file_id, void *buf, size_t n,
			    off_t off, rtio_client_done_fn done, void *private_data,
			    struct rtio_client_io **out);
int rtio_client_pwrite_start(struct rtio_client *c, uint64_t file_id, const void *buf, size_t n,
			     off_t off, rtio_client_done_fn done, void *private_data,
			     struct rtio_client_io **out);
int rtio_client_fsync_start(struct rtio_client *c, uint64_t file_id, bool datasync,
			    rtio_client_done_fn done, void *private_data,
			    struct rtio_client_io **out);
/*
 * The caller wrote n bytes at off through its own descriptor (RTIO_OP_WROTE):
 * done(0) once aiod dropped its cached copy of the range and scheduled the
 * write-back; readers through aiod see the new bytes from then on.
 * -EOPNOTSUPP when aiod predates RTIO_FEAT_WROTE.
 */
int rtio_client_wrote_start(struct rtio_client *c, uint64_t file_id, size_t n, off_t off,
			    rtio_client_done_fn done, void *private_data,
			    struct rtio_client_io **out);

/*
 * Forget an operation whose caller gave up (timeout, caller freed): its
 * callback will not run and its buffer is no longer touched. A write that was
 * already committed may still reach the file.
 */
void rtio_client_io_cancel(struct rtio_client_io *io);

/*
 * Descriptors to watch for readability: [0] the reply queue, [1] the control
 * socket (readable = aiod went away). Both -1 once the session is dead.
 */
void rtio_client_event_fds(const struct rtio_client *c, int fds[2]);

/*
 * Handle whatever arrived, without blocking; run callbacks. Returns 0, or
 * -ENOTCONN when the session died (every pending operation then completed
 * with -ENOTCONN).
 */
int rtio_client_process(struct rtio_client *c);

/*
 * Give up on the session (a caller's own timeout fired): every pending
 * operation completes with -ETIMEDOUT, aiod sees the socket close and drops
 * whatever of this session it has not started yet.
 */
void rtio_client_abort(struct rtio_client *c);

/*
 * Pointer to len bytes at off in the shared buffer, NULL when out of range
 * (for sendfile straight from the cache).
 */
const void *rtio_client_shm(const struct rtio_client *c, uint64_t off, size_t len);

/* Operations started but not completed. */
unsigned rtio_client_pending(const struct rtio_client *c);

#endif
