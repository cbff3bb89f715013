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
#include "qos_policy.h"
#include "config_dump.h"
#include "ini.h"
#include "profile.h"
#include "rtio_size.h"

static char path[64];

/* The machine's RAM as config.c sees it: the real one unless a test sets fake_ram. */
static uint64_t fake_ram;
uint64_t __real_aiod_phys_mem_bytes(void);
uint64_t __wrap_aiod_phys_mem_bytes(void);
uint64_t __wrap_aiod_phys_mem_bytes(void)
{
	return fake_ram != 0 ? fake_ram : __real_aiod_phys_mem_bytes();
}

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

/*
 * text must be refused, and the message must start "path:line:" and hold
 * each of the words (NULL-terminated).
 */
static void assert_refused_at(const char *text, unsigned line, ...)
{
	struct aiod_config *cfg = NULL;
	char err[512], where[128];
	const char *word;
	va_list ap;

	assert_int_equal(load_text(text, &cfg, err, sizeof(err)), -EINVAL);
	assert_null(cfg);
	/* line 0: an error about the file as a whole ("path: ...") */
	if (line == 0) {
		snprintf(where, sizeof(where), "%s: ", path);
	} else {
		snprintf(where, sizeof(where), "%s:%u: ", path, line);
	}
	if (strncmp(err, where, strlen(where)) != 0) {
		fail_msg("expected '%s' at the start of '%s'", where, err);
	}
	va_start(ap, line);
	while ((word = va_arg(ap, const char *)) != NULL) {
		if (strstr(err, word) == NULL) {
			fail_msg("'%s' not in '%s'", word, err);
		}
	}
	va_end(ap);
}

static void test_config_rejects_key_before_section(void **state)
{
	(void)state;
	assert_refused_at("; sample\nsize = 1G\n[cache]\n", 2, "'size' before any [section]", NULL);
}

static void test_config_rejects_duplicate_key(void **state)
{
	(void)state;
	/* names compare ignoring case, as lookups do: Size and size are one key */
	assert_refused_at("[cache]\nsize = 1G\n\nSize = 2G\n", 4, "[cache] Size given twice",
			  "first at line 2", NULL);
}

static void test_config_rejects_duplicate_section(void **state)
{
	(void)state;
	assert_refused_at("[stream.HD]\nmatch = *.mxf\nbitrate = 100M\n[stream.hd]\nmatch = *.mov\n"
			  "bitrate = 50M\n", 4, "[stream.hd] given twice", "[stream.HD] at line 1",
			  NULL);
	assert_refused_at("[cache]\nsize = 1G\n[engine]\n[cache]\n", 4, "[cache] given twice", NULL);
}

static void test_config_rejects_empty_section_names(void **state)
{
	(void)state;
	assert_refused_at("[global]\n[ ]\n", 2, "empty section name", NULL);
	assert_refused_at("[stream.]\nmatch = *\nbitrate = 1M\n", 1, "[stream.]", "needs a name",
			  NULL);
}

static void test_config_rejects_malformed_lines(void **state)
{
	(void)state;
	assert_refused_at("[global]\nlog_level 3\n", 2, "neither [section] nor key = value",
			  "log_level 3", NULL);
	assert_refused_at("[global\n", 1, "'[' without ']'", NULL);
	assert_refused_at("[global] x\n", 1, "text after ']'", NULL);
	assert_refused_at("[global]\n= 3\n", 2, "empty key name in [global]", NULL);
	assert_refused_at("[stream.a]\nmatch = \"*.mxf\nbitrate = 1M\n", 2, "without its closing",
			  NULL);
	assert_refused_at("[stream.a]\nmatch = \"*.mxf\" x\n", 2, "text after the closing", NULL);
}

