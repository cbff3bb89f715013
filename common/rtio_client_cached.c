/*
 * rtio client library: reads without a round trip to aiod. Hot ones are
 * copied straight out of aiod's cache; random misses of large files are the
 * caller's own reads while aiod allows it (rtio_client_read_yourself()).
 *
 * The region's directory (rtio_shm.h) says which file blocks the cache holds.
 * Before using it, the client makes sure aiod has no outside write pending
 * (watch_quiet()), as aiod itself does before it serves a READ0.
 * When it holds every byte of a read, the client copies them itself, checks
 * aiod did not change them meanwhile, and tells aiod afterwards with HIT (no
 * reply, never waited for): no round trip and no wake-up on the reader's
 * side. aiod uses the HIT as it would have used the READ0: statistics, the
 * blocks' recency, the stream's read-ahead.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "rtio_client_priv.h"
#include "rtio_shm.h"

/*
 * aiod has applied every change an outside writer made before now: no
 * inotify event is waiting for it, and it is not applying some right now
 * (watch_seq even; the caller checks it did not move until its copy is
 * done). aiod reads events when a READ0 arrives; a read that skips aiod must
 * see for itself that there is nothing to read. Never consumes an event.
 */
static bool watch_quiet(const struct rtio_client *c, uint64_t *ws)
{
	struct pollfd p = { .fd = c->watch_fd, .events = POLLIN };
	int n;

	*ws = __atomic_load_n(&((const struct rtio_shm_header *)c->shm)->watch_seq, __ATOMIC_ACQUIRE);
	if (*ws & 1) {
		return false;
	}
	do {
		n = poll(&p, 1, 0);
	} while (n < 0 && errno == EINTR);
	return n == 0;
}

ssize_t rtio_client_read_cached(struct rtio_client *c, const struct rtio_file *f, void *buf,
				size_t n, off_t off)
{
	struct rtio_io_req hit;
	uint64_t ws = 0;

	if (!c->alive || !(c->features & RTIO_FEAT_HIT) || c->changing > 0 || n == 0 ||
	    n > c->max_io || off < 0) {
		return 0;
	}
	/*
	 * Most reads that are not hits are random reads of files larger than the
	 * cache: a look at the directory (shared memory, no syscall) turns them
	 * away before watch_quiet()'s poll(). Only a pre-check: what counts is the
	 * copy below, made after watch_quiet() and checked against watch_seq.
	 */
	if (!rtio_shm_dir_holds(c->shm, f->dev, f->ino, n, (uint64_t)off) ||
	    !watch_quiet(c, &ws) ||
	    rtio_shm_dir_copy(c->shm, f->dev, f->ino, buf, n, (uint64_t)off) != n ||
	    __atomic_load_n(&((const struct rtio_shm_header *)c->shm)->watch_seq, __ATOMIC_ACQUIRE) !=
		    ws) {
		return 0;
	}
	memset(&hit, 0, sizeof(hit));
	rtio_hdr_init(&hit.hdr, RTIO_OP_HIT, sizeof(hit), 0);
	hit.file_id = f->file_id;
	hit.offset = (uint64_t)off;
	hit.length = (uint32_t)n;
	/*
	 * aiod must hear of every read: a stream's read-ahead follows them, and a
	 * gap would look like a seek to its pattern analyzer. With the queue full
	 * the copy is dropped and the read goes to aiod (READ0 waits for room).
	 */
	return rtio_cl_send_oneway(c, &hit, sizeof(hit)) == 0 ? (ssize_t)n : 0;
}

bool rtio_client_read_continues(const struct rtio_client *c, struct rtio_read_pos *pos, off_t off,
				size_t n)
{
	const struct rtio_shm_header *h = (const struct rtio_shm_header *)c->shm;
	uint64_t bs = h != NULL ? h->block_size : 0;
	uint64_t start = off > 0 ? (uint64_t)off : 0;
	/* requests that arrive a little out of order (several in flight) stay near */
	uint64_t near = 2 * (n > bs ? n : bs);
	bool is_near = start + near >= pos->end && start <= pos->end + near;
	bool continues = is_near && !pos->jumped;

	pos->jumped = !is_near;
	pos->end = start + n;
	return continues;
}

bool rtio_client_read_yourself(const struct rtio_client *c, const struct rtio_file *f,
			       uint64_t file_size, bool continues, off_t off, size_t n)
{
	const struct rtio_shm_header *h = (const struct rtio_shm_header *)c->shm;

	if (!c->alive || h == NULL || off < 0 || n == 0 || f->bitrate != 0 ||
	    f->stream_class != 0) {
		return false;
	}
	if (continues) {
		return false;	/* a sequential reader: aiod reads ahead for it */
	}
	if (file_size <= (uint64_t)h->nblocks * h->block_size / 8) {
		return false;	/* aiod caches it whole: its random re-reads hit */
	}
	return rtio_client_random_direct(c);
}

bool rtio_client_random_direct(const struct rtio_client *c)
{
	const struct rtio_shm_header *h = (const struct rtio_shm_header *)c->shm;

	return c->alive && h != NULL &&
	       (__atomic_load_n(&h->random_direct, __ATOMIC_ACQUIRE) == 1 ||
		__atomic_load_n(&h->random_local, __ATOMIC_ACQUIRE) == 1);
}

bool rtio_client_nothing_owed(const struct rtio_client *c)
{
	const struct rtio_shm_header *h = (const struct rtio_shm_header *)c->shm;

	return c->alive && h != NULL && __atomic_load_n(&h->random_local, __ATOMIC_ACQUIRE) == 1;
}

bool rtio_client_may_hold(const struct rtio_client *c, const struct rtio_file *f, off_t off,
			  size_t n)
{
	if (!c->alive || c->shm == NULL || !(c->features & RTIO_FEAT_HIT) || off < 0 || n == 0) {
		return true;	/* cannot tell */
	}
	return rtio_shm_dir_holds(c->shm, f->dev, f->ino, n, (uint64_t)off);
}

int64_t rtio_client_aiod_silent_ms(const struct rtio_client *c)
{
	const struct rtio_shm_header *h = (const struct rtio_shm_header *)c->shm;
	uint64_t beat, now;
	struct timespec ts;

	if (h == NULL || clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
		return -1;
	}
	beat = __atomic_load_n(&h->heartbeat_ns, __ATOMIC_ACQUIRE);
	if (beat == 0) {
		return -1;	/* an aiod without a heartbeat */
	}
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return now > beat ? (int64_t)((now - beat) / 1000000) : 0;
}
