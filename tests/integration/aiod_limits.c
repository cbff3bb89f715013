/*
 * aiod at its limits: out of descriptors, out of sessions. What must hold:
 * aiod keeps answering, does not spin, tells clients why it refuses them.
 *
 *   aiod_limits emfile SOCKET DIR AIOD_PID SECONDS
 *       Run aiod with a low RLIMIT_NOFILE. Open sessions and register files
 *       until aiod has no descriptor left (registrations answered EMFILE,
 *       sessions alive), leave clients waiting in its backlog, then for
 *       SECONDS: a session opened first must get STATS answered quickly and
 *       aiod must use little CPU. Then give descriptors back: a new client
 *       gets in.
 *   aiod_limits full SOCKET N
 *       aiod with [global] max_sessions = N, all N held by other clients:
 *       STATS on a monitor connection works, a further session is refused
 *       with EUSERS, and 50 more attempts are refused the same way.
 *   aiod_limits hold SOCKET SECONDS
 *       Hold one session for SECONDS (prints "ready" once connected).
 *   aiod_limits many SOCKET FILE N MIN_SOCKET
 *       Open N sessions at once, each reading and checking a different 64 KiB
 *       of FILE (at least N * 64 KiB) through aiod, twice, with all N open.
 *       At least MIN_SOCKET of them must have been given a socket pair
 *       (aiod out of message queues) and every read must be right.
 *
 * Prints "ok ..." / "FAIL ..." lines; exit 0 when nothing failed.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtio_client.h"
#include "rtio_sock.h"

#define MAX_SESSIONS 64
#define MAX_WAITING  8

#include "aiod_check.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) pid used so far, -1 if unknown. */
static double cpu_s(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long utime, stime;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (f == NULL) {
		return -1;
	}
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* After "(comm)": state is field 3, utime 14, stime 15. */
	p = p != NULL ? strrchr(buf, ')') : NULL;
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&utime, &stime) != 2) {
		return -1;
	}
	return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* STATS on c; how long it took in *ms. */
static int timed_stats(struct rtio_client *c, double *ms)
{
	struct rtio_stats_rep st;
	double t0 = now_s();
	int ret = rtio_client_stats(c, &st);

	*ms = (now_s() - t0) * 1000;
	return ret;
}

/* A monitor connection answers STATS within timeout_ms. */
static int monitor_stats(const char *sock, int timeout_ms, struct rtio_stats_rep *st)
{
	struct rtio_client *m;
	int ret = rtio_client_monitor_connect(NULL, sock, timeout_ms, &m);

	if (ret == 0) {
		ret = rtio_client_stats(m, st);
		talloc_free(m);
	}
	return ret;
}

static int register_file(struct rtio_client *c, int fd)
{
	struct rtio_file f;

	return rtio_client_open(c, fd, "limits.dat", RTIO_OPEN_WRITABLE, &f);
}

