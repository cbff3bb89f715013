/*
 * Stream classes, the I/O pattern analyzer and deadlines (paper 3.1.3.2.6).
 *
 * A file whose share-relative name matches a [stream.NAME] class is played
 * at that class's bitrate: its reads are due when playback reaches them, so
 * read-ahead blocks get deadlines spread along the playback timeline and the
 * engine serves them earliest-deadline-first. Other files are best effort:
 * sequential readers still get read-ahead, due best_effort_deadline_ms after
 * they were asked for (sooner next to admitted streams: best effort's share,
 * besteffort.c), so streams due sooner go first but nobody starves.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fnmatch.h>
#include <string.h>

#include "aiod.h"
#include "log.h"
#include "qos.h"
#include "streams.h"

void aiod_stream_classify(struct aiod_ctx *ctx, struct aiod_open *o)
{
	const char *base = strrchr(o->name, '/');

	base = base != NULL ? base + 1 : o->name;
	for (unsigned i = 0; i < ctx->cfg->n_classes; i++) {
		const struct aiod_stream_class *sc = &ctx->cfg->classes[i];

		if (fnmatch(sc->match, o->name, 0) == 0 || fnmatch(sc->match, base, 0) == 0) {
			o->file->sclass = sc;
			AIOD_INFO("%s: stream class %s, %llu bit/s", o->name, sc->name,
				  (unsigned long long)sc->bitrate);
			return;
		}
	}
	o->file->sclass = NULL;
}

/*
 * How far ahead of a stream's reader aiod reads. The target is the class's
 * prebuffer window plus one second of margin; beyond it, while the cache has
 * room, up to four times that. The extra lead is what makes read-ahead work
 * conserving: requests for it are queued early with deadlines far out, so the
 * device, which never idles while anything is queued, serves them whenever no
 * earlier deadline is waiting. Streams that started together then drift out
 * of phase (each refill has the time of a whole round of refills before it is
 * due), a stream that fell behind asks for its whole gap at once with early
 * deadlines and catches up, and a disk that is not busy fills everybody's
 * lead. The cache share keeps every stream's lead, together, inside half the
 * cache, so one stream's read-ahead never evicts another's.
 */
/* Blocks of (prebuffer + 1 s) at bps: a stream's class target. */
static uint64_t stream_target_blocks(const struct aiod_ctx *ctx, uint64_t bps,
				     uint32_t prebuffer_ms)
{
	uint64_t bytes = bps / 8 * (prebuffer_ms + 1000) / 1000;

	return (bytes + ctx->cache->block_size - 1) / ctx->cache->block_size;
}

static uint32_t stream_window_blocks(const struct aiod_ctx *ctx, uint64_t bps, uint32_t prebuffer_ms)
{
	uint64_t blocks = stream_target_blocks(ctx, bps, prebuffer_ms);
	uint64_t share = (ctx->cache->nblocks > 16 ? ctx->cache->nblocks - 16 : 0) /
			 (2 * ((uint64_t)ctx->streams + 1));

	if (blocks < 1) {
		blocks = 1;
	}
	if (share > 4 * blocks) {
		share = 4 * blocks;
	}
	if (share > blocks) {
		blocks = share;
	}
	/* Never let one stream take more than an eighth of the cache. */
	if (blocks > ctx->cache->nblocks / 8) {
		blocks = ctx->cache->nblocks / 8 > 0 ? ctx->cache->nblocks / 8 : 1;
	}
	return (uint32_t)blocks;
}

/* Blocks of o's class target (prebuffer + 1 s): the head of the file a replay starts from. */
uint32_t aiod_stream_head_blocks(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	return (uint32_t)stream_target_blocks(ctx, o->rate_bps, aiod_stream_prebuffer_ms(o));
}

bool aiod_stream_played(const struct aiod_ctx *ctx, const struct aiod_open *o, uint64_t blkno,
			uint64_t end)
{
	uint64_t bs = ctx->cache->block_size;

	return o->rate_bps > 0 && blkno >= aiod_stream_head_blocks(ctx, o) &&
	       (blkno + 1) * bs <= end;
}

/*
 * Read-ahead of a best-effort sequential reader. A large window (in several
 * requests at once) is what a bulk reader wants from an SSD or a virtual
 * disk; while streams are open it shrinks, because the bulk reader's request
 * size is min(window, io_size) and a request the disk has started cannot be
 * overtaken by a stream read that falls due meanwhile.
 */
