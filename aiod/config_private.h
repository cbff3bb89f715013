/*
 * What config.c (the key table, fixed sections, checks across keys, reload)
 * shares with config_sections.c ([stream.NAME], [qos.NAME]) and
 * config_keys.c (keys as text: --print-defaults, --dump-config). Private to
 * aiod/config*.c.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_CONFIG_PRIVATE_H
#define AIOD_CONFIG_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ini.h"

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

/* The key table (config.c): names, types, defaults, bounds, reloadability. */
extern const struct key_desc aiod_config_keys[];
extern const size_t aiod_config_nkeys;

/* Where the loader is: the file for messages, the config being filled. */
struct config_loader {
	struct aiod_config *cfg;
	const char *path;
	char *err;
	size_t errlen;
};

/* "path:line: what" into ld->err (line 0: "path: what"); always -EINVAL. */
int aiod_config_load_fail(struct config_loader *ld, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Load a PREFIX.NAME section; -ENOENT when no family has its prefix. */
int aiod_config_load_family(struct config_loader *ld, const struct aiod_ini_section *sec);

/*
 * The QoS policy as a whole: reservations against [admission] capacity when
 * it is configured (against a profile's capacity aiod checks again once it
 * has read the profile: aiod_qos_check_policy).
 */
int aiod_config_check_qos(struct config_loader *ld);

#endif
