/*
 * Unit tests of the QoS policy (aiod/qos_policy.c, qos_match.c,
 * qos_values.c): parsing every key, errors naming section and key,
 * reservations against the device capacity, precedence, client prefixes,
 * GUIDs, groups, file rules for the module, reload identity, the log line.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "qos_policy.h"

#define MiB (1ull << 20)

/*
 * Feed ini text to the policy the way a loader would: "[qos.a]" lines open
 * a section, "key = value" lines are handed over with their line number.
 * Returns the first error; err holds its message.
 */
static int feed(struct aiod_qos_policy *p, const char *text, char *err, size_t errlen)
{
	char section[64] = "";
	char line[256];
	unsigned lineno = 0;

	while (*text != '\0') {
		size_t n = strcspn(text, "\n");
		char key[64];
		char value[128];
		int ret;

		assert_true(n < sizeof(line));
		memcpy(line, text, n);
		line[n] = '\0';
		text += n + (text[n] == '\n');
		lineno++;
		if (sscanf(line, "[%63[^]]]", section) == 1 || line[0] == '\0') {
			continue;
		}
		value[0] = '\0';
		assert_true(sscanf(line, "%63s = %127[^\n]", key, value) >= 1);
		ret = aiod_qos_policy_add(p, section, key, value, lineno, err, errlen);
		if (ret != 0) {
			return ret;
		}
	}
	return 0;
}

/* A finished policy from text (capacity 1 GiB/s); fails the test on any error. */
static struct aiod_qos_policy *policy(void *mem, const char *text)
{
	struct aiod_qos_policy *p = aiod_qos_policy_new(mem);
	char err[512];

	assert_non_null(p);
	if (feed(p, text, err, sizeof(err)) != 0 ||
	    aiod_qos_policy_finish(p, 1024 * MiB, 0, err, sizeof(err)) != 0) {
		fail_msg("%s", err);
	}
	return p;
}

/* The error text feeding (then finishing, when feeding passes) gives. */
static const char *error_of(void *mem, const char *text, uint64_t capacity)
{
	struct aiod_qos_policy *p = aiod_qos_policy_new(mem);
	static char err[512];
	int ret = feed(p, text, err, sizeof(err));

	if (ret == 0) {
		ret = aiod_qos_policy_finish(p, capacity, 0, err, sizeof(err));
	}
	assert_int_equal(ret, -EINVAL);
	return err;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (strstr(haystack, needle) == NULL) {
		fail_msg("'%s' does not contain '%s'", haystack, needle);
	}
}

static struct aiod_qos_principal who_v4(const char *user, const char *addr, const char *share)
{
	struct aiod_qos_principal w = { .user = user, .uid = 1000, .share = share };
	struct sockaddr_in *in = (struct sockaddr_in *)&w.client;

	if (addr != NULL) {
		in->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, addr, &in->sin_addr), 1);
		w.have_client = true;
	}
	return w;
}

static struct aiod_qos_principal who_v6(const char *addr)
{
	struct aiod_qos_principal w = { .user = "bob", .uid = 1000, .share = "media" };
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&w.client;

	in6->sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
	w.have_client = true;
	return w;
}

/* The name of the rule that governs who on file, "-" for none. */
static const char *winner(const struct aiod_qos_policy *p, const struct aiod_qos_principal *w,
			  const char *file)
{
	int i = aiod_qos_policy_match(p, w, file, NULL, NULL);

	return i < 0 ? "-" : p->rules[i].name;
}