uint32_t aiod_stream_best_effort_blocks(const struct aiod_ctx *ctx)
{
	uint32_t n = ctx->streams > 0 ? ctx->cfg->readahead_blocks_streams
				      : ctx->cfg->readahead_blocks;

	/* Several bulk readers must not evict each other's read-ahead before it is used. */
	if (n > ctx->cache->nblocks / 8) {
		n = ctx->cache->nblocks / 8 > 0 ? ctx->cache->nblocks / 8 : 1;
	}
	return n;
}

/*
 * A best-effort reader's window n, bounded by its QoS flow's read limit to
 * one second at that limit. The module charges a flow for what its clients
 * read, not for what aiod reads ahead for them: unbounded, a reader limited
 * to 16 MiB/s had the whole window (64 MiB by default) read for it in one
 * burst of device time that no share accounted, while the readers sharing
 * the device waited. Bounded, what aiod reads for a limited flow over any
 * stretch is what its clients are charged plus one second at its limit (or
 * two read-ahead requests, if more), and a reader going at its limit still
 * finds its next second read. Two requests at least: a window of one is
 * refilled only once the reader has used it all (readahead.c refills whole
 * requests), and then the reader waits for the device every time.
 */
static uint32_t stream_limited_blocks(const struct aiod_ctx *ctx, const struct aiod_open *o,
				      uint32_t n)
{
	uint64_t limit = aiod_qos_slot_read_limit(ctx, o->qos_slot);
	uint64_t bs = ctx->cache->block_size;
	uint64_t cap = (limit + bs - 1) / bs;
	uint64_t two = 2 * (uint64_t)aiod_stream_io_blocks(ctx);

	if (limit == 0) {
		return n;
	}
	if (cap < two) {
		cap = two;
	}
	return cap < n ? (uint32_t)cap : n;
}

/* When o's timeline (first read, bitrate) has its reader at off. */
static uint64_t stream_on_time(const struct aiod_open *o, uint64_t off)
{
	uint64_t played = off > o->play_off0 ? off - o->play_off0 : 0;

	return o->play_t0_ns + (uint64_t)((unsigned __int128)played * 8000000000ull / o->rate_bps);
}

/*
 * o's timeline starts (again) at off: its first read, a jump, a pause. A
 * stream then fills its client's buffer and its window at once, faster
 * than its rate, and for its prebuffer, a second and a round of refills
 * best effort gives way as if it had no share of the device: the share
 * (aiod_best_effort_due()) counts the streams' rates, not their
 * start-up. Taken during start-up, it cost 8 streams of 100 Mbit/s started
 * together next to a greedy reader a late chunk (0.5 s client buffer).
 */
static void stream_start(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint64_t now)
{
	o->play_t0_ns = now;
	o->play_off0 = off;
	if (o->rate_bps > 0) {
		aiod_best_effort_hold(ctx, now + aiod_stream_window_ns(o) + aiod_stream_round_ns(ctx));
	}
}

/*
 * A reader that asks for off later than its timeline says by more than its
 * prebuffer has paused or rebuffered, not fallen behind: its timeline starts
 * again here, or every later deadline would stay early by the pause.
 */
static void stream_retime(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint64_t now)
{
	if (now > stream_on_time(o, off) + (uint64_t)aiod_stream_prebuffer_ms(o) * 1000000ull) {
		stream_start(ctx, o, off, now);
	}
}

