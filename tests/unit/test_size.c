/*
 * Unit tests of rtio_size_parse(), the one size parser of aiod, its
 * configuration and the benchmark tools.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rtio_size.h"

static uint64_t parsed(const char *s)
{
	uint64_t v = 0;

	assert_int_equal(rtio_size_parse(s, &v), 0);
	return v;
}

static void test_size_plain_bytes(void **state)
{
	(void)state;
	assert_int_equal(parsed("4096"), 4096);
	assert_int_equal(parsed("4096B"), 4096);
	assert_int_equal(parsed("0"), 0);	/* emudisk and stream --chunk refuse it themselves */
}

static void test_size_binary_multiples(void **state)
{
	(void)state;
	assert_int_equal(parsed("64K"), 65536);
	assert_int_equal(parsed("64k"), 65536);
	assert_int_equal(parsed("1M"), 1048576);
	assert_int_equal(parsed("16M"), 16ull << 20);
	assert_int_equal(parsed("4G"), 4ull << 30);
	assert_int_equal(parsed("1T"), 1ull << 40);
}

static void test_size_unit_spellings(void **state)
{
	(void)state;
	assert_int_equal(parsed("64KiB"), 65536);
	assert_int_equal(parsed("2MiB"), 2ull << 20);
	assert_int_equal(parsed("1MB"), 1ull << 20);	/* B is bytes, M still binary */
	assert_int_equal(parsed("1gib"), 1ull << 30);
	assert_int_equal(parsed(" 8M "), 8ull << 20);	/* as an ini value may hold it */
}

static void test_size_rejects_junk(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(rtio_size_parse("", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("-1", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("-1M", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("+1M", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("1.5M", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("4X", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("12Q", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("1iB", &v), -EINVAL);	/* "i" only after a multiple */
	assert_int_equal(rtio_size_parse("1MM", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("M", &v), -EINVAL);
	assert_int_equal(v, 7);	/* untouched on failure */
}

static void test_size_rejects_overflow(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(rtio_size_parse("99999999999T", &v), -ERANGE);
	assert_int_equal(rtio_size_parse("99999999999999T", &v), -ERANGE);
	assert_int_equal(rtio_size_parse("99999999999999999999", &v), -ERANGE);
	assert_int_equal(parsed("18446744073709551615"), UINT64_MAX);
	assert_int_equal(parsed("16777215T"), 16777215ull << 40);
	assert_int_equal(rtio_size_parse("16777216T", &v), -ERANGE);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_plain_bytes),
		cmocka_unit_test(test_size_binary_multiples),
		cmocka_unit_test(test_size_unit_spellings),
		cmocka_unit_test(test_size_rejects_junk),
		cmocka_unit_test(test_size_rejects_overflow),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("size", tests, NULL, NULL);
}
