/*
 * A two-key look-up in aiod.ini for aiodctl doctor. aiodctl does not link
 * aiod's strict reader (aiod --check-config judges the file); doctor only
 * needs a value or two and tolerates what it does not understand.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "aiodctl_doctor.h"

/* s without leading and trailing blanks, and without a ';' or '#' comment. */
static char *trim(char *s)
{
	char *end;

	s[strcspn(s, ";#\r\n")] = '\0';
	while (isspace((unsigned char)*s)) {
		s++;
	}
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1])) {
		*--end = '\0';
	}
	return s;
}

/* "[name]" -> whether it names section; a line that is not a header leaves *in alone. */
static void track_section(const char *line, const char *section, bool *in)
{
	size_t n = strlen(line);

	if (n >= 2 && line[0] == '[' && line[n - 1] == ']') {
		*in = n - 2 == strlen(section) && strncmp(line + 1, section, n - 2) == 0;
	}
}

/* line is "key = value" for key: copy the value. */
static bool match_key(char *line, const char *key, char *out, size_t outlen)
{
	char *eq = strchr(line, '=');

	if (eq == NULL) {
		return false;
	}
	*eq = '\0';
	if (strcmp(trim(line), key) != 0) {
		return false;
	}
	snprintf(out, outlen, "%s", trim(eq + 1));
	return true;
}

int aiodctl_doctor_ini_get(const char *path, const char *section, const char *key,
			   char *out, size_t outlen)
{
	FILE *f = fopen(path, "re");
	char buf[1024];
	bool in = false, found = false;

	if (f == NULL) {
		return -errno;
	}
	while (!found && fgets(buf, sizeof(buf), f) != NULL) {
		char *line = trim(buf);

		track_section(line, section, &in);
		found = in && match_key(line, key, out, outlen);
	}
	fclose(f);
	return found ? 1 : 0;
}