static void test_qos_parses_every_key(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.Bay1]\n"
		"match_user = @colour\nmatch_client = 10.1.0.0/16\n"
		"match_guid = 6B29FC40-CA47-1067-B31D-00DD010662DA\nmatch_share = Media\n"
		"match_file = *.mxf\nlimit = 200M\nlimit_read = 100MB/s\n"
		"limit_write = 800Mbit/s\nlimit_iops = 500\nreserve = 50MiB/s\nweight = 300\n"
		"burst = 8M\n");
	const struct aiod_qos_rule *r = &p->rules[0];
	static const uint8_t guid[16] = { 0x6b, 0x29, 0xfc, 0x40, 0xca, 0x47, 0x10, 0x67,
					  0xb3, 0x1d, 0x00, 0xdd, 0x01, 0x06, 0x62, 0xda };

	(void)state;
	assert_int_equal(p->n_rules, 1);
	assert_string_equal(r->name, "Bay1");
	assert_int_equal(r->line, 2);
	assert_string_equal(r->match_user, "@colour");
	assert_int_equal(r->match_client.family, AF_INET);
	assert_int_equal(r->match_client.bits, 16);
	assert_memory_equal(r->match_guid, guid, 16);
	assert_string_equal(r->match_share, "Media");
	assert_string_equal(r->match_file, "*.mxf");
	assert_int_equal(r->limit, 200 * MiB);
	assert_int_equal(r->limit_read, 100 * MiB);
	assert_int_equal(r->limit_write, 100000000);	/* bits are decimal, as a stream's bitrate */
	assert_int_equal(r->limit_iops, 500);
	assert_int_equal(r->reserve, 50 * MiB);
	assert_int_equal(r->weight, 300);
	assert_int_equal(r->burst, 8 * MiB);
	assert_int_equal(r->set, 0xfffu);
	assert_int_equal(aiod_qos_policy_find(p, "bay1"), 0);
	assert_int_equal(aiod_qos_policy_find(p, "bay2"), -1);
	talloc_free(mem);
}

static void test_qos_rate_spellings(void **state)
{
	static const struct { const char *s; uint64_t Bps; } ok[] = {
		{ "200M", 200 * MiB }, { "200M/s", 200 * MiB }, { "200MB/s", 200 * MiB },
		{ "200MiB/s", 200 * MiB }, { " 64k ", 64 * 1024 }, { "4096", 4096 },
		{ "1600Mbit/s", 200000000 }, { "1600mbit", 200000000 }, { "1Gbit/s", 125000000 },
		{ "8bit", 1 }, { "1T", 1ull << 40 },
	};
	static const char *const bad[] = { "100Mbps", "100MBps", "800bps", "1.5G", "fast", "0",
					   "-1M", "2T", "", "100 M", "10Xbit", "0bit", "M/s" };
	uint64_t v;
	char why[160];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(aiod_qos_parse_rate(ok[i].s, &v, why, sizeof(why)), 0);
		assert_int_equal(v, ok[i].Bps);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (aiod_qos_parse_rate(bad[i], &v, why, sizeof(why)) != -EINVAL) {
			fail_msg("'%s' was accepted", bad[i]);
		}
	}
	assert_int_equal(aiod_qos_parse_rate("100Mbps", &v, why, sizeof(why)), -EINVAL);
	assert_contains(why, "1600Mbit/s");	/* says how to write it instead */
}

static void test_qos_bad_values_name_section_and_key(void **state)
{
	static const char *const bad[][2] = {
		{ "match_user", "" }, { "match_user", "@" }, { "match_user", "bob, alice" },
		{ "match_client", "10.0.0.0/33" }, { "match_client", "10.1.2.3/16" },
		{ "match_client", "::1/129" }, { "match_client", "fe80::1%eth0" },
		{ "match_client", "1.2.3" }, { "match_client", "host.example" },
		{ "match_guid", "6b29fc40-ca47-1067-b31d-00dd010662d" },
		{ "match_guid", "6b29fc40ca47-1067-b31d-00dd010662da0" },
		{ "match_guid", "{6b29fc40-ca47-1067-b31d-00dd010662da" },
		{ "match_guid", "6b29fc40-ca47-1067-b31d-00dd010662dg" },
		{ "match_share", "" }, { "match_file", "" }, { "limit", "fast" },
		{ "limit_read", "0" }, { "limit_write", "1.5G" }, { "limit_iops", "0" },
		{ "limit_iops", "1k" }, { "reserve", "-5M" }, { "weight", "0" },
		{ "weight", "1001" }, { "weight", "x" }, { "burst", "0" }, { "burst", "2T" },
	};
	void *mem = talloc_new(NULL);
	char text[256];
	char want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[qos.x]\n%s = %s\n", bad[i][0], bad[i][1]);
		snprintf(want, sizeof(want), "[qos.x] %s = '%s' (line 2): ", bad[i][0], bad[i][1]);
		assert_contains(error_of(mem, text, 0), want);
	}
	talloc_free(mem);
}

