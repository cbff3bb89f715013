/*
 * QoS in aiod (issue 13): the flow table every smbd maps, which flow a
 * principal's I/O is paced by, and the 100 ms tick that decides each flow's
 * rate from the [qos.NAME] policy (qos_policy.h), what the flows asked for
 * and how busy the device is (qos_rates.h).
 *
 * aiod never holds a request back itself: the module paces before it
 * submits, against the rates published here (rtio_qos.h). A flow is one
 * rule's I/O as a whole (every user, client, connection and smbd the rule
 * matches together), or one best-effort principal (user@client) with no rule.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_QOS_H
#define AIOD_QOS_H

#include <stddef.h>
#include <stdint.h>

#include "rtio_proto.h"

struct aiod_ctx;
struct aiod_config;

/* Slots in the flow table: flows in use at once (best-effort principals and rules). */
#define AIOD_QOS_SLOTS 1024u
/* How often rates are decided and published. */
#define AIOD_QOS_TICK_MS 100u

/* Create the flow table (a sealed memfd). -errno and a message naming what failed. */
int aiod_qos_init(struct aiod_ctx *ctx, char *err, size_t errlen);

/* The descriptor CONNECT passes to clients that asked for RTIO_FEAT_QOS, -1 if none. */
int aiod_qos_fd(const struct aiod_ctx *ctx);

/* QOS_BIND: match the principal (and file) against the policy, give it a flow slot. */
int aiod_qos_bind(struct aiod_ctx *ctx, const struct rtio_qos_bind_req *req,
		  struct rtio_qos_bind_rep *rep);

/*
 * The reservation of the flow in slot (a bind's rep->slot), bytes/s; 0 for a
 * best-effort flow, a rule without one, or a slot not in use.
 */
uint64_t aiod_qos_slot_reserve(const struct aiod_ctx *ctx, uint32_t slot);

/*
 * Whether the flow in slot has a reservation and got less than it (and an
 * eighth of it) over the last second, as of the last tick: its reads are then due before best
 * effort's at the device (stream.c). Beyond its reservation a flow queues
 * like everybody else, so the rest of the device is still shared by weight.
 */
bool aiod_qos_slot_behind(const struct aiod_ctx *ctx, uint32_t slot);

/*
 * The read limit of the flow in slot, bytes/s: the smaller of its rule's
 * limit_read and limit (reads and writes together), 0 when neither is set,
 * for a best-effort flow or a slot not in use. What the configured rule
 * says, not the rate published now: read-ahead sizes its window by it
 * (stream.c), and a share that drops for a tick must not shrink requests.
 */
uint64_t aiod_qos_slot_read_limit(const struct aiod_ctx *ctx, uint32_t slot);

/*
 * QOS_POLICY: the rule the principal (and file) falls under and its
 * configured values, as QOS_BIND would match it now; binds nothing.
 */
int aiod_qos_lookup(struct aiod_ctx *ctx, const struct rtio_qos_bind_req *req,
		    struct rtio_qos_policy_rep *rep);

/* QOS_LIST: the index-th flow in use; -ENOENT past the last. */
int aiod_qos_list(struct aiod_ctx *ctx, uint32_t index, struct rtio_qos_list_rep *rep);

/*
 * Check cfg's [qos.NAME] policy against the device capacity admission control
 * knows now (profile or configured) and the streams' reservations, and log
 * its rules. -EINVAL and a message naming the rules when it reserves more
 * than the device has.
 */
int aiod_qos_check_policy(struct aiod_ctx *ctx, struct aiod_config *cfg, char *err, size_t errlen);

/*
 * SIGHUP: take next's policy if it passes aiod_qos_check_policy (else keep
 * the running one and say so). Flows whose rule is still there with the
 * same match keys keep their state and take the new values; the others are
 * given up; if which rule a principal falls under may have changed, every
 * client binds again on its next I/O (qos.c, qos_carry_over).
 */
void aiod_qos_reload(struct aiod_ctx *ctx, struct aiod_config *next);

/* Flows in use, and how many of them are paced now (for STATS and logs). */
void aiod_qos_counts(const struct aiod_ctx *ctx, uint32_t *flows, uint32_t *paced);

#endif
