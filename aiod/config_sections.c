/*
 * aiod.ini's section families: [stream.NAME] (the stream classes) and
 * [qos.NAME] (rules for the QoS policy unit), one loader each; config.c
 * loads the fixed sections and hands every PREFIX.NAME section here.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_private.h"
#include "config_values.h"
#include "qos_policy.h"

/* bitrate is bits/s; "100MB" or "12MB/s" is the usual slip into bytes. */
static int load_bitrate(struct config_loader *ld, const char *sec, const struct aiod_ini_key *key,
			struct aiod_stream_class *sc)
{
	char bytes[64], bits[32];
	uint64_t Bps;

	if (aiod_parse_rate(key->value, &sc->bitrate) == 0 && sc->bitrate >= 1000) {
		return 0;
	}
	/* "100MB", "100MB/s", "100MBps": what it would be in bits/s. */
	snprintf(bytes, sizeof(bytes), "%s", key->value);
	if (strchr(bytes, 'B') != NULL) {
		*strchr(bytes, 'B') = '\0';
		if (aiod_parse_rate(bytes, &Bps) == 0 && Bps > 0) {
			aiod_format_rate(Bps * 8, bits, sizeof(bits));
			return aiod_config_load_fail(ld, key->line,
						     "[%s] bitrate = '%s' looks like bytes per second: "
						     "bitrate takes bits/s, e.g. 100M; %s bytes/s "
						     "is bitrate = %s", sec, key->value, bytes, bits);
		}
	}
	return aiod_config_load_fail(ld, key->line,
				     "[%s] bitrate = '%s': expected bits/s like 100M (k, M, G "
				     "decimal), at least 1k", sec, key->value);
}

static int load_prebuffer(struct config_loader *ld, const char *sec,
			  const struct aiod_ini_key *key, struct aiod_stream_class *sc)
{
	char *end;
	unsigned long ms;

	errno = 0;
	ms = strtoul(key->value, &end, 10);
	if (errno != 0 || end == key->value || *end != '\0' || key->value[0] == '-' || ms > 60000) {
		return aiod_config_load_fail(ld, key->line,
					     "[%s] prebuffer_ms = '%s': must be 0..60000", sec,
					     key->value);
	}
	sc->prebuffer_ms = (uint32_t)ms;
	return 0;
}

static int load_stream_key(struct config_loader *ld, const char *sec,
			   const struct aiod_ini_key *key, struct aiod_stream_class *sc)
{
	if (strcasecmp(key->name, "match") == 0) {
		sc->key_line[AIOD_STREAM_MATCH] = key->line;
		sc->match = talloc_strdup(ld->cfg, key->value);
		return sc->match != NULL ? 0 : -ENOMEM;
	}
	if (strcasecmp(key->name, "bitrate") == 0) {
		sc->key_line[AIOD_STREAM_BITRATE] = key->line;
		return load_bitrate(ld, sec, key, sc);
	}
	if (strcasecmp(key->name, "prebuffer_ms") == 0) {
		sc->key_line[AIOD_STREAM_PREBUFFER_MS] = key->line;
		return load_prebuffer(ld, sec, key, sc);
	}
	if (strcasecmp(key->name, "priority") == 0) {
		/* Documented once, never used: streams are ordered by deadline alone. */
		return aiod_config_load_fail(ld, key->line,
					     "[%s] priority is not supported: streams are "
					     "ordered by their deadlines alone (aiod(8)); "
					     "remove the line", sec);
	}
	return aiod_config_load_fail(ld, key->line,
				     "unknown key '%s' in [%s] (match, bitrate, prebuffer_ms)",
				     key->name, sec);
}

static int load_stream_section(struct config_loader *ld, const struct aiod_ini_section *sec)
{
	struct aiod_config *cfg = ld->cfg;
	struct aiod_stream_class *sc = &cfg->classes[cfg->n_classes];
	int ret = 0;

	if (sec->name[strlen("stream.")] == '\0') {
		return aiod_config_load_fail(ld, sec->line,
					     "[%s]: a stream class needs a name, e.g. [stream.hd]",
					     sec->name);
	}
	if (cfg->n_classes >= AIOD_MAX_CLASSES) {
		return aiod_config_load_fail(ld, sec->line,
					     "[%s]: more than %d [stream.NAME] sections", sec->name,
					     AIOD_MAX_CLASSES);
	}
	*sc = (struct aiod_stream_class){ .prebuffer_ms = 1000, .line = sec->line };
	sc->name = talloc_strdup(cfg, sec->name + strlen("stream."));
	for (unsigned i = 0; i < sec->nkeys && ret == 0 && sc->name != NULL; i++) {
		ret = load_stream_key(ld, sec->name, &sec->keys[i], sc);
	}
	if (sc->name == NULL || ret != 0) {
		return sc->name == NULL ? -ENOMEM : ret;
	}
	if (sc->match == NULL || sc->match[0] == '\0') {
		return aiod_config_load_fail(ld, sec->line,
					     "[%s]: match is required (a pattern like *.mxf)",
					     sec->name);
	}
	if (sc->key_line[AIOD_STREAM_BITRATE] == 0) {
		return aiod_config_load_fail(ld, sec->line,
					     "[%s]: bitrate is required, e.g. 100M (bits/s)",
					     sec->name);
	}
	cfg->n_classes++;
	return 0;
}

/* [qos.NAME]: fed to the policy unit (qos_policy.h) key by key, with its line. */
static int load_qos_section(struct config_loader *ld, const struct aiod_ini_section *sec)
{
	struct aiod_config *cfg = ld->cfg;
	char why[512];
	int ret;

	if (cfg->qos == NULL) {
		cfg->qos = aiod_qos_policy_new(cfg);
		if (cfg->qos == NULL) {
			return -ENOMEM;
		}
	}
	if (sec->nkeys == 0) {
		return aiod_config_load_fail(ld, sec->line,
					     "[%s]: a QoS rule needs at least limit, reserve "
					     "or weight", sec->name);
	}
	for (unsigned i = 0; i < sec->nkeys; i++) {
		const struct aiod_ini_key *k = &sec->keys[i];

		ret = aiod_qos_policy_add(cfg->qos, sec->name, k->name, k->value, k->line, why,
					  sizeof(why));
		if (ret != 0) {
			return ret == -ENOMEM ? ret : aiod_config_load_fail(ld, k->line, "%s", why);
		}
	}
	return 0;
}

/* The policy as a whole (config_private.h). */
int aiod_config_check_qos(struct config_loader *ld)
{
	char why[1024];
	int ret;

	if (ld->cfg->qos == NULL) {
		return 0;
	}
	ret = aiod_qos_policy_finish(ld->cfg->qos, ld->cfg->admission_capacity, 0, why,
				     sizeof(why));
	return ret < 0 ? aiod_config_load_fail(ld, 0, "%s", why) : 0;
}

/* Sections named PREFIX.NAME, each family with its own loader. */
static const struct {
	const char *prefix;
	int (*load)(struct config_loader *ld, const struct aiod_ini_section *sec);
} section_families[] = {
	{ "stream.", load_stream_section },
	{ "qos.", load_qos_section },
};

int aiod_config_load_family(struct config_loader *ld, const struct aiod_ini_section *sec)
{
	for (size_t i = 0; i < sizeof(section_families) / sizeof(section_families[0]); i++) {
		const char *prefix = section_families[i].prefix;

		if (strncasecmp(sec->name, prefix, strlen(prefix)) == 0) {
			return section_families[i].load(ld, sec);
		}
	}
	return -ENOENT;
}
