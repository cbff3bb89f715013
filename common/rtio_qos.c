/*
 * The QoS flow table and the pacing primitive: see rtio_qos.h.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rtio_qos.h"

#include <errno.h>
#include <string.h>

#define NS_PER_S 1000000000ull

static uint64_t qos_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void qos_store(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static void qos_add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static uint64_t qos_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* n units at rate units per second in ns, rounded down or up, capped so sums cannot wrap. */
static uint64_t qos_ns(uint64_t n, uint64_t rate, bool round_up)
{
	unsigned __int128 ns = (unsigned __int128)n * NS_PER_S;

	ns = (ns + (round_up ? rate - 1 : 0)) / rate;
	return ns > RTIO_QOS_MAX_WAIT_NS ? RTIO_QOS_MAX_WAIT_NS : (uint64_t)ns;
}

/* A request's cost rounds up and the tolerance down: the rounding never adds bytes. */
static uint64_t qos_cost_ns(uint64_t n, uint64_t rate)
{
	return qos_ns(n, rate, true);
}

/* The GCRA tolerance: the burst as time at the rate, at least one unit's worth. */
static uint64_t qos_tau_ns(uint64_t burst, uint64_t rate)
{
	uint64_t tau = burst != 0 ? qos_ns(burst, rate, false) : RTIO_QOS_DEFAULT_BURST_NS;

	return qos_max(tau, qos_cost_ns(1, rate));
}

static uint64_t qos_dim_rate(const struct rtio_qos_rates *r, enum rtio_qos_dim d)
{
	switch (d) {
	case RTIO_QOS_DIM_TOTAL: return r->rate_Bps;
	case RTIO_QOS_DIM_READ:  return r->rate_read_Bps;
	case RTIO_QOS_DIM_WRITE: return r->rate_write_Bps;
	case RTIO_QOS_DIM_IOPS:  return r->rate_iops;
	default: return 0;
	}
}

/*
 * Every field once, atomically: aiod may be publishing right now, and a
 * mix of old and new rates for one call is harmless, a torn word is not.
 */
static void qos_load_rates(const struct rtio_qos_flow *f, struct rtio_qos_rates *r)
{
	r->rate_Bps = qos_load(&f->rates.rate_Bps);
	r->rate_read_Bps = qos_load(&f->rates.rate_read_Bps);
	r->rate_write_Bps = qos_load(&f->rates.rate_write_Bps);
	r->rate_iops = qos_load(&f->rates.rate_iops);
	r->burst_bytes = qos_load(&f->rates.burst_bytes);
	r->burst_ops = qos_load(&f->rates.burst_ops);
}

static void qos_store_rates(struct rtio_qos_flow *f, const struct rtio_qos_rates *r)
{
	qos_store(&f->rates.rate_Bps, r->rate_Bps);
	qos_store(&f->rates.rate_read_Bps, r->rate_read_Bps);
	qos_store(&f->rates.rate_write_Bps, r->rate_write_Bps);
	qos_store(&f->rates.rate_iops, r->rate_iops);
	qos_store(&f->rates.burst_bytes, r->burst_bytes);
	qos_store(&f->rates.burst_ops, r->burst_ops);
}

void rtio_qos_init(struct rtio_qos_header *hdr, uint32_t nflows, uint64_t aiod_pid)
{
	memset(hdr, 0, rtio_qos_region_size(nflows));
	hdr->magic = RTIO_QOS_MAGIC;
	hdr->version = RTIO_QOS_VERSION;
	hdr->size = rtio_qos_region_size(nflows);
	hdr->nflows = nflows;
	hdr->slot_size = sizeof(struct rtio_qos_flow);
	hdr->aiod_pid = aiod_pid;
}

int rtio_qos_check(const struct rtio_qos_header *hdr, uint64_t size)
{
	if (size < sizeof(*hdr)) {
		return -EPROTO;
	}
	if (hdr->magic != RTIO_QOS_MAGIC || hdr->version != RTIO_QOS_VERSION ||
	    hdr->slot_size != sizeof(struct rtio_qos_flow) || hdr->size != size ||
	    rtio_qos_region_size(hdr->nflows) != size) {
		return -EPROTO;
	}
	return 0;
}

void rtio_qos_policy_set(struct rtio_qos_header *hdr, uint32_t n_rules)
{
	/* the count before the generation: whoever sees the new generation sees it */
	__atomic_store_n(&hdr->n_rules, n_rules, __ATOMIC_RELAXED);
	(void)__atomic_add_fetch(&hdr->policy_gen, 1, __ATOMIC_RELEASE);
}

uint64_t rtio_qos_policy_get(const struct rtio_qos_header *hdr, uint32_t *n_rules)
{
	uint64_t gen = __atomic_load_n(&hdr->policy_gen, __ATOMIC_ACQUIRE);

	*n_rules = gen != 0 ? __atomic_load_n(&hdr->n_rules, __ATOMIC_RELAXED) : 0;
	return gen;
}