static int cmd_emfile(const char *sock, const char *dir, int aiod_pid, int seconds)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *observer = NULL, *c[MAX_SESSIONS];
	struct rtio_stats_rep st;
	unsigned nsess = 0, opened = 0, refused = 0, dead = 0;
	int waiting[MAX_WAITING], nwaiting = 0;
	char path[512];
	double worst_ms = 0, cpu0, cpu1, t0, ms;
	int fd, ret;

	/* A file to register again and again: every OPEN costs aiod a descriptor. */
	snprintf(path, sizeof(path), "%s/limits.dat", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "0123456789", 10) != 10) {
		perror(path);
		return 1;
	}
	ret = rtio_client_connect(mem, sock, "limits-observer", 5000, &observer);
	CHECK(ret == 0, "observer session (%s)", strerror(-ret));
	if (ret != 0) {
		return 1;
	}
	/* Sessions and registrations until aiod has no descriptor left for either. */
	while (nsess < MAX_SESSIONS) {
		unsigned n = 0;

		ret = rtio_client_connect(mem, sock, "limits", 1000, &c[nsess]);
		if (ret != 0) {
			printf("     session %u refused: %s\n", nsess, strerror(-ret));
			break;
		}
		while ((ret = register_file(c[nsess], fd)) == 0) {
			n++;
		}
		opened += n;
		refused += ret == -EMFILE;
		if (rtio_client_alive(c[nsess])) {
			nsess++;
			continue;
		}
		/*
		 * aiod dropped the session over it (an aiod from before EMFILE
		 * answers): that gave its descriptors back. Take exactly as many
		 * again, so that it is out of them once more, and go on.
		 */
		printf("     session %u dropped after %u registrations: %s\n", nsess, n,
		       strerror(-ret));
		dead++;
		TALLOC_FREE(c[nsess]);
		if (rtio_client_connect(mem, sock, "limits", 1000, &c[nsess]) == 0) {
			for (unsigned i = 0; i < n && register_file(c[nsess], fd) == 0; i++) {
			}
			nsess++;
		}
		break;
	}
	printf("     %u sessions, %u files registered, %u registrations refused\n", nsess, opened,
	       refused);
	CHECK(refused > 0, "registrations beyond aiod's descriptors are refused with EMFILE");
	CHECK(dead == 0, "a refused registration leaves the session alive (%u died)", dead);
	/* Clients that aiod cannot accept now: they wait in its backlog. */
	for (int i = 0; i < MAX_WAITING; i++) {
		waiting[nwaiting] = rtio_sock_connect(sock, 1000);
		nwaiting += waiting[nwaiting] >= 0;
	}
	/* aiod out of descriptors with clients waiting: it must not spin, and must answer. */
	cpu0 = cpu_s(aiod_pid);
	t0 = now_s();
	while (now_s() - t0 < seconds) {
		ret = timed_stats(observer, &ms);
		if (ret != 0) {
			break;
		}
		worst_ms = ms > worst_ms ? ms : worst_ms;
		usleep(200000);
	}
	cpu1 = cpu_s(aiod_pid);
	CHECK(ret == 0 && worst_ms < 500, "STATS answered throughout (worst %.1f ms)", worst_ms);
	CHECK(cpu0 >= 0 && cpu1 >= 0 && (cpu1 - cpu0) / seconds < 0.2,
	      "aiod used %.0f %% of a CPU meanwhile", 100 * (cpu1 - cpu0) / seconds);
	/* Descriptors back: the waiting clients get in, and monitoring works. */
	for (unsigned i = 0; i < nsess; i++) {
		TALLOC_FREE(c[i]);
	}
	for (int i = 0; i < nwaiting; i++) {
		close(waiting[i]);
	}
	ret = monitor_stats(sock, 3000, &st);
	CHECK(ret == 0, "a new client gets in once descriptors are back (%s)", strerror(-ret));
	close(fd);
	unlink(path);
	talloc_free(mem);
	return failures ? 1 : 0;
}

static int cmd_full(const char *sock, unsigned n)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c;
	struct rtio_stats_rep st;
	unsigned refused = 0;
	int ret;

	memset(&st, 0, sizeof(st));
	ret = monitor_stats(sock, 5000, &st);
	CHECK(ret == 0 && st.sessions == n, "STATS with every session taken (%s, sessions=%llu)",
	      strerror(-ret), (unsigned long long)st.sessions);
	ret = rtio_client_connect(mem, sock, "limits", 5000, &c);
	CHECK(ret == -EUSERS, "one more session is refused with EUSERS (%s)", strerror(-ret));
	/* A crowd of clients trying anyway: each refused, none hanging, aiod fine. */
	for (int i = 0; i < 50; i++) {
		ret = rtio_client_connect(mem, sock, "limits", 5000, &c);
		refused += ret == -EUSERS;
		if (ret == 0) {
			talloc_free(c);
		}
	}
	CHECK(refused == 50, "50 more attempts refused with EUSERS (%u)", refused);
	ret = monitor_stats(sock, 5000, &st);
	CHECK(ret == 0 && st.sessions == n, "STATS still answered (%s)", strerror(-ret));
	talloc_free(mem);
	return failures ? 1 : 0;
}

