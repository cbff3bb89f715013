/*
 * aiod's shared types: the daemon context, files and opens, leases. Each
 * responsibility lives in its own file, in layers whose calls only go down
 * (lowest first here; scripts/layers.txt, docs/architecture.md):
 *
 *   clock.h, log.c, config.c   time, logging, aiod.ini
 *   profile.c   the device profile aiod --calibrate writes
 *   startup_plan.c  aiod's read-ahead played forward on the profile's device (pure)
 *   tuning.c    io_size, queue_depth, best-effort deadline derived from it
 *   cache.c     block bookkeeping (pure)
 *   cache_dir.c the cache's index in the region, for clients copying hits themselves
 *   edf.c       the earliest-deadline-first queue of device requests (pure)
 *   engine.c    io_uring behind the EDF queue (the only user of liburing);
 *               engine_pick.c: what goes next; engine_grow.c: a read grown,
 *               cut in pieces or re-keyed at dispatch
 *   region.c    the shared, sealed, locked buffer region
 *   qos_rates.c each QoS flow's rate per tick: reservations, limits, weights (pure)
 *   stream.c    stream classes, the pattern analyzer and deadlines
 *   admission.c reservations against the device's capacity; streams that start together
 *   admission_plan.c the start-up plan for the streams aiod has (admission asks it)
 *   besteffort.c best effort's share of the device while rates are owed
 *   record.c    recorders: writers whose write-back is a stream of its own
 *   files.c     files (dev, ino) and a client's opens
 *   writeback.c write-back runs on the device (what record.c schedules)
 *   watch.c     inotify on every known file: changes by writers aiod is not told about
 *   session.c   transport: socket, queues (queues.c), pidfd; calls up only through
 *               ctx->handlers (session.h)
 *   peer.c      a session's request-layer state; leases.c: its pinned blocks
 *   request.c   data requests: dispatch table, a request's life (dataplane.h);
 *               waitq.c, read.c, passthrough.c, readahead.c, write.c do the work
 *   control.c   control requests (OPEN, CLOSE, FTRUNCATE, UNLINK, STATS)
 *   monitor.c   monitoring replies: sessions (SESSION_STATS), version and classes (INFO)
 *   handlers.c  the table sessions deliver to
 *   listener.c  the control socket: accepting and authenticating clients
 *   calibrate.c aiod --calibrate: measuring the device
 *   main.c      start-up, signals, the event loop
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_H
#define AIOD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <talloc.h>
#include <tevent.h>

#include "cache.h"
#include "clock.h"
#include "config.h"
#include "engine.h"
#include "log.h"
#include "rtio_proto.h"

struct aiod_session;
struct aiod_session_handlers;
struct aiod_req;
struct aiod_watch;
struct aiod_known;
struct aiod_peer;
struct aiod_profile;
struct aiod_wb_twin;
struct aiod_qos;
struct rtio_shm_dirent;

/* The shared region: header page, directory, cache blocks (rtio_shm.h); a memfd for clients. */
struct aiod_region {
	int fd;			/* sealed: no client can shrink or grow it */
	int ro_fd;		/* the same memory, opened read-only: what most clients get */
	uint8_t *base;
	uint64_t size;
	uint8_t *blocks;
	uint64_t data_off;	/* of blocks from base */
	struct rtio_shm_dirent *dir;	/* the cache's index for clients (cache_dir.h) */
	uint32_t *buckets;
	uint32_t hash_mask;
	uint32_t block_size;
	uint32_t nblocks;
	bool locked;
	/* region.c: the heartbeat thread, and the event loop's own beat it checks */
	pthread_t beat_thread;
	bool beat_running;
	uint64_t loop_ns;		/* atomic: the loop's last beat */
	uint32_t beat_stop;		/* atomic: 1 asks the thread to end */
};

/* One file, shared by every session that opened it. */
struct aiod_file {
	struct aiod_file *next;		/* hash chain */
	uint64_t dev, ino;
	uint32_t opens;
	/*
	 * How the file looked when its cached blocks were last known good (the
	 * last OPEN), -1 = nothing to vouch for. Catches what inotify cannot see
	 * (stores through mmap, other hosts of a network filesystem).
	 */
	int64_t mtime_ns, ctime_ns;
	uint64_t size;
	int wd;				/* inotify watch (watch.c), -1 = none */
	struct aiod_file *wnext;	/* watch.c's hash chain */
	bool has_blocks;		/* scratch of the sweep in files.c */
	char *name;			/* share-relative name of the last OPEN, for stats */
	uint64_t known_size;		/* size at the last fstat or write: bounds read-ahead */
	/* Stream state (stream.c). */
	const struct aiod_stream_class *sclass;
	uint64_t deadline_misses;
	uint64_t bytes_read;
	uint64_t reserved_bps;		/* admission.c: sum over its admitted opens */
};