uint64_t rtio_qos_assign(struct rtio_qos_flow *f, const struct rtio_qos_rates *r)
{
	for (int d = 0; d < RTIO_QOS_NDIMS; d++) {
		qos_store(&f->tat_ns[d], 0);
	}
	qos_store(&f->bytes_read, 0);
	qos_store(&f->bytes_written, 0);
	qos_store(&f->ops, 0);
	qos_store(&f->waiting, 0);
	qos_store(&f->wait_ns, 0);
	qos_store(&f->paced, 0);
	qos_store_rates(f, r);
	qos_store(&f->credits, rtio_qos_credit_ceiling(r));
	/* release: a client that sees the new generation sees the cleared slot */
	return __atomic_add_fetch(&f->generation, 1, __ATOMIC_RELEASE);
}

uint64_t rtio_qos_renew(struct rtio_qos_flow *f)
{
	uint64_t gen = __atomic_add_fetch(&f->generation, 1, __ATOMIC_RELEASE);

	/* after the bump: a ticket of the old generation no longer takes one off */
	qos_store(&f->waiting, 0);
	return gen;
}

/* The smaller of two rates where 0 is unlimited. */
static uint64_t qos_min_rate(uint64_t a, uint64_t b)
{
	if (a == 0 || b == 0) {
		return a | b;
	}
	return a < b ? a : b;
}

uint64_t rtio_qos_credit_ceiling(const struct rtio_qos_rates *r)
{
	uint64_t rd = qos_min_rate(r->rate_Bps, r->rate_read_Bps);
	uint64_t wr = qos_min_rate(r->rate_Bps, r->rate_write_Bps);
	unsigned __int128 bytes;
	uint64_t credits, pow2 = 1;

	if (rd == 0 || wr == 0) {
		return 0;
	}
	bytes = (unsigned __int128)qos_max(rd, wr) * RTIO_QOS_CREDIT_WINDOW_NS / NS_PER_S;
	bytes = (bytes + RTIO_QOS_CREDIT_BYTES - 1) / RTIO_QOS_CREDIT_BYTES;
	/* an SMB2 credit count is 16 bits; nothing above smbd's own maximum matters */
	credits = bytes > 65535 ? 65535 : (uint64_t)bytes;
	while (pow2 < credits && pow2 < 32768) {
		pow2 <<= 1;
	}
	return credits > 32768 ? 65535 : pow2;
}

uint64_t rtio_qos_credits(const struct rtio_qos_flow *f)
{
	return qos_load(&f->credits);
}

bool rtio_qos_current(const struct rtio_qos_flow *f, uint64_t gen)
{
	return __atomic_load_n(&f->generation, __ATOMIC_ACQUIRE) == gen;
}

/*
 * A TAT ahead of now is a backlog of (tat - now) at the old rate; the same
 * bytes take (tat - now) * old / new at the new one. A backlog of an
 * unlimited dimension is stale (nobody advanced it while unlimited): drop it.
 */
static uint64_t qos_rescaled_tat(uint64_t tat, uint64_t now, uint64_t old_rate, uint64_t new_rate)
{
	unsigned __int128 backlog;

	if (tat <= now) {
		return tat;
	}
	if (old_rate == 0 || new_rate == 0) {
		return now;
	}
	backlog = (unsigned __int128)(tat - now) * old_rate / new_rate;
	if (backlog > RTIO_QOS_MAX_WAIT_NS) {
		backlog = RTIO_QOS_MAX_WAIT_NS;
	}
	return now + (uint64_t)backlog;
}

