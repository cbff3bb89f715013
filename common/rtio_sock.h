/*
 * Control-socket helpers shared by aiod and the client library: SEQPACKET
 * messages with optional descriptors attached (SCM_RIGHTS).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef RTIO_SOCK_H
#define RTIO_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RTIO_SOCK_MAX_FDS 5	/* the most a message carries: a CONNECT reply (rtio_proto.h) */

/* Connect to a SEQPACKET unix socket; returns the fd (CLOEXEC) or -errno. */
int rtio_sock_connect(const char *path, int timeout_ms);

/* Send one message with n_fds descriptors attached. 0 or -errno. */
int rtio_sock_send(int sock, const void *buf, size_t len, const int *fds, unsigned n_fds);

/*
 * Receive one message, waiting at most timeout_ms (-1: forever, 0: do not
 * wait). Received descriptors (CLOEXEC) go to fds, their count to *n_fds
 * (in: capacity; extra descriptors are closed and reported as -EPROTO).
 * Returns the message length, 0 at EOF, or -errno (-ETIMEDOUT, -EMSGSIZE
 * for a truncated message).
 */
ssize_t rtio_sock_recv(int sock, void *buf, size_t len, int *fds, unsigned *n_fds,
		       int timeout_ms);

/*
 * The same, but a whole message whose descriptors the receiver could not
 * take (it is out of descriptors: the kernel truncated the control data and
 * dropped them) is still returned, without descriptors and with *fds_lost
 * set: the receiver can answer it instead of losing it.
 */
ssize_t rtio_sock_recv_lossy(int sock, void *buf, size_t len, int *fds, unsigned *n_fds,
			     int timeout_ms, bool *fds_lost);

#endif
