/*
 * The session fuzzer's corpus as a unit test: every input under
 * tests/fuzz/corpus/session runs through the same harness as fuzz_session
 * (session_harness.c), without libFuzzer, so `make check` replays it with the
 * plain and the ASan/UBSan build. One test per input; a broken invariant
 * aborts with the reason, a sanitizer report names the bug.
 *
 *   replay_session [DIR|FILE]...   (default: the committed corpus)
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "session_harness.h"

#ifndef FUZZ_SESSION_CORPUS
#define FUZZ_SESSION_CORPUS "tests/fuzz/corpus/session"
#endif

#define MAX_INPUTS 4096
#define MAX_INPUT_SIZE (1u << 20)

static struct fz_world *world;

static int world_up(void **state)
{
	(void)state;
	world = fz_world_create();
	return 0;
}

static int world_down(void **state)
{
	(void)state;
	fz_world_destroy(world);
	return 0;
}

static void test_replay_input(void **state)
{
	const char *path = *state;
	FILE *f = fopen(path, "rb");
	uint8_t *data = malloc(MAX_INPUT_SIZE);
	size_t n;

	assert_non_null(f);
	assert_non_null(data);
	n = fread(data, 1, MAX_INPUT_SIZE, f);
	assert_int_equal(ferror(f), 0);
	assert_int_equal(fclose(f), 0);
	/* On stderr before the run: an abort inside it names no file. */
	fprintf(stderr, "replay_session: %s (%zu bytes)\n", path, n);
	fz_world_run(world, data, n);
	free(data);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct CMUnitTest *)a)->name, ((const struct CMUnitTest *)b)->name);
}

/* Add path (a file, or every file in a directory) to the tests. */
static int add_inputs(const char *path, struct CMUnitTest *tests, size_t *n)
{
	struct stat st;
	struct dirent *e;
	DIR *d;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay_session: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (*n == MAX_INPUTS) {
			fprintf(stderr, "replay_session: more than %d inputs\n", MAX_INPUTS);
			return -1;
		}
		tests[*n] = (struct CMUnitTest){ .name = strdup(path), .test_func = test_replay_input };
		if (tests[*n].name == NULL) {
			return -1;
		}
		tests[*n].initial_state = (void *)(uintptr_t)tests[*n].name;
		(*n)++;
		return 0;
	}
	d = opendir(path);
	if (d == NULL) {
		fprintf(stderr, "replay_session: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char sub[4096];

		if (e->d_name[0] == '.') {
			continue;
		}
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (add_inputs(sub, tests, n) != 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	static struct CMUnitTest tests[MAX_INPUTS];
	size_t n = 0;
	int ret;

	if (argc < 2) {
		/* The corpus, and every crash the fuzzer found (fixed since: regressions). */
		ret = add_inputs(FUZZ_SESSION_CORPUS, tests, &n);
		if (ret == 0) {
			ret = add_inputs(FUZZ_SESSION_CRASHES, tests, &n);
		}
	} else {
		ret = 0;
		for (int i = 1; i < argc && ret == 0; i++) {
			ret = add_inputs(argv[i], tests, &n);
		}
	}
	if (ret != 0 || n == 0) {
		fprintf(stderr, "replay_session: no inputs\n");
		return 1;
	}
	qsort(tests, n, sizeof(tests[0]), by_name);	/* the same order on every run */
	ret = _cmocka_run_group_tests("replay_session", tests, n, world_up, world_down);
	for (size_t i = 0; i < n; i++) {
		free((void *)(uintptr_t)tests[i].name);
	}
	return ret;
}
