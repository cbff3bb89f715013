/*
 * QoS in aiod: the flow table, binding principals to flows, reload and
 * listing (qos.h says what a flow is; qos_tick.c decides and publishes the
 * rates).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aiod.h"
#include "config.h"
#include "qos_policy.h"
#include "qos_private.h"

static int qos_destructor(struct aiod_qos *q)
{
	if (q->hdr != NULL) {
		(void)munmap(q->hdr, q->size);
	}
	if (q->fd >= 0) {
		(void)close(q->fd);
	}
	return 0;
}

static int qos_region(struct aiod_qos *q, char *err, size_t errlen)
{
	q->size = rtio_qos_region_size(AIOD_QOS_SLOTS);
	q->fd = memfd_create("rtio-qos", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (q->fd < 0) {
		snprintf(err, errlen, "QoS flow table: memfd_create: %s", strerror(errno));
		return -errno;
	}
	/* Sealed: a client's ftruncate would SIGBUS aiod and every other smbd. */
	if (ftruncate(q->fd, (off_t)q->size) != 0 ||
	    fcntl(q->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		snprintf(err, errlen, "QoS flow table: sizing and sealing: %s", strerror(errno));
		return -errno;
	}
	q->hdr = mmap(NULL, q->size, PROT_READ | PROT_WRITE, MAP_SHARED, q->fd, 0);
	if (q->hdr == MAP_FAILED) {
		q->hdr = NULL;
		snprintf(err, errlen, "QoS flow table: mmap: %s", strerror(errno));
		return -errno;
	}
	rtio_qos_init(q->hdr, AIOD_QOS_SLOTS, (uint64_t)getpid());
	return 0;
}

/* The rules in force, for the modules to see without asking (rtio_qos.h). */
static void qos_publish_policy(struct aiod_ctx *ctx)
{
	rtio_qos_policy_set(ctx->qos->hdr, ctx->cfg->qos != NULL ? ctx->cfg->qos->n_rules : 0);
}

int aiod_qos_init(struct aiod_ctx *ctx, char *err, size_t errlen)
{
	struct aiod_qos *q = talloc_zero(ctx, struct aiod_qos);
	int ret;

	if (q == NULL) {
		snprintf(err, errlen, "QoS flow table: out of memory");
		return -ENOMEM;
	}
	q->ctx = ctx;
	q->fd = -1;
	talloc_set_destructor(q, qos_destructor);
	ret = qos_region(q, err, errlen);
	if (ret != 0) {
		talloc_free(q);
		return ret;
	}
	ctx->qos = q;
	qos_publish_policy(ctx);
	return 0;
}

int aiod_qos_fd(const struct aiod_ctx *ctx)
{
	return ctx->qos != NULL ? ctx->qos->fd : -1;
}

/* ---- binding ---- */

/* Whether user (uid) is a member of group, as the system's group database says. */
static bool qos_in_group(void *priv, const char *user, uid_t uid, const char *group)
{
	struct passwd pw, *pwp = NULL;
	struct group *gr = getgrnam(group);
	char buf[4096];
	gid_t groups[256];
	int n = 256;

	(void)priv;
	if (gr == NULL || getpwuid_r(uid, &pw, buf, sizeof(buf), &pwp) != 0 || pwp == NULL) {
		return false;
	}
	if (getgrouplist(user != NULL && user[0] != '\0' ? user : pw.pw_name, pw.pw_gid, groups,
			 &n) < 0) {
		return false;	/* in more than 256 groups: only the ones that fit are checked */
	}
	for (int i = 0; i < n; i++) {
		if (groups[i] == gr->gr_gid) {
			return true;
		}
	}
	return false;
}

/* The principal as the policy sees it, from the module's text fields. */
static void qos_principal(const struct rtio_qos_bind_req *req, struct aiod_qos_principal *who)
{
	memset(who, 0, sizeof(*who));
	who->user = req->user;
	who->uid = (uid_t)req->uid;
	who->share = req->share;
	if (inet_pton(AF_INET, req->client, &((struct sockaddr_in *)&who->client)->sin_addr) == 1) {
		who->client.ss_family = AF_INET;
		who->have_client = true;
	} else if (inet_pton(AF_INET6, req->client,
			     &((struct sockaddr_in6 *)&who->client)->sin6_addr) == 1) {
		who->client.ss_family = AF_INET6;
		who->have_client = true;
	}
	who->have_guid = aiod_qos_parse_guid(req->guid, who->guid) == 0;
}

