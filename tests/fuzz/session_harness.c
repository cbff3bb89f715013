/*
 * The session fuzzer's harness (session_harness.h): a real aiod context in
 * this process and up to FZ_SLOTS clients that play a fuzz input
 * (session_ops.h) against it.
 *
 * What an attacker reaches is exactly this: a connection to aiod's socket
 * (or, as the listener does after accept(), a socket handed to
 * aiod_session_create()), control messages with any descriptors attached,
 * and the session's request queue. The harness speaks both with the wire
 * structs, well-formed unless the input damages them, and checks what comes
 * back: every reply must verify, READ0/WRITE0 segments must lie in the
 * shared region, and READ0 data must be the file's own bytes whenever no
 * write can have raced the read.
 *
 * After each input every client dies and aiod must give everything back: no
 * session, no pinned block, no blocked request, no open file, no stream
 * reservation, no extra descriptor, no talloc block more under the context.
 *
 * Determinism. aiod's loop is turned by the harness, never by time: an
 * eventfd that stays readable (the probe) is registered with it, so a turn
 * never sleeps, and "idle" means the engine has nothing queued or in flight
 * and two turns in a row found only the probe ready (tevent serves one
 * descriptor per turn, round robin). The backing files live on tmpfs, where
 * reads and writes complete inside io_uring_submit().
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aiod.h"
#include "log.h"
#include "rtio_shm.h"
#include "rtio_sock.h"
#include "session_harness.h"
#include "session_ops.h"
#include "region.h"
#include "listener.h"
#include "files.h"
#include "streams.h"
#include "handlers.h"
#include "session.h"

#define FZ_MAX_OPS	512
#define FZ_MAX_IDS	8
#define FZ_MAX_TOKENS	16
#define FZ_PENDING	32
#define FZ_MSG_BUF	640	/* longer than any valid message: aiod must refuse the rest */
#define FZ_SETTLE_NS	(2ull * 1000000000ull)
#define FZ_NO_PID	0x3fffffff	/* above any pid_max */
#define FZ_DIR_PARENT	"/dev/shm"	/* tmpfs */
#define FZ_DIR_PREFIX	"rtio-fuzz-session."

/* A request sent and not yet answered: what the reply is checked against. */
struct fz_pending {
	bool used;
	uint64_t req_id;
	uint16_t opcode;
	int fd_kind;		/* OPEN: enum fz_fd_kind */
	uint64_t file_id, off, len;	/* READ0, WRITE0 */
	bool checkable;		/* READ0: no write was in flight when it was sent */
	uint64_t change_epoch;
};

/* A file id aiod returned to this client, and the backing file behind it (-1: none). */
struct fz_open_id {
	uint64_t file_id;
	int file;
};

struct fz_client {
	int sock;		/* our end of the control socket, -1: no client in this slot */
	mqd_t reqq, repq;	/* from CONNECT, -1 before */
	int region_fd;
	uint8_t *region;
	bool region_writable;
	uint64_t region_size;
	uint64_t next_req_id;
	struct fz_open_id ids[FZ_MAX_IDS];
	unsigned nids, ids_next;
	uint64_t tokens[FZ_MAX_TOKENS];
	unsigned ntokens, tokens_next;
	struct fz_pending pending[FZ_PENDING];
	unsigned pending_next;
};

struct fz_backing {
	const char *name;	/* for messages */
	char path[32];		/* /proc/self/fd/N: the file has no name of its own */
	int fd;			/* the harness's own, O_RDWR */
	uint32_t size;		/* at the start of every input */
	uint8_t *content;
	uint64_t dev, ino;
	struct timespec mtime;	/* when the harness last wrote it */
};

struct fz_world {
	struct aiod_ctx *ctx;
	char dir[64];
	struct fz_backing files[FZ_FILES];
	pid_t dead_pid;		/* exited, never reaped: a pidfd on it is readable at once */
	int probe_fd;
	struct tevent_fd *probe_fde;
	bool probe_ran;
	bool warm;		/* the engine ran its first operation */
	bool trace;		/* FUZZ_SESSION_TRACE set: print every operation and reply */
	size_t talloc_blocks;	/* under ctx with no client; an input must not add any */
	struct fz_client c[FZ_SLOTS];
	/* The data oracle (see fz_read_checkable). */
	uint64_t change_epoch;	/* WRITE1s and FTRUNCATEs sent */
	unsigned changes_inflight;	/* of them, not answered */
	bool lied;		/* an FTRUNCATE may have told aiod a size the file does not have */
	bool wrote;		/* a WRITE1 was sent */
	bool oracle_off;	/* a raw or damaged message may have written */
};

/* A message being built: a valid one, or longer and damaged. */
struct fz_msg {
	union {
		union rtio_msg m;
		uint8_t raw[FZ_MSG_BUF];
	} u;
	size_t len;
	int fd_kind;
};

/* The input, read byte by byte; past its end every byte is 0. */
struct fz_in {
	const uint8_t *p;
	size_t left;
};

/*
 * The world fz_fail() cleans up before abort(): the backing files and the
 * socket live on tmpfs, and libFuzzer's fork mode would leave a directory
 * per crash there. Static because fz_fail() is called from helpers that
 * have no world; there is one per process.
 */
static struct fz_world *fz_failing_world;

static void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fz_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_session: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	if (fz_failing_world != NULL) {
		fz_world_remove_files(fz_failing_world);
	}
	abort();
}

/* ---- reading the input ---- */

static uint8_t in_u8(struct fz_in *in)
{
	if (in->left == 0) {
		return 0;
	}
	in->left--;
	return *in->p++;
}

static uint64_t in_le(struct fz_in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		v |= (uint64_t)in_u8(in) << (8 * i);
	}
	return v;
}

static uint64_t in_number(struct fz_in *in)
{
	static const uint64_t interesting[] = FZ_INTERESTING;
	uint8_t sel = in_u8(in);

	if (sel < FZ_NUM_U16) {
		return interesting[sel % (sizeof(interesting) / sizeof(interesting[0]))];
	}
	return in_le(in, sel < FZ_NUM_U64 ? 2 : 8);
}

/* One of n remembered values, or a raw one (see session_ops.h). */
static uint64_t in_ref(struct fz_in *in, const uint64_t *known, unsigned n)
{
	uint8_t sel = in_u8(in);

	if (sel & FZ_REF_RAW) {
		return in_le(in, 8);
	}
	return n == 0 ? sel : known[sel % n];
}

static uint64_t in_file_id(struct fz_in *in, const struct fz_client *c)
{
	uint64_t ids[FZ_MAX_IDS];

	for (unsigned i = 0; i < c->nids; i++) {
		ids[i] = c->ids[i].file_id;
	}
	return in_ref(in, ids, c->nids);
}

static struct fz_client *in_slot(struct fz_world *w, struct fz_in *in)
{
	return &w->c[in_u8(in) % FZ_SLOTS];
}

/* ---- the backing files ---- */

static uint8_t fz_pattern(unsigned file, uint64_t off)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ull ^ (file + 1) * 0xbf58476d1ce4e5b9ull;

	return (uint8_t)(x >> 56);
}

