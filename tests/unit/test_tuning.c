/*
 * Unit tests: the device profile (aiod/profile.c), the settings derived
 * from it (aiod/tuning.c) and the capacity admission control takes from it
 * (aiod/admission.c), and the statistic aiod --calibrate rates a device by
 * (aiod/calibrate.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "aiod.h"
#include "calibrate.h"
#include "config.h"
#include "profile.h"
#include "streams.h"
#include "tuning.h"

/*
 * The emulated disk of bench/rt (14.5 ms seek, ~163 MB/s), as aiod
 * --calibrate measured it (bench/results/rt-20261122-0232), with a parallel
 * section as a single spindle gives it: two requests in flight are no faster.
 */
static const char disk_profile[] =
	"[profile]\nversion = 2\n"
	"[device]\ndir = /mnt/emu\nrequest_us = 15240\n"
	"[random]\n65536 = 4300000\n262144 = 15900000\n1048576 = 48800000\n"
	"2097152 = 75800000\n4194304 = 104400000\n8388608 = 128400000\n16777216 = 146000000\n"
	"[sequential]\n65536 = 122200000\n262144 = 139900000\n1048576 = 148300000\n"
	"2097152 = 157800000\n4194304 = 159200000\n8388608 = 162600000\n16777216 = 162700000\n"
	"[parallel]\nsize = 16777216\n1 = 146000000\n2 = 149000000\n4 = 151000000\n"
	"8 = 150000000\n";

/* An NVMe SSD: random as fast as sequential at every size; more in flight helps up to 4. */
static const char ssd_profile[] =
	"[profile]\nversion = 2\n"
	"[device]\nrequest_us = 110\n"
	"[random]\n65536 = 450000000\n262144 = 1300000000\n1048576 = 2300000000\n"
	"16777216 = 2700000000\n"
	"[sequential]\n65536 = 500000000\n262144 = 1400000000\n1048576 = 2400000000\n"
	"16777216 = 2750000000\n"
	"[parallel]\nsize = 1048576\n1 = 2300000000\n2 = 3900000000\n4 = 5600000000\n"
	"8 = 6000000000\n";

/* What aiod --calibrate wrote before the format had a version: no [parallel], no request_us. */
static const char old_profile[] =
	"# aiod device profile: bytes/s per request size, one request at a time,\n"
	"[device]\ndir = /mnt/emu\nfile_size = 536870912\nseconds_per_point = 2.0\n"
	"\n[random]\n65536 = 4300000\n1048576 = 48800000\n8388608 = 128400000\n"
	"16777216 = 146000000\n"
	"\n[sequential]\n65536 = 122200000\n1048576 = 148300000\n8388608 = 162600000\n"
	"16777216 = 162700000\n";

static char path[64];

static void write_tmp(const char *text, size_t len)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/rtio-proftest-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* Load text as a profile file; err gets the message. */
static int load_profile(TALLOC_CTX *mem, const char *text, struct aiod_profile **p, char *err,
			size_t errlen)
{
	int ret;

	write_tmp(text, strlen(text));
	err[0] = '\0';
	ret = aiod_profile_load(mem, path, p, err, errlen);
	unlink(path);
	return ret;
}

static struct aiod_config *load_config(TALLOC_CTX *mem, const char *text)
{
	struct aiod_config *cfg;
	char err[256];

	if (text == NULL) {
		assert_int_equal(aiod_config_load(mem, NULL, &cfg, err, sizeof(err)), 0);
		return cfg;
	}
	write_tmp(text, strlen(text));
	assert_int_equal(aiod_config_load(mem, path, &cfg, err, sizeof(err)), 0);
	unlink(path);
	return cfg;
}