static void test_qos_unknown_key_lists_valid_keys(void **state)
{
	void *mem = talloc_new(NULL);
	const char *err = error_of(mem, "[qos.ingest]\nlimt = 200M\n", 0);

	(void)state;
	assert_contains(err, "[qos.ingest] unknown key 'limt' (line 2)");
	assert_contains(err, "valid keys: match_user, match_client, match_guid, match_share, "
			"match_file, limit, limit_read, limit_write, limit_iops, reserve, weight, "
			"burst");
	talloc_free(mem);
}

static void test_qos_section_and_duplicate_errors(void **state)
{
	void *mem = talloc_new(NULL);

	(void)state;
	assert_contains(error_of(mem, "[qos.]\nlimit = 1M\n", 0), "[qos.] limit (line 2)");
	assert_contains(error_of(mem, "[stream.x]\nlimit = 1M\n", 0), "[qos.NAME]");
	assert_contains(error_of(mem, "[qos.a]\nlimit = 1M\n[qos.b]\nweight = 2\n"
				 "[qos.a]\nlimit = 2M\n", 0), "[qos.a] limit (line 6): set twice");
	talloc_free(mem);
}

static void test_qos_finish_checks_each_rule(void **state)
{
	void *mem = talloc_new(NULL);

	(void)state;
	assert_contains(error_of(mem, "[qos.a]\nmatch_user = bob\nburst = 4M\n", 0),
			"[qos.a] (line 2): sets none of limit");
	assert_contains(error_of(mem, "[qos.a]\nlimit = 100M\nreserve = 200M\n", 0),
			"[qos.a] reserve (line 3): 200 MiB/s is more than its limit 100 MiB/s");
	assert_contains(error_of(mem, "[qos.a]\nlimit = 100M\nlimit_read = 101M\n", 0),
			"[qos.a] limit_read (line 3): 101 MiB/s is more than its limit");
	assert_contains(error_of(mem, "[qos.a]\nlimit = 100M\nlimit_write = 1G\n", 0),
			"[qos.a] limit_write (line 3)");
	assert_contains(error_of(mem, "[qos.a]\nlimit_read = 10M\nlimit_write = 10M\nreserve = 30M\n",
				 0), "more than its limit_read + limit_write 20 MiB/s");
	/* a reserve above one direction's limit is fine: the other direction can use it */
	policy(mem, "[qos.a]\nlimit_read = 10M\nreserve = 30M\n");
	talloc_free(mem);
}

