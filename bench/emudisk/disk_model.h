/*
 * disk_model: a single-spindle hard disk reduced to two numbers.
 *
 * Requests are served one at a time.  Each costs
 *
 *     (offset == end of the previous request ? 0 : seek) + len / rate
 *
 * laid on an absolute timeline: a request starts when it arrived or when the
 * previous one finished, whichever is later.  Callers hold the head between
 * disk_model_acquire() and disk_model_release(), move their bytes in between
 * and sleep until the returned end time, so queueing delay, seek and transfer
 * add up to what a real spindle would charge, whatever the host's overheads.
 */
#ifndef EMUDISK_DISK_MODEL_H
#define EMUDISK_DISK_MODEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "req_stats.h"

struct disk_model_params {
	double seek_ms;      /* cost of any non-contiguous request */
	double mb_per_s;     /* media rate, MB = 10^6 bytes */
	double anticipate_us; /* race window, see disk_model_acquire; <= seek/4 */
};

enum disk_dir { DISK_READ = 0, DISK_WRITE = 1 };

struct disk_req {
	/* set by the caller (disk_req_init) */
	uint64_t off;
	uint64_t len;
	enum disk_dir dir;
	/* set by disk_model_acquire */
	int64_t arrival_ns;
	int64_t end_ns;          /* absolute CLOCK_MONOTONIC time the media is done */
	bool seek;
	bool granted;
	struct disk_req *next;   /* waiting list */
};

struct disk_model {
	struct disk_model_params params;
	int64_t seek_ns;
	double ns_per_byte;
	int64_t anticipate_ns;

	pthread_mutex_t lock;
	pthread_cond_t changed_cv;   /* a grant or an arrival happened */
	struct disk_req *waiting;    /* arrival order */
	bool busy;                   /* a granted request holds the head */
	bool anticipating;           /* an arrival holds the idle head briefly */
	uint64_t head_pos;           /* byte after the last request served */
	int64_t free_at_ns;          /* when the head finishes the last grant */

	struct req_stats stats;      /* guarded by lock */
};

int64_t disk_model_now_ns(void);

/* Returns 0 or a negative errno (invalid parameters, pthread failures). */
int disk_model_init(struct disk_model *dm, const struct disk_model_params *p);
void disk_model_destroy(struct disk_model *dm);

void disk_req_init(struct disk_req *req, uint64_t off, uint64_t len, enum disk_dir dir);

/* Pure cost function, exposed for tests and for the README arithmetic. */
int64_t disk_model_cost_ns(const struct disk_model *dm, uint64_t len, bool seek);

/*
 * Blocks until the head is granted to req.  The queue is FIFO with one
 * exception, for requests that arrived within anticipate_us of the oldest
 * waiter: among those, one starting where the head stands goes first, and
 * the oldest yields to a waiter ending exactly where it begins.
 *
 * Why: loop cuts a 1 MiB read into two 512 KiB pieces (128 segments of one
 * page) and submits them together; two FUSE threads pick them up and race,
 * so the second piece can reach us first.  The kernel issued them in order,
 * and serving them out of order would charge a seek no disk would see.  For
 * the same reason a request that needs a seek and finds the head idle holds
 * it up to anticipate_us for its predecessor.  That costs no modeled time:
 * service starts at arrival, not when the window closes.
 * Returns 0 or a negative errno.
 */
int disk_model_acquire(struct disk_model *dm, struct disk_req *req);

/* Sleeps until req->end_ns on the absolute timeline.  0 or negative errno. */
int disk_model_wait_media(const struct disk_req *req);

/* Gives the head to the next waiter.  0 or negative errno. */
int disk_model_release(struct disk_model *dm, struct disk_req *req);

/* Copies the counters under the lock; reset clears them afterwards. */
int disk_model_stats(struct disk_model *dm, struct req_stats *out, bool reset);

#endif
