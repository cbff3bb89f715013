/*
 * The QoS policy: the [qos.NAME] rules of aiod.ini, validated
 * (qos_policy.c), which rule a client's I/O falls under (qos_match.c), and
 * one rule's identity across a reload and its log line (qos_rule.c).
 * Pure: no I/O, no clock, no global state. The loader hands each key over as
 * a (section, key, value, line) tuple, so any ini reader can feed it; the
 * rate scheduler and the module consume the finished rules.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef AIOD_QOS_POLICY_H
#define AIOD_QOS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <talloc.h>

#include "qos_values.h"

#define AIOD_QOS_MAX_RULES 256

/*
 * weight: a rule's share of the capacity that reservations and limits leave
 * over, relative to the other active rules (and to clients no rule matches,
 * which count as weight 100). The default is 100 rather than 1 so a rule can
 * be made LESS important than the default (weight = 25) as easily as more,
 * in whole percent. At most 1000: ten times the default is as far as a
 * share is meaningful, and the bound keeps the scheduler's tags (cost /
 * weight) from spreading so far apart that a weight-1 flow waits for many
 * rounds.
 */
#define AIOD_QOS_WEIGHT_DEFAULT 100
#define AIOD_QOS_WEIGHT_MAX 1000

/*
 * burst, when not set: what the largest limit lets through in 100 ms (of
 * limit, limit_read, limit_write; of reserve if the rule has no limit), and
 * at least 1 MiB. 100 ms is short enough that a limit holds within 10 %
 * over any 1-second window, and long enough that a client's pipeline of
 * outstanding reads is not stalled request by request. 1 MiB is one large
 * SMB2 read or write (what Windows and macOS clients send for big files):
 * a bucket smaller than one request would split every request across refills.
 */
#define AIOD_QOS_BURST_MS 100
#define AIOD_QOS_BURST_MIN (1ull << 20)

/* Which keys a rule sets (struct aiod_qos_rule.set). */
enum aiod_qos_key_bit {
	AIOD_QOS_MATCH_USER = 1u << 0,
	AIOD_QOS_MATCH_CLIENT = 1u << 1,
	AIOD_QOS_MATCH_GUID = 1u << 2,
	AIOD_QOS_MATCH_SHARE = 1u << 3,
	AIOD_QOS_MATCH_FILE = 1u << 4,
	AIOD_QOS_LIMIT = 1u << 5,
	AIOD_QOS_LIMIT_READ = 1u << 6,
	AIOD_QOS_LIMIT_WRITE = 1u << 7,
	AIOD_QOS_LIMIT_IOPS = 1u << 8,
	AIOD_QOS_RESERVE = 1u << 9,
	AIOD_QOS_WEIGHT = 1u << 10,
	AIOD_QOS_BURST = 1u << 11,
};
#define AIOD_QOS_MATCH_KEYS 0x1fu	/* the five match_* bits */
#define AIOD_QOS_N_KEYS 12

/*
 * One [qos.NAME] section. Match keys not set are NULL / not in set and match
 * anything; values not set are 0 (no limit, no reservation). A rule sets at
 * least one of limit, limit_read, limit_write, limit_iops, reserve, weight.
 * limit bounds reads and writes together; limit_read / limit_write bound
 * each direction, and limit still bounds their sum when it is set too.
 */
struct aiod_qos_rule {
	char *name;			/* after "qos." in the section name */
	unsigned line;			/* first line of the section seen, 0 if unknown */
	unsigned set;			/* enum aiod_qos_key_bit of the keys given */
	unsigned key_line[AIOD_QOS_N_KEYS];	/* each key's line, by bit number */
	/* match keys */
	char *match_user;		/* user name, or "@group" (resolved by the caller) */
	struct aiod_qos_prefix match_client;
	uint8_t match_guid[16];
	char *match_share;		/* compared ignoring case */
	char *match_file;		/* fnmatch glob, share-relative path or base name */
	/* values */
	uint64_t limit;			/* bytes/s, reads and writes together */
	uint64_t limit_read;		/* bytes/s */
	uint64_t limit_write;		/* bytes/s */
	uint64_t limit_iops;		/* requests/s */
	uint64_t reserve;		/* bytes/s guaranteed while the clients want it */
	uint32_t weight;		/* 1..AIOD_QOS_WEIGHT_MAX */
	uint64_t burst;			/* bytes; set by aiod_qos_policy_finish() if not given */
};

/* The rules in the order their sections first appeared. */
struct aiod_qos_policy {
	struct aiod_qos_rule *rules;
	unsigned n_rules;
	unsigned *order;	/* rule indices, most specific first (qos_match.c); by finish */
};

/* Who does the I/O. user and share may be NULL (then rules naming them do not match). */
struct aiod_qos_principal {
	const char *user;
	uid_t uid;
	struct sockaddr_storage client;
	bool have_client;
	uint8_t guid[16];		/* RFC 4122 order, see qos_values.h */
	bool have_guid;
	const char *share;
};