static void fz_backing_stat(const struct fz_backing *b, struct stat *st)
{
	if (fstat(b->fd, st) != 0) {
		fz_fail("harness: fstat %s: %s", b->name, strerror(errno));
	}
}

/* Put a backing file back as it was before any input wrote to it. */
static void fz_backing_restore(struct fz_backing *b)
{
	struct stat st;

	if (b->size > 0 && pwrite(b->fd, b->content, b->size, 0) != (ssize_t)b->size) {
		fz_fail("harness: writing %s: %s", b->name, strerror(errno));
	}
	if (ftruncate(b->fd, b->size) != 0) {
		fz_fail("harness: truncating %s: %s", b->name, strerror(errno));
	}
	fz_backing_stat(b, &st);
	b->mtime = st.st_mtim;
}

/* Restore it if an input wrote to it (through aiod, by any path: its mtime moved). */
static void fz_backing_refresh(struct fz_backing *b)
{
	struct stat st;

	fz_backing_stat(b, &st);
	if (st.st_mtim.tv_sec != b->mtime.tv_sec || st.st_mtim.tv_nsec != b->mtime.tv_nsec ||
	    st.st_size != (off_t)b->size) {
		fz_backing_restore(b);
	}
}

/*
 * A backing file on tmpfs (where reads and writes complete inside
 * io_uring_submit()) with no name: opened again through /proc/self/fd with
 * whatever flags an OPEN wants, and gone with the process however it ends.
 */
static void fz_backing_create(struct fz_world *w, unsigned i, uint32_t size)
{
	static const char *const names[FZ_FILES] = { "big.dat", "small.dat", "empty.dat",
						     "memfd" };
	struct fz_backing *b = &w->files[i];
	struct stat st;

	b->name = names[i];
	b->fd = i == FZ_FILE_MEMFD ? memfd_create("fuzz-session", MFD_CLOEXEC)
				   : open(w->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (b->fd < 0) {
		fz_fail("harness: creating %s: %s", b->name, strerror(errno));
	}
	snprintf(b->path, sizeof(b->path), "/proc/self/fd/%d", b->fd);
	b->size = size;
	b->content = malloc(size > 0 ? size : 1);
	if (b->content == NULL) {
		fz_fail("harness: out of memory");
	}
	for (uint32_t off = 0; off < size; off++) {
		b->content[off] = fz_pattern(i, off);
	}
	fz_backing_restore(b);
	fz_backing_stat(b, &st);
	b->dev = (uint64_t)st.st_dev;
	b->ino = (uint64_t)st.st_ino;
}

/* Descriptors of an fd kind, opened afresh: the caller sends and closes them. */
static unsigned fz_open_fds(struct fz_world *w, int kind, int fds[2])
{
	static const struct {
		int file;
		int flags;
	} plain[FZ_FD_KINDS] = {
		[FZ_FD_BIG_RDONLY] = { FZ_FILE_BIG, O_RDONLY },
		[FZ_FD_BIG_RDWR] = { FZ_FILE_BIG, O_RDWR },
		[FZ_FD_BIG_WRONLY] = { FZ_FILE_BIG, O_WRONLY },
		[FZ_FD_SMALL_APPEND] = { FZ_FILE_SMALL, O_RDWR | O_APPEND },
		[FZ_FD_SMALL_RDONLY] = { FZ_FILE_SMALL, O_RDONLY },
		[FZ_FD_EMPTY_RDWR] = { FZ_FILE_EMPTY, O_RDWR },
		[FZ_FD_BIG_PATH] = { FZ_FILE_BIG, O_PATH },
		[FZ_FD_MEMFD] = { FZ_FILE_MEMFD, O_RDWR },
	};
	unsigned n = 1;
	int pair[2];

	fds[0] = fds[1] = -1;
	switch (kind) {
	case FZ_FD_NONE:
		return 0;
	case FZ_FD_DIR:
		fds[0] = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		break;
	case FZ_FD_PIPE:
	case FZ_FD_SOCKET:
		if ((kind == FZ_FD_PIPE ? pipe2(pair, O_CLOEXEC)
					: socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair)) != 0) {
			fz_fail("harness: pipe/socketpair: %s", strerror(errno));
		}
		fds[0] = pair[0];
		close(pair[1]);
		break;
	case FZ_FD_TWO:
		fds[0] = open(w->files[FZ_FILE_BIG].path, O_RDONLY | O_CLOEXEC);
		fds[1] = open(w->files[FZ_FILE_SMALL].path, O_RDONLY | O_CLOEXEC);
		n = 2;
		break;
	default:
		fds[0] = open(w->files[plain[kind].file].path, plain[kind].flags | O_CLOEXEC);
		break;
	}
	for (unsigned i = 0; i < n; i++) {
		if (fds[i] < 0) {
			fz_fail("harness: opening descriptors of kind %d: %s", kind, strerror(errno));
		}
	}
	return n;
}

/* The backing file an OPEN of this fd kind registers, -1 if it cannot. */
static int fz_fd_kind_file(int kind)
{
	switch (kind) {
	case FZ_FD_BIG_RDONLY:
	case FZ_FD_BIG_RDWR:
	case FZ_FD_BIG_WRONLY:
		return FZ_FILE_BIG;
	case FZ_FD_SMALL_APPEND:
	case FZ_FD_SMALL_RDONLY:
		return FZ_FILE_SMALL;
	case FZ_FD_EMPTY_RDWR:
		return FZ_FILE_EMPTY;
	case FZ_FD_MEMFD:
		return FZ_FILE_MEMFD;
	default:
		return -1;
	}
}

/* ---- aiod's event loop ---- */

static void fz_probe_ready(struct tevent_context *ev, struct tevent_fd *fde, uint16_t flags,
			   void *private_data)
{
	struct fz_world *w = private_data;

	(void)ev;
	(void)fde;
	(void)flags;
	w->probe_ran = true;	/* not read: it stays readable */
}

static void fz_loop_once(struct fz_world *w)
{
	w->probe_ran = false;
	if (tevent_loop_once(w->ctx->ev) != 0) {
		fz_fail("tevent_loop_once: %s", strerror(errno));
	}
}

/* Turn aiod's loop until nothing is left to do (see the top of the file). */
static void fz_settle(struct fz_world *w)
{
	uint64_t start = aiod_now_ns();
	unsigned quiet = 0;

	for (unsigned turn = 1; quiet < 2; turn++) {
		struct aiod_engine_stats es;
		bool busy;

		aiod_engine_get_stats(w->ctx->engine, &es);
		busy = es.inflight > 0 || es.queued > 0;
		fz_loop_once(w);
		quiet = w->probe_ran && !busy ? quiet + 1 : 0;
		if (turn % 256 == 0 && aiod_now_ns() - start > FZ_SETTLE_NS) {
			fz_fail("aiod's event loop is still busy after 2 s (%u queued, %u in flight)",
				es.queued, es.inflight);
		}
	}
}

/* ---- clients ---- */

static void fz_client_reset(struct fz_client *c)
{
	memset(c, 0, sizeof(*c));
	c->sock = c->region_fd = -1;
	c->reqq = c->repq = (mqd_t)-1;
}