static void test_qos_overcommitted_reservations_name_the_rules(void **state)
{
	static const char *text = "[qos.bay1]\nmatch_user = ann\nreserve = 300M\n"
				  "[qos.render]\nmatch_user = farm\nweight = 10\n"
				  "[qos.bay2]\nmatch_user = ben\nreserve = 300M\n";
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = aiod_qos_policy_new(mem);
	char err[512];

	(void)state;
	assert_string_equal(error_of(mem, text, 168 * MiB),
			    "[qos.bay1] reserve 300 MiB/s + [qos.bay2] reserve 300 MiB/s = 600 MiB/s "
			    "exceeds the device capacity 168 MiB/s");
	assert_int_equal(feed(p, text, err, sizeof(err)), 0);
	/* streams come out of the same capacity */
	assert_int_equal(aiod_qos_policy_finish(p, 610 * MiB, 12 * MiB, err, sizeof(err)), -EINVAL);
	assert_contains(err, "[qos.bay2] reserve 300 MiB/s + admitted streams 12 MiB/s = 612 MiB/s");
	assert_int_equal(aiod_qos_policy_finish(p, 612 * MiB, 12 * MiB, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	/* unknown capacity: accepted, with a warning for the log */
	assert_int_equal(aiod_qos_policy_finish(p, 0, 0, err, sizeof(err)), 1);
	assert_contains(err, "= 600 MiB/s accepted unchecked: the device capacity is unknown");
	talloc_free(mem);
}

static void test_qos_default_burst(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.a]\nmatch_user = a\nlimit = 200M\n"
		"[qos.b]\nmatch_user = b\nlimit = 5M\n"
		"[qos.c]\nmatch_user = c\nlimit_read = 100M\nlimit_write = 300M\n"
		"[qos.d]\nmatch_user = d\nreserve = 100M\n"
		"[qos.e]\nmatch_user = e\nweight = 5\n"
		"[qos.f]\nmatch_user = f\nlimit = 200M\nburst = 64K\n");

	(void)state;
	assert_int_equal(p->rules[0].burst, 20 * MiB);	/* 100 ms of the limit */
	assert_int_equal(p->rules[1].burst, MiB);	/* at least one large SMB2 read */
	assert_int_equal(p->rules[2].burst, 30 * MiB);	/* of the largest limit */
	assert_int_equal(p->rules[3].burst, 10 * MiB);	/* no limit: of the reservation */
	assert_int_equal(p->rules[4].burst, MiB);
	assert_int_equal(p->rules[5].burst, 64 * 1024);	/* given */
	assert_int_equal(p->rules[4].weight, 5);
	assert_int_equal(p->rules[0].weight, AIOD_QOS_WEIGHT_DEFAULT);
	talloc_free(mem);
}

static void test_qos_default_rule(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.everyone]\nweight = 50\n"
					   "[qos.bob]\nmatch_user = bob\nlimit = 10M\n");
	struct aiod_qos_principal bob = who_v4("bob", NULL, "media");
	struct aiod_qos_principal ann = who_v4("ann", NULL, NULL);

	(void)state;
	assert_string_equal(winner(p, &bob, NULL), "bob");
	assert_string_equal(winner(p, &ann, NULL), "everyone");
	assert_string_equal(winner(p, &ann, "a/b.mxf"), "everyone");
	assert_contains(error_of(mem, "[qos.one]\nweight = 50\n[qos.two]\nlimit = 1G\n", 0),
			"[qos.one] (line 2) and [qos.two] (line 4) both set no match key");
	p = policy(mem, "[qos.bob]\nmatch_user = bob\nlimit = 10M\n");
	assert_string_equal(winner(p, &ann, NULL), "-");	/* best effort */
	talloc_free(mem);
}

static void test_qos_more_match_keys_win(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.user]\nmatch_user = bob\nlimit = 1M\n"
		"[qos.share_net]\nmatch_share = media\nmatch_client = 0.0.0.0/0\nlimit = 2M\n");
	struct aiod_qos_principal bob = who_v4("bob", "192.0.2.1", "MEDIA");
	struct aiod_qos_principal bob_other = who_v4("bob", "192.0.2.1", "scratch");

	(void)state;
	assert_string_equal(winner(p, &bob, NULL), "share_net");	/* share names ignore case */
	assert_string_equal(winner(p, &bob_other, NULL), "user");
	talloc_free(mem);
}

struct groups {
	const char *member;	/* the one user in group "colour" */
	unsigned calls;
	uid_t last_uid;
};

static bool in_group(void *priv, const char *user, uid_t uid, const char *group)
{
	struct groups *g = priv;

	g->calls++;
	g->last_uid = uid;
	return user != NULL && strcmp(user, g->member) == 0 && strcmp(group, "colour") == 0;
}