uint32_t aiod_stream_observe(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off, uint32_t len)
{
	uint64_t now = aiod_now_ns();

	if (off == o->next_off && o->seq_hits < UINT32_MAX) {
		o->seq_hits++;
	} else if (off != o->next_off) {
		/* Random access: no read-ahead, restart the timeline and the start-up ramp. */
		o->seq_hits = 0;
		o->ra_next_blk = 0;
		o->ra_size = 0;
		stream_start(ctx, o, off, now);
	}
	if (o->play_t0_ns == 0) {
		stream_start(ctx, o, off, now);
	} else if (o->rate_bps > 0 && off == o->next_off) {
		stream_retime(ctx, o, off, now);
	}
	o->read_off = off;
	o->next_off = off + len;
	o->read_blocks = (uint32_t)(((uint64_t)len + ctx->cache->block_size - 1) / ctx->cache->block_size);
	if (o->file->sclass != NULL && o->rate_bps > 0) {
		/*
		 * A file of a stream class is known to be played: read-ahead
		 * starts with the first read from where playback starts (the
		 * start-up ramp keeps that first request small), not after the
		 * pattern is established.
		 */
		if (o->seq_hits < 1) {
			return 0;
		}
		return stream_window_blocks(ctx, o->rate_bps, o->file->sclass->prebuffer_ms);
	}
	if (o->seq_hits < 2) {
		return 0;
	}
	if (o->rate_bps == 0 && ctx->cfg->auto_stream && o->seq_hits >= 8 &&
	    now - o->play_t0_ns >= 2000000000ull) {
		/* A steady sequential reader: schedule it at the rate it has shown. */
		uint64_t bps = (o->next_off - o->play_off0) * 8ull * 1000000000ull /
			       (now - o->play_t0_ns);
		if (bps > 0 && aiod_admission_admit(ctx, o, bps) == 0 && o->rate_bps > 0) {
			o->auto_stream = true;
			AIOD_INFO("%s: steady sequential reader at %llu bit/s, now a stream", o->name,
				  (unsigned long long)bps);
		}
	}
	if (o->rate_bps > 0) {
		return stream_window_blocks(ctx, o->rate_bps, 1000);
	}
	return stream_limited_blocks(ctx, o, aiod_stream_best_effort_blocks(ctx));
}

/*
 * Past its start-up: read-ahead is running and the client has been reading
 * for longer than its prebuffer. Before that (the first reads, the first
 * after a jump) the client fills its buffer as fast as it can, ahead of
 * playback, and a read that waits for the disk is start-up latency, not a
 * late frame.
 */
bool aiod_stream_playing(const struct aiod_open *o, uint64_t off)
{
	uint32_t prebuffer_ms = aiod_stream_prebuffer_ms(o);

	/* A read elsewhere than where the stream was is a jump: it starts again. */
	return off == o->next_off && o->ra_next_blk != 0 && o->play_t0_ns != 0 &&
	       aiod_now_ns() - o->play_t0_ns >= (uint64_t)prebuffer_ms * 1000000ull;
}

/*
 * Every stream's refill comes due about as often, and the device serves
 * them one at a time: a refill must start no later than a whole round of
 * refills before the reader gets there, or the streams that started
 * together (in phase) queue behind each other and the last is late. The
 * same shift for every stream keeps their order; against best-effort reads
 * (due best_effort_deadline_ms after they are asked for) it gives streams
 * the device while their lead is shorter than one round.
 */
static uint64_t stream_due(const struct aiod_ctx *ctx, uint64_t due)
{
	uint64_t round = aiod_stream_round_ns(ctx);

	return due > round ? due - round : 1;
}

/*
 * The rate (bytes/s) o's reads are due at as a QoS reservation's: its
 * flow's reservation while the flow got less than it (and a margin) over
 * the last second (aiod_qos_slot_behind()); 0 otherwise, and then they
 * queue as best effort. A reserved reader must not queue behind best
 * effort's read-ahead at the device: EDF serves best-effort requests by
 * their age, and greedy readers' read-ahead queued 2 s ago (most of a
 * best-effort deadline of 16 MiB requests) outranked a reserved read made
 * now while that was due a quarter deadline later: the reserved bay of the
 * QoS scenario dipped to 18-22 MiB/s of its 32 for two seconds. Due now,
 * only best-effort reads already past their own deadline go before it.
 */
static uint64_t stream_reserved_Bps(struct aiod_ctx *ctx, const struct aiod_open *o)
{
	return aiod_qos_slot_behind(ctx, o->qos_slot) ? aiod_qos_slot_reserve(ctx, o->qos_slot) : 0;
}

uint64_t aiod_stream_demand_deadline(struct aiod_ctx *ctx, const struct aiod_open *o,
				    uint64_t len)
{
	uint64_t now = aiod_now_ns();

	if (o->rate_bps == 0) {
		/*
		 * Within its reservation the client's read is due now, like a
		 * stream's but without the round of refills streams are moved
		 * ahead by (stream_due()): an admitted stream's read that is due
		 * goes first, then the reservation's, then best effort's.
		 */
		if (stream_reserved_Bps(ctx, o) != 0) {
			return now;
		}
		aiod_best_effort_seen(ctx, len, now);
		if (aiod_admission_nothing_owed(ctx)) {
			return now + (uint64_t)ctx->cfg->be_deadline_ms * 1000000ull;
		}
		/* Next to rates owed: at best effort's share of the device. */
		return aiod_best_effort_due(ctx, len, now);
	}
	/* The client waits for it now, wherever it reads (a jump forward too). */
	return stream_due(ctx, now);
}

