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
#include "config_private.h"
#include "config_values.h"
#include "ini.h"
#include "rtio_size.h"
#include "log.h"
#include "rtio_proto.h"


const struct key_desc aiod_config_keys[] = {
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
	  "Read-ahead of a sequential reader without a stream class while streams are open: small, so a bulk reader's request never holds the disk long in front of a stream read that is due. On a calibrated disk, also the largest piece of a best-effort read the disk is given at a time while streams are open; where stream classes exist and none is open, pieces half as large go one behind the other. On a calibrated disk where stream classes exist, a writer nothing is reserved for (a bulk copy) has its write-back cut the same way." },
	{ "readahead", "io_size", K_SIZE, OFF(readahead_io_size), "2M", 64ull << 10, AIOD_IO_SIZE_MAX, true,
	  "Size of one read-ahead request (one seek on a disk: 8M-16M for spinning disks; smaller requests in parallel suit SSDs)." },
	{ "readahead", "auto_stream", K_BOOL, OFF(auto_stream), "no", 0, 1, true,
	  "Schedule a steady sequential reader without a stream class as a stream at its measured rate." },
	{ "readahead", "best_effort_deadline_ms", K_INT, OFF(be_deadline_ms), "500", 1, 60000, true,
	  "Deadline given to best-effort reads; stream reads due earlier go first. Next to admitted streams (no QoS reservation) best-effort reads are due sooner, at the share of the device the streams leave, but never later than this." },
	{ "admission", "mode", K_STRING, OFF(admission_mode), "demote", 2, 7, true,
	  "When a new stream would overcommit the device (or not start in time, startup_s): "
	  "refuse (the open fails with NT_STATUS_INSUFFICIENT_RESOURCES), demote (served best "
	  "effort until a stream closes and makes room, or the others have started) or off "
	  "(admit all)." },
	{ "admission", "capacity", K_SIZE, OFF(admission_capacity), "0", 0, 1ull << 40, true,
	  "Stream data the device sustains, bytes/s; 0 = take it from the calibration profile." },
	{ "admission", "profile", K_STRING, OFF(admission_profile), "/var/lib/aiod/device.profile", 1, 4095, true,
	  "Device profile written by aiod --calibrate DIR: the device capacity, and io_size, "
	  "queue_depth and best_effort_deadline_ms where this file leaves them unset." },
	{ "admission", "headroom_pct", K_INT, OFF(admission_headroom_pct), "5", 0, 90, true,
	  "Share of the capacity admission never reserves for streams. Best-effort I/O competes "
	  "for it in deadline order: it is left free, not guaranteed to best effort." },
	{ "admission", "startup_s", K_INT, OFF(admission_startup_s), "20", 0, 3600, true,
	  "A stream that opens while others still start is admitted only if the capacity left "
	  "over can fill the read-ahead windows (prebuffer_ms + 1 s) of every starting stream, "
	  "its own included, within this many seconds, and, with a profile, if aiod's start-up "
	  "plan gets every client its data within its class's prebuffer_ms; otherwise it is "
	  "served as the mode says (demoted streams are admitted once the others have started). "
	  "0 = no such check." },
	{ "admission", "local_random_us", K_INT, OFF(local_random_us), "1000", 0, 1000000, true,
	  "While streams or reservations are owed a rate, smbd still reads a random reader's "
	  "cache misses itself if the profile's request_us is at most this (an SSD: such a read "
	  "cannot make a stream late) and what is owed is at most half the media rate; "
	  "0 = every such read through aiod, ordered by deadline." },
};

const size_t aiod_config_nkeys = sizeof(aiod_config_keys) / sizeof(aiod_config_keys[0]);
_Static_assert(sizeof(aiod_config_keys) / sizeof(aiod_config_keys[0]) <= AIOD_CONFIG_MAX_KEYS,
	       "set_keys has a bit per key");

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
	for (size_t i = 0; i < aiod_config_nkeys; i++) {
		const struct key_desc *k = &aiod_config_keys[i];

		if (strcasecmp(k->section, section) == 0 && strcasecmp(k->key, key) == 0) {
			return k;
		}
	}
	return NULL;
}

