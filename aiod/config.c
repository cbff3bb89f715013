/*
 * aiod.ini parsing and validation. The key table below is the single source
 * of truth for names, types, defaults, bounds and reloadability;
 * conf/aiod.ini is generated from it by `aiod --print-defaults` (and checked
 * against it by the tests).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "qos_policy.h"
#include "config_values.h"
#include "ini.h"
#include "rtio_size.h"
#include "log.h"
#include "rtio_proto.h"

enum key_type { K_STRING, K_INT, K_SIZE, K_BOOL, K_USERS, K_GROUPS };

struct key_desc {
	const char *section;
	const char *key;
	enum key_type type;
	size_t offset;		/* into struct aiod_config */
	const char *def;
	uint64_t min, max;
	bool reloadable;
	const char *help;
};

#define OFF(f) offsetof(struct aiod_config, f)

static const struct key_desc keys[] = {
	{ "global", "socket_path", K_STRING, OFF(socket_path), "/run/aiod/aiod.sock", 1, 107, false,
	  "Control socket. Its directory is created mode 0700; smbd connects as root." },
	{ "global", "allow_users", K_USERS, 0, "", 0, 0, true,
	  "Users (names or uids) besides root who may monitor aiod (aiodctl stats, files), "
	  "comma separated. Data sessions (the shared cache) are root's only." },
	{ "global", "allow_groups", K_GROUPS, 0, "", 0, 0, true,
	  "Groups (names or gids) whose members may monitor aiod, comma separated." },
	{ "global", "log_level", K_INT, OFF(log_level), "2", 0, 4, true,
	  "0 errors, 1 warnings, 2 notices, 3 info, 4 debug." },
	{ "global", "max_sessions", K_INT, OFF(max_sessions), "1024", 1, 65536, true,
	  "Most concurrent client sessions (one per smbd process)." },
	{ "global", "max_opens_per_session", K_INT, OFF(max_opens_per_session), "1024", 1, 1048576,
	  true, "Most files one session may have registered at once; more are refused with EMFILE "
	  "and smbd does their I/O itself." },
	{ "cache", "size", K_SIZE, OFF(cache_size), "256M", 16ull << 20, 64ull << 30, false,
	  "Shared buffer cache size (locked in memory)." },
	{ "cache", "block_size", K_SIZE, OFF(block_size), "1M", 64ull << 10, 16ull << 20, false,
	  "Cache block size, a power of two; also the unit of disk reads." },
	{ "cache", "mlock", K_BOOL, OFF(mlock), "yes", 0, 1, false,
	  "Lock the cache in memory; failure to lock is fatal." },
	{ "cache", "hugepages", K_BOOL, OFF(hugepages), "yes", 0, 1, false,
	  "Ask for transparent huge pages for the cache (takes effect when /sys/kernel/mm/transparent_hugepage/shmem_enabled is advise): every smbd maps it with far fewer page faults." },
	{ "cache", "direct_io", K_BOOL, OFF(direct_io), "no", 0, 1, false,
	  "Read files with O_DIRECT so the shared cache is the only cache of file data." },
	{ "cache", "pin_wait_ms", K_INT, OFF(pin_wait_ms), "2000", 0, 60000, true,
	  "How long a request waits for a free block when all are pinned, then fails with ENOBUFS." },
	{ "cache", "session_pin_pct", K_INT, OFF(session_pin_pct), "25", 1, 100, true,
	  "Share of the cache (percent) one session may hold pinned, at least one max_io request; "
	  "beyond it only that session's requests wait (pin_wait_ms, then ENOBUFS). 100 = no limit." },
	{ "engine", "queue_depth", K_INT, OFF(queue_depth), "32", 1, 4096, false,
	  "Most device requests in flight; bounds how long an urgent read waits behind bulk reads." },
	{ "engine", "session_inflight", K_INT, OFF(session_inflight), "64", 1, 1024, false,
	  "Requests one session may have outstanding (message queue depth)." },
	{ "engine", "max_io", K_SIZE, OFF(max_io), "8M", 4096, 64ull << 20, false,
	  "Largest single READ0/WRITE0; clamped to 15 cache blocks." },
	{ "readahead", "blocks", K_INT, OFF(readahead_blocks), "64", 0, 256, true,
	  "Blocks read ahead of a sequential reader that has no stream class (at most an eighth of the cache)." },
	{ "readahead", "blocks_with_streams", K_INT, OFF(readahead_blocks_streams), "4", 0, 256, true,
	  "Read-ahead of a sequential reader without a stream class while streams are open: small, so a bulk reader's request never holds the disk long in front of a stream read that is due." },
	{ "readahead", "io_size", K_SIZE, OFF(readahead_io_size), "2M", 64ull << 10, AIOD_IO_SIZE_MAX, true,
	  "Size of one read-ahead request (one seek on a disk: 8M-16M for spinning disks; smaller requests in parallel suit SSDs)." },
	{ "readahead", "auto_stream", K_BOOL, OFF(auto_stream), "no", 0, 1, true,
	  "Schedule a steady sequential reader without a stream class as a stream at its measured rate." },
	{ "readahead", "best_effort_deadline_ms", K_INT, OFF(be_deadline_ms), "500", 1, 60000, true,
	  "Deadline given to best-effort reads; stream reads due earlier go first." },
	{ "admission", "mode", K_STRING, OFF(admission_mode), "demote", 2, 7, true,
	  "When a new stream would overcommit the device: refuse (the open fails with "
	  "NT_STATUS_INSUFFICIENT_RESOURCES), demote (served best effort) or off (admit all)." },
	{ "admission", "capacity", K_SIZE, OFF(admission_capacity), "0", 0, 1ull << 40, true,
	  "Stream data the device sustains, bytes/s; 0 = take it from the calibration profile." },
	{ "admission", "profile", K_STRING, OFF(admission_profile), "/var/lib/aiod/device.profile", 1, 4095, true,
	  "Device profile written by aiod --calibrate DIR: the device capacity, and io_size, "
	  "queue_depth and best_effort_deadline_ms where this file leaves them unset." },
	{ "admission", "headroom_pct", K_INT, OFF(admission_headroom_pct), "5", 0, 90, true,
	  "Share of the capacity never reserved for streams: best-effort I/O always gets it." },
};

