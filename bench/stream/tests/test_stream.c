/*
 * Tests of rtio-stream's pure parts (cmocka).
 * Run: build/rtio-stream-test [GLOB]  (GLOB: which test names to run, e.g. '*opts*').
 */
#include <getopt.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../pacing.h"
#include "../samples.h"
#include "../stream_opts.h"
#include "../timeline.h"

static int parse(struct stream_opts *o, const char **args, int n)
{
	char *argv[32];
	int i;

	for (i = 0; i < n; i++)
		argv[i] = (char *)args[i];
	argv[n] = NULL;
	optind = 0; /* GNU getopt: full re-initialisation */
	return stream_opts_parse(o, n, argv);
}

static void test_stream_opts_defaults(void **state)
{
	const char *args[] = { "x", "--url", "smb://h:4445/s/f", "--user", "u%p" };
	struct stream_opts o;

	(void)state;
	assert_true(parse(&o, args, 5) == 0);
	assert_true(o.bitrate_bps == 100e6);
	assert_true(o.chunk == 1048576 && o.prebuffer == 2 && !o.greedy);
	assert_true(strcmp(o.user, "u") == 0 && strcmp(o.password, "p") == 0 && o.domain[0] == '\0');
}

static void test_stream_opts_greedy_default_chunk(void **state)
{
	const char *args[] = { "x", "--url", "smb://h/s/f", "--user", "D\\u%p%q", "--greedy" };
	struct stream_opts o;

	(void)state;
	assert_true(parse(&o, args, 6) == 0);
	assert_true(o.greedy && o.chunk == 8u << 20);
	assert_true(strcmp(o.domain, "D") == 0 && strcmp(o.user, "u") == 0);
	assert_true(strcmp(o.password, "p%q") == 0);
}