/* The rule req's principal (and file, if named) falls under, -1 for none. */
static int qos_match(const struct aiod_qos_policy *p, const struct rtio_qos_bind_req *req,
		     struct aiod_qos_principal *who)
{
	qos_principal(req, who);
	return aiod_qos_policy_match(p, who, req->file[0] != '\0' ? req->file : NULL, qos_in_group,
				     NULL);
}

/* A rule's values into st (NULL: best effort); what the flow measured stays. */
static void qos_rule_values(const struct aiod_qos_rule *r, struct aiod_qos_flow_state *st)
{
	st->best_effort = r == NULL;
	if (r == NULL) {
		st->limit_Bps = st->limit_read_Bps = st->limit_write_Bps = st->limit_iops = 0;
		st->reserve_Bps = st->burst_bytes = 0;
		st->weight = AIOD_QOS_DEFAULT_WEIGHT;
		return;
	}
	st->limit_Bps = r->limit;
	st->limit_read_Bps = r->limit_read;
	st->limit_write_Bps = r->limit_write;
	st->limit_iops = r->limit_iops;
	st->reserve_Bps = r->reserve;
	st->burst_bytes = r->burst;
	st->weight = r->weight;
}

/* A rule's configured rates: what the flow gets while the device has room. */
static void qos_rule_state(const struct aiod_qos_rule *r, struct aiod_qos_flow_state *st)
{
	memset(st, 0, sizeof(*st));
	qos_rule_values(r, st);
}

static void qos_rates_of(const struct aiod_qos_flow_state *st, struct rtio_qos_rates *r)
{
	memset(r, 0, sizeof(*r));
	r->rate_Bps = st->limit_Bps;
	r->rate_read_Bps = st->limit_read_Bps;
	r->rate_write_Bps = st->limit_write_Bps;
	r->rate_iops = st->limit_iops;
	r->burst_bytes = st->burst_bytes;
}

static struct qos_flow *qos_find(struct aiod_qos *q, const char *key)
{
	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		if (q->flows[i].in_use && strcmp(q->flows[i].key, key) == 0) {
			return &q->flows[i];
		}
	}
	return NULL;
}

/* A new flow in a free slot, with its rule's limits in force at once; NULL when full. */
static struct qos_flow *qos_new(struct aiod_qos *q, const char *key, const char *principal,
				int rule)
{
	const struct aiod_qos_policy *p = q->ctx->cfg->qos;

	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		struct qos_flow *f = &q->flows[i];

		if (f->in_use) {
			continue;
		}
		memset(f, 0, sizeof(*f));
		f->in_use = true;
		f->rule = rule;
		snprintf(f->key, sizeof(f->key), "%s", key);
		snprintf(f->principal, sizeof(f->principal), "%s", principal);
		qos_rule_state(rule >= 0 ? &p->rules[rule] : NULL, &f->st);
		qos_rates_of(&f->st, &f->published);
		f->gen = rtio_qos_assign(rtio_qos_slot(q->hdr, i), &f->published);
		q->in_use++;
		aiod_qos_tick_arm(q);
		return f;
	}
	AIOD_WARN_RL(&q->full_log, "QoS: all %u flow slots in use; %s is not paced",
		     AIOD_QOS_SLOTS, principal);
	return NULL;
}

int aiod_qos_bind(struct aiod_ctx *ctx, const struct rtio_qos_bind_req *req,
		  struct rtio_qos_bind_rep *rep)
{
	const struct aiod_qos_policy *p = ctx->cfg->qos;
	struct aiod_qos *q = ctx->qos;
	struct aiod_qos_principal who;
	char key[160], principal[160];
	struct qos_flow *f;
	unsigned idx[1];
	int rule;

	rep->slot = RTIO_QOS_NO_FLOW;
	rep->flags = 0;
	rep->generation = 0;
	rep->rule[0] = '\0';
	/* No rule, no pacing: QoS costs nothing where it is not configured. */
	if (q == NULL || p == NULL || p->n_rules == 0) {
		return 0;
	}
	rule = qos_match(p, req, &who);
	if (req->file[0] == '\0' &&
	    aiod_qos_policy_file_rules(p, &who, qos_in_group, NULL, idx, 1) > 0) {
		rep->flags |= RTIO_QOS_FILE_RULES;
	}
	if (rule >= 0) {
		snprintf(key, sizeof(key), "rule:%s", p->rules[rule].name);
		snprintf(principal, sizeof(principal), "%s", p->rules[rule].name);
		snprintf(rep->rule, sizeof(rep->rule), "%s", p->rules[rule].name);
	} else {
		snprintf(key, sizeof(key), "be:%s@%s", req->user, req->client);
		snprintf(principal, sizeof(principal), "%s@%s", req->user, req->client);
	}
	f = qos_find(q, key);
	if (f == NULL) {
		f = qos_new(q, key, principal, rule);
	}
	if (f != NULL) {
		f->binds++;
		rep->slot = (uint32_t)(f - q->flows);
		rep->generation = f->gen;
	}
	return 0;
}

