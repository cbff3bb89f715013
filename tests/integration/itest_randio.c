/*
 * Random-offset reads, writes and truncates on one file over SMB, each
 * checked byte for byte against a local model of the file.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Usage: itest_randio URL SEED OPS MAXSIZE [MODEL_OUT [STOP_FILE]]
 *   URL        smb://host:port/share/file (created, truncated)
 *   OPS        operations; 0: until STOP_FILE exists
 *   MODEL_OUT  where to write the model at the end, so the caller can
 *              compare it with the file on the server's disk ("-": nowhere)
 * Prints one line; exits 0 when every read matched, 1 on a mismatch, 2 on
 * an SMB error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest_smb.h"

#define MAX_XFER (4u << 20)	/* crosses several 1 MiB cache blocks */

struct randio {
	SMBCCTX *ctx;
	SMBCFILE *f;
	const char *url;
	uint64_t seed;
	uint64_t rng;
	uint8_t *model;
	size_t model_len;
	size_t max_size;
	uint8_t *buf;
	uint8_t *got;
	unsigned long op;
	uint64_t written;
	uint64_t read;
};

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

static void randio_fail(struct randio *r, const char *what)
{
	fprintf(stderr, "itest_randio: %s: op %lu (seed %" PRIu64 "): %s: %s\n", r->url, r->op,
		r->seed, what, strerror(errno));
	exit(2);
}

static size_t randio_below(struct randio *r, size_t n)
{
	return n == 0 ? 0 : (size_t)(itest_rand(&r->rng) % n);
}

static void randio_write(struct randio *r)
{
	size_t off = randio_below(r, r->max_size);
	size_t len = 1 + randio_below(r, min_size(MAX_XFER, r->max_size - off));

	itest_fill(&r->rng, r->buf, len);
	if (itest_smb_pwrite(r->ctx, r->f, r->buf, len, (off_t)off) != (ssize_t)len) {
		randio_fail(r, "write");
	}
	memcpy(r->model + off, r->buf, len);
	if (off + len > r->model_len) {
		r->model_len = off + len;
	}
	r->written += len;
}

/* Returns 0, or 1 after printing the first mismatch. */
static int randio_check(struct randio *r, size_t off, size_t len)
{
	size_t want = off >= r->model_len ? 0 : min_size(len, r->model_len - off);
	ssize_t got = itest_smb_pread(r->ctx, r->f, r->got, len, (off_t)off);
	ssize_t bad;

	if (got < 0) {
		randio_fail(r, "read");
	}
	r->read += (uint64_t)got;
	if ((size_t)got != want) {
		printf("MISMATCH %s op %lu seed %" PRIu64 ": read %zu@%zu returned %zd, want %zu "
		       "(file size %zu)\n", r->url, r->op, r->seed, len, off, got, want,
		       r->model_len);
		return 1;
	}
	bad = itest_diff(r->got, r->model + off, want);
	if (bad >= 0) {
		printf("MISMATCH %s op %lu seed %" PRIu64 ": byte %zu differs (0x%02x, want 0x%02x)"
		       " in read %zu@%zu\n", r->url, r->op, r->seed, off + (size_t)bad,
		       r->got[bad], r->model[off + bad], len, off);
		return 1;
	}
	return 0;
}

static int randio_read(struct randio *r)
{
	/* sometimes past the end, to see EOF handled */
	size_t off = randio_below(r, r->model_len + (1u << 20));
	size_t len = 1 + randio_below(r, MAX_XFER);

	if (off >= r->max_size) {
		off = r->max_size - 1;
	}
	return randio_check(r, off, len);
}

static void randio_truncate(struct randio *r)
{
	size_t len = randio_below(r, r->max_size);

	if (itest_smb_ftruncate(r->ctx, r->f, (off_t)len) != 0) {
		randio_fail(r, "ftruncate");
	}
	/* the model stays zero beyond model_len, as a grown file reads */
	if (len < r->model_len) {
		memset(r->model + len, 0, r->model_len - len);
	}
	r->model_len = len;
}

static void randio_reopen(struct randio *r)
{
	if (itest_smb_close(r->ctx, r->f) != 0) {
		randio_fail(r, "close");
	}
	r->f = itest_smb_open(r->ctx, r->url, O_RDWR);
	if (r->f == NULL) {
		randio_fail(r, "reopen");
	}
}

int main(int argc, char **argv)
{
	struct randio r = { 0 };
	unsigned long ops;
	const char *stop_file = argc > 6 ? argv[6] : NULL;
	off_t size;
	int bad = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: itest_randio URL SEED OPS MAXSIZE [MODEL_OUT [STOP_FILE]]\n");
		return 2;
	}
	r.url = argv[1];
	r.seed = strtoull(argv[2], NULL, 0);
	r.rng = r.seed != 0 ? r.seed : 1;
	ops = strtoul(argv[3], NULL, 0);
	r.max_size = strtoull(argv[4], NULL, 0);
	if (r.max_size == 0) {
		fprintf(stderr, "MAXSIZE must be > 0\n");
		return 2;
	}
	r.model = calloc(1, r.max_size);
	r.buf = malloc(MAX_XFER);
	r.got = malloc(MAX_XFER > r.max_size ? MAX_XFER : r.max_size);
	if (r.model == NULL || r.buf == NULL || r.got == NULL) {
		perror("malloc");
		return 2;
	}
	r.ctx = itest_smb_connect();
	r.f = itest_smb_open(r.ctx, r.url, O_RDWR | O_CREAT | O_TRUNC);
	if (r.f == NULL) {
		randio_fail(&r, "open");
	}
	if (ops == 0 && stop_file == NULL) {
		fprintf(stderr, "OPS 0 needs a STOP_FILE\n");
		return 2;
	}
	for (r.op = 0; (ops == 0 || r.op < ops) && bad == 0; r.op++) {
		unsigned pick;

		if (ops == 0 && (r.op & 7) == 0 && access(stop_file, F_OK) == 0) {
			break;
		}
		pick = (unsigned)randio_below(&r, 100);
		if (pick < 45) {
			randio_write(&r);
		} else if (pick < 90) {
			bad = randio_read(&r);
		} else if (pick < 96) {
			randio_truncate(&r);
		} else {
			randio_reopen(&r);
		}
	}
	if (bad == 0) {
		bad = randio_check(&r, 0, r.max_size);
	}
	if (bad == 0) {
		if (itest_smb_size(r.ctx, r.url, &size) != 0) {
			randio_fail(&r, "stat");
		}
		if ((size_t)size != r.model_len) {
			printf("MISMATCH %s: size %jd, want %zu\n", r.url, (intmax_t)size,
			       r.model_len);
			bad = 1;
		}
	}
	if (itest_smb_close(r.ctx, r.f) != 0) {
		randio_fail(&r, "close");
	}
	itest_smb_disconnect(r.ctx);
	if (bad == 0 && argc > 5 && strcmp(argv[5], "-") != 0) {
		FILE *out = fopen(argv[5], "w");

		if (out == NULL || fwrite(r.model, 1, r.model_len, out) != r.model_len ||
		    fclose(out) != 0) {
			perror(argv[5]);
			return 2;
		}
	}
	if (bad == 0) {
		printf("ok %s: %lu ops, %" PRIu64 " bytes written, %" PRIu64 " read, size %zu\n",
		       r.url, r.op, r.written, r.read, r.model_len);
	}
	return bad;
}
