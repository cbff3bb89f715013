/*
 * Unit tests of rtio_queue: the socket-pair transport behaves like the
 * message queues it stands in for (whole messages, EAGAIN when empty, an
 * oversized message refused rather than cut, the peer's end noticed).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "rtio_queue.h"

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
}

static void test_queue_socket_messages_keep_boundaries(void **state)
{
	char buf[64];
	int sv[2];

	(void)state;
	pair(sv);
	assert_true(rtio_queue_is_socket(sv[0]));
	assert_int_equal(rtio_queue_send(sv[0], true, "first", 5), 0);
	assert_int_equal(rtio_queue_send(sv[0], true, "second!", 7), 0);
	assert_int_equal(rtio_queue_recv(sv[1], true, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "first", 5);
	assert_int_equal(rtio_queue_recv(sv[1], true, buf, sizeof(buf)), 7);
	assert_memory_equal(buf, "second!", 7);
	errno = 0;
	assert_int_equal(rtio_queue_recv(sv[1], true, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EAGAIN);
	close(sv[0]);
	close(sv[1]);
}

static void test_queue_socket_oversized_refused(void **state)
{
	char big[128] = { 0 }, buf[16];
	int sv[2];

	(void)state;
	pair(sv);
	assert_int_equal(rtio_queue_send(sv[0], true, big, sizeof(big)), 0);
	errno = 0;
	assert_int_equal(rtio_queue_recv(sv[1], true, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
}

static void test_queue_socket_peer_gone(void **state)
{
	char buf[16];
	int sv[2];

	(void)state;
	pair(sv);
	close(sv[0]);
	errno = 0;
	assert_int_equal(rtio_queue_recv(sv[1], true, buf, sizeof(buf)), -1);
	assert_int_equal(errno, ECONNRESET);
	/* no SIGPIPE: the test would die here */
	assert_int_equal(rtio_queue_send(sv[1], true, "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	close(sv[1]);
}

static void test_queue_mq_is_not_socket(void **state)
{
	struct mq_attr attr = { .mq_maxmsg = 2, .mq_msgsize = 16 };
	char name[64], buf[16];
	mqd_t q;

	(void)state;
	snprintf(name, sizeof(name), "/rtio-test-queue.%d", (int)getpid());
	q = mq_open(name, O_CREAT | O_EXCL | O_RDWR | O_NONBLOCK, 0600, &attr);
	if (q == (mqd_t)-1) {
		/* no message queues left here is a fact of the machine, not a failure of ours */
		assert_true(errno == EMFILE || errno == ENOSPC || errno == ENOSYS);
		skip();
	}
	(void)mq_unlink(name);
	assert_false(rtio_queue_is_socket((int)q));
	assert_int_equal(rtio_queue_send((int)q, false, "abc", 3), 0);
	assert_int_equal(rtio_queue_recv((int)q, false, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "abc", 3);
	mq_close(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_socket_messages_keep_boundaries),
		cmocka_unit_test(test_queue_socket_oversized_refused),
		cmocka_unit_test(test_queue_socket_peer_gone),
		cmocka_unit_test(test_queue_mq_is_not_socket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
