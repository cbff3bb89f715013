/*
 * Tests of the disk model without FUSE.  Run: build/emudisk-test [FILTER]
 * (FILTER: substring of the test names to run).
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../disk_model.h"
#include "../size_arg.h"

static int failures;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, \
				__LINE__, __func__, #cond);                      \
			failures++;                                              \
			return;                                                  \
		}                                                                \
	} while (0)

static void model_init_seek(struct disk_model *dm, double seek_ms, double anticipate_us)
{
	struct disk_model_params p = {
		.seek_ms = seek_ms, .mb_per_s = 168.0, .anticipate_us = anticipate_us,
	};

	if (disk_model_init(dm, &p) != 0) {
		fprintf(stderr, "disk_model_init failed\n");
		exit(1);
	}
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

static void test_disk_model_cost(void)
{
	struct disk_model dm;

	model_init(&dm, 0);
	/* 1 MiB at 168 MB/s = 6.2415 ms; plus 14.5 ms seek */
	CHECK(disk_model_cost_ns(&dm, 1048576, false) == 6241524);
	CHECK(disk_model_cost_ns(&dm, 1048576, true) == 6241524 + 14500000);
	CHECK(disk_model_cost_ns(&dm, 0, true) == 14500000);
	disk_model_destroy(&dm);
}

static void test_disk_model_rejects_bad_params(void)
{
	struct disk_model dm;
	struct disk_model_params p = { .seek_ms = 14.5, .mb_per_s = 0.0 };

	CHECK(disk_model_init(&dm, &p) == -EINVAL);
	p.mb_per_s = 168.0;
	p.seek_ms = -1.0;
	CHECK(disk_model_init(&dm, &p) == -EINVAL);
}

static void serve(struct disk_model *dm, uint64_t off, uint64_t len, struct disk_req *req)
{
	disk_req_init(req, off, len, DISK_READ);
	if (disk_model_acquire(dm, req) != 0 || disk_model_release(dm, req) != 0) {
		fprintf(stderr, "acquire/release failed\n");
		exit(1);
	}
}

/* Contiguous requests queue behind each other on the timeline, seek-free. */
static void test_disk_model_contiguous_no_seek(void)
{
	struct disk_model dm;
	struct disk_req a, b, c;
	struct req_stats st;

	model_init(&dm, 0);
	serve(&dm, 4096, 65536, &a);          /* head parked at 0: a seek */
	serve(&dm, 4096 + 65536, 65536, &b);  /* right behind a */
	serve(&dm, 0, 4096, &c);              /* back: a seek */
	CHECK(a.seek && !b.seek && c.seek);
	/* b was served before a's media time ran out, so it starts at a.end */
	CHECK(b.end_ns == a.end_ns + disk_model_cost_ns(&dm, 65536, false));
	CHECK(disk_model_stats(&dm, &st, true) == 0);
	CHECK(st.dir[DISK_READ].count == 3 && st.dir[DISK_READ].seeks == 2);
	CHECK(st.dir[DISK_READ].by_size[65536 / REQ_STATS_UNIT] == 2);
	CHECK(disk_model_stats(&dm, &st, false) == 0);
	CHECK(st.dir[DISK_READ].count == 0);
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
static void test_disk_model_split_race_served_in_order(void)
{
	struct disk_model dm;
	struct disk_req first;
	struct racer second = { .delay_us = 0 };
	pthread_t t2;

	/* windows wide enough that a loaded test machine cannot close them */
	model_init_seek(&dm, 1000.0, 200000);
	dm.head_pos = 100 << 20;
	second.dm = &dm;
	disk_req_init(&second.req, 524288, 524288, DISK_READ);
	CHECK(pthread_create(&t2, NULL, racer_main, &second) == 0);
	CHECK(wait_for(&dm, is_anticipating, NULL));
	serve(&dm, 0, 524288, &first);
	CHECK(pthread_join(t2, NULL) == 0);
	CHECK(second.rc == 0);
	CHECK(first.seek && !second.req.seek);
	CHECK(first.end_ns < second.req.end_ns);
	disk_model_destroy(&dm);
}

/* Outside the race window nothing jumps the queue: FIFO. */
static void test_disk_model_fifo_beyond_window(void)
{
	struct disk_model dm;
	struct disk_req park;
	struct racer later = { .delay_us = 1000 }, older = { .delay_us = 0 };
	pthread_t t1, t2;

	model_init(&dm, 300);
	/* park holds the head (at 4096 afterwards) while both others queue */
	disk_req_init(&park, 0, 4096, DISK_READ);
	CHECK(disk_model_acquire(&dm, &park) == 0);
	later.dm = older.dm = &dm;
	disk_req_init(&older.req, 50 << 20, 65536, DISK_READ);
	disk_req_init(&later.req, 4096, 65536, DISK_READ); /* contiguous, but late */
	CHECK(pthread_create(&t1, NULL, racer_main, &older) == 0);
	CHECK(wait_for(&dm, is_waiting, &older.req));
	CHECK(pthread_create(&t2, NULL, racer_main, &later) == 0);
	CHECK(wait_for(&dm, is_waiting, &later.req));
	CHECK(later.req.arrival_ns > older.req.arrival_ns + dm.anticipate_ns);
	CHECK(disk_model_release(&dm, &park) == 0);
	CHECK(pthread_join(t1, NULL) == 0 && pthread_join(t2, NULL) == 0);
	CHECK(older.rc == 0 && later.rc == 0);
	CHECK(older.req.end_ns < later.req.end_ns);
	CHECK(older.req.seek && later.req.seek);
	disk_model_destroy(&dm);
}

static void test_size_arg_parse(void)
{
	uint64_t v;

	CHECK(size_arg_parse("4G", &v) == 0 && v == 4ULL << 30);
	CHECK(size_arg_parse("64KiB", &v) == 0 && v == 65536);
	CHECK(size_arg_parse("4096", &v) == 0 && v == 4096);
	CHECK(size_arg_parse("0", &v) == -1);
	CHECK(size_arg_parse("4X", &v) == -1);
	CHECK(size_arg_parse("-1", &v) == -1);
	CHECK(size_arg_parse("99999999999T", &v) == -1);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "test_disk_model_cost", test_disk_model_cost },
	{ "test_disk_model_rejects_bad_params", test_disk_model_rejects_bad_params },
	{ "test_disk_model_contiguous_no_seek", test_disk_model_contiguous_no_seek },
	{ "test_disk_model_split_race_served_in_order", test_disk_model_split_race_served_in_order },
	{ "test_disk_model_fifo_beyond_window", test_disk_model_fifo_beyond_window },
	{ "test_size_arg_parse", test_size_arg_parse },
};

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : "";
	size_t i;
	int ran = 0;

	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strstr(tests[i].name, filter) == NULL)
			continue;
		int before = failures;

		tests[i].fn();
		printf("%s %s\n", failures == before ? "ok  " : "FAIL", tests[i].name);
		ran++;
	}
	if (ran == 0) {
		fprintf(stderr, "no test matches '%s'\n", filter);
		return 2;
	}
	return failures ? 1 : 0;
}
