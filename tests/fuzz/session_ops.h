/*
 * The input format of the session fuzzer (fuzz_session, replay_session): a
 * fuzz input is a program for one or two misbehaving clients of a real,
 * in-process aiod. Shared by the harness that runs it and the program that
 * writes the seed corpus, so both agree on every number.
 *
 *   input  = config-byte op*
 *   op     = op-byte params [fd-kind] [corruption]
 *
 * config-byte: bits 0-1 admission mode (demote, refuse, off, demote), bit 2
 * [cache] direct_io, bit 3 [readahead] auto_stream, bits 4-5
 * session_inflight (64, 1, 2, 4), bit 6 [readahead] io_size 64K (else 2M),
 * bit 7 [readahead] blocks 0 (else the default).
 *
 * op-byte: low 5 bits the operation (modulo FZ_OP_COUNT), then flags:
 *   FZ_F_CORRUPT  the message is damaged before it is sent: u16 position,
 *                 u8 xor, i8 length change follow the params
 *   FZ_F_FD       a control message other than OPEN carries a descriptor:
 *                 an fd-kind byte follows the params
 *   FZ_F_ASYNC    send only; otherwise the harness runs aiod until it is idle
 *                 and collects the client's replies, as a synchronous client
 *
 * Params are bytes read little-endian; a missing byte reads as 0, so every
 * input is a valid program. Value selectors:
 *   slot    u8 % FZ_SLOTS
 *   file    u8: bit 7 set: a raw u64 id follows; else the (u8 % n)-th file id
 *           aiod returned to this client (the u8 itself while there is none)
 *   token   like file, over the READ0/WRITE0 tokens this client received
 *   number  u8: < 0x80 an entry of the table of interesting values; < 0xc0 a
 *           u16 follows; else a u64 follows
 *   name    u8: < 0xf0 one of a few names; else a u8 length and the raw bytes
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef FUZZ_SESSION_OPS_H
#define FUZZ_SESSION_OPS_H

/* 0 is the commonest byte in fuzzed data: the cheapest operation gets it. */
enum fz_op {
	FZ_OP_LOOP_ONCE,	/* one turn of aiod's event loop */
	FZ_OP_LOOP_IDLE,	/* aiod's loop until the engine and every descriptor are idle */
	FZ_OP_COLLECT,		/* slot: read the replies that are there */
	FZ_OP_SESSION,		/* slot, mode (enum fz_session_mode): a new client */
	FZ_OP_CONNECT,		/* slot, u8 features, u8 pid claim (0 = the truth) */
	FZ_OP_OPEN,		/* slot, fd kind, name, u8 flags */
	FZ_OP_CLOSE,		/* slot, file */
	FZ_OP_FTRUNCATE,	/* slot, file, number */
	FZ_OP_INVALIDATE,	/* slot, file, number offset, number length */
	FZ_OP_UNLINK,		/* slot, u8: bit 7 set: raw u64 dev, u64 ino; else a backing file */
	FZ_OP_STATS,		/* slot */
	FZ_OP_FILE_STATS,	/* slot, u8 index */
	FZ_OP_DISCONNECT,	/* slot */
	FZ_OP_READ0,		/* slot, file, number offset, number length */
	FZ_OP_READ1,		/* slot, token */
	FZ_OP_WRITE0,		/* slot, file, number offset, number length */
	FZ_OP_WRITE1,		/* slot, token */
	FZ_OP_WROTE,		/* slot, file, number offset, number length */
	FZ_OP_FSYNC,		/* slot, file, u8 datasync */
	FZ_OP_RAW_CONTROL,	/* slot, u16 length, bytes, fd kind */
	FZ_OP_RAW_DATA,		/* slot, u16 length, bytes */
	FZ_OP_CLIENT_DIES,	/* slot: the client process is gone (every descriptor closes) */
	FZ_OP_AIOD_DROPS,	/* u8 index: aiod ends that session (pidfd, timeout, shutdown) */
	FZ_OP_COUNT
};

#define FZ_OP_MASK	0x1fu
#define FZ_F_CORRUPT	0x20u
#define FZ_F_FD		0x40u
#define FZ_F_ASYNC	0x80u

#define FZ_SLOTS	2

enum fz_session_mode {
	FZ_SESSION_PAIR,	/* socketpair handed to aiod, as the listener does after accept */
	FZ_SESSION_LISTENER,	/* a real connect() to aiod's listening socket */
	FZ_SESSION_DEAD,	/* socketpair, but the client process has already exited */
	FZ_SESSION_NO_PID,	/* socketpair, with a pid that does not exist (no pidfd) */
	FZ_SESSION_MODES
};

/* What an OPEN (or a control message with FZ_F_FD) carries. */
enum fz_fd_kind {
	FZ_FD_BIG_RDONLY,	/* a 12.x-block file */
	FZ_FD_BIG_RDWR,
	FZ_FD_BIG_WRONLY,
	FZ_FD_SMALL_APPEND,	/* a 1000-byte file, O_RDWR | O_APPEND */
	FZ_FD_SMALL_RDONLY,
	FZ_FD_EMPTY_RDWR,	/* an empty file */
	FZ_FD_BIG_PATH,		/* O_PATH */
	FZ_FD_MEMFD,		/* an anonymous regular file */
	FZ_FD_DIR,
	FZ_FD_PIPE,
	FZ_FD_SOCKET,
	FZ_FD_NONE,		/* no descriptor at all */
	FZ_FD_TWO,		/* two descriptors */
	FZ_FD_KINDS
};

/* Backing files, for FZ_OP_UNLINK and the harness's own checks. */
enum fz_file {
	FZ_FILE_BIG,
	FZ_FILE_SMALL,
	FZ_FILE_EMPTY,
	FZ_FILE_MEMFD,
	FZ_FILES
};

/* Names an OPEN can carry; "clip.mxf" is a stream (class *.mxf). */
#define FZ_NAMES { "a.bin", "clip.mxf", "dir/take2.mxf", "", "CLIP.MXF" }
#define FZ_NAME_RAW	0xf0u

/* The number selector. */
#define FZ_NUM_U16	0x80u
#define FZ_NUM_U64	0xc0u
#define FZ_REF_RAW	0x80u

/* Geometry of the harness's aiod: 32 blocks of 64 KiB (read-ahead keeps 16 free). */
#define FZ_BLOCK	(64u << 10)
#define FZ_NBLOCKS	32u
#define FZ_BIG_SIZE	(12u * FZ_BLOCK + 123u)
#define FZ_SMALL_SIZE	1000u
#define FZ_MEMFD_SIZE	100000u

/* Table entries of the number selector, indexed by the selector byte modulo their count. */
#define FZ_INTERESTING { 0, 1, 511, 512, 4096, FZ_BLOCK - 1, FZ_BLOCK, FZ_BLOCK + 1, \
	2 * FZ_BLOCK, 3 * FZ_BLOCK + 7, FZ_BIG_SIZE - 1, FZ_BIG_SIZE, FZ_BIG_SIZE + 1, \
	FZ_SMALL_SIZE, 15ull * FZ_BLOCK, 15ull * FZ_BLOCK + 1, 16ull * FZ_BLOCK, \
	(uint64_t)FZ_NBLOCKS * FZ_BLOCK, INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX, \
	UINT32_MAX, 0x80000000ull, 8ull << 20 }

#endif
