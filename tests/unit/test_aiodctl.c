/*
 * Unit tests of aiodctl's pure parts: the table of aiod's counters, the
 * Prometheus text of a snapshot, label escaping and rates between looks.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aiodctl_fields.h"
#include "aiodctl_prom.h"
#include "aiodctl_snapshot.h"

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A counter aiod adds to struct rtio_stats_rep without a row would be invisible. */
static void test_fields_cover_every_stat(void **state)
{
	size_t n = (sizeof(struct rtio_stats_rep) - sizeof(struct rtio_hdr)) / sizeof(uint64_t);
	bool seen[64] = { false };

	(void)state;
	assert_int_equal(aiodctl_n_stat_fields, n);
	for (size_t i = 0; i < aiodctl_n_stat_fields; i++) {
		size_t slot = (aiodctl_stat_fields[i].offset - sizeof(struct rtio_hdr)) / 8;

		assert_true(slot < n);
		assert_false(seen[slot]);
		seen[slot] = true;
	}
}

static void test_fields_prometheus_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < aiodctl_n_stat_fields; i++) {
		const struct aiodctl_stat_field *f = &aiodctl_stat_fields[i];

		assert_true(strncmp(f->metric, "rtio_", 5) == 0);
		assert_int_equal(ends_with(f->metric, "_total"), f->type == AIODCTL_COUNTER);
		assert_null(strpbrk(f->help, "\\\n"));
		for (size_t j = 0; j < i; j++) {
			assert_string_not_equal(f->metric, aiodctl_stat_fields[j].metric);
			assert_string_not_equal(f->key, aiodctl_stat_fields[j].key);
		}
	}
}

static void test_fields_value_reads_its_field(void **state)
{
	struct rtio_stats_rep st = { .bytes_read = 12345, .evictions = 7 };

	(void)state;
	for (size_t i = 0; i < aiodctl_n_stat_fields; i++) {
		const struct aiodctl_stat_field *f = &aiodctl_stat_fields[i];
		uint64_t want = strcmp(f->key, "bytes_read") == 0 ? 12345 :
				strcmp(f->key, "evictions") == 0 ? 7 : 0;

		assert_int_equal(aiodctl_stat_value(&st, f), want);
	}
}

static void test_prom_escape(void **state)
{
	char out[32];

	(void)state;
	assert_string_equal(aiodctl_prom_escape("alice", out, sizeof(out)), "alice");
	assert_string_equal(aiodctl_prom_escape("a\"b\\c\nd", out, sizeof(out)), "a\\\"b\\\\c\\nd");
	/* cut at a whole escape, never half of one */
	assert_string_equal(aiodctl_prom_escape("ab\"", out, 4), "ab");
	assert_string_equal(aiodctl_prom_escape("abc", out, 1), "");
}

/* A snapshot with one class and two sessions, one of them streaming. */
static struct aiodctl_snapshot *fixture(TALLOC_CTX *mem)
{
	struct aiodctl_snapshot *s = talloc_zero(mem, struct aiodctl_snapshot);

	assert_non_null(s);
	snprintf(s->info.version, sizeof(s->info.version), "0.1.0");
	s->info.start_time = 1700000000;
	s->info.uptime_ms = 61500;
	s->info.block_size = 1 << 20;
	s->stats.bytes_read = 4096;
	s->stats.sessions = 2;
	s->stats.engine_resubmits = 3;
	s->stats_len = sizeof(s->stats);
	s->n_classes = 1;
	s->classes = talloc_zero_array(s, struct aiodctl_class, 1);
	assert_non_null(s->classes);
	snprintf(s->classes[0].name, sizeof(s->classes[0].name), "hd");
	s->classes[0].bitrate = 100000000;
	s->classes[0].prebuffer_ms = 1500;
	s->n_sessions = 2;
	s->sessions = talloc_zero_array(s, struct aiodctl_session, 2);
	assert_non_null(s->sessions);
	s->sessions[0].rep = (struct rtio_session_stats_rep) { .pid = 100, .bytes_read = 4096,
							       .lead_ms = 250, .inflight = 3 };
	snprintf(s->sessions[0].user, sizeof(s->sessions[0].user), "ali\"ce");
	s->sessions[1].rep = (struct rtio_session_stats_rep) { .pid = 200, .lead_ms = RTIO_LEAD_NONE };
	snprintf(s->sessions[1].user, sizeof(s->sessions[1].user), "bob");
	return s;
}

