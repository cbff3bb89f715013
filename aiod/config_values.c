/*
 * The values of aiod.ini keys: bit rates, booleans, lists of users or
 * groups. config.c's key table says which key takes which.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "config_values.h"

int aiod_parse_rate(const char *s, uint64_t *out)
{
	char *end;
	double v;
	double mul = 1;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || v < 0) {
		return -EINVAL;
	}
	switch (*end) {
	case 'k': case 'K': mul = 1e3; end++; break;
	case 'm': case 'M': mul = 1e6; end++; break;
	case 'g': case 'G': mul = 1e9; end++; break;
	default: break;
	}
	if (strcmp(end, "bit") == 0 || strcmp(end, "bps") == 0 || strcmp(end, "bit/s") == 0) {
		end += strlen(end);
	}
	if (*end != '\0' || v * mul > 1e15) {
		return -EINVAL;
	}
	*out = (uint64_t)(v * mul);
	return 0;
}

int aiod_parse_bool(const char *s, bool *out)
{
	if (strcasecmp(s, "yes") == 0 || strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 ||
	    strcasecmp(s, "on") == 0) {
		*out = true;
		return 0;
	}
	if (strcasecmp(s, "no") == 0 || strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0 ||
	    strcasecmp(s, "off") == 0) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* Comma separated ids or names; resolve with the passwd/group databases. */
int aiod_parse_id_list(const char *s, bool groups, uint32_t *ids, unsigned *n, char *bad,
			 size_t badlen)
{
	char buf[1024];
	char *save = NULL;

	*n = 0;
	if (strlen(s) >= sizeof(buf)) {
		snprintf(bad, badlen, "list too long");
		return -EINVAL;
	}
	memcpy(buf, s, strlen(s) + 1);
	for (char *tok = strtok_r(buf, ", \t", &save); tok != NULL; tok = strtok_r(NULL, ", \t", &save)) {
		char *end;
		unsigned long v = strtoul(tok, &end, 10);

		if (*n >= AIOD_MAX_ALLOW) {
			snprintf(bad, badlen, "more than %d entries", AIOD_MAX_ALLOW);
			return -EINVAL;
		}
		if (*end != '\0' || end == tok) {
			if (groups) {
				struct group *g = getgrnam(tok);
				if (g == NULL) {
					snprintf(bad, badlen, "unknown group '%s'", tok);
					return -EINVAL;
				}
				v = g->gr_gid;
			} else {
				struct passwd *p = getpwnam(tok);
				if (p == NULL) {
					snprintf(bad, badlen, "unknown user '%s'", tok);
					return -EINVAL;
				}
				v = p->pw_uid;
			}
		}
		ids[(*n)++] = (uint32_t)v;
	}
	return 0;
}

uint64_t aiod_phys_mem_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long page_size = sysconf(_SC_PAGESIZE);

	return pages > 0 && page_size > 0 ? (uint64_t)pages * (uint64_t)page_size : 0;
}

/* bits/s as aiod.ini spells them: 800000000 is 800M. */
void aiod_format_rate(uint64_t bps, char *buf, size_t len)
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
