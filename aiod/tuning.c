/*
 * Settings derived from the device profile (tuning.h). The rules, and the
 * numbers they give on the emulated disk of bench/rt (14.5 ms seek,
 * 163 MB/s: bench/results/rt-20261122-0232) and on an SSD:
 *
 *   io_size      the smallest profiled size whose random reads reach 85 % of
 *                sequential reads of the same size: both pay the request's
 *                latency and transfer, only the random one a seek, so the
 *                seek is then at most 15 % of a request. Disk: 16M (146 of
 *                163 MB/s; 8M: 128 of 163). SSD or virtual disk: random is as
 *                fast as sequential from small sizes on, so one cache block
 *                (1M); their latency is what parallel requests hide
 *                (queue_depth). At least a cache block, at most what one
 *                request carries (RTIO_MAX_SEGS blocks).
 *   queue_depth  1 when two requests in flight are not 15 % faster than
 *                one (a single spindle): every request but the one at the
 *                device waits in the EDF queue, where deadlines order it, so
 *                an urgent read waits behind one request, not two. aiod
 *                submits the next request from the completion, so the device
 *                idles only for that. bench/rt, 100 Mbit/s streams started
 *                500 ms apart, 2-chunk client buffer: 12 clean at 1, and
 *                late start-up chunks from 6 streams on at 2 (each new
 *                stream's first read waits behind two 16 MiB requests,
 *                230 ms, more than its 168 ms of buffer). Else the
 *                count beyond which doubling gains less than 15 % (an SSD:
 *                4-8), 32 if it still gained at the last measured count.
 *                At least 8 on a device whose random read takes at most
 *                1 ms (no seek): [parallel] measures io_size-class reads,
 *                which one at a time can already fill such a device's
 *                bandwidth (this VM's disk: 1.08 GB/s at 1 in flight, 1.10
 *                at 2, so the rule said 1), while the small reads aiod also
 *                serves (a random reader's pages) are bound by latency
 *                there (fio's 4 KiB random reads: 14k IOPS at 1 in flight,
 *                53k at 8). Without seeks an urgent read waits behind at
 *                most 8 requests of about a millisecond.
 *   best_effort_deadline_ms
 *                20 io_size reads of device time, within 500..3000 ms.
 *                Disk: 20 x 115 ms = 2.3 s (bench/rt measured 500 ms: late
 *                stream chunks next to a bulk reader; 2500 ms: none).
 *                Why: a stream's refill is due when playback reaches it,
 *                typically 1-2 s ahead; a best-effort read due sooner than
 *                that goes first, so the refills wait until their last
 *                moment and then queue behind each other. 20 requests is a
 *                round of refills of the dozen-odd streams a disk carries,
 *                with room to spare, so a fresh bulk read goes after the
 *                refills due within that round, never after more: a bulk
 *                reader waits at most one round. 500 ms (the old default)
 *                below: on a fast device a round is short and the bound
 *                would make best effort urgent; 3000 ms above: a copy that
 *                stalls longer looks hung to the person waiting for it.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "rtio_proto.h"
#include "tuning.h"

uint32_t aiod_tuning_io_size(const struct aiod_profile *p, uint32_t block_size)
{
	uint32_t size = 0, best = 0;
	uint64_t best_Bps = 0;
	uint64_t most = (uint64_t)RTIO_MAX_SEGS * block_size;

	for (unsigned i = 0; p != NULL && i < p->npoints && size == 0; i++) {
		const struct aiod_profile_point *pt = &p->points[i];

		/* Same size, so the only difference is where the request starts: the seek. */
		if (pt->sequential_Bps > 0 &&
		    pt->random_Bps * 100 >= pt->sequential_Bps * AIOD_TUNING_AMORTISED_PCT) {
			size = pt->size;
		}
		if (pt->random_Bps >= best_Bps && pt->random_Bps > 0) {
			best_Bps = pt->random_Bps;
			best = pt->size;
		}
	}
	if (size == 0) {
		size = best;	/* no size amortises the seek: the fastest there is */
	}
	if (size == 0) {
		return 0;
	}
	if (most > AIOD_IO_SIZE_MAX) {
		most = AIOD_IO_SIZE_MAX;
	}
	return size < block_size ? block_size : (size > most ? (uint32_t)most : size);
}

