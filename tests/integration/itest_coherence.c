/*
 * Coherence across SMB connections: two libsmbclient contexts (two TCP
 * connections, so two smbd processes with two aiod sessions) take turns
 * writing and reading the same files. A reader must always see what the
 * other connection wrote last, also after truncate, unlink + re-create (the
 * new file may get the old inode number) and rename over an existing file,
 * while aiod holds cached blocks of the old contents.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Usage: itest_coherence SHARE_URL SEED ROUNDS      (SHARE_URL: smb://host:port/share)
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

#define FILE_SIZE (8u << 20)

struct side {
	const char *name;
	SMBCCTX *ctx;
};

static const char *share;
static uint64_t seed, rng;
static uint8_t *model, *got;

static char *url(const char *file)
{
	static char u[2][512];
	static int which;

	which ^= 1;
	snprintf(u[which], sizeof(u[which]), "%s/%s", share, file);
	return u[which];
}

static void die(const char *what, const char *file)
{
	fprintf(stderr, "itest_coherence: %s %s (seed %" PRIu64 "): %s\n", what, file, seed,
		strerror(errno));
	exit(2);
}

static SMBCFILE *xopen(struct side *s, const char *file, int flags)
{
	SMBCFILE *f = itest_smb_open(s->ctx, url(file), flags);

	if (f == NULL) {
		die("open", file);
	}
	return f;
}

static void xclose(struct side *s, SMBCFILE *f)
{
	if (itest_smb_close(s->ctx, f) != 0) {
		die("close", s->name);
	}
}

static void xwrite(struct side *s, SMBCFILE *f, const uint8_t *data, size_t len, size_t off)
{
	if (itest_smb_pwrite(s->ctx, f, data, len, (off_t)off) != (ssize_t)len) {
		die("write", s->name);
	}
}

static void xtruncate(struct side *s, SMBCFILE *f, size_t len)
{
	if (itest_smb_ftruncate(s->ctx, f, (off_t)len) != 0) {
		die("ftruncate", s->name);
	}
}

/* Read len at off through s; expect[0..want) must come back, exactly. */
static int expect(struct side *s, SMBCFILE *f, const char *phase, size_t off, size_t len,
		  const uint8_t *want_data, size_t want)
{
	ssize_t n = itest_smb_pread(s->ctx, f, got, len, (off_t)off);
	ssize_t bad;

	if (n < 0) {
		die("read", s->name);
	}
	if ((size_t)n != want) {
		printf("MISMATCH %s: %s read %zu@%zu returned %zd, want %zu (seed %" PRIu64 ")\n",
		       phase, s->name, len, off, n, want, seed);
		return 1;
	}
	bad = itest_diff(got, want_data, want);
	if (bad >= 0) {
		printf("MISMATCH %s: %s read %zu@%zu: byte %zu is 0x%02x, want 0x%02x "
		       "(seed %" PRIu64 ")\n", phase, s->name, len, off, off + (size_t)bad,
		       got[bad], want_data[bad], seed);
		return 1;
	}
	return 0;
}

static size_t below(size_t n)
{
	return (size_t)(itest_rand(&rng) % n);
}

/* Both connections have the file open; they take turns writing and reading. */
static int phase_pingpong(struct side *a, struct side *b, unsigned rounds)
{
	SMBCFILE *fa, *fb;
	int bad = 0;

	fa = xopen(a, "coh.bin", O_RDWR | O_CREAT | O_TRUNC);
	itest_fill(&rng, model, FILE_SIZE);
	xwrite(a, fa, model, FILE_SIZE, 0);
	fb = xopen(b, "coh.bin", O_RDWR);
	bad |= expect(b, fb, "pingpong-initial", 0, FILE_SIZE, model, FILE_SIZE);
	for (unsigned i = 0; i < rounds && !bad; i++) {
		struct side *w = (i & 1) ? b : a, *r = (i & 1) ? a : b;
		SMBCFILE *fw = (i & 1) ? fb : fa, *fr = (i & 1) ? fa : fb;
		size_t off = below(FILE_SIZE), len = 1 + below(2u << 20);
		size_t lo, hi;

		if (off + len > FILE_SIZE) {
			len = FILE_SIZE - off;
		}
		itest_fill(&rng, model + off, len);
		xwrite(w, fw, model + off, len, off);
		/* the written range with some of its (cached) neighbourhood */
		lo = off > 70000 ? off - 70000 : 0;
		hi = off + len + 70000 < FILE_SIZE ? off + len + 70000 : FILE_SIZE;
		bad |= expect(r, fr, "pingpong", lo, hi - lo, model + lo, hi - lo);
	}
	if (!bad) {
		bad |= expect(a, fa, "pingpong-final", 0, FILE_SIZE, model, FILE_SIZE);
	}
	xclose(a, fa);
	xclose(b, fb);
	printf("%s pingpong: %u alternating write/read rounds\n", bad ? "FAIL" : "ok", rounds);
	return bad;
}

/*
 *  cached:   |xxxxxxxxxxxxxxxxxxxxxxxx 4 MiB xxxxxxxxxxxxxxxxxx|
 *  shrink:   |x|  100 bytes
 *  grow:     |x|000000000000000000 3 MiB: zeros, not old blocks|
 */