/*
 * Best-effort read-ahead at off: due as a read its client waits for, plus
 * a best-effort deadline spread over the read-ahead window by how far off
 * is ahead of the client's latest read (the nearest block one step late,
 * the far end of [readahead] blocks a whole deadline late). Due all at
 * once, the whole window of the reader that asked first (4 requests of
 * 16 MiB on a disk) queued ahead of the next reader's first read: of
 * streams of a file no class names, started together on the emulated
 * disk with a 0.5 s client buffer, only 2 played clean where a plain share
 * played 7 (bench/results/rt-20261127-2100.md). Spread, every reader's
 * next request goes to the device before anybody's far one, as a
 * stream's read-ahead does along its timeline.
 */
static uint64_t stream_best_effort_due(struct aiod_ctx *ctx, const struct aiod_open *o,
				       uint64_t off, uint64_t len)
{
	uint64_t bs = ctx->cache->block_size;
	uint64_t window, ahead;

	/*
	 * Only while nothing is owed a rate (no admitted stream or recorder, no
	 * QoS reservation: random reads are then the client's own too,
	 * aiod_admission_publish()). Otherwise best effort is what gives way,
	 * and its read-ahead stays due as its read: spread, it changed how a
	 * reserved flow that went ahead of its reservation and fell back behind
	 * found its read-ahead (the QoS scenario's reserved bay had late chunks
	 * in 3 of 9 runs, none in 6 before).
	 */
	if (!aiod_admission_nothing_owed(ctx)) {
		return aiod_stream_demand_deadline(ctx, o, len);
	}
	window = ctx->cfg->readahead_blocks > 0 ? ctx->cfg->readahead_blocks : 1;
	ahead = (off > o->next_off ? (off - o->next_off) / bs : 0) + 1;
	if (ahead > window) {
		ahead = window;
	}
	return aiod_stream_demand_deadline(ctx, o, len) +
	       ahead * (uint64_t)ctx->cfg->be_deadline_ms * 1000000ull / window;
}

uint64_t aiod_stream_deadline(struct aiod_ctx *ctx, struct aiod_open *o, uint64_t off,
			      uint64_t len)
{
	uint64_t now = aiod_now_ns();
	uint64_t rate = o->rate_bps;
	uint64_t due;

	if (rate == 0) {
		uint64_t reserved = stream_reserved_Bps(ctx, o);

		if (reserved == 0) {
			return stream_best_effort_due(ctx, o, off, len);
		}
		/* Reserved: due when the reader gets there at its reservation. */
		due = now;
		if (off > o->read_off) {
			due += (uint64_t)((unsigned __int128)(off - o->read_off) * 1000000000ull / reserved);
		}
		return due;
	}
	/*
	 * The client reads about prebuffer ahead of playback, and playback is at
	 * the position it reads now: the read it just made (from read_off) is
	 * wanted now, and data at off once the reader gets there, (off -
	 * read_off) * 8 / rate seconds from now. Counted from next_off instead,
	 * the block after the current read came due as early as the read
	 * itself: streams opened together had their first read-ahead queued
	 * level with the others' first reads, and the last stream's first data
	 * waited for every stream's read-ahead (7 x 54 ms at 100 Mbit/s on the
	 * emulated disk, most of a 0.5 s client buffer).
	 */
	due = now;
	if (off > o->read_off) {
		due += (uint64_t)((unsigned __int128)(off - o->read_off) * 8000000000ull / rate);
	}
	/*
	 * A reader that fell behind its timeline (its data came late) asks
	 * later than it will need the data once it has caught up, and counted
	 * from where it reads, its refills stay due later than the streams
	 * that are on time: it never catches up (4 x 200 + 4 x 50 Mbit/s
	 * started together: the stream opened last among the fast ones had
	 * 0.05 s of lead while a stream 0.44 s ahead was refilled first, and
	 * it went late). Its timeline (first read, bitrate) says when the data
	 * is due; the earlier of the two counts. stream_retime() restarts the
	 * timeline after a pause.
	 */
	if (o->play_t0_ns != 0 && off >= o->play_off0) {
		uint64_t on_time = stream_on_time(o, off);

		due = on_time < due ? on_time : due;
	}
	return stream_due(ctx, due);
}
