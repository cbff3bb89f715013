/*
 * aiod bad-input test: speak the protocol by hand, wrongly, and check that
 * aiod answers with the right error or drops the message, and stays up.
 *
 *   aiod_badinput SOCKET DIR
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtio_client.h"
#include "rtio_proto.h"
#include "rtio_sock.h"

#include "aiod_check.h"

struct raw {
	int sock;
	mqd_t reqq, repq;
	int shm;
	uint32_t max_io;
};

static int raw_connect(const char *path, uint32_t features, struct raw *r)
{
	struct rtio_connect_req req;
	union rtio_msg rep;
	int fds[3];
	unsigned nfds = 3;
	ssize_t n;

	r->sock = rtio_sock_connect(path, 1000);
	if (r->sock < 0) {
		return r->sock;
	}
	memset(&req, 0, sizeof(req));
	rtio_hdr_init(&req.hdr, RTIO_OP_CONNECT, sizeof(req), 1);
	req.pid = (uint32_t)getpid();
	req.features = features;
	strcpy(req.client, "badinput");
	if (rtio_sock_send(r->sock, &req, sizeof(req), NULL, 0) != 0) {
		return -EIO;
	}
	n = rtio_sock_recv(r->sock, &rep, sizeof(rep), fds, &nfds, 2000);
	if (n != sizeof(struct rtio_connect_rep) || nfds != 3 || rep.hdr.result != 0) {
		return -EPROTO;
	}
	r->reqq = fds[0];
	r->repq = fds[1];
	r->shm = fds[2];
	r->max_io = rep.connect_rep.max_io;
	return 0;
}

static void raw_close(struct raw *r)
{
	close(r->sock);
	mq_close(r->reqq);
	mq_close(r->repq);
	close(r->shm);
}

/*
 * The shared region must survive any client: its size is sealed (a client's
 * ftruncate would SIGBUS every other smbd), and a client that did not ask to
 * write into it can map it only read-only.
 */
static void check_region(const char *path)
{
	struct raw ro, rw;
	struct stat st;
	void *map;
	int seals;

	CHECK(raw_connect(path, 0, &ro) == 0, "CONNECT without RTIO_FEAT_SHM_WRITE");
	CHECK(fstat(ro.shm, &st) == 0 && st.st_size > 0, "region descriptor has a size");
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, ro.shm, 0);
	CHECK(map == MAP_FAILED && errno == EACCES,
	      "read-only client cannot map the region writable (%s)",
	      map == MAP_FAILED ? strerror(errno) : "it could");
	if (map != MAP_FAILED) {
		munmap(map, (size_t)st.st_size);
	}
	CHECK(ftruncate(ro.shm, 4096) != 0, "read-only client cannot truncate the region");
	CHECK(write(ro.shm, "x", 1) < 0, "read-only client cannot write the region");
	raw_close(&ro);

	CHECK(raw_connect(path, RTIO_FEAT_SHM_WRITE, &rw) == 0, "CONNECT with RTIO_FEAT_SHM_WRITE");
	seals = fcntl(rw.shm, F_GET_SEALS);
	CHECK(seals >= 0 && (seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) ==
				    (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
	      "region sealed against shrink, grow and new seals (0x%x)", seals);
	CHECK(ftruncate(rw.shm, 4096) != 0 && errno == EPERM,
	      "writer client cannot shrink the region (%s)", strerror(errno));
	CHECK(ftruncate(rw.shm, (off_t)st.st_size * 2) != 0 && errno == EPERM,
	      "writer client cannot grow the region");
	CHECK(fcntl(rw.shm, F_ADD_SEALS, F_SEAL_WRITE) != 0,
	      "writer client cannot add seals (would stop aiod's own writes)");
	raw_close(&rw);
}

static int send_q(struct raw *r, const void *m, size_t len)
{
	return mq_send(r->reqq, m, len, 0) == 0 ? 0 : -errno;
}

/* Wait up to 1 s for a reply; returns its length, 0 on timeout. */
static ssize_t recv_q(struct raw *r, union rtio_msg *m)
{
	struct timespec ts;
	ssize_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	do {
		n = mq_timedreceive(r->repq, (char *)m, sizeof(*m), NULL, &ts);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN) {
		/* Our end is non-blocking: poll it. */
		for (int i = 0; i < 100; i++) {
			n = mq_receive(r->repq, (char *)m, sizeof(*m), NULL);
			if (n >= 0 || errno != EAGAIN) {
				break;
			}
			usleep(10000);
		}
	}
	return n < 0 ? 0 : n;
}

static int ctl(struct raw *r, void *req, size_t len, const int *fds, unsigned nfds,
	       union rtio_msg *rep)
{
	ssize_t n;

