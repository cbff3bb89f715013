/*
 * Monitoring replies: one session per SESSION_STATS, aiod's identity and
 * one stream class per INFO. aiodctl joins sessions with `smbstatus -j` by
 * pid, so every field here is what aiod alone knows about that smbd.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "aiod.h"
#include "monitor.h"
#include "peer.h"
#include "rtio_version.h"
#include "session.h"

/*
 * How far, in ms of playback, the read-ahead aiod has asked for runs ahead
 * of a stream's reader. Requested, not necessarily loaded yet: it is the
 * lead aiod is working to, which is what an operator compares with the
 * class's prebuffer.
 */
static uint64_t open_lead_ms(const struct aiod_ctx *ctx, const struct aiod_open *o)
{
	uint64_t ahead = o->ra_next_blk * ctx->cache->block_size;

	if (ahead <= o->next_off) {
		return 0;
	}
	return (ahead - o->next_off) * 8 * 1000 / o->rate_bps;
}

static void fill_opens(const struct aiod_ctx *ctx, const struct aiod_peer *p,
		       struct rtio_session_stats_rep *r)
{
	r->lead_ms = RTIO_LEAD_NONE;
	for (const struct aiod_open *o = p->opens.head; o != NULL; o = o->next) {
		if (o->closing) {
			continue;
		}
		r->opens++;
		if (o->rate_bps == 0) {
			continue;
		}
		r->streams++;
		if (o->readable && !o->recorder) {
			uint64_t lead = open_lead_ms(ctx, o);

			r->lead_ms = lead < r->lead_ms ? lead : r->lead_ms;
		}
	}
}

static struct aiod_session *connected_at(struct aiod_ctx *ctx, uint32_t index)
{
	/* A walk per entry: sessions are few (max_sessions), listings rare. */
	for (struct aiod_session *s = ctx->sessions; s != NULL; s = aiod_session_next(s)) {
		if (aiod_session_dying(s) || aiod_peer_of(s) == NULL) {
			continue;
		}
		if (index-- == 0) {
			return s;
		}
	}
	return NULL;
}

int aiod_monitor_session(struct aiod_ctx *ctx, uint32_t index, struct rtio_session_stats_rep *r)
{
	struct aiod_session *s = connected_at(ctx, index);
	const struct aiod_peer *p;

	if (s == NULL) {
		return -ENOENT;
	}
	p = aiod_peer_of(s);
	r->session_id = aiod_session_id(s);
	r->pid = (uint32_t)aiod_session_pid(s);
	r->uid = (uint32_t)aiod_session_uid(s);
	r->inflight = p->inflight;
	r->pinned = p->pinned;
	r->requests = p->requests;
	r->bytes_read = p->bytes_read;
	r->bytes_written = p->bytes_written;
	r->credits_granted = p->credits.granted;
	r->credits_max = p->credits.max;
	r->credits_orig = p->credits.orig;
	r->qos_held = p->credits.held;
	r->local_reads = p->local_reads;
	r->local_bytes = p->local_bytes;
	fill_opens(ctx, p, r);
	snprintf(r->client, sizeof(r->client), "%s", aiod_session_client(s));
	return 0;
}

void aiod_monitor_info(struct aiod_ctx *ctx, uint32_t index, struct rtio_info_rep *r)
{
	const struct aiod_stream_class *c;

	snprintf(r->version, sizeof(r->version), "%s", RTIO_VERSION);
	r->start_time = ctx->start_time;
	r->uptime_ms = (aiod_now_ns() - ctx->start_ns) / 1000000;
	r->pid = (uint32_t)getpid();
	r->n_classes = ctx->cfg->n_classes;
	r->block_size = ctx->cache->block_size;
	if (index >= ctx->cfg->n_classes) {
		return;
	}
	c = &ctx->cfg->classes[index];
	r->class_bitrate = c->bitrate;
	r->class_prebuffer_ms = c->prebuffer_ms;
	snprintf(r->class_name, sizeof(r->class_name), "%s", c->name != NULL ? c->name : "");
	snprintf(r->class_match, sizeof(r->class_match), "%s", c->match != NULL ? c->match : "");
}