static uint32_t tuning_parallel_depth(const struct aiod_profile *p)
{
	unsigned i;

	for (i = 1; i < p->nparallel; i++) {
		if (p->parallel[i].Bps * 100 <
		    p->parallel[i - 1].Bps * (100 + AIOD_TUNING_PARALLEL_GAIN_PCT)) {
			break;
		}
	}
	if (i == p->nparallel && i > 1) {
		return AIOD_TUNING_QD_MAX;	/* still growing: the device takes more */
	}
	if (p->parallel[i - 1].inflight < AIOD_TUNING_QD_MIN) {
		return AIOD_TUNING_QD_MIN;
	}
	return p->parallel[i - 1].inflight > AIOD_TUNING_QD_MAX ? AIOD_TUNING_QD_MAX
								  : p->parallel[i - 1].inflight;
}

uint32_t aiod_tuning_queue_depth(const struct aiod_profile *p)
{
	uint32_t qd;

	if (p == NULL || p->nparallel == 0) {
		return 0;
	}
	qd = tuning_parallel_depth(p);
	if (p->request_us > 0 && p->request_us <= AIOD_TUNING_FAST_US && qd < AIOD_TUNING_QD_FAST) {
		qd = AIOD_TUNING_QD_FAST;	/* no seek: small reads want several in flight */
	}
	return qd;
}

uint32_t aiod_tuning_be_deadline_ms(double request_s)
{
	double ms = round(AIOD_TUNING_BE_REQUESTS * request_s * 1000);

	if (ms < AIOD_TUNING_BE_MIN_MS) {
		return AIOD_TUNING_BE_MIN_MS;
	}
	return ms > AIOD_TUNING_BE_MAX_MS ? AIOD_TUNING_BE_MAX_MS : (uint32_t)ms;
}

/* One setting: aiod.ini's if set there, else derived, else cfg's (the built-in default). */
static void pick(struct aiod_tuned *out, const struct aiod_config *cfg, const char *section,
		 const char *key, uint32_t cfg_value, uint32_t derived, enum aiod_tuning_source none)
{
	if (aiod_config_is_set(cfg, section, key)) {
		*out = (struct aiod_tuned){ cfg_value, AIOD_TUNED_CONFIG };
	} else if (derived > 0) {
		*out = (struct aiod_tuned){ derived, AIOD_TUNED_PROFILE };
	} else {
		*out = (struct aiod_tuned){ cfg_value, none };
	}
}

void aiod_tuning_derive(const struct aiod_config *cfg, const struct aiod_profile *p,
			bool bad_profile, struct aiod_tuning *t)
{
	enum aiod_tuning_source none = p != NULL     ? AIOD_TUNED_NOT_MEASURED :
				       bad_profile   ? AIOD_TUNED_BAD_PROFILE :
						       AIOD_TUNED_NO_PROFILE;
	double request_s;

	pick(&t->io_size, cfg, "readahead", "io_size", cfg->readahead_io_size,
	     aiod_tuning_io_size(p, cfg->block_size), none);
	pick(&t->queue_depth, cfg, "engine", "queue_depth", cfg->queue_depth,
	     aiod_tuning_queue_depth(p), none);
	/* The deadline follows the io_size in effect, wherever that came from. */
	request_s = aiod_profile_request_s(p, t->io_size.value);
	pick(&t->be_deadline_ms, cfg, "readahead", "best_effort_deadline_ms", cfg->be_deadline_ms,
	     request_s > 0 ? aiod_tuning_be_deadline_ms(request_s) : 0, none);
}

