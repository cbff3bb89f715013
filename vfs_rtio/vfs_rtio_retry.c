/*
 * vfs_rtio: when a detached process asks aiod again.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A detached process tries aiod again at most this often, on its next I/O.
 * A connect to an aiod that is alive but stuck costs rtio:timeout of smbd's
 * time, so after each attempt that timed out (or that aiod accepted and
 * dropped without an answer) the interval doubles, up to the maximum; a
 * refused connect (aiod simply gone) costs nothing and keeps the short
 * interval, so a restarted aiod is found within a second. An aiod that
 * answers it has no room for this process (max_sessions reached, no more
 * message queues) is asked again only after the maximum, and that is logged
 * once.
 */

#include "includes.h"

#include "vfs_rtio.h"
#include "vfs_rtio_retry.h"

#undef DBGC_CLASS
#define DBGC_CLASS DBGC_VFS

#define VFS_RTIO_RECONNECT_MS       1000
#define VFS_RTIO_RECONNECT_MAX_MS   60000

void vfs_rtio_retry_init(struct vfs_rtio_retry *r)
{
	*r = (struct vfs_rtio_retry){ .retry_ms = VFS_RTIO_RECONNECT_MS };
}

bool vfs_rtio_retry_due(const struct vfs_rtio_retry *r)
{
	return (r->last_attempt.tv_sec == 0 && r->last_attempt.tv_nsec == 0) ||
	       vfs_rtio_elapsed_ms(&r->last_attempt) >= r->retry_ms;
}

void vfs_rtio_retry_start(struct vfs_rtio_retry *r)
{
	clock_gettime_mono(&r->last_attempt);
}

/*
 * aiod answered but has no room for this process: [global] max_sessions
 * reached (EUSERS), or it cannot create our message queues (RLIMIT_MSGQUEUE:
 * EMFILE, fs.mqueue.queues_max: ENOSPC, memory) -- or this smbd is out of
 * descriptors or memory itself. None of that passes in a second: asking on
 * every I/O would cost both sides and fill the logs.
 */
static bool vfs_rtio_no_room_error(int err)
{
	return err == -EUSERS || err == -EMFILE || err == -ENFILE || err == -ENOSPC ||
	       err == -ENOMEM;
}

bool vfs_rtio_retry_failed(struct vfs_rtio_retry *r, int err, const char *socket_path)
{
	bool logged = false;

	if (vfs_rtio_no_room_error(err)) {
		r->retry_ms = VFS_RTIO_RECONNECT_MAX_MS;
		if (!r->no_room) {
			VFS_RTIO_STATUS("rtio: aiod at %s has no room for this process (%s), "
					"doing I/O locally; asking again every %d s\n",
					socket_path, strerror(-err),
					VFS_RTIO_RECONNECT_MAX_MS / 1000);
			r->no_room = true;
			logged = true;
		}
	} else if (err == -ETIMEDOUT || err == -EPROTO || err == -ENOTCONN) {
		/* aiod is there but stuck, or it dropped us unanswered: overloaded. */
		r->retry_ms = MIN(r->retry_ms * 2, VFS_RTIO_RECONNECT_MAX_MS);
	} else {
		r->retry_ms = VFS_RTIO_RECONNECT_MS;
	}
	DBG_DEBUG("rtio: aiod at %s still not available: %s, next try in %d ms\n",
		  socket_path, strerror(-err), r->retry_ms);
	return logged;
}

void vfs_rtio_retry_succeeded(struct vfs_rtio_retry *r)
{
	r->retry_ms = VFS_RTIO_RECONNECT_MS;
	r->no_room = false;
}