static void test_tuning_disk_profile_gives_large_requests_short_queue(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiod_config *cfg = load_config(mem, NULL);
	struct aiod_profile *p;
	struct aiod_tuning t;
	char err[256], line[1024];

	(void)state;
	assert_int_equal(load_profile(mem, disk_profile, &p, err, sizeof(err)), 0);
	assert_int_equal(p->version, 2);
	assert_int_equal(p->request_us, 15240);
	aiod_tuning_derive(cfg, p, false, &t);
	/* 16M: 146 of 163 MB/s = 90 %; 8M reaches only 79 % */
	assert_int_equal(t.io_size.value, 16u << 20);
	assert_int_equal(t.io_size.source, AIOD_TUNED_PROFILE);
	assert_int_equal(t.queue_depth.value, 1);
	assert_int_equal(t.queue_depth.source, AIOD_TUNED_PROFILE);
	/* 20 x (16 MiB / 146 MB/s) = 20 x 115 ms; bench/rt found 2500 ms right, 500 ms too short */
	assert_in_range(t.be_deadline_ms.value, 2000, 3000);
	assert_int_equal(t.be_deadline_ms.source, AIOD_TUNED_PROFILE);
	aiod_tuning_apply(cfg, &t);
	assert_int_equal(cfg->readahead_io_size, 16u << 20);
	assert_int_equal(cfg->queue_depth, 1);
	aiod_tuning_describe(&t, "/var/lib/aiod/device.profile", 0, line, sizeof(line));
	assert_non_null(strstr(line, "io_size 16M (profile /var/lib/aiod/device.profile)"));
	assert_non_null(strstr(line, "queue_depth 1 (profile "));
	talloc_free(mem);
}

static void test_tuning_ssd_profile_gives_small_requests_deeper_queue(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiod_config *cfg = load_config(mem, NULL);
	struct aiod_profile *p;
	struct aiod_tuning t;
	char err[256];

	(void)state;
	assert_int_equal(load_profile(mem, ssd_profile, &p, err, sizeof(err)), 0);
	aiod_tuning_derive(cfg, p, false, &t);
	/* 64K already amortises the (absent) seek: one cache block, the smallest request */
	assert_int_equal(t.io_size.value, cfg->block_size);
	/*
	 * 1 -> 2: +70 %, 2 -> 4: +44 %, 4 -> 8: +7 %: throughput stops growing
	 * at 4; 110 us a random read (no seek) raises it to the floor of 8
	 */
	assert_int_equal(t.queue_depth.value, AIOD_TUNING_QD_FAST);
	assert_int_equal(t.be_deadline_ms.value, AIOD_TUNING_BE_MIN_MS);
	talloc_free(mem);
}

static void test_tuning_queue_depth_rule(void **state)
{
	struct aiod_profile p = { .nparallel = 4, .parallel_size = 1u << 20,
				  .parallel = { { 1, 100 }, { 2, 190 }, { 4, 370 }, { 8, 700 } } };

	(void)state;
	/* still growing at the last count measured: the device takes more */
	assert_int_equal(aiod_tuning_queue_depth(&p), AIOD_TUNING_QD_MAX);
	p.parallel[2].Bps = 200;	/* 2 -> 4: +5 % */
	assert_int_equal(aiod_tuning_queue_depth(&p), 2);
	p.parallel[1].Bps = 110;	/* 1 -> 2: +10 %: parallel requests do not help */
	assert_int_equal(aiod_tuning_queue_depth(&p), AIOD_TUNING_QD_MIN);
	p.nparallel = 1;
	assert_int_equal(aiod_tuning_queue_depth(&p), AIOD_TUNING_QD_MIN);
	/* ...but a device without seeks gets the small reads' depth anyway */
	p.nparallel = 4;
	p.request_us = 120;
	assert_int_equal(aiod_tuning_queue_depth(&p), AIOD_TUNING_QD_FAST);
	p.parallel[1].Bps = 190;
	p.parallel[2].Bps = 370;	/* 1 -> 2 -> 4 -> 8 all gain: more than the floor */
	assert_int_equal(aiod_tuning_queue_depth(&p), AIOD_TUNING_QD_MAX);
	p.parallel[1].Bps = 110;
	p.request_us = 15240;		/* a disk's seek: the rule alone */
	assert_int_equal(aiod_tuning_queue_depth(&p), AIOD_TUNING_QD_MIN);
	p.nparallel = 0;
	assert_int_equal(aiod_tuning_queue_depth(&p), 0);	/* not measured */
	assert_int_equal(aiod_tuning_queue_depth(NULL), 0);
}

