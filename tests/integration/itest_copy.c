/*
 * A server-side copy (FSCTL_SRV_COPYCHUNK through libsmbclient's splice):
 * the data moves inside smbd, never through the client.
 *
 * Usage: itest_copy SRC_URL DST_URL BYTES
 *   Copies BYTES of SRC to a new DST and prints
 *   "ok copy BYTES SECONDS" or "ERROR ...".
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itest_smb.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* libsmbclient calls it after every chunk (never NULL): non-zero goes on. */
static int copy_progress(off_t n, void *priv)
{
	(void)n;
	(void)priv;
	return 1;
}

int main(int argc, char **argv)
{
	SMBCCTX *ctx;
	SMBCFILE *src, *dst;
	smbc_splice_fn splice;
	long long want;
	off_t copied;
	double t0, el;

	if (argc != 4 || (want = strtoll(argv[3], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: itest_copy SRC_URL DST_URL BYTES\n");
		return 2;
	}
	ctx = itest_smb_connect();
	src = itest_smb_open(ctx, argv[1], O_RDONLY);
	dst = itest_smb_open(ctx, argv[2], O_RDWR | O_CREAT | O_TRUNC);
	if (src == NULL || dst == NULL) {
		printf("ERROR open: %s\n", strerror(errno));
		return 1;
	}
	splice = smbc_getFunctionSplice(ctx);
	t0 = now_s();
	copied = splice(ctx, src, dst, (off_t)want, copy_progress, NULL);
	el = now_s() - t0;
	if (copied != (off_t)want) {
		printf("ERROR splice: %lld of %lld bytes: %s\n", (long long)copied, want,
		       copied < 0 ? strerror(errno) : "short");
		return 1;
	}
	if (itest_smb_close(ctx, dst) != 0 || itest_smb_close(ctx, src) != 0) {
		printf("ERROR close: %s\n", strerror(errno));
		return 1;
	}
	itest_smb_disconnect(ctx);
	printf("ok copy %lld %.3f\n", want, el);
	return 0;
}
