/*
 * zc_probe: does MSG_ZEROCOPY save the sender's CPU on this machine's paths?
 *
 * The question behind issue 15's choice of a zero-copy send from aiod's
 * cache: the kernel copies "zero-copy" pages anyway when the receiver is a
 * local socket (loopback, or a veth pair into another network namespace:
 * skb_orphan_frags_rx), and says so in each completion with
 * SO_EE_CODE_ZEROCOPY_COPIED. This measures it instead of trusting it.
 *
 *   zc_probe recv PORT                       accept one connection, read to EOF
 *   zc_probe send HOST PORT MIB copy|zc      send MIB MiB in 1 MiB writes
 *
 * The sender reports wall time, its own CPU (user + system, getrusage), and
 * for zc the completions: how many ranges, how many the kernel copied anyway.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define CHUNK (1u << 20)
#define BUF_CHUNKS 64	/* 64 MiB source buffer, like cache blocks */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_self(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0) {
		return 0;
	}
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static int do_recv(int port)
{
	int ls = socket(AF_INET6, SOCK_STREAM, 0), one = 1, s;
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
				  .sin6_addr = IN6ADDR_ANY_INIT };
	static char buf[CHUNK];
	unsigned long long total = 0;
	ssize_t n;

	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 1) != 0) {
		perror("zc_probe recv: listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	s = accept(ls, NULL, NULL);
	if (s < 0) {
		perror("zc_probe recv: accept");
		return 1;
	}
	while ((n = read(s, buf, sizeof(buf))) > 0) {
		total += (unsigned long long)n;
	}
	if (n < 0) {
		perror("zc_probe recv: read");
		return 1;
	}
	printf("received %llu bytes\n", total);
	close(s);
	close(ls);
	return 0;
}

/* Completions on the error queue: ranges done, of them copied by the kernel. */
struct zc_state {
	unsigned long long sent_calls, done_calls, copied_calls;
};

static int reap(int s, struct zc_state *z, bool wait)
{
	for (;;) {
		char control[128];
		struct msghdr msg = { .msg_control = control, .msg_controllen = sizeof(control) };
		struct cmsghdr *cm;
		struct pollfd p = { .fd = s, .events = 0 };

		if (recvmsg(s, &msg, MSG_ERRQUEUE) < 0) {
			if (errno != EAGAIN) {
				perror("zc_probe: recvmsg(MSG_ERRQUEUE)");
				return -1;
			}
			if (!wait || z->done_calls == z->sent_calls) {
				return 0;
			}
			if (poll(&p, 1, 1000) < 0 && errno != EINTR) {
				return -1;
			}
			continue;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
			struct sock_extended_err ee;

			if (!((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
			      (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR))) {
				continue;
			}
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			if (ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY) {
				continue;
			}
			/* [ee_info, ee_data]: the sends this completion covers */
			z->done_calls += ee.ee_data - ee.ee_info + 1;
			if (ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) {
				z->copied_calls += ee.ee_data - ee.ee_info + 1;
			}
		}
	}
}

static int do_send(const char *host, int port, unsigned mib, bool zc)
{
	int s = socket(strchr(host, ':') ? AF_INET6 : AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
	struct zc_state z = { 0 };
	uint8_t *buf;
	double t0, c0, t1, c1;

	buf = mmap(NULL, (size_t)CHUNK * BUF_CHUNKS, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s < 0 || buf == MAP_FAILED) {
		perror("zc_probe send: socket/mmap");
		return 1;
	}
	memset(buf, 0x5a, (size_t)CHUNK * BUF_CHUNKS);
	if (zc && setsockopt(s, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) != 0) {
		perror("zc_probe send: SO_ZEROCOPY");
		return 1;
	}
	if (strchr(host, ':') ? inet_pton(AF_INET6, host, &a6.sin6_addr) != 1 :
				inet_pton(AF_INET, host, &a4.sin_addr) != 1) {
		fprintf(stderr, "zc_probe send: bad address %s\n", host);
		return 1;
	}
	if ((strchr(host, ':') ? connect(s, (struct sockaddr *)&a6, sizeof(a6)) :
				 connect(s, (struct sockaddr *)&a4, sizeof(a4))) != 0) {
		perror("zc_probe send: connect");
		return 1;
	}
	t0 = now();
	c0 = cpu_self();
	for (unsigned i = 0; i < mib; i++) {
		size_t off = 0;
		const uint8_t *p = buf + (size_t)(i % BUF_CHUNKS) * CHUNK;

		while (off < CHUNK) {
			ssize_t n = send(s, p + off, CHUNK - off, zc ? MSG_ZEROCOPY : 0);

			if (n < 0 && errno == ENOBUFS && zc) {
				/* optmem for notifications exhausted: reap, retry */
				if (reap(s, &z, false) != 0) {
					return 1;
				}
				continue;
			}
			if (n < 0) {
				perror("zc_probe send: send");
				return 1;
			}
			off += (size_t)n;
			if (zc) {
				z.sent_calls++;
			}
		}
		if (zc && reap(s, &z, false) != 0) {
			return 1;
		}
	}
	shutdown(s, SHUT_WR);
	if (zc && reap(s, &z, true) != 0) {
		return 1;
	}
	t1 = now();
	c1 = cpu_self();
	printf("{\"mode\":\"%s\",\"mib\":%u,\"seconds\":%.4f,\"sender_cpu\":%.4f,"
	       "\"zc_sends\":%llu,\"zc_done\":%llu,\"zc_copied\":%llu}\n",
	       zc ? "zc" : "copy", mib, t1 - t0, c1 - c0, z.sent_calls, z.done_calls,
	       z.copied_calls);
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "recv") == 0) {
		return do_recv(atoi(argv[2]));
	}
	if (argc == 6 && strcmp(argv[1], "send") == 0 &&
	    (strcmp(argv[5], "copy") == 0 || strcmp(argv[5], "zc") == 0)) {
		return do_send(argv[2], atoi(argv[3]), (unsigned)atoi(argv[4]),
			       strcmp(argv[5], "zc") == 0);
	}
	fprintf(stderr, "usage: zc_probe recv PORT | zc_probe send HOST PORT MIB copy|zc\n");
	return 2;
}