/* The client process is gone: the kernel closes its descriptors and its mapping. */
static void fz_client_dies(struct fz_client *c)
{
	if (c->region != NULL && munmap(c->region, c->region_size) != 0) {
		fz_fail("harness: munmap: %s", strerror(errno));
	}
	if (c->sock >= 0) {
		close(c->sock);
	}
	if (c->region_fd >= 0) {
		close(c->region_fd);
	}
	if (c->reqq != (mqd_t)-1) {
		mq_close(c->reqq);
	}
	if (c->repq != (mqd_t)-1) {
		mq_close(c->repq);
	}
	fz_client_reset(c);
}

static void fz_client_start(struct fz_world *w, struct fz_client *c, int mode)
{
	int pair[2];
	pid_t pid;

	fz_client_dies(c);	/* whoever had the slot */
	if (mode == FZ_SESSION_LISTENER) {
		c->sock = rtio_sock_connect(w->ctx->cfg->socket_path, 0);
		if (c->sock < 0) {
			fz_fail("connecting to aiod's socket: %s", strerror(-c->sock));
		}
		if (fcntl(c->sock, F_SETFL, O_NONBLOCK) != 0) {
			fz_fail("harness: O_NONBLOCK: %s", strerror(errno));
		}
		return;
	}
	/* Both ends non-blocking, as the listener's accept4() makes aiod's. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) != 0) {
		fz_fail("harness: socketpair: %s", strerror(errno));
	}
	pid = mode == FZ_SESSION_DEAD ? w->dead_pid : mode == FZ_SESSION_NO_PID ? FZ_NO_PID : getpid();
	if (aiod_session_create(w->ctx, pair[1], pid, getuid(), false) == NULL) {
		close(pair[1]);	/* as listener_accept() does */
	}
	c->sock = pair[0];
}

static struct fz_pending *fz_pending_take(struct fz_client *c, uint64_t req_id)
{
	for (unsigned i = 0; i < FZ_PENDING; i++) {
		if (c->pending[i].used && c->pending[i].req_id == req_id) {
			c->pending[i].used = false;
			return &c->pending[i];
		}
	}
	return NULL;
}

/* Remember what was sent, as it went out (a damaged message as damaged). */
static struct fz_pending *fz_pending_add(struct fz_client *c, const struct fz_msg *m)
{
	struct fz_pending *p = &c->pending[c->pending_next++ % FZ_PENDING];

	memset(p, 0, sizeof(*p));
	if (m->len < sizeof(struct rtio_hdr)) {
		return p;	/* unused: nothing to match a reply with */
	}
	p->used = true;
	p->req_id = m->u.m.hdr.req_id;
	p->opcode = m->u.m.hdr.opcode;
	p->fd_kind = m->fd_kind;
	if (m->len >= sizeof(struct rtio_io_req)) {
		p->file_id = m->u.m.io_req.file_id;
		p->off = m->u.m.io_req.offset;
		p->len = m->u.m.io_req.length;
	}
	return p;
}

static int fz_backing_of(const struct fz_client *c, uint64_t file_id)
{
	for (unsigned i = 0; i < c->nids; i++) {
		if (c->ids[i].file_id == file_id) {
			return c->ids[i].file;
		}
	}
	return -1;
}

/*
 * READ0 data must be the file's own bytes, unless something the harness
 * cannot follow may have changed the file or told aiod a wrong size: a
 * WRITE1 or an FTRUNCATE in flight while the read was (either outcome is
 * right then: the harness never changes a size itself, so an FTRUNCATE is a
 * lie aiod trims its cached blocks to), a raw or damaged message, or an
 * FTRUNCATE followed by writes (aiod trusts the size it was told, and fills
 * up to it with zeros when a write lands past a cached block's end).
 */
static bool fz_read_checkable(const struct fz_world *w)
{
	return !w->oracle_off && w->changes_inflight == 0 && !(w->lied && w->wrote);
}

static void fz_change_sent(struct fz_world *w)
{
	w->change_epoch++;
	w->changes_inflight++;
}

static void fz_change_answered(struct fz_world *w)
{
	if (w->changes_inflight > 0) {
		w->changes_inflight--;
	}
}

static void fz_trace(const struct fz_world *w, const struct fz_client *c, const char *what,
		     const union rtio_msg *m)
{
	if (w->trace) {
		fprintf(stderr, "  client %d %s %s #%llu result %d\n", (int)(c - w->c), what,
			rtio_op_name(m->hdr.opcode), (unsigned long long)m->hdr.req_id,
			m->hdr.result);
	}
}

/* ---- checking replies ---- */

static void fz_check_segments(const struct fz_client *c, const struct rtio_io_rep *r)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < r->nseg; i++) {
		const struct rtio_seg *s = &r->seg[i];

		if (s->shm_off < RTIO_SHM_DIR_OFF || s->shm_off > c->region_size ||
		    s->len > c->region_size - s->shm_off || s->len == 0) {
			fz_fail("%s reply segment %u (%llu bytes at %llu) is not inside the %llu "
				"byte region's data", rtio_op_name(r->hdr.opcode), i,
				(unsigned long long)s->len, (unsigned long long)s->shm_off,
				(unsigned long long)c->region_size);
		}
		total += s->len;
	}
	if (total != (uint64_t)r->hdr.result) {
		fz_fail("%s reply: result %d but its segments hold %llu bytes",
			rtio_op_name(r->hdr.opcode), r->hdr.result, (unsigned long long)total);
	}
}

static void fz_check_read_data(const struct fz_world *w, const struct fz_client *c,
			       const struct rtio_io_rep *r, const struct fz_pending *p)
{
	int file = fz_backing_of(c, p->file_id);
	const struct fz_backing *b;
	uint64_t expect, pos = p->off;
	uint8_t buf[FZ_BLOCK];
	struct stat st;

	if (file < 0 || !p->checkable || p->change_epoch != w->change_epoch || !fz_read_checkable(w)) {
		return;
	}
	b = &w->files[file];
	fz_backing_stat(b, &st);
	expect = p->off >= (uint64_t)st.st_size ? 0 :
		 ((uint64_t)st.st_size - p->off < p->len ? (uint64_t)st.st_size - p->off : p->len);
	if ((uint64_t)r->hdr.result != expect) {
		fz_fail("READ0 of %llu bytes at %llu of a %llu byte file returned %d bytes",
			(unsigned long long)p->len, (unsigned long long)p->off,
			(unsigned long long)st.st_size, r->hdr.result);
	}
	for (uint32_t i = 0; i < r->nseg; i++) {
		for (uint32_t done = 0; done < r->seg[i].len;) {
			uint32_t n = r->seg[i].len - done < sizeof(buf) ? r->seg[i].len - done
									: (uint32_t)sizeof(buf);

			if (pread(b->fd, buf, n, (off_t)pos) != (ssize_t)n) {
				fz_fail("harness: pread %s: %s", b->name, strerror(errno));
			}
			if (memcmp(buf, c->region + r->seg[i].shm_off + done, n) != 0) {
				fz_fail("READ0 of %llu bytes at %llu of %s: segment %u differs from "
					"the file near offset %llu", (unsigned long long)p->len,
					(unsigned long long)p->off, b->name, i,
					(unsigned long long)pos);
			}
			done += n;
			pos += n;
		}
	}
}

