/*
 * The QoS flow table: a small shared region (memfd) that aiod creates and
 * every smbd maps read-write, separate from the data cache. aiod decides each
 * flow's rates and publishes them here; every smbd process paces its own I/O
 * against the flow's slot with rtio_qos_charge(), without a round trip. The
 * pacing state lives in the slot, so a limit holds for all processes of a
 * principal together, not per process.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   0                 64                64 + 192       64 + n * 192
 *   +-----------------+-----------------+-- ... --+
 *   | rtio_qos_header | rtio_qos_flow 0 |         |
 *   +-----------------+-----------------+-- ... --+
 *
 * Each slot is three cache lines, one per writer pattern, so the clients'
 * compare-and-swap on the pacing line never invalidates the line of rates
 * they all read, and the counters' adds do not slow the pacing CAS:
 *   line 0: generation and rates   (aiod writes, about every 100 ms)
 *   line 1: pacing state           (clients CAS on every I/O)
 *   line 2: counters               (clients add on every I/O, aiod reads)
 *
 * Pacing is GCRA (the virtual-scheduling form of a token bucket): per limited
 * dimension one "theoretical arrival time" (TAT), the instant at which every
 * byte charged so far is paid for at the rate. A request of n bytes, cost
 * T = n / rate, moves TAT to max(TAT, now) + T and may go when that new TAT
 * is no more than tau = burst / rate ahead: so the bytes sent since the
 * flow was last idle never exceed rate * elapsed + burst, whoever sent them.
 * One 64-bit word per dimension, so a plain CAS updates it from any
 * process. TAT <= now means a full bucket.
 *
 * Every field is accessed with __atomic builtins only.
 */
#ifndef RTIO_QOS_H
#define RTIO_QOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RTIO_QOS_MAGIC    0x534f5152u	/* "RQOS" in memory order */
#define RTIO_QOS_VERSION  1
#define RTIO_QOS_LINE     64u
#define RTIO_QOS_FLOWS_OFF 64u

/*
 * burst_bytes or burst_ops 0: this much time at the rate. A 1-second window
 * then sees at most 5 % over the rate, and only right after the flow was idle.
 */
#define RTIO_QOS_DEFAULT_BURST_NS 50000000ull

/*
 * No single wait, and no backlog, is longer: bounds a rate of 1 B/s against a
 * huge request, and keeps every sum of nanoseconds far from wrapping.
 */
#define RTIO_QOS_MAX_WAIT_NS (3600ull * 1000000000ull)

/* The pacing dimensions, the index into rtio_qos_flow.tat_ns. */
enum rtio_qos_dim {
	RTIO_QOS_DIM_TOTAL = 0,
	RTIO_QOS_DIM_READ  = 1,
	RTIO_QOS_DIM_WRITE = 2,
	RTIO_QOS_DIM_IOPS  = 3,
	RTIO_QOS_NDIMS
};

struct rtio_qos_header {
	uint32_t magic;		/* aiod: RTIO_QOS_MAGIC */
	uint32_t version;	/* aiod: RTIO_QOS_VERSION */
	uint64_t size;		/* aiod: whole region, bytes */
	uint32_t nflows;	/* aiod: slots after the header */
	uint32_t slot_size;	/* aiod: sizeof(struct rtio_qos_flow) */
	uint64_t aiod_pid;	/* aiod: for logs */
	/*
	 * aiod: bumped after every policy load, n_rules first (rtio_qos_policy_set).
	 * 0: this aiod does not say, and clients must bind to learn. With no rule
	 * in force a bind finds nothing, so a client skips it (one round trip per
	 * tree connect) and binds when the generation moves.
	 */
	uint64_t policy_gen;
	uint32_t n_rules;	/* aiod: [qos.NAME] rules in force at policy_gen */
	uint32_t reserved0;
	uint8_t reserved[16];
};

/* What aiod publishes for a flow. All in units per second; 0 = unlimited. */
struct rtio_qos_rates {
	uint64_t rate_Bps;	/* reads and writes together */
	uint64_t rate_read_Bps;
	uint64_t rate_write_Bps;
	uint64_t rate_iops;
	uint64_t burst_bytes;	/* 0: RTIO_QOS_DEFAULT_BURST_NS at each byte rate */
	uint64_t burst_ops;	/* 0: RTIO_QOS_DEFAULT_BURST_NS at rate_iops, at least 1 */
};

