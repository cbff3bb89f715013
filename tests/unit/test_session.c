/*
 * Unit test: session teardown (aiod/session.c, handlers.c, peer.c). A real aiod context (config
 * defaults, shared region, cache, io_uring engine, listener) runs its event
 * loop in the test's main thread; a client thread connects through the rtio
 * client library, registers a file, pins blocks with two reads it never
 * releases and leaves a third read in flight. Then the session is destroyed
 * as if its smbd had died, and nothing of it may remain: no session, no
 * pinned block, no open file, no descriptor, and the orphaned disk read
 * finishes without touching the dead session.
 *
 * The same set-up checks WROTE (aiod/write.c): after a client wrote a
 * range through its own descriptor and aiod confirmed WROTE, reads through
 * aiod return the new bytes, never the cached old ones; and write
 * aggregation, which only runs while a stream is open.
 *
 * And aiod at its limits: clients that never read their replies (the session
 * ends inside the receive loop: ASan sees any use after free), the process
 * out of descriptors (accept backs off; OPEN answered EMFILE), the per-
 * session cap on opens, O_APPEND refused, UNLINK only for files the session
 * had, the per-session pin quota, and monitor connections beyond
 * max_sessions. Raw clients (struct raw_client) break the rules the client
 * library keeps.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "aiod.h"
#include "log.h"
#include "rtio_client.h"
#include "unit_ctx.h"
#include "rtio_sock.h"
#include "region.h"
#include "listener.h"
#include "files.h"
#include "streams.h"
#include "handlers.h"
#include "session.h"
#include "rtio_version.h"
#include "qos.h"
#include "qos_policy.h"
#include "profile.h"
#include "rtio_shm.h"

#define BS        (1u << 20)
#define FILE_SIZE (8u * BS)

struct fixture {
	struct aiod_ctx *ctx;
	char dir[64];
	char sock[96];
	char path[96];
	int ready[2];		/* client -> loop: pins and the in-flight read are out */
	int finish[2];		/* test -> client: the session is gone, clean up */
	bool client_ready;
	int client_error;
	uint64_t dev, ino;	/* of the file, as aiod reported it */
	struct aiod_file *file;
	uint8_t readbuf[BS];
};

static unsigned count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n;
}

static int highest_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] != '.' && atoi(e->d_name) > n) {
			n = atoi(e->d_name);
		}
	}
	closedir(d);
	return n;
}

static void ignore_done(ssize_t result, void *private_data)
{
	(void)result;
	(void)private_data;
}

/* One client thread's run: what it works on and how it ended. */
struct client_run {
	struct fixture *f;
	const char *name;	/* share-relative name: "clip.mxf" is a stream (class *.mxf) */
	int error;
	uint16_t opcode;	/* what a flooding client floods with */
};

/*
 * A client that speaks the protocol by hand, to break the rules the client
 * library keeps (never more requests out than the reply queue holds).
 */
struct raw_client {
	int sock;
	mqd_t reqq, repq;
	int shm;
};

static void raw_close(struct raw_client *r)
{
	if (r->sock >= 0) {
		close(r->sock);
	}
	if (r->reqq != (mqd_t)-1) {
		mq_close(r->reqq);
	}
	if (r->repq != (mqd_t)-1) {
		mq_close(r->repq);
	}
	if (r->shm >= 0) {
		close(r->shm);
	}
}

/* One control round trip: the reply's result, or -errno when none came. */
static int raw_control(struct raw_client *r, void *req, size_t len, const int *fds,
		       unsigned nfds, union rtio_msg *rep)
{
	ssize_t n;

	if (rtio_sock_send(r->sock, req, len, fds, nfds) != 0) {
		return -EPIPE;
	}
	n = rtio_sock_recv(r->sock, rep, sizeof(*rep), NULL, NULL, 5000);
	if (n <= 0) {
		return n == 0 ? -ECONNRESET : (int)n;
	}
	return rtio_msg_verify(rep, (size_t)n, 1) == 0 ? rep->hdr.result : -EPROTO;
}

/* Connect and say CONNECT; the reply's result. */
static int raw_connect(const struct fixture *f, struct raw_client *r)
{
	struct rtio_connect_req req;
	union rtio_msg rep;
	int fds[3];
	unsigned nfds = 3;
	struct mq_attr attr = { .mq_flags = 0 };
	ssize_t n;

	r->reqq = r->repq = (mqd_t)-1;
	r->shm = -1;
	r->sock = rtio_sock_connect(f->sock, 1000);
	if (r->sock < 0) {
		return r->sock;
	}
	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_CONNECT, sizeof(req), 1);
	req.pid = (uint32_t)getpid();
	snprintf(req.client, sizeof(req.client), "raw");
	if (rtio_sock_send(r->sock, &req, sizeof(req), NULL, 0) != 0) {
		return -EPIPE;
	}
	n = rtio_sock_recv(r->sock, &rep, sizeof(rep), fds, &nfds, 5000);
	if (n <= 0) {
		return n == 0 ? -ECONNRESET : (int)n;
	}
	if (rtio_msg_verify(&rep, (size_t)n, 1) != 0 || rep.hdr.opcode != RTIO_OP_CONNECT) {
		return -EPROTO;
	}
	if (rep.hdr.result != 0 || nfds != 3) {
		for (unsigned i = 0; i < nfds; i++) {
			close(fds[i]);
		}
		return rep.hdr.result != 0 ? rep.hdr.result : -EPROTO;
	}
	r->reqq = fds[0];
	r->repq = fds[1];
	r->shm = fds[2];
	/* Replies are waited for with a timeout: the reply end must block. */
	return mq_setattr(r->repq, &attr, NULL) == 0 ? 0 : -errno;
}

/* Register fd; its file id in *id. */
static int raw_open(struct raw_client *r, int fd, uint64_t *id)
{
	struct rtio_open_req req;
	union rtio_msg rep;
	int ret;

	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_OPEN, sizeof(req), 2);
	snprintf(req.name, sizeof(req.name), "raw.bin");
	ret = raw_control(r, &req, sizeof(req), &fd, 1, &rep);
	*id = rep.open_rep.file_id;
	return ret;
}

static int raw_send(struct raw_client *r, uint16_t opcode, uint64_t req_id, uint64_t file_id,
		    uint64_t off, uint32_t len, int timeout_ms)
{
	struct rtio_io_req io;
	struct timespec ts;

	memset(&io, 0, sizeof(io));
	rtio_hdr_init(&io.hdr, opcode, sizeof(io), req_id);
	io.file_id = file_id;
	io.offset = off;
	io.length = len;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)timeout_ms * 1000000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	return mq_timedsend(r->reqq, (const char *)&io, sizeof(io), 0, &ts) == 0 ? 0 : -errno;
}

static int raw_reply(struct raw_client *r, union rtio_msg *rep)
{
	struct timespec ts;
	ssize_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	n = mq_timedreceive(r->repq, (char *)rep, sizeof(*rep), NULL, &ts);
	return n < 0 ? -errno : 0;
}

/* Connect, open path and register it with aiod under name; 0 or -errno. */
static int client_open(TALLOC_CTX *mem, const struct fixture *f, const char *path, int oflags,
		       const char *name, uint32_t rflags, struct rtio_client **c, int *fd,
		       struct rtio_file *rf)
{
	int ret = rtio_client_connect(mem, f->sock, "unit", 5000, c);

	if (ret != 0) {
		return ret;
	}
	*fd = open(path, oflags | O_CLOEXEC, 0600);
	return *fd < 0 ? -errno : rtio_client_open(*c, *fd, name, rflags, rf);
}

/* The thread is done: record ret, drop the client and fd, wake the test's loop. */
static void client_end(struct client_run *w, int ret, TALLOC_CTX *mem, int fd)
{
	char byte = 'd';

	w->error = ret;
	talloc_free(mem);	/* the client: its descriptors and mapping */
	if (fd >= 0) {
		close(fd);
	}
	if (write(w->f->ready[1], &byte, 1) != 1) {
		w->error = -errno;
	}
}

static void *client_main(void *arg)
{
	struct fixture *f = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf;
	struct rtio_pinned p1, p2;
	struct rtio_client_io *io = NULL;
	int fd = -1, ret;
	char byte = 'r';

	ret = client_open(mem, f, f->path, O_RDWR, "clip.mxf", RTIO_OPEN_WRITABLE, &c, &fd, &rf);
	/* Two leases that are never released: 2 + 3 pinned blocks. */
	if (ret == 0) {
		ret = rtio_client_read_pinned(c, rf.file_id, 2 * BS, 0, &p1) == 2 * BS ? 0 : -EIO;
	}
	if (ret == 0) {
		ret = rtio_client_read_pinned(c, rf.file_id, 3 * BS, 4 * BS, &p2) == 3 * BS ? 0 : -EIO;
	}
	/* A read aiod receives but that has to go to the disk first. */
	if (ret == 0) {
		ret = rtio_client_pread_start(c, rf.file_id, f->readbuf, BS, 7 * BS, ignore_done, NULL,
					      &io);
	}
	if (ret == 0) {
		f->dev = rf.dev;
		f->ino = rf.ino;
	}
	f->client_error = ret;
	if (write(f->ready[1], &byte, 1) != 1) {
		f->client_error = -errno;
	}
	/* Wait until the test tore the session down, as if this process had died. */
	if (read(f->finish[0], &byte, 1) != 1) {
		f->client_error = -errno;
	}
	talloc_free(mem);	/* the client: its descriptors and mapping */
	if (fd >= 0) {
		close(fd);
	}
	return NULL;
}