/*
 * The client copies its data in, as rtio_client_pwrite does: a byte of its
 * own per segment (memset: a byte loop would cost the fuzzer half its time),
 * so data landing at the wrong offset or from the wrong block shows.
 */
static void fz_fill_write(const struct fz_client *c, const struct rtio_io_rep *r)
{
	if (!c->region_writable) {
		/* aiod must not have handed out staging blocks: the caller's oracle says so. */
		return;
	}
	for (uint32_t i = 0; i < r->nseg; i++) {
		memset(c->region + r->seg[i].shm_off, (uint8_t)(r->token * 31 + i + 1), r->seg[i].len);
	}
}

static void fz_remember_token(struct fz_client *c, uint64_t token)
{
	c->tokens[c->tokens_next++ % FZ_MAX_TOKENS] = token;
	if (c->ntokens < FZ_MAX_TOKENS) {
		c->ntokens++;
	}
}

static void fz_data_reply(struct fz_world *w, struct fz_client *c, const union rtio_msg *m,
			  size_t len)
{
	struct fz_pending *p;
	int ret = rtio_msg_verify(m, len, 1);

	if (ret != 0) {
		fz_fail("aiod sent a malformed reply on the queue (%zu bytes, opcode %u): %s", len,
			m->hdr.opcode, strerror(-ret));
	}
	fz_trace(w, c, "queue reply", m);
	p = fz_pending_take(c, m->hdr.req_id);
	if (p != NULL && p->opcode != m->hdr.opcode && !w->oracle_off) {
		fz_fail("reply to request %llu has opcode %s, the request was %s",
			(unsigned long long)m->hdr.req_id, rtio_op_name(m->hdr.opcode),
			rtio_op_name(p->opcode));
	}
	if (m->hdr.opcode == RTIO_OP_WRITE1) {
		fz_change_answered(w);
	}
	if (m->hdr.opcode != RTIO_OP_READ0 && m->hdr.opcode != RTIO_OP_WRITE0) {
		return;
	}
	if (m->hdr.result < 0) {
		if (m->io_rep.nseg != 0 || m->io_rep.token != 0) {
			fz_fail("failed %s reply (%d) carries %u segments, token %llu",
				rtio_op_name(m->hdr.opcode), m->hdr.result, m->io_rep.nseg,
				(unsigned long long)m->io_rep.token);
		}
		return;
	}
	if (m->io_rep.token == 0) {
		fz_fail("%s reply without a token", rtio_op_name(m->hdr.opcode));
	}
	fz_check_segments(c, &m->io_rep);
	fz_remember_token(c, m->io_rep.token);
	if (p == NULL || w->oracle_off) {
		return;
	}
	if ((uint64_t)m->hdr.result > p->len ||
	    (m->hdr.opcode == RTIO_OP_WRITE0 && (uint64_t)m->hdr.result != p->len)) {
		fz_fail("%s of %llu bytes answered %d", rtio_op_name(m->hdr.opcode),
			(unsigned long long)p->len, m->hdr.result);
	}
	if (m->hdr.opcode == RTIO_OP_WRITE0) {
		fz_fill_write(c, &m->io_rep);
	} else {
		fz_check_read_data(w, c, &m->io_rep, p);
	}
}

static void fz_connected(struct fz_world *w, struct fz_client *c,
			 const struct rtio_connect_rep *r, const int *fds)
{
	struct mq_attr nonblock = { .mq_flags = O_NONBLOCK };

	if (c->reqq != (mqd_t)-1) {
		fz_fail("a second CONNECT reply on one session");
	}
	if (r->shm_size != w->ctx->region.size || r->block_size != w->ctx->region.block_size) {
		fz_fail("CONNECT reply: region of %llu bytes in blocks of %u, aiod has %llu and %u",
			(unsigned long long)r->shm_size, r->block_size,
			(unsigned long long)w->ctx->region.size, w->ctx->region.block_size);
	}
	c->reqq = fds[0];
	c->repq = fds[1];
	c->region_fd = fds[2];
	/* Our sends must not block when aiod lets the queue fill: the input decides. */
	if (mq_setattr(c->reqq, &nonblock, NULL) != 0) {
		fz_fail("mq_setattr on the request queue aiod passed: %s", strerror(errno));
	}
	c->region_size = r->shm_size;
	/* Writable only when aiod granted writes through the region (RTIO_FEAT_SHM_WRITE). */
	c->region_writable = (r->features & RTIO_FEAT_SHM_WRITE) != 0;
	c->region = mmap(NULL, c->region_size,
			 c->region_writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
			 c->region_fd, 0);
	if (c->region == MAP_FAILED) {
		c->region = NULL;
		fz_fail("mapping the region aiod passed: %s", strerror(errno));
	}
	if (rtio_shm_check((const struct rtio_shm_header *)c->region, c->region_size) != 0) {
		fz_fail("the shared region's header does not describe it");
	}
}

static void fz_opened(struct fz_world *w, struct fz_client *c, const struct rtio_open_rep *r,
		      const struct fz_pending *p)
{
	struct fz_open_id *id = &c->ids[c->ids_next++ % FZ_MAX_IDS];
	int file = p != NULL ? fz_fd_kind_file(p->fd_kind) : -1;

	if (file >= 0 && !w->oracle_off &&
	    (r->dev != w->files[file].dev || r->ino != w->files[file].ino)) {
		fz_fail("OPEN of %s answered (dev %llu, ino %llu)", w->files[file].name,
			(unsigned long long)r->dev, (unsigned long long)r->ino);
	}
	id->file_id = r->file_id;
	id->file = w->oracle_off ? -1 : file;
	if (c->nids < FZ_MAX_IDS) {
		c->nids++;
	}
}

static void fz_control_reply(struct fz_world *w, struct fz_client *c, const union rtio_msg *m,
			     size_t len, int *fds, unsigned nfds)
{
	struct fz_pending *p;
	unsigned want_fds;
	int ret = rtio_msg_verify(m, len, 1);

	if (ret != 0) {
		fz_fail("aiod sent a malformed control reply (%zu bytes, opcode %u): %s", len,
			m->hdr.opcode, strerror(-ret));
	}
	fz_trace(w, c, "control reply", m);
	want_fds = m->hdr.opcode == RTIO_OP_CONNECT && m->hdr.result == 0 ? 3 : 0;
	if (nfds != want_fds) {
		fz_fail("%s reply (result %d) carries %u descriptors", rtio_op_name(m->hdr.opcode),
			m->hdr.result, nfds);
	}
	p = fz_pending_take(c, m->hdr.req_id);
	if (m->hdr.opcode == RTIO_OP_FTRUNCATE) {
		fz_change_answered(w);
	}
	if (m->hdr.opcode == RTIO_OP_CONNECT && m->hdr.result == 0) {
		fz_connected(w, c, &m->connect_rep, fds);
	} else if (m->hdr.opcode == RTIO_OP_OPEN && m->hdr.result == 0) {
		fz_opened(w, c, &m->open_rep, p);
	}
}