/* One OPEN of one session: the descriptor smbd passed us. */
struct aiod_open {
	struct aiod_open *next;		/* in the session's table */
	uint64_t id;
	int fd;
	int direct_fd;			/* O_DIRECT twin of fd for reads, -1 if none */
	uint32_t read_align;		/* passthrough.c: what a read's offset and length are
					 * rounded to, 0 = not known yet */
	bool readable;
	bool writable;
	bool closing;			/* CLOSE or session end arrived; fd closes when idle */
	uint32_t busy;			/* engine operations using fd */
	struct aiod_file *file;
	char *name;
	/* Stream reservation (admission.c): bits/s this open is scheduled at, 0 = best effort. */
	uint64_t rate_bps;
	bool reserved;			/* rate_bps counts against the device capacity */
	/*
	 * A stream of a class that admission served best effort (demote
	 * mode): in ctx->demoted, oldest first, until a reservation is
	 * released and it fits, or it closes.
	 */
	bool demoted;
	struct aiod_open *demoted_prev, *demoted_next;
	/* Admitted (reserved): in ctx->admitted, what admission's start-up plan plays. */
	struct aiod_open *admitted_prev, *admitted_next;
	uint32_t qos_slot;		/* its client's QoS flow (peer.h), RTIO_QOS_NO_FLOW if none */
	bool auto_stream;		/* promoted by the pattern analyzer */
	/* Pattern analyzer (stream.c). */
	uint64_t next_off;		/* where a sequential reader reads next */
	uint64_t read_off;		/* where its latest read started (wanted now) */
	uint32_t seq_hits;
	uint64_t ra_next_blk;		/* first block not yet read ahead */
	uint32_t read_blocks;		/* blocks the client's last read spanned */
	uint32_t ra_size;		/* start-up ramp: blocks of the next request, 0 = not started */
	bool load_taken;		/* the device has taken one of its loads (aiod_load_grow()) */
	uint64_t rate_t0_ns, rate_bytes;
	uint64_t play_t0_ns, play_off0;	/* stream timeline origin */
	/* Write aggregation (writeback.c): a sequential writer's range not yet pushed to the disk. */
	uint64_t wb_start, wb_end;
	uint64_t wb_queued;		/* bytes of its runs queued or on the device */
	struct aiod_wb_twin *wb_twin;	/* aiod's own description of the file, for waits */
	bool wb_twin_tried;
	bool wb_error_logged;
	/* Recorder analyzer (record.c). */
	bool recorder;			/* counts in ctx->recorders */
	uint32_t wr_seq;		/* writes in a row that continued the previous one */
	uint64_t wr_next;		/* where a sequential writer writes next */
	uint64_t wr_t0_ns, wr_off0;	/* where the current run's rate is measured from */
	uint64_t wr_bps;		/* measured rate of a steady writer, 0 = not known */
	uint64_t wr_due_ns;		/* deadline of its last write-back run */
};

/* The opens of one client (a peer, peer.h): its registered descriptors. */
struct aiod_opens {
	struct aiod_open *head;
	uint64_t next_id;
	uint32_t count;
};

/* Blocks pinned for a client between READ0 and READ1, or WRITE0 and WRITE1. */
struct aiod_lease {
	uint64_t token;			/* 0 = slot free */
	bool write;
	struct aiod_open *open;
	uint64_t off;
	uint32_t len;
	uint32_t nblocks;
	struct aiod_block *blocks[RTIO_MAX_SEGS];
};

struct aiod_stats {
	uint64_t cache_hits, cache_misses;
	uint64_t disk_reads, disk_writes;
	uint64_t bytes_read, bytes_written;
	uint64_t requests, errors, protocol_errors;
	uint64_t deadline_misses;
	uint64_t readahead_blocks;
	uint64_t writebacks;		/* write-back requests queued */
	uint64_t writeback_bytes;	/* of them, bytes the device took */
	uint64_t writeback_late;	/* completed after their deadline */
	uint64_t writes_held;		/* write replies held until the writer's write-back caught up */
	uint64_t writeback_errors;	/* failed (EIO...): the client's fsync reports them */
	uint64_t sessions_total;
	uint64_t outside_changes;	/* files changed by a writer aiod was not told about */
	uint64_t outside_blocks;	/* cached blocks those changes dropped */
	uint64_t disk_read_bytes;	/* bytes the device read: loads and pass-through reads */
	uint64_t passthrough_reads;	/* random reads served without the cache (passthrough.c) */
	uint64_t passthrough_bytes;	/* bytes the device read for them */
	uint64_t hit_reads;		/* reads clients copied from the cache themselves (HIT) */
	uint64_t hit_bytes;
	uint64_t local_reads;		/* reads clients made themselves, as reported (LOCAL_READS) */
	uint64_t local_bytes;
};