void aiod_tuning_apply(struct aiod_config *cfg, const struct aiod_tuning *t)
{
	cfg->readahead_io_size = t->io_size.value;
	cfg->queue_depth = t->queue_depth.value;
	cfg->be_deadline_ms = t->be_deadline_ms.value;
}

static const char *source_text(enum aiod_tuning_source s, const char *path, char *buf, size_t len)
{
	switch (s) {
	case AIOD_TUNED_CONFIG:
		return "aiod.ini";
	case AIOD_TUNED_PROFILE:
		snprintf(buf, len, "profile %s", path);
		return buf;
	case AIOD_TUNED_NO_PROFILE:
		return "default, no profile";
	case AIOD_TUNED_BAD_PROFILE:
		snprintf(buf, len, "default, profile %s unusable", path);
		return buf;
	case AIOD_TUNED_NOT_MEASURED:
		snprintf(buf, len, "default, not measured in %s: run aiod --calibrate again", path);
		return buf;
	}
	return "?";
}

void aiod_tuning_describe(const struct aiod_tuning *t, const char *profile_path,
			  uint32_t running_qd, char *buf, size_t len)
{
	char s1[320], s2[320], s3[320], qd[400];
	uint32_t io = t->io_size.value;

	if (running_qd != 0 && running_qd != t->queue_depth.value) {
		snprintf(qd, sizeof(qd), "%u (running; a restart makes it %u: %s)", running_qd,
			 t->queue_depth.value,
			 source_text(t->queue_depth.source, profile_path, s2, sizeof(s2)));
	} else {
		snprintf(qd, sizeof(qd), "%u (%s)", t->queue_depth.value,
			 source_text(t->queue_depth.source, profile_path, s2, sizeof(s2)));
	}
	snprintf(buf, len, "settings: io_size %u%s (%s), queue_depth %s, best_effort_deadline_ms "
		 "%u (%s)", io % (1u << 20) == 0 ? io >> 20 : io >> 10,
		 io % (1u << 20) == 0 ? "M" : "K",
		 source_text(t->io_size.source, profile_path, s1, sizeof(s1)), qd,
		 t->be_deadline_ms.value,
		 source_text(t->be_deadline_ms.source, profile_path, s3, sizeof(s3)));
}

void aiod_tuning_setup(TALLOC_CTX *mem, struct aiod_config *cfg, uint32_t running_qd,
		       struct aiod_profile **profile)
{
	struct aiod_tuning t;
	char err[512], line[1024];
	int ret;

	ret = aiod_profile_load(mem, cfg->admission_profile, profile, err, sizeof(err));
	if (ret == -ENOENT && !aiod_config_is_set(cfg, "admission", "profile")) {
		/* Never calibrated: normal, and the line below says "no profile". */
	} else if (ret == -ENOENT) {
		/*
		 * Named in aiod.ini but not there: still a warning, not an error,
		 * because it is the state of every server between installation and
		 * its first aiod --calibrate, which writes exactly this file.
		 */
		AIOD_WARN("device profile %s does not exist: not calibrated yet (aiod --calibrate "
			  "DIR writes it); built-in settings until then",
			  cfg->admission_profile);
	} else if (ret != 0) {
		AIOD_WARN("device profile: %s; built-in settings where aiod.ini sets none", err);
	} else if ((*profile)->version > AIOD_PROFILE_VERSION) {
		AIOD_NOTICE("device profile %s is of a newer format (%u): reading what this aiod "
			    "knows of it", cfg->admission_profile, (*profile)->version);
	}
	aiod_tuning_derive(cfg, *profile, ret != 0 && ret != -ENOENT, &t);
	aiod_tuning_apply(cfg, &t);
	aiod_tuning_describe(&t, cfg->admission_profile, running_qd, line, sizeof(line));
	AIOD_NOTICE("%s", line);
}
