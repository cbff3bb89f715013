/*
 * A strict ini reader (ini.h). Strict because a configuration mistake on a
 * file server should stop aiod at start, not surface weeks later as a
 * stream class that silently vanished: nothing is dropped, lower-cased or
 * overridden, and every complaint names the file and line.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ini.h"

/* Where the parse is, and where a complaint goes. */
struct ini_parser {
	struct aiod_ini *ini;
	unsigned line;
	char *err;
	size_t errlen;
};

static int ini_fail(struct ini_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int ini_fail(struct ini_parser *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "%s:%u: ", p->ini->path, p->line);
	va_list ap;

	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static char *ini_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s)) {
		s++;
	}
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1])) {
		s[--n] = '\0';
	}
	return s;
}

static bool ini_is_comment_or_blank(const char *s)
{
	return *s == '\0' || *s == ';' || *s == '#';
}

static struct aiod_ini_section *ini_current(struct ini_parser *p)
{
	return p->ini->nsections > 0 ? &p->ini->sections[p->ini->nsections - 1] : NULL;
}

static int ini_add_section(struct ini_parser *p, const char *name)
{
	struct aiod_ini *ini = p->ini;
	struct aiod_ini_section *s;

	if (name[0] == '\0') {
		return ini_fail(p, "empty section name []");
	}
	for (unsigned i = 0; i < ini->nsections; i++) {
		if (strcasecmp(ini->sections[i].name, name) == 0) {
			return ini_fail(p, "section [%s] given twice (first [%s] at line %u; section "
					"names are compared ignoring case)", name, ini->sections[i].name,
					ini->sections[i].line);
		}
	}
	s = talloc_realloc(ini, ini->sections, struct aiod_ini_section, ini->nsections + 1);
	if (s == NULL) {
		return -ENOMEM;
	}
	ini->sections = s;
	s[ini->nsections++] = (struct aiod_ini_section){ .name = name, .line = p->line };
	return 0;
}

static int ini_add_key(struct ini_parser *p, const char *name, const char *value)
{
	struct aiod_ini_section *s = ini_current(p);
	struct aiod_ini_key *k;

	if (s == NULL) {
		return ini_fail(p, "key '%s' before any [section]", name);
	}
	if (name[0] == '\0') {
		return ini_fail(p, "empty key name in [%s]", s->name);
	}
	for (unsigned i = 0; i < s->nkeys; i++) {
		if (strcasecmp(s->keys[i].name, name) == 0) {
			return ini_fail(p, "[%s] %s given twice (first at line %u)", s->name, name,
					s->keys[i].line);
		}
	}
	k = talloc_realloc(p->ini, s->keys, struct aiod_ini_key, s->nkeys + 1);
	if (k == NULL) {
		return -ENOMEM;
	}
	s->keys = k;
	k[s->nkeys++] = (struct aiod_ini_key){ .name = name, .value = value, .line = p->line };
	return 0;
}

/* "[name]", optionally followed by a comment. */
static int ini_section_line(struct ini_parser *p, char *s)
{
	char *close = strchr(s, ']');

	if (close == NULL) {
		return ini_fail(p, "'[' without ']'");
	}
	*close = '\0';
	if (!ini_is_comment_or_blank(ini_trim(close + 1))) {
		return ini_fail(p, "text after ']'");
	}
	return ini_add_section(p, ini_trim(s + 1));
}

/* The value after '=': quoted (literal) or up to a comment. */
static int ini_value(struct ini_parser *p, char *s, char **value)
{
	char quote = *s;
	char *close;

	if (quote != '"' && quote != '\'') {
		s[strcspn(s, ";#")] = '\0';
		*value = ini_trim(s);
		return 0;
	}
	close = strchr(s + 1, quote);
	if (close == NULL) {
		return ini_fail(p, "%c without its closing %c", quote, quote);
	}
	*close = '\0';
	if (!ini_is_comment_or_blank(ini_trim(close + 1))) {
		return ini_fail(p, "text after the closing %c", quote);
	}
	*value = s + 1;
	return 0;
}

