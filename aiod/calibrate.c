/*
 * aiod --calibrate DIR: measure what the device under DIR delivers, for
 * request sizes 64 KiB .. 16 MiB, random and sequential, one request at a
 * time with O_DIRECT (what aiod's read-ahead does), and write a profile that
 * admission control reads.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "aiod.h"
#include "calibrate.h"

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

/* Bytes/s reading size-byte requests for about seconds. */
static double measure(int fd, void *buf, uint64_t file_size, uint32_t size, bool random,
		      double seconds, uint64_t *seed)
{
	uint64_t slots = file_size / size;
	uint64_t bytes = 0, slot = xorshift(seed) % slots;
	double t0 = now_s(), t;
	unsigned n = 0;

	do {
		if (random) {
			slot = xorshift(seed) % slots;
		} else if (++slot >= slots) {
			slot = 0;
		}
		if (pread(fd, buf, size, (off_t)(slot * size)) != (ssize_t)size) {
			return -1;
		}
		bytes += size;
		n++;
		t = now_s() - t0;
	} while (t < seconds || n < 3);
	return (double)bytes / t;
}

int aiod_calibrate(const struct aiod_config *cfg, const char *dir, const char *out_path,
		   uint64_t file_size, double seconds_per_point)
{
	static const uint32_t sizes[] = { 64u << 10, 256u << 10, 1u << 20, 2u << 20, 4u << 20,
					  8u << 20, 16u << 20 };
	char path[4096];
	double res[2][sizeof(sizes) / sizeof(sizes[0])];
	uint64_t seed = 0x5eed;
	void *buf;
	FILE *out;
	int fd, ret;

	(void)cfg;
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
	if (posix_memalign(&buf, 4096, 16u << 20) != 0) {
		close(fd);
		return -ENOMEM;
	}
	printf("calibrate: %s, %.1f s per point, one request at a time, O_DIRECT\n", dir,
	       seconds_per_point);
	printf("%10s %14s %14s\n", "size", "random MB/s", "sequential MB/s");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int r = 0; r < 2; r++) {
			res[r][i] = measure(fd, buf, file_size, sizes[i], r == 0, seconds_per_point,
					    &seed);
			if (res[r][i] < 0) {
				fprintf(stderr, "aiod: calibrate: reading %s: %s\n", path,
					strerror(errno));
				free(buf);
				close(fd);
				return -EIO;
			}
		}
		printf("%9uK %14.1f %14.1f\n", sizes[i] >> 10, res[0][i] / 1e6, res[1][i] / 1e6);
		fflush(stdout);
	}
	free(buf);
	close(fd);
	out = fopen(out_path, "w");
	if (out == NULL) {
		fprintf(stderr, "aiod: calibrate: writing %s: %s\n", out_path, strerror(errno));
		return -errno;
	}
	{
		time_t now = time(NULL);
		char when[64];
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
		fprintf(out, "# aiod device profile: bytes/s per request size, one request at a time,\n"
			     "# O_DIRECT. Written by aiod --calibrate %s at %s.\n"
			     "[device]\ndir = %s\nfile_size = %llu\nseconds_per_point = %.1f\n",
			dir, when, dir, (unsigned long long)file_size, seconds_per_point);
	}
	for (int r = 0; r < 2; r++) {
		fprintf(out, "\n[%s]\n", r == 0 ? "random" : "sequential");
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			fprintf(out, "%u = %.0f\n", sizes[i], res[r][i]);
		}
	}
	if (fclose(out) != 0) {
		return -errno;
	}
	printf("calibrate: profile written to %s\n", out_path);
	return 0;
}
