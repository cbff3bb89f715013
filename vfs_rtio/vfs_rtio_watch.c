/*
 * vfs_rtio: the client library's event descriptors on tevent.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Watch duplicates of the client's descriptors: the library closes its own
 * the moment it sees the session die, possibly deep inside a callback, and a
 * tevent_fd must never outlive its descriptor number (the number may be
 * reused by the next open). Ours stay valid until vfs_rtio_watch_stop().
 */

#include "includes.h"

#include "vfs_rtio_watch.h"

void vfs_rtio_watch_init(struct vfs_rtio_watch *w)
{
	*w = (struct vfs_rtio_watch){ .fd = { -1, -1 } };
}

int vfs_rtio_watch_start(struct vfs_rtio_watch *w, TALLOC_CTX *mem_ctx,
			 struct tevent_context *ev, const struct rtio_client *client,
			 tevent_fd_handler_t handler, void *private_data)
{
	int fds[2];

	rtio_client_event_fds(client, fds);
	for (int i = 0; i < 2; i++) {
		if (fds[i] == -1) {
			return -ENOTCONN;
		}
		w->fd[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
		if (w->fd[i] == -1) {
			return -errno;
		}
		w->fde[i] = tevent_add_fd(ev, mem_ctx, w->fd[i], TEVENT_FD_READ, handler,
					  private_data);
		if (w->fde[i] == NULL) {
			return -ENOMEM;
		}
	}
	return 0;
}

void vfs_rtio_watch_stop(struct vfs_rtio_watch *w)
{
	for (int i = 0; i < 2; i++) {
		TALLOC_FREE(w->fde[i]);
		if (w->fd[i] != -1) {
			close(w->fd[i]);
			w->fd[i] = -1;
		}
	}
}