static void test_qos_exact_user_beats_group(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.group]\nmatch_user = @colour\nlimit = 1M\n"
		"[qos.user]\nmatch_user = Bob\nlimit = 2M\n");
	struct aiod_qos_principal bob = who_v4("bob", NULL, NULL);
	struct aiod_qos_principal ann = who_v4("ann", NULL, NULL);
	struct groups g = { "bob", 0, 0 };

	(void)state;
	/* bob is in the group and the group rule comes first, yet his own rule wins */
	assert_int_equal(aiod_qos_policy_match(p, &bob, NULL, in_group, &g), 1);
	g.member = "ann";
	assert_int_equal(aiod_qos_policy_match(p, &ann, NULL, in_group, &g), 0);
	/* without a callback no @group rule matches */
	assert_int_equal(aiod_qos_policy_match(p, &ann, NULL, NULL, NULL), -1);
	talloc_free(mem);
}

static void test_qos_group_callback(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.group]\nmatch_user = @colour\nlimit = 1M\n"
		"[qos.user]\nmatch_user = bob\nmatch_share = media\nlimit = 2M\n");
	struct aiod_qos_principal ann = who_v4("ann", NULL, "media");
	struct aiod_qos_principal bob = who_v4("bob", NULL, "media");
	struct groups g = { "ann", 0, 0 };

	(void)state;
	assert_int_equal(aiod_qos_policy_match(p, &ann, NULL, in_group, &g), 0);
	assert_int_equal(g.calls, 1);
	assert_int_equal(g.last_uid, 1000);
	g.calls = 0;
	/* bob's own rule is more specific: the group rule cannot win, nobody asks */
	assert_int_equal(aiod_qos_policy_match(p, &bob, NULL, in_group, &g), 1);
	assert_int_equal(g.calls, 0);
	g.member = "carl";
	assert_int_equal(aiod_qos_policy_match(p, &ann, NULL, in_group, &g), -1);
	talloc_free(mem);
}

static void test_qos_longer_prefix_wins(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.any]\nmatch_client = 0.0.0.0/0\nlimit = 1M\n"
		"[qos.net]\nmatch_client = 10.1.0.0/16\nlimit = 2M\n"
		"[qos.host]\nmatch_client = 10.1.2.3\nlimit = 3M\n"
		"[qos.sub]\nmatch_client = 10.1.2.0/23\nlimit = 4M\n");
	struct aiod_qos_principal w;

	(void)state;
	w = who_v4("bob", "10.1.2.3", NULL);
	assert_string_equal(winner(p, &w, NULL), "host");
	w = who_v4("bob", "10.1.3.255", NULL);	/* inside /23 */
	assert_string_equal(winner(p, &w, NULL), "sub");
	w = who_v4("bob", "10.1.4.0", NULL);	/* just outside /23 */
	assert_string_equal(winner(p, &w, NULL), "net");
	w = who_v4("bob", "192.0.2.1", NULL);
	assert_string_equal(winner(p, &w, NULL), "any");
	w = who_v4("bob", NULL, NULL);		/* no address known: no client rule */
	assert_string_equal(winner(p, &w, NULL), "-");
	w = who_v6("::ffff:10.1.2.3");		/* a dual-stack socket's IPv4 client */
	assert_string_equal(winner(p, &w, NULL), "host");
	w = who_v6("2001:db8::1");		/* IPv4 /0 is not every address */
	assert_string_equal(winner(p, &w, NULL), "-");
	talloc_free(mem);
}

