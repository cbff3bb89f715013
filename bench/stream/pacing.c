#include "pacing.h"

#include <errno.h>
#include <math.h>
#include <time.h>

void pacing_init(struct pacing *p, int64_t t0_ns, double bitrate_bps,
		 uint64_t chunk_bytes, unsigned prebuffer)
{
	p->t0_ns = t0_ns;
	p->period_ns = (double)chunk_bytes * 8.0 * 1e9 / bitrate_bps;
	p->prebuffer = prebuffer;
}

/* multiply, not accumulate: no drift over a long run */
int64_t pacing_issue_at(const struct pacing *p, uint64_t k)
{
	return p->t0_ns + (int64_t)llround((double)k * p->period_ns);
}

int64_t pacing_due_at(const struct pacing *p, uint64_t k)
{
	return p->t0_ns + (int64_t)llround((double)(k + p->prebuffer) * p->period_ns);
}

int64_t pacing_lateness_ns(const struct pacing *p, uint64_t k, int64_t done_ns)
{
	return done_ns - pacing_due_at(p, k);
}

int64_t mono_now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int sleep_until_ns(int64_t t_ns, volatile sig_atomic_t *stop)
{
	struct timespec ts = { .tv_sec = t_ns / 1000000000, .tv_nsec = t_ns % 1000000000 };
	int rc;

	do {
		rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	} while (rc == EINTR && !*stop);
	return rc;
}
