/*
 * aiod --dump-config: the effective configuration, so an admin sees what
 * aiod really runs with, not only what aiod.ini says; the settings the
 * device profile derives are exactly where the two differ.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "config_dump.h"
#include "profile.h"
#include "tuning.h"

struct dump_state {
	FILE *f;
	const char *path;
	const char *section;	/* the last [section] written */
	const struct aiod_config *cfg;
	struct aiod_tuning tuning;
};

/* The derived setting for [section] key, NULL if the key is not one. */
static const struct aiod_tuned *dump_tuned(const struct dump_state *d, const char *section,
					   const char *key)
{
	if (strcmp(section, "readahead") == 0 && strcmp(key, "io_size") == 0) {
		return &d->tuning.io_size;
	}
	if (strcmp(section, "engine") == 0 && strcmp(key, "queue_depth") == 0) {
		return &d->tuning.queue_depth;
	}
	if (strcmp(section, "readahead") == 0 && strcmp(key, "best_effort_deadline_ms") == 0) {
		return &d->tuning.be_deadline_ms;
	}
	return NULL;
}

static void dump_source(const struct dump_state *d, const struct aiod_config_item *item,
			char *buf, size_t len)
{
	const struct aiod_tuned *t = dump_tuned(d, item->section, item->key);

	if (item->line > 0) {
		snprintf(buf, len, "%s:%u", d->path != NULL ? d->path : "aiod.ini", item->line);
	} else if (t != NULL && t->source == AIOD_TUNED_PROFILE) {
		snprintf(buf, len, "derived from profile %s", d->cfg->admission_profile);
	} else if (t != NULL) {
		snprintf(buf, len, "default (%s)", t->source == AIOD_TUNED_NO_PROFILE ? "no profile" :
			 t->source == AIOD_TUNED_BAD_PROFILE ? "profile unusable" :
			 "not measured in the profile");
	} else {
		snprintf(buf, len, "default");
	}
}

/* Quoted when a plain value would read back differently (a comment sign, edge blanks). */
static bool dump_needs_quotes(const char *v)
{
	size_t n = strlen(v);

	return strpbrk(v, ";#\"") != NULL || (n > 0 && (v[0] == ' ' || v[n - 1] == ' '));
}

static int dump_item(const struct aiod_config_item *item, void *priv)
{
	struct dump_state *d = priv;
	char source[4200];
	bool quote = dump_needs_quotes(item->value);

	if (d->section == NULL || strcmp(d->section, item->section) != 0) {
		fprintf(d->f, "%s[%s]\n", d->section != NULL ? "\n" : "", item->section);
		d->section = item->section;
	}
	dump_source(d, item, source, sizeof(source));
	fprintf(d->f, "%s = %s%s%s\t; %s\n", item->key, quote ? "'" : "", item->value,
		quote ? "'" : "", source);
	return ferror(d->f) ? -EIO : 0;
}

int aiod_config_dump(TALLOC_CTX *mem, FILE *f, struct aiod_config *cfg, const char *path)
{
	struct dump_state d = { .f = f, .path = path, .cfg = cfg };
	struct aiod_profile *profile = NULL;
	char err[512];
	int ret;

	ret = aiod_profile_load(mem, cfg->admission_profile, &profile, err, sizeof(err));
	aiod_tuning_derive(cfg, ret == 0 ? profile : NULL, ret != 0 && ret != -ENOENT, &d.tuning);
	aiod_tuning_apply(cfg, &d.tuning);
	talloc_free(profile);
	fprintf(f, "# effective configuration of aiod (aiod --dump-config), from %s\n",
		path != NULL ? path : "the built-in defaults");
	ret = aiod_config_visit(cfg, dump_item, &d);
	return ret != 0 ? ret : (fflush(f) != 0 ? -errno : 0);
}
