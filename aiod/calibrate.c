/*
 * aiod --calibrate DIR: measure what the device under DIR delivers, with
 * O_DIRECT (what aiod's read-ahead does), and write the profile that
 * admission control and the derived settings read (profile.h, tuning.c):
 *
 *   - random and sequential reads of 64 KiB .. 16 MiB, one at a time: how
 *     large a request must be for a seek not to matter (io_size), and the
 *     capacity admission control counts on;
 *   - the time of one random 64 KiB read: the cost of a request (seek and
 *     latency);
 *   - random reads of the io_size those give, with 1, 2, 4 and 8 in flight:
 *     whether parallel requests help (an SSD or a virtual disk: yes, a single
 *     spindle: no), which sets queue_depth.
 *
 * A rate of one request at a time comes from the median request's time
 * (aiod_calibrate_median() says why).
 *
 * Every measurement runs for the same time, so the whole takes a known time
 * (printed before and after).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "aiod.h"
#include "calibrate.h"
#include "profile.h"
#include "tuning.h"

static const uint32_t sizes[] = { 64u << 10, 256u << 10, 1u << 20, 2u << 20, 4u << 20, 8u << 20,
				  16u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
static const uint32_t inflight[] = { 1, 2, 4, 8 };
#define NINFLIGHT (sizeof(inflight) / sizeof(inflight[0]))

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Make sure the test file exists with real blocks (not a hole) of file_size. */
static int prepare_file(const char *path, uint64_t file_size)
{
	struct stat st;
	uint8_t *buf;
	int fd;

	if (stat(path, &st) == 0 && (uint64_t)st.st_size >= file_size &&
	    (uint64_t)st.st_blocks * 512 >= file_size) {
		return 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "aiod: calibrate: creating %s: %s\n", path, strerror(errno));
		return -errno;
	}
	buf = malloc(1 << 20);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	for (size_t i = 0; i < (1 << 20); i++) {
		buf[i] = (uint8_t)(i * 131);
	}
	printf("calibrate: writing a %llu MiB test file %s\n", (unsigned long long)(file_size >> 20),
	       path);
	fflush(stdout);
	for (uint64_t off = 0; off < file_size; off += 1 << 20) {
		if (pwrite(fd, buf, 1 << 20, (off_t)off) != 1 << 20) {
			fprintf(stderr, "aiod: calibrate: writing %s: %s\n", path, strerror(errno));
			free(buf);
			close(fd);
			return -EIO;
		}
	}
	free(buf);
	if (fsync(fd) != 0 || close(fd) != 0) {
		return -errno;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The time a request of the device takes: the median of the n measured
 * (sorted in place), not their mean. A request that something else on the
 * machine slowed (another process on the CPU, a VM's stolen time, the
 * emulated disk's FUSE daemon preempted) is not what the device costs, and
 * a few of them moved the mean of a 2 s point by up to 6 % between two
 * measurements of the same disk in one calibration (bench/results/
 * rt-20261129-0019.md: random 16 MiB 131.8 MiB/s, then 138.7 at 1 in
 * flight), which moved the count admission admits by one stream. Two busy
 * CPU loops next to the calibration moved the mean of 16 MiB reads 1 % and
 * their median not at all. A disk's own slow requests (long seeks) are not
 * a few outliers but part of its spread, so they still move the median.
 */
double aiod_calibrate_median(double *t, size_t n)
{
	if (n == 0) {
		return 0;
	}
	qsort(t, n, sizeof(t[0]), cmp_double);
	return n % 2 == 1 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/*
 * Bytes/s reading size-byte requests one at a time for about seconds, from
 * the median request (aiod_calibrate_median()); *median_s that request's time.
 */
static double measure(int fd, void *buf, uint64_t file_size, uint32_t size, bool random,
		      double seconds, uint64_t *seed, double *median_s)
{
	uint64_t slots = file_size / size;
	uint64_t slot = xorshift(seed) % slots;
	double t0 = now_s(), start = t0, end, *times = NULL;
	size_t n = 0, cap = 0;

	errno = 0;
	do {
		if (random) {
			slot = xorshift(seed) % slots;
		} else if (++slot >= slots) {
			slot = 0;
		}
		if (n == cap) {
			double *more = realloc(times, (cap = cap != 0 ? 2 * cap : 256) * sizeof(*times));

			if (more == NULL) {
				free(times);
				errno = ENOMEM;
				return -1;
			}
			times = more;
		}
		if (pread(fd, buf, size, (off_t)(slot * size)) != (ssize_t)size) {
			free(times);
			errno = errno != 0 ? errno : EIO;
			return -1;
		}
		end = now_s();
		times[n++] = end - start;
		start = end;
	} while (end - t0 < seconds || n < 3);
	*median_s = aiod_calibrate_median(times, n);
	free(times);
	if (*median_s <= 0) {
		/* faster than the clock can tell apart: the mean, over the whole point */
		*median_s = (end - t0) / n;
	}
	return (double)size / *median_s;
}

/* One of the requests kept in flight by measure_parallel(). */
struct worker {
	pthread_t thread;
	int fd;
	uint64_t file_size;
	uint32_t size;
	double until;
	uint64_t seed;
	void *buf;
	uint64_t bytes;
	double end;
	int err;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	uint64_t slots = w->file_size / w->size;

	errno = 0;	/* per thread: a short read leaves it 0, reported as EIO */
	do {
		uint64_t slot = xorshift(&w->seed) % slots;

		if (pread(w->fd, w->buf, w->size, (off_t)(slot * w->size)) != (ssize_t)w->size) {
			w->err = errno != 0 ? errno : EIO;
			break;
		}
		w->bytes += w->size;
		w->end = now_s();
	} while (w->end < w->until);
	return NULL;
}

/*
 * Bytes/s of random size-byte reads with n in flight (a thread each), for
 * about seconds; the time runs until the last request in flight ended.
 */
static double measure_parallel(int fd, uint64_t file_size, uint32_t size, uint32_t n,
			       double seconds)
{
	struct worker w[8];
	double t0 = now_s(), end = t0;
	uint64_t bytes = 0;
	uint32_t started = 0;
	int err = 0;

	for (; started < n && started < 8; started++) {
		w[started] = (struct worker){ .fd = fd, .file_size = file_size, .size = size,
					      .until = t0 + seconds,
					      .seed = 0x5eed + 7919 * (started + 1) };
		if (posix_memalign(&w[started].buf, 4096, size) != 0) {
			err = ENOMEM;
			break;
		}
		if (pthread_create(&w[started].thread, NULL, worker_run, &w[started]) != 0) {
			free(w[started].buf);
			err = EAGAIN;
			break;
		}
	}
	for (uint32_t i = 0; i < started; i++) {
		pthread_join(w[i].thread, NULL);
		free(w[i].buf);
		bytes += w[i].bytes;
		end = w[i].end > end ? w[i].end : end;
		err = err != 0 ? err : w[i].err;
	}
	if (err != 0 || end <= t0) {
		errno = err != 0 ? err : EIO;
		return -1;
	}
	return (double)bytes / (end - t0);
}

/* Sizes one at a time (random, sequential), then parallel reads at the io_size they give. */
static int measure_all(const struct aiod_config *cfg, int fd, struct aiod_profile *p)
{
	uint64_t seed = 0x5eed;
	double median_s = 0;
	void *buf;

	if (posix_memalign(&buf, 4096, sizes[NSIZES - 1]) != 0) {
		return -ENOMEM;
	}
	printf("%10s %14s %14s\n", "size", "random MiB/s", "sequential MiB/s");
	for (size_t i = 0; i < NSIZES; i++) {
		double r[2];

		for (int k = 0; k < 2; k++) {
			r[k] = measure(fd, buf, p->file_size, sizes[i], k == 0, p->seconds_per_point,
				       &seed, &median_s);
			if (r[k] < 0) {
				int err = errno;

				free(buf);
				return -err;
			}
			if (i == 0 && k == 0) {
				p->request_us = (uint32_t)(median_s * 1e6);
			}
		}
		p->points[p->npoints++] = (struct aiod_profile_point){ sizes[i], (uint64_t)r[0],
								       (uint64_t)r[1] };
		printf("%9uK %14.1f %14.1f\n", sizes[i] >> 10, r[0] / 1048576.0, r[1] / 1048576.0);
		fflush(stdout);
	}
	free(buf);
	printf("calibrate: one random %u KiB read takes %.2f ms (seek and latency)\n",
	       sizes[0] >> 10, p->request_us / 1e3);
	p->parallel_size = aiod_tuning_io_size(p, cfg->block_size);
	printf("%10s %14s   (random %u KiB reads)\n", "in flight", "MiB/s", p->parallel_size >> 10);
	for (size_t i = 0; i < NINFLIGHT; i++) {
		double r = measure_parallel(fd, p->file_size, p->parallel_size, inflight[i],
					    p->seconds_per_point);

		if (r < 0) {
			return -errno;
		}
		p->parallel[p->nparallel++] = (struct aiod_profile_parallel){ inflight[i],
									      (uint64_t)r };
		printf("%10u %14.1f\n", inflight[i], r / 1048576.0);
		fflush(stdout);
	}
	return 0;
}

int aiod_calibrate(const struct aiod_config *cfg, const char *dir, const char *out_path,
		   uint64_t file_size, double seconds_per_point)
{
	struct aiod_profile p = { .dir = dir, .file_size = file_size,
				  .seconds_per_point = seconds_per_point };
	struct aiod_tuning t;
	char path[4096], when[64], line[1024];
	time_t now = time(NULL);
	double t0;
	FILE *out;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/.aiod-calibrate.dat", dir);
	ret = prepare_file(path, file_size);
	if (ret != 0) {
		return ret;
	}
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "aiod: calibrate: %s: O_DIRECT: %s (the profile must measure the "
				"device, not the page cache)\n", path, strerror(errno));
		return -errno;
	}
	printf("calibrate: %s, O_DIRECT, %zu measurements of %.1f s: about %.0f s\n", dir,
	       2 * NSIZES + NINFLIGHT, seconds_per_point,
	       (2 * NSIZES + NINFLIGHT) * seconds_per_point);
	fflush(stdout);
	t0 = now_s();
	ret = measure_all(cfg, fd, &p);
	close(fd);
	if (ret != 0) {
		fprintf(stderr, "aiod: calibrate: reading %s: %s\n", path, strerror(-ret));
		return ret;
	}
	p.seconds_total = now_s() - t0;
	printf("calibrate: measured in %.1f s\n", p.seconds_total);
	{
		/* The default /var/lib/aiod is not made by make install: make it here. */
		char parent[4096];
		char *slash;

		snprintf(parent, sizeof(parent), "%s", out_path);
		slash = strrchr(parent, '/');
		if (slash != NULL && slash != parent) {
			*slash = '\0';
			(void)mkdir(parent, 0755);	/* fopen below says what went wrong */
		}
	}
	out = fopen(out_path, "w");
	if (out == NULL) {
		fprintf(stderr, "aiod: calibrate: writing %s: %s\n", out_path, strerror(errno));
		return -errno;
	}
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	ret = aiod_profile_write(&p, out, when);
	if (fclose(out) != 0 || ret != 0) {
		fprintf(stderr, "aiod: calibrate: writing %s failed\n", out_path);
		return -EIO;
	}
	printf("calibrate: profile written to %s\n", out_path);
	/* What aiod will make of it (with this aiod.ini, whose own settings win). */
	aiod_tuning_derive(cfg, &p, false, &t);
	aiod_tuning_describe(&t, out_path, 0, line, sizeof(line));
	printf("calibrate: %s\n", line);
	return 0;
}
