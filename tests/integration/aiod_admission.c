/*
 * Admission control through aiod: with room for K streams of a class, the
 * K+1st open of a stream file is refused (-ENOBUFS, which smbd turns into
 * NT_STATUS_INSUFFICIENT_RESOURCES) while best-effort files still open, and
 * closing a stream gives its reservation back.
 *
 *   aiod_admission SOCKET DIR K
 *
 * aiod must run with [admission] mode = refuse, a capacity for K streams and
 * a [stream.*] class matching *.mxf.
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

static int open_file(struct rtio_client *c, const char *dir, const char *name,
		     struct rtio_file *f)
{
	char path[512];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 1 << 20) != 0) {
		perror(path);
		exit(1);
	}
	ret = rtio_client_open(c, fd, name, RTIO_OPEN_WRITABLE, f);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	struct rtio_client *c;
	struct rtio_file f[64], extra, plain;
	struct rtio_stats_rep st;
	int k, ret, fail = 0;

	if (argc != 4 || (k = atoi(argv[3])) < 1 || k > 60) {
		fprintf(stderr, "usage: aiod_admission SOCKET DIR K (1..60)\n");
		return 2;
	}
	ret = rtio_client_connect(NULL, argv[1], "admission", 5000, &c);
	if (ret < 0) {
		fprintf(stderr, "connect: %s\n", strerror(-ret));
		return 1;
	}
	for (int i = 0; i < k; i++) {
		char name[32];
		snprintf(name, sizeof(name), "stream%d.mxf", i);
		ret = open_file(c, argv[2], name, &f[i]);
		if (ret != 0 || f[i].bitrate == 0) {
			printf("FAIL stream %d of %d not admitted: %s, bitrate %llu\n", i + 1, k,
			       strerror(-ret), (unsigned long long)f[i].bitrate);
			fail++;
		}
	}
	ret = open_file(c, argv[2], "overcommit.mxf", &extra);
	if (ret != -ENOBUFS) {
		printf("FAIL stream %d was not refused: %s\n", k + 1, strerror(-ret));
		fail++;
	} else {
		printf("ok   stream %d refused with ENOBUFS\n", k + 1);
	}
	ret = open_file(c, argv[2], "notes.txt", &plain);
	if (ret != 0 || plain.bitrate != 0) {
		printf("FAIL a best-effort file did not open: %s\n", strerror(-ret));
		fail++;
	}
	if (rtio_client_stats(c, &st) != 0 || st.streams != (uint64_t)k ||
	    st.admission_refused < 1 || st.reserved_Bps == 0 || st.reserved_Bps > st.capacity_Bps) {
		printf("FAIL stats: streams=%llu refused=%llu reserved=%llu capacity=%llu\n",
		       (unsigned long long)st.streams, (unsigned long long)st.admission_refused,
		       (unsigned long long)st.reserved_Bps, (unsigned long long)st.capacity_Bps);
		fail++;
	} else {
		printf("ok   stats: %llu streams reserve %llu of %llu bytes/s\n",
		       (unsigned long long)st.streams, (unsigned long long)st.reserved_Bps,
		       (unsigned long long)st.capacity_Bps);
	}
	/* Closing one stream makes room for the next. */
	if (rtio_client_close(c, f[0].file_id) != 0 ||
	    open_file(c, argv[2], "overcommit.mxf", &extra) != 0 || extra.bitrate == 0) {
		printf("FAIL a stream's reservation did not come back at close\n");
		fail++;
	} else {
		printf("ok   closing a stream admits the next\n");
	}
	talloc_free(c);
	printf("admission: %d failures\n", fail);
	return fail ? 1 : 0;
}
