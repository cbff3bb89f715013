/*
 * vfs_rtio: the client library's event descriptors on tevent (vfs_rtio_watch.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef VFS_RTIO_WATCH_H
#define VFS_RTIO_WATCH_H

#include "rtio_client.h"

struct vfs_rtio_watch {
	int fd[2];			/* our dups of the client's event fds; -1: none */
	struct tevent_fd *fde[2];
};

/* Nothing watched yet. */
void vfs_rtio_watch_init(struct vfs_rtio_watch *w);
/*
 * Call handler(private_data) on ev whenever one of client's event fds is
 * readable; the tevent_fds are talloc children of mem_ctx. 0 or -errno
 * (stop what was set up then).
 */
int vfs_rtio_watch_start(struct vfs_rtio_watch *w, TALLOC_CTX *mem_ctx,
			 struct tevent_context *ev, const struct rtio_client *client,
			 tevent_fd_handler_t handler, void *private_data);
void vfs_rtio_watch_stop(struct vfs_rtio_watch *w);

#endif
