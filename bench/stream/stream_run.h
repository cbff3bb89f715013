/* stream_run: the ways to play (or record) a stream, and what they measured. */
#ifndef STREAM_RUN_H
#define STREAM_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "samples.h"
#include "smb_source.h"
#include "timeline.h"
#include "stream_opts.h"

/*
 * Misses of chunks due in the first STARTUP_S seconds are start-up latency
 * as a player that waits for its buffer before it starts would see it; they
 * are still misses (the strict count), reported apart as well.
 */
#define STARTUP_S 2.0

struct stream_result {
	uint64_t chunks;          /* completed reads */
	uint64_t misses;          /* paced only: arrived after due time */
	uint64_t misses_after_startup; /* paced only: of those, chunks due STARTUP_S or more after t0
				   (or after the latest --jump-every jump) */
	uint64_t jumps;           /* --jump-every: jumps made */
	double first_late_s, last_late_s; /* due time (s after t0) of the first/last miss, -1 = none */
	uint64_t bytes;
	int64_t elapsed_ns;       /* t0 to the last completion */
	struct samples lateness_ms; /* paced only: arrival - due, negative = early */
	struct samples read_ms;   /* issue to arrival of each read (recording: each write) */
	double close_ms;          /* recording: how long the final close took */
	double open_ms;           /* how long connecting and opening the file took */
	struct timeline timeline;  /* --timeline: bytes per interval since t0 */
	double t0_unix_s;          /* t0 on the wall clock (CLOCK_REALTIME) */
	bool interrupted;         /* SIGINT/SIGTERM ended the run early */
	int error;                /* negative errno of the read that failed, or 0 */
};

/* Both return 0 or the negative errno that ended the run (also in r->error).
 * Both write instead of reading when o->write: paced_run records,
 * greedy_run copies a file onto the share. */
int paced_run(struct smb_source *src, const struct stream_opts *o,
	      struct stream_result *r, volatile sig_atomic_t *stop);
int greedy_run(struct smb_source *src, const struct stream_opts *o,
	       struct stream_result *r, volatile sig_atomic_t *stop);

/* t0 of a run: CLOCK_MONOTONIC now, also kept on the wall clock in r->t0_unix_s. */
int64_t stream_result_start(struct stream_result *r);

void stream_result_free(struct stream_result *r);

/* One JSON object and a newline on stdout.  0 or -EIO. */
int stream_report_json(const struct stream_opts *o, struct stream_result *r,
		       uint64_t file_size, const char *error_text);

#endif
