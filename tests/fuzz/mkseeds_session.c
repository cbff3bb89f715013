/*
 * Writes the seed corpus of the session fuzzer (make fuzz-seeds): small,
 * readable programs in the input format of session_ops.h, each a client
 * conversation aiod must get through -- the common paths first, so the
 * fuzzer starts from inputs that reach deep into aiod instead of dying at
 * the CONNECT handshake. With a second directory, also the smallest inputs
 * that show each bug the fuzzer found (tests/fuzz/README.md).
 *
 *   mkseeds_session CORPUS_DIR [CRASH_DIR]
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rtio_proto.h"
#include "session_ops.h"

struct seed {
	uint8_t b[4096];
	size_t n;
};

static void put8(struct seed *s, unsigned v)
{
	if (s->n < sizeof(s->b)) {
		s->b[s->n++] = (uint8_t)v;
	}
}

static void put_le(struct seed *s, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++) {
		put8(s, (unsigned)(v >> (8 * i)));
	}
}

/* A number parameter, encoded raw so the seeds do not depend on the table's order. */
static void num(struct seed *s, uint64_t v)
{
	if (v <= UINT16_MAX) {
		put8(s, FZ_NUM_U16);
		put_le(s, v, 2);
	} else {
		put8(s, FZ_NUM_U64);
		put_le(s, v, 8);
	}
}

static void op(struct seed *s, unsigned o, unsigned flags, unsigned slot)
{
	put8(s, o | flags);
	put8(s, slot);
}

static void session(struct seed *s, unsigned slot, unsigned mode)
{
	op(s, FZ_OP_SESSION, 0, slot);
	put8(s, mode);
}

static void connect_(struct seed *s, unsigned slot, unsigned flags)
{
	op(s, FZ_OP_CONNECT, flags, slot);
	put8(s, RTIO_FEAT_ALL);
	put8(s, 0);
}

/* name: index into FZ_NAMES (0 "a.bin", 1 "clip.mxf", ...). */
static void open_(struct seed *s, unsigned slot, unsigned fd_kind, unsigned name, unsigned flags)
{
	op(s, FZ_OP_OPEN, 0, slot);
	put8(s, fd_kind);
	put8(s, name);
	put8(s, flags);
}

/* READ0, WRITE0, WROTE on the id-th file this client opened. */
static void io(struct seed *s, unsigned o, unsigned flags, unsigned slot, unsigned id, uint64_t off,
	       uint64_t len)
{
	op(s, o, flags, slot);
	put8(s, id);
	num(s, off);
	num(s, len);
}

/* READ1, WRITE1 of the token-th token this client received. */
static void release(struct seed *s, unsigned o, unsigned flags, unsigned slot, unsigned token)
{
	op(s, o, flags, slot);
	put8(s, token);
}

static void file_op(struct seed *s, unsigned o, unsigned slot, unsigned id)
{
	op(s, o, 0, slot);
	put8(s, id);
}

static void bare(struct seed *s, unsigned o)
{
	put8(s, o);
}