static char *prom_text(const struct aiodctl_snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(aiodctl_prom_write(f, s), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_prom_samples(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	char *t = prom_text(fixture(mem));

	(void)state;
	assert_non_null(strstr(t, "\nrtio_client_read_bytes_total 4096\n"));
	assert_non_null(strstr(t, "# TYPE rtio_client_read_bytes_total counter\n"));
	assert_non_null(strstr(t, "# TYPE rtio_sessions gauge\nrtio_sessions 2\n"));
	assert_non_null(strstr(t, "rtio_build_info{version=\"0.1.0\"} 1\n"));
	assert_non_null(strstr(t, "rtio_uptime_seconds 61.500\n"));
	assert_non_null(strstr(t, "rtio_stream_class_bytes_per_second{class=\"hd\"} 12500000\n"));
	assert_non_null(strstr(t, "rtio_stream_class_prebuffer_seconds{class=\"hd\"} 1.500\n"));
	assert_non_null(strstr(t, "rtio_session_read_bytes_total{pid=\"100\",user=\"ali\\\"ce\"} 4096\n"));
	assert_non_null(strstr(t, "rtio_session_requests_in_flight{pid=\"200\",user=\"bob\"} 0\n"));
	/* a lead only for the session that streams */
	assert_non_null(strstr(t, "rtio_session_stream_lead_seconds{pid=\"100\",user=\"ali\\\"ce\"} "
				  "0.250\n"));
	assert_null(strstr(t, "rtio_session_stream_lead_seconds{pid=\"200\""));
	free(t);
	talloc_free(mem);
}

/*
 * An aiod older than aiodctl sends fewer counters: those it sent are shown,
 * the others left out, never shown as a 0 it did not say.
 */
static void test_prom_older_aiod_counters_left_out(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiodctl_snapshot *s = fixture(mem);
	char *t;

	(void)state;
	t = prom_text(s);
	assert_non_null(strstr(t, "\nrtio_engine_resubmits_total 3\n"));
	free(t);
	/* the reply of an aiod from before the engine's counters (384 bytes) */
	s->stats_len = offsetof(struct rtio_stats_rep, engine_queued);
	t = prom_text(s);
	assert_non_null(strstr(t, "\nrtio_client_read_bytes_total 4096\n"));
	assert_null(strstr(t, "rtio_engine_"));
	free(t);
	for (size_t i = 0; i < aiodctl_n_stat_fields; i++) {
		const struct aiodctl_stat_field *f = &aiodctl_stat_fields[i];

		assert_int_equal(aiodctl_stat_sent(s->stats_len, f),
				 f->offset < offsetof(struct rtio_stats_rep, engine_queued));
		assert_true(aiodctl_stat_sent(sizeof(s->stats), f));
	}
	talloc_free(mem);
}

/* Every family has HELP then TYPE before its samples, and each name once. */
static void test_prom_families_declared_once(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	char *t = prom_text(fixture(mem)), *save = NULL, *declared = talloc_strdup(mem, "\n");
	char last_help[128] = "";

	(void)state;
	for (char *l = strtok_r(t, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		char name[128], key[132];

		if (sscanf(l, "# HELP %127s", name) == 1) {
			snprintf(key, sizeof(key), "\n%s\n", name);
			assert_null(strstr(declared, key));
			declared = talloc_asprintf_append(declared, "%s\n", name);
			snprintf(last_help, sizeof(last_help), "%s", name);
		} else if (sscanf(l, "# TYPE %127s", name) == 1) {
			assert_string_equal(name, last_help);
		} else {
			assert_int_equal(strncmp(l, last_help, strlen(last_help)), 0);
		}
	}
	free(t);
	talloc_free(mem);
}

static void test_rates_between_looks(void **state)
{
	TALLOC_CTX *mem = talloc_new(NULL);
	struct aiodctl_snapshot *a = fixture(mem), *b = fixture(mem);

	(void)state;
	a->taken_ns = 1000000000;
	b->taken_ns = 1500000000;	/* half a second later */
	a->sessions[0].rep.session_id = 1;
	b->sessions[0].rep.session_id = 1;
	b->sessions[0].rep.bytes_read = 4096 + 50000000;
	b->sessions[0].rep.bytes_written = 1000;
	a->sessions[1].rep.session_id = 2;
	b->sessions[1].rep.session_id = 3;	/* pid 200 reconnected: a new session */
	aiodctl_rates(a, b);
	assert_true(b->sessions[0].have_rate);
	assert_int_equal(b->sessions[0].read_Bps, 100000000);
	assert_int_equal(b->sessions[0].write_Bps, 2000);
	assert_false(b->sessions[1].have_rate);
	assert_int_equal(aiodctl_rate(10, 5, 1000), 0);	/* a counter never goes back */
	assert_int_equal(aiodctl_rate(0, 5, 0), 0);
	assert_int_equal(aiodctl_rate(0, UINT64_C(1) << 40, 1000000000), UINT64_C(1) << 40);
	talloc_free(mem);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_cover_every_stat),
		cmocka_unit_test(test_fields_prometheus_names),
		cmocka_unit_test(test_fields_value_reads_its_field),
		cmocka_unit_test(test_prom_escape),
		cmocka_unit_test(test_prom_samples),
		cmocka_unit_test(test_prom_families_declared_once),
		cmocka_unit_test(test_prom_older_aiod_counters_left_out),
		cmocka_unit_test(test_rates_between_looks),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