/* Read whatever replies wait for this client, without blocking. */
static void fz_collect(struct fz_world *w, struct fz_client *c)
{
	union {
		union rtio_msg m;
		uint8_t raw[FZ_MSG_BUF];
	} rep;

	while (c->sock >= 0) {
		int fds[RTIO_SOCK_MAX_FDS];
		unsigned nfds = RTIO_SOCK_MAX_FDS;
		ssize_t n = rtio_sock_recv(c->sock, &rep, sizeof(rep), fds, &nfds, 0);

		if (n == -ETIMEDOUT || n == -EAGAIN || n == 0 || n == -ECONNRESET) {
			break;	/* nothing more, or aiod closed the session */
		}
		if (n < 0) {
			fz_fail("receiving a control reply: %s", strerror((int)-n));
		}
		fz_control_reply(w, c, &rep.m, (size_t)n, fds, nfds);
	}
	while (c->repq != (mqd_t)-1) {
		ssize_t n = mq_receive(c->repq, (char *)&rep, sizeof(rep), NULL);

		if (n < 0) {
			if (errno != EAGAIN) {
				fz_fail("receiving from the reply queue: %s", strerror(errno));
			}
			break;
		}
		fz_data_reply(w, c, &rep.m, (size_t)n);
	}
}

/* ---- sending ---- */

static void fz_msg_init(struct fz_client *c, struct fz_msg *m, unsigned opcode)
{
	size_t len = rtio_msg_expected_len(opcode, 0);

	memset(m, 0, sizeof(*m));
	m->len = len;
	m->fd_kind = FZ_FD_NONE;
	rtio_hdr_init(&m->u.m.hdr, opcode, (uint32_t)len, ++c->next_req_id);
}

/* FZ_F_CORRUPT: flip bits anywhere in the buffer and change the length sent. */
static bool fz_corrupt(struct fz_in *in, unsigned flags, struct fz_msg *m, size_t max_len)
{
	size_t pos;
	uint8_t xor;
	int delta;

	if (!(flags & FZ_F_CORRUPT)) {
		return false;
	}
	pos = (size_t)in_le(in, 2) % max_len;
	xor = in_u8(in);
	delta = (int8_t)in_u8(in);
	m->u.raw[pos] ^= xor;
	if (delta < 0 && (size_t)-delta > m->len) {
		m->len = 0;
	} else {
		m->len = m->len + delta > max_len ? max_len : m->len + delta;
	}
	return true;
}

/* Sent and, unless asynchronous, answered: aiod runs until idle, the replies are read. */
static void fz_after_send(struct fz_world *w, struct fz_client *c, unsigned flags)
{
	if (!(flags & FZ_F_ASYNC)) {
		fz_settle(w);
		fz_collect(w, c);
	}
}

static void fz_send_control(struct fz_world *w, struct fz_client *c, struct fz_msg *m,
			    struct fz_in *in, unsigned flags)
{
	int fds[2];
	unsigned nfds;
	int ret;

	if ((flags & FZ_F_FD) && m->u.m.hdr.opcode != RTIO_OP_OPEN) {
		m->fd_kind = in_u8(in) % FZ_FD_KINDS;
	}
	if (fz_corrupt(in, flags, m, sizeof(m->u.raw))) {
		w->oracle_off = true;	/* a damaged OPEN could register another file */
	}
	if (c->sock < 0) {
		return;
	}
	nfds = fz_open_fds(w, m->fd_kind, fds);
	ret = rtio_sock_send(c->sock, m->u.raw, m->len, fds, nfds);
	for (unsigned i = 0; i < nfds; i++) {
		close(fds[i]);
	}
	/* Refused sends (-EPIPE: aiod closed us; -EAGAIN: it reads nothing) are the client's loss. */
	if (ret == 0) {
		(void)fz_pending_add(c, m);
		if (m->u.m.hdr.opcode == RTIO_OP_FTRUNCATE) {
			fz_change_sent(w);
		}
	}
	fz_after_send(w, c, flags);
}

static void fz_send_data(struct fz_world *w, struct fz_client *c, struct fz_msg *m,
			 struct fz_in *in, unsigned flags)
{
	struct fz_pending *p;
	bool damaged = fz_corrupt(in, flags, m, RTIO_MQ_MSGSIZE);

	if (c->reqq == (mqd_t)-1) {
		return;
	}
	/* -EAGAIN: the queue is full and a client would wait; the input moves on. */
	if (mq_send(c->reqq, (const char *)m->u.raw, m->len, 0) != 0) {
		if (errno != EAGAIN) {
			fz_fail("mq_send on the request queue: %s", strerror(errno));
		}
		return;
	}
	/* Either may change a file; only the harness's own WRITE1s can be followed. */
	if (damaged) {
		w->oracle_off = true;
	} else if (m->u.m.hdr.opcode == RTIO_OP_WRITE1) {
		w->wrote = true;
		fz_change_sent(w);
	}
	p = fz_pending_add(c, m);
	p->checkable = fz_read_checkable(w);
	p->change_epoch = w->change_epoch;
	fz_after_send(w, c, flags);
}

/* ---- the operations ---- */

static void op_session(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	int mode = in_u8(in) % FZ_SESSION_MODES;

	(void)flags;
	fz_client_start(w, c, mode);
}

static void op_connect(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;
	uint8_t pid_claim;

	fz_msg_init(c, &m, RTIO_OP_CONNECT);
	m.u.m.connect_req.features = in_u8(in);
	pid_claim = in_u8(in);
	m.u.m.connect_req.pid = pid_claim == 0 ? (uint32_t)getpid() : pid_claim;
	memcpy(m.u.m.connect_req.client, "fuzz", 5);
	fz_send_control(w, c, &m, in, flags);
}

static void op_open(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	static const char *const names[] = FZ_NAMES;
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;
	uint8_t sel;

	fz_msg_init(c, &m, RTIO_OP_OPEN);
	m.fd_kind = in_u8(in) % FZ_FD_KINDS;
	sel = in_u8(in);
	if (sel < FZ_NAME_RAW) {
		const char *name = names[sel % (sizeof(names) / sizeof(names[0]))];
		memcpy(m.u.m.open_req.name, name, strlen(name) + 1);
	} else {
		/* Any bytes, possibly without a terminating NUL. */
		size_t n = in_u8(in) + 1u;
		for (size_t i = 0; i < n && i < RTIO_NAME_MAX; i++) {
			m.u.m.open_req.name[i] = (char)in_u8(in);
		}
	}
	m.u.m.open_req.flags = in_u8(in);
	fz_send_control(w, c, &m, in, flags);
}

static void op_close(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_msg_init(c, &m, RTIO_OP_CLOSE);
	m.u.m.close_req.file_id = in_file_id(in, c);
	fz_send_control(w, c, &m, in, flags);
}

static void op_ftruncate(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_msg_init(c, &m, RTIO_OP_FTRUNCATE);
	m.u.m.ftruncate_req.file_id = in_file_id(in, c);
	m.u.m.ftruncate_req.length = in_number(in);
	w->lied = true;	/* the harness never changes a file's size itself */
	fz_send_control(w, c, &m, in, flags);
}

