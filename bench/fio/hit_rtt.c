/*
 * Round trip of a cache hit through aiod: N sequential rtio_client_pread()s
 * of the same already-cached bytes, each timed on its own.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   hit_rtt -s SOCKET -f FILE [-n N] [-b BYTES] [-o OFFSET] [-w WARMUP] [-d]
 *   hit_rtt --mq-baseline [-n N]
 *
 * The first form is what a cached 4 KiB SMB read costs smbd: READ0 on the
 * request queue, aiod's answer on the reply queue, the copy out of the
 * shared buffer and READ1. aiod's counters are read before and after, so the
 * output says whether every read really was a hit.
 *
 * --mq-baseline is the floor of that design on this machine: a request and
 * a reply over a pair of POSIX message queues between two processes that do
 * nothing else (the child echoes). A hit can only be slower than that.
 *
 * Output: one JSON object on stdout (microseconds), for bench/fio/run.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <getopt.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <talloc.h>

#include "rtio_client.h"

struct hit_rtt_opts {
	const char *socket;
	const char *file;
	unsigned long n;
	unsigned long warmup;
	size_t bytes;
	off_t offset;
	bool direct;
	bool mq_baseline;
	int echo_cpu;		/* --mq-baseline: CPU for the echo child, -1 = inherit */
};

static uint64_t hit_rtt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int hit_rtt_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[n]. */
static double hit_rtt_pct_us(const uint64_t *v, unsigned long n, double p)
{
	unsigned long rank = (unsigned long)(p / 100.0 * (double)n + 0.999999);

	if (rank == 0) {
		rank = 1;
	}
	if (rank > n) {
		rank = n;
	}
	return (double)v[rank - 1] / 1000.0;
}

static double hit_rtt_cpu_us(const struct rusage *r)
{
	return (double)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1e6 +
	       (double)(r->ru_utime.tv_usec + r->ru_stime.tv_usec);
}

/* Sorts ns[] and prints the distribution plus per-op CPU and context switches. */
static void hit_rtt_report(const char *mode, uint64_t *ns, unsigned long n,
			   const struct rusage *r0, const struct rusage *r1, const char *extra)
{
	double sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		sum += (double)ns[i];
	}
	qsort(ns, n, sizeof(ns[0]), hit_rtt_cmp);
	printf("{\"mode\":\"%s\",\"n\":%lu,\"min_us\":%.3f,\"median_us\":%.3f,\"p90_us\":%.3f,"
	       "\"p99_us\":%.3f,\"p999_us\":%.3f,\"max_us\":%.3f,\"mean_us\":%.3f,"
	       "\"client_cpu_us_per_op\":%.3f,"
	       "\"client_vol_cs_per_op\":%.3f,\"client_invol_cs_per_op\":%.3f%s}\n",
	       mode, n, (double)ns[0] / 1000.0, hit_rtt_pct_us(ns, n, 50), hit_rtt_pct_us(ns, n, 90),
	       hit_rtt_pct_us(ns, n, 99), hit_rtt_pct_us(ns, n, 99.9), (double)ns[n - 1] / 1000.0,
	       sum / (double)n / 1000.0, (hit_rtt_cpu_us(r1) - hit_rtt_cpu_us(r0)) / (double)n,
	       (double)(r1->ru_nvcsw - r0->ru_nvcsw) / (double)n,
	       (double)(r1->ru_nivcsw - r0->ru_nivcsw) / (double)n, extra);
}

