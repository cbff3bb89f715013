/*
 * The request layer's entry points: control messages (control.c) and
 * data messages (request.c, waitq.c), for the handlers and the peer's teardown.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_REQUESTS_H
#define AIOD_REQUESTS_H

#include "aiod.h"
#include "session.h"

/*
 * control.c: one control message from a session's socket, with the nfds
 * descriptors it carried; fd_err is -EMFILE when it carried some that aiod,
 * out of descriptors, could not take (0 otherwise).
 */
void aiod_control_handle(struct aiod_ctx *ctx, struct aiod_session *s, const union rtio_msg *m,
			 size_t len, int *fds, unsigned nfds, int fd_err);

/* request.c, waitq.c */
void aiod_data_handle(struct aiod_ctx *ctx, struct aiod_session *s, const union rtio_msg *m,
		      size_t len);
/* p's session ended: its requests still in flight finish but answer nobody. */
void aiod_data_orphan_all(struct aiod_peer *p);
/*
 * read.c: p's session ended: close its opens (after aiod_data_orphan_all()),
 * each one's read-ahead dropped as aiod_load_close() drops it.
 */
void aiod_load_close_all(struct aiod_ctx *ctx, struct aiod_opens *os);
/* Cache blocks were released: retry requests that waited for one. */
void aiod_data_retry_blocked(struct aiod_ctx *ctx);
/*
 * writehold.c: a write-back run is done: held write replies may go
 * (ctx->written_back); those whose session went always do (at shutdown,
 * after the sessions: all of them).
 */
void aiod_data_written_back(struct aiod_ctx *ctx);

#endif