static void test_config_rejects_bitrate_in_bytes(void **state)
{
	(void)state;
	assert_refused_at("[stream.hd]\nmatch = *.mxf\nbitrate = 100MB\n", 3, "[stream.hd] bitrate",
			  "'100MB' looks like bytes per second", "bitrate = 800M", NULL);
	assert_refused_at("[stream.hd]\nmatch = *.mxf\nbitrate = 12.5MB/s\n", 3,
			  "bitrate = 100M", NULL);
	assert_refused_at("[stream.hd]\nmatch = *.mxf\nbitrate = fast\n", 3, "[stream.hd] bitrate",
			  "expected bits/s", NULL);
	assert_refused_at("\n[stream.hd]\nmatch = *.mxf\n", 2, "[stream.hd]", "bitrate is required",
			  NULL);
}

static void test_config_rejects_priority(void **state)
{
	(void)state;
	assert_refused_at("[stream.hd]\nmatch = *.mxf\nbitrate = 100M\npriority = high\n", 4,
			  "[stream.hd] priority is not supported", "deadlines", NULL);
}

static void test_config_rejects_cache_larger_than_ram(void **state)
{
	(void)state;
	fake_ram = 1ull << 30;
	assert_refused_at("[global]\n[cache]\nsize = 2G\n", 3, "[cache] size = 2048 MiB",
			  "2147483648 bytes", "memory, 1024 MiB (1073741824 bytes)", NULL);
	fake_ram = 0;
}

static void test_config_cross_key_errors_name_the_line(void **state)
{
	(void)state;
	assert_refused_at("[cache]\nmlock = no\nblock_size = 3M\n", 3, "[cache] block_size",
			  "power of two", NULL);
	assert_refused_at("[admission]\n\nmode = strict\n", 3, "[admission] mode = 'strict'", NULL);
	assert_refused_at("[engine]\nqueue_deepth = 4\n", 2, "unknown key 'queue_deepth' in [engine]",
			  NULL);
	assert_refused_at("[global]\n[qos.gold]\nrate = 1M\n", 3, "[qos.gold]", "rate", NULL);
	assert_refused_at("[global]\n[quota.gold]\nlimit = 1M\n", 2, "unknown section [quota.gold]",
			  NULL);
}

/* [qos.NAME] goes to the policy unit; the policy as a whole is checked against a configured capacity. */
static void test_config_qos_sections(void **state)
{
	struct aiod_config *cfg;
	char err[512];

	(void)state;
	assert_int_equal(load_text("[qos.ingest]\nmatch_user = ingest\nlimit = 200M\n"
				   "[qos.bay]\nmatch_client = 10.0.0.0/24\nreserve = 100M\n",
				   &cfg, err, sizeof(err)), 0);
	assert_non_null(cfg->qos);
	assert_int_equal(cfg->qos->n_rules, 2);
	talloc_free(cfg);
	assert_refused_at("[admission]\ncapacity = 100M\n[qos.a]\nmatch_user = a\nreserve = 80M\n"
			  "[qos.b]\nmatch_user = b\nreserve = 80M\n", 0, "[qos.a]", "[qos.b]",
			  "capacity", NULL);
	assert_refused_at("[qos.a]\nmatch_user = a\nlimit = lots\n", 3, "[qos.a]", "limit", NULL);
	assert_refused_at("[qos.a]\n", 1, "[qos.a]", "at least", NULL);
}