static int hit_rtt_aiod(const struct hit_rtt_opts *o)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_stats_rep s0, s1;
	struct rtio_file f;
	struct rusage r0, r1;
	uint64_t *ns;
	char extra[256];
	void *buf;
	int fd, ret;

	ns = talloc_array(mem, uint64_t, o->n);
	if (ns == NULL || posix_memalign(&buf, 4096, o->bytes) != 0) {
		fprintf(stderr, "hit_rtt: out of memory\n");
		return 1;
	}
	fd = open(o->file, O_RDONLY | O_CLOEXEC | (o->direct ? O_DIRECT : 0));
	if (fd < 0) {
		fprintf(stderr, "hit_rtt: %s: %s\n", o->file, strerror(errno));
		return 1;
	}
	ret = rtio_client_connect(mem, o->socket, "hit_rtt", 5000, &c);
	if (ret < 0) {
		fprintf(stderr, "hit_rtt: connecting to %s: %s\n", o->socket, strerror(-ret));
		return 1;
	}
	ret = rtio_client_open(c, fd, o->file, 0, &f);
	if (ret < 0) {
		fprintf(stderr, "hit_rtt: registering %s: %s\n", o->file, strerror(-ret));
		return 1;
	}
	/* The first read may miss; the rest must not. */
	for (unsigned long i = 0; i < o->warmup + 1; i++) {
		ssize_t got = rtio_client_pread(c, f.file_id, buf, o->bytes, o->offset);

		if (got != (ssize_t)o->bytes) {
			fprintf(stderr, "hit_rtt: warm-up read: %s\n",
				got < 0 ? strerror((int)-got) : "short read");
			return 1;
		}
	}
	if (rtio_client_stats(c, &s0) != 0) {
		fprintf(stderr, "hit_rtt: stats failed\n");
		return 1;
	}
	getrusage(RUSAGE_SELF, &r0);
	for (unsigned long i = 0; i < o->n; i++) {
		uint64_t t0 = hit_rtt_now_ns();
		ssize_t got = rtio_client_pread(c, f.file_id, buf, o->bytes, o->offset);

		ns[i] = hit_rtt_now_ns() - t0;
		if (got != (ssize_t)o->bytes) {
			fprintf(stderr, "hit_rtt: read %lu: %s\n", i,
				got < 0 ? strerror((int)-got) : "short read");
			return 1;
		}
	}
	getrusage(RUSAGE_SELF, &r1);
	if (rtio_client_stats(c, &s1) != 0) {
		fprintf(stderr, "hit_rtt: stats failed\n");
		return 1;
	}
	/* Other sessions may be busy too: these are aiod-wide deltas. */
	snprintf(extra, sizeof(extra),
		 ",\"bytes\":%zu,\"aiod_hits\":%llu,\"aiod_misses\":%llu,\"aiod_requests\":%llu",
		 o->bytes, (unsigned long long)(s1.cache_hits - s0.cache_hits),
		 (unsigned long long)(s1.cache_misses - s0.cache_misses),
		 (unsigned long long)(s1.requests - s0.requests));
	hit_rtt_report("aiod_hit", ns, o->n, &r0, &r1, extra);
	(void)rtio_client_close(c, f.file_id);
	talloc_free(mem);
	close(fd);
	free(buf);
	return 0;
}

/* Echo child: what aiod does for a hit, minus aiod. */
static void hit_rtt_echo(mqd_t in, mqd_t out)
{
	char msg[512];

	for (;;) {
		ssize_t n = mq_receive(in, msg, sizeof(msg), NULL);

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			_exit(0);
		}
		if (n == 1 && msg[0] == 'q') {
			_exit(0);
		}
		if (mq_send(out, msg, (size_t)n, 0) != 0) {
			_exit(1);
		}
	}
}