static int ini_line(struct ini_parser *p, char *line)
{
	char *s = ini_trim(line);
	char *eq, *value = NULL;
	int ret;

	if (ini_is_comment_or_blank(s)) {
		return 0;
	}
	if (*s == '[') {
		return ini_section_line(p, s);
	}
	eq = strchr(s, '=');
	if (eq == NULL) {
		return ini_fail(p, "neither [section] nor key = value: '%s'", s);
	}
	*eq = '\0';
	ret = ini_value(p, ini_trim(eq + 1), &value);
	return ret != 0 ? ret : ini_add_key(p, ini_trim(s), value);
}

int aiod_ini_parse(TALLOC_CTX *mem, const char *path, const char *text, struct aiod_ini **out,
		   char *err, size_t errlen)
{
	struct ini_parser p = { .err = err, .errlen = errlen };
	char *buf, *next;
	int ret = 0;

	*out = NULL;
	p.ini = talloc_zero(mem, struct aiod_ini);
	buf = p.ini != NULL ? talloc_strdup(p.ini, text) : NULL;
	if (buf == NULL || (p.ini->path = talloc_strdup(p.ini, path)) == NULL) {
		talloc_free(p.ini);
		return -ENOMEM;
	}
	/* A UTF-8 byte order mark, as some Windows editors write one, is no line's text. */
	if (strncmp(buf, "\xEF\xBB\xBF", 3) == 0) {
		buf += 3;
	}
	/* Names and values point into buf, which the ini owns. */
	for (char *line = buf; line != NULL && ret == 0; line = next) {
		next = strchr(line, '\n');
		if (next != NULL) {
			*next++ = '\0';
		}
		p.line++;
		ret = ini_line(&p, line);
	}
	if (ret != 0) {
		if (ret == -ENOMEM) {
			snprintf(err, errlen, "%s: out of memory", path);
		}
		talloc_free(p.ini);
		return ret;
	}
	*out = p.ini;
	return 0;
}

/* The whole file as one string; a NUL inside would silently end it, so it is refused. */
static int ini_read(TALLOC_CTX *mem, FILE *f, char **text)
{
	size_t len = 0, n;
	char *buf = NULL;

	do {
		char *more = talloc_realloc(mem, buf, char, len + 4096 + 1);

		if (more == NULL) {
			talloc_free(buf);
			return -ENOMEM;
		}
		buf = more;
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		talloc_free(buf);
		return -EIO;
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		talloc_free(buf);
		return -EINVAL;
	}
	*text = buf;
	return 0;
}

int aiod_ini_load(TALLOC_CTX *mem, const char *path, struct aiod_ini **out, char *err,
		  size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	int ret;

	*out = NULL;
	if (f == NULL) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return ret;
	}
	ret = ini_read(mem, f, &text);
	fclose(f);
	if (ret != 0) {
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 ret == -EINVAL ? "a NUL byte: not a text file" : strerror(-ret));
		return ret;
	}
	ret = aiod_ini_parse(mem, path, text, out, err, errlen);
	talloc_free(text);
	return ret;
}

const struct aiod_ini_section *aiod_ini_section(const struct aiod_ini *ini, const char *name)
{
	for (unsigned i = 0; i < ini->nsections; i++) {
		if (strcasecmp(ini->sections[i].name, name) == 0) {
			return &ini->sections[i];
		}
	}
	return NULL;
}

const char *aiod_ini_get(const struct aiod_ini *ini, const char *section, const char *key)
{
	const struct aiod_ini_section *s = aiod_ini_section(ini, section);

	for (unsigned i = 0; s != NULL && i < s->nkeys; i++) {
		if (strcasecmp(s->keys[i].name, key) == 0) {
			return s->keys[i].value;
		}
	}
	return NULL;
}
