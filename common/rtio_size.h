/*
 * Byte counts as people write them ("64K", "16M", "1GiB"): the one parser
 * of aiod's configuration, aiod's options and the benchmark tools.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef RTIO_SIZE_H
#define RTIO_SIZE_H

#include <stdint.h>

/*
 * Decimal digits, then optionally a binary multiple K, M, G or T (any case;
 * 1K = 1024), then optionally "i" (after a multiple) and "B": "4096", "4096B",
 * "64K", "64KB", "64KiB". Blanks around it are ignored (ini values).
 * Returns 0, -EINVAL (empty, a sign, a fraction, another suffix, trailing
 * junk) or -ERANGE (more than 64 bits). Zero is a size: callers that need a
 * positive one check it themselves.
 */
int rtio_size_parse(const char *s, uint64_t *out);

#endif
