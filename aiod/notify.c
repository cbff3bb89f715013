/*
 * The sd_notify protocol (notify.h): one datagram of newline separated
 * VAR=value lines to the AF_UNIX socket named by $NOTIFY_SOCKET. It is
 * this small and stable (systemd documents it as an interface, sd_notify(3))
 * that linking libsystemd for it would cost aiod a dependency for nothing.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

/* $NOTIFY_SOCKET as an address; its length, 0 if unusable. */
static socklen_t notify_address(const char *name, struct sockaddr_un *sa)
{
	size_t len = strlen(name);

	if ((name[0] != '/' && name[0] != '@') || len < 2 || len > sizeof(sa->sun_path)) {
		return 0;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, name, len);
	if (name[0] == '@') {
		sa->sun_path[0] = '\0';	/* abstract namespace */
	}
	/* The length says where the name ends: an abstract name has no NUL, a path needs none. */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
}

int aiod_notify(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t salen;
	ssize_t sent;
	int fd, err;

	if (name == NULL || name[0] == '\0') {
		return 0;
	}
	salen = notify_address(name, &sa);
	if (salen == 0) {
		return -EINVAL;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	err = sent < 0 ? -errno : ((size_t)sent == strlen(state) ? 0 : -EMSGSIZE);
	close(fd);
	return err;
}

uint64_t aiod_notify_watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	char *end;
	unsigned long long v;

	if (usec == NULL || usec[0] < '0' || usec[0] > '9') {
		return 0;
	}
	if (pid != NULL && strtol(pid, NULL, 10) != (long)getpid()) {
		return 0;	/* meant for another process (we were started by a wrapper) */
	}
	errno = 0;
	v = strtoull(usec, &end, 10);
	return errno == 0 && *end == '\0' ? v : 0;
}
