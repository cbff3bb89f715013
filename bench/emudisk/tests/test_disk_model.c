/*
 * Tests of the disk model without FUSE (cmocka).
 * Run: build/emudisk-test [GLOB]  (GLOB: which test names to run, e.g. '*race*').
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../disk_model.h"

static void model_init_seek(struct disk_model *dm, double seek_ms, double anticipate_us)
{
	struct disk_model_params p = {
		.seek_ms = seek_ms, .mb_per_s = 168.0, .anticipate_us = anticipate_us,
	};

	assert_int_equal(disk_model_init(dm, &p), 0);
}

static void model_init(struct disk_model *dm, double anticipate_us)
{
	model_init_seek(dm, 14.5, anticipate_us);
}

/* Polls (white-box) until pred holds under the model's lock, up to 2 s. */
static bool wait_for(struct disk_model *dm, bool (*pred)(struct disk_model *, void *), void *arg)
{
	int i;

	for (i = 0; i < 200000; i++) {
		struct timespec d = { .tv_sec = 0, .tv_nsec = 10000 };
		bool done;

		if (pthread_mutex_lock(&dm->lock) != 0)
			return false;
		done = pred(dm, arg);
		pthread_mutex_unlock(&dm->lock);
		if (done)
			return true;
		nanosleep(&d, NULL);
	}
	return false;
}

static bool is_anticipating(struct disk_model *dm, void *arg)
{
	(void)arg;
	return dm->anticipating;
}

static bool is_waiting(struct disk_model *dm, void *arg)
{
	struct disk_req *w;

	for (w = dm->waiting; w != NULL; w = w->next)
		if (w == arg)
			return true;
	return false;
}

static void test_disk_model_cost(void **state)
{
	struct disk_model dm;

	(void)state;
	model_init(&dm, 0);
	/* 1 MiB at 168 MB/s = 6.2415 ms; plus 14.5 ms seek */
	assert_true(disk_model_cost_ns(&dm, 1048576, false) == 6241524);
	assert_true(disk_model_cost_ns(&dm, 1048576, true) == 6241524 + 14500000);
	assert_true(disk_model_cost_ns(&dm, 0, true) == 14500000);
	disk_model_destroy(&dm);
}

static void test_disk_model_rejects_bad_params(void **state)
{
	struct disk_model dm;
	struct disk_model_params p = { .seek_ms = 14.5, .mb_per_s = 0.0 };

	(void)state;
	assert_true(disk_model_init(&dm, &p) == -EINVAL);
	p.mb_per_s = 168.0;
	p.seek_ms = -1.0;
	assert_true(disk_model_init(&dm, &p) == -EINVAL);
}

static void serve(struct disk_model *dm, uint64_t off, uint64_t len, struct disk_req *req)
{
	disk_req_init(req, off, len, DISK_READ);
	assert_int_equal(disk_model_acquire(dm, req), 0);
	assert_int_equal(disk_model_release(dm, req), 0);
}

/* Contiguous requests queue behind each other on the timeline, seek-free. */
static void test_disk_model_contiguous_no_seek(void **state)
{
	struct disk_model dm;
	struct disk_req a, b, c;
	struct req_stats st;

	(void)state;
	model_init(&dm, 0);
	serve(&dm, 4096, 65536, &a);          /* head parked at 0: a seek */
	serve(&dm, 4096 + 65536, 65536, &b);  /* right behind a */
	serve(&dm, 0, 4096, &c);              /* back: a seek */
	assert_true(a.seek && !b.seek && c.seek);
	/* b was served before a's media time ran out, so it starts at a.end */
	assert_true(b.end_ns == a.end_ns + disk_model_cost_ns(&dm, 65536, false));
	assert_true(disk_model_stats(&dm, &st, true) == 0);
	assert_true(st.dir[DISK_READ].count == 3 && st.dir[DISK_READ].seeks == 2);
	assert_true(st.dir[DISK_READ].by_size[65536 / REQ_STATS_UNIT] == 2);
	assert_true(disk_model_stats(&dm, &st, false) == 0);
	assert_true(st.dir[DISK_READ].count == 0);
	disk_model_destroy(&dm);
}

struct racer {
	struct disk_model *dm;
	struct disk_req req;
	int delay_us;
	int rc;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	struct timespec d = { .tv_sec = 0, .tv_nsec = r->delay_us * 1000L };

	nanosleep(&d, NULL);
	r->rc = disk_model_acquire(r->dm, &r->req);
	if (r->rc == 0)
		r->rc = disk_model_release(r->dm, &r->req);
	return NULL;
}

/*
 * One 1 MiB kernel request split in two; the second half reaches the model
 * first.  The disk must still read it as one sweep:
 *
 *   head at 100M ... seek ... [ first 512K ][ second 512K ]
 *   arrival:                   t+100us       t
 */
static void test_disk_model_split_race_served_in_order(void **state)
{
	struct disk_model dm;
	struct disk_req first;
	struct racer second = { .delay_us = 0 };
	pthread_t t2;

	(void)state;
	/* windows wide enough that a loaded test machine cannot close them */
	model_init_seek(&dm, 1000.0, 200000);
	dm.head_pos = 100 << 20;
	second.dm = &dm;
	disk_req_init(&second.req, 524288, 524288, DISK_READ);
	assert_true(pthread_create(&t2, NULL, racer_main, &second) == 0);
	assert_true(wait_for(&dm, is_anticipating, NULL));
	serve(&dm, 0, 524288, &first);
	assert_true(pthread_join(t2, NULL) == 0);
	assert_true(second.rc == 0);
	assert_true(first.seek && !second.req.seek);
	assert_true(first.end_ns < second.req.end_ns);
	disk_model_destroy(&dm);
}

/* Outside the race window nothing jumps the queue: FIFO. */
static void test_disk_model_fifo_beyond_window(void **state)
{
	struct disk_model dm;
	struct disk_req park;
	struct racer later = { .delay_us = 1000 }, older = { .delay_us = 0 };
	pthread_t t1, t2;

	(void)state;
	model_init(&dm, 300);
	/* park holds the head (at 4096 afterwards) while both others queue */
	disk_req_init(&park, 0, 4096, DISK_READ);
	assert_true(disk_model_acquire(&dm, &park) == 0);
	later.dm = older.dm = &dm;
	disk_req_init(&older.req, 50 << 20, 65536, DISK_READ);
	disk_req_init(&later.req, 4096, 65536, DISK_READ); /* contiguous, but late */
	assert_true(pthread_create(&t1, NULL, racer_main, &older) == 0);
	assert_true(wait_for(&dm, is_waiting, &older.req));
	assert_true(pthread_create(&t2, NULL, racer_main, &later) == 0);
	assert_true(wait_for(&dm, is_waiting, &later.req));
	assert_true(later.req.arrival_ns > older.req.arrival_ns + dm.anticipate_ns);
	assert_true(disk_model_release(&dm, &park) == 0);
	assert_true(pthread_join(t1, NULL) == 0 && pthread_join(t2, NULL) == 0);
	assert_true(older.rc == 0 && later.rc == 0);
	assert_true(older.req.end_ns < later.req.end_ns);
	assert_true(older.req.seek && later.req.seek);
	disk_model_destroy(&dm);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disk_model_cost),
		cmocka_unit_test(test_disk_model_rejects_bad_params),
		cmocka_unit_test(test_disk_model_contiguous_no_seek),
		cmocka_unit_test(test_disk_model_split_race_served_in_order),
		cmocka_unit_test(test_disk_model_fifo_beyond_window),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("emudisk", tests, NULL, NULL);
}
