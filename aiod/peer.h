/*
 * A peer is what the request layer keeps for one connected session: the
 * files it registered (opens), the blocks it holds pinned between READ0 and
 * READ1 or WRITE0 and WRITE1 (leases), its requests in flight, and the files
 * it may UNLINK. The session (session.h) owns it as an opaque pointer and
 * frees it with itself; handlers.c creates it on CONNECT and empties it
 * when the session ends.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_PEER_H
#define AIOD_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "aiod.h"
#include "session.h"

struct aiod_known;

struct aiod_peer {
	struct aiod_ctx *ctx;
	struct aiod_session *s;
	struct aiod_opens opens;	/* files.c */
	struct aiod_lease *leases;	/* leases.c: a fixed table, 2 per request slot */
	uint32_t nleases;
	uint32_t pinned;		/* block references of its leases and requests */
	struct aiod_req *reqs;		/* dataplane.c: requests in flight */
	struct aiod_known *known;	/* files it registered, NULL until the first */
	/* For SESSION_STATS (monitor.c): what this client did since CONNECT. */
	uint32_t inflight;		/* requests on reqs */
	uint64_t requests;
	uint64_t bytes_read;		/* returned to it */
	uint64_t bytes_written;		/* written through aiod or reported by WROTE */
	struct rtio_credits_req credits;	/* its last CREDITS report, zero if none */
	uint64_t local_reads;		/* reads it made itself, the sum of its LOCAL_READS */
	uint64_t local_bytes;
	uint32_t qos_slot;		/* the flow of its last QoS bind, RTIO_QOS_NO_FLOW if none */
};

/*
 * A QoS bind of this client (a tree connect) went to flow slot: its opens'
 * reads are due by that flow's standing from now on (stream.c: sooner while
 * a reservation is behind). The last bind decides: a client on one share
 * (one flow), the usual case, is marked exactly.
 */
void aiod_peer_set_qos_slot(struct aiod_peer *p, uint32_t slot);

/* CONNECT: the peer of s (a talloc child of s); NULL on ENOMEM. */
struct aiod_peer *aiod_peer_create(struct aiod_session *s);
static inline struct aiod_peer *aiod_peer_of(const struct aiod_session *s)
{
	return aiod_session_owner(s);
}

/*
 * Block references the peer holds through its leases and requests, for its
 * pin quota: dataplane.c counts those a request takes (pin) and drops
 * (unpin); a lease's are dropped by aiod_lease_release().
 */
void aiod_peer_pin(struct aiod_peer *p, uint32_t n);
void aiod_peer_unpin(struct aiod_peer *p, uint32_t n);

/* p registered (dev, ino): from now on it may UNLINK it. */
void aiod_peer_note_file(struct aiod_peer *p, uint64_t dev, uint64_t ino);
/* Whether p has (dev, ino) open or registered it before (in its process's earlier sessions too). */
bool aiod_peer_may_unlink(const struct aiod_peer *p, uint64_t dev, uint64_t ino);
/* The session ends while aiod runs on: keep p's record for its process's next session. */
void aiod_peer_keep_known(struct aiod_peer *p);

/* leases.c */
struct aiod_lease *aiod_lease_new(struct aiod_peer *p);
struct aiod_lease *aiod_lease_find(struct aiod_peer *p, uint64_t token);
/* Unpin l's blocks; the caller retries blocked requests (aiod_data_retry_blocked). */
void aiod_lease_release(struct aiod_peer *p, struct aiod_lease *l);
void aiod_lease_release_all(struct aiod_peer *p);

#endif