static void test_config_accepts_quotes_comments_and_case(void **state)
{
	struct aiod_config *cfg;
	char err[256];

	(void)state;
	assert_int_equal(load_text("# sample\n[Cache]\nSize = 1G ; one gibibyte\n"
				   "[stream.HD]\nmatch = \"a;b#c.mxf\"  # quoted: kept whole\n"
				   "bitrate = '100M'\n[stream.sd]\nmatch=*.mov\nbitrate=10M\n",
				   &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg->cache_size, 1ull << 30);
	assert_int_equal(cfg->n_classes, 2);
	assert_string_equal(cfg->classes[0].name, "HD");
	assert_string_equal(cfg->classes[0].match, "a;b#c.mxf");
	assert_int_equal(cfg->classes[0].bitrate, 100000000ull);
	assert_int_equal(cfg->classes[0].line, 4);
	assert_int_equal(cfg->classes[1].key_line[AIOD_STREAM_BITRATE], 9);
	assert_true(aiod_config_is_set(cfg, "cache", "size"));
	talloc_free(cfg);
}

static void test_config_ini_keeps_order_and_lines(void **state)
{
	struct aiod_ini *ini;
	char err[256];

	(void)state;
	/* a byte order mark, CRLF line ends */
	assert_int_equal(aiod_ini_parse(NULL, "x.ini", "\xEF\xBB\xBF\r\n[b]\r\nK2 = v 2 \r\n\n[a]\nk1=\n",
					&ini, err, sizeof(err)), 0);
	assert_int_equal(ini->nsections, 2);
	assert_string_equal(ini->sections[0].name, "b");
	assert_int_equal(ini->sections[0].line, 2);
	assert_string_equal(ini->sections[0].keys[0].name, "K2");
	assert_string_equal(ini->sections[0].keys[0].value, "v 2");
	assert_int_equal(ini->sections[0].keys[0].line, 3);
	assert_string_equal(aiod_ini_get(ini, "A", "K1"), "");
	assert_null(aiod_ini_get(ini, "a", "k2"));
	talloc_free(ini);
}

/* --dump-config: each key's value and where it came from, derived ones included. */
static void test_config_dump_names_sources(void **state)
{
	struct aiod_profile prof = { .version = AIOD_PROFILE_VERSION, .request_us = 10000,
				     .npoints = 1, .points = { { 1 << 20, 50000000, 50000000 } } };
	char profile_path[] = "/tmp/rtio-cfgprof-XXXXXX", text[256], err[256], *out = NULL;
	struct aiod_config *cfg;
	size_t outlen = 0;
	FILE *f;
	int fd = mkstemp(profile_path);

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_int_equal(aiod_profile_write(&prof, f, "test"), 0);
	fclose(f);
	snprintf(text, sizeof(text), "[cache]\nsize = 1G\n[admission]\nprofile = %s\n"
		 "[stream.hd]\nmatch = *.mxf\nbitrate = 100M\n", profile_path);
	assert_int_equal(load_text(text, &cfg, err, sizeof(err)), 0);
	f = open_memstream(&out, &outlen);
	assert_int_equal(aiod_config_dump(cfg, f, cfg, path), 0);
	fclose(f);
	snprintf(text, sizeof(text), "size = 1G\t; %s:2\n", path);
	assert_non_null(strstr(out, text));
	assert_non_null(strstr(out, "block_size = 1M\t; default\n"));
	snprintf(text, sizeof(text), "io_size = 1M\t; derived from profile %s\n", profile_path);
	assert_non_null(strstr(out, text));
	assert_non_null(strstr(out, "[stream.hd]\nmatch = *.mxf\t;"));
	assert_non_null(strstr(out, "bitrate = 100M\t;"));
	assert_non_null(strstr(out, "prebuffer_ms = 1000\t; default\n"));
	free(out);
	unlink(profile_path);
	talloc_free(cfg);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_config_values_and_units),
		cmocka_unit_test(test_config_errors_name_the_key),
		cmocka_unit_test(test_config_parse_size),
		cmocka_unit_test(test_config_reload_applies_only_reloadable),
		cmocka_unit_test(test_config_rejects_key_before_section),
		cmocka_unit_test(test_config_rejects_duplicate_key),
		cmocka_unit_test(test_config_rejects_duplicate_section),
		cmocka_unit_test(test_config_rejects_empty_section_names),
		cmocka_unit_test(test_config_rejects_malformed_lines),
		cmocka_unit_test(test_config_rejects_bitrate_in_bytes),
		cmocka_unit_test(test_config_rejects_priority),
		cmocka_unit_test(test_config_rejects_cache_larger_than_ram),
		cmocka_unit_test(test_config_cross_key_errors_name_the_line),
		cmocka_unit_test(test_config_qos_sections),
		cmocka_unit_test(test_config_accepts_quotes_comments_and_case),
		cmocka_unit_test(test_config_ini_keeps_order_and_lines),
		cmocka_unit_test(test_config_dump_names_sources),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