static void test_stream_opts_rejects(void **state)
{
	const char *no_user[] = { "x", "--url", "smb://h/s/f" };
	const char *bad_chunk[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--chunk", "1Q" };
	const char *zero_prebuf[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--prebuffer", "0" };
	struct stream_opts o;

	(void)state;
	assert_true(parse(&o, no_user, 3) == -1);
	assert_true(parse(&o, bad_chunk, 7) == -1);
	assert_true(parse(&o, zero_prebuf, 7) == -1);
}

/* --chunk and --offset take rtio_size_parse()'s sizes; a chunk of 0 or over 64M is refused. */
static void test_stream_opts_sizes(void **state)
{
	const char *sizes[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--chunk", "2MiB",
				"--offset", "1G" };
	const char *zero_chunk[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--chunk", "0" };
	const char *huge_chunk[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--chunk", "65M" };
	struct stream_opts o;

	(void)state;
	assert_int_equal(parse(&o, sizes, 9), 0);
	assert_int_equal(o.chunk, 2u << 20);
	assert_int_equal(o.offset, 1ull << 30);
	assert_int_equal(parse(&o, zero_chunk, 7), -1);
	assert_int_equal(parse(&o, huge_chunk, 7), -1);
}

/* --write: a paced recorder, default chunk 1M like playback, never with --offset;
 * with --greedy a bulk copy (default chunk 8M) */
static void test_stream_opts_write(void **state)
{
	const char *rec[] = { "x", "--url", "smb://h/s/rec.mxf", "--user", "u%p", "--write",
			      "--bitrate", "50M", "--prebuffer", "3" };
	const char *copy[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--write", "--greedy" };
	const char *copy_random[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--write",
				      "--greedy", "--random" };
	const char *rec_offset[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--write",
				     "--offset", "1M" };
	const char *play[] = { "x", "--url", "smb://h/s/f", "--user", "u%p" };
	const char *greedy[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--greedy" };
	struct stream_opts o;

	(void)state;
	assert_int_equal(parse(&o, rec, 10), 0);
	assert_true(o.write && !o.greedy);
	assert_int_equal(o.chunk, 1u << 20);
	assert_true(o.bitrate_bps == 50e6 && o.prebuffer == 3);
	assert_string_equal(stream_mode_name(&o), "record");
	assert_int_equal(parse(&o, copy, 7), 0);
	assert_true(o.write && o.greedy && o.chunk == 8u << 20);
	assert_string_equal(stream_mode_name(&o), "copy");
	assert_int_equal(parse(&o, copy_random, 8), -1);
	assert_int_equal(parse(&o, rec_offset, 8), -1);
	assert_int_equal(parse(&o, play, 5), 0);
	assert_false(o.write);
	assert_string_equal(stream_mode_name(&o), "paced");
	assert_int_equal(parse(&o, greedy, 6), 0);
	assert_string_equal(stream_mode_name(&o), "greedy");
}

/* --random: only with --greedy, which it turns into random chunk-aligned reads */
static void test_stream_opts_random(void **state)
{
	struct stream_opts o;
	const char *random[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--greedy", "--random",
				 "--chunk", "4K" };
	const char *paced[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--random" };

	(void)state;
	assert_int_equal(parse(&o, random, 9), 0);
	assert_true(o.greedy && o.random && o.chunk == 4096);
	assert_string_equal(stream_mode_name(&o), "random");
	assert_int_equal(parse(&o, paced, 6), -1);
}

/* --jump-every: paced reading only, at least a tenth of a second */
static void test_stream_opts_jump_every(void **state)
{
	struct stream_opts o;
	const char *scrub[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--jump-every", "1.5" };
	const char *tiny[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--jump-every", "0.05" };
	const char *junk[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--jump-every", "2s" };
	const char *greedy[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--jump-every", "2",
				 "--greedy" };
	const char *rec[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--jump-every", "2",
			      "--write" };

	(void)state;
	assert_int_equal(parse(&o, scrub, 7), 0);
	assert_true(o.jump_every_s == 1.5);
	assert_string_equal(stream_mode_name(&o), "paced");
	assert_int_equal(parse(&o, tiny, 7), -1);
	assert_int_equal(parse(&o, junk, 7), -1);
	assert_int_equal(parse(&o, greedy, 8), -1);
	assert_int_equal(parse(&o, rec, 8), -1);
}

static void test_stream_parse_bitrate(void **state)
{
	double bps;

	(void)state;
	assert_true(stream_parse_bitrate("100M", &bps) == 0 && bps == 100e6);
	assert_true(stream_parse_bitrate("1.5G", &bps) == 0 && bps == 1.5e9);
	assert_true(stream_parse_bitrate("-1M", &bps) == -1);
}

/* 1 MiB at 100 Mbit/s: period 83.886 ms; P = 2 puts chunk 0 due at 167.8 ms */
static void test_pacing_timeline(void **state)
{
	struct pacing p;

	(void)state;
	pacing_init(&p, 1000, 100e6, 1048576, 2);
	assert_true(fabs(p.period_ns - 83886080.0) < 1e-3);
	assert_true(pacing_issue_at(&p, 0) == 1000);
	assert_true(pacing_due_at(&p, 0) == 1000 + 167772160);
	assert_true(pacing_issue_at(&p, 10) == 1000 + 838860800);
	assert_true(pacing_due_at(&p, 10) - pacing_issue_at(&p, 10) == 167772160);
	/* a day of chunks, no accumulated drift */
	assert_true(pacing_issue_at(&p, 1000000) == 1000 + 83886080000000LL);
}

/*
 * The miss rule, for reads and for a recorder's writes alike: chunk k done
 * exactly at t0 + (k + P) * period is on time, one nanosecond later a miss.
 * 4 MiB at 200 Mbit/s: period 167.77 ms; P = 3.
 */
static void test_pacing_miss_rule(void **state)
{
	struct pacing p;
	int64_t due;

	(void)state;
	pacing_init(&p, 0, 200e6, 4u << 20, 3);
	assert_true(fabs(p.period_ns - 167772160.0) < 1e-3);
	due = pacing_due_at(&p, 5);
	assert_true(due == 8 * 167772160LL);
	assert_true(pacing_lateness_ns(&p, 5, due) == 0);
	assert_true(pacing_lateness_ns(&p, 5, due + 1) == 1);
	assert_true(pacing_lateness_ns(&p, 5, pacing_issue_at(&p, 5)) == -3 * 167772160LL);
	/* a late chunk does not move the next one's deadline (no rebuffering) */
	assert_true(pacing_due_at(&p, 6) - due == 167772160LL);
}

static void test_samples_quantiles(void **state)
{
	struct samples s = { 0 };
	int i;

	(void)state;
	assert_true(isnan(samples_quantile(&s, 0.5)));
	for (i = 100; i >= 1; i--)
		assert_true(samples_add(&s, i) == 0);
	assert_true(samples_quantile(&s, 0.5) == 50.0);
	assert_true(samples_quantile(&s, 0.99) == 99.0);
	assert_true(samples_quantile(&s, 1.0) == 100.0);
	assert_true(samples_quantile(&s, 0.0) == 1.0);
	samples_free(&s);
}

/* --timeline MS: parsed, bounded; off by default */
static void test_stream_opts_timeline(void **state)
{
	const char *on[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--timeline", "100" };
	const char *zero[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--timeline", "0" };
	const char *junk[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--timeline", "1s" };
	struct stream_opts o;

	(void)state;
	assert_true(parse(&o, on, 5) == 0 && o.timeline_ms == 0);
	assert_true(parse(&o, on, 7) == 0 && o.timeline_ms == 100);
	assert_true(parse(&o, zero, 7) == -1);
	assert_true(parse(&o, junk, 7) == -1);
}

/* --log-late: a flag, off by default (t_streams.sh reads stderr and stdout as one) */
static void test_stream_opts_log_late(void **state)
{
	const char *on[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--log-late" };
	const char *arg[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--log-late=1" };
	struct stream_opts o;

	(void)state;
	assert_true(parse(&o, on, 5) == 0 && !o.log_late);
	assert_true(parse(&o, on, 6) == 0 && o.log_late);
	assert_true(parse(&o, arg, 6) == -1);
}

/* Bytes land in the bin of their completion time; bins in between stay 0; off adds nothing. */
static void test_timeline_bins(void **state)
{
	struct timeline t, off;

	(void)state;
	timeline_init(&t, 100);
	assert_true(timeline_add(&t, 0, 5) == 0);
	assert_true(timeline_add(&t, 99999999, 7) == 0);
	assert_true(timeline_add(&t, 100000000, 11) == 0);
	assert_true(timeline_add(&t, 5LL * 1000000000, 13) == 0);	/* bin 50 */
	assert_true(timeline_add(&t, 40LL * 1000000000, 17) == 0);	/* bin 400: grows the array */
	assert_true(t.n == 401);
	assert_true(t.bytes[0] == 12 && t.bytes[1] == 11 && t.bytes[2] == 0);
	assert_true(t.bytes[50] == 13 && t.bytes[399] == 0 && t.bytes[400] == 17);
	timeline_free(&t);
	assert_true(t.bytes == NULL && t.n == 0);

	timeline_init(&off, 0);
	assert_true(timeline_add(&off, 1000, 1) == 0 && off.n == 0 && off.bytes == NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_opts_defaults),
		cmocka_unit_test(test_stream_opts_greedy_default_chunk),
		cmocka_unit_test(test_stream_opts_random),
		cmocka_unit_test(test_stream_opts_jump_every),
		cmocka_unit_test(test_stream_opts_rejects),
		cmocka_unit_test(test_stream_opts_sizes),
		cmocka_unit_test(test_stream_opts_write),
		cmocka_unit_test(test_stream_parse_bitrate),
		cmocka_unit_test(test_pacing_timeline),
		cmocka_unit_test(test_pacing_miss_rule),
		cmocka_unit_test(test_samples_quantiles),
		cmocka_unit_test(test_stream_opts_timeline),
		cmocka_unit_test(test_stream_opts_log_late),
		cmocka_unit_test(test_timeline_bins),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("rtio-stream", tests, NULL, NULL);
}
