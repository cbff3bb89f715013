/*
 * aiodctl top: aiod's totals and its busiest sessions, redrawn every
 * interval. A plain ANSI clear (only on a terminal) is all it needs: no
 * curses. -n COUNT stops after COUNT screens, for scripts and tests.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aiodctl.h"
#include "aiodctl_sessions.h"
#include "aiodctl_snapshot.h"

#define TOP_ROWS 20	/* sessions shown: the busiest */

/* Bytes/s in decimal megabytes, as disks and networks are rated. */
static const char *mbps(char *buf, size_t len, uint64_t Bps)
{
	snprintf(buf, len, "%.1f MB/s", (double)Bps / 1e6);
	return buf;
}

static void header(const struct aiodctl_snapshot *p, const struct aiodctl_snapshot *c)
{
	const struct rtio_stats_rep *a = &p->stats, *b = &c->stats;
	uint64_t dt = c->taken_ns - p->taken_ns, up = c->info.uptime_ms / 1000;
	uint64_t hits = b->cache_hits - a->cache_hits, misses = b->cache_misses - a->cache_misses;
	char r[32], w[32], d[32], res[32], cap[32];

	printf("aiod %s  pid %u  up %" PRIu64 "d %02" PRIu64 ":%02" PRIu64 ":%02" PRIu64
	       "  sessions %" PRIu64 "  streams %" PRIu64 " (reserved %s of %s)\n",
	       c->info.version, c->info.pid, up / 86400, up / 3600 % 24, up / 60 % 60, up % 60,
	       b->sessions, b->streams, mbps(res, sizeof(res), b->reserved_Bps),
	       mbps(cap, sizeof(cap), b->capacity_Bps));
	printf("read %s  written %s  disk read %s  cache hits %.1f%%  blocks %" PRIu64 "/%" PRIu64
	       " used, %" PRIu64 " pinned\n",
	       mbps(r, sizeof(r), aiodctl_rate(a->bytes_read, b->bytes_read, dt)),
	       mbps(w, sizeof(w), aiodctl_rate(a->bytes_written, b->bytes_written, dt)),
	       mbps(d, sizeof(d), aiodctl_rate(a->disk_read_bytes, b->disk_read_bytes, dt)),
	       hits + misses > 0 ? 100.0 * (double)hits / (double)(hits + misses) : 100.0,
	       b->blocks_used, b->blocks_total, b->blocks_pinned);
	printf("deadline misses +%" PRIu64 "  errors +%" PRIu64 "  writebacks late +%" PRIu64 "\n\n",
	       b->deadline_misses - a->deadline_misses, b->errors - a->errors,
	       b->writeback_late - a->writeback_late);
}

static uint64_t busy(const struct aiodctl_session *s)
{
	return s->read_Bps + s->write_Bps;
}

static int by_busy(const void *x, const void *y)
{
	uint64_t a = busy(x), b = busy(y);

	return a < b ? 1 : a > b ? -1 : 0;
}

static void session_rows(struct aiodctl_snapshot *c)
{
	char r[32], w[32];

	qsort(c->sessions, c->n_sessions, sizeof(c->sessions[0]), by_busy);
	printf("%8s %-12s %12s %12s %8s %5s %7s %7s\n", "pid", "user", "read", "written",
	       "inflight", "opens", "streams", "lead_ms");
	for (uint32_t i = 0; i < c->n_sessions && i < TOP_ROWS; i++) {
		const struct aiodctl_session *s = &c->sessions[i];
		char lead[24] = "-";

		if (s->rep.lead_ms != RTIO_LEAD_NONE) {
			snprintf(lead, sizeof(lead), "%" PRIu64, s->rep.lead_ms);
		}
		printf("%8u %-12s %12s %12s %8u %5u %7u %7s\n", s->rep.pid, s->user,
		       mbps(r, sizeof(r), s->read_Bps), mbps(w, sizeof(w), s->write_Bps),
		       s->rep.inflight, s->rep.opens, s->rep.streams, lead);
	}
	if (c->n_sessions > TOP_ROWS) {
		printf("(%u more)\n", c->n_sessions - TOP_ROWS);
	}
}

static int screen(const struct aiodctl_snapshot *p, struct aiodctl_snapshot *c, bool tty)
{
	if (tty) {
		fputs("\033[H\033[2J", stdout);
	}
	header(p, c);
	session_rows(c);
	if (!tty) {
		putchar('\n');	/* screens apart in a log */
	}
	return fflush(stdout) == 0 ? 0 : -EIO;
}

static int parse(int argc, char **argv, unsigned long long *count, unsigned long long *interval)
{
	int opt;

	*count = 0;
	*interval = 1000;
	optind = 0;	/* GNU getopt: start over on the subcommand's arguments */
	while ((opt = getopt(argc, argv, "+n:i:")) != -1) {
		if (opt == 'n' && aiodctl_parse_u64(optarg, "-n", count) == 0) {
			continue;
		}
		if (opt == 'i' && aiodctl_parse_u64(optarg, "-i", interval) == 0 && *interval > 0) {
			continue;
		}
		return -1;
	}
	return optind == argc ? 0 : -1;
}

int aiodctl_cmd_top(struct aiodctl *ctl, int argc, char **argv)
{
	unsigned long long count, interval;
	struct aiodctl_snapshot *prev = NULL, *cur;
	bool tty = isatty(STDOUT_FILENO);
	int ret;

	if (parse(argc, argv, &count, &interval) != 0) {
		return aiodctl_usage_of(argv[0]);
	}
	if (aiodctl_client(ctl) == NULL) {
		return AIODCTL_EXIT_FAIL;
	}
	ret = aiodctl_snapshot_take(NULL, ctl->c, &prev);
	for (unsigned long long n = 0; ret == 0 && (count == 0 || n < count); n++) {
		ret = aiodctl_sleep_ms(interval);
		if (ret == 0) {
			ret = aiodctl_snapshot_take(NULL, ctl->c, &cur);
		}
		if (ret == 0) {
			aiodctl_rates(prev, cur);
			ret = screen(prev, cur, tty);
			talloc_free(prev);
			prev = cur;
		}
	}
	TALLOC_FREE(prev);
	return ret < 0 ? aiodctl_fail("top", ret) : AIODCTL_EXIT_OK;
}
