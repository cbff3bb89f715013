/*
 * Byte counts: see rtio_size.h.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "rtio_size.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

/* log2 of the multiple a suffix letter names, 0 for none. */
static unsigned size_shift(char c)
{
	switch (toupper((unsigned char)c)) {
	case 'K': return 10;
	case 'M': return 20;
	case 'G': return 30;
	case 'T': return 40;
	default: return 0;
	}
}

int rtio_size_parse(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift;
	char *end;

	while (isspace((unsigned char)*s)) {
		s++;
	}
	/* strtoull would take a sign or leading blanks after ours: digits only */
	if (!isdigit((unsigned char)*s)) {
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0) {
		return -ERANGE;
	}
	shift = size_shift(*end);
	if (shift != 0) {
		end++;
		if (*end == 'i' || *end == 'I') {
			end++;
		}
	}
	if (*end == 'b' || *end == 'B') {
		end++;
	}
	while (isspace((unsigned char)*end)) {
		end++;
	}
	if (*end != '\0') {
		return -EINVAL;
	}
	if (v > (UINT64_MAX >> shift)) {
		return -ERANGE;
	}
	*out = (uint64_t)v << shift;
	return 0;
}
