#include "pacing.h"
#include "payload.h"
#include "stream_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Where chunk k of the timeline that started at base is read (the file wraps at its end) or written. */
static uint64_t paced_offset(const struct smb_source *src, const struct stream_opts *o,
			     uint64_t base, uint64_t k)
{
	uint64_t size = smb_source_file_size(src);

	if (o->write || size == 0)
		return k * o->chunk;
	return (base + k * o->chunk) % size;
}

/*
 * --jump-every: where the player goes from off, 0.382 of the file further
 * (wrapping), on a chunk boundary: far from the window it left, and never
 * the same few places.
 */
static uint64_t jump_target(const struct smb_source *src, const struct stream_opts *o, uint64_t off)
{
	uint64_t size = smb_source_file_size(src);
	uint64_t to;

	if (size <= o->chunk)
		return 0;
	to = (off + (uint64_t)((double)size * 0.382)) % size;
	to -= to % o->chunk;
	return to + o->chunk > size ? 0 : to;
}

/*
 * --log-late: one line per late chunk, the time it was requested on the wall
 * clock in aiod's log format (HH:MM:SS.mmm, local time), so a late read can
 * be found in a traced aiod.log (RT_AIOD_LOG_LEVEL=4).
 */
static void log_late(uint64_t k, uint64_t off, int64_t started, int64_t arrived, int64_t late)
{
	struct timespec now;
	struct tm tm;
	int64_t wall_ns;
	time_t sec;

	if (clock_gettime(CLOCK_REALTIME, &now) != 0)
		return;
	/* started, on the wall clock: now less the time since it (monotonic) */
	wall_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - (mono_now_ns() - started);
	sec = (time_t)(wall_ns / 1000000000);
	if (localtime_r(&sec, &tm) == NULL)
		return;
	fprintf(stderr, "late: chunk %llu offset %llu requested %02d:%02d:%02d.%03d, read %.1f ms, late by %.1f ms\n",
		(unsigned long long)k, (unsigned long long)off, tm.tm_hour, tm.tm_min, tm.tm_sec,
		(int)(wall_ns % 1000000000 / 1000000), (double)(arrived - started) / 1e6,
		(double)late / 1e6);
}

/* Plays (reads) or records (writes, o->write) one chunk after another on the
 * timeline of pacing.h; a read or write completing after its due time is a
 * miss either way. */
int paced_run(struct smb_source *src, const struct stream_opts *o,
	      struct stream_result *r, volatile sig_atomic_t *stop)
{
	struct pacing p;
	int64_t end_ns, t0, seg_t0, jump_ns;
	uint64_t k, j, base;
	char *buf;
	int rc = 0;

	buf = malloc(o->chunk);
	if (buf == NULL)
		return r->error = -ENOMEM;
	if (o->write)
		payload_fill(buf, o->chunk);
	t0 = stream_result_start(r);
	seg_t0 = t0;
	base = o->offset;
	jump_ns = (int64_t)(o->jump_every_s * 1e9);
	pacing_init(&p, t0, o->bitrate_bps, o->chunk, o->prebuffer);
	end_ns = t0 + (int64_t)(o->duration_s * 1e9);

	/* k counts every chunk, j those of the timeline since the latest jump */
	for (k = 0, j = 0; !*stop; k++, j++) {
		int64_t issue = pacing_issue_at(&p, j);
		int64_t started, arrived, late;

		if (jump_ns > 0 && issue >= seg_t0 + jump_ns && issue < end_ns) {
			/* Scrub: elsewhere in the file, a new timeline from now. */
			base = jump_target(src, o, paced_offset(src, o, base, j));
			rc = smb_source_seek(src, base);
			if (rc != 0)
				break;
			seg_t0 = mono_now_ns() > issue ? mono_now_ns() : issue;
			pacing_init(&p, seg_t0, o->bitrate_bps, o->chunk, o->prebuffer);
			j = 0;
			r->jumps++;
			issue = pacing_issue_at(&p, j);
		}
		if (issue >= end_ns)
			break;
		/* never ahead of the prebuffer window; late means issue at once */
		rc = sleep_until_ns(issue, stop);
		if (rc != 0 && rc != EINTR) {
			rc = -rc;
			break;
		}
		rc = 0;
		if (*stop)
			break;
		started = mono_now_ns();
		if (o->write) {
			payload_stamp(buf, o->chunk, k);
			rc = smb_source_write(src, buf, o->chunk);
		} else {
			rc = smb_source_read(src, buf, o->chunk);
		}
		arrived = mono_now_ns();
		if (rc != 0)
			break;
		r->chunks++;
		r->bytes += o->chunk;
		r->elapsed_ns = arrived - t0;
		if (timeline_add(&r->timeline, arrived - t0, o->chunk) != 0) {
			rc = -ENOMEM;
			break;
		}
		late = pacing_lateness_ns(&p, j, arrived);
		if (late > 0) {
			double due_s = (double)(pacing_due_at(&p, j) - t0) / 1e9;

			r->misses++;
			if ((double)(pacing_due_at(&p, j) - seg_t0) / 1e9 >= STARTUP_S)
				r->misses_after_startup++;
			if (r->first_late_s < 0)
				r->first_late_s = due_s;
			r->last_late_s = due_s;
			if (o->log_late)
				log_late(k, paced_offset(src, o, base, j), started, arrived, late);
		}
		if (samples_add(&r->lateness_ms, (double)late / 1e6) != 0 ||
		    samples_add(&r->read_ms, (double)(arrived - started) / 1e6) != 0) {
			rc = -ENOMEM;
			break;
		}
	}
	r->interrupted = *stop != 0;
	free(buf);
	r->error = rc;
	return rc;
}
