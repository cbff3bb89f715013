/*
 * Which [qos.NAME] rule governs a client's I/O.
 *
 * PRECEDENCE (for aiod(8), QOS). Every rule whose match keys all match the
 * client is a candidate; the MOST SPECIFIC candidate governs the I/O:
 *  1. the rule with more match keys wins (match_user, match_client,
 *     match_guid, match_share and match_file count one each; the default
 *     rule, which sets none, loses to every other);
 *  2. with as many: an exact match_user beats match_user = @group, which
 *     beats no match_user;
 *  3. then the longer match_client prefix wins (one address is /32 or /128;
 *     even /0 beats no match_client);
 *  4. then a match_file without wildcards (*, ?, [) beats one with them,
 *     which beats no match_file;
 *  5. then the rule that comes first in aiod.ini wins.
 * So a user's own rule beats their group's, a workstation's address beats
 * its subnet, and a single file beats a pattern. Steps 2 to 4 also decide
 * between rules that set different keys: with "[qos.a] match_user = bob" and
 * "[qos.b] match_client = 10.0.0.0/8", bob's I/O from 10.1.2.3 falls under
 * a, because step 2 comes first. A client that no rule matches is served
 * best effort, at weight 100.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>
#include <strings.h>

#include "qos_policy.h"

/* How specific a rule is: the fields are compared in order, larger wins. */
struct rank {
	unsigned keys;		/* step 1 */
	unsigned user;		/* step 2: 2 exact, 1 @group, 0 none */
	unsigned client;	/* step 3: prefix bits + 1, 0 none */
	unsigned file;		/* step 4: 2 literal, 1 glob, 0 none */
};

static struct rank rank_of(const struct aiod_qos_rule *r)
{
	struct rank k = { (unsigned)__builtin_popcount(r->set & AIOD_QOS_MATCH_KEYS), 0, 0, 0 };

	if (r->match_user != NULL) {
		k.user = r->match_user[0] == '@' ? 1 : 2;
	}
	if ((r->set & AIOD_QOS_MATCH_CLIENT) != 0) {
		k.client = r->match_client.bits + 1;
	}
	if (r->match_file != NULL) {
		k.file = strpbrk(r->match_file, "*?[") != NULL ? 1 : 2;
	}
	return k;
}

/* <0, 0, >0 as a is less specific, as specific, more specific than b. */
static int rank_cmp(struct rank a, struct rank b)
{
	if (a.keys != b.keys) {
		return a.keys > b.keys ? 1 : -1;
	}
	if (a.user != b.user) {
		return a.user > b.user ? 1 : -1;
	}
	if (a.client != b.client) {
		return a.client > b.client ? 1 : -1;
	}
	if (a.file != b.file) {
		return a.file > b.file ? 1 : -1;
	}
	return 0;
}

/* Whether rule a takes precedence over rule b (step 5: the earlier line, else index). */
static bool outranks(const struct aiod_qos_policy *p, unsigned a, unsigned b)
{
	const struct aiod_qos_rule *ra = &p->rules[a];
	const struct aiod_qos_rule *rb = &p->rules[b];
	int c = rank_cmp(rank_of(ra), rank_of(rb));

	if (c != 0) {
		return c > 0;
	}
	if (ra->line != 0 && rb->line != 0 && ra->line != rb->line) {
		return ra->line < rb->line;
	}
	return a < b;
}

bool aiod_qos_rule_file_matches(const struct aiod_qos_rule *r, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base != NULL ? base + 1 : path;
	/* as [stream.NAME] match: "*.mxf" should not have to say "**" for subfolders */
	return fnmatch(r->match_file, path, 0) == 0 || fnmatch(r->match_file, base, 0) == 0;
}

static bool user_matches(const struct aiod_qos_rule *r, const struct aiod_qos_principal *who,
			 aiod_qos_in_group_fn in_group, void *priv)
{
	if (r->match_user == NULL) {
		return true;
	}
	if (r->match_user[0] == '@') {
		return in_group != NULL && in_group(priv, who->user, who->uid, r->match_user + 1);
	}
	/* SMB user names ignore case, as Windows and winbind treat them */
	return who->user != NULL && strcasecmp(r->match_user, who->user) == 0;
}

/* Every match key but match_file; the group callback last, as it may cost a lookup. */
static bool principal_matches(const struct aiod_qos_rule *r,
			      const struct aiod_qos_principal *who,
			      aiod_qos_in_group_fn in_group, void *priv)
{
	if (r->match_share != NULL &&
	    (who->share == NULL || strcasecmp(r->match_share, who->share) != 0)) {
		return false;
	}
	if ((r->set & AIOD_QOS_MATCH_CLIENT) != 0 &&
	    (!who->have_client || !aiod_qos_prefix_contains(&r->match_client, &who->client))) {
		return false;
	}
	if ((r->set & AIOD_QOS_MATCH_GUID) != 0 &&
	    (!who->have_guid || memcmp(r->match_guid, who->guid, 16) != 0)) {
		return false;
	}
	return user_matches(r, who, in_group, priv);
}

static bool rule_matches(const struct aiod_qos_rule *r, const struct aiod_qos_principal *who,
			 const char *file, aiod_qos_in_group_fn in_group, void *priv)
{
	if (r->match_file != NULL && (file == NULL || !aiod_qos_rule_file_matches(r, file))) {
		return false;
	}
	return principal_matches(r, who, in_group, priv);
}

/* Insertion sort: at most AIOD_QOS_MAX_RULES rules, once per load. */
int aiod_qos_policy_order(struct aiod_qos_policy *p)
{
	unsigned *order = talloc_realloc(p, p->order, unsigned, p->n_rules + 1);

	if (order == NULL) {
		return -ENOMEM;
	}
	for (unsigned i = 0; i < p->n_rules; i++) {
		unsigned pos = i;

		while (pos > 0 && outranks(p, i, order[pos - 1])) {
			order[pos] = order[pos - 1];
			pos--;
		}
		order[pos] = i;
	}
	p->order = order;
	return 0;
}

int aiod_qos_policy_match(const struct aiod_qos_policy *p, const struct aiod_qos_principal *who,
			  const char *file, aiod_qos_in_group_fn in_group, void *priv)
{
	/* the first match in precedence order: no group lookup for a rule that cannot win */
	for (unsigned k = 0; p->order != NULL && k < p->n_rules; k++) {
		if (rule_matches(&p->rules[p->order[k]], who, file, in_group, priv)) {
			return (int)p->order[k];
		}
	}
	return -1;
}

unsigned aiod_qos_policy_file_rules(const struct aiod_qos_policy *p,
				    const struct aiod_qos_principal *who,
				    aiod_qos_in_group_fn in_group, void *priv, unsigned *idx,
				    unsigned max)
{
	int base = aiod_qos_policy_match(p, who, NULL, in_group, priv);
	unsigned n = 0;

	/* the rules before who's rule without a file in the order are the ones that outrank it */
	for (unsigned k = 0; p->order != NULL && k < p->n_rules; k++) {
		const struct aiod_qos_rule *r = &p->rules[p->order[k]];

		if ((int)p->order[k] == base) {
			break;
		}
		if (r->match_file == NULL || !principal_matches(r, who, in_group, priv)) {
			continue;
		}
		if (n < max) {
			idx[n] = p->order[k];
		}
		n++;
	}
	return n;
}