	if (rtio_sock_send(r->sock, req, len, fds, nfds) != 0) {
		return -EIO;
	}
	n = rtio_sock_recv(r->sock, rep, sizeof(*rep), NULL, NULL, 2000);
	if (n <= 0) {
		return n == 0 ? -ECONNRESET : (int)n;
	}
	return rep->hdr.result;
}

static int alive(const char *path, uint64_t *protocol_errors)
{
	struct rtio_client *c;
	struct rtio_stats_rep st;
	int ret = rtio_client_connect(NULL, path, "badinput-check", 2000, &c);

	if (ret < 0) {
		return 0;
	}
	ret = rtio_client_stats(c, &st);
	talloc_free(c);
	if (protocol_errors != NULL) {
		*protocol_errors = st.protocol_errors;
	}
	return ret == 0;
}

int main(int argc, char **argv)
{
	const char *path, *dir;
	struct raw r;
	union rtio_msg m, rep;
	struct rtio_io_req io;
	char file[512];
	uint64_t file_id, perr0 = 0, perr1 = 0;
	int fd, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: aiod_badinput SOCKET DIR\n");
		return 2;
	}
	path = argv[1];
	dir = argv[2];
	CHECK(alive(path, &perr0), "aiod answers before the test");
	check_region(path);
	CHECK(alive(path, NULL), "aiod answers after the region checks");
	ret = raw_connect(path, 0, &r);
	CHECK(ret == 0, "raw CONNECT (%s)", strerror(-ret));
	if (ret != 0) {
		return 1;
	}

	/* A file to read. */
	snprintf(file, sizeof(file), "%s/badinput.dat", dir);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "0123456789", 10) != 10) {
		perror(file);
		return 1;
	}
	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, RTIO_OP_OPEN, sizeof(struct rtio_open_req), 2);
	strcpy(m.open_req.name, "badinput.dat");
	CHECK(ctl(&r, &m, sizeof(struct rtio_open_req), NULL, 0, &rep) == -EBADF,
	      "OPEN without a descriptor -> EBADF");
	{
		int dfd = open(dir, O_RDONLY | O_DIRECTORY);
		CHECK(ctl(&r, &m, sizeof(struct rtio_open_req), &dfd, 1, &rep) == -EINVAL,
		      "OPEN of a directory -> EINVAL");
		close(dfd);
	}
	{
		int pfd = open(file, O_PATH);
		CHECK(ctl(&r, &m, sizeof(struct rtio_open_req), &pfd, 1, &rep) == -EBADF,
		      "OPEN of an O_PATH descriptor -> EBADF");
		close(pfd);
	}
	{
		/* Its writes land at the end whatever the offset: aiod's cache would lie. */
		int afd = open(file, O_WRONLY | O_APPEND);
		CHECK(ctl(&r, &m, sizeof(struct rtio_open_req), &afd, 1, &rep) == -EINVAL,
		      "OPEN of an O_APPEND descriptor -> EINVAL");
		close(afd);
	}
	{
		int rofd = open(file, O_RDONLY);
		CHECK(ctl(&r, &m, sizeof(struct rtio_open_req), &rofd, 1, &rep) == 0,
		      "OPEN of a read-only descriptor");
		close(rofd);
		file_id = rep.open_rep.file_id;
	}

	/* Data path: well-formed requests with bad arguments get error replies. */
	memset(&io, 0, sizeof(io));
	rtio_hdr_init(&io.hdr, RTIO_OP_READ0, sizeof(io), 10);
	io.file_id = 999999;
	io.length = 10;
	send_q(&r, &io, sizeof(io));
	CHECK(recv_q(&r, &rep) > 0 && rep.hdr.req_id == 10 && rep.hdr.result == -EBADF,
	      "READ0 of an unknown file id -> EBADF");
	io.hdr.req_id = 11;
	io.file_id = file_id;
	io.length = r.max_io + 1;
	send_q(&r, &io, sizeof(io));
	CHECK(recv_q(&r, &rep) > 0 && rep.hdr.req_id == 11 && rep.hdr.result == -EINVAL,
	      "READ0 longer than max_io -> EINVAL");
	io.hdr.req_id = 12;
	io.length = 100;
	io.offset = 1000;
	send_q(&r, &io, sizeof(io));
	CHECK(recv_q(&r, &rep) > 0 && rep.hdr.req_id == 12 && rep.hdr.result == 0 &&
	      rep.io_rep.nseg == 0, "READ0 past EOF -> 0 bytes");
	if (rep.io_rep.token != 0) {
		struct rtio_release_req rel;
		rtio_hdr_init(&rel.hdr, RTIO_OP_READ1, sizeof(rel), 0);
		rel.token = rep.io_rep.token;
		send_q(&r, &rel, sizeof(rel));
	}
	io.hdr.req_id = 13;
	io.length = 0;
	io.offset = 0;
	send_q(&r, &io, sizeof(io));
	CHECK(recv_q(&r, &rep) > 0 && rep.hdr.req_id == 13 && rep.hdr.result == 0,
	      "zero-length READ0 -> 0 bytes");
	if (rep.io_rep.token != 0) {
		struct rtio_release_req rel;
		rtio_hdr_init(&rel.hdr, RTIO_OP_READ1, sizeof(rel), 0);
		rel.token = rep.io_rep.token;
		send_q(&r, &rel, sizeof(rel));
	}
	io.hdr.req_id = 14;
	io.length = 10;
	io.offset = UINT64_MAX - 5;
	send_q(&r, &io, sizeof(io));
	CHECK(recv_q(&r, &rep) > 0 && rep.hdr.req_id == 14 && rep.hdr.result == -EINVAL,
	      "READ0 at an offset that overflows -> EINVAL");
	rtio_hdr_init(&io.hdr, RTIO_OP_WRITE0, sizeof(io), 15);
	io.offset = 0;
	send_q(&r, &io, sizeof(io));
	CHECK(recv_q(&r, &rep) > 0 && rep.hdr.req_id == 15 && rep.hdr.result == -EBADF,
	      "WRITE0 on a read-only open -> EBADF");
	{
		struct rtio_release_req rel;
		rtio_hdr_init(&rel.hdr, RTIO_OP_WRITE1, sizeof(rel), 16);
		rel.token = 0xdeadbeef;
		send_q(&r, &rel, sizeof(rel));
		CHECK(recv_q(&r, &rep) > 0 && rep.hdr.req_id == 16 && rep.hdr.result == -ENOENT,
		      "WRITE1 with a token never handed out -> ENOENT");
	}

	/* Malformed messages: dropped (answered when the header is readable). */
	send_q(&r, "xyz", 3);
	memset(&io, 0, sizeof(io));
	rtio_hdr_init(&io.hdr, RTIO_OP_READ0, sizeof(io), 20);
	io.hdr.magic = 0x12345678;
	send_q(&r, &io, sizeof(io));
	rtio_hdr_init(&io.hdr, RTIO_OP_READ0, sizeof(io), 21);
	io.hdr.version = 99;
	send_q(&r, &io, sizeof(io));
	rtio_hdr_init(&io.hdr, 77, sizeof(io), 22);
	send_q(&r, &io, sizeof(io));
	rtio_hdr_init(&io.hdr, RTIO_OP_READ0, sizeof(io), 23);
	send_q(&r, &io, sizeof(io) - 8);	/* truncated */
	CHECK(recv_q(&r, &rep) > 0 && rep.hdr.req_id == 23 && rep.hdr.result == -EMSGSIZE,
	      "truncated READ0 -> EMSGSIZE");
	rtio_hdr_init(&io.hdr, RTIO_OP_OPEN, sizeof(io), 24);	/* control op on the queue */
	send_q(&r, &io, sizeof(io));
	{
		struct rtio_release_req rel;
		rtio_hdr_init(&rel.hdr, RTIO_OP_READ1, sizeof(rel), 0);
		rel.token = 42;	/* unknown: dropped, nothing to answer */
		send_q(&r, &rel, sizeof(rel));
	}
	CHECK(recv_q(&r, &rep) == 0, "no reply to unanswerable garbage");
	CHECK(alive(path, &perr1), "aiod still answers after malformed messages");
	CHECK(perr1 >= perr0 + 6, "aiod counted the malformed messages (%llu -> %llu)",
	      (unsigned long long)perr0, (unsigned long long)perr1);

	/* A protocol error on the control socket ends that session, not aiod. */
	(void)rtio_sock_send(r.sock, "garbage!", 8, NULL, 0);
	{
		char b[64];
		ssize_t n = rtio_sock_recv(r.sock, b, sizeof(b), NULL, NULL, 2000);
		CHECK(n == 0 || n == -ECONNRESET, "garbage on the control socket closes the session");
	}
	CHECK(alive(path, NULL), "aiod still answers after a session was dropped");
	/* A client that connects and never says CONNECT is dropped after 5 s (not waited for). */
	{
		int s = rtio_sock_connect(path, 1000);
		CHECK(s >= 0, "a silent client may connect");
		close(s);
	}
	close(fd);
	unlink(file);
	printf("badinput: %d failures\n", failures);
	return failures ? 1 : 0;
}
