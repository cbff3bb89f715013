/*
 * Unit tests: aiod.ini validation (aiod/config.c).
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

#include "config.h"
#include "rtio_size.h"

static char path[64];

/* Load text as an ini file; err gets the message. */
static int load_text(const char *text, struct aiod_config **cfg, char *err, size_t errlen)
{
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/rtio-cfgtest-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	err[0] = '\0';
	{
		int ret = aiod_config_load(NULL, path, cfg, err, errlen);
		unlink(path);
		return ret;
	}
}

static void test_config_defaults(void **state)
{
	struct aiod_config *cfg;
	char err[256];

	(void)state;
	assert_int_equal(aiod_config_load(NULL, NULL, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg->socket_path, "/run/aiod/aiod.sock");
	assert_int_equal(cfg->cache_size, 256ull << 20);
	assert_int_equal(cfg->block_size, 1 << 20);
	assert_true(cfg->mlock);
	assert_int_equal(cfg->max_io, 8 << 20);
	talloc_free(cfg);
}

static void test_config_values_and_units(void **state)
{
	struct aiod_config *cfg;
	char err[256];

	(void)state;
	assert_int_equal(load_text("[cache]\nsize = 1G\nblock_size = 2M\nmlock = no\n"
				   "[engine]\nqueue_depth = 4\nmax_io = 64M\n"
				   "[stream.hd]\nmatch = *.mxf\nbitrate = 100M\nprebuffer_ms = 500\n",
				   &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg->cache_size, 1ull << 30);
	assert_int_equal(cfg->block_size, 2 << 20);
	assert_false(cfg->mlock);
	assert_int_equal(cfg->queue_depth, 4);
	/* max_io is clamped to what one reply can describe. */
	assert_int_equal(cfg->max_io, 15u * (2 << 20));
	assert_int_equal(cfg->n_classes, 1);
	assert_string_equal(cfg->classes[0].match, "*.mxf");
	assert_int_equal(cfg->classes[0].bitrate, 100000000ull);
	assert_int_equal(cfg->classes[0].prebuffer_ms, 500);
	talloc_free(cfg);
}

static void test_config_errors_name_the_key(void **state)
{
	struct aiod_config *cfg;
	char err[256];

	(void)state;
	assert_int_equal(load_text("[cache]\nblock_size = 3M\n", &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "block_size"));
	assert_non_null(strstr(err, "power of two"));
	assert_int_equal(load_text("[cache]\nsize = 1P\n", &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "[cache] size"));
	assert_int_equal(load_text("[engine]\nqueue_depth = 0\n", &cfg, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "queue_depth"));
	assert_int_equal(load_text("[engine]\nqueue_depth = -3\n", &cfg, err, sizeof(err)), -EINVAL);
	assert_int_equal(load_text("[cache]\nmlock = maybe\n", &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mlock"));
	assert_int_equal(load_text("[cache]\nsise = 1G\n", &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown key 'sise'"));
	assert_int_equal(load_text("[cahce]\nsize = 1G\n", &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown section"));
	assert_int_equal(load_text("[global]\nallow_users = no-such-user-rtio\n", &cfg, err,
				   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no-such-user-rtio"));
	assert_int_equal(load_text("[stream.x]\nbitrate = 100M\n", &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "match"));
	assert_int_equal(load_text("[stream.x]\nmatch = *.mov\nbitrate = fast\n", &cfg, err,
				   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bitrate"));
	assert_int_equal(load_text("[cache]\nsize = 16M\nblock_size = 16M\n", &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "16 blocks"));
	assert_int_equal(aiod_config_load(NULL, "/nonexistent/aiod.ini", &cfg, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/aiod.ini"));
}

static void test_config_parse_size(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(rtio_size_parse("64K", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(rtio_size_parse("2MiB", &v), 0);
	assert_int_equal(v, 2 << 20);
	assert_int_equal(rtio_size_parse("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(rtio_size_parse("", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("-1M", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("12Q", &v), -EINVAL);
	assert_int_equal(rtio_size_parse("99999999999999T", &v), -ERANGE);
}

static void test_config_reload_applies_only_reloadable(void **state)
{
	struct aiod_config *cur, *next;
	char err[256];

	(void)state;
	assert_int_equal(aiod_config_load(NULL, NULL, &cur, err, sizeof(err)), 0);
	assert_int_equal(load_text("[cache]\nsize = 512M\npin_wait_ms = 10\n", &next, err,
				   sizeof(err)), 0);
	assert_int_equal(aiod_config_reload(cur, next), 1);	/* size needs a restart */
	assert_int_equal(cur->cache_size, 256ull << 20);
	assert_int_equal(cur->pin_wait_ms, 10);
	talloc_free(cur);
	talloc_free(next);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_config_values_and_units),
		cmocka_unit_test(test_config_errors_name_the_key),
		cmocka_unit_test(test_config_parse_size),
		cmocka_unit_test(test_config_reload_applies_only_reloadable),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