static void test_qos_ipv6_prefixes(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.all6]\nmatch_client = ::/0\nlimit = 1M\n"
		"[qos.doc]\nmatch_client = 2001:DB8::/32\nlimit = 2M\n"
		"[qos.one]\nmatch_client = 2001:db8::7/128\nlimit = 3M\n"
		"[qos.mapped]\nmatch_client = ::ffff:192.0.2.0/120\nlimit = 4M\n");
	struct aiod_qos_principal w;

	(void)state;
	assert_int_equal(p->rules[3].match_client.family, AF_INET);	/* stored as 192.0.2.0/24 */
	assert_int_equal(p->rules[3].match_client.bits, 24);
	w = who_v6("2001:db8::7");
	assert_string_equal(winner(p, &w, NULL), "one");
	w = who_v6("2001:db8::8");
	assert_string_equal(winner(p, &w, NULL), "doc");
	w = who_v6("2001:db9::7");
	assert_string_equal(winner(p, &w, NULL), "all6");
	w = who_v4("bob", "192.0.2.200", NULL);
	assert_string_equal(winner(p, &w, NULL), "mapped");
	w = who_v4("bob", "192.0.3.1", NULL);	/* IPv6 ::/0 does not take IPv4 clients */
	assert_string_equal(winner(p, &w, NULL), "-");
	talloc_free(mem);
}

static void test_qos_literal_file_beats_glob(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.glob]\nmatch_file = *.mxf\nlimit = 1M\n"
		"[qos.one]\nmatch_file = promo/final.mxf\nlimit = 2M\n"
		"[qos.base]\nmatch_file = final.mxf\nlimit = 3M\n");
	struct aiod_qos_principal w = who_v4("bob", NULL, "media");

	(void)state;
	assert_string_equal(winner(p, &w, "promo/final.mxf"), "one");
	assert_string_equal(winner(p, &w, "other/final.mxf"), "base");	/* base name */
	assert_string_equal(winner(p, &w, "deep/er/x.mxf"), "glob");
	assert_string_equal(winner(p, &w, "x.mov"), "-");
	assert_string_equal(winner(p, &w, NULL), "-");	/* no file: no file rule */
	talloc_free(mem);
}

static void test_qos_earlier_rule_wins_a_tie(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.first]\nmatch_share = media\nlimit = 1M\n"
		"[qos.second]\nmatch_share = media\nlimit = 2M\n");
	struct aiod_qos_policy *q = aiod_qos_policy_new(mem);
	struct aiod_qos_principal w = who_v4("bob", "10.0.0.1", "media");
	char err[256];

	(void)state;
	assert_string_equal(winner(p, &w, NULL), "first");
	/* a loader that hands sections over out of order: the line decides */
	assert_int_equal(aiod_qos_policy_add(q, "qos.late", "match_share", "media", 9, err,
					     sizeof(err)), 0);
	assert_int_equal(aiod_qos_policy_add(q, "qos.early", "match_share", "media", 2, err,
					     sizeof(err)), 0);
	assert_int_equal(aiod_qos_policy_add(q, "qos.late", "limit", "1M", 10, err, sizeof(err)), 0);
	assert_int_equal(aiod_qos_policy_add(q, "qos.early", "limit", "1M", 3, err, sizeof(err)), 0);
	assert_string_equal(winner(q, &w, NULL), "-");	/* not finished: no order yet */
	assert_int_equal(aiod_qos_policy_finish(q, 0, 0, err, sizeof(err)), 0);
	assert_string_equal(winner(q, &w, NULL), "early");
	/* step 2 before step 3: a user rule beats a client rule of as many keys */
	p = policy(mem, "[qos.net]\nmatch_client = 10.0.0.0/8\nlimit = 1M\n"
		   "[qos.bob]\nmatch_user = bob\nlimit = 2M\n");
	assert_string_equal(winner(p, &w, NULL), "bob");
	talloc_free(mem);
}

