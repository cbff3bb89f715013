/*
 * The QoS policy's rules: built key by key from [qos.NAME] sections and
 * validated once all are in. Which rule applies to whom is qos_match.c's;
 * one rule's identity across a reload and its log line, qos_rule.c's.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "qos_policy.h"
#include "rtio_size.h"

#define SECTION_PREFIX "qos."
#define VALUE_KEYS (AIOD_QOS_LIMIT | AIOD_QOS_LIMIT_READ | AIOD_QOS_LIMIT_WRITE | \
		    AIOD_QOS_LIMIT_IOPS | AIOD_QOS_RESERVE | AIOD_QOS_WEIGHT)
#define IOPS_MAX 100000000ull	/* far beyond any device; keeps sums small */

enum qos_type { Q_USER, Q_CLIENT, Q_GUID, Q_NAME, Q_RATE, Q_COUNT, Q_WEIGHT, Q_SIZE };

struct qos_key {
	const char *key;
	enum qos_type type;
	unsigned bit;
	size_t offset;		/* into struct aiod_qos_rule */
};

#define R(f) offsetof(struct aiod_qos_rule, f)

/*
 * Every key of a [qos.NAME] section, in the order of their bits (check_under()
 * indexes the table by bit number), which is also the order errors list them in.
 */
static const struct qos_key qos_keys[] = {
	{ "match_user", Q_USER, AIOD_QOS_MATCH_USER, R(match_user) },
	{ "match_client", Q_CLIENT, AIOD_QOS_MATCH_CLIENT, R(match_client) },
	{ "match_guid", Q_GUID, AIOD_QOS_MATCH_GUID, R(match_guid) },
	{ "match_share", Q_NAME, AIOD_QOS_MATCH_SHARE, R(match_share) },
	{ "match_file", Q_NAME, AIOD_QOS_MATCH_FILE, R(match_file) },
	{ "limit", Q_RATE, AIOD_QOS_LIMIT, R(limit) },
	{ "limit_read", Q_RATE, AIOD_QOS_LIMIT_READ, R(limit_read) },
	{ "limit_write", Q_RATE, AIOD_QOS_LIMIT_WRITE, R(limit_write) },
	{ "limit_iops", Q_COUNT, AIOD_QOS_LIMIT_IOPS, R(limit_iops) },
	{ "reserve", Q_RATE, AIOD_QOS_RESERVE, R(reserve) },
	{ "weight", Q_WEIGHT, AIOD_QOS_WEIGHT, R(weight) },
	{ "burst", Q_SIZE, AIOD_QOS_BURST, R(burst) },
};
#define N_KEYS (sizeof(qos_keys) / sizeof(qos_keys[0]))
_Static_assert(N_KEYS == AIOD_QOS_N_KEYS, "a line per key");

struct aiod_qos_policy *aiod_qos_policy_new(TALLOC_CTX *mem_ctx)
{
	return talloc_zero(mem_ctx, struct aiod_qos_policy);
}

int aiod_qos_policy_find(const struct aiod_qos_policy *p, const char *name)
{
	for (unsigned i = 0; i < p->n_rules; i++) {
		if (strcasecmp(p->rules[i].name, name) == 0) {
			return (int)i;
		}
	}
	return -1;
}

/* The rule of section "qos.NAME", created on its first key. */
static struct aiod_qos_rule *rule_for(struct aiod_qos_policy *p, const char *name, unsigned line)
{
	int i = aiod_qos_policy_find(p, name);
	struct aiod_qos_rule *rules;
	struct aiod_qos_rule *r;

	if (i >= 0) {
		r = &p->rules[i];
		if (line != 0 && (r->line == 0 || line < r->line)) {
			r->line = line;	/* the loader may hand keys over in any order */
		}
		return r;
	}
	if (p->n_rules >= AIOD_QOS_MAX_RULES) {
		return NULL;
	}
	rules = talloc_realloc(p, p->rules, struct aiod_qos_rule, p->n_rules + 1);
	if (rules == NULL) {
		return NULL;
	}
	p->rules = rules;
	r = &rules[p->n_rules];
	memset(r, 0, sizeof(*r));
	r->name = talloc_strdup(p, name);
	if (r->name == NULL) {
		return NULL;
	}
	r->line = line;
	r->weight = AIOD_QOS_WEIGHT_DEFAULT;
	p->n_rules++;
	return r;
}

