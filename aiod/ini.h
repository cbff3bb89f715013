/*
 * A strict reader of ini files (ini.c): sections and keys in file order,
 * each with its line number and its name as written, so config.c can say
 * exactly where a value came from and what is wrong with it.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_INI_H
#define AIOD_INI_H

#include <stddef.h>
#include <talloc.h>

struct aiod_ini_key {
	const char *name;	/* as written (case kept), trimmed */
	const char *value;	/* trimmed, comment and quotes removed; "" if empty */
	unsigned line;
};

struct aiod_ini_section {
	const char *name;	/* between the brackets, case kept, trimmed */
	unsigned line;
	struct aiod_ini_key *keys;	/* in file order */
	unsigned nkeys;
};

struct aiod_ini {
	const char *path;	/* for messages: "path:line: ..." */
	struct aiod_ini_section *sections;	/* in file order */
	unsigned nsections;
};

/*
 * Parse text (NUL terminated). Accepted lines: blank, comments starting with
 * ';' or '#', "[section]", "key = value" with an optional trailing ';' or '#'
 * comment, or a value in double or single quotes (taken literally, so it
 * may hold ';' or '#'). Rejected, with "path:line: why" in err and -EINVAL:
 * a key before any section, a key given twice in a section, a section given
 * twice (names compared ignoring case, as lookups do), an empty section or
 * key name, an unterminated quote, any other line.
 */
int aiod_ini_parse(TALLOC_CTX *mem, const char *path, const char *text, struct aiod_ini **out,
		   char *err, size_t errlen);

/* Read path and parse it; -errno with "path: cannot read: ..." if it cannot be read. */
int aiod_ini_load(TALLOC_CTX *mem, const char *path, struct aiod_ini **out, char *err,
		  size_t errlen);
/* Section name (ignoring case, as the parse compares them), NULL if absent. */
const struct aiod_ini_section *aiod_ini_section(const struct aiod_ini *ini, const char *name);
/* The value of [section] key (ignoring case), NULL if absent. */
const char *aiod_ini_get(const struct aiod_ini *ini, const char *section, const char *key);

#endif
