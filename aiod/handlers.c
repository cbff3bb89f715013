/*
 * Where sessions deliver (session.h): the table that connects aiod's
 * transport to its request layer. A session calls up only through it, so
 * session.c knows nothing of files, leases or requests, and every call in
 * the request layer goes down (docs/architecture.md).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>

#include "aiod.h"
#include "peer.h"
#include "files.h"
#include "requests.h"
#include "handlers.h"
#include "session.h"

static int on_connected(struct aiod_session *s)
{
	return aiod_peer_create(s) != NULL ? 0 : -ENOMEM;
}

static void on_control(struct aiod_session *s, const union rtio_msg *m, size_t len, int *fds,
		       unsigned nfds, int fd_err)
{
	aiod_control_handle(aiod_session_ctx(s), s, m, len, fds, nfds, fd_err);
}

/*
 * A batch of requests: the change events are read once, after the batch was
 * received and before it is handled. Every write that finished before one
 * of these requests was sent has queued its event by then (watch.c), so no
 * read of the batch is answered from a block such a write made stale.
 */
static void on_data(struct aiod_session *s, const union rtio_msg *m, const size_t *len,
		    unsigned n)
{
	struct aiod_ctx *ctx = aiod_session_ctx(s);
	bool reads = false;

	for (unsigned i = 0; i < n; i++) {
		reads |= len[i] >= sizeof(m[i].hdr) && m[i].hdr.opcode == RTIO_OP_READ0;
	}
	if (reads) {
		aiod_watch_drain(ctx);
	}
	/* A handler may end the session (a full reply queue): the rest of the batch goes. */
	for (unsigned i = 0; i < n && !aiod_session_dying(s); i++) {
		aiod_data_handle(ctx, s, &m[i], len[i]);
	}
}

static void on_closed(struct aiod_session *s)
{
	struct aiod_peer *p = aiod_peer_of(s);
	struct aiod_ctx *ctx = p->ctx;

	/* Requests still in the engine finish on their own but reply to nobody. */
	aiod_data_orphan_all(p);
	aiod_lease_release_all(p);
	aiod_load_close_all(ctx, &p->opens);
	aiod_peer_keep_known(p);
	aiod_data_retry_blocked(ctx);
}

const struct aiod_session_handlers aiod_handlers = {
	.connected = on_connected,
	.control = on_control,
	.data = on_data,
	.closed = on_closed,
};
