/*
 * Unit tests of rtio_page_cached(), the sendfile path's question "does the
 * page cache hold this whole range?", on a real file on a real filesystem
 * (not tmpfs: its pages cannot be dropped). The page cache is steered with
 * posix_fadvise: DONTNEED drops a written-back file's clean pages, a read
 * brings them back.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rtio_client.h"

#define FILE_BYTES (1024u * 1024u)

struct pc_state {
	char path[64];
	int fd;
};

static int pc_setup(void **state)
{
	struct pc_state *s = calloc(1, sizeof(*s));
	char *buf = malloc(FILE_BYTES);

	if (s == NULL || buf == NULL) {
		free(s);
		free(buf);
		return -1;
	}
	memset(buf, 0x5a, FILE_BYTES);
	snprintf(s->path, sizeof(s->path), "/var/tmp/rtio-pagecache.XXXXXX");
	s->fd = mkstemp(s->path);
	if (s->fd < 0 || write(s->fd, buf, FILE_BYTES) != (ssize_t)FILE_BYTES ||
	    fsync(s->fd) != 0) {
		free(buf);
		return -1;
	}
	free(buf);
	*state = s;
	return 0;
}

static int pc_teardown(void **state)
{
	struct pc_state *s = *state;

	close(s->fd);
	unlink(s->path);
	free(s);
	return 0;
}

/* Drop the file's pages (clean after the fsync), then read [off, off + len) back in. */
static void pc_only(const struct pc_state *s, off_t off, size_t len)
{
	char buf[4096];

	assert_int_equal(posix_fadvise(s->fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	/* no read-ahead: exactly the pages read come back */
	assert_int_equal(posix_fadvise(s->fd, 0, 0, POSIX_FADV_RANDOM), 0);
	for (size_t done = 0; done < len; done += sizeof(buf)) {
		assert_int_equal(pread(s->fd, buf, sizeof(buf), off + (off_t)done),
				 (ssize_t)sizeof(buf));
	}
}

static bool pc_supported(const struct pc_state *s)
{
	int r = rtio_page_cached(s->fd, 0, 4096);

	if (r == -ENOSYS) {
		/* before Linux 6.5: the caller must see "cannot tell", never "cached" */
		print_message("cachestat(2) missing: only the fallback answer is checked\n");
		return false;
	}
	assert_true(r == 0 || r == 1);
	return true;
}

static void test_pagecache_whole_range(void **state)
{
	struct pc_state *s = *state;

	if (!pc_supported(s)) {
		assert_int_equal(rtio_page_cached(s->fd, 0, FILE_BYTES), -ENOSYS);
		return;
	}
	pc_only(s, 0, FILE_BYTES);
	assert_int_equal(rtio_page_cached(s->fd, 0, FILE_BYTES), 1);
	/* an unaligned range inside it */
	assert_int_equal(rtio_page_cached(s->fd, 4095, 8194), 1);
}

static void test_pagecache_dropped(void **state)
{
	struct pc_state *s = *state;

	if (!pc_supported(s)) {
		return;
	}
	pc_only(s, 0, 0);
	assert_int_equal(rtio_page_cached(s->fd, 0, FILE_BYTES), 0);
	assert_int_equal(rtio_page_cached(s->fd, 0, 1), 0);
}

static void test_pagecache_partly(void **state)
{
	struct pc_state *s = *state;

	if (!pc_supported(s)) {
		return;
	}
	/* the first half cached, the second not: only ranges inside the first half are whole */
	pc_only(s, 0, FILE_BYTES / 2);
	assert_int_equal(rtio_page_cached(s->fd, 0, FILE_BYTES / 2), 1);
	assert_int_equal(rtio_page_cached(s->fd, 0, FILE_BYTES / 2 + 1), 0);
	assert_int_equal(rtio_page_cached(s->fd, FILE_BYTES / 2 - 100, 200), 0);
	assert_int_equal(rtio_page_cached(s->fd, 0, FILE_BYTES), 0);
}

static void test_pagecache_past_eof(void **state)
{
	struct pc_state *s = *state;

	if (!pc_supported(s)) {
		return;
	}
	pc_only(s, 0, FILE_BYTES);
	/* pages past the end do not exist: the caller clips to the file size */
	assert_int_equal(rtio_page_cached(s->fd, FILE_BYTES - 4096, 8192), 0);
	assert_int_equal(rtio_page_cached(s->fd, FILE_BYTES - 4096, 4096), 1);
}

static void test_pagecache_bad_input(void **state)
{
	struct pc_state *s = *state;

	assert_int_equal(rtio_page_cached(s->fd, 0, 0), -EINVAL);
	assert_int_equal(rtio_page_cached(s->fd, UINT64_MAX, 2), -EINVAL);
	if (pc_supported(s)) {
		assert_int_equal(rtio_page_cached(-1, 0, 4096), -EBADF);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pagecache_whole_range, pc_setup, pc_teardown),
		cmocka_unit_test_setup_teardown(test_pagecache_dropped, pc_setup, pc_teardown),
		cmocka_unit_test_setup_teardown(test_pagecache_partly, pc_setup, pc_teardown),
		cmocka_unit_test_setup_teardown(test_pagecache_past_eof, pc_setup, pc_teardown),
		cmocka_unit_test_setup_teardown(test_pagecache_bad_input, pc_setup, pc_teardown),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("pagecache", tests, NULL, NULL);
}