/* WROTE: the client changes cached bytes itself; aiod must stop serving the old ones. */
static void *wrote_client_main(void *arg)
{
	struct client_run *w = arg;
	struct fixture *f = w->f;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf, ro;
	uint8_t *before = talloc_size(mem, 2 * BS), *after = talloc_size(mem, 2 * BS);
	uint8_t *fresh = talloc_size(mem, BS);
	int fd = -1, rofd = -1, ret;

	ret = before != NULL && after != NULL && fresh != NULL ? 0 : -ENOMEM;
	if (ret == 0) {
		ret = client_open(mem, f, f->path, O_RDWR, w->name, RTIO_OPEN_WRITABLE, &c, &fd,
				  &rf);
	}
	/* Blocks 0 and 1 cached. */
	if (ret == 0) {
		ret = rtio_client_pread(c, rf.file_id, before, 2 * BS, 0) == 2 * BS ? 0 : -EIO;
	}
	/* Now in the cache's index: copied without aiod, across the block boundary. */
	if (ret == 0) {
		ret = rtio_client_read_cached(c, &rf, after, BS, BS / 2) == BS ? 0 : -ENOENT;
	}
	if (ret == 0) {
		ret = memcmp(after, before + BS / 2, BS) == 0 ? 0 : -EILSEQ;
	}
	/* Block 2 was never read: aiod's job. */
	if (ret == 0) {
		ret = rtio_client_read_cached(c, &rf, after, 10, 2 * BS) == 0 ? 0 : -EEXIST;
	}
	/* Half a block, across the boundary, written behind aiod, then reported. */
	if (ret == 0) {
		memset(fresh, 0xa5, BS);
		ret = pwrite(fd, fresh, BS / 2, BS - BS / 4) == BS / 2 ? 0 : -EIO;
	}
	if (ret == 0) {
		ret = rtio_client_wrote(c, rf.file_id, BS / 2, BS - BS / 4);
	}
	/* WROTE dropped both blocks: a copy now would be the old bytes. */
	if (ret == 0) {
		ret = rtio_client_read_cached(c, &rf, after, 10, BS) == 0 ? 0 : -EEXIST;
	}
	if (ret == 0) {
		ret = rtio_client_read_cached(c, &rf, after, 10, 0) == 0 ? 0 : -EEXIST;
	}
	if (ret == 0) {
		ret = rtio_client_pread(c, rf.file_id, after, 2 * BS, 0) == 2 * BS ? 0 : -EIO;
	}
	if (ret == 0) {
		memcpy(before + BS - BS / 4, fresh, BS / 2);	/* what the file holds now */
		ret = memcmp(before, after, 2 * BS) == 0 ? 0 : -EILSEQ;
	}
	/* A read-only registration may not report writes. */
	if (ret == 0) {
		rofd = open(f->path, O_RDONLY | O_CLOEXEC);
		ret = rofd < 0 ? -errno : rtio_client_open(c, rofd, w->name, 0, &ro);
	}
	if (ret == 0) {
		ret = rtio_client_wrote(c, ro.file_id, 1, 0) == -EBADF ? 0 : -EPERM;
	}
	if (rofd >= 0) {
		close(rofd);
	}
	client_end(w, ret, mem, fd);
	return NULL;
}

static void ready_handler(struct tevent_context *ev, struct tevent_fd *fde, uint16_t flags,
			  void *private_data)
{
	struct fixture *f = private_data;
	char byte;

	(void)ev;
	(void)flags;
	if (read(f->ready[0], &byte, 1) == 1) {
		f->client_ready = true;
	}
	TALLOC_FREE(fde);
}

static void tick(struct tevent_context *ev, struct tevent_timer *te, struct timeval now, void *p)
{
	(void)ev;
	(void)te;
	(void)now;
	*(struct tevent_timer **)p = NULL;	/* tevent frees a timer once it fired */
}

/* One turn of aiod's loop, at most 20 ms long. */
static void loop_once(struct aiod_ctx *ctx)
{
	struct tevent_timer *t = NULL;

	t = tevent_add_timer(ctx->ev, ctx, tevent_timeval_current_ofs(0, 20000), tick, &t);
	assert_non_null(t);
	assert_int_equal(tevent_loop_once(ctx->ev), 0);
	TALLOC_FREE(t);
}

/* Run the loop until the engine has nothing queued or in flight. */
static void drain(struct aiod_ctx *ctx)
{
	struct aiod_engine_stats es;

	for (int i = 0; i < 500; i++) {
		aiod_engine_get_stats(ctx->engine, &es);
		if (es.inflight == 0 && es.queued == 0) {
			break;
		}
		loop_once(ctx);
	}
	aiod_engine_get_stats(ctx->engine, &es);
	assert_int_equal(es.inflight, 0);
	assert_int_equal(es.queued, 0);
	loop_once(ctx);	/* completions' follow-up work */
}

static uint32_t pinned_blocks(const struct aiod_cache *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nblocks; i++) {
		n += c->blocks[i].refs > 0;
	}
	return n;
}