static void test_qos_guid(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.ws]\n"
		"match_guid = {6b29fc40-CA47-1067-b31d-00dd010662da}\nlimit = 1M\n");
	struct aiod_qos_principal w = who_v4("bob", NULL, NULL);
	uint8_t g[16];
	char s[AIOD_QOS_GUID_STRLEN];

	(void)state;
	assert_int_equal(aiod_qos_parse_guid("6B29FC40-CA47-1067-B31D-00DD010662DA", g), 0);
	assert_memory_equal(g, p->rules[0].match_guid, 16);
	aiod_qos_format_guid(g, s);
	assert_string_equal(s, "6b29fc40-ca47-1067-b31d-00dd010662da");
	assert_string_equal(winner(p, &w, NULL), "-");	/* no GUID known (SMB1, or not yet) */
	memcpy(w.guid, g, 16);
	w.have_guid = true;
	assert_string_equal(winner(p, &w, NULL), "ws");
	w.guid[15] ^= 1;
	assert_string_equal(winner(p, &w, NULL), "-");
	assert_int_equal(aiod_qos_parse_guid("6b29fc40-ca47-1067-b31d-00dd010662da}", g), -EINVAL);
	assert_int_equal(aiod_qos_parse_guid("6b29fc40-ca47-1067-b31d00-dd010662da", g), -EINVAL);
	talloc_free(mem);
}

static void test_qos_file_rules_for_the_module(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem,
		"[qos.mxf]\nmatch_file = *.mxf\nlimit = 1M\n"			/* 0: 1 key */
		"[qos.bob]\nmatch_user = bob\nmatch_share = media\nlimit = 2M\n"	/* 1: 2 keys */
		"[qos.bob_mxf]\nmatch_user = bob\nmatch_file = *.mxf\n"
		"match_share = media\nlimit = 3M\n"				/* 2: 3 keys */
		"[qos.bob_one]\nmatch_user = bob\nmatch_file = a.mxf\n"
		"match_share = media\nlimit = 4M\n"				/* 3: 3, literal */
		"[qos.ann_mxf]\nmatch_user = ann\nmatch_file = *.mxf\n"
		"match_share = media\nlimit = 5M\n");				/* 4: not bob */
	struct aiod_qos_principal bob = who_v4("bob", NULL, "media");
	struct aiod_qos_principal carl = who_v4("carl", NULL, "media");
	static const char *const files[] = { "a.mxf", "b.mxf", "c.mov", "x/a.mxf" };
	unsigned idx[4];

	(void)state;
	/* *.mxf alone (1 key) cannot beat bob's 2-key rule: it is left out */
	assert_int_equal(aiod_qos_policy_file_rules(p, &bob, NULL, NULL, idx, 4), 2);
	assert_int_equal(idx[0], 3);
	assert_int_equal(idx[1], 2);
	assert_int_equal(aiod_qos_policy_file_rules(p, &bob, NULL, NULL, idx, 1), 2);
	assert_int_equal(idx[0], 3);	/* the best one kept */
	assert_int_equal(aiod_qos_policy_file_rules(p, &carl, NULL, NULL, idx, 4), 1);
	assert_int_equal(idx[0], 0);
	/* the module's answer (first matching glob, else the rule without a file) is aiod's */
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		unsigned n = aiod_qos_policy_file_rules(p, &bob, NULL, NULL, idx, 4);
		int module = aiod_qos_policy_match(p, &bob, NULL, NULL, NULL);

		for (unsigned i = 0; i < n; i++) {
			if (aiod_qos_rule_file_matches(&p->rules[idx[i]], files[f])) {
				module = (int)idx[i];
				break;
			}
		}
		assert_int_equal(module, aiod_qos_policy_match(p, &bob, files[f], NULL, NULL));
	}
	talloc_free(mem);
}

