/*
 * A growing file, ingested locally while an editor reads it over SMB: a
 * local process (not smbd, not talking to aiod) appends a chunk every
 * 100 ms and rewrites the file's header with a generation count, as a
 * wrapper like MXF rewrites its header partition while it records. The SMB
 * client reads through the share at the same time and must always see
 *   - every byte the writer had finished when the read started (no stale
 *     block served from aiod's cache), and
 *   - a header generation at least as new as the last one finished.
 *
 * Usage: itest_grow URL LOCAL_PATH SECONDS
 *   URL names the same file as LOCAL_PATH, through an SMB share.
 *   Prints "ok grow READS BYTES" or "MISMATCH ..."/"ERROR ...".
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest_smb.h"

#define HEADER 4096u
#define CHUNK  (256u * 1024u)

/* What the writer has finished, published for the reader (shared mapping). */
struct progress {
	_Atomic uint64_t size;		/* bytes whose content is final */
	_Atomic uint64_t gen;		/* header generation written */
	_Atomic int done;
};

static uint8_t pattern(uint64_t off)
{
	return (uint8_t)((off * 131u) ^ (off >> 12) ^ 0x5a);
}

static int writer(const char *path, unsigned seconds, struct progress *p)
{
	int fd = open(path, O_WRONLY);
	uint8_t *chunk = malloc(CHUNK), hdr[HEADER];
	uint64_t size = HEADER, gen = 0;
	struct timespec tick = { 0, 100 * 1000 * 1000 };

	if (fd < 0 || chunk == NULL) {
		perror("writer");
		return 1;
	}
	for (unsigned i = 0; i < seconds * 10; i++) {
		for (uint32_t k = 0; k < CHUNK; k++) {
			chunk[k] = pattern(size + k);
		}
		if (pwrite(fd, chunk, CHUNK, (off_t)size) != (ssize_t)CHUNK) {
			perror("writer: append");
			return 1;
		}
		size += CHUNK;
		atomic_store(&p->size, size);
		gen++;
		memset(hdr, (int)(gen & 0xff), sizeof(hdr));
		memcpy(hdr, &gen, sizeof(gen));
		if (pwrite(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
			perror("writer: header");
			return 1;
		}
		atomic_store(&p->gen, gen);
		nanosleep(&tick, NULL);
	}
	close(fd);
	free(chunk);
	return 0;
}

/* Read [off, off + n) over SMB and check it; 0 or 1 (printed why). */
static int check_range(SMBCCTX *ctx, SMBCFILE *f, uint8_t *buf, uint64_t off, uint64_t n,
		       uint64_t min_gen)
{
	ssize_t got = itest_smb_pread(ctx, f, buf, n, (off_t)off);

	if (got < 0) {
		printf("ERROR read %" PRIu64 "+%" PRIu64 ": %s\n", off, n, strerror(errno));
		return 1;
	}
	if ((uint64_t)got < n) {
		printf("MISMATCH read %" PRIu64 "+%" PRIu64 ": only %zd bytes\n", off, n, got);
		return 1;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t pos = off + i;

		if (pos >= HEADER && buf[i] != pattern(pos)) {
			printf("MISMATCH byte %" PRIu64 " is 0x%02x, want 0x%02x (stale or wrong)\n",
			       pos, buf[i], pattern(pos));
			return 1;
		}
	}
	if (off == 0 && min_gen > 0) {
		uint64_t gen;

		memcpy(&gen, buf, sizeof(gen));
		if (gen < min_gen) {
			printf("MISMATCH header generation %" PRIu64 ", the writer had finished "
			       "%" PRIu64 " (a stale cached block)\n", gen, min_gen);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct progress *p;
	SMBCCTX *ctx;
	SMBCFILE *f;
	uint8_t *buf = malloc(8u << 20);
	uint64_t pos = HEADER, reads = 0, bytes = 0;
	unsigned seconds;
	pid_t child;
	int bad = 0, status;

	if (argc != 4 || buf == NULL) {
		fprintf(stderr, "usage: itest_grow URL LOCAL_PATH SECONDS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	seconds = (unsigned)strtoul(argv[3], NULL, 0);
	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	atomic_store(&p->size, HEADER);
	ctx = itest_smb_connect();
	f = itest_smb_open(ctx, argv[1], O_RDONLY);
	if (f == NULL) {
		printf("ERROR open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	/* The header block is cached before the writer starts: the case that went stale. */
	if (check_range(ctx, f, buf, 0, HEADER, 0) != 0) {
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 2;
	}
	if (child == 0) {
		int ret = writer(argv[2], seconds, p);
		atomic_store(&p->done, 1);
		_exit(ret);
	}
	while (!bad) {
		int done = atomic_load(&p->done);
		uint64_t gen = atomic_load(&p->gen);
		uint64_t size = atomic_load(&p->size);
		uint64_t n = size - pos > (4u << 20) ? (4u << 20) : size - pos;

		/* The header, as new as the writer had finished when we asked. */
		bad = check_range(ctx, f, buf, 0, HEADER, gen);
		/* What was appended since the last pass (sequential, like playback). */
		if (!bad && n > 0) {
			bad = check_range(ctx, f, buf, pos, n, 0);
			pos += n;
			bytes += n;
		}
		reads++;
		if (done && pos >= atomic_load(&p->size)) {
			break;
		}
		usleep(20000);
	}
	if (!bad) {
		/* Once more from the start: every cached block agrees with the disk. */
		uint64_t size = atomic_load(&p->size);

		for (uint64_t off = 0; !bad && off < size; off += 8u << 20) {
			uint64_t n = size - off > (8u << 20) ? (8u << 20) : size - off;
			bad = check_range(ctx, f, buf, off, n, off == 0 ? atomic_load(&p->gen) : 0);
		}
	}
	if (bad) {
		kill(child, SIGTERM);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		printf("ERROR the local writer failed\n");
		bad = 1;
	}
	itest_smb_close(ctx, f);
	itest_smb_disconnect(ctx);
	if (!bad) {
		printf("ok grow %" PRIu64 " %" PRIu64 "\n", reads, bytes);
	}
	free(buf);
	return bad;
}