static void op_invalidate(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_msg_init(c, &m, RTIO_OP_INVALIDATE);
	m.u.m.invalidate_req.file_id = in_file_id(in, c);
	m.u.m.invalidate_req.offset = in_number(in);
	m.u.m.invalidate_req.length = in_number(in);
	fz_send_control(w, c, &m, in, flags);
}

static void op_unlink(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;
	uint8_t sel = in_u8(in);

	fz_msg_init(c, &m, RTIO_OP_UNLINK);
	if (sel & FZ_REF_RAW) {
		m.u.m.unlink_req.dev = in_le(in, 8);
		m.u.m.unlink_req.ino = in_le(in, 8);
	} else {
		m.u.m.unlink_req.dev = w->files[sel % FZ_FILES].dev;
		m.u.m.unlink_req.ino = w->files[sel % FZ_FILES].ino;
	}
	fz_send_control(w, c, &m, in, flags);
}

/* Control requests with nothing but a header (STATS, DISCONNECT). */
static void op_header_only(struct fz_world *w, struct fz_in *in, unsigned flags, unsigned opcode)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_msg_init(c, &m, opcode);
	fz_send_control(w, c, &m, in, flags);
}

static void op_stats(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	op_header_only(w, in, flags, RTIO_OP_STATS);
}

static void op_disconnect(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	op_header_only(w, in, flags, RTIO_OP_DISCONNECT);
}

static void op_file_stats(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_msg_init(c, &m, RTIO_OP_FILE_STATS);
	m.u.m.file_stats_req.index = in_u8(in);
	fz_send_control(w, c, &m, in, flags);
}

/* READ0, WRITE0, WROTE: file, offset, length. */
static void op_io(struct fz_world *w, struct fz_in *in, unsigned flags, unsigned opcode)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_msg_init(c, &m, opcode);
	m.u.m.io_req.file_id = in_file_id(in, c);
	m.u.m.io_req.offset = in_number(in);
	m.u.m.io_req.length = (uint32_t)in_number(in);
	fz_send_data(w, c, &m, in, flags);
}

static void op_read0(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	op_io(w, in, flags, RTIO_OP_READ0);
}

static void op_write0(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	op_io(w, in, flags, RTIO_OP_WRITE0);
}

static void op_wrote(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	op_io(w, in, flags, RTIO_OP_WROTE);
}

static void op_fsync(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_msg_init(c, &m, RTIO_OP_FSYNC);
	m.u.m.io_req.file_id = in_file_id(in, c);
	m.u.m.io_req.length = in_u8(in) & 1;	/* 1: datasync */
	fz_send_data(w, c, &m, in, flags);
}

/* READ1, WRITE1: a token. */
static void op_release(struct fz_world *w, struct fz_in *in, unsigned flags, unsigned opcode)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_msg_init(c, &m, opcode);
	m.u.m.release_req.token = in_ref(in, c->tokens, c->ntokens);
	fz_send_data(w, c, &m, in, flags);
}

static void op_read1(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	op_release(w, in, flags, RTIO_OP_READ1);
}

static void op_write1(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	op_release(w, in, flags, RTIO_OP_WRITE1);
}

/* Bytes straight from the input, max_len at most. */
static void fz_raw_msg(struct fz_in *in, struct fz_msg *m, size_t max_len)
{
	memset(m, 0, sizeof(*m));
	m->len = (size_t)in_le(in, 2) % (max_len + 1);
	for (size_t i = 0; i < m->len; i++) {
		m->u.raw[i] = in_u8(in);
	}
	m->fd_kind = FZ_FD_NONE;
}

static void op_raw_control(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_raw_msg(in, &m, sizeof(m.u.raw));
	m.fd_kind = in_u8(in) % FZ_FD_KINDS;
	w->oracle_off = true;	/* it may be an OPEN of anything */
	fz_send_control(w, c, &m, in, flags & ~FZ_F_FD);
}

static void op_raw_data(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	struct fz_client *c = in_slot(w, in);
	struct fz_msg m;

	fz_raw_msg(in, &m, RTIO_MQ_MSGSIZE);
	/* It may be a WRITE1 of a real token: the harness cannot follow the files any more. */
	w->oracle_off = true;
	fz_send_data(w, c, &m, in, flags);
}

static void op_loop_once(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	(void)in;
	(void)flags;
	fz_loop_once(w);
}

static void op_loop_idle(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	(void)in;
	(void)flags;
	fz_settle(w);
}

static void op_collect(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	(void)flags;
	fz_collect(w, in_slot(w, in));
}

static void op_client_dies(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	(void)flags;
	fz_client_dies(in_slot(w, in));
}

/* What session_pidfd_ready, the handshake timeout or a shutdown do. */
static void op_aiod_drops(struct fz_world *w, struct fz_in *in, unsigned flags)
{
	uint8_t index = in_u8(in);
	struct aiod_session *s = w->ctx->sessions;

	(void)flags;
	if (w->ctx->nsessions == 0) {
		return;
	}
	for (unsigned i = 0; i < index % w->ctx->nsessions && s != NULL; i++) {
		s = aiod_session_next(s);
	}
	if (s != NULL) {
		aiod_session_destroy(s, "fuzz: dropped by aiod");
	}
}

typedef void (*fz_op_fn)(struct fz_world *w, struct fz_in *in, unsigned flags);

static const fz_op_fn fz_ops[FZ_OP_COUNT] = {
	[FZ_OP_SESSION] = op_session,
	[FZ_OP_CONNECT] = op_connect,
	[FZ_OP_OPEN] = op_open,
	[FZ_OP_CLOSE] = op_close,
	[FZ_OP_FTRUNCATE] = op_ftruncate,
	[FZ_OP_INVALIDATE] = op_invalidate,
	[FZ_OP_UNLINK] = op_unlink,
	[FZ_OP_STATS] = op_stats,
	[FZ_OP_FILE_STATS] = op_file_stats,
	[FZ_OP_DISCONNECT] = op_disconnect,
	[FZ_OP_READ0] = op_read0,
	[FZ_OP_READ1] = op_read1,
	[FZ_OP_WRITE0] = op_write0,
	[FZ_OP_WRITE1] = op_write1,
	[FZ_OP_WROTE] = op_wrote,
	[FZ_OP_FSYNC] = op_fsync,
	[FZ_OP_RAW_CONTROL] = op_raw_control,
	[FZ_OP_RAW_DATA] = op_raw_data,
	[FZ_OP_LOOP_ONCE] = op_loop_once,
	[FZ_OP_LOOP_IDLE] = op_loop_idle,
	[FZ_OP_COLLECT] = op_collect,
	[FZ_OP_CLIENT_DIES] = op_client_dies,
	[FZ_OP_AIOD_DROPS] = op_aiod_drops,
};

/* ---- one input ---- */

static unsigned fz_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;

	if (d == NULL) {
		fz_fail("harness: /proc/self/fd: %s", strerror(errno));
	}
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n;
}