static void test_tuning_be_deadline_bounds(void **state)
{
	(void)state;
	assert_int_equal(aiod_tuning_be_deadline_ms(0.0001), AIOD_TUNING_BE_MIN_MS);
	assert_int_equal(aiod_tuning_be_deadline_ms(0.1), 2000);
	assert_int_equal(aiod_tuning_be_deadline_ms(0.5), AIOD_TUNING_BE_MAX_MS);
}

static void test_tuning_io_size_within_one_request(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiod_profile *p;
	char err[256];

	(void)state;
	assert_int_equal(load_profile(mem, disk_profile, &p, err, sizeof(err)), 0);
	/* one request carries RTIO_MAX_SEGS blocks: 16 x 256K */
	assert_int_equal(aiod_tuning_io_size(p, 256u << 10), 4u << 20);
	assert_int_equal(aiod_tuning_io_size(p, 1u << 20), 16u << 20);
	assert_int_equal(aiod_tuning_io_size(NULL, 1u << 20), 0);
	/* no size amortises the seek: the fastest there is */
	p->points[6].random_Bps = 100000000;	/* 16M: 61 % */
	assert_int_equal(aiod_tuning_io_size(p, 1u << 20), 8u << 20);
	talloc_free(mem);
}

static void test_tuning_aiod_ini_wins(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiod_config *cfg = load_config(mem, "[readahead]\nio_size = 8M\n"
					      "[engine]\nqueue_depth = 1\n");
	struct aiod_profile *p;
	struct aiod_tuning t;
	char err[256], line[1024];

	(void)state;
	assert_true(aiod_config_is_set(cfg, "readahead", "io_size"));
	assert_true(aiod_config_is_set(cfg, "engine", "queue_depth"));
	assert_false(aiod_config_is_set(cfg, "readahead", "best_effort_deadline_ms"));
	assert_int_equal(load_profile(mem, disk_profile, &p, err, sizeof(err)), 0);
	aiod_tuning_derive(cfg, p, false, &t);
	assert_int_equal(t.io_size.value, 8u << 20);
	assert_int_equal(t.io_size.source, AIOD_TUNED_CONFIG);
	assert_int_equal(t.queue_depth.value, 1);
	assert_int_equal(t.queue_depth.source, AIOD_TUNED_CONFIG);
	/* the deadline follows the io_size in effect: 20 x (8 MiB / 128.4 MB/s) */
	assert_int_equal(t.be_deadline_ms.value, 1307);	/* 1306.6 */
	assert_int_equal(t.be_deadline_ms.source, AIOD_TUNED_PROFILE);
	aiod_tuning_describe(&t, "/p", 0, line, sizeof(line));
	assert_non_null(strstr(line, "io_size 8M (aiod.ini)"));
	/* a reload that cannot change the running depth says so */
	aiod_tuning_describe(&t, "/p", 32, line, sizeof(line));
	assert_non_null(strstr(line, "queue_depth 32 (running; a restart makes it 1: aiod.ini)"));

	cfg = load_config(mem, "[readahead]\nbest_effort_deadline_ms = 2500\n");
	aiod_tuning_derive(cfg, p, false, &t);
	assert_int_equal(t.be_deadline_ms.value, 2500);
	assert_int_equal(t.be_deadline_ms.source, AIOD_TUNED_CONFIG);
	assert_int_equal(t.io_size.value, 16u << 20);
	talloc_free(mem);
}

static void test_tuning_no_profile_gives_defaults(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiod_config *cfg = load_config(mem, NULL);
	struct aiod_profile *p = (void *)1;
	struct aiod_tuning t;
	char err[256], line[1024];

	(void)state;
	assert_int_equal(aiod_profile_load(mem, "/nonexistent/device.profile", &p, err,
					   sizeof(err)), -ENOENT);
	assert_null(p);
	assert_non_null(strstr(err, "/nonexistent/device.profile"));
	aiod_tuning_derive(cfg, NULL, false, &t);
	assert_int_equal(t.io_size.value, 2u << 20);
	assert_int_equal(t.queue_depth.value, 32);
	assert_int_equal(t.be_deadline_ms.value, 500);
	assert_int_equal(t.io_size.source, AIOD_TUNED_NO_PROFILE);
	aiod_tuning_describe(&t, "/p", 0, line, sizeof(line));
	assert_non_null(strstr(line, "io_size 2M (default, no profile)"));
	talloc_free(mem);
}

