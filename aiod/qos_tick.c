/*
 * The QoS tick: every 100 ms, what each flow did (the counters its clients
 * keep in the shared table), whether the device is the bottleneck, each
 * flow's rate (qos_rates.c decides) and its publication to every smbd.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "aiod.h"
#include "clock.h"
#include "engine.h"
#include "qos_private.h"

/*
 * A best-effort principal's flow idle this long gives its slot back (its
 * clients bind again when they next do I/O): principals come and go all day.
 */
#define QOS_IDLE_TICKS (600u * 1000u / AIOD_QOS_TICK_MS)
/*
 * A reserved flow's reads go before best effort's while it got less than
 * its reservation plus this fraction of it over the last second. A reader
 * playing at exactly its reservation moves around it: with the reservation
 * itself as the bound its reads queued behind best effort's read-ahead
 * every time it had just caught up, and its next second came too late (in
 * the QoS scenario, 1-2 s dips of the bay several times a minute). A
 * greedy reserved reader still queues like everybody else beyond it.
 */
#define AIOD_QOS_RESERVE_MARGIN 8u
/* Ticks of device history the saturation test looks at (half a second). */
#define QOS_SAT_TICKS 5u

static void qos_tick(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
		     void *private_data);

void aiod_qos_tick_arm(struct aiod_qos *q)
{
	if (q->tick == NULL && q->in_use > 0) {
		q->tick = tevent_add_timer(q->ctx->ev, q, tevent_timeval_current_ofs(0, AIOD_QOS_TICK_MS * 1000),
					   qos_tick, q);
	}
}

uint64_t aiod_qos_flow_rate(const struct qos_flow *f, unsigned ticks)
{
	unsigned back = ticks < f->hist_n ? ticks : f->hist_n - 1;
	uint64_t now, then;

	if (f->hist_n < 2 || back == 0) {
		return 0;
	}
	now = f->hist[(f->hist_pos + QOS_HIST - 1) % QOS_HIST];
	then = f->hist[(f->hist_pos + QOS_HIST - 1 - back) % QOS_HIST];
	return (now - then) * 1000u / (back * AIOD_QOS_TICK_MS);
}

void aiod_qos_release_slot(struct aiod_qos *q, uint32_t i)
{
	struct rtio_qos_rates none = { 0 };

	(void)rtio_qos_assign(rtio_qos_slot(q->hdr, i), &none);
	q->flows[i].in_use = false;
	q->in_use--;
}

static void qos_observe(struct aiod_qos *q, uint64_t now_ns)
{
	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		struct qos_flow *f = &q->flows[i];

		if (!f->in_use) {
			continue;
		}
		aiod_qos_observe(&f->st, rtio_qos_slot(q->hdr, i), now_ns);
		f->idle_ticks = f->st.demand_Bps > 0 || f->st.seen.waiting > 0 ? 0 : f->idle_ticks + 1;
		if (f->rule < 0 && f->idle_ticks > QOS_IDLE_TICKS) {
			aiod_qos_release_slot(q, i);
			continue;
		}
		f->hist[f->hist_pos] = f->st.seen.bytes_read + f->st.seen.bytes_written;
		f->hist_pos = (f->hist_pos + 1) % QOS_HIST;
		if (f->hist_n < QOS_HIST) {
			f->hist_n++;
		}
		f->behind = f->st.reserve_Bps > 0 &&
			    aiod_qos_flow_rate(f, 1000u / AIOD_QOS_TICK_MS) <
				    f->st.reserve_Bps + f->st.reserve_Bps / AIOD_QOS_RESERVE_MARGIN;
	}
}

/*
 * Whether the device is the bottleneck: busy (qos_rates.h) in most of the
 * last QOS_SAT_TICKS ticks, so one quiet instant does not lift every share.
 */
static bool qos_saturated(struct aiod_qos *q, const struct aiod_qos_flow_state *st, size_t n)
{
	struct aiod_engine_stats es;
	unsigned busy_ticks = 0;
	bool busy;

	aiod_engine_get_stats(q->ctx->engine, &es);
	busy = aiod_qos_device_busy(&(struct aiod_qos_device_seen){ .queued = es.queued,
			.inflight = es.inflight, .streams_Bps = q->ctx->reserved_Bps }, st, n);
	q->sat_bits = ((q->sat_bits << 1) | busy) & ((1u << QOS_SAT_TICKS) - 1);
	for (unsigned b = q->sat_bits; b != 0; b &= b - 1) {
		busy_ticks++;
	}
	return busy_ticks * 2 > QOS_SAT_TICKS;
}

static void qos_publish(struct aiod_qos *q, uint64_t now_ns)
{
	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		struct qos_flow *f = &q->flows[i];

		if (!f->in_use || memcmp(&f->st.out, &f->published, sizeof(f->published)) == 0) {
			continue;
		}
		f->published = f->st.out;
		rtio_qos_publish(rtio_qos_slot(q->hdr, i), &f->published, now_ns);
	}
}

static void qos_decide(struct aiod_qos *q)
{
	struct aiod_qos_flow_state *st = q->scratch;
	uint32_t *map = q->scratch_map;
	struct aiod_qos_device dev = {
		.capacity_Bps = q->ctx->capacity_Bps,
		.streams_Bps = q->ctx->reserved_Bps,
	};
	size_t n = 0;

	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		if (q->flows[i].in_use) {
			map[n] = i;
			st[n++] = q->flows[i].st;
		}
	}
	dev.saturated = qos_saturated(q, st, n);
	aiod_qos_decide(&dev, st, n);
	for (size_t k = 0; k < n; k++) {
		q->flows[map[k]].st = st[k];
	}
}

/*
 * At debug level, each tick with a flow in use: what the device looked
 * like and what every flow was given, the trace that shows why a flow got
 * the rate it got.
 */
static void qos_log_tick(const struct aiod_qos *q)
{
	struct aiod_engine_stats es;
	char line[1024];
	size_t len;

	if (!aiod_log_enabled(AIOD_LOG_DEBUG) || q->in_use == 0) {
		return;
	}
	aiod_engine_get_stats(q->ctx->engine, &es);
	len = (size_t)snprintf(line, sizeof(line), "QoS tick: busy ticks %x, queued %u, in flight %u",
			       q->sat_bits, es.queued, es.inflight);
	for (uint32_t i = 0; i < AIOD_QOS_SLOTS && len < sizeof(line); i++) {
		const struct qos_flow *f = &q->flows[i];

		if (f->in_use) {
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						"; %s: demand %" PRIu64 " KiB/s, waiting %" PRId64 ", rate %" PRIu64 " KiB/s",
						f->key, f->st.demand_Bps >> 10, (int64_t)f->st.seen.waiting,
						f->st.out.rate_Bps >> 10);
		}
	}
	AIOD_DEBUG("%s", line);
}

static void qos_tick(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
		     void *private_data)
{
	struct aiod_qos *q = private_data;
	uint64_t now_ns = aiod_now_ns();

	(void)ev;
	(void)te;
	(void)now;
	q->tick = NULL;
	qos_observe(q, now_ns);
	qos_decide(q);
	qos_publish(q, now_ns);
	qos_log_tick(q);
	aiod_qos_tick_arm(q);
}