static void test_qos_reload_identity(void **state)
{
	void *mem = talloc_new(NULL);
	const char *base = "[qos.bay]\nmatch_user = ann\nmatch_client = 10.0.0.0/8\nlimit = 100M\n";
	struct aiod_qos_policy *a = policy(mem, base);
	struct aiod_qos_policy *same = policy(mem, "\n\n[qos.BAY]\nlimit = 100M\nmatch_client = "
					      "10.0.0.0/8\nmatch_user = ann\n");
	struct aiod_qos_policy *faster = policy(mem, "[qos.bay]\nmatch_user = ann\n"
						"match_client = 10.0.0.0/8\nlimit = 200M\n");
	struct aiod_qos_policy *moved = policy(mem, "[qos.bay]\nmatch_user = ann\n"
					       "match_client = 10.0.0.0/9\nlimit = 100M\n");
	struct aiod_qos_policy *renamed = policy(mem, "[qos.bay2]\nmatch_user = ann\n"
						 "match_client = 10.0.0.0/8\nlimit = 100M\n");

	(void)state;
	assert_true(aiod_qos_rule_equal(&a->rules[0], &same->rules[0]));	/* lines ignored */
	assert_true(aiod_qos_rule_same_match(&a->rules[0], &faster->rules[0]));
	assert_false(aiod_qos_rule_equal(&a->rules[0], &faster->rules[0]));
	assert_false(aiod_qos_rule_same_match(&a->rules[0], &moved->rules[0]));
	assert_false(aiod_qos_rule_same_match(&a->rules[0], &renamed->rules[0]));
	talloc_free(mem);
}

static void test_qos_log_line(void **state)
{
	void *mem = talloc_new(NULL);
	struct aiod_qos_policy *p = policy(mem, "[qos.bay1]\nmatch_user = @colour\n"
		"match_client = 2001:db8::/32\nmatch_guid = 6b29fc40-ca47-1067-b31d-00dd010662da\n"
		"match_share = media\nmatch_file = *.mxf\nlimit = 200M\nlimit_read = 1000000\n"
		"limit_iops = 900\nreserve = 100M\n"
		"[qos.rest]\nweight = 20\n");
	char line[512];
	char tiny[16];
	int n;

	(void)state;
	n = aiod_qos_rule_format(&p->rules[0], line, sizeof(line));
	assert_int_equal(n, strlen(line));
	assert_string_equal(line, "[qos.bay1] line 2: user=@colour client=2001:db8::/32 "
			    "guid=6b29fc40-ca47-1067-b31d-00dd010662da share=media file=*.mxf: "
			    "limit 200 MiB/s, read 1000000 B/s, 900 IO/s, reserve 100 MiB/s, "
			    "weight 100, burst 20 MiB");
	aiod_qos_rule_format(&p->rules[1], line, sizeof(line));
	assert_string_equal(line, "[qos.rest] line 12: default (every client): weight 20, "
			    "burst 1 MiB");
	assert_int_equal(aiod_qos_rule_format(&p->rules[0], tiny, sizeof(tiny)), 15);
	assert_string_equal(tiny, "[qos.bay1] line");
	talloc_free(mem);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qos_parses_every_key),
		cmocka_unit_test(test_qos_rate_spellings),
		cmocka_unit_test(test_qos_bad_values_name_section_and_key),
		cmocka_unit_test(test_qos_unknown_key_lists_valid_keys),
		cmocka_unit_test(test_qos_section_and_duplicate_errors),
		cmocka_unit_test(test_qos_finish_checks_each_rule),
		cmocka_unit_test(test_qos_overcommitted_reservations_name_the_rules),
		cmocka_unit_test(test_qos_default_burst),
		cmocka_unit_test(test_qos_default_rule),
		cmocka_unit_test(test_qos_more_match_keys_win),
		cmocka_unit_test(test_qos_exact_user_beats_group),
		cmocka_unit_test(test_qos_group_callback),
		cmocka_unit_test(test_qos_longer_prefix_wins),
		cmocka_unit_test(test_qos_ipv6_prefixes),
		cmocka_unit_test(test_qos_literal_file_beats_glob),
		cmocka_unit_test(test_qos_earlier_rule_wins_a_tie),
		cmocka_unit_test(test_qos_guid),
		cmocka_unit_test(test_qos_file_rules_for_the_module),
		cmocka_unit_test(test_qos_reload_identity),
		cmocka_unit_test(test_qos_log_line),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("qos_policy", tests, NULL, NULL);
}
