/*
 * The Prometheus text format (aiodctl_prom.h). Names follow Prometheus'
 * conventions: an rtio_ prefix, base units in the name (_bytes, _seconds),
 * counters end in _total; aiod's own key=value names stay in `stats`.
 * Per-session series carry pid and user labels, the pid to join with
 * `smbstatus -j` (or node_exporter's process metrics).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "aiodctl_fields.h"
#include "aiodctl_prom.h"

char *aiodctl_prom_escape(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in != '\0'; in++) {
		const char *rep = *in == '\\' ? "\\\\" : *in == '"' ? "\\\"" :
				  *in == '\n' ? "\\n" : NULL;
		size_t n = rep != NULL ? 2 : 1;

		if (o + n >= len) {
			break;
		}
		memcpy(out + o, rep != NULL ? rep : in, n);
		o += n;
	}
	if (len > 0) {
		out[o] = '\0';
	}
	return out;
}

/* HELP and TYPE of a family: our help texts hold no backslash or newline. */
static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void stat_fields(FILE *f, const struct rtio_stats_rep *st, size_t len)
{
	for (size_t i = 0; i < aiodctl_n_stat_fields; i++) {
		const struct aiodctl_stat_field *fd = &aiodctl_stat_fields[i];

		if (!aiodctl_stat_sent(len, fd)) {
			continue;	/* an older aiod: no sample rather than a false 0 */
		}
		family(f, fd->metric, fd->type == AIODCTL_COUNTER ? "counter" : "gauge", fd->help);
		fprintf(f, "%s %" PRIu64 "\n", fd->metric, aiodctl_stat_value(st, fd));
	}
}

static void daemon_info(FILE *f, const struct aiodctl_snapshot *s)
{
	char v[2 * sizeof(s->info.version)];

	family(f, "rtio_build_info", "gauge", "aiod's version (the value is always 1).");
	fprintf(f, "rtio_build_info{version=\"%s\"} 1\n",
		aiodctl_prom_escape(s->info.version, v, sizeof(v)));
	family(f, "rtio_start_time_seconds", "gauge",
	       "When aiod began to serve, seconds since the epoch.");
	fprintf(f, "rtio_start_time_seconds %" PRIu64 "\n", s->info.start_time);
	family(f, "rtio_uptime_seconds", "gauge", "Seconds since aiod began to serve.");
	fprintf(f, "rtio_uptime_seconds %.3f\n", (double)s->info.uptime_ms / 1000);
	family(f, "rtio_cache_block_size_bytes", "gauge", "Size of one cache block.");
	fprintf(f, "rtio_cache_block_size_bytes %u\n", s->info.block_size);
}

static void classes(FILE *f, const struct aiodctl_snapshot *s)
{
	char name[2 * sizeof(s->classes[0].name)];

	family(f, "rtio_stream_class_bytes_per_second", "gauge",
	       "Playback rate of each configured stream class.");
	for (uint32_t i = 0; i < s->n_classes; i++) {
		fprintf(f, "rtio_stream_class_bytes_per_second{class=\"%s\"} %" PRIu64 "\n",
			aiodctl_prom_escape(s->classes[i].name, name, sizeof(name)),
			s->classes[i].bitrate / 8);
	}
	family(f, "rtio_stream_class_prebuffer_seconds", "gauge",
	       "How far ahead of playback each stream class's clients read.");
	for (uint32_t i = 0; i < s->n_classes; i++) {
		fprintf(f, "rtio_stream_class_prebuffer_seconds{class=\"%s\"} %.3f\n",
			aiodctl_prom_escape(s->classes[i].name, name, sizeof(name)),
			(double)s->classes[i].prebuffer_ms / 1000);
	}
}

/*
 * One per-session family: value() of each session (in thousandths when
 * milli is set), skipping the sessions it gives no value for.
 */
