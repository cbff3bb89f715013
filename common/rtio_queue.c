/*
 * A session's data queues: POSIX message queues, or a socket pair where aiod
 * ran out of message queues (see rtio_queue.h).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <mqueue.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "rtio_queue.h"

bool rtio_queue_is_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

int rtio_queue_send(int fd, bool sock, const void *msg, size_t len)
{
	ssize_t n;

	if (!sock) {
		return mq_send((mqd_t)fd, msg, len, 0);
	}
	n = send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0) {
		return -1;
	}
	if ((size_t)n != len) {
		/* SEQPACKET sends whole records or nothing: anything else is a broken peer */
		errno = EPROTO;
		return -1;
	}
	return 0;
}

ssize_t rtio_queue_recv(int fd, bool sock, void *buf, size_t len)
{
	ssize_t n;

	if (!sock) {
		return mq_receive((mqd_t)fd, buf, len, NULL);
	}
	/* MSG_TRUNC: the record's real length, so an oversized one is refused, not cut */
	n = recv(fd, buf, len, MSG_DONTWAIT | MSG_TRUNC);
	if (n == 0) {
		errno = ECONNRESET;
		return -1;
	}
	if (n > 0 && (size_t)n > len) {
		errno = EMSGSIZE;
		return -1;
	}
	return n;
}
