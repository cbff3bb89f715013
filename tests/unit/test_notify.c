/*
 * Unit tests: the sd_notify sender (aiod/notify.c) and the journal check of
 * aiod/log.c, against sockets and environments the test makes itself.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "notify.h"

/* A datagram socket bound to name ('@': abstract), as systemd's would be. */
static int bind_listener(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(len < sizeof(sa.sun_path));
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@') {
		sa.sun_path[0] = '\0';
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&sa,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)), 0);
	return fd;
}

static void assert_received(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void test_notify_abstract_socket_gets_ready(void **state)
{
	char name[64];
	int fd;

	(void)state;
	snprintf(name, sizeof(name), "@rtio-notify-test-%d", (int)getpid());
	fd = bind_listener(name);
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(aiod_notify("READY=1"), 0);
	assert_received(fd, "READY=1");
	assert_int_equal(aiod_notify("STATUS=serving\nWATCHDOG=1"), 0);
	assert_received(fd, "STATUS=serving\nWATCHDOG=1");
	unsetenv("NOTIFY_SOCKET");
	close(fd);
}

static void test_notify_path_socket_gets_ready(void **state)
{
	char name[64];
	int fd;

	(void)state;
	snprintf(name, sizeof(name), "/tmp/rtio-notify-test-%d", (int)getpid());
	unlink(name);
	fd = bind_listener(name);
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(aiod_notify("READY=1"), 0);
	assert_received(fd, "READY=1");
	unsetenv("NOTIFY_SOCKET");
	close(fd);
	unlink(name);
}

static void test_notify_without_systemd_is_quiet(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(aiod_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "relative/name", 1);
	assert_int_equal(aiod_notify("READY=1"), -EINVAL);
	/* nobody listening: the caller hears of it */
	setenv("NOTIFY_SOCKET", "@rtio-notify-test-nobody-listens", 1);
	assert_int_equal(aiod_notify("READY=1"), -ECONNREFUSED);
	unsetenv("NOTIFY_SOCKET");
}

static void test_notify_watchdog_interval(void **state)
{
	char pid[32];

	(void)state;
	unsetenv("WATCHDOG_PID");
	unsetenv("WATCHDOG_USEC");
	assert_int_equal(aiod_notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "30000000", 1);
	assert_int_equal(aiod_notify_watchdog_usec(), 30000000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(aiod_notify_watchdog_usec(), 30000000);
	setenv("WATCHDOG_PID", "1", 1);	/* someone else's watchdog */
	assert_int_equal(aiod_notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "soon", 1);
	assert_int_equal(aiod_notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_USEC");
}

/* JOURNAL_STREAM counts only when it names stderr itself. */
static void test_log_journal_is_stderr_only(void **state)
{
	struct stat st;
	char js[64];

	(void)state;
	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	unsetenv("JOURNAL_STREAM");
	assert_false(aiod_log_stderr_is_journal());
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	assert_true(aiod_log_stderr_is_journal());
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", js, 1);
	assert_false(aiod_log_stderr_is_journal());
	unsetenv("JOURNAL_STREAM");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_abstract_socket_gets_ready),
		cmocka_unit_test(test_notify_path_socket_gets_ready),
		cmocka_unit_test(test_notify_without_systemd_is_quiet),
		cmocka_unit_test(test_notify_watchdog_interval),
		cmocka_unit_test(test_log_journal_is_stderr_only),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("notify", tests, NULL, NULL);
}