bool aiod_config_is_set(const struct aiod_config *cfg, const char *section, const char *key)
{
	const struct key_desc *k = find_key(section, key);

	return k != NULL && (cfg->set_keys & (1ull << (k - aiod_config_keys))) != 0;
}

static bool known_section(const char *s)
{
	for (size_t i = 0; i < aiod_config_nkeys; i++) {
		if (strcasecmp(aiod_config_keys[i].section, s) == 0) {
			return true;
		}
	}
	return false;
}

/* "path:line: what" (line 0: a default, "path: what"); always -EINVAL. */
int aiod_config_load_fail(struct config_loader *ld, unsigned line, const char *fmt, ...)
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
			return aiod_config_load_fail(ld, key->line,
						     "unknown key '%s' in [%s]", key->name,
						     sec->name);
		}
		ret = apply_key(ld->cfg, ld->cfg, k, key->value, why, sizeof(why));
		if (ret == -ENOMEM) {
			return ret;
		}
		if (ret != 0) {
			aiod_config_load_fail(ld, key->line,
					      "[%s] %s = '%s': %s", sec->name, key->name,
					      key->value, why);
			return ret;
		}
		ld->cfg->set_keys |= 1ull << (k - aiod_config_keys);
		ld->cfg->key_line[k - aiod_config_keys] = key->line;
	}
	return 0;
}

static int load_section(struct config_loader *ld, const struct aiod_ini_section *sec)
{
	int ret = aiod_config_load_family(ld, sec);

	if (ret != -ENOENT) {
		return ret;
	}
	if (!known_section(sec->name)) {
		return aiod_config_load_fail(ld, sec->line, "unknown section [%s]", sec->name);
	}
	return load_fixed_section(ld, sec);
}

/* The line that set [section] key, 0 if it has its default. */
static unsigned key_line(const struct aiod_config *cfg, const char *section, const char *key)
{
	const struct key_desc *k = find_key(section, key);

	return k != NULL ? cfg->key_line[k - aiod_config_keys] : 0;
}

/* The cache is locked in RAM: more than the machine has can never work. */
static int check_cache_fits(struct config_loader *ld)
{
	const struct aiod_config *cfg = ld->cfg;
	uint64_t ram = aiod_phys_mem_bytes();

	if (ram == 0 || cfg->cache_size <= ram) {
		return 0;
	}
	return aiod_config_load_fail(ld, key_line(cfg, "cache", "size"),
				     "[cache] size = %llu MiB (%llu bytes) "
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
		return aiod_config_load_fail(ld, key_line(cfg,
					     "admission", "mode"), "[admission] mode = '%s': "
					     "expected refuse, demote or off", cfg->admission_mode);
	}
	if ((cfg->block_size & (cfg->block_size - 1)) != 0) {
		return aiod_config_load_fail(ld, key_line(cfg,
					     "cache", "block_size"), "[cache] block_size = %u: "
					     "must be a power of two", cfg->block_size);
	}
	if (cfg->cache_size / cfg->block_size < 16) {
		return aiod_config_load_fail(ld, key_line(cfg,
					     "cache", "size"), "[cache] size must hold at "
					     "least 16 blocks of block_size");
	}
	return check_cache_fits(ld);
}

static int config_defaults(struct aiod_config *cfg, char *err, size_t errlen)
{
	char why[256];

	for (size_t i = 0; i < aiod_config_nkeys; i++) {
		int ret = apply_key(cfg, cfg, &aiod_config_keys[i], aiod_config_keys[i].def, why, sizeof(why));

		if (ret != 0) {
			snprintf(err, errlen, "built-in default of [%s] %s broken: %s", aiod_config_keys[i].section,
				 aiod_config_keys[i].key, why);
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
		ret = aiod_config_check_qos(&ld);
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

	for (size_t i = 0; i < aiod_config_nkeys; i++) {
		const struct key_desc *k = &aiod_config_keys[i];
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
