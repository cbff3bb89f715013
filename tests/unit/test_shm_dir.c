/*
 * Unit tests: the cache's index in the shared region (aiod/cache_dir.c) as a
 * client reads it (common/rtio_shm.c): what is found, what is refused, and
 * that a copy racing aiod's changes is never accepted torn.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cache.h"
#include "cache_dir.h"
#include "rtio_shm.h"

#define BS 4096
#define NB 8

struct fixture {
	uint8_t *base;		/* the region as aiod lays it out */
	struct rtio_shm_layout l;
	struct aiod_cache *c;
	uint8_t buf[3 * BS];
};

static int setup(void **state)
{
	struct fixture *f = talloc_zero(NULL, struct fixture);
	struct rtio_shm_header *h;

	assert_non_null(f);
	rtio_shm_layout(BS, NB, &f->l);
	assert_int_equal(posix_memalign((void **)&f->base, 4096, f->l.size), 0);
	memset(f->base, 0xee, f->l.size);
	h = (struct rtio_shm_header *)f->base;
	memset(h, 0, sizeof(*h));
	h->magic = RTIO_SHM_MAGIC;
	h->version = RTIO_SHM_VERSION;
	h->size = f->l.size;
	h->block_size = BS;
	h->nblocks = NB;
	h->data_off = f->l.data_off;
	h->dir_off = f->l.dir_off;
	h->hash_off = f->l.hash_off;
	h->hash_mask = f->l.hash_mask;
	assert_int_equal(rtio_shm_check(h, f->l.size), 0);
	f->c = aiod_cache_create(f, f->base + f->l.data_off, BS, NB);
	assert_non_null(f->c);
	aiod_cache_dir_attach(f->c, (struct rtio_shm_dirent *)(f->base + f->l.dir_off),
			      (uint32_t *)(f->base + f->l.hash_off), f->l.hash_mask);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->base);
	talloc_free(f);
	return 0;
}

/* Start loading (dev 1, ino, blk): hashed, LOADING, one reference (the load's). */
static struct aiod_block *start_load(struct aiod_cache *c, uint64_t ino, uint64_t blk)
{
	struct aiod_block *b = aiod_cache_get(c);

	assert_non_null(b);
	aiod_cache_insert(c, b, 1, ino, blk);
	return b;
}

/* Finish it with n bytes of value v, unreferenced. */
static void finish_load(struct aiod_cache *c, struct aiod_block *b, uint32_t n, int v)
{
	memset(aiod_cache_block_data(c, b), v, n);
	aiod_cache_load_done(c, b, (int)n);
	aiod_cache_unref(c, b);
}

static struct aiod_block *load(struct aiod_cache *c, uint64_t ino, uint64_t blk, uint32_t n, int v)
{
	struct aiod_block *b = start_load(c, ino, blk);

	finish_load(c, b, n, v);
	return b;
}

static size_t copy(struct fixture *f, uint64_t ino, size_t n, uint64_t off)
{
	memset(f->buf, 0, sizeof(f->buf));
	return rtio_shm_dir_copy(f->base, 1, ino, f->buf, n, off);
}

static bool all(const uint8_t *p, size_t n, int v)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != (uint8_t)v) {
			return false;
		}
	}
	return true;
}

static void test_dir_loaded_block_is_copied(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b = start_load(f->c, 10, 2);

	assert_int_equal(copy(f, 10, 100, 2 * BS + 7), 0);	/* loading: not yet */
	finish_load(f->c, b, BS, 'a');
	assert_int_equal(copy(f, 10, 100, 2 * BS + 7), 100);
	assert_true(all(f->buf, 100, 'a'));
	assert_int_equal(copy(f, 10, 100, 3 * BS), 0);		/* the next block: not cached */
	assert_int_equal(copy(f, 11, 100, 2 * BS), 0);		/* another file */
	assert_int_equal(rtio_shm_dir_copy(f->base, 2, 10, f->buf, 100, 2 * BS), 0);	/* device */
	assert_int_equal(copy(f, 10, 0, 2 * BS), 0);		/* nothing asked: ask aiod */
}

static void test_dir_range_needs_every_block(void **state)
{
	struct fixture *f = *state;

	load(f->c, 10, 0, BS, 'a');
	load(f->c, 10, 2, BS, 'c');
	/* Crossing into block 1, which is missing. */
	assert_int_equal(copy(f, 10, BS, BS / 2), 0);
	load(f->c, 10, 1, BS, 'b');
	assert_int_equal(copy(f, 10, 2 * BS, BS / 2), 2 * BS);
	assert_true(all(f->buf, BS / 2, 'a'));
	assert_true(all(f->buf + BS / 2, BS, 'b'));
	assert_true(all(f->buf + BS / 2 + BS, BS / 2, 'c'));
}

