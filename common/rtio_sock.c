/*
 * Control-socket helpers: see rtio_sock.h.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rtio_sock.h"

int rtio_sock_connect(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret;

	(void)timeout_ms;	/* unix connect does not block on a listening socket */
	if (strlen(path) >= sizeof(sa.sun_path)) {
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	do {
		ret = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	} while (ret != 0 && errno == EINTR);
	if (ret != 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int rtio_sock_send(int sock, const void *buf, size_t len, const int *fds, unsigned n_fds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * RTIO_SOCK_MAX_FDS)];
	} cbuf;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (n_fds > RTIO_SOCK_MAX_FDS) {
		return -EINVAL;
	}
	if (n_fds > 0) {
		struct cmsghdr *cm;

		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		return -errno;
	}
	return (size_t)n == len ? 0 : -EMSGSIZE;
}

ssize_t rtio_sock_recv(int sock, void *buf, size_t len, int *fds, unsigned *n_fds,
		       int timeout_ms)
{
	return rtio_sock_recv_lossy(sock, buf, len, fds, n_fds, timeout_ms, NULL);
}

ssize_t rtio_sock_recv_lossy(int sock, void *buf, size_t len, int *fds, unsigned *n_fds,
			     int timeout_ms, bool *fds_lost)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * RTIO_SOCK_MAX_FDS)];
	} cbuf;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf) };
	unsigned cap = n_fds != NULL ? *n_fds : 0;
	unsigned got = 0;
	int bad = 0;
	ssize_t n;

	if (n_fds != NULL) {
		*n_fds = 0;
	}
	if (timeout_ms >= 0) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		int ret;

		do {
			ret = poll(&p, 1, timeout_ms);
		} while (ret < 0 && errno == EINTR);
		if (ret < 0) {
			return -errno;
		}
		if (ret == 0) {
			return -ETIMEDOUT;
		}
	}
	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | (timeout_ms >= 0 ? MSG_DONTWAIT : 0));
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		return -errno;
	}
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			unsigned k = (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (unsigned i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (got < cap) {
					fds[got++] = fd;
				} else {
					close(fd);
					bad = 1;
				}
			}
		}
	}
	if (n_fds != NULL) {
		*n_fds = got;
	}
	if (fds_lost != NULL) {
		*fds_lost = false;
	}
	/*
	 * Control data cut short with room to spare in our buffer: the kernel
	 * could not install the descriptors (EMFILE), not a sender sending more
	 * than the protocol allows.
	 */
	if (fds_lost != NULL && bad == 0 && (msg.msg_flags & MSG_CTRUNC) &&
	    !(msg.msg_flags & MSG_TRUNC) && got < RTIO_SOCK_MAX_FDS) {
		for (unsigned i = 0; i < got; i++) {
			close(fds[i]);
		}
		if (n_fds != NULL) {
			*n_fds = 0;
		}
		*fds_lost = true;
		return n;
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		bad = 2;
	}
	if (bad) {
		for (unsigned i = 0; i < got; i++) {
			close(fds[i]);
		}
		if (n_fds != NULL) {
			*n_fds = 0;
		}
		return bad == 2 ? -EMSGSIZE : -EPROTO;
	}
	return n;
}