struct aiod_ctx {
	struct tevent_context *ev;
	struct aiod_config *cfg;
	const char *config_path;
	struct aiod_region region;
	struct aiod_qos *qos;		/* qos.c: the flow table and its flows */
	struct aiod_cache *cache;
	struct aiod_engine *engine;
	int listen_fd;
	struct tevent_fd *listen_fde;
	struct tevent_timer *listen_backoff;	/* accepting paused: out of descriptors */
	struct aiod_ratelimit accept_log;	/* accept() failing */
	struct aiod_ratelimit refuse_log;	/* clients not allowed to connect */
	struct aiod_ratelimit full_log;		/* clients turned away: max_sessions reached */
	uint32_t nmonitors;			/* STATS-only connections beyond max_sessions */
	struct aiod_ratelimit resource_log;	/* sessions short of descriptors or queues */
	const struct aiod_session_handlers *handlers;	/* handlers.c: where sessions deliver */
	struct aiod_known *known_ended;	/* files of ended sessions, for their process's next one */
	uint32_t nknown_ended;
	struct aiod_session *sessions;
	uint32_t nsessions;
	uint32_t next_session_id;
	struct aiod_file **files;	/* hash on (dev, ino), grows with nfiles */
	uint32_t files_mask;
	uint32_t nfiles;		/* records: open, or with cached blocks (until a sweep) */
	uint32_t nfiles_open;		/* with at least one open */
	uint64_t files_gen;		/* bumped when a record goes: invalidates the cursor */
	struct {			/* FILE_STATS listing position, so a listing is linear */
		uint64_t gen;
		uint32_t index, bucket;
		struct aiod_file *f;
	} files_cursor;
	struct aiod_watch *watch;	/* watch.c */
	struct aiod_req *blocked;	/* waiting for a free cache block, FIFO */
	struct aiod_req *blocked_tail;
	struct tevent_timer *blocked_timer;	/* waitq.c: armed while anything waits */
	struct aiod_req *held;		/* writehold.c: write replies held, oldest first */
	struct tevent_timer *held_timer;	/* armed while any is held */
	/*
	 * The request layer's (main.c sets it, NULL in tests without one):
	 * writeback.c calls it when a run is on the device, so that held
	 * write replies may go. Calls go down the layers; this is the one way
	 * back up from write-back.
	 */
	void (*written_back)(struct aiod_ctx *ctx);
	uint32_t mq_msg_max;		/* queue depth limit, 0 = none (CAP_SYS_RESOURCE) */
	uint32_t nsessions_socketq;	/* sessions on a socket pair: out of message queues */
	struct aiod_ratelimit socketq_log;	/* sessions falling back to a socket pair */
	bool retrying_blocked;
	uint64_t next_token_gen;
	struct aiod_stats st;
	/* Admission control (admission.c). */
	struct aiod_profile *profile;	/* the device profile (profile.h), NULL = none */
	uint64_t capacity_Bps;		/* stream data the device sustains, 0 = unknown */
	uint64_t reserved_Bps;		/* sum of admitted streams */
	uint32_t streams;		/* admitted stream opens */
	uint32_t recorders;		/* opens record.c found to be recorders */
	uint64_t admission_refused, admission_demoted;
	struct aiod_open *demoted, *demoted_last;	/* demoted class streams, oldest first */
	struct aiod_open *admitted;		/* opens holding a reservation, newest first */
	/* What admitted streams still have to fill of their windows (admission.c), as of when. */
	uint64_t startup_debt, startup_at_ns;
	struct tevent_timer *promote_timer;	/* admits demoted streams once others started */
	uint64_t be_clock_ns;		/* best effort's virtual clock (besteffort.c) */
	uint64_t be_hold_ns;		/* until then best effort has no share: streams start */
	uint64_t be_burst_ns, be_burst_due;	/* the last claim on the clock: when, due when */
	/* Best effort that took the device lately: last seen when, its largest request (bytes). */
	uint64_t be_seen_ns, be_seen_len;
	/* When aiod began to listen (listener.c), for INFO's uptime. */
	uint64_t start_ns;		/* aiod_now_ns() */
	uint64_t start_time;		/* seconds since the epoch */
	bool stopping;
};

/* Each module's functions are declared in its own header: region.h,
 * listener.h, files.h (files.c, watch.c),
 * streams.h (stream.c, admission.c, admission_plan.c, besteffort.c),
 * calibrate.h, session.h, peer.h, requests.h (the request layer's entry
 * points), dataplane.h (inside the request layer), handlers.h. */

#endif
