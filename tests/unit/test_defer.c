/*
 * Unit tests of vfs_rtio_defer.c: which files the module registers with aiod
 * at open, and which I/O registers a small file later (rtio:register min size).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vfs_rtio_defer.h"

#define MIB (1024ull * 1024)
#define MIN_SIZE MIB	/* the default, one cache block */

static void test_defer_default_is_one_block(void **state)
{
	(void)state;
	assert_int_equal(VFS_RTIO_DEFAULT_REGISTER_MIN_SIZE, MIB);
}

/* Below the size at open: deferred until an I/O reaches it. At or above: now. */
static void test_defer_open_by_size(void **state)
{
	struct vfs_rtio_defer_open d;

	(void)state;
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDONLY, 4096);
	assert_int_equal(d.register_at, MIN_SIZE);
	assert_false(d.invalidate);
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDWR, MIN_SIZE - 1);
	assert_int_equal(d.register_at, MIN_SIZE);
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDONLY, MIN_SIZE);
	assert_int_equal(d.register_at, 0);
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDWR, 4ull << 30);
	assert_int_equal(d.register_at, 0);
	assert_false(d.invalidate);
	/* an empty file that was not just created is deferred and changes nothing */
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDWR, 0);
	assert_int_equal(d.register_at, MIN_SIZE);
	assert_false(d.invalidate);
}

/* rtio:register min size = 0: every file at open, as before deferral existed. */
static void test_defer_threshold_zero_registers_at_open(void **state)
{
	struct vfs_rtio_defer_open d;

	(void)state;
	d = vfs_rtio_defer_open(0, O_RDONLY, 0);
	assert_int_equal(d.register_at, 0);
	d = vfs_rtio_defer_open(0, O_RDWR | O_CREAT, 0);
	assert_int_equal(d.register_at, 0);
	assert_true(d.invalidate);
	d = vfs_rtio_defer_open(0, O_RDONLY, 1);
	assert_int_equal(d.register_at, 0);
	assert_false(vfs_rtio_defer_small(0, 0));
	assert_false(vfs_rtio_defer_small(0, 4096));
}

/*
 * O_TRUNC changed the file behind aiod's back; a create may reuse the inode
 * number of a file aiod still caches. Either way the registration, now or
 * when the file has grown, must make aiod drop what it holds.
 */
static void test_defer_trunc_and_creat_invalidate(void **state)
{
	struct vfs_rtio_defer_open d;

	(void)state;
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDWR | O_TRUNC, 0);
	assert_int_equal(d.register_at, MIN_SIZE);	/* truncated: small now */
	assert_true(d.invalidate);
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDWR | O_CREAT, 0);	/* a recorder's new file */
	assert_int_equal(d.register_at, MIN_SIZE);
	assert_true(d.invalidate);
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDWR | O_CREAT | O_TRUNC, 0);
	assert_true(d.invalidate);
	/* O_CREAT of a file that was there already (not empty) changed nothing */
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDWR | O_CREAT, 5000);
	assert_int_equal(d.register_at, MIN_SIZE);
	assert_false(d.invalidate);
	d = vfs_rtio_defer_open(MIN_SIZE, O_RDWR | O_CREAT, 8 * MIB);
	assert_int_equal(d.register_at, 0);
	assert_false(d.invalidate);
	/* the invalidate meaning does not depend on deferral */
	d = vfs_rtio_defer_open(0, O_RDWR | O_TRUNC, 0);
	assert_int_equal(d.register_at, 0);
	assert_true(d.invalidate);
}

/*
 * Writes register when they make the file reach the size:
 *
 *   0                         1M
 *   |--- local writes ------->|
 *                    |=======|        ends at 1M: reaches it (a 1M file is registered at open too)
 *                    |=========|      crosses it
 *   |==|                              stays local
 *                                |==| starts past it
 */
static void test_defer_write_crossing(void **state)
{
	(void)state;
	assert_false(vfs_rtio_defer_write_reaches(MIN_SIZE, 0, 65536));
	assert_false(vfs_rtio_defer_write_reaches(MIN_SIZE, MIN_SIZE - 65536 - 1, 65536));
	assert_true(vfs_rtio_defer_write_reaches(MIN_SIZE, MIN_SIZE - 65536, 65536));
	assert_true(vfs_rtio_defer_write_reaches(MIN_SIZE, MIN_SIZE - 4096, 65536));
	assert_true(vfs_rtio_defer_write_reaches(MIN_SIZE, MIN_SIZE + 4096, 4096));
	assert_true(vfs_rtio_defer_write_reaches(MIN_SIZE, 0, MIN_SIZE));
	assert_false(vfs_rtio_defer_write_reaches(MIN_SIZE, 0, MIN_SIZE - 1));
	/* a truncate is a write of nothing at the new size */
	assert_true(vfs_rtio_defer_write_reaches(MIN_SIZE, 100 * MIB, 0));
	assert_false(vfs_rtio_defer_write_reaches(MIN_SIZE, 4096, 0));
	/* not deferred: anything goes to aiod */
	assert_true(vfs_rtio_defer_write_reaches(0, 0, 0));
	assert_true(vfs_rtio_defer_write_reaches(0, 0, 1));
}