static int hit_rtt_mq_baseline(const struct hit_rtt_opts *o)
{
	struct mq_attr attr = { .mq_maxmsg = 8, .mq_msgsize = 304 };
	char req_name[64], rep_name[64];
	char msg[304];
	struct rusage r0, r1;
	uint64_t *ns = calloc(o->n, sizeof(*ns));
	mqd_t req, rep;
	pid_t child;
	int status;

	if (ns == NULL) {
		return 1;
	}
	snprintf(req_name, sizeof(req_name), "/hit_rtt.%d.req", (int)getpid());
	snprintf(rep_name, sizeof(rep_name), "/hit_rtt.%d.rep", (int)getpid());
	req = mq_open(req_name, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
	rep = mq_open(rep_name, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
	(void)mq_unlink(req_name);
	(void)mq_unlink(rep_name);
	if (req == (mqd_t)-1 || rep == (mqd_t)-1) {
		fprintf(stderr, "hit_rtt: mq_open: %s\n", strerror(errno));
		return 1;
	}
	child = fork();
	if (child < 0) {
		return 1;
	}
	if (child == 0) {
		if (o->echo_cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(o->echo_cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set) != 0) {
				_exit(1);
			}
		}
		hit_rtt_echo(req, rep);
	}
	memset(msg, 0, sizeof(msg));
	/* 56 bytes out (rtio_io_req), 304 back (rtio_io_rep), like READ0. */
	for (unsigned long i = 0; i < o->warmup + o->n; i++) {
		uint64_t t0 = hit_rtt_now_ns();

		if (i == o->warmup) {
			getrusage(RUSAGE_SELF, &r0);
		}
		if (mq_send(req, msg, 56, 0) != 0 || mq_receive(rep, msg, sizeof(msg), NULL) < 0) {
			fprintf(stderr, "hit_rtt: mq: %s\n", strerror(errno));
			kill(child, SIGKILL);
			return 1;
		}
		if (i >= o->warmup) {
			ns[i - o->warmup] = hit_rtt_now_ns() - t0;
		}
	}
	getrusage(RUSAGE_SELF, &r1);
	msg[0] = 'q';
	(void)mq_send(req, msg, 1, 0);
	waitpid(child, &status, 0);
	hit_rtt_report("mq_baseline", ns, o->n, &r0, &r1, "");
	free(ns);
	return 0;
}

static void hit_rtt_usage(FILE *f)
{
	fprintf(f, "Usage: hit_rtt -s SOCKET -f FILE [-n N] [-b BYTES] [-o OFFSET] [-w WARMUP] [-d]\n"
		   "       hit_rtt --mq-baseline [-n N] [-w WARMUP] [-c CPU]\n"
		   "  -n N       timed reads (default 20000)\n"
		   "  -b BYTES   bytes per read (default 4096)\n"
		   "  -o OFFSET  where in the file (default 0)\n"
		   "  -w WARMUP  untimed reads first (default 1000)\n"
		   "  -d         open FILE with O_DIRECT (aiod then reads it without the page cache)\n"
		   "  -c CPU     --mq-baseline: pin the echo process to CPU (default: inherit)\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mq-baseline", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hit_rtt_opts o = {
		.socket = getenv("RTIO_SOCKET"),
		.n = 20000,
		.warmup = 1000,
		.bytes = 4096,
		.echo_cpu = -1,
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "s:f:n:b:o:w:c:dh", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': o.socket = optarg; break;
		case 'f': o.file = optarg; break;
		case 'n': o.n = strtoul(optarg, NULL, 0); break;
		case 'b': o.bytes = strtoul(optarg, NULL, 0); break;
		case 'o': o.offset = (off_t)strtoull(optarg, NULL, 0); break;
		case 'w': o.warmup = strtoul(optarg, NULL, 0); break;
		case 'd': o.direct = true; break;
		case 'c': o.echo_cpu = atoi(optarg); break;
		case 'B': o.mq_baseline = true; break;
		case 'h': hit_rtt_usage(stdout); return 0;
		default: hit_rtt_usage(stderr); return 2;
		}
	}
	if (o.n == 0 || o.bytes == 0) {
		hit_rtt_usage(stderr);
		return 2;
	}
	if (o.mq_baseline) {
		return hit_rtt_mq_baseline(&o);
	}
	if (o.socket == NULL || o.file == NULL) {
		hit_rtt_usage(stderr);
		return 2;
	}
	return hit_rtt_aiod(&o);
}
