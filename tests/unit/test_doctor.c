/*
 * Unit tests of aiodctl doctor's pure parts: the aiod.ini look-up (sections,
 * comments, a key of the same name elsewhere) and reading the Samba a
 * module was built for from its bytes.
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
#include <unistd.h>

#include <cmocka.h>

#include "aiodctl_doctor.h"
#include "rtio_version.h"

/* A temporary file holding len bytes of data; its path in path (removed by the caller). */
static void write_temp(char *path, const void *data, size_t len)
{
	int fd;

	strcpy(path, "/tmp/test_doctor.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static const char ini[] =
	"\xef\xbb\xbf; aiod.ini\n"
	"[global]\n"
	"profile = /not/this/one\n"
	"[cache]\r\n"
	"size = 8G   ; the working set\r\n"
	"mlock=no\n"
	"# [admission] in a comment is no section\n"
	"[admission]\n"
	"  mode = demote\n"
	"  profile = /var/lib/aiod/disk.profile  # measured\n";

static void test_ini_get_finds_key_in_its_section(void **state)
{
	char path[64], v[256];

	(void)state;
	write_temp(path, ini, sizeof(ini) - 1);
	assert_int_equal(aiodctl_doctor_ini_get(path, "admission", "profile", v, sizeof(v)), 1);
	assert_string_equal(v, "/var/lib/aiod/disk.profile");
	assert_int_equal(aiodctl_doctor_ini_get(path, "cache", "mlock", v, sizeof(v)), 1);
	assert_string_equal(v, "no");
	assert_int_equal(aiodctl_doctor_ini_get(path, "cache", "size", v, sizeof(v)), 1);
	assert_string_equal(v, "8G");
	assert_int_equal(aiodctl_doctor_ini_get(path, "cache", "profile", v, sizeof(v)), 0);
	assert_int_equal(aiodctl_doctor_ini_get(path, "stream.hd", "match", v, sizeof(v)), 0);
	unlink(path);
}

static void test_ini_get_missing_file(void **state)
{
	char v[16];

	(void)state;
	assert_int_equal(aiodctl_doctor_ini_get("/nonexistent/aiod.ini", "cache", "mlock", v,
						sizeof(v)), -ENOENT);
}

static void test_mark_read_from_bytes(void **state)
{
	static const char blob[] = "\x7f" "ELF\0\0junk\0" RTIO_SAMBA_MARK "4.22.6-Debian-4.22.6+dfsg\0tail";
	char path[64], v[128];

	(void)state;
	write_temp(path, blob, sizeof(blob) - 1);
	assert_int_equal(aiodctl_doctor_module_built_for(path, v, sizeof(v)), 0);
	assert_string_equal(v, "4.22.6-Debian-4.22.6+dfsg");
	unlink(path);
}

/* The mark at the very end of the file, unterminated: read to the end, no further. */
static void test_mark_at_end_of_file(void **state)
{
	static const char blob[] = "xx" RTIO_SAMBA_MARK "4.22";
	char path[64], v[128];

	(void)state;
	write_temp(path, blob, sizeof(blob) - 1);
	assert_int_equal(aiodctl_doctor_module_built_for(path, v, sizeof(v)), 0);
	assert_string_equal(v, "4.22");
	unlink(path);
}

static void test_mark_absent(void **state)
{
	char path[64], v[16];

	(void)state;
	write_temp(path, "no mark here", 12);
	assert_int_equal(aiodctl_doctor_module_built_for(path, v, sizeof(v)), -ENOENT);
	unlink(path);
	write_temp(path, "", 0);
	assert_int_equal(aiodctl_doctor_module_built_for(path, v, sizeof(v)), -ENOENT);
	unlink(path);
	assert_int_equal(aiodctl_doctor_module_built_for("/nonexistent.so", v, sizeof(v)), -ENOENT);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ini_get_finds_key_in_its_section),
		cmocka_unit_test(test_ini_get_missing_file),
		cmocka_unit_test(test_mark_read_from_bytes),
		cmocka_unit_test(test_mark_at_end_of_file),
		cmocka_unit_test(test_mark_absent),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
