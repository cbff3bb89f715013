/*
 * aiod.ini: every key with its type, default and bounds, validated in one place.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_CONFIG_H
#define AIOD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <talloc.h>

#define AIOD_MAX_ALLOW    32
#define AIOD_MAX_CLASSES  16
#define AIOD_IO_SIZE_MAX  (64u << 20)	/* largest [readahead] io_size */
#define AIOD_CONFIG_MAX_KEYS 64		/* of the fixed sections; set_keys has a bit each */

/*
 * aiod's exit status when the configuration is wrong (sysexits.h EX_CONFIG):
 * systemd's RestartPreventExitStatus keys on it, so a typo stops the unit
 * instead of restarting it in a loop.
 */
#define AIOD_EXIT_CONFIG 78

enum aiod_stream_key { AIOD_STREAM_MATCH, AIOD_STREAM_BITRATE, AIOD_STREAM_PREBUFFER_MS,
		       AIOD_STREAM_NKEYS };

/* A stream class: files matching pattern are read at bitrate (bits/s). */
struct aiod_stream_class {
	char *name;		/* section name after "stream." */
	char *match;		/* fnmatch pattern on the share-relative name */
	uint64_t bitrate;	/* bits per second */
	uint32_t prebuffer_ms;	/* how far ahead of playback the client reads */
	unsigned line;		/* of the [stream.NAME] line in aiod.ini */
	unsigned key_line[AIOD_STREAM_NKEYS];	/* 0: the default */
};

struct aiod_qos_policy;

struct aiod_config {
	/* [global] */
	char *socket_path;
	uid_t allow_uids[AIOD_MAX_ALLOW];
	unsigned n_allow_uids;
	gid_t allow_gids[AIOD_MAX_ALLOW];
	unsigned n_allow_gids;
	int log_level;
	uint32_t max_sessions;
	uint32_t max_opens_per_session;
	/* [cache] */
	uint64_t cache_size;
	uint32_t block_size;
	bool mlock;
	bool hugepages;
	bool direct_io;
	uint32_t pin_wait_ms;
	uint32_t session_pin_pct;
	/* [engine] */
	uint32_t queue_depth;
	uint32_t session_inflight;
	uint32_t max_io;
	/* [readahead] */
	uint32_t readahead_blocks;
	uint32_t readahead_blocks_streams;	/* best effort, while streams are open */
	uint32_t readahead_io_size;
	uint32_t be_deadline_ms;
	bool auto_stream;
	/* [admission] */
	char *admission_mode;		/* "refuse", "demote" or "off" */
	uint64_t admission_capacity;	/* bytes/s, 0 = from the profile */
	char *admission_profile;
	uint32_t admission_headroom_pct;
	uint32_t admission_startup_s;	/* 0 = no start-up check (admission.c) */
	uint32_t local_random_us;	/* 0 = random misses through aiod while rates are owed */
	/* [qos.NAME] (qos_policy.h); NULL or no rules: no QoS */
	struct aiod_qos_policy *qos;
	/* [stream.NAME] */
	struct aiod_stream_class classes[AIOD_MAX_CLASSES];
	unsigned n_classes;
	/* Which keys aiod.ini sets (bits of config.c's key table): tuning.c derives the others. */
	uint64_t set_keys;
	unsigned key_line[AIOD_CONFIG_MAX_KEYS];	/* where aiod.ini sets each; 0: not */
};

/* One key and its effective value, for --dump-config (config_dump.c). */
struct aiod_config_item {
	const char *section;
	const char *key;
	const char *value;
	unsigned line;		/* in aiod.ini; 0: the built-in default */
};

/*
 * Load and validate path. On error returns -errno / -EINVAL and writes one
 * message to err (errlen bytes) that starts "path:line:" where the mistake
 * has a line and names the section and key.
 */
int aiod_config_load(TALLOC_CTX *mem_ctx, const char *path, struct aiod_config **out,
		     char *err, size_t errlen);

/* Whether the loaded aiod.ini set [section] key (rather than leaving the default). */
bool aiod_config_is_set(const struct aiod_config *cfg, const char *section, const char *key);

/* Parse "100M" bits/s style rates (decimal units: k=1e3, M=1e6, G=1e9). */
int aiod_parse_rate(const char *s, uint64_t *out);

/*
 * Apply the reloadable keys of next to cur, logging each change, and log every
 * changed key that needs a restart. Returns the number of keys that changed but
 * need a restart.
 */
unsigned aiod_config_reload(struct aiod_config *cur, const struct aiod_config *next);

/*
 * Call fn with every key of cfg in table order, then each stream class's
 * keys (section "stream.NAME"); stops at the first non-zero return.
 */
int aiod_config_visit(const struct aiod_config *cfg,
		      int (*fn)(const struct aiod_config_item *item, void *priv), void *priv);

/* Write every key with its default as a commented sample (for --print-defaults). */
void aiod_config_print_defaults(FILE *f);

#endif
