/*
 * The device profile: what aiod --calibrate measured (calibrate.c writes it),
 * what admission control and the derived settings read (admission.c,
 * tuning.c). One parser and one writer, so the three never disagree on the
 * format.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_PROFILE_H
#define AIOD_PROFILE_H

#include <stdint.h>
#include <stdio.h>
#include <talloc.h>

/*
 * 1: [device], [random], [sequential] only (no version key).
 * 2: [profile] version, [device] request_us and seconds_total, [parallel].
 */
#define AIOD_PROFILE_VERSION 2
#define AIOD_PROFILE_MAX_POINTS 16
#define AIOD_PROFILE_MAX_PARALLEL 8

/* Bytes/s at one request size, one request at a time; 0 = not measured. */
struct aiod_profile_point {
	uint32_t size;
	uint64_t random_Bps;
	uint64_t sequential_Bps;
};

/* Random reads of [parallel] size with inflight requests at the device. */
struct aiod_profile_parallel {
	uint32_t inflight;
	uint64_t Bps;
};

struct aiod_profile {
	unsigned version;
	/* Where and how it was measured: for the reader of the file. */
	const char *dir;
	uint64_t file_size;
	double seconds_per_point;
	double seconds_total;
	/* Median time of one random read of the smallest size: a seek plus latency. 0 = unknown. */
	uint32_t request_us;
	unsigned npoints;
	struct aiod_profile_point points[AIOD_PROFILE_MAX_POINTS];	/* ascending size */
	uint32_t parallel_size;						/* 0 = not measured */
	unsigned nparallel;
	struct aiod_profile_parallel parallel[AIOD_PROFILE_MAX_PARALLEL];	/* ascending */
};

/*
 * Read path into a new profile owned by mem. Returns 0; -ENOENT when there
 * is no file; -EINVAL when it is not a profile or a value is garbled; then
 * err names the file (and the section and key). Keys it does not know are
 * skipped, so a newer aiod's profile still gives what this one needs.
 */
int aiod_profile_load(TALLOC_CTX *mem, const char *path, struct aiod_profile **out, char *err,
		      size_t errlen);

/* Write p in the current format (when: a timestamp for the comment). */
int aiod_profile_write(const struct aiod_profile *p, FILE *f, const char *when);

/* Random-read bytes/s at the largest profiled size not above size; 0 if none. */
uint64_t aiod_profile_random_Bps(const struct aiod_profile *p, uint32_t size);

/* The best sequential (or, if higher, random) bytes/s of any size: the media rate. */
uint64_t aiod_profile_media_Bps(const struct aiod_profile *p);

/*
 * Seconds one random read of size bytes keeps the device busy, from the
 * throughput at the largest profiled size not above it; 0 if unknown.
 */
double aiod_profile_request_s(const struct aiod_profile *p, uint32_t size);

#endif
