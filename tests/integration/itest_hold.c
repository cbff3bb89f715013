/*
 * Hold one file open over SMB and read or rewrite it on command, so a test
 * can change aiod's state (stop, kill, restart it) between the I/Os of one
 * connection, on an fsp that stays open and registered.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Usage: itest_hold URL SIZE SEED
 *   creates URL with SIZE random bytes, reads them back, prints "ready";
 *   then one command per line on stdin:
 *     read        read the whole file, compare     -> "ok read MS" | "MISMATCH ..."
 *     write SEED  rewrite it with new bytes, read back -> "ok write MS" | "MISMATCH ..."
 *     expect PATH read it over SMB and compare with the local file PATH (someone
 *                 else changed it: a local process, another smbd)
 *                                                   -> "ok expect MS" | "MISMATCH ..."
 *     quit
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itest_smb.h"

static SMBCCTX *ctx;
static SMBCFILE *f;
static uint8_t *want, *got;
static size_t size;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int check(const char *what)
{
	ssize_t n = itest_smb_pread(ctx, f, got, size + 4096, 0);
	ssize_t bad;

	if (n < 0) {
		printf("ERROR %s: read: %s\n", what, strerror(errno));
		return 1;
	}
	if ((size_t)n != size) {
		printf("MISMATCH %s: read %zd bytes, want %zu\n", what, n, size);
		return 1;
	}
	bad = itest_diff(got, want, size);
	if (bad >= 0) {
		printf("MISMATCH %s: byte %zd is 0x%02x, want 0x%02x\n", what, bad, got[bad],
		       want[bad]);
		return 1;
	}
	return 0;
}

static int rewrite(uint64_t seed)
{
	uint64_t rng = seed != 0 ? seed : 1;

	itest_fill(&rng, want, size);
	if (itest_smb_pwrite(ctx, f, want, size, 0) != (ssize_t)size) {
		printf("ERROR write: %s\n", strerror(errno));
		return 1;
	}
	return check("write");
}

/* The file now holds what the local file path holds (same size). */
static int expect(const char *path)
{
	FILE *lf = fopen(path, "rb");
	size_t n;

	if (lf == NULL) {
		printf("ERROR expect: %s: %s\n", path, strerror(errno));
		return 1;
	}
	n = fread(want, 1, size + 1, lf);
	fclose(lf);
	if (n != size) {
		printf("ERROR expect: %s holds %zu bytes, want %zu\n", path, n, size);
		return 1;
	}
	return check("expect");
}

int main(int argc, char **argv)
{
	char line[600];
	int bad = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: itest_hold URL SIZE SEED\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	size = strtoull(argv[2], NULL, 0);
	want = malloc(size + 1);
	got = malloc(size + 4096);
	if (want == NULL || got == NULL) {
		perror("malloc");
		return 2;
	}
	ctx = itest_smb_connect();
	f = itest_smb_open(ctx, argv[1], O_RDWR | O_CREAT | O_TRUNC);
	if (f == NULL) {
		printf("ERROR open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (rewrite(strtoull(argv[3], NULL, 0)) != 0) {
		return 1;
	}
	printf("ready\n");
	while (!bad && fgets(line, sizeof(line), stdin) != NULL) {
		long long t0 = now_ms();

		if (strncmp(line, "read", 4) == 0) {
			bad = check("read");
			if (!bad) {
				printf("ok read %lld\n", now_ms() - t0);
			}
		} else if (strncmp(line, "write", 5) == 0) {
			bad = rewrite(strtoull(line + 5, NULL, 0));
			if (!bad) {
				printf("ok write %lld\n", now_ms() - t0);
			}
		} else if (strncmp(line, "expect ", 7) == 0) {
			line[strcspn(line, "\n")] = '\0';
			bad = expect(line + 7);
			if (!bad) {
				printf("ok expect %lld\n", now_ms() - t0);
			}
		} else if (strncmp(line, "quit", 4) == 0) {
			break;
		} else {
			printf("ERROR unknown command: %s", line);
			bad = 1;
		}
	}
	itest_smb_close(ctx, f);
	itest_smb_disconnect(ctx);
	return bad;
}