/* Reads reach only as far as the file goes: clients ask for more than there is. */
static void test_defer_read_stops_at_eof(void **state)
{
	(void)state;
	/* the cheap test on the request: a 1 MiB read at 0 may reach */
	assert_true(vfs_rtio_defer_read_may_reach(MIN_SIZE, 0, MIN_SIZE));
	assert_false(vfs_rtio_defer_read_may_reach(MIN_SIZE, 0, 65536));
	/* ... but of a 64 KiB file it does not */
	assert_false(vfs_rtio_defer_read_reaches(MIN_SIZE, 0, MIN_SIZE, 65536));
	assert_false(vfs_rtio_defer_read_reaches(MIN_SIZE, 0, 8 * MIB, MIN_SIZE - 1));
	/* past the end of a small file: nothing to read, nothing to register */
	assert_false(vfs_rtio_defer_read_reaches(MIN_SIZE, 2 * MIB, 65536, 65536));
	/* the file has grown (another client wrote it): registered */
	assert_true(vfs_rtio_defer_read_reaches(MIN_SIZE, 0, MIN_SIZE, 4 * MIB));
	assert_true(vfs_rtio_defer_read_reaches(MIN_SIZE, 0, 2 * MIB, MIN_SIZE));
	assert_true(vfs_rtio_defer_read_reaches(MIN_SIZE, 3 * MIB, 65536, 4 * MIB));
	/* a read inside the first MiB of a big file: still local */
	assert_false(vfs_rtio_defer_read_reaches(MIN_SIZE, 0, 65536, 4 * MIB));
	assert_true(vfs_rtio_defer_read_reaches(0, 0, 1, 0));
}

/* aiod refused the file when it grew: no I/O ever registers it again. */
static void test_defer_never_after_refusal(void **state)
{
	(void)state;
	assert_false(vfs_rtio_defer_write_reaches(VFS_RTIO_DEFER_NEVER, 0, 0));
	assert_false(vfs_rtio_defer_write_reaches(VFS_RTIO_DEFER_NEVER, 100 * MIB, 100 * MIB));
	assert_false(vfs_rtio_defer_write_reaches(VFS_RTIO_DEFER_NEVER, UINT64_MAX - 1, 1));
	assert_false(vfs_rtio_defer_read_may_reach(VFS_RTIO_DEFER_NEVER, 0, SIZE_MAX));
	assert_false(vfs_rtio_defer_read_reaches(VFS_RTIO_DEFER_NEVER, 0, 8 * MIB, UINT64_MAX));
}

/* offset + n past 64 bits reaches any size; it must not wrap to a small one. */
static void test_defer_no_wraparound(void **state)
{
	(void)state;
	assert_true(vfs_rtio_defer_write_reaches(MIN_SIZE, UINT64_MAX - 10, 100));
	assert_true(vfs_rtio_defer_write_reaches(UINT64_MAX - 1, UINT64_MAX - 10, 100));
	assert_false(vfs_rtio_defer_read_reaches(MIN_SIZE, UINT64_MAX - 10, 100, 4096));
	assert_true(vfs_rtio_defer_read_reaches(MIN_SIZE, UINT64_MAX - 10, 100, 2 * MIB));
}

/* A huge threshold (bigger than any file) keeps everything local until then. */
static void test_defer_large_threshold(void **state)
{
	uint64_t big = 1ull << 40;
	struct vfs_rtio_defer_open d = vfs_rtio_defer_open(big, O_RDONLY, 4ull << 30);

	(void)state;
	assert_int_equal(d.register_at, big);
	assert_false(vfs_rtio_defer_write_reaches(d.register_at, 0, 8 * MIB));
	assert_true(vfs_rtio_defer_write_reaches(d.register_at, big - 1, 1));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defer_default_is_one_block),
		cmocka_unit_test(test_defer_open_by_size),
		cmocka_unit_test(test_defer_threshold_zero_registers_at_open),
		cmocka_unit_test(test_defer_trunc_and_creat_invalidate),
		cmocka_unit_test(test_defer_write_crossing),
		cmocka_unit_test(test_defer_read_stops_at_eof),
		cmocka_unit_test(test_defer_never_after_refusal),
		cmocka_unit_test(test_defer_no_wraparound),
		cmocka_unit_test(test_defer_large_threshold),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("defer", tests, NULL, NULL);
}