static int setup(void **state)
{
	struct fixture *f = talloc_zero(NULL, struct fixture);
	struct aiod_ctx *ctx;
	char err[256];
	uint8_t *data;
	int fd;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/rtio-unit-session.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->sock, sizeof(f->sock), "%s/aiod/aiod.sock", f->dir);
	snprintf(f->path, sizeof(f->path), "%s/clip.mxf", f->dir);

	data = malloc(FILE_SIZE);
	assert_non_null(data);
	for (uint32_t i = 0; i < FILE_SIZE; i++) {
		data[i] = (uint8_t)(i * 7 + i / BS);
	}
	fd = open(f->path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, FILE_SIZE), FILE_SIZE);
	assert_int_equal(close(fd), 0);
	free(data);

	ctx = unit_ctx_new(f, 16ull * BS, BS);
	ctx->cfg->socket_path = talloc_strdup(ctx->cfg, f->sock);
	assert_int_equal(aiod_listener_start(ctx, err, sizeof(err)), 0);
	f->ctx = ctx;
	assert_int_equal(pipe2(f->ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(f->finish, O_CLOEXEC), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	aiod_listener_stop(f->ctx);
	TALLOC_FREE(f->ctx->engine);
	aiod_region_destroy(&f->ctx->region);
	close(f->ready[0]);
	close(f->ready[1]);
	close(f->finish[0]);
	close(f->finish[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "could not remove %s\n", f->dir);
	}
	talloc_free(f);
	return 0;
}

/* Run fn(w) in a client thread while aiod's loop turns, until it is done. */
static void run_client(struct fixture *f, void *(*fn)(void *), struct client_run *w)
{
	struct aiod_ctx *ctx = f->ctx;
	pthread_t t;

	f->client_ready = false;
	assert_non_null(tevent_add_fd(ctx->ev, ctx, f->ready[0], TEVENT_FD_READ, ready_handler, f));
	assert_int_equal(pthread_create(&t, NULL, fn, w), 0);
	for (int i = 0; i < 1000 && !f->client_ready; i++) {
		loop_once(ctx);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(f->client_ready);
	assert_int_equal(w->error, 0);
}

/* Files named *.mxf are 100 Mbit/s streams. */
static void use_stream_class(struct aiod_ctx *ctx)
{
	ctx->cfg->n_classes = 1;
	ctx->cfg->classes[0].name = "hd";
	ctx->cfg->classes[0].match = "*.mxf";
	ctx->cfg->classes[0].bitrate = 100000000;
	ctx->cfg->classes[0].prebuffer_ms = 1000;
}

static void test_session_teardown_releases_everything(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	unsigned fds_before = count_fds();
	pthread_t client;
	char byte = 'f';
	int i;

	assert_non_null(tevent_add_fd(ctx->ev, ctx, f->ready[0], TEVENT_FD_READ, ready_handler, f));
	assert_int_equal(pthread_create(&client, NULL, client_main, f), 0);

	/* Run aiod until the client has its pins and aiod has taken the third read. */
	for (i = 0; i < 500 && !(f->client_ready && ctx->st.requests >= 3); i++) {
		loop_once(ctx);
	}
	assert_true(f->client_ready);
	assert_int_equal(f->client_error, 0);
	assert_int_equal(ctx->nsessions, 1);
	assert_non_null(ctx->sessions);
	assert_true(pinned_blocks(ctx->cache) >= 5);	/* 2 + 3 leased, maybe the loading one */
	assert_true(ctx->cache->pinned >= 5);
	assert_int_equal(ctx->nfiles, 1);
	assert_non_null(f->file = aiod_file_find(ctx, f->dev, f->ino));
	assert_int_equal(f->file->opens, 1);

	/* The smbd "dies": what pidfd or a closed socket would trigger. */
	aiod_session_destroy(ctx->sessions, "unit test");
	assert_int_equal(ctx->nsessions, 0);
	assert_null(ctx->sessions);

	/* The orphaned read finishes in the engine and replies to nobody. */
	drain(ctx);
	assert_int_equal(pinned_blocks(ctx->cache), 0);
	assert_int_equal(ctx->cache->pinned, 0);
	assert_int_equal(ctx->cache->free.count + ctx->cache->lru.count, ctx->cache->nblocks);
	/* The file stays known (its blocks stay cached for the next open), with no opens. */
	assert_int_equal(ctx->nfiles, 1);
	assert_non_null(f->file = aiod_file_find(ctx, f->dev, f->ino));
	assert_int_equal(f->file->opens, 0);

	/* Let the client drop its end, then every descriptor of the session must be gone. */
	assert_int_equal(write(f->finish[1], &byte, 1), 1);
	assert_int_equal(pthread_join(client, NULL), 0);
	assert_int_equal(count_fds(), fds_before);
}

/*
 * An outside writer (here: the client's own descriptor, no WROTE) changes a
 * cached block again and again while the client copies reads from the cache
 * itself: a copy it accepts must hold the bytes written last, however aiod's
 * loop (running meanwhile in the test's thread) is timed against it.
 */
static void *outside_writer_main(void *arg)
{
	struct client_run *w = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf;
	uint8_t *buf = talloc_size(mem, BS), *got = talloc_size(mem, 4096);
	unsigned copied = 0;
	char path[160];
	int fd = -1, ret;

	/* 2 blocks: a file that fits an eighth of the cache is cached whole, even read at random */
	snprintf(path, sizeof(path), "%s/%s", w->f->dir, w->name);
	ret = buf != NULL && got != NULL ? 0 : -ENOMEM;
	if (ret == 0) {
		ret = client_open(mem, w->f, path, O_CREAT | O_RDWR, w->name, RTIO_OPEN_WRITABLE,
				  &c, &fd, &rf);
	}
	if (ret == 0) {
		ret = ftruncate(fd, 2 * BS) == 0 ? 0 : -errno;
	}
	for (int round = 0; ret == 0 && round < 50; round++) {
		uint8_t v = (uint8_t)(round + 1);

		/* cache block 3 with the current bytes (a READ0 drains aiod's events) */
		ret = rtio_client_pread(c, rf.file_id, buf, BS, 1 * BS) == BS ? 0 : -EIO;
		if (ret == 0) {
			memset(got, v, 4096);
			ret = pwrite(fd, got, 4096, 1 * BS + 8192) == 4096 ? 0 : -EIO;
		}
		if (ret == 0 && rtio_client_read_cached(c, &rf, got, 4096, 1 * BS + 8192) == 4096) {
			copied++;
			for (int i = 0; i < 4096 && ret == 0; i++) {
				ret = got[i] == v ? 0 : -EILSEQ;	/* the old bytes: stale */
			}
		}
	}
	print_message("outside writer: %u of 50 reads copied from the cache\n", copied);
	client_end(w, ret, mem, fd);
	return NULL;
}

static void test_outside_write_never_read_stale(void **state)
{
	struct fixture *f = *state;
	struct client_run w = { .f = f, .name = "outside.bin" };

	run_client(f, outside_writer_main, &w);
}

static void test_wrote_drops_stale_blocks(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	uint64_t written0 = ctx->st.bytes_written;
	uint64_t hits0 = ctx->st.hit_reads, hit_bytes0 = ctx->st.hit_bytes;
	struct client_run w = { .f = f, .name = "clip.mxf" };

	run_client(f, wrote_client_main, &w);
	/* The copy the client made itself reached aiod as HIT. */
	assert_int_equal(ctx->st.hit_reads - hits0, 1);
	assert_int_equal(ctx->st.hit_bytes - hit_bytes0, BS);
	assert_int_equal(ctx->st.bytes_written - written0, BS / 2);	/* reported, counted */
	assert_int_equal(ctx->st.disk_writes, 0);			/* aiod wrote nothing itself */
}

/*
 * Write aggregation: a sequential writer's data is pushed to the disk in
 * io_size pieces while a stream is open, and left to the kernel otherwise.
 */
static void *writer_main(void *arg)
{
	struct client_run *w = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf;
	uint8_t *buf = talloc_zero_size(mem, BS);
	char path[160];
	int fd = -1, ret;

	snprintf(path, sizeof(path), "%s/%s", w->f->dir, w->name);
	ret = buf == NULL ? -ENOMEM :
	      client_open(mem, w->f, path, O_CREAT | O_RDWR, w->name, RTIO_OPEN_WRITABLE, &c, &fd,
			  &rf);
	for (uint32_t i = 0; ret == 0 && i < 8; i++) {
		ret = rtio_client_pwrite(c, rf.file_id, buf, BS, (off_t)i * BS) == BS ? 0 : -EIO;
	}
	client_end(w, ret, mem, fd);
	return NULL;
}

static uint64_t run_writer(struct fixture *f, const char *name)
{
	uint64_t wb0 = f->ctx->st.writebacks;
	struct client_run w = { .f = f, .name = name };

	run_client(f, writer_main, &w);
	drain(f->ctx);	/* write-backs done, the closed open (and its reservation) gone */
	return f->ctx->st.writebacks - wb0;
}

static void test_write_aggregation_only_with_streams(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;

	use_stream_class(ctx);
	ctx->cfg->readahead_io_size = 4 * BS;

	/* 8 MiB written sequentially to a stream file: two 4 MiB write-backs. */
	assert_int_equal(run_writer(f, "clip.mxf"), 2);
	/* Through io_uring, waiting on aiod's own description of the file: done, no error. */
	assert_int_equal(ctx->st.writeback_bytes, 8 * BS);
	assert_int_equal(ctx->st.writeback_errors, 0);
	/* The same to a bulk file with no stream open: the kernel's business. */
	assert_int_equal(ctx->streams, 0);
	assert_int_equal(run_writer(f, "bulk.bin"), 0);
}

/* A stream's start-up reads cannot have been read ahead: they are not deadline misses. */
static void *stream_reader_main(void *arg)
{
	struct client_run *w = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf;
	uint8_t *buf = talloc_size(mem, BS);
	int fd = -1, ret;

	ret = buf == NULL ? -ENOMEM :
	      client_open(mem, w->f, w->f->path, O_RDONLY, w->name, 0, &c, &fd, &rf);
	if (ret == 0 && rf.bitrate == 0) {
		ret = -ENOTSUP;	/* not admitted as a stream: the test would prove nothing */
	}
	for (uint32_t i = 0; ret == 0 && i < 2; i++) {
		ret = rtio_client_pread(c, rf.file_id, buf, BS, (off_t)i * BS) == BS ? 0 : -EIO;
	}
	client_end(w, ret, mem, fd);
	return NULL;
}

static void test_first_stream_reads_are_not_misses(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct client_run w = { .f = f, .name = "clip.mxf" };

	use_stream_class(ctx);
	run_client(f, stream_reader_main, &w);
	assert_true(ctx->st.cache_misses >= 2);		/* both reads went to the disk */
	assert_int_equal(ctx->st.deadline_misses, 0);	/* but nothing was read ahead yet */
}

/*
 * Whether a 4 KiB read at off is the client's, its reader's previous read
 * having ended at prev_end (and continued the one before it).
 */
static bool yourself_after(const struct rtio_client *c, const struct rtio_file *rf,
			   uint64_t prev_end, uint64_t off)
{
	struct rtio_read_pos pos = { .end = prev_end };

	return rtio_client_read_yourself(c, rf, FILE_SIZE,
					 rtio_client_read_continues(c, &pos, (off_t)off, 4096),
					 (off_t)off, 4096);
}

/*
 * rtio:random = local: a random read of a large non-stream file is the
 * client's own only while aiod says nothing on the device is owed a rate.
 */
static void *random_reader_main(void *arg)
{
	struct client_run *w = arg;
	struct fixture *f = w->f;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf, stream, as_stream;
	int fd = -1, sfd = -1, ret;

	ret = client_open(mem, f, f->path, O_RDONLY, "big.bin", 0, &c, &fd, &rf);
	if (ret == 0 && (rf.bitrate != 0 || rf.stream_class != 0)) {
		ret = -EINVAL;	/* must not match the class: the test would prove nothing */
	}
	/* No stream open: a random read far from the last one is the client's. */
	if (ret == 0 && !yourself_after(c, &rf, 0, 5 * BS + 4096)) {
		ret = -EPROTO;
	}
	/* Reads that continue (or nearly continue) a sequential reader stay aiod's: read-ahead. */
	if (ret == 0 && (yourself_after(c, &rf, 5 * BS, 5 * BS) ||
			 yourself_after(c, &rf, 5 * BS, 6 * BS) ||
			 yourself_after(c, &rf, 5 * BS, 4 * BS))) {
		ret = -EPROTO;
	}
	/*
	 * A random reader's read that lands near its last one is still the
	 * client's; the second near read in a row is a sequential reader's.
	 */
	if (ret == 0) {
		struct rtio_read_pos pos = { .end = 0 };

		(void)rtio_client_read_continues(c, &pos, 0, 4096);		/* continues: at 0 */
		if (rtio_client_read_continues(c, &pos, 40 * BS, 4096) ||	/* a jump */
		    rtio_client_read_continues(c, &pos, 40 * BS + 8192, 4096) ||	/* near, after a jump */
		    !rtio_client_read_continues(c, &pos, 40 * BS + 12288, 4096) ||	/* near again */
		    !rtio_client_read_continues(c, &pos, 40 * BS + 8192, 4096)) {	/* out of order */
			ret = -EPROTO;
		}
		if (ret == 0 &&
		    (!rtio_client_read_yourself(c, &rf, FILE_SIZE, false, 40 * BS + 8192, 4096) ||
		     rtio_client_read_yourself(c, &rf, FILE_SIZE, true, 40 * BS + 12288, 4096))) {
			ret = -EPROTO;
		}
	}
	/* A file aiod caches whole for a random reader (an eighth of the cache): aiod's. */
	if (ret == 0 && rtio_client_read_yourself(c, &rf, 2 * BS, false, BS + 4096, 4096)) {
		ret = -EPROTO;
	}
	/* A stream's own reads are aiod's. */
	as_stream = rf;
	as_stream.stream_class = 1;
	if (ret == 0 && rtio_client_read_yourself(c, &as_stream, FILE_SIZE, false, 5 * BS, 4096)) {
		ret = -EPROTO;
	}
	/* While a stream is admitted, every read is ordered by aiod's deadlines. */
	if (ret == 0) {
		sfd = open(f->path, O_RDONLY | O_CLOEXEC);
		ret = sfd < 0 ? -errno : rtio_client_open(c, sfd, "clip.mxf", 0, &stream);
	}
	if (ret == 0 && stream.bitrate == 0) {
		ret = -ENOTSUP;	/* not admitted: the test would prove nothing */
	}
	if (ret == 0 && rtio_client_read_yourself(c, &rf, FILE_SIZE, false, 5 * BS + 4096, 4096)) {
		ret = -EPROTO;
	}
	/* ...and once it is closed, the client's again. */
	if (ret == 0) {
		ret = rtio_client_close(c, stream.file_id);
	}
	if (ret == 0 && !rtio_client_read_yourself(c, &rf, FILE_SIZE, false, 5 * BS + 4096, 4096)) {
		ret = -EPROTO;
	}
	if (sfd >= 0) {
		close(sfd);
	}
	client_end(w, ret, mem, fd);
	return NULL;
}

/*
 * On a device that answers a random read in ~100 us, an admitted stream
 * does not make a random reader's misses aiod's: the client reads them.
 */
static void *fast_device_main(void *arg)
{
	struct client_run *w = arg;
	struct fixture *f = w->f;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf, stream;
	int fd = -1, sfd = -1, ret;

	ret = client_open(mem, f, f->path, O_RDONLY, "big.bin", 0, &c, &fd, &rf);
	if (ret == 0) {
		sfd = open(f->path, O_RDONLY | O_CLOEXEC);
		ret = sfd < 0 ? -errno : rtio_client_open(c, sfd, "clip.mxf", 0, &stream);
	}
	if (ret == 0 && stream.bitrate == 0) {
		ret = -ENOTSUP;	/* not admitted: the test would prove nothing */
	}
	if (ret == 0 && (rtio_client_nothing_owed(c) || !rtio_client_random_direct(c) ||
			 !rtio_client_read_yourself(c, &rf, FILE_SIZE, false, 5 * BS + 4096, 4096))) {
		ret = -EPROTO;
	}
	/* The stream's own reads stay aiod's. */
	if (ret == 0 && rtio_client_read_yourself(c, &stream, FILE_SIZE, false, 5 * BS, 4096)) {
		ret = -EPROTO;
	}
	if (ret == 0) {
		ret = rtio_client_close(c, stream.file_id);
	}
	if (sfd >= 0) {
		close(sfd);
	}
	client_end(w, ret, mem, fd);
	return NULL;
}

/*
 * aiod's heartbeat in the region tells a busy aiod from a hung one: fresh
 * while aiod runs, unknown (-1) from an aiod that never beat, old from one
 * that stopped.
 */
static int64_t heartbeat_lo, heartbeat_hi;	/* what heartbeat_main expects */

static void *heartbeat_main(void *arg)
{
	struct client_run *w = arg;
	struct fixture *f = w->f;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf;
	int fd = -1, ret;
	int64_t ms;

	ret = client_open(mem, f, f->path, O_RDONLY, "big.bin", 0, &c, &fd, &rf);
	ms = ret == 0 ? rtio_client_aiod_silent_ms(c) : -2;
	if (ret == 0 && (ms < heartbeat_lo || ms > heartbeat_hi)) {
		ret = -EPROTO;
	}
	client_end(w, ret, mem, fd);
	return NULL;
}

static void test_heartbeat_in_region(void **state)
{
	struct fixture *f = *state;
	struct client_run w = { .f = f, .name = "big.bin" };
	struct rtio_shm_header *h = (struct rtio_shm_header *)f->ctx->region.base;

	aiod_region_start_heartbeat(f->ctx);
	heartbeat_lo = 0;
	heartbeat_hi = 1000;	/* it beat a moment ago */
	run_client(f, heartbeat_main, &w);
	aiod_region_stop_heartbeat(&f->ctx->region);
	__atomic_store_n(&h->heartbeat_ns, 0, __ATOMIC_RELEASE);
	heartbeat_lo = heartbeat_hi = -1;	/* an aiod without one */
	run_client(f, heartbeat_main, &w);
	__atomic_store_n(&h->heartbeat_ns, aiod_now_ns() - 5000000000ull, __ATOMIC_RELEASE);
	heartbeat_lo = 4900;	/* stopped 5 s ago */
	heartbeat_hi = 7000;
	run_client(f, heartbeat_main, &w);
}

static void test_random_reads_left_to_the_client(void **state)
{
	struct fixture *f = *state;
	struct client_run w = { .f = f, .name = "big.bin" };

	const struct rtio_shm_header *h = (const struct rtio_shm_header *)f->ctx->region.base;
	struct aiod_qos_policy *policy;
	char err[256];

	use_stream_class(f->ctx);
	run_client(f, random_reader_main, &w);
	assert_int_equal(f->ctx->streams, 0);
	assert_int_equal(h->random_local, 1);
	/* A QoS reservation is owed device time as a stream is: aiod orders every read. */
	policy = aiod_qos_policy_new(f->ctx->cfg);
	assert_non_null(policy);
	assert_int_equal(aiod_qos_policy_add(policy, "qos.bay", "match_share", "media", 1, err,
					     sizeof(err)), 0);
	assert_int_equal(aiod_qos_policy_add(policy, "qos.bay", "reserve", "10M", 2, err,
					     sizeof(err)), 0);
	assert_int_equal(aiod_qos_policy_finish(policy, 100ull << 20, 0, err, sizeof(err)), 0);
	f->ctx->cfg->qos = policy;
	aiod_admission_publish(f->ctx);
	assert_int_equal(h->random_local, 0);
	f->ctx->cfg->qos = NULL;
	aiod_admission_publish(f->ctx);
	assert_int_equal(h->random_local, 1);
}

/*
 * [admission] local_random_us: random misses stay the client's while rates
 * are owed only on a calibrated device faster than the bound, and only while
 * what is owed leaves it half its media rate.
 */
static void test_random_reads_direct_on_a_fast_device(void **state)
{
	struct fixture *f = *state;
	struct client_run w = { .f = f, .name = "big.bin" };
	const struct rtio_shm_header *h = (const struct rtio_shm_header *)f->ctx->region.base;
	struct aiod_profile *p = talloc_zero(f->ctx, struct aiod_profile);

	assert_non_null(p);
	p->request_us = 100;
	p->npoints = 1;
	p->points[0] = (struct aiod_profile_point){ .size = 1u << 20, .random_Bps = 400000000,
						    .sequential_Bps = 500000000 };
	use_stream_class(f->ctx);
	f->ctx->profile = p;
	run_client(f, fast_device_main, &w);

	/* What aiod publishes, rule by rule, with one stream owed 12.5 MB/s. */
	f->ctx->streams = 1;
	f->ctx->reserved_Bps = 12500000;
	aiod_admission_publish(f->ctx);
	assert_int_equal(h->random_local, 0);
	assert_int_equal(h->random_direct, 1);
	f->ctx->reserved_Bps = 260000000;	/* more than half of 500 MB/s owed */
	aiod_admission_publish(f->ctx);
	assert_int_equal(h->random_direct, 0);
	f->ctx->reserved_Bps = 12500000;
	p->request_us = 14500;			/* a spindle's seek */
	aiod_admission_publish(f->ctx);
	assert_int_equal(h->random_direct, 0);
	p->request_us = 100;
	f->ctx->cfg->local_random_us = 0;	/* the admin wants every such read ordered */
	aiod_admission_publish(f->ctx);
	assert_int_equal(h->random_direct, 0);
	f->ctx->cfg->local_random_us = 1000;
	f->ctx->profile = NULL;			/* an unknown device */
	aiod_admission_publish(f->ctx);
	assert_int_equal(h->random_direct, 0);
	f->ctx->streams = 0;			/* nothing owed: both say yes */
	f->ctx->reserved_Bps = 0;
	aiod_admission_publish(f->ctx);
	assert_int_equal(h->random_local, 1);
	assert_int_equal(h->random_direct, 1);
	talloc_free(p);
}

/*
 * A client that sends requests and never collects the answers: more than its
 * reply queue holds. aiod must end the session (the client broke the rules)
 * from inside its receive loop, and nothing may touch the session after.
 */
static void *flood_client_main(void *arg)
{
	struct client_run *w = arg;
	struct raw_client r;
	union rtio_msg rep;
	uint64_t id = 0;
	int fd = -1, ret;

	ret = raw_connect(w->f, &r);
	if (ret == 0) {
		fd = open(w->f->path, O_RDWR | O_CLOEXEC);
		ret = fd < 0 ? -errno : raw_open(&r, fd, &id);
	}
	/* Reads: make the block cached first, so every flooding READ0 is answered at once. */
	if (ret == 0 && w->opcode == RTIO_OP_READ0) {
		ret = raw_send(&r, RTIO_OP_READ0, 1, id, 0, 4096, 1000);
		if (ret == 0) {
			ret = raw_reply(&r, &rep);
		}
		if (ret == 0) {
			ret = rep.hdr.result == 4096 ? 0 : -EIO;
		}
		if (ret == 0) {
			struct rtio_release_req rel;

			memset(&rel, 0, sizeof(rel));
			rtio_hdr_init(&rel.hdr, RTIO_OP_READ1, sizeof(rel), 0);
			rel.token = rep.io_rep.token;
			ret = mq_send(r.reqq, (const char *)&rel, sizeof(rel), 0) == 0 ? 0 : -errno;
		}
	}
	/* Until aiod stops taking requests: it closed the session, the queue filled up. */
	for (uint64_t i = 2; ret == 0 && i < 200; i++) {
		ret = raw_send(&r, w->opcode, i, id, 0, 4096, 200);
		if (ret == -ETIMEDOUT) {
			ret = 0;
			break;
		}
	}
	/* The session is over: aiod closed the socket. */
	if (ret == 0) {
		ssize_t n = rtio_sock_recv(r.sock, &rep, sizeof(rep), NULL, NULL, 5000);
		ret = n == 0 ? 0 : (n < 0 ? (int)n : -EPROTO);
	}
	raw_close(&r);
	client_end(w, ret, NULL, fd);
	return NULL;
}

static void flood(struct fixture *f, uint16_t opcode)
{
	struct aiod_ctx *ctx = f->ctx;
	struct client_run w = { .f = f, .name = "raw.bin", .opcode = opcode };

	/* Its pins must not stop it first: answered inline, the replies overflow the queue. */
	ctx->cfg->session_pin_pct = 100;
	run_client(f, flood_client_main, &w);
	drain(ctx);
	assert_int_equal(ctx->nsessions, 0);
	assert_null(ctx->sessions);
	assert_int_equal(pinned_blocks(ctx->cache), 0);
	assert_int_equal(ctx->cache->pinned, 0);
}

static void test_session_flood_wrote_unread_replies(void **state)
{
	flood(*state, RTIO_OP_WROTE);
}

static void test_session_flood_read0_unread_replies(void **state)
{
	flood(*state, RTIO_OP_READ0);
}

/*
 * aiod out of descriptors with a client waiting to be accepted: accept()
 * fails with EMFILE for as long as that lasts. The loop must not spin on the
 * listening socket meanwhile, and the client gets in once descriptors are
 * back.
 */
static void test_listener_backs_off_when_out_of_descriptors(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct rlimit saved, low;
	int fill[512], nfill = 0, client, fd, fill_err;
	unsigned turns = 0;
	uint64_t t0;

	client = rtio_sock_connect(f->sock, 1000);	/* waits in the backlog */
	assert_true(client >= 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	low = saved;
	if (low.rlim_cur > (rlim_t)highest_fd() + 128) {
		low.rlim_cur = (rlim_t)highest_fd() + 128;
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nfill < (int)(sizeof(fill) / sizeof(fill[0])) && (fd = dup(client)) >= 0) {
		fill[nfill++] = fd;
	}
	fill_err = errno;
	t0 = aiod_now_ns();
	while (aiod_now_ns() - t0 < 300000000ull) {
		loop_once(ctx);
		turns++;
	}
	while (nfill > 0) {
		close(fill[--nfill]);
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	assert_int_equal(fill_err, EMFILE);
	/* 20 ms ticks and a back-off timer: a few dozen turns, not a busy loop. */
	assert_true(turns < 100);
	assert_int_equal(ctx->nsessions, 0);
	for (int i = 0; i < 50 && ctx->nsessions == 0; i++) {
		loop_once(ctx);
	}
	assert_int_equal(ctx->nsessions, 1);
	close(client);
	for (int i = 0; i < 50 && ctx->nsessions > 0; i++) {
		loop_once(ctx);
	}
	assert_int_equal(ctx->nsessions, 0);
}

/*
 * OPEN beyond [global] max_opens_per_session, and OPEN while aiod cannot
 * take the descriptor (it is out of descriptors): EMFILE, the session lives
 * on (the module does that file's I/O itself). OPEN of an O_APPEND
 * descriptor: EINVAL (aiod's writes at an offset would land at the end).
 */
struct open_limits_run {
	struct client_run w;
	int cap_result;		/* the OPEN beyond the cap */
	int append_result;
	int lost_result;	/* the OPEN whose descriptor aiod could not take */
	int after_result;	/* an OPEN once aiod has descriptors again */
};

static void *open_limits_main(void *arg)
{
	struct open_limits_run *o = arg;
	struct fixture *f = o->w.f;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf[4];
	int fd = -1, afd = -1, ret;
	char byte = 'r';

	ret = client_open(mem, f, f->path, O_RDONLY, o->w.name, 0, &c, &fd, &rf[0]);
	for (int i = 1; ret == 0 && i < 3; i++) {
		ret = rtio_client_open(c, fd, o->w.name, 0, &rf[i]);
	}
	if (ret == 0) {
		o->cap_result = rtio_client_open(c, fd, o->w.name, 0, &rf[3]);
		ret = rtio_client_close(c, rf[2].file_id);
	}
	if (ret == 0) {
		afd = open(f->path, O_WRONLY | O_APPEND | O_CLOEXEC);
		ret = afd < 0 ? -errno : 0;
	}
	if (ret == 0) {
		o->append_result = rtio_client_open(c, afd, o->w.name, RTIO_OPEN_WRITABLE, &rf[2]);
	}
	/* Let the test take every descriptor aiod could use, then try one more OPEN. */
	if (ret == 0 && write(f->ready[1], &byte, 1) != 1) {
		ret = -errno;
	}
	if (ret == 0 && read(f->finish[0], &byte, 1) != 1) {
		ret = -errno;
	}
	if (ret == 0) {
		o->lost_result = rtio_client_open(c, fd, o->w.name, 0, &rf[2]);
		if (write(f->ready[1], &byte, 1) != 1 || read(f->finish[0], &byte, 1) != 1) {
			ret = -errno;
		}
	}
	if (ret == 0) {
		o->after_result = rtio_client_open(c, fd, o->w.name, 0, &rf[2]);
	}
	if (afd >= 0) {
		close(afd);
	}
	client_end(&o->w, ret, mem, fd);
	return NULL;
}

/* Run aiod's loop until the client thread wrote to the ready pipe. */
static void wait_client(struct fixture *f)
{
	f->client_ready = false;
	assert_non_null(tevent_add_fd(f->ctx->ev, f->ctx, f->ready[0], TEVENT_FD_READ,
				      ready_handler, f));
	for (int i = 0; i < 1000 && !f->client_ready; i++) {
		loop_once(f->ctx);
	}
	assert_true(f->client_ready);
}

static void test_control_open_limits(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct open_limits_run o = { .w = { .f = f, .name = "bulk.bin" } };
	struct rlimit saved, low;
	int fill[512], nfill = 0, fd;
	char byte = 'g';
	pthread_t t;

	ctx->cfg->max_opens_per_session = 3;
	assert_int_equal(pthread_create(&t, NULL, open_limits_main, &o), 0);
	wait_client(f);
	/* Every descriptor taken: the next OPEN's descriptor cannot reach aiod. */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	low = saved;
	if (low.rlim_cur > (rlim_t)highest_fd() + 128) {
		low.rlim_cur = (rlim_t)highest_fd() + 128;
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nfill < (int)(sizeof(fill) / sizeof(fill[0])) && (fd = dup(0)) >= 0) {
		fill[nfill++] = fd;
	}
	assert_int_equal(write(f->finish[1], &byte, 1), 1);
	wait_client(f);
	while (nfill > 0) {
		close(fill[--nfill]);
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	assert_int_equal(write(f->finish[1], &byte, 1), 1);
	wait_client(f);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(o.w.error, 0);
	assert_int_equal(o.cap_result, -EMFILE);
	assert_int_equal(o.append_result, -EINVAL);
	assert_int_equal(o.lost_result, -EMFILE);
	assert_int_equal(o.after_result, 0);
}

/*
 * UNLINK drops every cached block of a (dev, ino): only for a session that
 * has the file open or had it earlier (its process's earlier sessions
 * included), not for anyone's cache.
 */
struct unlink_run {
	struct client_run w;
	uint64_t dev, ino;	/* a file another session has open (and cached) */
	int other_result;	/* UNLINK of that file */
	int own_closed_result;	/* UNLINK of a file this session opened and closed */
	int never_result;	/* UNLINK of a file no session of this process opened */
};

static int stat_id(const char *path, uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		return -errno;
	}
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

static void *unlink_other_main(void *arg)
{
	struct unlink_run *u = arg;
	struct fixture *f = u->w.f;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf;
	char path[160];
	uint64_t dev = 0, ino = 0;
	int fd = -1, ret;

	snprintf(path, sizeof(path), "%s/own.bin", f->dir);
	ret = client_open(mem, f, path, O_CREAT | O_RDWR, "own.bin", RTIO_OPEN_WRITABLE, &c, &fd,
			  &rf);
	if (ret == 0) {
		u->other_result = rtio_client_unlink(c, u->dev, u->ino);
		ret = rtio_client_close(c, rf.file_id);
	}
	if (ret == 0) {
		u->own_closed_result = rtio_client_unlink(c, rf.dev, rf.ino);
		snprintf(path, sizeof(path), "%s/never.bin", f->dir);
		close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
		ret = stat_id(path, &dev, &ino);
	}
	if (ret == 0) {
		u->never_result = rtio_client_unlink(c, dev, ino);
	}
	client_end(&u->w, ret, mem, fd);
	return NULL;
}

/* Connect, UNLINK (dev, ino) of the fixture's file, leave. */
static void *unlink_file_main(void *arg)
{
	struct unlink_run *u = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	int ret = rtio_client_connect(mem, u->w.f->sock, "unit", 5000, &c);

	if (ret == 0) {
		u->other_result = rtio_client_unlink(c, u->dev, u->ino);
	}
	client_end(&u->w, ret, mem, -1);
	return NULL;
}

/* Run the loop until no session is left (the clients' DISCONNECTs are handled). */
static void until_no_sessions(struct aiod_ctx *ctx)
{
	for (int i = 0; i < 100 && ctx->nsessions > 0; i++) {
		loop_once(ctx);
	}
	assert_int_equal(ctx->nsessions, 0);
}

static void test_control_unlink_only_known_files(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct unlink_run u = { .w = { .f = f, .name = "clip.mxf" } };
	char byte = 'f';
	pthread_t holder;

	/* client_main holds the fixture's file open with blocks pinned and cached. */
	assert_int_equal(pthread_create(&holder, NULL, client_main, f), 0);
	wait_client(f);
	assert_int_equal(f->client_error, 0);
	u.dev = f->dev;
	u.ino = f->ino;
	run_client(f, unlink_other_main, &u.w);	/* w is u's first member */
	assert_int_equal(u.other_result, -EPERM);
	assert_int_equal(u.own_closed_result, 0);
	assert_int_equal(u.never_result, -EPERM);
	assert_non_null(aiod_cache_find(ctx->cache, f->dev, f->ino, 0));
	assert_int_equal(write(f->finish[1], &byte, 1), 1);
	assert_int_equal(pthread_join(holder, NULL), 0);
	until_no_sessions(ctx);

	/* The holder's process comes back in a new session: it may drop the file's blocks. */
	u.other_result = 1;
	run_client(f, unlink_file_main, &u.w);
	assert_int_equal(u.other_result, 0);
	assert_null(aiod_cache_find(ctx->cache, f->dev, f->ino, 0));
}

/*
 * One session pins blocks and never releases them (a stuck or greedy smbd):
 * it may take its share of the cache, [cache] session_pin_pct, and then only
 * its own requests wait (and fail with ENOBUFS after pin_wait_ms); another
 * session's reads go on at once.
 */
#define GREEDY_PINS 8

struct greedy_run {
	struct client_run w;
	ssize_t got[GREEDY_PINS];
};

static void *greedy_main(void *arg)
{
	struct greedy_run *g = arg;
	struct fixture *f = g->w.f;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf;
	struct rtio_pinned p[GREEDY_PINS];
	char path[160];
	int fd = -1, ret;
	char byte = 'r';

	/* 16 blocks: as many as the whole cache. */
	snprintf(path, sizeof(path), "%s/greedy.bin", f->dir);
	fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	ret = fd < 0 || ftruncate(fd, 16 * BS) != 0 ? -errno : 0;
	if (fd >= 0) {
		close(fd);
	}
	if (ret == 0) {
		ret = client_open(mem, f, path, O_RDONLY, "greedy.bin", 0, &c, &fd, &rf);
	}
	for (int i = 0; ret == 0 && i < GREEDY_PINS; i++) {
		g->got[i] = rtio_client_read_pinned(c, rf.file_id, 2 * BS, (off_t)i * 2 * BS, &p[i]);
	}
	g->w.error = ret;
	/* Hold the pins until the test is done with the other session. */
	if (write(f->ready[1], &byte, 1) != 1 || read(f->finish[0], &byte, 1) != 1) {
		g->w.error = -errno;
	}
	talloc_free(mem);
	if (fd >= 0) {
		close(fd);
	}
	return NULL;
}

/* Read the fixture's file from the start: 8 blocks, 2 at a time. */
static void *modest_reader_main(void *arg)
{
	struct client_run *w = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	struct rtio_file rf;
	uint8_t *buf = talloc_size(mem, 2 * BS);
	uint64_t t0 = aiod_now_ns();
	int fd = -1, ret;

	ret = buf == NULL ? -ENOMEM :
	      client_open(mem, w->f, w->f->path, O_RDONLY, w->name, 0, &c, &fd, &rf);
	for (uint32_t i = 0; ret == 0 && i < 4; i++) {
		ssize_t n = rtio_client_pread(c, rf.file_id, buf, 2 * BS, (off_t)i * 2 * BS);
		ret = n == 2 * BS ? 0 : (n < 0 ? (int)n : -EIO);
	}
	/* Not after a pin_wait_ms wait: it never waited for the greedy session's blocks. */
	if (ret == 0 && aiod_now_ns() - t0 > 150000000ull) {
		ret = -ETIME;
	}
	client_end(w, ret, mem, fd);
	return NULL;
}

static void test_dataplane_session_pin_quota(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct greedy_run g = { .w = { .f = f, .name = "greedy.bin" } };
	struct client_run reader = { .f = f, .name = "bulk.bin" };
	char byte = 'f';
	pthread_t t;

	ctx->cfg->max_io = 2 * BS;
	ctx->cfg->pin_wait_ms = 200;
	ctx->cfg->session_pin_pct = 25;		/* 4 of the 16 blocks */
	assert_int_equal(pthread_create(&t, NULL, greedy_main, &g), 0);
	wait_client(f);
	assert_int_equal(g.w.error, 0);
	/* Two reads of 2 blocks fit its quota; the others waited and were refused. */
	assert_int_equal(g.got[0], 2 * BS);
	assert_int_equal(g.got[1], 2 * BS);
	for (int i = 2; i < GREEDY_PINS; i++) {
		assert_int_equal(g.got[i], -ENOBUFS);
	}
	assert_int_equal(ctx->cache->pinned, 4);
	run_client(f, modest_reader_main, &reader);
	assert_int_equal(write(f->finish[1], &byte, 1), 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	drain(ctx);
}

/*
 * Sessions exhausted ([global] max_sessions = 1, taken): monitoring still
 * works, on a connection that never says CONNECT, up to a few beyond the
 * limit; a full CONNECT beyond the limit is told why (EUSERS) instead of
 * seeing the connection drop.
 */
struct monitor_run {
	struct client_run w;
	int stats_result;
	uint64_t sessions;	/* as STATS counted them */
	int file_stats_result;
	int connect_result;	/* a full session beyond max_sessions */
	int connect_monitor_result;	/* CONNECT sent on a monitor connection */
};

static void *monitor_main(void *arg)
{
	struct monitor_run *m = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *full = NULL, *mon = NULL, *extra = NULL;
	struct rtio_stats_rep st;
	struct rtio_file_stats_rep fst;
	struct raw_client r;
	int ret = rtio_client_connect(mem, m->w.f->sock, "unit", 5000, &full);

	if (ret == 0) {
		ret = rtio_client_monitor_connect(mem, m->w.f->sock, 5000, &mon);
	}
	if (ret == 0) {
		m->stats_result = rtio_client_stats(mon, &st);
		m->sessions = st.sessions;
		m->file_stats_result = rtio_client_file_stats(mon, 0, &fst);
		m->connect_result = rtio_client_connect(mem, m->w.f->sock, "unit", 5000, &extra);
		m->connect_monitor_result = raw_connect(m->w.f, &r);
		raw_close(&r);
	}
	client_end(&m->w, ret, mem, -1);
	return NULL;
}

static void test_listener_monitor_beyond_max_sessions(void **state)
{
	struct fixture *f = *state;
	struct monitor_run m = { .w = { .f = f } };

	f->ctx->cfg->max_sessions = 1;
	run_client(f, monitor_main, &m.w);
	assert_int_equal(m.stats_result, 0);
	assert_int_equal(m.sessions, 1);	/* the full one; monitors are not sessions */
	assert_int_equal(m.file_stats_result, -ENOENT);	/* no file yet: an answer all the same */
	assert_int_equal(m.connect_result, -EUSERS);
	assert_int_equal(m.connect_monitor_result, -EUSERS);
	until_no_sessions(f->ctx);
	assert_int_equal(f->ctx->nmonitors, 0);
}

/*
 * SESSION_STATS and INFO, as aiodctl sessions and stats --json ask them: a
 * client that read 2 blocks of a stream file is listed with its bytes and
 * its open and the SMB2 credit state it reported (CREDITS), the listing
 * ends with -ENOENT (not an error), and INFO names the version and the
 * stream class.
 */
struct listing_run {
	struct client_run w;
	int first, second, info;
	struct rtio_session_stats_rep s;
	struct rtio_info_rep i;
};

static void *listing_main(void *arg)
{
	struct listing_run *l = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL, *mon = NULL;
	struct rtio_session_stats_rep next;
	struct rtio_file rf;
	uint8_t *buf = talloc_size(mem, 2 * BS);
	int fd = -1, ret;
	ssize_t n;

	ret = buf == NULL ? -ENOMEM :
	      client_open(mem, l->w.f, l->w.f->path, O_RDONLY, l->w.name, 0, &c, &fd, &rf);
	if (ret == 0) {
		n = rtio_client_pread(c, rf.file_id, buf, 2 * BS, 0);
		ret = n == 2 * BS ? 0 : (n < 0 ? (int)n : -EIO);
	}
	if (ret == 0) {
		/* the module's credit report; the read after it is answered after it was applied */
		ret = rtio_client_report_credits(c, 900, 1024, 8192, 1024, 5);
	}
	if (ret == 0) {
		n = rtio_client_pread(c, rf.file_id, buf, BS, 0);
		ret = n == BS ? 0 : (n < 0 ? (int)n : -EIO);
	}
	if (ret == 0) {
		ret = rtio_client_monitor_connect(mem, l->w.f->sock, 5000, &mon);
	}
	if (ret == 0) {
		l->first = rtio_client_session_stats(mon, 0, &l->s);
		l->second = rtio_client_session_stats(mon, 1, &next);
		l->info = rtio_client_info(mon, 0, &l->i);
	}
	client_end(&l->w, ret, mem, fd);
	return NULL;
}

static void test_monitor_lists_sessions_and_info(void **state)
{
	struct fixture *f = *state;
	struct listing_run l = { .w = { .f = f, .name = "clip.mxf" } };
	uint64_t errors;

	use_stream_class(f->ctx);
	errors = f->ctx->st.errors;
	run_client(f, listing_main, &l.w);
	assert_int_equal(l.first, 0);
	assert_int_equal(l.s.pid, getpid());
	assert_string_equal(l.s.client, "unit");
	assert_true(l.s.bytes_read >= 2 * BS);
	assert_true(l.s.requests >= 1);
	assert_int_equal(l.s.opens, 1);
	assert_int_equal(l.s.streams, 1);
	assert_true(l.s.lead_ms != RTIO_LEAD_NONE);
	assert_int_equal(l.s.credits_granted, 900);
	assert_int_equal(l.s.credits_max, 1024);
	assert_int_equal(l.s.credits_orig, 8192);
	assert_int_equal(l.s.qos_held, 5);
	assert_int_equal(l.second, -ENOENT);	/* the monitor itself is no session */
	assert_int_equal(f->ctx->st.errors, errors);	/* the end of a listing is no error */
	assert_int_equal(l.info, 0);
	assert_string_equal(l.i.version, RTIO_VERSION);
	assert_int_equal(l.i.pid, getpid());
	assert_int_equal(l.i.block_size, BS);
	assert_int_equal(l.i.n_classes, 1);
	assert_string_equal(l.i.class_name, "hd");
	assert_string_equal(l.i.class_match, "*.mxf");
	assert_int_equal(l.i.class_bitrate, 100000000);
	until_no_sessions(f->ctx);
	drain(f->ctx);
}

/*
 * LOCAL_READS: the reads the module made itself (rtio:random = local) reach
 * aiod's stats and the session's counters. The first count is reported at
 * once, the next ones wait (one message a second, not one a read) until a
 * second passed or the session ends cleanly.
 */
struct local_run {
	struct client_run w;
	struct rtio_session_stats_rep first, held, reported, timed;
	int counts[6];
};

/* The session's counters once aiod answered a read queued behind the reports. */
static int local_look(struct rtio_client *c, struct rtio_client *mon, uint64_t file_id,
		      uint8_t *buf, struct rtio_session_stats_rep *out)
{
	ssize_t n = rtio_client_pread(c, file_id, buf, 4096, 0);

	if (n != 4096) {
		return n < 0 ? (int)n : -EIO;
	}
	return rtio_client_session_stats(mon, 0, out);
}

static void *local_reads_main(void *arg)
{
	struct local_run *l = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL, *mon = NULL;
	struct rtio_file rf;
	uint8_t *buf = talloc_size(mem, 4096);
	struct timespec second = { .tv_sec = 1, .tv_nsec = 100000000 };
	int fd = -1, ret;

	ret = buf == NULL ? -ENOMEM :
	      client_open(mem, l->w.f, l->w.f->path, O_RDONLY, l->w.name, 0, &c, &fd, &rf);
	if (ret == 0) {
		ret = rtio_client_monitor_connect(mem, l->w.f->sock, 5000, &mon);
	}
	if (ret == 0) {
		l->counts[0] = rtio_client_count_local_read(c, 100);	/* none reported yet: sent */
		ret = local_look(c, mon, rf.file_id, buf, &l->first);
	}
	if (ret == 0) {
		l->counts[1] = rtio_client_count_local_read(c, 200);	/* within the second: held */
		l->counts[2] = rtio_client_count_local_read(c, 300);
		ret = local_look(c, mon, rf.file_id, buf, &l->held);
	}
	if (ret == 0) {
		ret = rtio_client_report_local_reads(c);	/* what a clean end sends */
	}
	if (ret == 0) {
		ret = local_look(c, mon, rf.file_id, buf, &l->reported);
	}
	if (ret == 0) {
		l->counts[3] = rtio_client_count_local_read(c, 50);
		ret = nanosleep(&second, NULL) == 0 ? 0 : -errno;
	}
	if (ret == 0) {
		l->counts[4] = rtio_client_count_local_read(c, 70);	/* a second later: sent */
		ret = local_look(c, mon, rf.file_id, buf, &l->timed);
	}
	if (ret == 0) {
		/* the module's clean end (vfs_rtio_session_put): report, then DISCONNECT */
		l->counts[5] = rtio_client_count_local_read(c, 1000);
		ret = rtio_client_report_local_reads(c);
	}
	client_end(&l->w, ret, mem, fd);
	return NULL;
}

static void test_local_reads_reported_once_a_second(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct local_run l = { .w = { .f = f, .name = "big.bin" } };

	run_client(f, local_reads_main, &l.w);
	for (unsigned i = 0; i < 6; i++) {
		assert_int_equal(l.counts[i], 0);
	}
	assert_int_equal(l.first.local_reads, 1);
	assert_int_equal(l.first.local_bytes, 100);
	assert_int_equal(l.held.local_reads, 1);	/* 2 more counted, not yet told */
	assert_int_equal(l.held.local_bytes, 100);
	assert_int_equal(l.reported.local_reads, 3);
	assert_int_equal(l.reported.local_bytes, 600);
	assert_int_equal(l.timed.local_reads, 5);
	assert_int_equal(l.timed.local_bytes, 720);
	/* aiod's totals hold the last report too, taken before the session's DISCONNECT */
	until_no_sessions(ctx);
	assert_int_equal(ctx->st.local_reads, 6);
	assert_int_equal(ctx->st.local_bytes, 1720);
	assert_int_equal(ctx->st.protocol_errors, 0);
	/* local bytes are not aiod's: the reads aiod answered (4 of 4 KiB) are all it returned */
	assert_int_equal(ctx->st.bytes_read, 4 * 4096);
	drain(ctx);
}

/*
 * A full request queue keeps the counts: aiod's loop stands still while the
 * client fills its queue with reports; the one that finds no room is kept
 * and goes with the next report once aiod took the others.
 */
static void *local_full_main(void *arg)
{
	struct local_run *l = arg;
	struct fixture *f = l->w.f;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL;
	char byte = 'q';
	int ret, sent = 0, full = 0;

	ret = rtio_client_connect(mem, f->sock, "unit", 5000, &c);
	/* connected: the test stops aiod's loop once it sees this */
	if (write(f->ready[1], &byte, 1) != 1 && ret == 0) {
		ret = -errno;
	}
	while (ret == 0 && sent < 100000) {
		/* one read per report: only the first is due by the clock, so send them by hand */
		ret = rtio_client_count_local_read(c, 10);
		if (ret == 0) {
			ret = rtio_client_report_local_reads(c);
		}
		if (ret == -EAGAIN) {
			full = 1;
			ret = 0;
			break;
		}
		sent += ret == 0;
	}
	l->counts[0] = sent;
	l->counts[1] = full;
	if (ret == 0) {
		l->counts[2] = rtio_client_count_local_read(c, 10);	/* kept with the unsent one */
	}
	/* the queue is full: the test lets aiod's loop take it, then says so */
	if (write(f->ready[1], &byte, 1) != 1 && ret == 0) {
		ret = -errno;
	}
	if (read(f->finish[0], &byte, 1) != 1 && ret == 0) {
		ret = -errno;
	}
	if (ret == 0) {
		ret = rtio_client_report_local_reads(c);
	}
	client_end(&l->w, ret, mem, -1);
	return NULL;
}

static void test_local_reads_kept_when_queue_full(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct local_run l = { .w = { .f = f, .name = "x" } };
	pthread_t t;
	char byte = 'f';
	uint64_t sent, taken;

	f->client_ready = false;
	assert_non_null(tevent_add_fd(ctx->ev, ctx, f->ready[0], TEVENT_FD_READ, ready_handler, f));
	assert_int_equal(pthread_create(&t, NULL, local_full_main, &l), 0);
	for (int i = 0; i < 1000 && !f->client_ready; i++) {
		loop_once(ctx);
	}
	assert_true(f->client_ready);
	/* aiod's loop stands still until the client filled its queue */
	assert_int_equal(read(f->ready[0], &byte, 1), 1);
	sent = (uint64_t)l.counts[0];
	for (int i = 0; i < 1000 && ctx->st.local_reads < sent; i++) {
		loop_once(ctx);
	}
	taken = ctx->st.local_reads;
	assert_int_equal(write(f->finish[1], &byte, 1), 1);
	assert_int_equal(read(f->ready[0], &byte, 1), 1);	/* client_end */
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(l.w.error, 0);
	assert_int_equal(l.counts[1], 1);	/* the queue did fill up */
	assert_true(sent >= 1);
	assert_int_equal(l.counts[2], 0);
	assert_int_equal(taken, sent);
	until_no_sessions(ctx);
	/* nothing lost: the refused report and the read counted after it came with the last */
	assert_int_equal(ctx->st.local_reads, sent + 2);
	assert_int_equal(ctx->st.local_bytes, 10 * (sent + 2));
}

/*
 * LOCAL_READS from a raw client: a wrong length is a protocol error counted
 * (the session lives on), and a report queued when DISCONNECT is read (here
 * even after it was sent: aiod's loop stood still) is taken before the
 * session goes.
 */
struct raw_local_run {
	struct client_run w;
	uint64_t reads, bytes;		/* what the valid reports sent, each */
};

static int raw_local_send(struct raw_client *r, uint32_t len, uint64_t reads, uint64_t bytes)
{
	struct rtio_local_reads_req m;

	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, RTIO_OP_LOCAL_READS, len, 0);
	m.reads = reads;
	m.bytes = bytes;
	return mq_send(r->reqq, (const char *)&m, len, 0) == 0 ? 0 : -errno;
}

static void *raw_local_main(void *arg)
{
	struct raw_local_run *l = arg;
	struct fixture *f = l->w.f;
	struct raw_client r;
	union rtio_msg rep;
	struct rtio_hdr h;
	uint64_t id = 0;
	char byte = 'r';
	int fd = -1, ret;

	ret = raw_connect(f, &r);
	if (ret == 0) {
		fd = open(f->path, O_RDONLY | O_CLOEXEC);
		ret = fd < 0 ? -errno : raw_open(&r, fd, &id);
	}
	if (ret == 0) {
		ret = raw_local_send(&r, sizeof(struct rtio_hdr) + 8, 1000, 1000);	/* cut short */
	}
	if (ret == 0) {
		ret = raw_local_send(&r, sizeof(struct rtio_local_reads_req), l->reads, l->bytes);
	}
	/* a READ0 behind them: answered after both were handled, by a session still alive */
	if (ret == 0) {
		ret = raw_send(&r, RTIO_OP_READ0, 7, id, 0, 4096, 1000);
	}
	if (ret == 0) {
		ret = raw_reply(&r, &rep);
	}
	if (ret == 0) {
		ret = rep.hdr.result == 4096 ? 0 : -EIO;
	}
	if (write(f->ready[1], &byte, 1) != 1 && ret == 0) {
		ret = -errno;
	}
	if (ret == 0 && read(f->finish[0], &byte, 1) != 1) {
		ret = -errno;
	}
	/* DISCONNECT first, the last report after it, both before aiod's loop turns again */
	if (ret == 0) {
		rtio_hdr_init(&h, RTIO_OP_DISCONNECT, sizeof(h), 8);
		ret = rtio_sock_send(r.sock, &h, sizeof(h), NULL, 0);
	}
	if (ret == 0) {
		ret = raw_local_send(&r, sizeof(struct rtio_local_reads_req), l->reads, l->bytes);
	}
	raw_close(&r);
	if (fd >= 0) {
		close(fd);
	}
	l->w.error = ret;
	return NULL;
}

static void test_local_reads_malformed_and_at_disconnect(void **state)
{
	struct fixture *f = *state;
	struct aiod_ctx *ctx = f->ctx;
	struct raw_local_run l = { .w = { .f = f, .name = "raw.bin" }, .reads = 7, .bytes = 7000 };
	uint64_t perr = ctx->st.protocol_errors;
	pthread_t t;
	char byte = 'f';

	f->client_ready = false;
	assert_non_null(tevent_add_fd(ctx->ev, ctx, f->ready[0], TEVENT_FD_READ, ready_handler, f));
	assert_int_equal(pthread_create(&t, NULL, raw_local_main, &l), 0);
	for (int i = 0; i < 1000 && !f->client_ready; i++) {
		loop_once(ctx);
	}
	assert_true(f->client_ready);
	assert_int_equal(ctx->st.protocol_errors - perr, 1);
	assert_int_equal(ctx->st.local_reads, 7);
	assert_int_equal(ctx->st.local_bytes, 7000);
	assert_int_equal(ctx->nsessions, 1);	/* a malformed report ends nothing */
	assert_int_equal(write(f->finish[1], &byte, 1), 1);
	assert_int_equal(pthread_join(t, NULL), 0);	/* both sent, the loop stood still */
	assert_int_equal(l.w.error, 0);
	until_no_sessions(ctx);
	assert_int_equal(ctx->st.local_reads, 14);
	assert_int_equal(ctx->st.local_bytes, 14000);
	assert_int_equal(ctx->st.protocol_errors - perr, 1);
	drain(ctx);
}

/*
 * QOS_POLICY: the matched rule's values from an aiod that grants
 * RTIO_FEAT_QOS_POLICY; without the bit (an older aiod) the client answers
 * -EOPNOTSUPP without sending, and the session lives on.
 */
struct policy_run {
	struct client_run w;
	int with, without, after;
	struct rtio_qos_policy_rep rep, old_rep;
};

static void *policy_main(void *arg)
{
	struct policy_run *p = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL, *old = NULL;
	struct rtio_qos_bind_req who;
	struct rtio_stats_rep st;
	int ret;

	memset(&who, 0, sizeof(who));
	snprintf(who.user, sizeof(who.user), "ingest");
	snprintf(who.share, sizeof(who.share), "media");
	ret = rtio_client_connect(mem, p->w.f->sock, "unit", 5000, &c);
	if (ret == 0) {
		p->with = rtio_client_qos_policy(c, &who, &p->rep);
		ret = rtio_client_connect_features(mem, p->w.f->sock, "old", 5000,
						   RTIO_FEAT_ALL & ~RTIO_FEAT_QOS_POLICY, &old);
	}
	if (ret == 0) {
		p->without = rtio_client_qos_policy(old, &who, &p->old_rep);
		p->after = rtio_client_stats(old, &st);
	}
	client_end(&p->w, ret, mem, -1);
	return NULL;
}

static void test_qos_policy_only_when_granted(void **state)
{
	static const char *const kv[] = { "match_user", "ingest", "limit", "24M",
					  "limit_iops", "500", "reserve", "10M", NULL };
	struct fixture *f = *state;
	struct policy_run p = { .w = { .f = f, .name = "x" } };
	struct aiod_qos_policy *policy = aiod_qos_policy_new(f->ctx->cfg);
	uint32_t flows, paced;
	char err[256];

	assert_non_null(policy);
	for (unsigned i = 0; kv[i] != NULL; i += 2) {
		assert_int_equal(aiod_qos_policy_add(policy, "qos.ingest", kv[i], kv[i + 1], i + 1,
						     err, sizeof(err)), 0);
	}
	assert_int_equal(aiod_qos_policy_finish(policy, 100ull << 20, 0, err, sizeof(err)), 0);
	f->ctx->cfg->qos = policy;
	run_client(f, policy_main, &p.w);
	assert_int_equal(p.with, 0);
	assert_string_equal(p.rep.rule, "ingest");
	assert_int_equal(p.rep.limit_Bps, 24u << 20);
	assert_int_equal(p.rep.limit_iops, 500);
	assert_int_equal(p.rep.reserve_Bps, 10u << 20);
	assert_int_equal(p.without, -EOPNOTSUPP);
	assert_int_equal(p.after, 0);
	/* asking binds nothing */
	aiod_qos_counts(f->ctx, &flows, &paced);
	assert_int_equal(flows, 0);
	f->ctx->cfg->qos = NULL;
	talloc_free(policy);
	until_no_sessions(f->ctx);
	drain(f->ctx);
}

/*
 * CONNECT hands over aiod's inotify descriptor (RTIO_FEAT_CONNECT_WATCH):
 * the client has hot reads (RTIO_FEAT_HIT needs that descriptor) without a
 * WATCH_FD round trip; a client that does not ask for it (as an older one)
 * asks WATCH_FD and has them too.
 */
struct watch_run {
	struct client_run w;
	bool hit, connect_watch, old_hit, old_connect_watch, old_qos;
};

static void *watch_main(void *arg)
{
	struct watch_run *p = arg;
	TALLOC_CTX *mem = talloc_new(NULL);
	struct rtio_client *c = NULL, *old = NULL;
	int ret;

	ret = rtio_client_connect(mem, p->w.f->sock, "unit", 5000, &c);
	if (ret == 0) {
		p->hit = rtio_client_has_feature(c, RTIO_FEAT_HIT);
		p->connect_watch = rtio_client_has_feature(c, RTIO_FEAT_CONNECT_WATCH);
		ret = rtio_client_connect_features(mem, p->w.f->sock, "old", 5000,
						   RTIO_FEAT_ALL & ~RTIO_FEAT_CONNECT_WATCH, &old);
	}
	if (ret == 0) {
		p->old_hit = rtio_client_has_feature(old, RTIO_FEAT_HIT);
		p->old_connect_watch = rtio_client_has_feature(old, RTIO_FEAT_CONNECT_WATCH);
		p->old_qos = rtio_client_qos_fd(old) >= 0;
	}
	client_end(&p->w, ret, mem, -1);
	return NULL;
}

static void test_connect_carries_watch_fd(void **state)
{
	struct fixture *f = *state;
	struct watch_run p = { .w = { .f = f, .name = "x" } };

	assert_true(aiod_watch_fd(f->ctx) >= 0);
	run_client(f, watch_main, &p.w);
	assert_int_equal(p.w.error, 0);
	assert_true(p.hit);
	assert_true(p.connect_watch);
	assert_true(p.old_hit);		/* by WATCH_FD */
	assert_false(p.old_connect_watch);
	assert_true(p.old_qos);		/* the descriptors before it still line up */
	until_no_sessions(f->ctx);
	drain(f->ctx);
}

/* One argument: a pattern of the tests to run (cmocka's filter, e.g. '*flood*'). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_session_teardown_releases_everything, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wrote_drops_stale_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outside_write_never_read_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_aggregation_only_with_streams, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_first_stream_reads_are_not_misses, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_heartbeat_in_region, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_reads_left_to_the_client, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_random_reads_direct_on_a_fast_device, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_session_flood_wrote_unread_replies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_session_flood_read0_unread_replies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_listener_backs_off_when_out_of_descriptors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_control_open_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_unlink_only_known_files, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dataplane_session_pin_quota, setup, teardown),
		cmocka_unit_test_setup_teardown(test_monitor_lists_sessions_and_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qos_policy_only_when_granted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_carries_watch_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_reads_reported_once_a_second, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_local_reads_kept_when_queue_full, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_local_reads_malformed_and_at_disconnect, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_listener_monitor_beyond_max_sessions, setup,
						teardown),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