_Static_assert(sizeof(keys) / sizeof(keys[0]) <= AIOD_CONFIG_MAX_KEYS, "set_keys has a bit per key");

/* Keys that tuning.c derives from the device profile when aiod.ini does not set them. */
static const char *const derived_keys[] = { "readahead:io_size", "engine:queue_depth",
					    "readahead:best_effort_deadline_ms" };

static int apply_key(struct aiod_config *cfg, TALLOC_CTX *mem, const struct key_desc *k,
		     const char *val, char *why, size_t whylen)
{
	void *field = (char *)cfg + k->offset;
	uint64_t v;
	char *end;
	int ret;

	switch (k->type) {
	case K_STRING:
		if (strlen(val) < k->min || strlen(val) > k->max) {
			snprintf(why, whylen, "length must be %llu..%llu", (unsigned long long)k->min,
				 (unsigned long long)k->max);
			return -EINVAL;
		}
		*(char **)field = talloc_strdup(mem, val);
		return *(char **)field != NULL ? 0 : -ENOMEM;
	case K_BOOL:
		if (aiod_parse_bool(val, field) != 0) {
			snprintf(why, whylen, "expected yes or no");
			return -EINVAL;
		}
		return 0;
	case K_INT:
		errno = 0;
		v = strtoull(val, &end, 10);
		if (errno != 0 || end == val || *end != '\0' || val[0] == '-') {
			snprintf(why, whylen, "expected an integer");
			return -EINVAL;
		}
		goto bounds;
	case K_SIZE:
		ret = rtio_size_parse(val, &v);
		if (ret != 0) {
			snprintf(why, whylen, "expected a size like 64K, 8M or 1G");
			return -EINVAL;
		}
		goto bounds;
	case K_USERS:
		return aiod_parse_id_list(val, false, cfg->allow_uids, &cfg->n_allow_uids, why, whylen);
	case K_GROUPS:
		return aiod_parse_id_list(val, true, cfg->allow_gids, &cfg->n_allow_gids, why, whylen);
	}
	return -EINVAL;
bounds:
	if (v < k->min || v > k->max) {
		snprintf(why, whylen, "must be between %llu and %llu", (unsigned long long)k->min,
			 (unsigned long long)k->max);
		return -ERANGE;
	}
	if (k->offset == OFF(cache_size) || k->offset == OFF(admission_capacity)) {
		*(uint64_t *)field = v;
	} else if (k->offset == OFF(log_level)) {
		*(int *)field = (int)v;
	} else {
		*(uint32_t *)field = (uint32_t)v;
	}
	return 0;
}