/* CAS, not a store: clients keep charging while aiod rescales. */
static void qos_rescale_dim(uint64_t *tat, uint64_t now, uint64_t old_rate, uint64_t new_rate)
{
	uint64_t old = qos_load(tat);

	while (!__atomic_compare_exchange_n(tat, &old,
					    qos_rescaled_tat(old, now, old_rate, new_rate), true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
}

void rtio_qos_publish(struct rtio_qos_flow *f, const struct rtio_qos_rates *r, uint64_t now_ns)
{
	struct rtio_qos_rates old;

	/* aiod is the only writer of the rates: what it reads back is its own last word */
	qos_load_rates(f, &old);
	qos_store_rates(f, r);
	qos_store(&f->credits, rtio_qos_credit_ceiling(r));
	for (int d = 0; d < RTIO_QOS_NDIMS; d++) {
		uint64_t o = qos_dim_rate(&old, (enum rtio_qos_dim)d);
		uint64_t n = qos_dim_rate(r, (enum rtio_qos_dim)d);

		if (o != n) {
			qos_rescale_dim(&f->tat_ns[d], now_ns, o, n);
		}
	}
}

/*
 * Where the next request's cost starts: a TAT in the past is a full bucket,
 * never a fuller one, so credit does not pile up while a flow is idle or was
 * unlimited. A backlog beyond RTIO_QOS_MAX_WAIT_NS is cut there, so a slot
 * scribbled on by a broken client cannot wrap the sums.
 */
static uint64_t qos_base(uint64_t tat, uint64_t now)
{
	if (tat <= now) {
		return now;
	}
	return tat - now > RTIO_QOS_MAX_WAIT_NS ? now + RTIO_QOS_MAX_WAIT_NS : tat;
}

/* One GCRA step: the request goes at TAT + cost - tau and moves TAT by its cost. */
static uint64_t qos_gcra(uint64_t *tat, uint64_t cost_ns, uint64_t tau_ns, uint64_t now)
{
	uint64_t old = qos_load(tat);
	uint64_t next, go;

	do {
		next = qos_base(old, now) + cost_ns;
		go = next > tau_ns ? next - tau_ns : 0;
	} while (!__atomic_compare_exchange_n(tat, &old, next, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return go > now ? go - now : 0;
}

static uint64_t qos_charge_dim(struct rtio_qos_flow *f, enum rtio_qos_dim d,
			       const struct rtio_qos_rates *r, uint64_t n, uint64_t now)
{
	uint64_t rate = qos_dim_rate(r, d);
	uint64_t burst = d == RTIO_QOS_DIM_IOPS ? r->burst_ops : r->burst_bytes;

	if (rate == 0) {
		return 0;
	}
	return qos_gcra(&f->tat_ns[d], qos_cost_ns(n, rate), qos_tau_ns(burst, rate), now);
}

static void qos_count(struct rtio_qos_flow *f, bool write, uint64_t bytes, uint64_t wait)
{
	qos_add(write ? &f->bytes_written : &f->bytes_read, bytes);
	qos_add(&f->ops, 1);
	if (wait > 0) {
		qos_add(&f->waiting, 1);
		qos_add(&f->wait_ns, wait);
		qos_add(&f->paced, 1);
	}
}

uint64_t rtio_qos_charge(struct rtio_qos_flow *f, bool write, uint64_t bytes, uint64_t now_ns)
{
	struct rtio_qos_hold h;

	return rtio_qos_charge_hold(f, write, bytes, now_ns, &h);
}

uint64_t rtio_qos_charge_hold(struct rtio_qos_flow *f, bool write, uint64_t bytes,
			      uint64_t now_ns, struct rtio_qos_hold *h)
{
	struct rtio_qos_rates r;
	uint64_t wait;

	qos_load_rates(f, &r);
	wait = qos_charge_dim(f, RTIO_QOS_DIM_TOTAL, &r, bytes, now_ns);
	wait = qos_max(wait, qos_charge_dim(f, write ? RTIO_QOS_DIM_WRITE : RTIO_QOS_DIM_READ,
					    &r, bytes, now_ns));
	wait = qos_max(wait, qos_charge_dim(f, RTIO_QOS_DIM_IOPS, &r, 1, now_ns));
	wait = wait > RTIO_QOS_MAX_WAIT_NS ? RTIO_QOS_MAX_WAIT_NS : wait;
	qos_count(f, write, bytes, wait);
	*h = (struct rtio_qos_hold){ .go_ns = now_ns + wait, .at = r, .write = write };
	return wait;
}

/* The dimensions a request of direction write was charged on. */
static bool qos_dim_charged(enum rtio_qos_dim d, bool write)
{
	return d != (write ? RTIO_QOS_DIM_READ : RTIO_QOS_DIM_WRITE);
}

uint64_t rtio_qos_hold_left(const struct rtio_qos_flow *f, struct rtio_qos_hold *h,
			    uint64_t now_ns)
{
	struct rtio_qos_rates r;
	uint64_t left = h->go_ns > now_ns ? h->go_ns - now_ns : 0, rescaled = 0;

	qos_load_rates(f, &r);
	if (left == 0 || memcmp(&r, &h->at, sizeof(r)) == 0) {
		return left;
	}
	/* the longest of the dimensions that held it, each at its new rate */
	for (int d = 0; d < RTIO_QOS_NDIMS; d++) {
		uint64_t o = qos_dim_rate(&h->at, (enum rtio_qos_dim)d);
		uint64_t n = qos_dim_rate(&r, (enum rtio_qos_dim)d);

		if (o != 0 && n != 0 && qos_dim_charged((enum rtio_qos_dim)d, h->write)) {
			rescaled = qos_max(rescaled, (uint64_t)((unsigned __int128)left * o / n));
		}
	}
	rescaled = rescaled > RTIO_QOS_MAX_WAIT_NS ? RTIO_QOS_MAX_WAIT_NS : rescaled;
	h->go_ns = now_ns + rescaled;
	h->at = r;
	return rescaled;
}

void rtio_qos_wait_done(struct rtio_qos_flow *f, uint64_t gen)
{
	/* a reassigned slot cleared its count: ours is not in it any more */
	if (rtio_qos_current(f, gen)) {
		__atomic_fetch_sub(&f->waiting, 1, __ATOMIC_RELAXED);
	}
}

void rtio_qos_read_counters(const struct rtio_qos_flow *f, struct rtio_qos_counters *c)
{
	c->bytes_read = qos_load(&f->bytes_read);
	c->bytes_written = qos_load(&f->bytes_written);
	c->ops = qos_load(&f->ops);
	c->waiting = qos_load(&f->waiting);
	c->wait_ns = qos_load(&f->wait_ns);
	c->paced = qos_load(&f->paced);
}
