/*
 * pacing: the playback timeline of one paced stream.
 *
 *   chunk k may be requested at  issue(k) = t0 + k * period
 *   chunk k is due (played) at   due(k)   = t0 + (k + P) * period
 *   period = chunk * 8 / bitrate,  P = prebuffer (>= 1)
 *
 * A chunk whose read (or, recording, whose write) completed after due(k)
 * is a miss: pacing_lateness_ns() > 0.
 *
 * The timeline is fixed: a late chunk does not push later deadlines back
 * (no rebuffering), so misses measure how far the server fell behind the
 * wall clock rather than how often a player would stall.
 */
#ifndef STREAM_PACING_H
#define STREAM_PACING_H

#include <signal.h>
#include <stdint.h>

struct pacing {
	int64_t t0_ns;
	double period_ns;
	unsigned prebuffer;
};

void pacing_init(struct pacing *p, int64_t t0_ns, double bitrate_bps,
		 uint64_t chunk_bytes, unsigned prebuffer);
int64_t pacing_issue_at(const struct pacing *p, uint64_t k);
int64_t pacing_due_at(const struct pacing *p, uint64_t k);
/* done_ns - due(k): positive = a miss by that much, 0 or negative = on time */
int64_t pacing_lateness_ns(const struct pacing *p, uint64_t k, int64_t done_ns);

int64_t mono_now_ns(void);
/* Sleeps until the absolute CLOCK_MONOTONIC time; returns early (EINTR) only
 * if *stop became non-zero.  0 or a positive errno. */
int sleep_until_ns(int64_t t_ns, volatile sig_atomic_t *stop);

#endif
