/*
 * One QoS rule on its own: whether a reload changed it, and its log line.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#include "qos_policy.h"

static bool same_string(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

bool aiod_qos_rule_same_match(const struct aiod_qos_rule *a, const struct aiod_qos_rule *b)
{
	unsigned keys = a->set & AIOD_QOS_MATCH_KEYS;

	if (strcasecmp(a->name, b->name) != 0 || keys != (b->set & AIOD_QOS_MATCH_KEYS)) {
		return false;
	}
	if ((keys & AIOD_QOS_MATCH_CLIENT) != 0 &&
	    (a->match_client.family != b->match_client.family ||
	     a->match_client.bits != b->match_client.bits ||
	     memcmp(a->match_client.addr, b->match_client.addr, 16) != 0)) {
		return false;
	}
	if ((keys & AIOD_QOS_MATCH_GUID) != 0 && memcmp(a->match_guid, b->match_guid, 16) != 0) {
		return false;
	}
	return same_string(a->match_user, b->match_user) &&
	       same_string(a->match_share, b->match_share) &&
	       same_string(a->match_file, b->match_file);
}

bool aiod_qos_rule_equal(const struct aiod_qos_rule *a, const struct aiod_qos_rule *b)
{
	return aiod_qos_rule_same_match(a, b) && a->limit == b->limit &&
	       a->limit_read == b->limit_read && a->limit_write == b->limit_write &&
	       a->limit_iops == b->limit_iops && a->reserve == b->reserve &&
	       a->weight == b->weight && a->burst == b->burst;
}

static void format_match(const struct aiod_qos_rule *r, struct aiod_qos_msg *m)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char guid[AIOD_QOS_GUID_STRLEN];

	if ((r->set & AIOD_QOS_MATCH_KEYS) == 0) {
		aiod_qos_msg_add(m, " default (every client)");
	}
	if (r->match_user != NULL) {
		aiod_qos_msg_add(m, " user=%s", r->match_user);
	}
	if ((r->set & AIOD_QOS_MATCH_CLIENT) != 0) {
		aiod_qos_format_prefix(&r->match_client, buf, sizeof(buf));
		aiod_qos_msg_add(m, " client=%s", buf);
	}
	if ((r->set & AIOD_QOS_MATCH_GUID) != 0) {
		aiod_qos_format_guid(r->match_guid, guid);
		aiod_qos_msg_add(m, " guid=%s", guid);
	}
	if (r->match_share != NULL) {
		aiod_qos_msg_add(m, " share=%s", r->match_share);
	}
	if (r->match_file != NULL) {
		aiod_qos_msg_add(m, " file=%s", r->match_file);
	}
}

static void format_rate(struct aiod_qos_msg *m, const char *what, uint64_t Bps)
{
	char buf[32];

	if (Bps != 0) {
		aiod_qos_format_bytes(Bps, true, buf, sizeof(buf));
		aiod_qos_msg_add(m, " %s %s,", what, buf);
	}
}

int aiod_qos_rule_format(const struct aiod_qos_rule *r, char *buf, size_t len)
{
	struct aiod_qos_msg m = aiod_qos_msg_start(buf, len);
	char burst[32];

	aiod_qos_msg_add(&m, "[qos.%s] line %u:", r->name, r->line);
	format_match(r, &m);
	aiod_qos_msg_add(&m, ":");
	format_rate(&m, "limit", r->limit);
	format_rate(&m, "read", r->limit_read);
	format_rate(&m, "write", r->limit_write);
	if (r->limit_iops != 0) {
		aiod_qos_msg_add(&m, " %llu IO/s,", (unsigned long long)r->limit_iops);
	}
	format_rate(&m, "reserve", r->reserve);
	aiod_qos_format_bytes(r->burst, false, burst, sizeof(burst));
	aiod_qos_msg_add(&m, " weight %u, burst %s", r->weight, burst);
	return (int)m.used;
}