struct session_metric {
	const char *name, *type, *help;
	bool (*value)(const struct aiodctl_session *s, uint64_t *v);
	bool milli;
};

static bool s_read(const struct aiodctl_session *s, uint64_t *v)
{
	*v = s->rep.bytes_read;
	return true;
}

static bool s_written(const struct aiodctl_session *s, uint64_t *v)
{
	*v = s->rep.bytes_written;
	return true;
}

static bool s_requests(const struct aiodctl_session *s, uint64_t *v)
{
	*v = s->rep.requests;
	return true;
}

static bool s_inflight(const struct aiodctl_session *s, uint64_t *v)
{
	*v = s->rep.inflight;
	return true;
}

static bool s_opens(const struct aiodctl_session *s, uint64_t *v)
{
	*v = s->rep.opens;
	return true;
}

static bool s_streams(const struct aiodctl_session *s, uint64_t *v)
{
	*v = s->rep.streams;
	return true;
}

static bool s_local_reads(const struct aiodctl_session *s, uint64_t *v)
{
	*v = s->rep.local_reads;
	return true;
}

static bool s_local_bytes(const struct aiodctl_session *s, uint64_t *v)
{
	*v = s->rep.local_bytes;
	return true;
}

static bool s_lead(const struct aiodctl_session *s, uint64_t *v)
{
	*v = s->rep.lead_ms;
	return s->rep.lead_ms != RTIO_LEAD_NONE;
}

static const struct session_metric session_metrics[] = {
	{ "rtio_session_read_bytes_total", "counter", "Bytes aiod returned to this smbd.", s_read,
	  false },
	{ "rtio_session_written_bytes_total", "counter",
	  "Bytes this smbd wrote through aiod or reported writing.", s_written, false },
	{ "rtio_session_requests_total", "counter", "Data requests this smbd sent.", s_requests,
	  false },
	{ "rtio_session_local_reads_total", "counter",
	  "Random reads this smbd made itself, without aiod (rtio:random = local), as reported.",
	  s_local_reads, false },
	{ "rtio_session_local_read_bytes_total", "counter", "Bytes of those reads.",
	  s_local_bytes, false },
	{ "rtio_session_requests_in_flight", "gauge", "Data requests of this smbd in flight.",
	  s_inflight, false },
	{ "rtio_session_open_files", "gauge", "Files this smbd has registered with aiod.", s_opens,
	  false },
	{ "rtio_session_streams", "gauge", "Of them, opens with a bitrate (streams, recorders).",
	  s_streams, false },
	{ "rtio_session_stream_lead_seconds", "gauge",
	  "Shortest read-ahead lead of this smbd's streams (requested, in playback time).", s_lead,
	  true },
};

static void sessions(FILE *f, const struct aiodctl_snapshot *s)
{
	char user[2 * sizeof(s->sessions[0].user)];
	uint64_t v;

	for (size_t m = 0; m < sizeof(session_metrics) / sizeof(session_metrics[0]); m++) {
		const struct session_metric *sm = &session_metrics[m];

		family(f, sm->name, sm->type, sm->help);
		for (uint32_t i = 0; i < s->n_sessions; i++) {
			if (!sm->value(&s->sessions[i], &v)) {
				continue;
			}
			fprintf(f, "%s{pid=\"%u\",user=\"%s\"} ", sm->name, s->sessions[i].rep.pid,
				aiodctl_prom_escape(s->sessions[i].user, user, sizeof(user)));
			if (sm->milli) {
				fprintf(f, "%" PRIu64 ".%03u\n", v / 1000, (unsigned)(v % 1000));
			} else {
				fprintf(f, "%" PRIu64 "\n", v);
			}
		}
	}
}

int aiodctl_prom_write(FILE *f, const struct aiodctl_snapshot *s)
{
	daemon_info(f, s);
	stat_fields(f, &s->stats, s->stats_len);
	classes(f, s);
	sessions(f, s);
	return ferror(f) ? -EIO : 0;
}
