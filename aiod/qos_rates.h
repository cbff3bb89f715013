/*
 * Deciding each QoS flow's rate, every tick, centrally: aiod sees every
 * flow of every smbd, so it computes what mClock/dmClock compute with tags
 * (reservation, limit, weight) directly, once per tick, and publishes the
 * result in the flow table (common/rtio_qos.h) where the clients pace
 * themselves. Pure: no I/O, no clock, no globals; the caller owns the array.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Tick, window and burst. The caller observes and decides every tick
 * (100 ms). Demand is measured over the tick just past, so a rate follows a
 * change of load within one or two ticks. A published rate is enforced by
 * GCRA in every client, so the bytes of any 1-second window stay below the
 * rate over that second plus one burst; with rtio_qos's default burst (50 ms
 * at the rate) that is 5 % over, and only after the flow was idle, which is
 * why a rule's burst should stay at or below a twentieth of its limit when
 * a limit must hold within 5 % over 1 s. Ten rate changes a second cost no
 * accuracy: rtio_qos_publish() rescales the queued backlog to the new rate
 * instead of letting it be forgotten or paid at the old one.
 *
 * Policy. Not saturated: nobody is slowed that has no limit (rate 0 =
 * unlimited), a limited flow gets its limit. Saturated: the capacity left
 * by admitted streams is water-filled: reservations first (as far as each
 * active flow wants them), then every flow by weight (best effort: 100)
 * up to what it wants, then anything still left to the flows that were
 * paced, by weight up to their limit (work conserving). Best effort gives
 * way first because it has no reservation. An idle flow takes no share; it is published the rate
 * it would get if it joined now, so it can start without waiting a tick.
 */
#ifndef AIOD_QOS_RATES_H
#define AIOD_QOS_RATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtio_qos.h"

/* What a flow without a rule weighs; rules say theirs relative to it. */
#define AIOD_QOS_DEFAULT_WEIGHT 100u
/*
 * Room above a flow's measured rate: a paced flow can never show more
 * demand than its rate, so each tick lets it try a quarter more. 25 % per
 * 100 ms tick finds a 10x larger demand within a second (1.25^10 = 9.3),
 * and costs at most a quarter of the flow's rate left unused for a tick.
 */
#define AIOD_QOS_HEADROOM_PCT 25u
/* ...and at least this much, so a flow that barely moved can grow at all. */
#define AIOD_QOS_MIN_STEP_Bps (1024u * 1024u)
/*
 * A flow that charged nothing in a tick keeps its last demand for this many
 * ticks before it counts as idle: its readers may be waiting for the device
 * (a greedy reader charges its next read only when the last one completed),
 * and taking a silent tick for "wants nothing" paced it down to the minimum
 * rate, from which it grew back by a quarter a tick while the others took
 * its share (on the emulated disk four best-effort readers got nothing for
 * 2-3 s next to a reserved reader, and needed more than a second to recover
 * when it stopped).
 */
#define AIOD_QOS_QUIET_TICKS 3u
/* No published rate is lower (0 would mean unlimited): every flow keeps moving. */
#define AIOD_QOS_MIN_RATE_Bps (1024u * 1024u)

/* The device at this tick, as the caller sees it. */
struct aiod_qos_device {
	uint64_t capacity_Bps;	/* what it sustains (profile or configured); 0 = unknown */
	uint64_t streams_Bps;	/* reserved by admitted streams and recorders */
	bool saturated;		/* the EDF queue's slack says the device is the bottleneck */
};

struct aiod_qos_flow_state {
	/* the flow's rule, copied by the caller; 0 = none */
	uint64_t limit_Bps;	/* reads and writes together */
	uint64_t limit_read_Bps;
	uint64_t limit_write_Bps;
	uint64_t limit_iops;
	uint64_t reserve_Bps;
	uint64_t burst_bytes;	/* 0: rtio_qos's default */
	uint32_t weight;	/* 0: AIOD_QOS_DEFAULT_WEIGHT */
	bool best_effort;	/* no rule matched: no reservation, weight 100 */

	/* measured by aiod_qos_observe() (or set by the caller) */
	uint64_t demand_Bps;	/* bytes charged per second over the last tick */
	bool wants_more;	/* some of its requests waited on pacing in the tick */
	unsigned quiet;		/* ticks in a row it charged nothing (AIOD_QOS_QUIET_TICKS) */
	struct rtio_qos_counters seen;	/* the slot's counters at the last observe */
	uint64_t seen_ns;	/* when; 0 = never observed */

	/* aiod_qos_decide()'s working values, kept for aiodctl qos */
	uint64_t want_Bps;
	uint64_t given_Bps;

	/* aiod_qos_decide()'s result: what to rtio_qos_publish() */
	struct rtio_qos_rates out;
};

/* Read slot f's counters at now_ns and derive s's demand and wants_more since the last call. */
void aiod_qos_observe(struct aiod_qos_flow_state *s, const struct rtio_qos_flow *f,
		      uint64_t now_ns);

/* The device at one tick instant, for aiod_qos_device_busy(). */
struct aiod_qos_device_seen {
	uint32_t queued;	/* requests waiting for a device slot in aiod's engine */
	uint32_t inflight;	/* requests in the kernel */
	uint64_t streams_Bps;	/* reserved by admitted streams and recorders */
};

/*
 * Whether the flows (observed this tick) contend for a busy device at this
 * instant; the caller calls the device saturated when it was busy in most
 * of the last few ticks. Busy: requests wait in aiod's queue, or, once
 * shares pace the flows, the device works while some flow's requests wait
 * in its clients on a rate its share set (not on its own limit): pacing
 * moved the queue out of aiod, the device is still the bottleneck. Counting
 * only aiod's queue, the queue emptied because pacing worked, the next tick
 * lifted every share, and a reserved reader's read-ahead took the whole
 * device until the queue filled again (four best-effort readers got
 * nothing for 2 s while it read 100+ MiB/s). Never busy for one flow alone
 * with no stream to leave room for: it has nobody to share with, and
 * pacing it to the configured capacity only wastes what the device does
 * beyond it.
 */
bool aiod_qos_device_busy(const struct aiod_qos_device_seen *seen,
			  const struct aiod_qos_flow_state *flows, size_t n);

/* Decide every flow's out rates for this tick. */
void aiod_qos_decide(const struct aiod_qos_device *dev, struct aiod_qos_flow_state *flows,
		     size_t n);

#endif