static int cmd_hold(const char *sock, int seconds)
{
	struct rtio_client *c;
	int ret = rtio_client_connect(NULL, sock, "limits-hold", 5000, &c);

	if (ret != 0) {
		printf("FAIL connect: %s\n", strerror(-ret));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned)seconds);
	talloc_free(c);
	return 0;
}

/* Read 64 KiB at off through c and compare with the file itself. */
static int read_check(struct rtio_client *c, int fd, uint64_t file_id, off_t off)
{
	static char got[65536], want[65536];
	ssize_t n = rtio_client_pread(c, file_id, got, sizeof(got), off);

	if (n != (ssize_t)sizeof(got) || pread(fd, want, sizeof(want), off) != (ssize_t)sizeof(want)) {
		return n < 0 ? (int)n : -EIO;
	}
	return memcmp(got, want, sizeof(got)) == 0 ? 0 : -EILSEQ;
}

static int cmd_many(const char *sock, const char *path, unsigned n, unsigned min_socket)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client **c = talloc_zero_array(mem, struct rtio_client *, n);
	struct rtio_file *rf = talloc_zero_array(mem, struct rtio_file, n);
	unsigned connected = 0, on_socket = 0, good = 0;
	int fd = open(path, O_RDONLY);
	int first_err = 0;

	if (c == NULL || rf == NULL || fd < 0) {
		printf("FAIL setup: %s\n", fd < 0 ? strerror(errno) : "out of memory");
		talloc_free(mem);
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		int ret = rtio_client_connect(mem, sock, "limits-many", 5000, &c[i]);

		if (ret == 0) {
			ret = rtio_client_open(c[i], fd, "many", 0, &rf[i]);
		}
		if (ret != 0) {
			first_err = first_err != 0 ? first_err : ret;
			c[i] = NULL;
			continue;
		}
		connected++;
		on_socket += rtio_client_uses_socket_queue(c[i]);
	}
	/* Twice with everything open: the second pass meets aiod's cache. */
	for (unsigned pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < n; i++) {
			int ret = c[i] != NULL ? read_check(c[i], fd, rf[i].file_id, (off_t)i * 65536) : 0;

			if (c[i] != NULL && ret == 0) {
				good++;
			} else if (ret != 0) {
				first_err = first_err != 0 ? first_err : ret;
			}
		}
	}
	CHECK(connected == n, "%u of %u sessions connected and registered the file (first error: %s)",
	      connected, n, first_err != 0 ? strerror(-first_err) : "none");
	CHECK(on_socket >= min_socket, "%u sessions on socket pairs, %u on message queues (want >= %u "
	      "socket pairs)", on_socket, connected - on_socket, min_socket);
	CHECK(good == 2 * n, "%u of %u reads returned the file's bytes", good, 2 * n);
	close(fd);
	talloc_free(mem);
	return failures == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "emfile") == 0) {
		return cmd_emfile(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	}
	if (argc == 4 && strcmp(argv[1], "full") == 0) {
		return cmd_full(argv[2], (unsigned)atoi(argv[3]));
	}
	if (argc == 4 && strcmp(argv[1], "hold") == 0) {
		return cmd_hold(argv[2], atoi(argv[3]));
	}
	if (argc == 6 && strcmp(argv[1], "many") == 0) {
		return cmd_many(argv[2], argv[3], (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]));
	}
	fprintf(stderr, "usage: aiod_limits emfile SOCKET DIR AIOD_PID SECONDS\n"
			"       aiod_limits full SOCKET N\n"
			"       aiod_limits hold SOCKET SECONDS\n"
			"       aiod_limits many SOCKET FILE N MIN_SOCKET\n");
	return 2;
}
