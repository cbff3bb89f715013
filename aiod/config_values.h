/*
 * Parsers of aiod.ini values (config_values.c), used by config.c.
 * aiod_parse_rate() is public: config.h.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_CONFIG_VALUES_H
#define AIOD_CONFIG_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* yes/true/on/1 or no/false/off/0; -EINVAL otherwise. */
int aiod_parse_bool(const char *s, bool *out);
/*
 * Comma separated ids or names of users (groups: true for groups), at most
 * AIOD_MAX_ALLOW; -EINVAL with what was wrong in bad.
 */
int aiod_parse_id_list(const char *s, bool groups, uint32_t *ids, unsigned *n, char *bad,
		       size_t badlen);
/* The machine's RAM in bytes (0 if unknown): [cache] size must fit in it. */
uint64_t aiod_phys_mem_bytes(void);

/* bits/s as aiod.ini spells them: 800000000 is 800M, 1500 stays 1500. */
void aiod_format_rate(uint64_t bps, char *buf, size_t len);

#endif
