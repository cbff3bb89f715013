#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void timeline_init(struct timeline *t, unsigned bin_ms)
{
	memset(t, 0, sizeof(*t));
	t->bin_ns = (int64_t)bin_ms * 1000000;
}

int timeline_add(struct timeline *t, int64_t since_t0_ns, uint64_t bytes)
{
	size_t i;

	if (t->bin_ns <= 0)
		return 0;
	i = since_t0_ns > 0 ? (size_t)(since_t0_ns / t->bin_ns) : 0;
	if (i >= t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		uint64_t *b;

		while (cap <= i)
			cap *= 2;
		b = realloc(t->bytes, cap * sizeof(*b));
		if (b == NULL)
			return -ENOMEM;
		memset(b + t->cap, 0, (cap - t->cap) * sizeof(*b));
		t->bytes = b;
		t->cap = cap;
	}
	t->bytes[i] += bytes;
	if (i + 1 > t->n)
		t->n = i + 1;
	return 0;
}

void timeline_free(struct timeline *t)
{
	free(t->bytes);
	t->bytes = NULL;
	t->n = t->cap = 0;
}
