/*
 * Peers (peer.h): the request layer's state for one connected session, and
 * the record of the files it may UNLINK.
 *
 * UNLINK drops every cached block of a file, so a client may ask it only for
 * a file it has open or had open, not for any file another user's smbd is
 * reading: each peer keeps the latest AIOD_KNOWN_FILES (dev, ino) it
 * registered. A session that ends while its process lives on (aiod dropped
 * it: a timeout, a full queue) leaves its record in the context for the
 * process's next session: that one tells aiod about the files removed or
 * written while it was away (vfs_rtio's stale list).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "aiod.h"
#include "peer.h"
#include "files.h"
#include "session.h"

#define AIOD_KNOWN_FILES 256
#define AIOD_KNOWN_KEEP  64	/* records of ended sessions kept, the newest */

struct aiod_known {
	struct aiod_known *next;	/* in ctx->known_ended, newest first */
	pid_t pid;
	uint32_t n;			/* entries in use */
	uint32_t oldest;		/* overwritten next once all are in use */
	struct {
		uint64_t dev, ino;
	} f[AIOD_KNOWN_FILES];
};

void aiod_peer_set_qos_slot(struct aiod_peer *p, uint32_t slot)
{
	p->qos_slot = slot;
	for (struct aiod_open *o = p->opens.head; o != NULL; o = o->next) {
		o->qos_slot = slot;
	}
}

void aiod_peer_pin(struct aiod_peer *p, uint32_t n)
{
	p->pinned += n;
}

void aiod_peer_unpin(struct aiod_peer *p, uint32_t n)
{
	p->pinned = p->pinned > n ? p->pinned - n : 0;
}

static bool known_has(const struct aiod_known *k, uint64_t dev, uint64_t ino)
{
	for (uint32_t i = 0; k != NULL && i < k->n; i++) {
		if (k->f[i].dev == dev && k->f[i].ino == ino) {
			return true;
		}
	}
	return false;
}

void aiod_peer_note_file(struct aiod_peer *p, uint64_t dev, uint64_t ino)
{
	struct aiod_known *k = p->known;

	if (known_has(k, dev, ino)) {
		return;
	}
	if (k == NULL) {
		k = p->known = talloc_zero(p, struct aiod_known);
		if (k == NULL) {
			return;	/* it may UNLINK only what it has open: no worse than that */
		}
		k->pid = aiod_session_pid(p->s);
	}
	if (k->n < AIOD_KNOWN_FILES) {
		k->f[k->n].dev = dev;
		k->f[k->n].ino = ino;
		k->n++;
		return;
	}
	k->f[k->oldest].dev = dev;
	k->f[k->oldest].ino = ino;
	k->oldest = (k->oldest + 1) % AIOD_KNOWN_FILES;
}

bool aiod_peer_may_unlink(const struct aiod_peer *p, uint64_t dev, uint64_t ino)
{
	return aiod_opens_has(&p->opens, dev, ino) || known_has(p->known, dev, ino);
}

/* A new session of a process that had others: it may UNLINK what they registered. */
static void known_adopt(struct aiod_peer *p)
{
	struct aiod_ctx *ctx = p->ctx;
	struct aiod_known **pp = &ctx->known_ended;
	pid_t pid = aiod_session_pid(p->s);

	while (*pp != NULL) {
		struct aiod_known *k = *pp;

		if (k->pid != pid) {
			pp = &k->next;
			continue;
		}
		*pp = k->next;
		ctx->nknown_ended--;
		for (uint32_t i = 0; i < k->n; i++) {
			uint32_t j = (k->oldest + i) % k->n;	/* oldest first: the newest survive */
			aiod_peer_note_file(p, k->f[j].dev, k->f[j].ino);
		}
		talloc_free(k);
	}
}

void aiod_peer_keep_known(struct aiod_peer *p)
{
	struct aiod_ctx *ctx = p->ctx;
	struct aiod_known *k = p->known;

	if (k == NULL || ctx->stopping || aiod_session_client_exited(p->s)) {
		return;
	}
	p->known = NULL;
	(void)talloc_steal(ctx, k);
	k->next = ctx->known_ended;
	ctx->known_ended = k;
	if (++ctx->nknown_ended > AIOD_KNOWN_KEEP) {
		struct aiod_known **last = &ctx->known_ended;

		while ((*last)->next != NULL) {
			last = &(*last)->next;
		}
		TALLOC_FREE(*last);
		ctx->nknown_ended--;
	}
}

struct aiod_peer *aiod_peer_create(struct aiod_session *s)
{
	struct aiod_ctx *ctx = aiod_session_ctx(s);
	struct aiod_peer *p = talloc_zero(s, struct aiod_peer);

	if (p == NULL) {
		return NULL;
	}
	p->ctx = ctx;
	p->s = s;
	p->qos_slot = RTIO_QOS_NO_FLOW;
	p->nleases = 2 * aiod_session_depth(ctx);
	p->leases = talloc_zero_array(p, struct aiod_lease, p->nleases);
	if (p->leases == NULL) {
		talloc_free(p);
		return NULL;
	}
	known_adopt(p);
	aiod_session_set_owner(s, p);
	return p;
}
