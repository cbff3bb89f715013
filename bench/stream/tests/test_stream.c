/*
 * Tests of rtio-stream's pure parts.  Run: build/rtio-stream-test [FILTER]
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../pacing.h"
#include "../samples.h"
#include "../stream_opts.h"

static int failures;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, \
				__LINE__, __func__, #cond);                      \
			failures++;                                              \
			return;                                                  \
		}                                                                \
	} while (0)

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

static void test_stream_opts_defaults(void)
{
	const char *args[] = { "x", "--url", "smb://h:4445/s/f", "--user", "u%p" };
	struct stream_opts o;

	CHECK(parse(&o, args, 5) == 0);
	CHECK(o.bitrate_bps == 100e6);
	CHECK(o.chunk == 1048576 && o.prebuffer == 2 && !o.greedy);
	CHECK(strcmp(o.user, "u") == 0 && strcmp(o.password, "p") == 0 && o.domain[0] == '\0');
}

static void test_stream_opts_greedy_default_chunk(void)
{
	const char *args[] = { "x", "--url", "smb://h/s/f", "--user", "D\\u%p%q", "--greedy" };
	struct stream_opts o;

	CHECK(parse(&o, args, 6) == 0);
	CHECK(o.greedy && o.chunk == 8u << 20);
	CHECK(strcmp(o.domain, "D") == 0 && strcmp(o.user, "u") == 0);
	CHECK(strcmp(o.password, "p%q") == 0);
}

static void test_stream_opts_rejects(void)
{
	const char *no_user[] = { "x", "--url", "smb://h/s/f" };
	const char *bad_chunk[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--chunk", "1Q" };
	const char *zero_prebuf[] = { "x", "--url", "smb://h/s/f", "--user", "u%p", "--prebuffer", "0" };
	struct stream_opts o;

	CHECK(parse(&o, no_user, 3) == -1);
	CHECK(parse(&o, bad_chunk, 7) == -1);
	CHECK(parse(&o, zero_prebuf, 7) == -1);
}

static void test_stream_parse_units(void)
{
	double bps;
	uint64_t b;

	CHECK(stream_parse_bitrate("100M", &bps) == 0 && bps == 100e6);
	CHECK(stream_parse_bitrate("1.5G", &bps) == 0 && bps == 1.5e9);
	CHECK(stream_parse_bitrate("-1M", &bps) == -1);
	CHECK(stream_parse_size("1M", &b) == 0 && b == 1048576);
	CHECK(stream_parse_size("64k", &b) == 0 && b == 65536);
	CHECK(stream_parse_size("1MB", &b) == -1);
}

/* 1 MiB at 100 Mbit/s: period 83.886 ms; P = 2 puts chunk 0 due at 167.8 ms */
static void test_pacing_timeline(void)
{
	struct pacing p;

	pacing_init(&p, 1000, 100e6, 1048576, 2);
	CHECK(fabs(p.period_ns - 83886080.0) < 1e-3);
	CHECK(pacing_issue_at(&p, 0) == 1000);
	CHECK(pacing_due_at(&p, 0) == 1000 + 167772160);
	CHECK(pacing_issue_at(&p, 10) == 1000 + 838860800);
	CHECK(pacing_due_at(&p, 10) - pacing_issue_at(&p, 10) == 167772160);
	/* a day of chunks, no accumulated drift */
	CHECK(pacing_issue_at(&p, 1000000) == 1000 + 83886080000000LL);
}

static void test_samples_quantiles(void)
{
	struct samples s = { 0 };
	int i;

	CHECK(isnan(samples_quantile(&s, 0.5)));
	for (i = 100; i >= 1; i--)
		CHECK(samples_add(&s, i) == 0);
	CHECK(samples_quantile(&s, 0.5) == 50.0);
	CHECK(samples_quantile(&s, 0.99) == 99.0);
	CHECK(samples_quantile(&s, 1.0) == 100.0);
	CHECK(samples_quantile(&s, 0.0) == 1.0);
	samples_free(&s);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "test_stream_opts_defaults", test_stream_opts_defaults },
	{ "test_stream_opts_greedy_default_chunk", test_stream_opts_greedy_default_chunk },
	{ "test_stream_opts_rejects", test_stream_opts_rejects },
	{ "test_stream_parse_units", test_stream_parse_units },
	{ "test_pacing_timeline", test_pacing_timeline },
	{ "test_samples_quantiles", test_samples_quantiles },
};

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : "";
	size_t i;
	int ran = 0;

	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		int before = failures;

		if (strstr(tests[i].name, filter) == NULL)
			continue;
		tests[i].fn();
		printf("%s %s\n", failures == before ? "ok  " : "FAIL", tests[i].name);
		ran++;
	}
	if (ran == 0) {
		fprintf(stderr, "no test matches '%s'\n", filter);
		return 2;
	}
	return failures ? 1 : 0;
}
