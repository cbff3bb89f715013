/*
 * Settings derived from the device profile (tuning.c): [readahead] io_size,
 * [engine] queue_depth and [readahead] best_effort_deadline_ms, each unless
 * aiod.ini sets it, so a new user does not have to tune them by hand.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_TUNING_H
#define AIOD_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "profile.h"

/* io_size: the seek is amortised once random reads reach this share of sequential ones. */
#define AIOD_TUNING_AMORTISED_PCT	85
/* queue_depth: doubling the requests in flight "helps" when it gains at least this much. */
#define AIOD_TUNING_PARALLEL_GAIN_PCT	15
#define AIOD_TUNING_QD_MIN		1
#define AIOD_TUNING_QD_MAX		32
/*
 * queue_depth on a device without seeks (a random read within FAST_US by the
 * profile: an SSD, a virtual disk): at least QD_FAST, whatever [parallel]
 * says (tuning.c).
 */
#define AIOD_TUNING_FAST_US		1000
#define AIOD_TUNING_QD_FAST		8
/* best_effort_deadline_ms: this many io_size requests of device time, within the bounds. */
#define AIOD_TUNING_BE_REQUESTS		20
#define AIOD_TUNING_BE_MIN_MS		500
#define AIOD_TUNING_BE_MAX_MS		3000

enum aiod_tuning_source {
	AIOD_TUNED_CONFIG,		/* set in aiod.ini */
	AIOD_TUNED_PROFILE,		/* derived from the profile */
	AIOD_TUNED_NO_PROFILE,		/* built-in default: no profile */
	AIOD_TUNED_BAD_PROFILE,		/* built-in default: the profile could not be read */
	AIOD_TUNED_NOT_MEASURED,	/* built-in default: the profile lacks the measurement */
};

struct aiod_tuned {
	uint32_t value;
	enum aiod_tuning_source source;
};

struct aiod_tuning {
	struct aiod_tuned io_size;
	struct aiod_tuned queue_depth;
	struct aiod_tuned be_deadline_ms;
};

/* The smallest profiled size that amortises a seek, within one request's reach; 0 if no data. */
uint32_t aiod_tuning_io_size(const struct aiod_profile *p, uint32_t block_size);
/* Requests in flight beyond which the device gets no faster; 0 if not measured. */
uint32_t aiod_tuning_queue_depth(const struct aiod_profile *p);
/* The best-effort deadline for a device that needs request_s for one io_size read. */
uint32_t aiod_tuning_be_deadline_ms(double request_s);

/*
 * What cfg (as loaded: its own values where aiod.ini set them) and p (NULL:
 * none; bad_profile: there is a file but it could not be read) give.
 */
void aiod_tuning_derive(const struct aiod_config *cfg, const struct aiod_profile *p,
			bool bad_profile, struct aiod_tuning *t);
/* Put t's values into cfg. */
void aiod_tuning_apply(struct aiod_config *cfg, const struct aiod_tuning *t);
/*
 * One line: each value and where it came from. running_qd: the engine's
 * depth when it already runs with another one (0: none).
 */
void aiod_tuning_describe(const struct aiod_tuning *t, const char *profile_path,
			  uint32_t running_qd, char *buf, size_t len);

/*
 * At start and at each reload: load cfg's [admission] profile (*profile:
 * owned by mem, NULL if there is none or it is unreadable, with a warning),
 * derive and apply, log the NOTICE line.
 */
void aiod_tuning_setup(TALLOC_CTX *mem, struct aiod_config *cfg, uint32_t running_qd,
		       struct aiod_profile **profile);

#endif
