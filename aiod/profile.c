/*
 * The device profile file (profile.h). An ini file, also read by
 * bench/rt/record.py's configparser: plain "key = value" lines, no inline
 * comments.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "profile.h"

/* A whole decimal number within [min, max], nothing after it. */
static int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || s[0] < '0' || s[0] > '9') {
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Bytes/s: calibrate writes "%.0f"; accept any finite non-negative number. */
static int parse_rate(const char *s, uint64_t *out)
{
	char *end;
	double v;

	if (s == NULL || s[0] == '\0') {
		return -EINVAL;
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0 || v > 1e15) {
		return -EINVAL;
	}
	*out = (uint64_t)v;
	return 0;
}

static struct aiod_profile_point *point_of(struct aiod_profile *p, uint32_t size)
{
	unsigned i = 0;

	while (i < p->npoints && p->points[i].size < size) {
		i++;
	}
	if (i < p->npoints && p->points[i].size == size) {
		return &p->points[i];
	}
	if (p->npoints == AIOD_PROFILE_MAX_POINTS) {
		return NULL;
	}
	memmove(&p->points[i + 1], &p->points[i], (p->npoints - i) * sizeof(p->points[0]));
	p->npoints++;
	p->points[i] = (struct aiod_profile_point){ .size = size };
	return &p->points[i];
}

/*
 * Every "size = bytes/s" of sec: [random] and [sequential] hold request
 * sizes, [parallel] holds "size" and in-flight counts.
 */
static int load_section(const struct aiod_ini *ini, const char *sec, struct aiod_profile *p,
			const char *path, char *err, size_t errlen)
{
	const struct aiod_ini_section *s = aiod_ini_section(ini, sec);
	unsigned n = s != NULL ? s->nkeys : 0;

	if (n > 64) {
		snprintf(err, errlen, "%s: [%s]: more than 64 keys", path, sec);
		return -EINVAL;
	}
	for (unsigned i = 0; i < n; i++) {
		const char *key = s->keys[i].name;
		const char *val = s->keys[i].value;
		uint64_t k, v;

		if (strcmp(sec, "parallel") == 0 && strcmp(key, "size") == 0) {
			if (parse_uint(val, 4096, 1u << 30, &k) != 0) {
				snprintf(err, errlen, "%s: [parallel] size = '%s': expected a request "
					 "size in bytes", path, val != NULL ? val : "");
				return -EINVAL;
			}
			p->parallel_size = (uint32_t)k;
			continue;
		}
		if (parse_uint(key, 1, 1u << 30, &k) != 0) {
			snprintf(err, errlen, "%s: [%s] '%s': expected %s", path, sec, key,
				 strcmp(sec, "parallel") == 0 ? "size or a count of requests in flight"
							  : "a request size in bytes");
			return -EINVAL;
		}
		if (parse_rate(val, &v) != 0) {
			snprintf(err, errlen, "%s: [%s] %s = '%s': expected bytes/s", path, sec, key,
				 val != NULL ? val : "");
			return -EINVAL;
		}
		if (strcmp(sec, "parallel") == 0) {
			unsigned j = 0;

			if (p->nparallel == AIOD_PROFILE_MAX_PARALLEL || k > 4096) {
				snprintf(err, errlen, "%s: [parallel] %s: at most %d counts up to 4096",
					 path, key, AIOD_PROFILE_MAX_PARALLEL);
				return -EINVAL;
			}
			while (j < p->nparallel && p->parallel[j].inflight < k) {
				j++;
			}
			memmove(&p->parallel[j + 1], &p->parallel[j],
				(p->nparallel - j) * sizeof(p->parallel[0]));
			p->parallel[j] = (struct aiod_profile_parallel){ (uint32_t)k, v };
			p->nparallel++;
		} else {
			struct aiod_profile_point *pt = point_of(p, (uint32_t)k);

			if (pt == NULL) {
				snprintf(err, errlen, "%s: [%s] %s: more than %d request sizes", path,
					 sec, key, AIOD_PROFILE_MAX_POINTS);
				return -EINVAL;
			}
			*(strcmp(sec, "random") == 0 ? &pt->random_Bps : &pt->sequential_Bps) = v;
		}
	}
	return 0;
}

/* sec:key as a whole number in [min, max]; def when absent. */
static int header_uint(const struct aiod_ini *d, const char *sec, const char *key, uint64_t min,
		       uint64_t max, uint64_t def, uint64_t *out, const char *path, char *err,
		       size_t errlen)
{
	const char *s = aiod_ini_get(d, sec, key);

	*out = def;
	if (s != NULL && parse_uint(s, min, max, out) != 0) {
		snprintf(err, errlen, "%s: [%s] %s = '%s': expected a whole number %llu..%llu", path,
			 sec, key, s, (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	return 0;
}

/* [device] key as a number, 0 when absent or garbled: they only describe the run. */
static double header_double(const struct aiod_ini *d, const char *key)
{
	const char *s = aiod_ini_get(d, "device", key);

	return s != NULL ? strtod(s, NULL) : 0;
}

/* [profile] and [device]: the version and the scalars. */
static int load_header(const struct aiod_ini *d, struct aiod_profile *p, const char *path,
		       char *err, size_t errlen)
{
	uint64_t version, request_us;
	const char *dir;
	int ret;

	ret = header_uint(d, "profile", "version", 1, 1000, 1, &version, path, err, errlen);
	if (ret == 0) {
		/* up to a minute: anything slower is not a device aiod can schedule */
		ret = header_uint(d, "device", "request_us", 0, 60000000, 0, &request_us, path, err,
				  errlen);
	}
	if (ret == 0) {
		ret = header_uint(d, "device", "file_size", 0, UINT64_MAX, 0, &p->file_size, path,
				  err, errlen);
	}
	if (ret != 0) {
		return ret;
	}
	p->version = (unsigned)version;
	p->request_us = (uint32_t)request_us;
	p->seconds_per_point = header_double(d, "seconds_per_point");
	p->seconds_total = header_double(d, "seconds_total");
	dir = aiod_ini_get(d, "device", "dir");
	p->dir = dir != NULL ? talloc_strdup(p, dir) : NULL;
	return 0;
}

int aiod_profile_load(TALLOC_CTX *mem, const char *path, struct aiod_profile **out, char *err,
		      size_t errlen)
{
	static const char *const sections[] = { "random", "sequential", "parallel" };
	struct aiod_profile *p;
	struct aiod_ini *d;
	int ret;

	*out = NULL;
	ret = aiod_ini_load(mem, path, &d, err, errlen);
	if (ret == -EINVAL) {
		size_t n = strlen(err);
		snprintf(err + n, errlen - n, " (rewrite it with aiod --calibrate DIR)");
	}
	if (ret != 0) {
		return ret;
	}
	p = talloc_zero(mem, struct aiod_profile);
	if (p == NULL) {
		talloc_free(d);
		return -ENOMEM;
	}
	ret = load_header(d, p, path, err, errlen);
	for (unsigned i = 0; i < 3 && ret == 0; i++) {
		ret = load_section(d, sections[i], p, path, err, errlen);
	}
	talloc_free(d);
	if (ret == 0 && aiod_profile_random_Bps(p, UINT32_MAX) == 0) {
		snprintf(err, errlen, "%s: no [random] measurement (rewrite it with aiod --calibrate "
			 "DIR)", path);
		ret = -EINVAL;
	}
	if (ret == 0 && p->nparallel > 0 && p->parallel_size == 0) {
		snprintf(err, errlen, "%s: [parallel] size: missing", path);
		ret = -EINVAL;
	}
	if (ret != 0) {
		talloc_free(p);
		return ret;
	}
	/* Version 1 had no request_us: the smallest random read is the best estimate of it. */
	for (unsigned i = 0; i < p->npoints && p->request_us == 0; i++) {
		if (p->points[i].random_Bps > 0) {
			p->request_us = (uint32_t)fmin(60e6, p->points[i].size * 1e6 /
							 p->points[i].random_Bps);
		}
	}
	*out = p;
	return 0;
}

int aiod_profile_write(const struct aiod_profile *p, FILE *f, const char *when)
{
	fprintf(f, "# aiod device profile, written by aiod --calibrate %s at %s.\n"
		   "# [random], [sequential]: bytes/s per request size, one request at a time,\n"
		   "# O_DIRECT, from the median request. request_us: the median time of one\n"
		   "# random read of the smallest size (seek + latency). [parallel]: bytes/s of\n"
		   "# random reads of size bytes with that many requests in flight.\n"
		   "[profile]\nversion = %d\n\n"
		   "[device]\ndir = %s\nfile_size = %llu\nseconds_per_point = %.1f\n"
		   "seconds_total = %.1f\nrequest_us = %u\n",
		p->dir != NULL ? p->dir : "", when, AIOD_PROFILE_VERSION,
		p->dir != NULL ? p->dir : "", (unsigned long long)p->file_size,
		p->seconds_per_point, p->seconds_total, p->request_us);
	for (int r = 0; r < 2; r++) {
		fprintf(f, "\n[%s]\n", r == 0 ? "random" : "sequential");
		for (unsigned i = 0; i < p->npoints; i++) {
			fprintf(f, "%u = %llu\n", p->points[i].size,
				(unsigned long long)(r == 0 ? p->points[i].random_Bps
							    : p->points[i].sequential_Bps));
		}
	}
	if (p->nparallel > 0) {
		fprintf(f, "\n[parallel]\nsize = %u\n", p->parallel_size);
		for (unsigned i = 0; i < p->nparallel; i++) {
			fprintf(f, "%u = %llu\n", p->parallel[i].inflight,
				(unsigned long long)p->parallel[i].Bps);
		}
	}
	return ferror(f) ? -EIO : 0;
}

uint64_t aiod_profile_random_Bps(const struct aiod_profile *p, uint32_t size)
{
	for (unsigned i = p != NULL ? p->npoints : 0; i > 0; i--) {
		if (p->points[i - 1].size <= size && p->points[i - 1].random_Bps > 0) {
			return p->points[i - 1].random_Bps;
		}
	}
	return 0;
}

uint64_t aiod_profile_media_Bps(const struct aiod_profile *p)
{
	uint64_t best = 0;

	for (unsigned i = 0; p != NULL && i < p->npoints; i++) {
		if (p->points[i].sequential_Bps > best) {
			best = p->points[i].sequential_Bps;
		}
		if (p->points[i].random_Bps > best) {
			best = p->points[i].random_Bps;
		}
	}
	return best;
}

double aiod_profile_request_s(const struct aiod_profile *p, uint32_t size)
{
	uint64_t bps = aiod_profile_random_Bps(p, size);
	uint64_t media = aiod_profile_media_Bps(p);

	if (bps > 0) {
		return (double)size / (double)bps;
	}
	/* Smaller than anything measured: one request's cost plus the transfer. */
	if (p != NULL && p->request_us > 0 && media > 0) {
		return p->request_us / 1e6 + (double)size / (double)media;
	}
	return 0;
}