uint64_t aiod_qos_slot_reserve(const struct aiod_ctx *ctx, uint32_t slot)
{
	const struct aiod_qos *q = ctx->qos;

	if (q == NULL || slot >= AIOD_QOS_SLOTS || !q->flows[slot].in_use) {
		return 0;
	}
	return q->flows[slot].st.reserve_Bps;
}

uint64_t aiod_qos_slot_read_limit(const struct aiod_ctx *ctx, uint32_t slot)
{
	const struct aiod_qos *q = ctx->qos;
	uint64_t all, rd;

	if (q == NULL || slot >= AIOD_QOS_SLOTS || !q->flows[slot].in_use) {
		return 0;
	}
	all = q->flows[slot].st.limit_Bps;
	rd = q->flows[slot].st.limit_read_Bps;
	if (all == 0 || (rd != 0 && rd < all)) {
		return rd;
	}
	return all;
}

bool aiod_qos_slot_behind(const struct aiod_ctx *ctx, uint32_t slot)
{
	const struct aiod_qos *q = ctx->qos;

	return q != NULL && slot < AIOD_QOS_SLOTS && q->flows[slot].in_use && q->flows[slot].behind;
}

int aiod_qos_lookup(struct aiod_ctx *ctx, const struct rtio_qos_bind_req *req,
		    struct rtio_qos_policy_rep *rep)
{
	const struct aiod_qos_policy *p = ctx->cfg->qos;
	struct aiod_qos_principal who;
	struct aiod_qos_flow_state st;
	int rule = p != NULL && p->n_rules > 0 ? qos_match(p, req, &who) : -1;

	qos_rule_state(rule >= 0 ? &p->rules[rule] : NULL, &st);
	rep->weight = st.weight;
	rep->limit_Bps = st.limit_Bps;
	rep->limit_read_Bps = st.limit_read_Bps;
	rep->limit_write_Bps = st.limit_write_Bps;
	rep->limit_iops = st.limit_iops;
	rep->reserve_Bps = st.reserve_Bps;
	rep->burst_bytes = st.burst_bytes;
	snprintf(rep->rule, sizeof(rep->rule), "%s", rule >= 0 ? p->rules[rule].name : "");
	return 0;
}

/* ---- reload, listing ---- */

int aiod_qos_check_policy(struct aiod_ctx *ctx, struct aiod_config *cfg, char *err, size_t errlen)
{
	struct aiod_qos_policy *p = cfg->qos;
	char line[512];
	int ret;

	if (p == NULL || p->n_rules == 0) {
		return 0;
	}
	ret = aiod_qos_policy_finish(p, ctx->capacity_Bps, ctx->reserved_Bps, err, errlen);
	if (ret < 0) {
		return ret;
	}
	if (ret > 0) {
		AIOD_WARN("QoS: %s", err);	/* capacity unknown: reservations not checked */
	}
	for (unsigned i = 0; i < p->n_rules; i++) {
		if (aiod_qos_rule_format(&p->rules[i], line, sizeof(line)) >= 0) {
			AIOD_NOTICE("QoS: %s", line);
		}
	}
	return 0;
}

/*
 * Whether every principal falls under the same rule in next as in old: the
 * same rules (by name) in the same places with the same match keys.
 */
static bool qos_same_matching(const struct aiod_qos_policy *old, const struct aiod_qos_policy *next)
{
	if (old == NULL || next == NULL || old->n_rules != next->n_rules) {
		return false;
	}
	for (unsigned i = 0; i < old->n_rules; i++) {
		if (!aiod_qos_rule_same_match(&old->rules[i], &next->rules[i])) {
			return false;
		}
	}
	return true;
}

/*
 * A reload keeps what it can, so a changed limit does not reset every
 * flow's pacing (a reset let every best-effort reader run unpaced until the
 * saturation test caught up: the reserved bay's worst seconds in the QoS
 * scenario came right after its reload). A rule still there by name with
 * the same match keys keeps its flow, history and backlog and takes the new
 * values at the next tick; a flow whose rule went or now matches others is
 * given up. When which rule a principal falls under may have changed, the
 * kept flows are renewed too, so every client binds again and finds its
 * rule (and, matching as before, the same flow). Without rules, every flow goes.
 */
