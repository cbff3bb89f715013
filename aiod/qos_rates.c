/*
 * Deciding each QoS flow's rate: see qos_rates.h.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "qos_rates.h"

#define NS_PER_S 1000000000ull

static uint64_t qr_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t qr_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* A counter that went backwards was cleared (the slot was reassigned): all of it is new. */
static uint64_t qr_delta(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : now;
}

void aiod_qos_observe(struct aiod_qos_flow_state *s, const struct rtio_qos_flow *f,
		      uint64_t now_ns)
{
	struct rtio_qos_counters c;

	rtio_qos_read_counters(f, &c);
	if (s->seen_ns != 0 && now_ns > s->seen_ns) {
		uint64_t bytes = qr_delta(c.bytes_read, s->seen.bytes_read) +
				 qr_delta(c.bytes_written, s->seen.bytes_written);

		/* waiting: a slot reassigned under a late wait_done may read as negative */
		s->wants_more = qr_delta(c.paced, s->seen.paced) > 0 || (int64_t)c.waiting > 0;
		s->quiet = bytes == 0 && !s->wants_more ? s->quiet + 1 : 0;
		if (s->quiet == 0 || s->quiet > AIOD_QOS_QUIET_TICKS) {
			s->demand_Bps = (uint64_t)((unsigned __int128)bytes * NS_PER_S /
						   (now_ns - s->seen_ns));
		}
	}
	s->seen = c;
	s->seen_ns = now_ns;
}

static uint32_t qr_weight(const struct aiod_qos_flow_state *s)
{
	return s->weight != 0 ? s->weight : AIOD_QOS_DEFAULT_WEIGHT;
}

/* The most a flow may ever get; UINT64_MAX when nothing limits its total. */
static uint64_t qr_cap(const struct aiod_qos_flow_state *s)
{
	if (s->limit_Bps != 0) {
		return s->limit_Bps;
	}
	if (s->limit_read_Bps != 0 && s->limit_write_Bps != 0) {
		return s->limit_read_Bps + s->limit_write_Bps;
	}
	return UINT64_MAX;
}

static bool qr_active(const struct aiod_qos_flow_state *s)
{
	return s->demand_Bps > 0 || s->wants_more;
}

/*
 * What an active flow asks for this tick: its measured rate plus headroom.
 * A flow that pacing held wanted at least the rate it was paced at, even
 * when fewer bytes were charged: its readers charge their next request
 * only when the last completed, so a tick of waiting for the device (or a
 * wait decided at an older, lower rate) measures less than the rate, and
 * taking that for its demand paced it lower still, down to the minimum
 * (best effort next to a reserved reader went from 13 MiB/s to 1 in a
 * few ticks and got nothing for two seconds).
 */
static uint64_t qr_want(const struct aiod_qos_flow_state *s)
{
	uint64_t base = s->demand_Bps, step;

	if (!qr_active(s)) {
		return 0;
	}
	if (s->wants_more && s->out.rate_Bps > base) {
		base = s->out.rate_Bps;
	}
	step = base / 100 * AIOD_QOS_HEADROOM_PCT;
	return qr_min(qr_cap(s), base + qr_max(step, AIOD_QOS_MIN_STEP_Bps));
}

/*
 * Capacity the flows share. Unknown capacity: a saturated device delivered
 * what the flows measured, so that is what it has. (Taking the smaller of
 * the two when both are known was tried: once best effort was paced down,
 * one reserved sequential reader made the disk faster than its capacity and
 * the others never grew back: 100 MiB/s for it, 10 for four others.)
 */
static uint64_t qr_available(const struct aiod_qos_device *dev,
			     const struct aiod_qos_flow_state *flows, size_t n)
{
	uint64_t measured = 0;

	if (dev->capacity_Bps != 0) {
		return dev->capacity_Bps > dev->streams_Bps ? dev->capacity_Bps - dev->streams_Bps : 0;
	}
	for (size_t i = 0; i < n; i++) {
		measured += flows[i].demand_Bps;
	}
	return measured;
}

/* Reservation stage: a paced flow gets its whole reservation, others what they want of it. */
static uint64_t qr_reserved(const struct aiod_qos_flow_state *s)
{
	uint64_t ask = s->wants_more ? qr_cap(s) : s->want_Bps;

	return qr_active(s) ? qr_min(s->reserve_Bps, ask) : 0;
}

/*
 * Give every active flow its reservation; returns what is left. When the
 * reservations exceed what is available (streams took more, or the device
 * slowed), each gets the same fraction of its own.
 */
static uint64_t qr_give_reserves(struct aiod_qos_flow_state *flows, size_t n, uint64_t avail)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		flows[i].given_Bps = qr_reserved(&flows[i]);
		sum += flows[i].given_Bps;
	}
	if (sum <= avail) {
		return avail - sum;
	}
	for (size_t i = 0; i < n; i++) {
		flows[i].given_Bps = (uint64_t)((unsigned __int128)flows[i].given_Bps * avail / sum);
	}
	return 0;
}

/* One water-filling pass: how far each flow may be filled. */
struct qr_pass {
	bool to_cap;		/* paced flows up to their cap, rather than everyone to its want */
};

static uint64_t qr_target(const struct aiod_qos_flow_state *s, const struct qr_pass *p)
{
	if (!qr_active(s)) {
		return 0;
	}
	if (p->to_cap) {
		return s->wants_more ? qr_cap(s) : 0;
	}
	return s->want_Bps;
}