struct rtio_qos_flow {
	/* line 0, aiod writes */
	uint64_t generation;	/* aiod: bumped when the slot gets a new flow; 0 = never used */
	struct rtio_qos_rates rates;	/* aiod */
	uint64_t credits;	/* aiod: SMB2 credit ceiling per connection, 0 = none */
	/* line 1, clients CAS */
	uint64_t tat_ns[RTIO_QOS_NDIMS] __attribute__((aligned(64)));	/* CLOCK_MONOTONIC */
	uint8_t pad1[32];
	/* line 2, clients add, aiod reads */
	uint64_t bytes_read __attribute__((aligned(64)));	/* clients: charged, not completed */
	uint64_t bytes_written;	/* clients */
	uint64_t ops;		/* clients */
	uint64_t waiting;	/* clients: requests held by pacing right now */
	uint64_t wait_ns;	/* clients: sum of the waits charge imposed */
	uint64_t paced;		/* clients: requests that had to wait at all */
	uint8_t pad2[16];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct rtio_qos_header) == RTIO_QOS_FLOWS_OFF, "rtio_qos_header");
_Static_assert(offsetof(struct rtio_qos_header, policy_gen) == 32, "rtio_qos_header.policy_gen");
_Static_assert(offsetof(struct rtio_qos_header, n_rules) == 40, "rtio_qos_header.n_rules");
_Static_assert(sizeof(struct rtio_qos_rates) == 48, "rtio_qos_rates");
_Static_assert(sizeof(struct rtio_qos_flow) == 3 * RTIO_QOS_LINE, "rtio_qos_flow");
_Static_assert(offsetof(struct rtio_qos_flow, rates) == 8, "rtio_qos_flow.rates");
_Static_assert(offsetof(struct rtio_qos_flow, credits) == 56, "rtio_qos_flow.credits");
_Static_assert(offsetof(struct rtio_qos_flow, tat_ns) == RTIO_QOS_LINE, "rtio_qos_flow.tat_ns");
_Static_assert(offsetof(struct rtio_qos_flow, bytes_read) == 2 * RTIO_QOS_LINE,
	       "rtio_qos_flow.bytes_read");
_Static_assert(offsetof(struct rtio_qos_flow, paced) == 2 * RTIO_QOS_LINE + 40,
	       "rtio_qos_flow.paced");
/* Other processes share these words: a lock would not be shared with them. */
_Static_assert(__atomic_always_lock_free(sizeof(uint64_t), 0), "64-bit atomics");

/* Region size for nflows slots. */
static inline uint64_t rtio_qos_region_size(uint32_t nflows)
{
	return RTIO_QOS_FLOWS_OFF + (uint64_t)nflows * sizeof(struct rtio_qos_flow);
}

/* Slot idx of a checked region (idx < hdr->nflows). */
static inline struct rtio_qos_flow *rtio_qos_slot(struct rtio_qos_header *hdr, uint32_t idx)
{
	return (struct rtio_qos_flow *)((char *)hdr + RTIO_QOS_FLOWS_OFF) + idx;
}

/* aiod: write the header and zero every slot of a region of rtio_qos_region_size(nflows). */
void rtio_qos_init(struct rtio_qos_header *hdr, uint32_t nflows, uint64_t aiod_pid);

/* Clients: 0 when hdr describes a region of exactly size bytes; -EPROTO otherwise. */
int rtio_qos_check(const struct rtio_qos_header *hdr, uint64_t size);

/* aiod: publish that n_rules rules are in force now (a load or a reload). */
void rtio_qos_policy_set(struct rtio_qos_header *hdr, uint32_t n_rules);

/*
 * Clients: the policy generation, and in *n_rules the rules in force then.
 * 0 (and *n_rules 0): aiod does not publish them.
 */
uint64_t rtio_qos_policy_get(const struct rtio_qos_header *hdr, uint32_t *n_rules);

/*
 * aiod: give slot f to a new flow with rates r: clears its pacing state and
 * counters, then bumps the generation. Returns the new generation, which the
 * clients keep with the slot index to notice a stale binding.
 */
uint64_t rtio_qos_assign(struct rtio_qos_flow *f, const struct rtio_qos_rates *r);