static void test_tuning_garbled_profile_names_file_and_key(void **state)
{
	static const struct {
		const char *text;
		const char *says;
	} bad[] = {
		{ "[random]\n65536 = fast\n", "[random] 65536 = 'fast'" },
		{ "[random]\n65536 = -4\n", "[random] 65536 = '-4'" },
		{ "[random]\n64K = 1000\n", "[random] '64K'" },	/* named as written */
		{ "[sequential]\n65536 = 1e99\n", "[sequential] 65536" },
		{ "[profile]\nversion = two\n[random]\n65536 = 1\n", "[profile] version" },
		{ "[device]\nrequest_us = 12.5\n[random]\n65536 = 1\n", "[device] request_us" },
		{ "[random]\n65536 = 1\n[parallel]\n1 = 5\n", "[parallel] size" },
		{ "[random]\n65536 = 1\n[parallel]\nsize = 1M\n", "[parallel] size = '1M'" },
		{ "[random]\n65536 = 1\n[parallel]\nsize = 65536\nmany = 5\n", "[parallel] 'many'" },
		{ "", "no [random]" },
		{ "[sequential]\n65536 = 100\n", "no [random]" },
	};
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiod_config *cfg = load_config(mem, NULL);
	struct aiod_profile *p;
	struct aiod_tuning t;
	char err[256], line[1024];
	char garbage[4096];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load_profile(mem, bad[i].text, &p, err, sizeof(err)), -EINVAL);
		assert_null(p);
		if (strstr(err, bad[i].says) == NULL || strstr(err, path) == NULL) {
			fail_msg("profile %zu: '%s' does not say '%s' and %s", i, err, bad[i].says,
				 path);
		}
	}
	/* not text at all: a clear error, no crash */
	for (size_t i = 0; i < sizeof(garbage); i++) {
		garbage[i] = (char)(i * 7919 % 251 + 1);
	}
	write_tmp(garbage, sizeof(garbage));
	assert_int_equal(aiod_profile_load(mem, path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	unlink(path);
	aiod_tuning_derive(cfg, NULL, true, &t);
	assert_int_equal(t.io_size.value, 2u << 20);
	assert_int_equal(t.queue_depth.value, 32);
	assert_int_equal(t.be_deadline_ms.source, AIOD_TUNED_BAD_PROFILE);
	aiod_tuning_describe(&t, "/p", 0, line, sizeof(line));
	assert_non_null(strstr(line, "(default, profile /p unusable)"));
	talloc_free(mem);
}

static void test_tuning_old_profile_derives_what_it_can(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiod_config *cfg = load_config(mem, NULL);
	struct aiod_profile *p;
	struct aiod_tuning t;
	char err[256], line[1024];

	(void)state;
	assert_int_equal(load_profile(mem, old_profile, &p, err, sizeof(err)), 0);
	assert_int_equal(p->version, 1);
	assert_int_equal(p->nparallel, 0);
	/* the smallest random read stands in for request_us: 64 KiB at 4.3 MB/s */
	assert_in_range(p->request_us, 15000, 15500);
	assert_int_equal(aiod_profile_random_Bps(p, 16u << 20), 146000000);
	aiod_tuning_derive(cfg, p, false, &t);
	assert_int_equal(t.io_size.value, 16u << 20);
	assert_int_equal(t.io_size.source, AIOD_TUNED_PROFILE);
	assert_int_equal(t.queue_depth.value, 32);
	assert_int_equal(t.queue_depth.source, AIOD_TUNED_NOT_MEASURED);
	assert_in_range(t.be_deadline_ms.value, 2000, 3000);
	aiod_tuning_describe(&t, "/p", 0, line, sizeof(line));
	assert_non_null(strstr(line, "queue_depth 32 (default, not measured in /p"));
	talloc_free(mem);
}

static void test_admission_capacity_from_old_profile(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiod_ctx ctx = { .cfg = load_config(mem, NULL) };
	char err[256];

	(void)state;
	assert_int_equal(load_profile(mem, old_profile, &ctx.profile, err, sizeof(err)), 0);
	/* random reads at the largest profiled size not above io_size, as before */
	ctx.cfg->readahead_io_size = 16u << 20;
	aiod_admission_init(&ctx);
	assert_int_equal(ctx.capacity_Bps, 146000000);
	ctx.cfg->readahead_io_size = 4u << 20;
	aiod_admission_init(&ctx);
	assert_int_equal(ctx.capacity_Bps, 48800000);
	/* a configured capacity wins; no profile: unknown */
	ctx.cfg->admission_capacity = 1000;
	aiod_admission_init(&ctx);
	assert_int_equal(ctx.capacity_Bps, 1000);
	ctx.cfg->admission_capacity = 0;
	ctx.profile = NULL;
	aiod_admission_init(&ctx);
	assert_int_equal(ctx.capacity_Bps, 0);
	talloc_free(mem);
}

static void test_profile_written_reads_back(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiod_profile *p, *q;
	char err[256];
	FILE *f;
	int fd;

	(void)state;
	assert_int_equal(load_profile(mem, disk_profile, &p, err, sizeof(err)), 0);
	p->seconds_total = 37.5;
	snprintf(path, sizeof(path), "/tmp/rtio-proftest-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(aiod_profile_write(p, f, "now"), 0);
	fclose(f);
	assert_int_equal(aiod_profile_load(mem, path, &q, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(q->version, AIOD_PROFILE_VERSION);
	assert_string_equal(q->dir, "/mnt/emu");
	assert_int_equal(q->request_us, p->request_us);
	assert_true(q->seconds_total > 37.4 && q->seconds_total < 37.6);
	assert_int_equal(q->npoints, p->npoints);
	assert_memory_equal(q->points, p->points, sizeof(p->points[0]) * p->npoints);
	assert_int_equal(q->parallel_size, p->parallel_size);
	assert_int_equal(q->nparallel, p->nparallel);
	assert_memory_equal(q->parallel, p->parallel, sizeof(p->parallel[0]) * p->nparallel);
	talloc_free(mem);
}

/*
 * --calibrate rates a device by its median request: twenty 16 MiB reads of
 * 115 ms of which four were delayed by something else on the machine (a
 * VM's stolen time) cost 115 ms each, where their mean (127 ms) would take
 * 10 % off the capacity admission counts on.
 */
static void test_calibrate_median_ignores_delayed_requests(void **state)
{
	double t[20], mean = 0, odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };

	(void)state;
	for (size_t i = 0; i < 20; i++) {
		t[i] = i % 5 == 4 ? 0.175 : 0.115 + (double)(i % 3) * 0.0001;
		mean += t[i] / 20;
	}
	assert_true(mean > 0.126);
	assert_true(aiod_calibrate_median(t, 20) >= 0.115 && aiod_calibrate_median(t, 20) <= 0.1152);
	/* odd and even counts, and sorted in place */
	assert_true(aiod_calibrate_median(odd, 3) == 2);
	assert_true(odd[0] == 1 && odd[2] == 3);
	assert_true(aiod_calibrate_median(even, 4) == 2.5);
	assert_true(aiod_calibrate_median(even, 0) == 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tuning_disk_profile_gives_large_requests_short_queue),
		cmocka_unit_test(test_tuning_ssd_profile_gives_small_requests_deeper_queue),
		cmocka_unit_test(test_tuning_queue_depth_rule),
		cmocka_unit_test(test_tuning_be_deadline_bounds),
		cmocka_unit_test(test_tuning_io_size_within_one_request),
		cmocka_unit_test(test_tuning_aiod_ini_wins),
		cmocka_unit_test(test_tuning_no_profile_gives_defaults),
		cmocka_unit_test(test_tuning_garbled_profile_names_file_and_key),
		cmocka_unit_test(test_tuning_old_profile_derives_what_it_can),
		cmocka_unit_test(test_admission_capacity_from_old_profile),
		cmocka_unit_test(test_profile_written_reads_back),
		cmocka_unit_test(test_calibrate_median_ignores_delayed_requests),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("tuning", tests, NULL, NULL);
}
