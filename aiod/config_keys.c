/*
 * Every aiod.ini key's value as text, from the key table: `aiod
 * --print-defaults` (conf/aiod.ini is generated from it) and the walk that
 * `aiod --dump-config` prints (config_dump.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config_private.h"
#include "config_values.h"

/* Keys that tuning.c derives from the device profile when aiod.ini does not set them. */
static const char *const derived_keys[] = { "readahead:io_size", "engine:queue_depth",
					    "readahead:best_effort_deadline_ms" };

static void format_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && v != 0 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	if (u < 0) {
		snprintf(buf, len, "%llu", (unsigned long long)v);
	} else {
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
	}
}

static void format_ids(const uint32_t *ids, unsigned n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%u", i > 0 ? "," : "", ids[i]);
		used += w > 0 ? (size_t)w : 0;
	}
}

static uint64_t key_number(const struct aiod_config *cfg, const struct key_desc *k)
{
	const void *field = (const char *)cfg + k->offset;

	if (k->offset == OFF(cache_size) || k->offset == OFF(admission_capacity)) {
		return *(const uint64_t *)field;
	}
	if (k->offset == OFF(log_level)) {
		return (uint64_t)*(const int *)field;
	}
	return *(const uint32_t *)field;
}

static void format_key(const struct aiod_config *cfg, const struct key_desc *k, char *buf,
		       size_t len)
{
	const void *field = (const char *)cfg + k->offset;

	switch (k->type) {
	case K_STRING:
		snprintf(buf, len, "%s", *(char *const *)field);
		return;
	case K_BOOL:
		snprintf(buf, len, "%s", *(const bool *)field ? "yes" : "no");
		return;
	case K_INT:
		snprintf(buf, len, "%llu", (unsigned long long)key_number(cfg, k));
		return;
	case K_SIZE:
		format_size(key_number(cfg, k), buf, len);
		return;
	case K_USERS:
		format_ids(cfg->allow_uids, cfg->n_allow_uids, buf, len);
		return;
	case K_GROUPS:
		format_ids(cfg->allow_gids, cfg->n_allow_gids, buf, len);
		return;
	}
	buf[0] = '\0';
}

static int visit_class(const struct aiod_stream_class *sc,
		       int (*fn)(const struct aiod_config_item *item, void *priv), void *priv)
{
	char section[300], rate[32], ms[16];
	const char *names[] = { "match", "bitrate", "prebuffer_ms" };
	const char *values[] = { sc->match, rate, ms };
	int ret = 0;

	_Static_assert(AIOD_STREAM_NKEYS == 3, "one name and value per stream key");
	snprintf(section, sizeof(section), "stream.%s", sc->name);
	aiod_format_rate(sc->bitrate, rate, sizeof(rate));
	snprintf(ms, sizeof(ms), "%u", sc->prebuffer_ms);
	for (int i = 0; i < AIOD_STREAM_NKEYS && ret == 0; i++) {
		struct aiod_config_item item = { section, names[i], values[i], sc->key_line[i] };
		ret = fn(&item, priv);
	}
	return ret;
}

int aiod_config_visit(const struct aiod_config *cfg,
		      int (*fn)(const struct aiod_config_item *item, void *priv), void *priv)
{
	char value[1024];
	int ret = 0;

	for (size_t i = 0; i < aiod_config_nkeys && ret == 0; i++) {
		struct aiod_config_item item = { aiod_config_keys[i].section, aiod_config_keys[i].key, value,
						 cfg->key_line[i] };

		format_key(cfg, &aiod_config_keys[i], value, sizeof(value));
		ret = fn(&item, priv);
	}
	for (unsigned c = 0; c < cfg->n_classes && ret == 0; c++) {
		ret = visit_class(&cfg->classes[c], fn, priv);
	}
	return ret;
}

void aiod_config_print_defaults(FILE *f)
{
	const char *sec = NULL;

	fprintf(f, "# aiod.ini: configuration of aiod, the rtio I/O daemon.\n"
		   "# Every key is shown with its built-in default, commented out.\n"
		   "# Sizes take K/M/G suffixes (binary). `kill -HUP` reloads keys marked\n"
		   "# (reloadable); others need a restart.\n");
	for (size_t i = 0; i < aiod_config_nkeys; i++) {
		if (sec == NULL || strcmp(sec, aiod_config_keys[i].section) != 0) {
			sec = aiod_config_keys[i].section;
			fprintf(f, "\n[%s]\n", sec);
		}
		char name[64];
		bool derived = false;

		snprintf(name, sizeof(name), "%s:%s", aiod_config_keys[i].section, aiod_config_keys[i].key);
		for (size_t j = 0; j < sizeof(derived_keys) / sizeof(derived_keys[0]); j++) {
			derived = derived || strcmp(name, derived_keys[j]) == 0;
		}
		fprintf(f, "# %s%s%s%s%s\n", aiod_config_keys[i].help,
			derived ? " Unset: derived from the [admission] profile when there is one, else "
				: "", derived ? aiod_config_keys[i].def : "", derived ? "." : "",
			aiod_config_keys[i].reloadable ? " (reloadable)" : "");
		fprintf(f, ";%s = %s\n", aiod_config_keys[i].key, aiod_config_keys[i].def);
	}
	fprintf(f, "\n# Stream classes: one section per class. Files whose share-relative name\n"
		   "# matches are read ahead and scheduled by deadline at the given bitrate.\n"
		   ";[stream.hd]\n"
		   ";match = *.mxf\n"
		   ";bitrate = 100M\n"
		   ";prebuffer_ms = 1000\n"
		   "# prebuffer_ms: how far ahead of playback the clients read (the smallest\n"
		   "# buffer among them): aiod reads (prebuffer_ms + 1 s) ahead, and admission\n"
		   "# plans the start of streams opened together with it ([admission] startup_s).\n");
}