static int phase_truncate(struct side *a, struct side *b)
{
	size_t big = 4u << 20, small = 100, again = 3u << 20;
	SMBCFILE *fa, *fb;
	off_t size = 0;
	int bad = 0;

	fa = xopen(a, "trunc.bin", O_RDWR | O_CREAT | O_TRUNC);
	itest_fill(&rng, model, big);
	xwrite(a, fa, model, big, 0);
	fb = xopen(b, "trunc.bin", O_RDWR);
	bad |= expect(b, fb, "truncate-before", 0, big, model, big);
	xtruncate(a, fa, small);
	if (itest_smb_size(b->ctx, url("trunc.bin"), &size) != 0) {
		die("stat", b->name);
	}
	if ((size_t)size != small) {
		printf("MISMATCH truncate: %s sees size %jd, want %zu\n", b->name, (intmax_t)size,
		       small);
		bad = 1;
	}
	bad |= expect(b, fb, "truncate-shrunk", 0, big, model, small);
	memset(model + small, 0, big - small);
	xtruncate(a, fa, again);
	bad |= expect(b, fb, "truncate-grown", 0, again, model, again);
	/* and a write through b lands in what a reads */
	itest_fill(&rng, model + 12345, 54321);
	xwrite(b, fb, model + 12345, 54321, 12345);
	bad |= expect(a, fa, "truncate-write", 0, again, model, again);
	xclose(a, fa);
	xclose(b, fb);
	printf("%s truncate: shrink and grow seen by the other connection\n",
	       bad ? "FAIL" : "ok");
	return bad;
}

static void create_file(struct side *s, const char *file, const uint8_t *data, size_t len)
{
	SMBCFILE *f = xopen(s, file, O_RDWR | O_CREAT | O_TRUNC);

	xwrite(s, f, data, len, 0);
	xclose(s, f);
}

static int read_whole(struct side *s, const char *file, const char *phase,
		      const uint8_t *data, size_t len)
{
	SMBCFILE *f = xopen(s, file, O_RDONLY);
	int bad = expect(s, f, phase, 0, len + 4096, data, len);

	xclose(s, f);
	return bad;
}

static int phase_unlink(struct side *a, struct side *b, unsigned rounds)
{
	int bad = 0;

	for (unsigned i = 0; i < rounds && !bad; i++) {
		size_t len1 = (3u << 19) + i, len2 = (1u << 20) + 7 * i;

		itest_fill(&rng, model, len1);
		create_file(a, "unlink.bin", model, len1);
		bad |= read_whole(b, "unlink.bin", "unlink-old", model, len1);
		if (itest_smb_unlink(a->ctx, url("unlink.bin")) != 0) {
			die("unlink", "unlink.bin");
		}
		/* same name, likely the same inode number, other contents */
		itest_fill(&rng, model, len2);
		create_file(a, "unlink.bin", model, len2);
		bad |= read_whole(b, "unlink.bin", "unlink-new", model, len2);
	}
	printf("%s unlink: %u remove + re-create rounds\n", bad ? "FAIL" : "ok", rounds);
	return bad;
}

static int phase_rename(struct side *a, struct side *b, unsigned rounds)
{
	uint8_t *other = got + FILE_SIZE;	/* second half of got */
	int bad = 0;

	for (unsigned i = 0; i < rounds && !bad; i++) {
		size_t len1 = (5u << 18) + 3 * i, len2 = (9u << 18) + i;

		itest_fill(&rng, model, len1);
		itest_fill(&rng, other, len2);
		create_file(a, "rename-src.bin", model, len1);
		create_file(a, "rename-dst.bin", other, len2);
		bad |= read_whole(b, "rename-src.bin", "rename-src", model, len1);
		bad |= read_whole(b, "rename-dst.bin", "rename-dst", other, len2);
		if (itest_smb_rename(a->ctx, url("rename-src.bin"), url("rename-dst.bin")) != 0) {
			die("rename", "rename-src.bin");
		}
		bad |= read_whole(b, "rename-dst.bin", "rename-replaced", model, len1);
	}
	printf("%s rename: %u rename-over rounds\n", bad ? "FAIL" : "ok", rounds);
	return bad;
}

int main(int argc, char **argv)
{
	struct side a = { "connection A", NULL }, b = { "connection B", NULL };
	unsigned rounds;
	int bad = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: itest_coherence SHARE_URL SEED ROUNDS\n");
		return 2;
	}
	share = argv[1];
	seed = strtoull(argv[2], NULL, 0);
	rng = seed != 0 ? seed : 1;
	rounds = (unsigned)strtoul(argv[3], NULL, 0);
	model = malloc(FILE_SIZE);
	got = malloc(2 * FILE_SIZE + 4096);
	if (model == NULL || got == NULL) {
		perror("malloc");
		return 2;
	}
	a.ctx = itest_smb_connect();
	b.ctx = itest_smb_connect();
	bad |= phase_pingpong(&a, &b, rounds);
	bad |= phase_truncate(&a, &b);
	bad |= phase_unlink(&a, &b, 8);
	bad |= phase_rename(&a, &b, 4);
	itest_smb_disconnect(a.ctx);
	itest_smb_disconnect(b.ctx);
	return bad ? 1 : 0;
}
