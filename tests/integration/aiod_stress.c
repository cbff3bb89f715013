/*
 * aiod stress test: many concurrent client sessions doing random reads and
 * writes through aiod, every byte checked; some clients killed mid-flight.
 * Afterwards aiod must hold no pinned block and no leaked descriptor.
 *
 *   aiod_stress SOCKET DIR [SESSIONS [SECONDS [KILLS]]]
 *
 * Layout of each test file (NFILES files of FILE_SIZE):
 *
 *   |<------ shared, read-only ------>|<- client 0 ->|<- client 1 ->| ...
 *   0                                 FILE_SIZE/2
 *
 * Every client reads random ranges of the shared half (content known from a
 * formula) and of its own write region of file (id % NFILES), whose content
 * it tracks in a local model; it writes random ranges of its own region only,
 * so no two clients race on the same bytes and every read is predictable.
 * Ranges are random in offset and length, crossing cache block boundaries.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rtio_client.h"

#define NFILES    4
#define FILE_SIZE (24u << 20)
#define MAX_IO    (3u << 20)

static uint8_t pattern(unsigned file, uint64_t off)
{
	uint64_t x = off * 0x9e3779b97f4a7c15ull + file * 0x632be59bd9b4e019ull;
	return (uint8_t)(x >> 56);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int make_files(const char *dir)
{
	uint8_t *buf = malloc(FILE_SIZE);

	if (buf == NULL) {
		return -1;
	}
	for (unsigned f = 0; f < NFILES; f++) {
		char path[512];
		int fd;

		for (uint64_t o = 0; o < FILE_SIZE; o++) {
			buf[o] = pattern(f, o);
		}
		snprintf(path, sizeof(path), "%s/stress%u.dat", dir, f);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || pwrite(fd, buf, FILE_SIZE, 0) != (ssize_t)FILE_SIZE || close(fd) != 0) {
			fprintf(stderr, "stress: creating %s: %s\n", path, strerror(errno));
			free(buf);
			return -1;
		}
	}
	free(buf);
	return 0;
}

/* One client session. Returns 0 when every byte it read was right. */
static int client(const char *sock, const char *dir, unsigned id, unsigned nclients, double secs)
{
	unsigned wf = id % NFILES;
	uint64_t per = (FILE_SIZE / 2) / ((nclients + NFILES - 1) / NFILES);
	uint64_t rbase = FILE_SIZE / 2 + (id / NFILES) * per;
	uint64_t seed = 0x1234567ull + id * 7919ull;
	struct rtio_file files[NFILES];
	struct rtio_client *c;
	uint8_t *model, *buf;
	double end = now_s() + secs;
	unsigned long ops = 0;
	int ret;

	per &= ~4095ull;
	model = malloc(per);
	buf = malloc(MAX_IO);
	if (model == NULL || buf == NULL) {
		return 1;
	}
	for (uint64_t o = 0; o < per; o++) {
		model[o] = pattern(wf, rbase + o);
	}
	ret = rtio_client_connect(NULL, sock, "stress", 10000, &c);
	if (ret < 0) {
		fprintf(stderr, "stress[%u]: connect: %s\n", id, strerror(-ret));
		return 1;
	}
	for (unsigned f = 0; f < NFILES; f++) {
		char path[512];
		int fd;

		snprintf(path, sizeof(path), "%s/stress%u.dat", dir, f);
		fd = open(path, O_RDWR);
		if (fd < 0) {
			fprintf(stderr, "stress[%u]: %s: %s\n", id, path, strerror(errno));
			return 1;
		}
		ret = rtio_client_open(c, fd, path, RTIO_OPEN_WRITABLE, &files[f]);
		close(fd);
		if (ret < 0) {
			fprintf(stderr, "stress[%u]: OPEN: %s\n", id, strerror(-ret));
			return 1;
		}
	}
	while (now_s() < end) {
		unsigned op = (unsigned)(rnd(&seed) % 10);
		ssize_t n;

		if (op < 5) {
			/* Read the shared half. */
			unsigned f = (unsigned)(rnd(&seed) % NFILES);
			uint64_t len = 1 + rnd(&seed) % MAX_IO;
			uint64_t off = rnd(&seed) % (FILE_SIZE / 2 - len);

			n = rtio_client_pread(c, files[f].file_id, buf, len, (off_t)off);
			if (n != (ssize_t)len) {
				fprintf(stderr, "stress[%u]: read %llu@%llu: %zd\n", id,
					(unsigned long long)len, (unsigned long long)off, n);
				return 1;
			}
			for (uint64_t i = 0; i < len; i++) {
				if (buf[i] != pattern(f, off + i)) {
					fprintf(stderr, "stress[%u]: file %u byte %llu wrong\n", id, f,
						(unsigned long long)(off + i));
					return 1;
				}
			}
		} else if (op < 8) {
			/* Read back our own region: must show our latest writes. */
			uint64_t len = 1 + rnd(&seed) % (per < MAX_IO ? per - 1 : MAX_IO);
			uint64_t off = rnd(&seed) % (per - len);

			n = rtio_client_pread(c, files[wf].file_id, buf, len, (off_t)(rbase + off));
			if (n != (ssize_t)len || memcmp(buf, model + off, len) != 0) {
				fprintf(stderr, "stress[%u]: own region read %llu@%llu: %zd, %s\n", id,
					(unsigned long long)len, (unsigned long long)(rbase + off), n,
					n == (ssize_t)len ? "content differs" : "short");
				return 1;
			}
		} else {
			uint64_t len = 1 + rnd(&seed) % (per < MAX_IO ? per - 1 : MAX_IO);
			uint64_t off = rnd(&seed) % (per - len);
			uint8_t v = (uint8_t)rnd(&seed);

			for (uint64_t i = 0; i < len; i++) {
				buf[i] = (uint8_t)(v + i * 31);
			}
			n = rtio_client_pwrite(c, files[wf].file_id, buf, len, (off_t)(rbase + off));
			if (n != (ssize_t)len) {
				fprintf(stderr, "stress[%u]: write %llu@%llu: %zd\n", id,
					(unsigned long long)len, (unsigned long long)(rbase + off), n);
				return 1;
			}
			memcpy(model + off, buf, len);
		}
		ops++;
	}
	/* What aiod acknowledged must be in the file itself, not only in its cache. */
	{
		char path[512];
		int fd;

		snprintf(path, sizeof(path), "%s/stress%u.dat", dir, wf);
		fd = open(path, O_RDONLY);
		if (fd < 0 || pread(fd, buf, per < MAX_IO ? per : MAX_IO, (off_t)rbase) < 0 ||
		    memcmp(buf, model, per < MAX_IO ? per : MAX_IO) != 0) {
			fprintf(stderr, "stress[%u]: file content differs from acknowledged writes\n",
				id);
			return 1;
		}
		close(fd);
	}
	talloc_free(c);
	printf("stress[%u]: %lu operations ok\n", id, ops);
	fflush(stdout);
	return 0;
}

