/*
 * Small files whose registration with aiod is deferred (rtio:register min
 * size, 1 MiB by default), across SMB connections: three libsmbclient
 * contexts, so three smbd processes with three aiod sessions. Each reader
 * must see exactly what the others wrote last:
 *
 *   grow     A writes a small file (local, not registered); B opens it small
 *            and reads it; A grows it past the size (A registers, telling
 *            aiod to drop what it may hold); B reads all of it (B registers
 *            at that read, aiod serves it); B writes through aiod, A reads;
 *            a new connection reads the whole file.
 *   cached   A has a file registered and cached in aiod, then shrinks it
 *            below the size; C opens it (small now: deferred) and writes
 *            locally, telling aiod nothing; A reads through aiod and must
 *            get C's bytes (aiod's inotify watch dropped the blocks).
 *   trunc    B has a file registered and cached; A overwrites it (O_TRUNC)
 *            with a small one, locally; B reads through aiod: the new,
 *            shorter contents.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Usage: itest_smallgrow SHARE_URL SEED      (SHARE_URL: smb://host:port/share)
 * Prints one line per phase; exits 0 when all matched, 1 on a mismatch,
 * 2 on an SMB error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest_smb.h"

#define KIB 1024u
#define MIB (1024u * 1024u)
#define MAX_SIZE (4u * MIB)

struct side {
	const char *name;
	SMBCCTX *ctx;
};

static const char *share;
static uint64_t seed, rng;
static uint8_t *model, *got;

static const char *url(const char *file)
{
	static char u[512];

	snprintf(u, sizeof(u), "%s/%s", share, file);
	return u;
}

static void die(const char *what, const char *who)
{
	fprintf(stderr, "itest_smallgrow: %s (%s, seed %" PRIu64 "): %s\n", what, who, seed,
		strerror(errno));
	exit(2);
}

static SMBCFILE *xopen(struct side *s, const char *file, int flags)
{
	SMBCFILE *f = itest_smb_open(s->ctx, url(file), flags);

	if (f == NULL) {
		die("open", s->name);
	}
	return f;
}

static void xclose(struct side *s, SMBCFILE *f)
{
	if (itest_smb_close(s->ctx, f) != 0) {
		die("close", s->name);
	}
}

static void xwrite(struct side *s, SMBCFILE *f, size_t off, size_t len)
{
	itest_fill(&rng, model + off, len);
	if (itest_smb_pwrite(s->ctx, f, model + off, len, (off_t)off) != (ssize_t)len) {
		die("write", s->name);
	}
}

static void xtruncate(struct side *s, SMBCFILE *f, size_t len)
{
	if (itest_smb_ftruncate(s->ctx, f, (off_t)len) != 0) {
		die("ftruncate", s->name);
	}
}

/* s reads len at off (asking 4 KiB more, as clients do); model[off..off+want) must come back. */
static int expect(struct side *s, SMBCFILE *f, const char *phase, size_t off, size_t len,
		  size_t want)
{
	ssize_t n = itest_smb_pread(s->ctx, f, got, len + 4 * KIB, (off_t)off);
	ssize_t bad;

	if (n < 0) {
		die("read", s->name);
	}
	if ((size_t)n != want) {
		printf("MISMATCH %s: %s read %zu@%zu returned %zd, want %zu (seed %" PRIu64 ")\n",
		       phase, s->name, len, off, n, want, seed);
		return 1;
	}
	bad = itest_diff(got, model + off, want);
	if (bad >= 0) {
		printf("MISMATCH %s: %s read %zu@%zu: byte %zu is 0x%02x, want 0x%02x "
		       "(seed %" PRIu64 ")\n", phase, s->name, len, off, off + (size_t)bad,
		       got[bad], model[off + (size_t)bad], seed);
		return 1;
	}
	return 0;
}

/*
 *   A writes   |== 32K ==|                                   local
 *   B reads    |=========|                                   local
 *   A writes             |============ 3 MiB ==============| crosses 1 MiB: A registers
 *   B reads    |===========================================| reaches 1 MiB: B registers
 */
