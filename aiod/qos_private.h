/*
 * QoS in aiod, private to qos.c (binding, reload, listing) and qos_tick.c
 * (the 100 ms tick): the flow table as aiod keeps it next to the shared one.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_QOS_PRIVATE_H
#define AIOD_QOS_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "log.h"
#include "qos.h"
#include "qos_rates.h"
#include "rtio_qos.h"

/* Ticks of byte totals kept per flow: 10 s of history for the 10 s rate. */
#define QOS_HIST (10u * 1000u / AIOD_QOS_TICK_MS + 1u)

struct qos_flow {
	bool in_use;
	int rule;		/* index in the policy, -1 = best-effort principal */
	char key[160];		/* "rule:NAME" or "be:user@client": one flow per key */
	char principal[160];	/* for aiodctl qos */
	uint32_t binds;		/* binds since the flow was set up */
	uint64_t gen;		/* the slot's generation for this flow */
	struct aiod_qos_flow_state st;
	struct rtio_qos_rates published;
	uint64_t hist[QOS_HIST];	/* bytes read + written at each tick, a ring */
	unsigned hist_pos, hist_n;
	unsigned idle_ticks;	/* ticks without a byte: a best-effort flow goes after QOS_IDLE_TICKS */
	bool behind;		/* reserved, and got no more than it (with a margin) in the last second */
};

struct aiod_qos {
	struct aiod_ctx *ctx;
	int fd;
	struct rtio_qos_header *hdr;
	size_t size;
	struct qos_flow flows[AIOD_QOS_SLOTS];
	uint32_t in_use;
	struct tevent_timer *tick;
	struct aiod_qos_flow_state scratch[AIOD_QOS_SLOTS];	/* qos_decide's input and output */
	uint32_t scratch_map[AIOD_QOS_SLOTS];
	unsigned sat_bits;	/* one bit per recent tick: the device was busy (aiod_qos_device_busy) */
	struct aiod_ratelimit full_log;
};

/* Start the tick if a flow is in use and it is not running. */
void aiod_qos_tick_arm(struct aiod_qos *q);

/* Give slot i up: a new generation, so every client of it binds again on its next I/O. */
void aiod_qos_release_slot(struct aiod_qos *q, uint32_t i);

/* f's bytes per second over the last ticks ticks (at most its history), 0 before two ticks. */
uint64_t aiod_qos_flow_rate(const struct qos_flow *f, unsigned ticks);

#endif
