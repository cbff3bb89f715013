/*
 * Many distinct files through one session: aiod must not keep a record of
 * every file it ever saw. Opens, reads (one cached block each) and closes N
 * small files, then checks that aiod keeps a bounded number of file records
 * (open files + about three per cache block), that its memory came back, and
 * that a FILE_STATS listing walks exactly those records.
 *
 *   aiod_manyfiles SOCKET DIR AIOD_PID N
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtio_client.h"

/* Resident memory of pid in KiB, or 0. */
static unsigned long rss_kib(const char *pid)
{
	char path[64], line[128];
	unsigned long kib = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "re");
	if (f == NULL) {
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kib = strtoul(line + 6, NULL, 10);
		}
	}
	fclose(f);
	return kib;
}

/* Open, read and close dir/f<i>; 0 or -errno. */
static int one_file(struct rtio_client *c, const char *dir, unsigned i)
{
	char path[512], name[32], buf[16];
	struct rtio_file rf;
	uint64_t id;
	int fd, ret;

	snprintf(name, sizeof(name), "f%u", i);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		return -errno;
	}
	if (write(fd, name, strlen(name)) != (ssize_t)strlen(name)) {
		ret = -EIO;
		goto out;
	}
	ret = rtio_client_open(c, fd, name, 0, &rf);
	if (ret != 0) {
		goto out;
	}
	id = rf.file_id;
	ret = (int)rtio_client_pread(c, id, buf, sizeof(buf), 0);
	ret = ret == (int)strlen(name) && memcmp(buf, name, strlen(name)) == 0 ? 0 : -EIO;
	if (rtio_client_close(c, id) != 0 && ret == 0) {
		ret = -EIO;
	}
out:
	close(fd);
	return ret;
}

/* The files stay until the end: unlinked, their records would go by inotify, not the sweep. */
static void remove_files(const char *dir, unsigned n)
{
	char path[512];

	for (unsigned i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%u", dir, i);
		if (unlink(path) != 0) {
			perror(path);
		}
	}
}

int main(int argc, char **argv)
{
	struct rtio_client *c;
	struct rtio_stats_rep st;
	struct rtio_file_stats_rep fs;
	unsigned long rss0, rss1;
	unsigned n, listed = 0;
	uint64_t bound;
	int ret;

	if (argc != 5) {
		fprintf(stderr, "usage: aiod_manyfiles SOCKET DIR AIOD_PID N\n");
		return 2;
	}
	n = (unsigned)strtoul(argv[4], NULL, 0);
	ret = rtio_client_connect(NULL, argv[1], "manyfiles", 5000, &c);
	if (ret != 0) {
		fprintf(stderr, "connect: %s\n", strerror(-ret));
		return 1;
	}
	rss0 = rss_kib(argv[3]);
	for (unsigned i = 0; i < n; i++) {
		ret = one_file(c, argv[2], i);
		if (ret != 0) {
			fprintf(stderr, "file %u: %s\n", i, strerror(-ret));
			remove_files(argv[2], i + 1);
			return 1;
		}
	}
	rss1 = rss_kib(argv[3]);
	if (rtio_client_stats(c, &st) != 0) {
		fprintf(stderr, "stats failed\n");
		return 1;
	}
	while ((ret = rtio_client_file_stats(c, listed, &fs)) == 0) {
		listed++;
	}
	bound = st.files + 3 * st.blocks_total + 64;
	printf("%u files: aiod keeps %llu records (bound %llu), %llu watched, listed %u; "
	       "RSS %lu -> %lu KiB\n", n, (unsigned long long)st.file_records,
	       (unsigned long long)bound, (unsigned long long)st.watches, listed, rss0, rss1);
	talloc_free(c);
	remove_files(argv[2], n);
	if (ret != -ENOENT || listed != st.file_records) {
		fprintf(stderr, "FAIL: the listing ended with %s after %u of %llu records\n",
			strerror(-ret), listed, (unsigned long long)st.file_records);
		return 1;
	}
	if (st.file_records > bound || st.watches > st.file_records) {
		fprintf(stderr, "FAIL: file records are not given back\n");
		return 1;
	}
	/* 50,000 records held on cost 17 MB before; what is left must be small. */
	if (rss1 > rss0 + 8192) {
		fprintf(stderr, "FAIL: aiod grew by %lu KiB\n", rss1 - rss0);
		return 1;
	}
	return 0;
}