/* Sum of the weights of the flows of pass p still short of their target. */
static uint64_t qr_hungry_weight(const struct aiod_qos_flow_state *flows, size_t n,
				 const struct qr_pass *p)
{
	uint64_t w = 0;

	for (size_t i = 0; i < n; i++) {
		if (flows[i].given_Bps < qr_target(&flows[i], p)) {
			w += qr_weight(&flows[i]);
		}
	}
	return w;
}

/* One round: every hungry flow gets its weight's part of budget, up to its target. */
static uint64_t qr_fill_round(struct aiod_qos_flow_state *flows, size_t n, uint64_t budget,
			      uint64_t weights, const struct qr_pass *p)
{
	uint64_t spent = 0;

	for (size_t i = 0; i < n; i++) {
		struct aiod_qos_flow_state *s = &flows[i];
		uint64_t target = qr_target(s, p);
		uint64_t part;

		if (s->given_Bps >= target) {
			continue;
		}
		part = (uint64_t)((unsigned __int128)budget * qr_weight(s) / weights);
		part = qr_min(part, target - s->given_Bps);
		s->given_Bps += part;
		spent += part;
	}
	return spent;
}

/*
 * Weighted max-min fair share of budget among the flows of pass p; returns
 * what is left. Each round either fills some flow to its target or spends
 * the budget (up to rounding), so it ends within n + 1 rounds.
 */
static uint64_t qr_fill(struct aiod_qos_flow_state *flows, size_t n, uint64_t budget,
			const struct qr_pass *p)
{
	for (size_t round = 0; round <= n && budget > 0; round++) {
		uint64_t weights = qr_hungry_weight(flows, n, p);
		uint64_t spent;

		if (weights == 0) {
			break;
		}
		spent = qr_fill_round(flows, n, budget, weights, p);
		if (spent == 0) {
			break;
		}
		budget -= spent;
	}
	return budget;
}

/*
 * What is left after the reservations is shared by weight among every flow
 * that wants more, best-effort flows (weight 100) included: first up to what
 * each wants, then the paced ones up to their caps. A rule's reservation is
 * its guarantee, not a claim on everything else: before, rules were filled
 * first and best effort kept a 10 % floor, and on the emulated disk a
 * 30 MiB/s reservation took 85 MiB/s while four other readers shared 9.
 * Best effort is still what gives way first: it has no reservation.
 */
static void qr_share(struct aiod_qos_flow_state *flows, size_t n, uint64_t left)
{
	left = qr_fill(flows, n, left, &(struct qr_pass){ .to_cap = false });
	(void)qr_fill(flows, n, left, &(struct qr_pass){ .to_cap = true });
}

/* Rates that hold whatever the device does: the per-direction and IOPS limits, the burst. */
static void qr_fixed_rates(struct aiod_qos_flow_state *s)
{
	s->out = (struct rtio_qos_rates){
		.rate_Bps = s->limit_Bps,
		.rate_read_Bps = s->limit_read_Bps,
		.rate_write_Bps = s->limit_write_Bps,
		.rate_iops = s->limit_iops,
		.burst_bytes = s->burst_bytes,
	};
}

/* An idle flow's rate: what it would get joining now, or its reservation if more. */
static uint64_t qr_idle_rate(const struct aiod_qos_flow_state *s, uint64_t avail,
			     uint64_t active_weight)
{
	uint64_t w = qr_weight(s);
	uint64_t join = (uint64_t)((unsigned __int128)avail * w / (active_weight + w));

	return qr_max(join, s->reserve_Bps);
}

static void qr_publish_share(struct aiod_qos_flow_state *s, uint64_t avail,
			     uint64_t active_weight)
{
	uint64_t rate = qr_active(s) ? s->given_Bps : qr_idle_rate(s, avail, active_weight);

	qr_fixed_rates(s);
	s->out.rate_Bps = qr_min(qr_max(rate, AIOD_QOS_MIN_RATE_Bps), qr_cap(s));
}

static uint64_t qr_active_weight(const struct aiod_qos_flow_state *flows, size_t n)
{
	uint64_t w = 0;

	for (size_t i = 0; i < n; i++) {
		w += qr_active(&flows[i]) ? qr_weight(&flows[i]) : 0;
	}
	return w;
}

/* Requests of s wait on a rate its share set, not on its own limit. */
static bool qr_held_by_share(const struct aiod_qos_flow_state *s)
{
	return (int64_t)s->seen.waiting > 0 && s->out.rate_Bps != 0 && s->out.rate_Bps < qr_cap(s);
}

bool aiod_qos_device_busy(const struct aiod_qos_device_seen *seen,
			  const struct aiod_qos_flow_state *flows, size_t n)
{
	size_t active = 0;
	bool held = false;

	for (size_t i = 0; i < n; i++) {
		if (qr_active(&flows[i])) {
			active++;
			held = held || qr_held_by_share(&flows[i]);
		}
	}
	if (active < 2 && seen->streams_Bps == 0) {
		return false;
	}
	return seen->queued > 0 || (seen->inflight > 0 && held);
}

void aiod_qos_decide(const struct aiod_qos_device *dev, struct aiod_qos_flow_state *flows,
		     size_t n)
{
	uint64_t avail, active_weight;

	for (size_t i = 0; i < n; i++) {
		flows[i].want_Bps = qr_want(&flows[i]);
		flows[i].given_Bps = 0;
	}
	if (!dev->saturated) {
		for (size_t i = 0; i < n; i++) {
			qr_fixed_rates(&flows[i]);
		}
		return;
	}
	avail = qr_available(dev, flows, n);
	qr_share(flows, n, qr_give_reserves(flows, n, avail));
	active_weight = qr_active_weight(flows, n);
	for (size_t i = 0; i < n; i++) {
		qr_publish_share(&flows[i], avail, active_weight);
	}
}