/*
 * aiod: make every client of slot f bind again (a reload changed which rule
 * a principal may fall under) while the flow goes on: its backlog, counters
 * and rates stay, only the generation moves. Requests held at the old
 * generation go at once (rtio_qos_current() is false for them) and no
 * longer count as waiting. Returns the new generation.
 */
uint64_t rtio_qos_renew(struct rtio_qos_flow *f);

/*
 * aiod: publish new rates for a flow in use. A backlog built at the old rate
 * is rescaled to the new one, so raising a low rate takes effect at once
 * instead of after the old backlog drains.
 */
void rtio_qos_publish(struct rtio_qos_flow *f, const struct rtio_qos_rates *r, uint64_t now_ns);

/*
 * The SMB2 credit ceiling that goes with rates r (rtio_qos_assign() and
 * rtio_qos_publish() store it in the slot's credits word): enough 64 KiB
 * credits for RTIO_QOS_CREDIT_WINDOW_NS of I/O at the flow's byte rate,
 * rounded up to a power of two so a rate that moves a little every tick
 * does not move the ceiling. 0 (no ceiling) unless both directions are
 * bounded: a ceiling would slow the unbounded one. The rate comes from
 * pacing; the ceiling only bounds what a paced client can queue inside
 * smbd (requests and, for writes, their data) while it waits.
 */
#define RTIO_QOS_CREDIT_WINDOW_NS 1000000000ull
#define RTIO_QOS_CREDIT_BYTES     65536u
uint64_t rtio_qos_credit_ceiling(const struct rtio_qos_rates *r);

/* Clients: the credit ceiling aiod published for the flow (0: none). */
uint64_t rtio_qos_credits(const struct rtio_qos_flow *f);

/* Clients: true while the slot still belongs to the flow bound at generation gen. */
bool rtio_qos_current(const struct rtio_qos_flow *f, uint64_t gen);

/*
 * Clients: charge one I/O of bytes to the flow and return how long to wait
 * before submitting it (0: go now). Never refuses: a request larger than the
 * burst waits for its own excess. The wait is the longest of the total,
 * per-direction and IOPS dimensions. Lock-free; safe from any number of
 * processes at once. now_ns: CLOCK_MONOTONIC. When it returns more than 0,
 * the caller owes exactly one rtio_qos_wait_done() once it submitted.
 */
uint64_t rtio_qos_charge(struct rtio_qos_flow *f, bool write, uint64_t bytes, uint64_t now_ns);

/*
 * A request held by pacing, as its holder keeps it: when it may go and the
 * rates that instant was decided at. aiod publishes new rates up to ten
 * times a second while the device is shared; a wait decided at a rate that
 * is gone would hold the request as long as the old rate said (four 1 MiB
 * reads charged at 1 MiB/s waited up to 4 s after the rate was raised to
 * 56 MiB/s, and their reader showed aiod no demand meanwhile).
 */
struct rtio_qos_hold {
	uint64_t go_ns;			/* CLOCK_MONOTONIC */
	struct rtio_qos_rates at;
	bool write;
};

/* rtio_qos_charge(), and h describes the wait it returns. */
uint64_t rtio_qos_charge_hold(struct rtio_qos_flow *f, bool write, uint64_t bytes,
			      uint64_t now_ns, struct rtio_qos_hold *h);

/*
 * Clients: how long h still waits under f's rates now (0: go). A rate that
 * changed since h was decided rescales what is left of its wait the way
 * rtio_qos_publish() rescales the backlog: the bytes ahead of it are the
 * same, paid at the new rate; a dimension that became unlimited no longer
 * holds it. Updates h.
 */
uint64_t rtio_qos_hold_left(const struct rtio_qos_flow *f, struct rtio_qos_hold *h,
			    uint64_t now_ns);

/*
 * Clients: a request rtio_qos_charge() held has been submitted; gen is the
 * generation the client bound the slot at (a slot reassigned meanwhile is
 * left alone: its count starts from 0).
 */
void rtio_qos_wait_done(struct rtio_qos_flow *f, uint64_t gen);

/* Anyone: a consistent-enough copy of the counters (each word read atomically). */
struct rtio_qos_counters {
	uint64_t bytes_read;
	uint64_t bytes_written;
	uint64_t ops;
	uint64_t waiting;
	uint64_t wait_ns;
	uint64_t paced;
};
void rtio_qos_read_counters(const struct rtio_qos_flow *f, struct rtio_qos_counters *c);

#endif