/* The reloadable knobs an input chooses (session_ops.h); the rest are the defaults. */
static void fz_configure(struct fz_world *w, uint8_t knobs)
{
	static const char *const modes[] = { "demote", "refuse", "off", "demote" };
	static const uint32_t inflight[] = { 64, 1, 2, 4 };
	struct aiod_config *cfg = w->ctx->cfg;

	cfg->admission_mode = (char *)modes[knobs & 3];
	cfg->direct_io = (knobs & 0x04) != 0;
	cfg->auto_stream = (knobs & 0x08) != 0;
	cfg->session_inflight = inflight[(knobs >> 4) & 3];
	cfg->readahead_io_size = (knobs & 0x40) ? FZ_BLOCK : 2u << 20;
	cfg->readahead_blocks = (knobs & 0x80) ? 0 : 64;
}

/* Collects the timers directly under aiod's context (talloc_report_depth_cb's walk). */
struct fz_timers {
	void *t[64];
	unsigned n;
};

static void fz_find_timer(const void *ptr, int depth, int max_depth, int is_ref, void *private_data)
{
	struct fz_timers *found = private_data;

	(void)max_depth;
	if (depth == 1 && !is_ref && found->n < 64 &&
	    strcmp(talloc_get_name(ptr), "struct tevent_timer") == 0) {
		found->t[found->n++] = (void *)(uintptr_t)ptr;
	}
}

/*
 * waitq.c keeps one timer while a request waits for cache blocks and frees
 * it when nothing waits: once every client is gone, a timer left under the
 * context is a leak.
 */
static void fz_check_no_timers(struct fz_world *w)
{
	struct fz_timers found;

	found.n = 0;
	talloc_report_depth_cb(w->ctx, 0, 1, fz_find_timer, &found);
	if (found.n != 0) {
		fz_fail("%u timers left under aiod's context after the input", found.n);
	}
}

static void fz_check_released(struct fz_world *w)
{
	struct aiod_ctx *ctx = w->ctx;
	struct aiod_engine_stats es;

	if (ctx->nsessions != 0 || ctx->sessions != NULL) {
		fz_fail("%u sessions left after every client died", ctx->nsessions);
	}
	aiod_engine_get_stats(ctx->engine, &es);
	if (es.inflight != 0 || es.queued != 0) {
		fz_fail("engine still has %u queued, %u in flight", es.queued, es.inflight);
	}
	if (ctx->cache->pinned != 0) {
		fz_fail("%u cache blocks still pinned with no client", ctx->cache->pinned);
	}
	if (ctx->cache->free.count + ctx->cache->lru.count != ctx->cache->nblocks) {
		fz_fail("cache blocks lost: %u free + %u cached of %u", ctx->cache->free.count,
			ctx->cache->lru.count, ctx->cache->nblocks);
	}
	if (ctx->blocked != NULL) {
		fz_fail("a request still waits for cache blocks with no client");
	}
	if (ctx->streams != 0 || ctx->reserved_Bps != 0) {
		fz_fail("%u stream reservations (%llu bytes/s) left", ctx->streams,
			(unsigned long long)ctx->reserved_Bps);
	}
}

/* Make aiod forget every file, as UNLINK would: the next input starts from nothing. */
static void fz_forget_files(struct fz_world *w)
{
	struct aiod_ctx *ctx = w->ctx;

	for (uint32_t i = 0; i <= ctx->files_mask; i++) {
		while (ctx->files[i] != NULL) {
			struct aiod_file *f = ctx->files[i];

			if (f->opens != 0) {
				fz_fail("file (%llu, %llu) still has %u opens with no client",
					(unsigned long long)f->dev, (unsigned long long)f->ino, f->opens);
			}
			aiod_file_forget(ctx, f->dev, f->ino);
			if (ctx->files[i] == f) {
				fz_fail("aiod_file_forget kept a file with no opens");
			}
		}
	}
	if (ctx->nfiles != 0 || aiod_cache_used(ctx->cache) != 0) {
		fz_fail("%u files and %u cached blocks left after forgetting every file",
			ctx->nfiles, aiod_cache_used(ctx->cache));
	}
}

static void fz_teardown(struct fz_world *w, unsigned fds_before)
{
	size_t blocks;
	unsigned fds;

	for (unsigned i = 0; i < FZ_SLOTS; i++) {
		fz_client_dies(&w->c[i]);
	}
	fz_settle(w);	/* aiod sees the sockets close, the engine finishes */
	fz_check_released(w);
	fz_forget_files(w);
	fz_check_no_timers(w);
	fds = fz_count_fds();
	if (fds != fds_before) {
		fz_fail("%u descriptors open after the input, %u before", fds, fds_before);
	}
	/*
	 * A session whose process lives on leaves its UNLINK record for that
	 * process's next session (bounded by AIOD_KNOWN_KEEP): one block each.
	 */
	blocks = talloc_total_blocks(w->ctx) - w->ctx->nknown_ended;
	if (blocks != w->talloc_blocks) {
		talloc_report_full(w->ctx, stderr);
		fz_fail("aiod's context holds %zu talloc blocks after the input, %zu before", blocks,
			w->talloc_blocks);
	}
}

void fz_world_run(struct fz_world *w, const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	unsigned fds_before = fz_count_fds();	/* libFuzzer opens some of its own as it goes */

	for (unsigned i = 0; i < FZ_FILES; i++) {
		fz_backing_refresh(&w->files[i]);
	}
	/* Ids and tokens count from the same start every time: inputs replay alike. */
	w->ctx->next_session_id = 0;
	w->ctx->next_token_gen = 0;
	w->change_epoch = 0;
	w->changes_inflight = 0;
	w->lied = w->wrote = w->oracle_off = false;
	fz_configure(w, in_u8(&in));
	for (unsigned n = 0; n < FZ_MAX_OPS && in.left > 0; n++) {
		uint8_t op = in_u8(&in);

		if (w->trace) {
			fprintf(stderr, "op %u: %u flags %#x\n", n, (op & FZ_OP_MASK) % FZ_OP_COUNT,
				op & ~FZ_OP_MASK);
		}
		fz_ops[(op & FZ_OP_MASK) % FZ_OP_COUNT](w, &in, op & ~FZ_OP_MASK);
	}
	fz_teardown(w, fds_before);
}

/* ---- the world ---- */

/* Remove what failed: the path is still named in the message. */
static void fz_remove(const char *path, int (*rm)(const char *))
{
	if (rm(path) != 0 && errno != ENOENT) {
		fprintf(stderr, "fuzz_session: removing %s: %s\n", path, strerror(errno));
	}
}

/* A world's directory: the listener's socket in aiod/ (the files have no names). */
static void fz_remove_dir(const char *dir)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/aiod/aiod.sock", dir);
	fz_remove(path, unlink);
	snprintf(path, sizeof(path), "%s/aiod", dir);
	fz_remove(path, rmdir);
	fz_remove(dir, rmdir);
}

void fz_world_remove_files(struct fz_world *w)
{
	fz_remove_dir(w->dir);
}

/*
 * The directories of harnesses that died without removing theirs (a
 * sanitizer report or libFuzzer's timeout ends the process at once; in fork
 * mode that is every crash): named by pid, removed once that pid is gone.
 */