static int save(const char *dir, const char *name, const struct seed *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(s->b, 1, s->n, f) != s->n || fclose(f) != 0) {
		fprintf(stderr, "mkseeds_session: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* connect, open, two reads released, close, disconnect */
static void seed_read(struct seed *s)
{
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	open_(s, 0, FZ_FD_BIG_RDONLY, 0, 0);
	io(s, FZ_OP_READ0, 0, 0, 0, 0, FZ_BLOCK);
	release(s, FZ_OP_READ1, 0, 0, 0);
	io(s, FZ_OP_READ0, 0, 0, 0, 100, 3 * FZ_BLOCK);
	release(s, FZ_OP_READ1, 0, 0, 1);
	io(s, FZ_OP_READ0, 0, 0, 0, FZ_BIG_SIZE - 10, FZ_BLOCK);	/* short at EOF */
	release(s, FZ_OP_READ1, 0, 0, 2);
	file_op(s, FZ_OP_CLOSE, 0, 0);
	op(s, FZ_OP_DISCONNECT, 0, 0);
}

/* writes through the shared buffer across a block boundary, fsync, WROTE, INVALIDATE, stats */
static void seed_write(struct seed *s)
{
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	open_(s, 0, FZ_FD_BIG_RDWR, 0, RTIO_OPEN_WRITABLE);
	io(s, FZ_OP_READ0, 0, 0, 0, 0, 2 * FZ_BLOCK);
	release(s, FZ_OP_READ1, 0, 0, 0);
	io(s, FZ_OP_WRITE0, 0, 0, 0, FZ_BLOCK - 1, 70000);
	release(s, FZ_OP_WRITE1, 0, 0, 1);
	io(s, FZ_OP_READ0, 0, 0, 0, FZ_BLOCK - 100, 1000);
	release(s, FZ_OP_READ1, 0, 0, 2);
	op(s, FZ_OP_FSYNC, 0, 0);
	put8(s, 0);
	put8(s, 1);
	op(s, FZ_OP_FSYNC, 0, 0);
	put8(s, 0);
	put8(s, 0);
	io(s, FZ_OP_WROTE, 0, 0, 0, 10, 100);
	op(s, FZ_OP_INVALIDATE, 0, 0);
	put8(s, 0);
	num(s, 0);
	num(s, 0);
	op(s, FZ_OP_STATS, 0, 0);
	op(s, FZ_OP_FILE_STATS, 0, 0);
	put8(s, 0);
	op(s, FZ_OP_FILE_STATS, 0, 0);
	put8(s, 9);
	op(s, FZ_OP_UNLINK, 0, 0);
	put8(s, FZ_FILE_BIG);
	file_op(s, FZ_OP_CLOSE, 0, 0);
}

/* three streams where two fit (admission refuses), read sequentially with read-ahead */
static void seed_streams(struct seed *s)
{
	put8(s, 1);	/* [admission] mode = refuse */
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	for (unsigned i = 0; i < 3; i++) {
		open_(s, 0, FZ_FD_BIG_RDONLY, 1, 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		io(s, FZ_OP_READ0, FZ_F_ASYNC, 0, 0, (uint64_t)i * FZ_BLOCK, FZ_BLOCK);
	}
	bare(s, FZ_OP_LOOP_IDLE);
	op(s, FZ_OP_COLLECT, 0, 0);
	for (unsigned i = 0; i < 4; i++) {
		release(s, FZ_OP_READ1, FZ_F_ASYNC, 0, i);
	}
	bare(s, FZ_OP_LOOP_IDLE);
	op(s, FZ_OP_FILE_STATS, 0, 0);
	put8(s, 0);
}

/* two clients read the same blocks at once; one dies with its read in flight */
static void seed_two_clients(struct seed *s)
{
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	session(s, 1, FZ_SESSION_LISTENER);
	connect_(s, 0, 0);
	connect_(s, 1, 0);
	open_(s, 0, FZ_FD_BIG_RDONLY, 0, 0);
	open_(s, 1, FZ_FD_BIG_RDWR, 0, RTIO_OPEN_WRITABLE);
	io(s, FZ_OP_READ0, FZ_F_ASYNC, 0, 0, 2 * FZ_BLOCK, 2 * FZ_BLOCK);
	io(s, FZ_OP_READ0, FZ_F_ASYNC, 1, 0, 2 * FZ_BLOCK + 5, FZ_BLOCK);
	bare(s, FZ_OP_LOOP_ONCE);
	op(s, FZ_OP_CLIENT_DIES, 0, 0);
	bare(s, FZ_OP_LOOP_IDLE);
	op(s, FZ_OP_COLLECT, 0, 1);
	release(s, FZ_OP_READ1, 0, 1, 0);
	io(s, FZ_OP_WRITE0, 0, 1, 0, 0, 3 * FZ_BLOCK);
	op(s, FZ_OP_AIOD_DROPS, 0, 0);	/* aiod ends the session between WRITE0 and WRITE1 */
	release(s, FZ_OP_WRITE1, 0, 1, 1);
}

/* descriptors aiod must refuse, and the requests the open's mode forbids */
static void seed_descriptors(struct seed *s)
{
	static const unsigned kinds[] = { FZ_FD_BIG_PATH, FZ_FD_DIR, FZ_FD_PIPE, FZ_FD_SOCKET,
					  FZ_FD_NONE, FZ_FD_TWO, FZ_FD_MEMFD, FZ_FD_EMPTY_RDWR,
					  FZ_FD_SMALL_APPEND, FZ_FD_BIG_WRONLY };

	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		open_(s, 0, kinds[i], 0, RTIO_OPEN_WRITABLE);
	}
	io(s, FZ_OP_READ0, 0, 0, 3, 0, 100);	/* the O_WRONLY open: EBADF */
	io(s, FZ_OP_READ0, 0, 0, 2, 0, 100);	/* O_APPEND */
	io(s, FZ_OP_WRITE0, 0, 0, 1, 0, 100);	/* the empty file */
	release(s, FZ_OP_WRITE1, 0, 0, 1);
	io(s, FZ_OP_READ0, 0, 0, 0, 0, 100000);	/* the memfd */
	op(s, FZ_OP_STATS, FZ_F_FD, 0);		/* a descriptor with a STATS: refused */
	put8(s, FZ_FD_BIG_RDONLY);
	op(s, FZ_OP_STATS, 0, 0);
}

/* more WRITE0 than the cache holds: requests wait for blocks, then get them */
static void seed_pin_exhaustion(struct seed *s)
{
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	open_(s, 0, FZ_FD_BIG_RDWR, 0, RTIO_OPEN_WRITABLE);
	for (unsigned i = 0; i < 3; i++) {
		io(s, FZ_OP_WRITE0, FZ_F_ASYNC, 0, 0, (uint64_t)i * 15 * FZ_BLOCK, 15 * FZ_BLOCK);
	}
	bare(s, FZ_OP_LOOP_IDLE);
	op(s, FZ_OP_COLLECT, 0, 0);
	release(s, FZ_OP_WRITE1, FZ_F_ASYNC, 0, 0);
	bare(s, FZ_OP_LOOP_IDLE);
	op(s, FZ_OP_COLLECT, 0, 0);
	release(s, FZ_OP_WRITE1, 0, 0, 1);
	release(s, FZ_OP_WRITE1, 0, 0, 2);
	file_op(s, FZ_OP_CLOSE, 0, 0);
}

/* a sequential reader in small steps: read-ahead in 64 KiB requests */
static void seed_readahead(struct seed *s)
{
	put8(s, 0x40);	/* [readahead] io_size = 64K */
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	open_(s, 0, FZ_FD_BIG_RDONLY, 0, 0);
	for (unsigned i = 0; i < 10; i++) {
		io(s, FZ_OP_READ0, 0, 0, 0, (uint64_t)i * FZ_BLOCK, FZ_BLOCK);
		release(s, FZ_OP_READ1, 0, 0, i);
	}
	op(s, FZ_OP_FTRUNCATE, 0, 0);
	put8(s, 0);
	num(s, 3 * FZ_BLOCK + 7);
	io(s, FZ_OP_READ0, 0, 0, 0, 3 * FZ_BLOCK, FZ_BLOCK);
}

/* damaged and unexpected messages on both channels */
static void seed_malformed(struct seed *s)
{
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	op(s, FZ_OP_OPEN, 0, 0);		/* before CONNECT */
	put8(s, FZ_FD_BIG_RDONLY);
	put8(s, 0);
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	op(s, FZ_OP_CONNECT, FZ_F_CORRUPT, 0);	/* wrong version */
	put8(s, 0);
	put8(s, 0);
	put_le(s, 4, 2);
	put8(s, 0x02);
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	open_(s, 0, FZ_FD_BIG_RDONLY, 0, 0);
	op(s, FZ_OP_READ0, FZ_F_CORRUPT, 0);	/* length field off by one */
	put8(s, 0);
	num(s, 0);
	num(s, 10);
	put_le(s, 8, 2);
	put8(s, 1);
	put8(s, 0);
	op(s, FZ_OP_RAW_DATA, 0, 0);		/* half a header */
	put_le(s, 12, 2);
	put_le(s, RTIO_MAGIC, 4);
	put_le(s, RTIO_PROTO_VERSION, 2);
	put_le(s, RTIO_OP_STATS, 2);
	put_le(s, 32, 4);
	release(s, FZ_OP_READ1, 0, 0, 0x7f);	/* no such token */
	release(s, FZ_OP_WRITE1, 0, 0, 0x7f);
	io(s, FZ_OP_READ0, 0, 0, 0, INT64_MAX, 1);
	op(s, FZ_OP_RAW_CONTROL, 0, 0);		/* a READ0 on the control socket */
	put_le(s, 0, 2);
	put8(s, FZ_FD_NONE);
	session(s, 1, FZ_SESSION_DEAD);
	session(s, 0, FZ_SESSION_NO_PID);
	connect_(s, 0, 0);
	bare(s, FZ_OP_LOOP_IDLE);
}

/*
 * More replies than the reply queue holds (10, as the request queue): aiod
 * answers ten, the client reads none and sends an eleventh; its reply finds
 * the queue full and aiod frees the session under its own loop.
 */
static void crash_uaf_reply_queue_full(struct seed *s)
{
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	for (unsigned i = 0; i < 11; i++) {
		io(s, FZ_OP_READ0, FZ_F_ASYNC, 0, 0, 0, 0);	/* no such file: an EBADF reply each */
		if (i == 9) {
			bare(s, FZ_OP_LOOP_IDLE);
		}
	}
	bare(s, FZ_OP_LOOP_IDLE);
}

/* A zero-length control message with a descriptor: aiod hangs up and keeps the descriptor. */
static void crash_fd_leak(struct seed *s)
{
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	op(s, FZ_OP_RAW_CONTROL, 0, 0);
	put_le(s, 0, 2);
	put8(s, FZ_FD_BIG_RDONLY);
}

/* WRITE1 through an O_APPEND descriptor: the file and aiod's cache disagree. */
static void crash_o_append(struct seed *s)
{
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	open_(s, 0, FZ_FD_SMALL_APPEND, 0, RTIO_OPEN_WRITABLE);
	io(s, FZ_OP_READ0, 0, 0, 0, 0, FZ_SMALL_SIZE);	/* block 0 cached */
	release(s, FZ_OP_READ1, 0, 0, 0);
	io(s, FZ_OP_WRITE0, 0, 0, 0, 0, FZ_BLOCK);
	release(s, FZ_OP_WRITE1, 0, 0, 1);		/* lands at EOF, cached at 0 */
	io(s, FZ_OP_READ0, 0, 0, 0, 0, FZ_BLOCK);
}

/* A two-block read of a 100000-byte file: the READV comes back short. */
static void crash_short_readv(struct seed *s)
{
	put8(s, 0);
	session(s, 0, FZ_SESSION_PAIR);
	connect_(s, 0, 0);
	open_(s, 0, FZ_FD_MEMFD, 0, 0);
	io(s, FZ_OP_READ0, 0, 0, 0, 0, 2 * FZ_BLOCK);
}

struct named_seed {
	const char *name;
	void (*make)(struct seed *s);
};

static int save_all(const char *dir, const struct named_seed *seeds, size_t n)
{
	int failed = 0;

	for (size_t i = 0; i < n; i++) {
		struct seed s = { .n = 0 };

		seeds[i].make(&s);
		failed |= save(dir, seeds[i].name, &s);
	}
	return failed;
}

int main(int argc, char **argv)
{
	static const struct named_seed crashes[] = {
		{ "uaf-reply-queue-full", crash_uaf_reply_queue_full },
		{ "fd-leak-empty-control-message", crash_fd_leak },
		{ "cache-incoherent-o-append-write", crash_o_append },
		{ "ubsan-engine-short-readv", crash_short_readv },
	};
	static const struct named_seed seeds[] = {
		{ "read", seed_read },
		{ "write", seed_write },
		{ "streams", seed_streams },
		{ "two-clients", seed_two_clients },
		{ "descriptors", seed_descriptors },
		{ "pin-exhaustion", seed_pin_exhaustion },
		{ "readahead", seed_readahead },
		{ "malformed", seed_malformed },
	};
	int failed;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: mkseeds_session CORPUS_DIR [CRASH_DIR]\n");
		return 2;
	}
	failed = save_all(argv[1], seeds, sizeof(seeds) / sizeof(seeds[0]));
	if (argc == 3) {
		failed |= save_all(argv[2], crashes, sizeof(crashes) / sizeof(crashes[0]));
	}
	return failed;
}
