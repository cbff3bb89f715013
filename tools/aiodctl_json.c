/*
 * The JSON builders of aiodctl_json.h. Keys are aiod's own names, as in
 * `aiodctl stats`, so a script can switch from key=value to JSON without
 * renaming anything; rates and units are spelt in the key (_Bps, _ms).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdint.h>
#include <stdio.h>

#include "aiodctl.h"
#include "aiodctl_fields.h"
#include "aiodctl_json.h"

int aiodctl_json_put(json_t *obj, const char *key, json_t *v)
{
	if (v == NULL) {
		return -1;
	}
	return json_object_set_new(obj, key, v) == 0 ? 0 : -1;
}

json_t *aiodctl_json_u64(uint64_t v)
{
	return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

/* obj when every put succeeded, else NULL (and obj dropped). */
static json_t *done(json_t *obj, int err)
{
	if (err != 0) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

static json_t *class_json(const struct aiodctl_class *c)
{
	json_t *o = json_object();
	int err = 0;

	if (o == NULL) {
		return NULL;
	}
	err |= aiodctl_json_put(o, "name", json_string(c->name));
	err |= aiodctl_json_put(o, "match", json_string(c->match));
	err |= aiodctl_json_put(o, "bitrate_bps", aiodctl_json_u64(c->bitrate));
	err |= aiodctl_json_put(o, "prebuffer_ms", json_integer(c->prebuffer_ms));
	return done(o, err);
}

static json_t *classes_json(const struct aiodctl_snapshot *s)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a != NULL && i < s->n_classes; i++) {
		if (json_array_append_new(a, class_json(&s->classes[i])) != 0) {
			return done(a, -1);
		}
	}
	return a;
}

json_t *aiodctl_json_daemon(const struct aiodctl_snapshot *s)
{
	json_t *o = json_object();
	int err = 0;

	if (o == NULL) {
		return NULL;
	}
	err |= aiodctl_json_put(o, "version", json_string(s->info.version));
	err |= aiodctl_json_put(o, "pid", json_integer(s->info.pid));
	err |= aiodctl_json_put(o, "start_time", aiodctl_json_u64(s->info.start_time));
	err |= aiodctl_json_put(o, "uptime_seconds", json_real((double)s->info.uptime_ms / 1000));
	err |= aiodctl_json_put(o, "block_size", json_integer(s->info.block_size));
	err |= aiodctl_json_put(o, "stream_classes", classes_json(s));
	return done(o, err);
}

json_t *aiodctl_json_stats(const struct rtio_stats_rep *st, size_t len)
{
	json_t *o = json_object();
	int err = 0;

	for (size_t i = 0; o != NULL && i < aiodctl_n_stat_fields; i++) {
		const struct aiodctl_stat_field *f = &aiodctl_stat_fields[i];

		if (aiodctl_stat_sent(len, f)) {
			err |= aiodctl_json_put(o, f->key, aiodctl_json_u64(aiodctl_stat_value(st, f)));
		}
	}
	return o == NULL ? NULL : done(o, err);
}

json_t *aiodctl_json_file(const struct rtio_file_stats_rep *f)
{
	json_t *o = json_object();
	int err = 0;

	if (o == NULL) {
		return NULL;
	}
	err |= aiodctl_json_put(o, "name", json_string(f->name));
	err |= aiodctl_json_put(o, "dev", aiodctl_json_u64(f->dev));
	err |= aiodctl_json_put(o, "ino", aiodctl_json_u64(f->ino));
	err |= aiodctl_json_put(o, "opens", json_integer(f->opens));
	/* 0 = none, else the class's index + 1, as aiod sends it */
	err |= aiodctl_json_put(o, "stream_class", json_integer(f->stream_class));
	err |= aiodctl_json_put(o, "reserved_bps", aiodctl_json_u64(f->reserved_bps));
	err |= aiodctl_json_put(o, "deadline_misses", aiodctl_json_u64(f->deadline_misses));
	err |= aiodctl_json_put(o, "bytes_read", aiodctl_json_u64(f->bytes_read));
	return done(o, err);
}

static json_t *rate_json(const struct aiodctl_session *s, uint64_t v)
{
	return s->have_rate ? aiodctl_json_u64(v) : json_null();
}

json_t *aiodctl_json_session(const struct aiodctl_session *s)
{
	const struct rtio_session_stats_rep *r = &s->rep;
	json_t *o = json_object();
	int err = 0;

	if (o == NULL) {
		return NULL;
	}
	err |= aiodctl_json_put(o, "pid", json_integer(r->pid));
	err |= aiodctl_json_put(o, "session_id", json_integer(r->session_id));
	err |= aiodctl_json_put(o, "client", json_string(r->client));
	err |= aiodctl_json_put(o, "uid", json_integer(s->euid));
	err |= aiodctl_json_put(o, "user", json_string(s->user));
	err |= aiodctl_json_put(o, "connect_uid", json_integer(r->uid));
	err |= aiodctl_json_put(o, "bytes_read", aiodctl_json_u64(r->bytes_read));
	err |= aiodctl_json_put(o, "bytes_written", aiodctl_json_u64(r->bytes_written));
	err |= aiodctl_json_put(o, "read_Bps", rate_json(s, s->read_Bps));
	err |= aiodctl_json_put(o, "write_Bps", rate_json(s, s->write_Bps));
	err |= aiodctl_json_put(o, "requests", aiodctl_json_u64(r->requests));
	err |= aiodctl_json_put(o, "inflight", json_integer(r->inflight));
	err |= aiodctl_json_put(o, "pinned_blocks", json_integer(r->pinned));
	err |= aiodctl_json_put(o, "opens", json_integer(r->opens));
	err |= aiodctl_json_put(o, "streams", json_integer(r->streams));
	err |= aiodctl_json_put(o, "stream_lead_ms", r->lead_ms == RTIO_LEAD_NONE ? json_null() :
				aiodctl_json_u64(r->lead_ms));
	/* null until the module reported a QoS credit ceiling (RTIO_OP_CREDITS) */
	err |= aiodctl_json_put(o, "credits_granted", r->credits_orig == 0 ? json_null() :
				json_integer(r->credits_granted));
	err |= aiodctl_json_put(o, "credits_max", r->credits_orig == 0 ? json_null() :
				json_integer(r->credits_max));
	err |= aiodctl_json_put(o, "credits_smbd_max", r->credits_orig == 0 ? json_null() :
				json_integer(r->credits_orig));
	err |= aiodctl_json_put(o, "qos_held", r->credits_orig == 0 ? json_null() :
				json_integer(r->qos_held));
	/* reads it made itself (rtio:random = local), as far as it reported them */
	err |= aiodctl_json_put(o, "local_reads", aiodctl_json_u64(r->local_reads));
	err |= aiodctl_json_put(o, "local_bytes", aiodctl_json_u64(r->local_bytes));
	return done(o, err);
}

int aiodctl_json_print(json_t *root)
{
	int ret;

	if (root == NULL) {
		fprintf(stderr, "aiodctl: building JSON: out of memory\n");
		return AIODCTL_EXIT_FAIL;
	}
	ret = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	json_decref(root);
	if (ret != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
		fprintf(stderr, "aiodctl: writing JSON to stdout failed\n");
		return AIODCTL_EXIT_FAIL;
	}
	return AIODCTL_EXIT_OK;
}
