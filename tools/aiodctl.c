/*
 * aiodctl: talk to a running aiod through the rtio client library.
 *
 *   aiodctl [-s SOCKET] stats              counters as key=value lines
 *   aiodctl [-s SOCKET] files              per-file streams, reservations, deadline misses
 *   aiodctl [-s SOCKET] cat FILE [OFF [LEN]]  read FILE through aiod to stdout
 *   aiodctl [-s SOCKET] write FILE [OFF]   write stdin into FILE through aiod
 *
 * FILE is opened by aiodctl itself, as the invoking user, and its descriptor
 * passed to aiod: aiod never opens paths.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtio_client.h"

#define DEFAULT_SOCKET "/run/aiod/aiod.sock"

static void usage(FILE *f)
{
	fprintf(f, "Usage: aiodctl [-s SOCKET] [-t TIMEOUT_MS] stats | files\n"
		   "       aiodctl [-s SOCKET] cat FILE [OFFSET [LENGTH]]\n"
		   "       aiodctl [-s SOCKET] write FILE [OFFSET]   (data from stdin)\n"
		   "stats prints aiod's counters as key=value lines; aiod(8) explains them\n"
		   "(recorders and writeback_*: section RECORDERS; passthrough_*: RANDOM READS).\n"
		   "Default socket: " DEFAULT_SOCKET "\n");
}

static int parse_u64(const char *s, const char *what, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || end == s || s[0] == '-') {
		fprintf(stderr, "aiodctl: %s: not a number: '%s'\n", what, s);
		return -1;
	}
	return 0;
}

static int cmd_stats(struct rtio_client *c)
{
	struct rtio_stats_rep st;
	int ret = rtio_client_stats(c, &st);

	if (ret < 0) {
		fprintf(stderr, "aiodctl: stats: %s\n", strerror(-ret));
		return 1;
	}
#define P(field) printf(#field "=%llu\n", (unsigned long long)st.field)
	P(sessions);
	P(sessions_total);
	P(files);
	P(blocks_total);
	P(blocks_used);
	P(blocks_pinned);
	P(cache_hits);
	P(cache_misses);
	P(evictions);
	P(readahead_blocks);
	P(disk_reads);
	P(disk_read_bytes);
	P(passthrough_reads);
	P(passthrough_bytes);
	P(disk_writes);
	P(bytes_read);
	P(bytes_written);
	P(requests);
	P(errors);
	P(protocol_errors);
	P(deadline_misses);
	P(streams);
	P(reserved_Bps);
	P(capacity_Bps);
	P(admission_refused);
	P(admission_demoted);
	P(recorders);
	P(writebacks);
	P(writeback_bytes);
	P(writeback_late);
	P(writeback_errors);
	P(file_records);
	P(watches);
	P(outside_changes);
	P(outside_blocks);
#undef P
	return 0;
}

static int cmd_files(struct rtio_client *c)
{
	struct rtio_file_stats_rep f;
	int ret;

	printf("%-40s %5s %5s %12s %8s %14s\n", "file", "opens", "class", "reserved_bps",
	       "misses", "bytes_read");
	for (uint32_t i = 0; (ret = rtio_client_file_stats(c, i, &f)) == 0; i++) {
		printf("%-40s %5u %5u %12llu %8llu %14llu\n", f.name[0] ? f.name : "?", f.opens,
		       f.stream_class, (unsigned long long)f.reserved_bps,
		       (unsigned long long)f.deadline_misses, (unsigned long long)f.bytes_read);
	}
	if (ret != -ENOENT) {
		fprintf(stderr, "aiodctl: files: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

static int cmd_cat(struct rtio_client *c, int argc, char **argv)
{
	unsigned long long off = 0, len = ~0ull;
	struct rtio_file f;
	char *buf;
	int fd, ret;

	if (argc < 1 || argc > 3 || (argc > 1 && parse_u64(argv[1], "OFFSET", &off) != 0) ||
	    (argc > 2 && parse_u64(argv[2], "LENGTH", &len) != 0)) {
		usage(stderr);
		return 2;
	}
	fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "aiodctl: %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	ret = rtio_client_open(c, fd, argv[0], 0, &f);
	close(fd);	/* aiod has its own reference now */
	if (ret < 0) {
		fprintf(stderr, "aiodctl: registering %s with aiod: %s\n", argv[0], strerror(-ret));
		return 1;
	}
	buf = malloc(1 << 20);
	if (buf == NULL) {
		return 1;
	}
	while (len > 0) {
		size_t want = len < (1 << 20) ? (size_t)len : (1 << 20);
		ssize_t n = rtio_client_pread(c, f.file_id, buf, want, (off_t)off);

		if (n < 0) {
			fprintf(stderr, "aiodctl: reading %s at %llu: %s\n", argv[0], off,
				strerror((int)-n));
			free(buf);
			return 1;
		}
		if (n == 0) {
			break;
		}
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) {
			fprintf(stderr, "aiodctl: writing stdout: %s\n", strerror(errno));
			free(buf);
			return 1;
		}
		off += (unsigned long long)n;
		len -= (unsigned long long)n;
	}
	free(buf);
	ret = rtio_client_close(c, f.file_id);
	if (ret < 0) {
		fprintf(stderr, "aiodctl: close: %s\n", strerror(-ret));
		return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

static int cmd_write(struct rtio_client *c, int argc, char **argv)
{
	unsigned long long off = 0;
	struct rtio_file f;
	char *buf;
	int fd, ret;

	if (argc < 1 || argc > 2 || (argc > 1 && parse_u64(argv[1], "OFFSET", &off) != 0)) {
		usage(stderr);
		return 2;
	}
	fd = open(argv[0], O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "aiodctl: %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	ret = rtio_client_open(c, fd, argv[0], RTIO_OPEN_WRITABLE, &f);
	close(fd);
	if (ret < 0) {
		fprintf(stderr, "aiodctl: registering %s with aiod: %s\n", argv[0], strerror(-ret));
		return 1;
	}
	buf = malloc(1 << 20);
	if (buf == NULL) {
		return 1;
	}
	for (;;) {
		size_t n = fread(buf, 1, 1 << 20, stdin);
		ssize_t w;

		if (n == 0) {
			break;
		}
		w = rtio_client_pwrite(c, f.file_id, buf, n, (off_t)off);
		if (w < 0 || (size_t)w != n) {
			fprintf(stderr, "aiodctl: writing %s at %llu: %s\n", argv[0], off,
				w < 0 ? strerror((int)-w) : "short write");
			free(buf);
			return 1;
		}
		off += n;
	}
	free(buf);
	ret = rtio_client_close(c, f.file_id);
	return ret < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *sock = DEFAULT_SOCKET;
	struct rtio_client *c;
	int timeout = 5000;
	bool monitor;
	int opt, ret, rc;

	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	while ((opt = getopt_long(argc, argv, "s:t:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			sock = optarg;
			break;
		case 't':
			timeout = atoi(optarg);
			if (timeout <= 0) {
				fprintf(stderr, "aiodctl: -t: timeout must be a positive number of ms\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	monitor = strcmp(argv[optind], "stats") == 0 || strcmp(argv[optind], "files") == 0;
	/*
	 * Statistics need no session (queues, shared region): aiod answers them
	 * even when max_sessions is reached, which is when they matter most.
	 */
	ret = monitor ? rtio_client_monitor_connect(NULL, sock, timeout, &c) :
			rtio_client_connect(NULL, sock, "aiodctl", timeout, &c);
	if (ret < 0) {
		fprintf(stderr, "aiodctl: connecting to aiod at %s: %s\n", sock, strerror(-ret));
		return 1;
	}
	if (strcmp(argv[optind], "stats") == 0 && optind + 1 == argc) {
		rc = cmd_stats(c);
	} else if (strcmp(argv[optind], "files") == 0 && optind + 1 == argc) {
		rc = cmd_files(c);
	} else if (strcmp(argv[optind], "cat") == 0) {
		rc = cmd_cat(c, argc - optind - 1, argv + optind + 1);
	} else if (strcmp(argv[optind], "write") == 0) {
		rc = cmd_write(c, argc - optind - 1, argv + optind + 1);
	} else {
		fprintf(stderr, "aiodctl: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		rc = 2;
	}
	talloc_free(c);
	return rc;
}
