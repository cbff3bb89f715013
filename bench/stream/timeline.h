/*
 * timeline: bytes completed per fixed interval since t0 (--timeline MS), so
 * that a benchmark can plot a client's rate over time and line several
 * clients up by their start (t0 on the wall clock, in the JSON report).
 */
#ifndef STREAM_TIMELINE_H
#define STREAM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

struct timeline {
	int64_t bin_ns;   /* 0: not recording */
	uint64_t *bytes;  /* bytes[i]: completed in [t0 + i*bin, t0 + (i+1)*bin) */
	size_t n;         /* bins up to the last one that got bytes */
	size_t cap;
};

/* bin_ms 0 leaves it off (timeline_add then does nothing). */
void timeline_init(struct timeline *t, unsigned bin_ms);

/* Counts bytes completed at since_t0_ns (>= 0) into its bin; 0 or -ENOMEM. */
int timeline_add(struct timeline *t, int64_t since_t0_ns, uint64_t bytes);

void timeline_free(struct timeline *t);

#endif
