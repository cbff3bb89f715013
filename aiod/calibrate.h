/*
 * aiod --calibrate (calibrate.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_CALIBRATE_H
#define AIOD_CALIBRATE_H

#include <stddef.h>

#include "config.h"

/* aiod --calibrate DIR: measure the device under DIR, write the profile. */
int aiod_calibrate(const struct aiod_config *cfg, const char *dir, const char *out_path,
		   uint64_t file_size, double seconds_per_point);

/* The median of the n request times in t (sorted in place); 0 when n is 0. */
double aiod_calibrate_median(double *t, size_t n);

#endif