static int count_fds(pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (d == NULL) {
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n;
}

static int aiod_stats(const char *sock, struct rtio_stats_rep *st)
{
	struct rtio_client *c;
	int ret = rtio_client_connect(NULL, sock, "stress-check", 5000, &c);

	if (ret < 0) {
		return ret;
	}
	ret = rtio_client_stats(c, st);
	talloc_free(c);
	return ret;
}

int main(int argc, char **argv)
{
	const char *sock, *dir;
	unsigned n = 64, kills = 8;
	double secs = 5;
	pid_t *pids;
	pid_t aiod_pid = 0;
	int fds_before, fds_after, failed = 0, killed = 0;
	struct rtio_stats_rep st;
	uint64_t seed = 42;

	if (argc < 4) {
		fprintf(stderr, "usage: aiod_stress SOCKET DIR AIOD_PID [SESSIONS [SECONDS [KILLS]]]\n");
		return 2;
	}
	sock = argv[1];
	dir = argv[2];
	aiod_pid = (pid_t)atoi(argv[3]);
	if (argc > 4) {
		n = (unsigned)atoi(argv[4]);
	}
	if (argc > 5) {
		secs = atof(argv[5]);
	}
	if (argc > 6) {
		kills = (unsigned)atoi(argv[6]);
	}
	if (n == 0 || n > 1000 || kills > n) {
		fprintf(stderr, "stress: bad SESSIONS/KILLS\n");
		return 2;
	}
	if (make_files(dir) != 0) {
		return 1;
	}
	fds_before = count_fds(aiod_pid);
	pids = calloc(n, sizeof(*pids));
	if (pids == NULL) {
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0) {
			_exit(client(sock, dir, i, n, secs));
		}
	}
	/* Kill some clients at random moments while they have requests in flight. */
	for (unsigned k = 0; k < kills; k++) {
		unsigned victim = (unsigned)(rnd(&seed) % n);
		usleep((useconds_t)(rnd(&seed) % (unsigned)(secs * 1e6 / (kills + 1))));
		if (pids[victim] > 0 && kill(pids[victim], SIGKILL) == 0) {
			pids[victim] = -pids[victim];
		}
	}
	for (unsigned i = 0; i < n; i++) {
		int status;
		pid_t p = pids[i] > 0 ? pids[i] : -pids[i];

		if (waitpid(p, &status, 0) != p) {
			failed++;
			continue;
		}
		if (pids[i] < 0) {
			killed++;
			continue;	/* killed on purpose; it may have finished first */
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "stress: client %u failed\n", i);
			failed++;
		}
	}
	/* aiod learns about deaths through pidfds: give the event loop a moment. */
	for (int tries = 0; tries < 50; tries++) {
		if (aiod_stats(sock, &st) == 0 && st.sessions == 1 && st.blocks_pinned == 0) {
			break;
		}
		usleep(100000);
	}
	if (aiod_stats(sock, &st) != 0) {
		fprintf(stderr, "stress: aiod does not answer after the run\n");
		return 1;
	}
	/* Our stats session closes asynchronously: wait for aiod to settle. */
	for (int tries = 0; tries < 40; tries++) {
		fds_after = count_fds(aiod_pid);
		if (fds_after == fds_before) {
			break;
		}
		usleep(50000);
	}
	printf("stress: %u sessions, %d killed, %d failed; aiod: sessions=%llu pinned=%llu "
	       "requests=%llu hits=%llu misses=%llu fds %d -> %d\n",
	       n, killed, failed, (unsigned long long)st.sessions,
	       (unsigned long long)st.blocks_pinned, (unsigned long long)st.requests,
	       (unsigned long long)st.cache_hits, (unsigned long long)st.cache_misses, fds_before,
	       fds_after);
	if (st.sessions != 1) {
		fprintf(stderr, "stress: aiod still holds %llu sessions besides ours\n",
			(unsigned long long)st.sessions - 1);
		failed++;
	}
	if (st.blocks_pinned != 0) {
		fprintf(stderr, "stress: %llu cache blocks still pinned\n",
			(unsigned long long)st.blocks_pinned);
		failed++;
	}
	/* Our stats connection is closed again by now: same descriptors as before. */
	if (fds_before < 0 || fds_after != fds_before) {
		fprintf(stderr, "stress: aiod descriptors %d before, %d after\n", fds_before,
			fds_after);
		failed++;
	}
	free(pids);
	return failed ? 1 : 0;
}