static void test_dir_short_block_only_within_valid(void **state)
{
	struct fixture *f = *state;

	/* Cached at EOF: 1000 bytes. A read past them must go to aiod (EOF, or grown). */
	load(f->c, 10, 0, 1000, 'e');
	assert_int_equal(copy(f, 10, 1000, 0), 1000);
	assert_int_equal(copy(f, 10, 1001, 0), 0);
	assert_int_equal(copy(f, 10, 10, 995), 0);
}

static void test_dir_write_through_and_truncate(void **state)
{
	struct fixture *f = *state;
	uint8_t data[200];

	load(f->c, 10, 0, BS, 'a');
	memset(data, 'w', sizeof(data));
	aiod_cache_write_through(f->c, 1, 10, 50, data, sizeof(data));
	assert_int_equal(copy(f, 10, 300, 0), 300);
	assert_true(all(f->buf, 50, 'a'));
	assert_true(all(f->buf + 50, 200, 'w'));
	assert_true(all(f->buf + 250, 50, 'a'));
	aiod_cache_truncate(f->c, 1, 10, 100);
	assert_int_equal(copy(f, 10, 100, 0), 100);
	assert_int_equal(copy(f, 10, 101, 0), 0);
}

static void test_dir_detach_evict_invalidate(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b = load(f->c, 10, 0, BS, 'a');

	aiod_cache_detach(f->c, b);
	assert_int_equal(copy(f, 10, 10, 0), 0);
	load(f->c, 10, 0, BS, 'b');
	assert_int_equal(copy(f, 10, 10, 0), 10);
	assert_int_equal(aiod_cache_invalidate(f->c, 1, 10, 0, 0), 1);
	assert_int_equal(copy(f, 10, 10, 0), 0);
	/* Fill the cache, then one more: the least recently used (block 0) goes. */
	for (uint64_t blk = 0; blk < NB; blk++) {
		load(f->c, 20, blk, BS, 'A' + (int)blk);
	}
	load(f->c, 21, 0, BS, 'z');
	assert_int_equal(copy(f, 20, 10, 0), 0);
	assert_int_equal(copy(f, 20, 10, BS), 10);
	assert_true(all(f->buf, 10, 'B'));
	assert_int_equal(copy(f, 21, 10, 0), 10);
	assert_true(all(f->buf, 10, 'z'));
	assert_int_equal(aiod_cache_drop_all(f->c), NB);
	for (uint64_t blk = 1; blk < NB; blk++) {
		assert_int_equal(copy(f, 20, 10, blk * BS), 0);
	}
	/* A failed load is never found. */
	b = start_load(f->c, 30, 0);
	aiod_cache_load_done(f->c, b, -5);
	aiod_cache_unref(f->c, b);
	assert_int_equal(copy(f, 30, 10, 0), 0);
}

static void test_dir_chains_survive_unlinks(void **state)
{
	struct fixture *f = *state;
	struct aiod_block *b[NB];

	/* Every block of one cache: chains of several entries in 16 buckets. */
	for (uint64_t blk = 0; blk < NB; blk++) {
		b[blk] = load(f->c, 40, blk * 16, BS, 'a' + (int)blk);
	}
	for (uint64_t blk = 0; blk < NB; blk += 2) {
		aiod_cache_detach(f->c, b[blk]);
	}
	for (uint64_t blk = 0; blk < NB; blk++) {
		size_t got = copy(f, 40, 1, blk * 16 * BS);

		assert_int_equal(got, blk % 2 ? 1 : 0);
		if (got) {
			assert_int_equal(f->buf[0], 'a' + (int)blk);
		}
	}
}

/*
 * aiod rewrites a block again and again (all bytes one value each time)
 * while a reader copies it: every copy the reader accepts is one whole
 * version, never half of two.
 */
struct race {
	struct fixture *f;
	volatile bool stop;
	uint64_t writes;
};

static void *race_writer(void *arg)
{
	struct race *r = arg;
	uint8_t data[BS];

	for (int v = 0; !r->stop; v = (v + 1) % 250) {
		memset(data, 'A' + v % 26, sizeof(data));
		aiod_cache_write_through(r->f->c, 1, 50, 0, data, sizeof(data));
		r->writes++;
	}
	return NULL;
}

static void test_dir_copy_never_torn(void **state)
{
	struct fixture *f = *state;
	struct race r = { .f = f };
	pthread_t t;
	unsigned accepted = 0, refused = 0;

	load(f->c, 50, 0, BS, 'A');
	assert_int_equal(pthread_create(&t, NULL, race_writer, &r), 0);
	for (int i = 0; i < 200000 && (accepted < 1000 || refused < 10); i++) {
		if (copy(f, 50, BS, 0) == BS) {
			assert_true(all(f->buf, BS, f->buf[0]));
			accepted++;
		} else {
			refused++;
		}
	}
	r.stop = true;
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(accepted > 0);
	print_message("copies accepted %u, refused %u, writes %llu\n", accepted, refused,
		      (unsigned long long)r.writes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dir_loaded_block_is_copied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_range_needs_every_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_short_block_only_within_valid, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dir_write_through_and_truncate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_detach_evict_invalidate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_chains_survive_unlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_copy_never_torn, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
