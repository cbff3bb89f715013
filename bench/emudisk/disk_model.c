#include "disk_model.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

int64_t disk_model_now_ns(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC cannot fail with a valid clock id and pointer */
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int disk_model_init(struct disk_model *dm, const struct disk_model_params *p)
{
	pthread_condattr_t attr;
	int rc;

	if (!(p->seek_ms >= 0.0 && p->seek_ms < 10000.0) ||
	    !(p->mb_per_s > 0.0 && isfinite(p->mb_per_s)) ||
	    !(p->anticipate_us >= 0.0 && p->anticipate_us < 1e6))
		return -EINVAL;
	memset(dm, 0, sizeof(*dm));
	dm->params = *p;
	dm->seek_ns = (int64_t)llround(p->seek_ms * 1e6);
	dm->ns_per_byte = 1e9 / (p->mb_per_s * 1e6);
	/* the window must stay far below the seek it is hidden in */
	dm->anticipate_ns = (int64_t)llround(p->anticipate_us * 1e3);
	if (dm->anticipate_ns > dm->seek_ns / 4)
		dm->anticipate_ns = dm->seek_ns / 4;
	rc = pthread_mutex_init(&dm->lock, NULL);
	if (rc != 0)
		return -rc;
	rc = pthread_condattr_init(&attr);
	if (rc == 0) {
		rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		if (rc == 0)
			rc = pthread_cond_init(&dm->changed_cv, &attr);
		pthread_condattr_destroy(&attr);
	}
	if (rc != 0) {
		pthread_mutex_destroy(&dm->lock);
		return -rc;
	}
	/* the head starts parked at 0, idle since "forever" */
	dm->free_at_ns = 0;
	return 0;
}

void disk_model_destroy(struct disk_model *dm)
{
	pthread_cond_destroy(&dm->changed_cv);
	pthread_mutex_destroy(&dm->lock);
}

void disk_req_init(struct disk_req *req, uint64_t off, uint64_t len, enum disk_dir dir)
{
	memset(req, 0, sizeof(*req));
	req->off = off;
	req->len = len;
	req->dir = dir;
}

int64_t disk_model_cost_ns(const struct disk_model *dm, uint64_t len, bool seek)
{
	return (seek ? dm->seek_ns : 0) + (int64_t)llround((double)len * dm->ns_per_byte);
}

/* First waiter starting at off that arrived no later than by_ns. */
static struct disk_req **find_starting_at(struct disk_model *dm, uint64_t off, int64_t by_ns)
{
	struct disk_req **pp;

	for (pp = &dm->waiting; *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->off == off && (*pp)->arrival_ns <= by_ns)
			return pp;
	return NULL;
}

/* First waiter ending at off that arrived no later than by_ns. */
static struct disk_req **find_ending_at(struct disk_model *dm, uint64_t off, int64_t by_ns)
{
	struct disk_req **pp;

	for (pp = &dm->waiting; *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->off + (*pp)->len == off && (*pp)->arrival_ns <= by_ns)
			return pp;
	return NULL;
}

/*
 * Called with dm->lock held, the head idle and at least one waiter.
 * FIFO, except among requests that arrived within anticipate_ns of the
 * oldest: those are pieces the kernel submitted together and FUSE threads
 * delivered in a race, so serve them in offset order.  Nothing outside that
 * window jumps the queue, so a sequential reader cannot starve the others.
 */
static void grant_next(struct disk_model *dm)
{
	int64_t window_end = dm->waiting->arrival_ns + dm->anticipate_ns;
	struct disk_req **pick = find_starting_at(dm, dm->head_pos, window_end);
	struct disk_req **pred;
	struct disk_req *req;
	int64_t start;

	if (pick == NULL) {
		/* offsets strictly decrease along the chain, so this ends */
		pick = &dm->waiting;
		while ((pred = find_ending_at(dm, (*pick)->off, window_end)) != NULL)
			pick = pred;
	}
	req = *pick;
	*pick = req->next;
	req->next = NULL;

	start = req->arrival_ns > dm->free_at_ns ? req->arrival_ns : dm->free_at_ns;
	req->seek = req->off != dm->head_pos;
	req->end_ns = start + disk_model_cost_ns(dm, req->len, req->seek);
	dm->free_at_ns = req->end_ns;
	dm->head_pos = req->off + req->len;
	dm->busy = true;
	req->granted = true;
	req_stats_note(&dm->stats, req->dir, req->len, req->seek,
		       req->end_ns - start, start - req->arrival_ns);
}

/* Called with dm->lock held by a request that found the head idle. */
static int anticipate(struct disk_model *dm, const struct disk_req *req)
{
	int64_t deadline = req->arrival_ns + dm->anticipate_ns;
	struct timespec ts = {
		.tv_sec = deadline / 1000000000,
		.tv_nsec = deadline % 1000000000,
	};
	int rc = 0;

	dm->anticipating = true;
	while (find_starting_at(dm, dm->head_pos, INT64_MAX) == NULL &&
	       find_ending_at(dm, req->off, INT64_MAX) == NULL) {
		rc = pthread_cond_timedwait(&dm->changed_cv, &dm->lock, &ts);
		if (rc != 0)
			break;
	}
	dm->anticipating = false;
	return rc == ETIMEDOUT ? 0 : rc;
}

static void unlink_waiter(struct disk_model *dm, struct disk_req *req)
{
	struct disk_req **pp;

	for (pp = &dm->waiting; *pp != NULL; pp = &(*pp)->next)
		if (*pp == req) {
			*pp = req->next;
			return;
		}
}

int disk_model_acquire(struct disk_model *dm, struct disk_req *req)
{
	struct disk_req **tail;
	int rc;

	rc = pthread_mutex_lock(&dm->lock);
	if (rc != 0)
		return -rc;
	req->arrival_ns = disk_model_now_ns();
	req->granted = false;
	req->next = NULL;
	for (tail = &dm->waiting; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = req;

	if (!dm->busy && !dm->anticipating) {
		if (req->off != dm->head_pos && dm->anticipate_ns > 0)
			rc = anticipate(dm, req);
		if (rc == 0)
			grant_next(dm);
	}
	if (rc == 0)
		rc = pthread_cond_broadcast(&dm->changed_cv);
	while (rc == 0 && !req->granted)
		rc = pthread_cond_wait(&dm->changed_cv, &dm->lock);
	if (rc != 0 && !req->granted)
		unlink_waiter(dm, req); /* never leave a dead stack frame listed */
	pthread_mutex_unlock(&dm->lock);
	return -rc;
}

int disk_model_wait_media(const struct disk_req *req)
{
	struct timespec ts = {
		.tv_sec = req->end_ns / 1000000000,
		.tv_nsec = req->end_ns % 1000000000,
	};
	int rc;

	do
		rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	while (rc == EINTR);
	return -rc;
}

int disk_model_release(struct disk_model *dm, struct disk_req *req)
{
	int rc;

	(void)req;
	rc = pthread_mutex_lock(&dm->lock);
	if (rc != 0)
		return -rc;
	dm->busy = false;
	if (dm->waiting != NULL)
		grant_next(dm);
	rc = pthread_cond_broadcast(&dm->changed_cv);
	pthread_mutex_unlock(&dm->lock);
	return -rc;
}

int disk_model_stats(struct disk_model *dm, struct req_stats *out, bool reset)
{
	int rc = pthread_mutex_lock(&dm->lock);

	if (rc != 0)
		return -rc;
	memcpy(out, &dm->stats, sizeof(*out));
	if (reset)
		req_stats_clear(&dm->stats);
	pthread_mutex_unlock(&dm->lock);
	return 0;
}
