#include "samples.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int samples_add(struct samples *s, double x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		double *v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	s->sorted = 0;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double samples_quantile(struct samples *s, double q)
{
	size_t rank;

	if (s->n == 0)
		return NAN;
	if (!s->sorted) {
		qsort(s->v, s->n, sizeof(*s->v), cmp_double);
		s->sorted = 1;
	}
	if (q <= 0.0)
		return s->v[0];
	rank = (size_t)ceil(q * (double)s->n);
	if (rank > s->n)
		rank = s->n;
	return s->v[rank - 1];
}

void samples_free(struct samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