static void qos_carry_over(struct aiod_qos *q, const struct aiod_qos_policy *old,
			   const struct aiod_qos_policy *next)
{
	bool same = qos_same_matching(old, next);

	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		struct qos_flow *f = &q->flows[i];
		int rule = -1;

		if (!f->in_use) {
			continue;
		}
		if (f->rule >= 0 && next != NULL) {
			rule = aiod_qos_policy_find(next, old->rules[f->rule].name);
		}
		if (next == NULL || next->n_rules == 0 ||
		    (f->rule >= 0 && (rule < 0 || !aiod_qos_rule_same_match(&old->rules[f->rule],
									&next->rules[rule])))) {
			aiod_qos_release_slot(q, i);
			continue;
		}
		f->rule = rule;
		qos_rule_values(rule >= 0 ? &next->rules[rule] : NULL, &f->st);
		if (!same) {
			f->gen = rtio_qos_renew(rtio_qos_slot(q->hdr, i));
		}
	}
	if (q->in_use == 0) {
		TALLOC_FREE(q->tick);
	}
}

void aiod_qos_reload(struct aiod_ctx *ctx, struct aiod_config *next)
{
	struct aiod_qos_policy *old = ctx->cfg->qos;
	char err[1024];

	if (aiod_qos_check_policy(ctx, next, err, sizeof(err)) != 0) {
		AIOD_ERR("reload: QoS policy refused, keeping the running one: %s", err);
		return;
	}
	/* the flows index the old policy's rules: moved to the new one before it goes */
	if (ctx->qos != NULL) {
		qos_carry_over(ctx->qos, old, next->qos);
	}
	ctx->cfg->qos = next->qos != NULL ? talloc_steal(ctx->cfg, next->qos) : NULL;
	next->qos = NULL;
	TALLOC_FREE(old);
	/* connections that found no rule to bind to bind again (vfs_rtio_qos.c) */
	if (ctx->qos != NULL) {
		qos_publish_policy(ctx);
	}
	AIOD_NOTICE("reload: QoS policy of %u rules in force, %u flows kept",
		    ctx->cfg->qos != NULL ? ctx->cfg->qos->n_rules : 0, ctx->qos != NULL ? ctx->qos->in_use : 0);
}

int aiod_qos_list(struct aiod_ctx *ctx, uint32_t index, struct rtio_qos_list_rep *rep)
{
	struct aiod_qos *q = ctx->qos;
	uint32_t seen = 0;

	for (uint32_t i = 0; q != NULL && i < AIOD_QOS_SLOTS; i++) {
		const struct qos_flow *f = &q->flows[i];
		struct rtio_qos_counters c;

		if (!f->in_use || seen++ != index) {
			continue;
		}
		rtio_qos_read_counters(rtio_qos_slot(q->hdr, i), &c);
		rep->slot = i;
		rep->binds = f->binds;
		snprintf(rep->rule, sizeof(rep->rule), "%s",
			 f->rule >= 0 ? ctx->cfg->qos->rules[f->rule].name : "");
		snprintf(rep->principal, sizeof(rep->principal), "%.*s",
			 (int)sizeof(rep->principal) - 1, f->principal);
		rep->limit_Bps = f->st.limit_Bps;
		rep->limit_read_Bps = f->st.limit_read_Bps;
		rep->limit_write_Bps = f->st.limit_write_Bps;
		rep->reserve_Bps = f->st.reserve_Bps;
		rep->weight = f->st.weight;
		rep->rate_Bps = f->published.rate_Bps;
		rep->rate_1s_Bps = aiod_qos_flow_rate(f, 1000u / AIOD_QOS_TICK_MS);
		rep->rate_10s_Bps = aiod_qos_flow_rate(f, 10000u / AIOD_QOS_TICK_MS);
		rep->waiting = c.waiting;
		rep->paced = c.paced;
		rep->bytes = c.bytes_read + c.bytes_written;
		return 0;
	}
	return -ENOENT;
}

void aiod_qos_counts(const struct aiod_ctx *ctx, uint32_t *flows, uint32_t *paced)
{
	*flows = *paced = 0;
	for (uint32_t i = 0; ctx->qos != NULL && i < AIOD_QOS_SLOTS; i++) {
		const struct qos_flow *f = &ctx->qos->flows[i];

		if (f->in_use) {
			(*flows)++;
			*paced += f->published.rate_Bps != 0 || f->published.rate_read_Bps != 0 ||
				  f->published.rate_write_Bps != 0 || f->published.rate_iops != 0;
		}
	}
}