static const struct qos_key *find_key(const char *key)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcasecmp(qos_keys[i].key, key) == 0) {
			return &qos_keys[i];
		}
	}
	return NULL;
}

/* A positive decimal integer up to max. */
static int parse_count(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	while (isspace((unsigned char)*s)) {
		s++;
	}
	if (!isdigit((unsigned char)*s)) {
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	while (isspace((unsigned char)*end)) {
		end++;
	}
	if (errno != 0 || *end != '\0' || v == 0 || v > max) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A name (share, glob, user): not empty, no blanks a typo would leave. */
static int parse_name(TALLOC_CTX *mem, const char *s, char **out)
{
	if (s[0] == '\0' || isspace((unsigned char)s[0]) ||
	    isspace((unsigned char)s[strlen(s) - 1])) {
		return -EINVAL;
	}
	*out = talloc_strdup(mem, s);
	return *out != NULL ? 0 : -ENOMEM;
}

static int parse_user(TALLOC_CTX *mem, const char *s, char **out, char *why, size_t whylen)
{
	if (strcmp(s, "@") == 0 || strpbrk(s, " \t,") != NULL || parse_name(mem, s, out) != 0) {
		snprintf(why, whylen, "expected one user name or @group");
		return -EINVAL;
	}
	return 0;
}

static int parse_numeric(const struct qos_key *k, const char *s, uint64_t *v, char *why,
			 size_t whylen)
{
	switch (k->type) {
	case Q_RATE:
		return aiod_qos_parse_rate(s, v, why, whylen);
	case Q_COUNT:
		if (parse_count(s, IOPS_MAX, v) != 0) {
			snprintf(why, whylen, "expected requests per second, 1..%llu", IOPS_MAX);
			return -EINVAL;
		}
		return 0;
	case Q_WEIGHT:
		if (parse_count(s, AIOD_QOS_WEIGHT_MAX, v) != 0) {
			snprintf(why, whylen, "expected 1..%d (default %d)", AIOD_QOS_WEIGHT_MAX,
				 AIOD_QOS_WEIGHT_DEFAULT);
			return -EINVAL;
		}
		return 0;
	default:
		if (rtio_size_parse(s, v) != 0 || *v == 0 || *v > AIOD_QOS_RATE_MAX) {
			snprintf(why, whylen, "expected a size like 4M (bytes, binary M), at least 1");
			return -EINVAL;
		}
		return 0;
	}
}

static int parse_value(TALLOC_CTX *mem, struct aiod_qos_rule *r, const struct qos_key *k,
		       const char *s, char *why, size_t whylen)
{
	void *field = (char *)r + k->offset;
	uint64_t v;
	int ret;

	switch (k->type) {
	case Q_USER:
		return parse_user(mem, s, field, why, whylen);
	case Q_CLIENT:
		return aiod_qos_parse_prefix(s, field, why, whylen);
	case Q_GUID:
		if (aiod_qos_parse_guid(s, field) != 0) {
			snprintf(why, whylen, "expected a GUID like 6b29fc40-ca47-1067-b31d-00dd010662da");
			return -EINVAL;
		}
		return 0;
	case Q_NAME:
		ret = parse_name(mem, s, field);
		if (ret == -EINVAL) {
			snprintf(why, whylen, "expected a name or pattern, not empty");
		}
		return ret;
	default:
		ret = parse_numeric(k, s, &v, why, whylen);
		if (ret == 0 && k->type == Q_WEIGHT) {
			*(uint32_t *)field = (uint32_t)v;
		} else if (ret == 0) {
			*(uint64_t *)field = v;
		}
		return ret;
	}
}

static void unknown_key(const char *section, const char *key, unsigned line, char *err,
			size_t errlen)
{
	struct aiod_qos_msg m = aiod_qos_msg_start(err, errlen);

	aiod_qos_msg_add(&m, "[%s] unknown key '%s' (line %u); valid keys:", section, key, line);
	for (size_t i = 0; i < N_KEYS; i++) {
		aiod_qos_msg_add(&m, "%s %s", i == 0 ? "" : ",", qos_keys[i].key);
	}
}

int aiod_qos_policy_add(struct aiod_qos_policy *p, const char *section, const char *key,
			const char *value, unsigned line, char *err, size_t errlen)
{
	size_t plen = strlen(SECTION_PREFIX);
	const struct qos_key *k = find_key(key);
	struct aiod_qos_rule *r;
	char why[160];
	int ret;

	TALLOC_FREE(p->order);	/* stale until the next finish: matching finds nothing */
	if (strncasecmp(section, SECTION_PREFIX, plen) != 0 || section[plen] == '\0') {
		snprintf(err, errlen, "[%s] %s (line %u): a QoS section is named [qos.NAME]",
			 section, key, line);
		return -EINVAL;
	}
	if (k == NULL) {
		unknown_key(section, key, line, err, errlen);
		return -EINVAL;
	}
	r = rule_for(p, section + plen, line);
	if (r == NULL) {
		snprintf(err, errlen, "[%s] %s (line %u): out of memory or more than %d QoS rules",
			 section, key, line, AIOD_QOS_MAX_RULES);
		return -ENOMEM;
	}
	if ((r->set & k->bit) != 0) {
		snprintf(err, errlen, "[%s] %s (line %u): set twice in one section", section, key,
			 line);
		return -EINVAL;
	}
	why[0] = '\0';
	ret = parse_value(p, r, k, value, why, sizeof(why));
	if (ret != 0) {
		snprintf(err, errlen, "[%s] %s = '%s' (line %u): %s", section, key, value, line,
			 ret == -ENOMEM ? "out of memory" : why);
		return ret;
	}
	r->set |= k->bit;
	r->key_line[__builtin_ctz(k->bit)] = line;
	return 0;
}

/* Whether the rate of key `bit` fits under `limit` (an unset one always does). */
static int check_under(const struct aiod_qos_rule *r, unsigned bit, uint64_t v,
		       const char *limit_name, uint64_t limit, char *err, size_t errlen)
{
	unsigned n = (unsigned)__builtin_ctz(bit);
	char a[32];
	char b[32];

	if (v == 0 || limit == 0 || v <= limit) {
		return 0;
	}
	aiod_qos_format_bytes(v, true, a, sizeof(a));
	aiod_qos_format_bytes(limit, true, b, sizeof(b));
	snprintf(err, errlen, "[qos.%s] %s (line %u): %s is more than its %s %s", r->name,
		 qos_keys[n].key, r->key_line[n], a, limit_name, b);
	return -EINVAL;
}

static int check_rule(const struct aiod_qos_rule *r, char *err, size_t errlen)
{
	uint64_t both = 0;

	if ((r->set & VALUE_KEYS) == 0) {
		snprintf(err, errlen, "[qos.%s] (line %u): sets none of limit, limit_read, "
			 "limit_write, limit_iops, reserve, weight: it would change nothing",
			 r->name, r->line);
		return -EINVAL;
	}
	if ((r->set & AIOD_QOS_LIMIT_READ) != 0 && (r->set & AIOD_QOS_LIMIT_WRITE) != 0) {
		both = r->limit_read + r->limit_write;
	}
	if (check_under(r, AIOD_QOS_LIMIT_READ, r->limit_read, "limit", r->limit, err, errlen) ||
	    check_under(r, AIOD_QOS_LIMIT_WRITE, r->limit_write, "limit", r->limit, err, errlen) ||
	    check_under(r, AIOD_QOS_RESERVE, r->reserve, "limit", r->limit, err, errlen) ||
	    check_under(r, AIOD_QOS_RESERVE, r->reserve, "limit_read + limit_write", both, err,
			errlen)) {
		return -EINVAL;
	}
	return 0;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The default burst: see AIOD_QOS_BURST_MS in qos_policy.h. */
static void fill_burst(struct aiod_qos_rule *r)
{
	uint64_t top = max_u64(r->limit, max_u64(r->limit_read, r->limit_write));

	if ((r->set & AIOD_QOS_BURST) != 0) {
		return;
	}
	if (top == 0) {
		top = r->reserve;
	}
	r->burst = max_u64(top * AIOD_QOS_BURST_MS / 1000, AIOD_QOS_BURST_MIN);
}

/* "[qos.bay1] reserve 300 MiB/s + [qos.bay2] reserve 300 MiB/s + ... = 600 MiB/s" */
static void list_reservations(const struct aiod_qos_policy *p, uint64_t streams, uint64_t total,
			      struct aiod_qos_msg *m)
{
	const char *sep = "";
	char rate[32];

	for (unsigned i = 0; i < p->n_rules; i++) {
		if (p->rules[i].reserve == 0) {
			continue;
		}
		aiod_qos_format_bytes(p->rules[i].reserve, true, rate, sizeof(rate));
		aiod_qos_msg_add(m, "%s[qos.%s] reserve %s", sep, p->rules[i].name, rate);
		sep = " + ";
	}
	if (streams > 0) {
		aiod_qos_format_bytes(streams, true, rate, sizeof(rate));
		aiod_qos_msg_add(m, " + admitted streams %s", rate);
	}
	aiod_qos_format_bytes(total, true, rate, sizeof(rate));
	aiod_qos_msg_add(m, " = %s", rate);
}

uint64_t aiod_qos_policy_reserved(const struct aiod_qos_policy *p)
{
	uint64_t reserved = 0;

	for (unsigned i = 0; p != NULL && i < p->n_rules; i++) {
		reserved += p->rules[i].reserve;	/* each <= 1 TiB/s: no overflow */
	}
	return reserved;
}

static int check_reservations(const struct aiod_qos_policy *p, uint64_t capacity,
			      uint64_t streams, char *err, size_t errlen)
{
	struct aiod_qos_msg m = aiod_qos_msg_start(err, errlen);
	uint64_t reserved = aiod_qos_policy_reserved(p);
	char cap[32];

	if (reserved == 0 || (capacity > 0 && reserved + streams <= capacity)) {
		return 0;
	}
	list_reservations(p, streams, reserved + streams, &m);
	if (capacity == 0) {
		aiod_qos_msg_add(&m, " accepted unchecked: the device capacity is unknown (set [admission] "
			"capacity or run aiod --calibrate)");
		return 1;
	}
	aiod_qos_format_bytes(capacity, true, cap, sizeof(cap));
	aiod_qos_msg_add(&m, " exceeds the device capacity %s", cap);
	return -EINVAL;
}

int aiod_qos_policy_finish(struct aiod_qos_policy *p, uint64_t capacity_Bps,
			   uint64_t streams_reserved_Bps, char *err, size_t errlen)
{
	int default_rule = -1;

	if (errlen > 0) {
		err[0] = '\0';
	}
	for (unsigned i = 0; i < p->n_rules; i++) {
		struct aiod_qos_rule *r = &p->rules[i];

		if (check_rule(r, err, errlen) != 0) {
			return -EINVAL;
		}
		if ((r->set & AIOD_QOS_MATCH_KEYS) == 0 && default_rule >= 0) {
			snprintf(err, errlen, "[qos.%s] (line %u) and [qos.%s] (line %u) both set no "
				 "match key: only one default rule may match every client",
				 p->rules[default_rule].name, p->rules[default_rule].line,
				 r->name, r->line);
			return -EINVAL;
		}
		if ((r->set & AIOD_QOS_MATCH_KEYS) == 0) {
			default_rule = (int)i;
		}
		fill_burst(r);
	}
	if (aiod_qos_policy_order(p) != 0) {
		snprintf(err, errlen, "QoS policy: out of memory");
		return -ENOMEM;
	}
	return check_reservations(p, capacity_Bps, streams_reserved_Bps, err, errlen);
}