static void fz_remove_stale_dirs(void)
{
	DIR *d = opendir(FZ_DIR_PARENT);
	struct dirent *e;

	if (d == NULL) {
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char dir[sizeof(FZ_DIR_PARENT) + sizeof(e->d_name)], tail;
		int pid;

		if (sscanf(e->d_name, FZ_DIR_PREFIX "%d%c", &pid, &tail) != 1 || pid <= 0 ||
		    kill(pid, 0) == 0 || errno != ESRCH) {
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/%s", FZ_DIR_PARENT, e->d_name);
		fz_remove_dir(dir);
	}
	closedir(d);
}

static void fz_aiod_start(struct fz_world *w)
{
	struct aiod_ctx *ctx;
	char err[256];

	ctx = talloc_zero(NULL, struct aiod_ctx);
	if (ctx == NULL) {
		fz_fail("harness: out of memory");
	}
	w->ctx = ctx;
	ctx->listen_fd = -1;
	ctx->region.fd = -1;
	if (aiod_config_load(ctx, NULL, &ctx->cfg, err, sizeof(err)) != 0) {
		fz_fail("aiod_config_load: %s", err);
	}
	/* Below the [cache] size minimum on purpose: pin exhaustion in a few requests. */
	ctx->cfg->socket_path = talloc_asprintf(ctx->cfg, "%s/aiod/aiod.sock", w->dir);
	ctx->cfg->cache_size = (uint64_t)FZ_NBLOCKS * FZ_BLOCK;
	ctx->cfg->block_size = FZ_BLOCK;
	ctx->cfg->max_io = (RTIO_MAX_SEGS - 1) * FZ_BLOCK;	/* what config.c clamps it to */
	ctx->cfg->mlock = false;
	ctx->cfg->hugepages = false;
	/* Files named *.mxf are 100 Mbit/s streams; two fit the device, a third does not. */
	ctx->cfg->n_classes = 1;
	ctx->cfg->classes[0].name = "hd";
	ctx->cfg->classes[0].match = "*.mxf";
	ctx->cfg->classes[0].bitrate = 100000000;
	ctx->cfg->classes[0].prebuffer_ms = 1000;
	ctx->cfg->admission_capacity = 30000000;
	ctx->mq_msg_max = 10;	/* what an unprivileged aiod gets (fs.mqueue.msg_max) */
	/* Quiet: errors only; with FUZZ_SESSION_TRACE everything aiod says. */
	aiod_log_open(true, w->trace ? AIOD_LOG_DEBUG : AIOD_LOG_ERR);
	ctx->ev = tevent_context_init(ctx);
	ctx->handlers = &aiod_handlers;
	if (ctx->ev == NULL || aiod_files_init(ctx) != 0) {
		fz_fail("harness: out of memory");
	}
	if (aiod_region_create(ctx, err, sizeof(err)) != 0) {
		fz_fail("aiod_region_create: %s", err);
	}
	ctx->cache = aiod_region_cache(ctx);
	if (ctx->cache == NULL) {
		fz_fail("harness: out of memory");
	}
	ctx->engine = aiod_engine_create(ctx, ctx->ev, ctx->cfg->queue_depth, ctx->region.blocks,
					 ctx->region.block_size, ctx->region.nblocks, err,
					 sizeof(err));
	if (ctx->engine == NULL) {
		fz_fail("aiod_engine_create: %s", err);
	}
	aiod_admission_init(ctx);
	if (aiod_listener_start(ctx, err, sizeof(err)) != 0) {
		fz_fail("aiod_listener_start: %s", err);
	}
}

static void fz_warmed_up(void *private_data, int result)
{
	struct fz_world *w = private_data;

	if (result != 0) {
		fz_fail("harness: fsync through the engine: %s", strerror(-result));
	}
	w->warm = true;
}

struct fz_world *fz_world_create(void)
{
	static const uint32_t sizes[FZ_FILES] = { FZ_BIG_SIZE, FZ_SMALL_SIZE, 0, FZ_MEMFD_SIZE };
	struct fz_world *w = calloc(1, sizeof(*w));

	if (w == NULL) {
		fz_fail("harness: out of memory");
	}
	for (unsigned i = 0; i < FZ_SLOTS; i++) {
		fz_client_reset(&w->c[i]);
	}
	w->trace = getenv("FUZZ_SESSION_TRACE") != NULL;
	fz_remove_stale_dirs();
	snprintf(w->dir, sizeof(w->dir), "%s/" FZ_DIR_PREFIX "%d", FZ_DIR_PARENT, (int)getpid());
	if (mkdir(w->dir, 0700) != 0) {
		fz_fail("harness: mkdir %s: %s", w->dir, strerror(errno));
	}
	fz_failing_world = w;
	for (unsigned i = 0; i < FZ_FILES; i++) {
		fz_backing_create(w, i, sizes[i]);
	}
	w->dead_pid = fork();
	if (w->dead_pid < 0) {
		fz_fail("harness: fork: %s", strerror(errno));
	}
	if (w->dead_pid == 0) {
		_exit(0);
	}
	fz_aiod_start(w);
	w->probe_fd = eventfd(1, EFD_CLOEXEC);
	if (w->probe_fd < 0) {
		fz_fail("harness: eventfd: %s", strerror(errno));
	}
	w->probe_fde = tevent_add_fd(w->ctx->ev, w->ctx->ev, w->probe_fd, TEVENT_FD_READ,
				     fz_probe_ready, w);
	if (w->probe_fde == NULL) {
		fz_fail("harness: out of memory");
	}
	/*
	 * Count aiod's blocks once what is allocated on first use exists: tevent's
	 * "standard" backend sets itself up in its first turn, the engine's EDF
	 * queue allocates its heap with its first operation (and only grows it).
	 */
	if (aiod_engine_fsync(w->ctx->engine, w->files[FZ_FILE_BIG].fd, true, aiod_now_ns(),
			      fz_warmed_up, w) != 0) {
		fz_fail("harness: aiod_engine_fsync failed");
	}
	fz_settle(w);
	if (!w->warm) {
		fz_fail("harness: the engine's first operation never completed");
	}
	w->talloc_blocks = talloc_total_blocks(w->ctx);
	return w;
}

void fz_world_destroy(struct fz_world *w)
{
	for (unsigned i = 0; i < FZ_SLOTS; i++) {
		fz_client_dies(&w->c[i]);
	}
	TALLOC_FREE(w->probe_fde);
	close(w->probe_fd);
	aiod_listener_stop(w->ctx);
	while (w->ctx->sessions != NULL) {
		aiod_session_destroy(w->ctx->sessions, "fuzz harness exits");
	}
	TALLOC_FREE(w->ctx->engine);
	aiod_region_destroy(&w->ctx->region);
	talloc_free(w->ctx);
	fz_world_remove_files(w);
	for (unsigned i = 0; i < FZ_FILES; i++) {
		close(w->files[i].fd);
		free(w->files[i].content);
	}
	if (waitpid(w->dead_pid, NULL, 0) != w->dead_pid) {
		fprintf(stderr, "fuzz_session: reaping %d: %s\n", (int)w->dead_pid, strerror(errno));
	}
	if (fz_failing_world == w) {
		fz_failing_world = NULL;
	}
	free(w);
}