static const struct key_desc *find_key(const char *section, const char *key)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcasecmp(keys[i].section, section) == 0 && strcasecmp(keys[i].key, key) == 0) {
			return &keys[i];
		}
	}
	return NULL;
}

bool aiod_config_is_set(const struct aiod_config *cfg, const char *section, const char *key)
{
	const struct key_desc *k = find_key(section, key);

	return k != NULL && (cfg->set_keys & (1ull << (k - keys))) != 0;
}

static bool known_section(const char *s)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcasecmp(keys[i].section, s) == 0) {
			return true;
		}
	}
	return false;
}

/* Where the loader is: the file for messages, the config being filled. */
struct config_loader {
	struct aiod_config *cfg;
	const char *path;
	char *err;
	size_t errlen;
};

static int load_fail(struct config_loader *ld, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "path:line: what" (line 0: a default, "path: what"); always -EINVAL. */
static int load_fail(struct config_loader *ld, unsigned line, const char *fmt, ...)
{
	int n = line > 0 ? snprintf(ld->err, ld->errlen, "%s:%u: ", ld->path, line)
			 : snprintf(ld->err, ld->errlen, "%s: ", ld->path);
	va_list ap;

	if (n >= 0 && (size_t)n < ld->errlen) {
		va_start(ap, fmt);
		vsnprintf(ld->err + n, ld->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int load_fixed_section(struct config_loader *ld, const struct aiod_ini_section *sec)
{
	char why[256];

	for (unsigned i = 0; i < sec->nkeys; i++) {
		const struct aiod_ini_key *key = &sec->keys[i];
		const struct key_desc *k = find_key(sec->name, key->name);
		int ret;

		if (k == NULL) {
			return load_fail(ld, key->line, "unknown key '%s' in [%s]", key->name,
					 sec->name);
		}
		ret = apply_key(ld->cfg, ld->cfg, k, key->value, why, sizeof(why));
		if (ret == -ENOMEM) {
			return ret;
		}
		if (ret != 0) {
			load_fail(ld, key->line, "[%s] %s = '%s': %s", sec->name, key->name,
				  key->value, why);
			return ret;
		}
		ld->cfg->set_keys |= 1ull << (k - keys);
		ld->cfg->key_line[k - keys] = key->line;
	}
	return 0;
}

/* bits/s as aiod.ini spells them: 800000000 is 800M. */
static void format_rate(uint64_t bps, char *buf, size_t len)
{
	static const char units[] = "kMG";
	int u = -1;

	while (u < 2 && bps != 0 && bps % 1000 == 0) {
		bps /= 1000;
		u++;
	}
	if (u < 0) {
		snprintf(buf, len, "%llu", (unsigned long long)bps);
	} else {
		snprintf(buf, len, "%llu%c", (unsigned long long)bps, units[u]);
	}
}

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
			format_rate(Bps * 8, bits, sizeof(bits));
			return load_fail(ld, key->line, "[%s] bitrate = '%s' looks like bytes per "
					 "second: bitrate takes bits/s, e.g. 100M; %s bytes/s is "
					 "bitrate = %s", sec, key->value, bytes, bits);
		}
	}
	return load_fail(ld, key->line, "[%s] bitrate = '%s': expected bits/s like 100M (k, M, G "
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
		return load_fail(ld, key->line, "[%s] prebuffer_ms = '%s': must be 0..60000", sec,
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
		return load_fail(ld, key->line, "[%s] priority is not supported: streams are ordered "
				 "by their deadlines alone (aiod(8)); remove the line", sec);
	}
	return load_fail(ld, key->line, "unknown key '%s' in [%s] (match, bitrate, prebuffer_ms)",
			 key->name, sec);
}

static int load_stream_section(struct config_loader *ld, const struct aiod_ini_section *sec)
{
	struct aiod_config *cfg = ld->cfg;
	struct aiod_stream_class *sc = &cfg->classes[cfg->n_classes];
	int ret = 0;

	if (sec->name[strlen("stream.")] == '\0') {
		return load_fail(ld, sec->line, "[%s]: a stream class needs a name, e.g. [stream.hd]",
				 sec->name);
	}
	if (cfg->n_classes >= AIOD_MAX_CLASSES) {
		return load_fail(ld, sec->line, "[%s]: more than %d [stream.NAME] sections", sec->name,
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
		return load_fail(ld, sec->line, "[%s]: match is required (a pattern like *.mxf)",
				 sec->name);
	}
	if (sc->key_line[AIOD_STREAM_BITRATE] == 0) {
		return load_fail(ld, sec->line, "[%s]: bitrate is required, e.g. 100M (bits/s)",
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
		return load_fail(ld, sec->line, "[%s]: a QoS rule needs at least limit, reserve "
				 "or weight", sec->name);
	}
	for (unsigned i = 0; i < sec->nkeys; i++) {
		const struct aiod_ini_key *k = &sec->keys[i];

		ret = aiod_qos_policy_add(cfg->qos, sec->name, k->name, k->value, k->line, why,
					  sizeof(why));
		if (ret != 0) {
			return ret == -ENOMEM ? ret : load_fail(ld, k->line, "%s", why);
		}
	}
	return 0;
}

/*
 * The policy as a whole: reservations against [admission] capacity when it
 * is configured (against a profile's capacity, aiod checks again once it
 * has read the profile: aiod_qos_check_policy).
 */
static int check_qos(struct config_loader *ld)
{
	char why[1024];
	int ret;

	if (ld->cfg->qos == NULL) {
		return 0;
	}
	ret = aiod_qos_policy_finish(ld->cfg->qos, ld->cfg->admission_capacity, 0, why,
				     sizeof(why));
	return ret < 0 ? load_fail(ld, 0, "%s", why) : 0;
}

/*
 * Sections named PREFIX.NAME, each family with its own loader; any other
 * prefix stays an unknown section.
 */
static const struct {
	const char *prefix;
	int (*load)(struct config_loader *ld, const struct aiod_ini_section *sec);
} section_families[] = {
	{ "stream.", load_stream_section },
	{ "qos.", load_qos_section },
};

static int load_section(struct config_loader *ld, const struct aiod_ini_section *sec)
{
	for (size_t i = 0; i < sizeof(section_families) / sizeof(section_families[0]); i++) {
		const char *prefix = section_families[i].prefix;

		if (strncasecmp(sec->name, prefix, strlen(prefix)) == 0) {
			return section_families[i].load(ld, sec);
		}
	}
	if (!known_section(sec->name)) {
		return load_fail(ld, sec->line, "unknown section [%s]", sec->name);
	}
	return load_fixed_section(ld, sec);
}

/* The line that set [section] key, 0 if it has its default. */
static unsigned key_line(const struct aiod_config *cfg, const char *section, const char *key)
{
	const struct key_desc *k = find_key(section, key);

	return k != NULL ? cfg->key_line[k - keys] : 0;
}

/* The cache is locked in RAM: more than the machine has can never work. */
static int check_cache_fits(struct config_loader *ld)
{
	const struct aiod_config *cfg = ld->cfg;
	uint64_t ram = aiod_phys_mem_bytes();

	if (ram == 0 || cfg->cache_size <= ram) {
		return 0;
	}
	return load_fail(ld, key_line(cfg, "cache", "size"), "[cache] size = %llu MiB (%llu bytes) "
			 "is more than this machine's memory, %llu MiB (%llu bytes)",
			 (unsigned long long)(cfg->cache_size >> 20),
			 (unsigned long long)cfg->cache_size, (unsigned long long)(ram >> 20),
			 (unsigned long long)ram);
}

/* Checks across keys, once every section is in. */
static int check_config(struct config_loader *ld)
{
	const struct aiod_config *cfg = ld->cfg;

	if (strcmp(cfg->admission_mode, "refuse") != 0 && strcmp(cfg->admission_mode, "demote") != 0 &&
	    strcmp(cfg->admission_mode, "off") != 0) {
		return load_fail(ld, key_line(cfg, "admission", "mode"), "[admission] mode = '%s': "
				 "expected refuse, demote or off", cfg->admission_mode);
	}
	if ((cfg->block_size & (cfg->block_size - 1)) != 0) {
		return load_fail(ld, key_line(cfg, "cache", "block_size"), "[cache] block_size = %u: "
				 "must be a power of two", cfg->block_size);
	}
	if (cfg->cache_size / cfg->block_size < 16) {
		return load_fail(ld, key_line(cfg, "cache", "size"), "[cache] size must hold at "
				 "least 16 blocks of block_size");
	}
	return check_cache_fits(ld);
}

static int config_defaults(struct aiod_config *cfg, char *err, size_t errlen)
{
	char why[256];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int ret = apply_key(cfg, cfg, &keys[i], keys[i].def, why, sizeof(why));

		if (ret != 0) {
			snprintf(err, errlen, "built-in default of [%s] %s broken: %s", keys[i].section,
				 keys[i].key, why);
			return ret;
		}
	}
	return 0;
}

static int config_read(struct aiod_config *cfg, const char *path, char *err, size_t errlen)
{
	struct config_loader ld = { cfg, path, err, errlen };
	struct aiod_ini *ini;
	int ret = aiod_ini_load(cfg, path, &ini, err, errlen);

	for (unsigned s = 0; ret == 0 && s < ini->nsections; s++) {
		ret = load_section(&ld, &ini->sections[s]);
	}
	if (ret == 0) {
		ret = check_config(&ld);
	}
	if (ret == 0) {
		ret = check_qos(&ld);
	}
	if (ret == -ENOMEM) {
		snprintf(err, errlen, "%s: out of memory", path);
	}
	if (ini != NULL) {
		talloc_free(ini);
	}
	return ret;
}

int aiod_config_load(TALLOC_CTX *mem_ctx, const char *path, struct aiod_config **out,
		     char *err, size_t errlen)
{
	struct aiod_config *cfg;
	int ret;

	*out = NULL;
	cfg = talloc_zero(mem_ctx, struct aiod_config);
	if (cfg == NULL) {
		return -ENOMEM;
	}
	ret = config_defaults(cfg, err, errlen);
	if (ret == 0 && path != NULL) {
		ret = config_read(cfg, path, err, errlen);
	}
	if (ret != 0) {
		talloc_free(cfg);
		return ret;
	}
	/* A request's data must fit in one reply's scatter list (the first block may be partial). */
	if (cfg->max_io > (uint64_t)(RTIO_MAX_SEGS - 1) * cfg->block_size) {
		cfg->max_io = (RTIO_MAX_SEGS - 1) * cfg->block_size;
	}
	*out = cfg;
	return 0;
}

unsigned aiod_config_reload(struct aiod_config *cur, const struct aiod_config *next)
{
	unsigned restart = 0;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct key_desc *k = &keys[i];
		bool changed;

		if (k->type == K_USERS) {
			changed = cur->n_allow_uids != next->n_allow_uids ||
				  memcmp(cur->allow_uids, next->allow_uids, sizeof(cur->allow_uids)) != 0;
		} else if (k->type == K_GROUPS) {
			changed = cur->n_allow_gids != next->n_allow_gids ||
				  memcmp(cur->allow_gids, next->allow_gids, sizeof(cur->allow_gids)) != 0;
		} else if (k->type == K_STRING) {
			changed = strcmp(*(char *const *)((const char *)cur + k->offset),
					 *(char *const *)((const char *)next + k->offset)) != 0;
		} else if (k->type == K_BOOL) {
			changed = *(bool *)((char *)cur + k->offset) !=
				  *(const bool *)((const char *)next + k->offset);
		} else if (k->offset == OFF(cache_size)) {
			changed = cur->cache_size != next->cache_size;
		} else if (k->offset == OFF(admission_capacity)) {
			changed = cur->admission_capacity != next->admission_capacity;
		} else if (k->offset == OFF(log_level)) {
			changed = cur->log_level != next->log_level;
		} else {
			changed = *(uint32_t *)((char *)cur + k->offset) !=
				  *(const uint32_t *)((const char *)next + k->offset);
		}
		if (!changed) {
			continue;
		}
		if (!k->reloadable) {
			AIOD_WARN("reload: [%s] %s changed; takes effect after a restart", k->section,
				  k->key);
			restart++;
			continue;
		}
		AIOD_NOTICE("reload: [%s] %s changed", k->section, k->key);
		if (k->type == K_USERS) {
			memcpy(cur->allow_uids, next->allow_uids, sizeof(cur->allow_uids));
			cur->n_allow_uids = next->n_allow_uids;
		} else if (k->type == K_GROUPS) {
			memcpy(cur->allow_gids, next->allow_gids, sizeof(cur->allow_gids));
			cur->n_allow_gids = next->n_allow_gids;
		} else if (k->offset == OFF(log_level)) {
			cur->log_level = next->log_level;
			aiod_log_set_level(cur->log_level);
		} else if (k->type == K_STRING) {
			char **dst = (char **)((char *)cur + k->offset);
			char *v = talloc_strdup(cur, *(char *const *)((const char *)next + k->offset));
			if (v != NULL) {
				talloc_free(*dst);
				*dst = v;
			}
		} else if (k->type == K_BOOL) {
			*(bool *)((char *)cur + k->offset) = *(const bool *)((const char *)next + k->offset);
		} else if (k->offset == OFF(admission_capacity)) {
			cur->admission_capacity = next->admission_capacity;
		} else {
			*(uint32_t *)((char *)cur + k->offset) =
				*(const uint32_t *)((const char *)next + k->offset);
		}
	}
	return restart;
}

/* A size as aiod.ini spells it: the largest binary unit that divides it. */
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
	format_rate(sc->bitrate, rate, sizeof(rate));
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

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && ret == 0; i++) {
		struct aiod_config_item item = { keys[i].section, keys[i].key, value,
						 cfg->key_line[i] };

		format_key(cfg, &keys[i], value, sizeof(value));
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
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (sec == NULL || strcmp(sec, keys[i].section) != 0) {
			sec = keys[i].section;
			fprintf(f, "\n[%s]\n", sec);
		}
		char name[64];
		bool derived = false;

		snprintf(name, sizeof(name), "%s:%s", keys[i].section, keys[i].key);
		for (size_t j = 0; j < sizeof(derived_keys) / sizeof(derived_keys[0]); j++) {
			derived = derived || strcmp(name, derived_keys[j]) == 0;
		}
		fprintf(f, "# %s%s%s%s%s\n", keys[i].help,
			derived ? " Unset: derived from the [admission] profile when there is one, else "
				: "", derived ? keys[i].def : "", derived ? "." : "",
			keys[i].reloadable ? " (reloadable)" : "");
		fprintf(f, ";%s = %s\n", keys[i].key, keys[i].def);
	}
	fprintf(f, "\n# Stream classes: one section per class. Files whose share-relative name\n"
		   "# matches are read ahead and scheduled by deadline at the given bitrate.\n"
		   ";[stream.hd]\n"
		   ";match = *.mxf\n"
		   ";bitrate = 100M\n"
		   ";prebuffer_ms = 1000\n");
}
