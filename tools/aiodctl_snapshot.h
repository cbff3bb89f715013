/*
 * One look at aiod for the monitoring commands: its counters, who it is,
 * its stream classes and its sessions, taken in one go over a monitor
 * connection (aiodctl_snapshot.c); the rates between two looks
 * (aiodctl_rates.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIODCTL_SNAPSHOT_H
#define AIODCTL_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <talloc.h>

#include "rtio_client.h"

struct aiodctl_class {
	char name[64];
	char match[128];
	uint64_t bitrate;	/* bits/s */
	uint32_t prebuffer_ms;
};

struct aiodctl_session {
	struct rtio_session_stats_rep rep;
	/*
	 * smbd connects as root and acts as the user it serves: the effective
	 * uid of the process when we looked (/proc/PID/status), rep.uid when
	 * that cannot be read.
	 */
	uint32_t euid;
	char user[64];		/* its name, or the number when it has none */
	bool have_rate;		/* the rates below are known (aiodctl_rates) */
	uint64_t read_Bps, write_Bps;
};

struct aiodctl_snapshot {
	uint64_t taken_ns;	/* aiodctl's monotonic clock, for rates */
	struct rtio_stats_rep stats;
	size_t stats_len;	/* bytes of stats aiod sent: an older aiod sends fewer counters */
	struct rtio_info_rep info;	/* version, uptime; its class fields are in classes[] */
	struct aiodctl_class *classes;
	uint32_t n_classes;
	struct aiodctl_session *sessions;
	uint32_t n_sessions;
};

/* Everything above, a talloc child of mem_ctx; -errno of the call that failed. */
int aiodctl_snapshot_take(TALLOC_CTX *mem_ctx, struct rtio_client *c,
			  struct aiodctl_snapshot **out);

/* aiodctl_rates.c: bytes/s of what grew from before to after in dt_ns (0 when it did not). */
uint64_t aiodctl_rate(uint64_t before, uint64_t after, uint64_t dt_ns);
/* Each session of cur that prev saw too (same session id) gets its read and write rates. */
void aiodctl_rates(const struct aiodctl_snapshot *prev, struct aiodctl_snapshot *cur);

#endif