static int phase_grow(struct side *a, struct side *b, struct side *c)
{
	size_t small = 32 * KIB, big = small + 3 * MIB;
	SMBCFILE *fa, *fb, *fc;
	int bad = 0;

	fa = xopen(a, "grow.bin", O_RDWR | O_CREAT | O_TRUNC);
	xwrite(a, fa, 0, small);
	fb = xopen(b, "grow.bin", O_RDWR);
	bad |= expect(b, fb, "grow-small", 0, small, small);
	xwrite(a, fa, small, big - small);
	bad |= expect(b, fb, "grow-grown", 0, big, big);
	/* both registered now: a write through aiod, seen by the other */
	xwrite(b, fb, 100, 16 * KIB);
	bad |= expect(a, fa, "grow-write-back", 0, 64 * KIB, 68 * KIB);	/* inside the file: all asked */
	/* and a rewrite of the first, once local, bytes by A */
	xwrite(a, fa, 0, 8 * KIB);
	bad |= expect(b, fb, "grow-rewrite", 0, big, big);
	xclose(a, fa);
	xclose(b, fb);
	fc = xopen(c, "grow.bin", O_RDONLY);
	bad |= expect(c, fc, "grow-new-connection", 0, big, big);
	xclose(c, fc);
	printf("%s grow: a small file grown past rtio:register min size, read by the others\n",
	       bad ? "FAIL" : "ok");
	return bad;
}

/*
 *   A: cached  |xxxxxxxxxxxxxxxxxxxx 3 MiB in aiod's cache xxxxxxxxxxx|
 *   A: shrink  |xxxx 256K|
 *   C: writes      |=64K=|   deferred (small at open): aiod is not told
 *   A: reads   |=========|   through aiod: C's bytes
 */
static int phase_cached(struct side *a, struct side *c)
{
	size_t big = 3 * MIB, small = 256 * KIB;
	SMBCFILE *fa, *fc;
	int bad = 0;

	fa = xopen(a, "cached.bin", O_RDWR | O_CREAT | O_TRUNC);
	xwrite(a, fa, 0, big);
	bad |= expect(a, fa, "cached-read", 0, big, big);
	xtruncate(a, fa, small);
	bad |= expect(a, fa, "cached-shrunk", 0, big, small);
	fc = xopen(c, "cached.bin", O_RDWR);
	xwrite(c, fc, 4 * KIB, 64 * KIB);
	bad |= expect(a, fa, "cached-after-deferred-write", 0, small, small);
	/* and while C still holds it: a second local write */
	xwrite(c, fc, 200 * KIB, 12 * KIB);
	bad |= expect(a, fa, "cached-second-write", 0, small, small);
	xclose(c, fc);
	bad |= expect(a, fa, "cached-after-close", 0, small, small);
	xclose(a, fa);
	printf("%s cached: a deferred writer's bytes seen through aiod by a registered reader\n",
	       bad ? "FAIL" : "ok");
	return bad;
}

/*
 *   B: cached  |xxxxxxxxxxxxxxxxxx 2 MiB in aiod's cache xxxxxxxx|
 *   A: O_TRUNC |== 40K ==|   deferred: local
 *   B: reads   |=========|   40K, new bytes, nothing after them
 */
static int phase_trunc(struct side *a, struct side *b)
{
	size_t big = 2 * MIB, small = 40 * KIB;
	SMBCFILE *fa, *fb;
	int bad = 0;

	fa = xopen(a, "trunc.bin", O_RDWR | O_CREAT | O_TRUNC);
	xwrite(a, fa, 0, big);
	xclose(a, fa);
	fb = xopen(b, "trunc.bin", O_RDONLY);
	bad |= expect(b, fb, "trunc-before", 0, big, big);
	fa = xopen(a, "trunc.bin", O_RDWR | O_TRUNC);
	xwrite(a, fa, 0, small);
	bad |= expect(b, fb, "trunc-after", 0, big, small);
	xclose(a, fa);
	xclose(b, fb);
	printf("%s trunc: a small overwrite (O_TRUNC) of a file aiod caches\n",
	       bad ? "FAIL" : "ok");
	return bad;
}

int main(int argc, char **argv)
{
	struct side a = { "connection A", NULL }, b = { "connection B", NULL };
	struct side c = { "connection C", NULL };
	int bad = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: itest_smallgrow SHARE_URL SEED\n");
		return 2;
	}
	share = argv[1];
	seed = strtoull(argv[2], NULL, 0);
	rng = seed != 0 ? seed : 1;
	model = malloc(MAX_SIZE);
	got = malloc(MAX_SIZE + 4 * KIB);
	if (model == NULL || got == NULL) {
		perror("malloc");
		return 2;
	}
	a.ctx = itest_smb_connect();
	b.ctx = itest_smb_connect();
	c.ctx = itest_smb_connect();
	bad |= phase_grow(&a, &b, &c);
	bad |= phase_cached(&a, &c);
	bad |= phase_trunc(&a, &b);
	itest_smb_disconnect(a.ctx);
	itest_smb_disconnect(b.ctx);
	itest_smb_disconnect(c.ctx);
	return bad ? 1 : 0;
}
