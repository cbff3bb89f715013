/* samples: a growing array of doubles with nearest-rank percentiles. */
#ifndef STREAM_SAMPLES_H
#define STREAM_SAMPLES_H

#include <stddef.h>

struct samples {
	double *v;
	size_t n;
	size_t cap;
	int sorted;
};

/* 0 or -ENOMEM */
int samples_add(struct samples *s, double x);

/* Nearest-rank quantile, q in [0, 1]; sorts in place.  NAN when empty. */
double samples_quantile(struct samples *s, double q);

void samples_free(struct samples *s);

#endif