/*
 * Whether user (uid) is a member of group: the caller's (getgrouplist, or
 * the SIDs in the session token). Called only for rules that would win.
 */
typedef bool (*aiod_qos_in_group_fn)(void *priv, const char *user, uid_t uid, const char *group);

struct aiod_qos_policy *aiod_qos_policy_new(TALLOC_CTX *mem_ctx);

/*
 * One key of aiod.ini: section is the whole "qos.NAME" (any case), line its
 * line for messages (0 if unknown). The first key of a section creates its
 * rule. Returns 0, or -EINVAL / -ENOMEM with one message in err naming the
 * section and the key ("[qos.bay1] limit = 'fast' (line 12): ..."); the
 * caller puts the file name in front. An unknown key's message lists the
 * valid ones. A key given twice in one section is an error. Matching
 * finds nothing until aiod_qos_policy_finish() has run after the last add.
 */
int aiod_qos_policy_add(struct aiod_qos_policy *p, const char *section, const char *key,
			const char *value, unsigned line, char *err, size_t errlen);

/*
 * After the last key: validate every rule and fill in default bursts.
 * - every rule sets a limit*, reserve or weight (else it would do nothing);
 * - reserve <= limit, and limit_read, limit_write <= limit;
 * - at most one rule sets no match key: it is the DEFAULT rule, matching
 *   every client that no more specific rule matches;
 * - the reservations, plus streams_reserved_Bps (what admitted streams hold
 *   now: both come out of the same device), fit in capacity_Bps (what
 *   admission may hand out: the device capacity less [admission] headroom).
 * Returns 0; 1 when capacity_Bps is 0 (unknown) and rules reserve: accepted,
 * with a warning for the log in err; -EINVAL with the message in err (an
 * overcommit names every reserving rule, their sum and the capacity).
 */
int aiod_qos_policy_finish(struct aiod_qos_policy *p, uint64_t capacity_Bps,
			   uint64_t streams_reserved_Bps, char *err, size_t errlen);

/*
 * Sort the rules into p->order by precedence (qos_match.c); called by
 * aiod_qos_policy_finish(). -ENOMEM or 0.
 */
int aiod_qos_policy_order(struct aiod_qos_policy *p);

/* Bytes/s p's rules reserve together (0 for no policy). */
uint64_t aiod_qos_policy_reserved(const struct aiod_qos_policy *p);

/* The index of rule NAME (without "qos."), -1 if there is none. */
int aiod_qos_policy_find(const struct aiod_qos_policy *p, const char *name);

/*
 * The rule that governs who's I/O on file (share-relative path; NULL: only
 * rules without match_file are considered). Returns its index, or -1 when
 * none matches (best effort at the default weight) or the policy is not
 * finished. Precedence: qos_match.c. in_group may be NULL (then @group rules
 * never match); it is asked only when every more specific rule failed.
 */
int aiod_qos_policy_match(const struct aiod_qos_policy *p, const struct aiod_qos_principal *who,
			  const char *file, aiod_qos_in_group_fn in_group, void *priv);

/*
 * For the module, which matches file names itself (no round trip per open):
 * the rules with a match_file that apply to who and outrank who's rule
 * without a file (aiod_qos_policy_match(..., NULL, ...)), best first, at
 * most max of them into idx. Returns how many apply (may exceed max). The
 * module's rule for a file is the first of these whose glob matches
 * (aiod_qos_rule_file_matches), else who's rule without a file: the same
 * answer aiod_qos_policy_match() gives for that file.
 */
unsigned aiod_qos_policy_file_rules(const struct aiod_qos_policy *p,
				    const struct aiod_qos_principal *who,
				    aiod_qos_in_group_fn in_group, void *priv, unsigned *idx,
				    unsigned max);

/* Whether path (share-relative) or its base name matches the rule's match_file. */
bool aiod_qos_rule_file_matches(const struct aiod_qos_rule *r, const char *path);

/*
 * Reload. Same name and same match keys: the same clients fall under it, so
 * flows keep their state and take the new values. aiod_qos_rule_equal: also
 * the same values (burst as finished), nothing to apply. Lines are ignored.
 */
bool aiod_qos_rule_same_match(const struct aiod_qos_rule *a, const struct aiod_qos_rule *b);
bool aiod_qos_rule_equal(const struct aiod_qos_rule *a, const struct aiod_qos_rule *b);

/*
 * One log line (aiod -t, reload), without a newline:
 * "[qos.bay1] line 3: user=@colour share=media: limit 200 MiB/s, reserve
 * 100 MiB/s, weight 100, burst 20 MiB". Returns the length written (cut to len - 1).
 */
int aiod_qos_rule_format(const struct aiod_qos_rule *r, char *buf, size_t len);

#endif
