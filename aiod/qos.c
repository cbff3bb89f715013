/*
 * QoS in aiod: the flow table, binding principals to flows, and the tick
 * that publishes each flow's rate (qos.h says what a flow is).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aiod.h"
#include "config.h"
#include "clock.h"
#include "engine.h"
#include "log.h"
#include "qos.h"
#include "qos_policy.h"
#include "qos_rates.h"
#include "rtio_qos.h"

/* Ticks of byte totals kept per flow: 10 s of history for the 10 s rate. */
#define QOS_HIST (10u * 1000u / AIOD_QOS_TICK_MS + 1u)
/*
 * A best-effort principal's flow idle this long gives its slot back (its
 * clients bind again when they next do I/O): principals come and go all day.
 */
#define QOS_IDLE_TICKS (600u * 1000u / AIOD_QOS_TICK_MS)
/*
 * A reserved flow's reads go before best effort's while it got less than
 * its reservation plus this fraction of it over the last second. A reader
 * playing at exactly its reservation moves around it: with the reservation
 * itself as the bound its reads queued behind best effort's read-ahead
 * every time it had just caught up, and its next second came too late (in
 * the QoS scenario, 1-2 s dips of the bay several times a minute). A
 * greedy reserved reader still queues like everybody else beyond it.
 */
#define AIOD_QOS_RESERVE_MARGIN 8u
/* Ticks of device history the saturation test looks at (half a second). */
#define QOS_SAT_TICKS 5u

struct qos_flow {
	bool in_use;
	int rule;		/* index in the policy, -1 = best-effort principal */
	char key[160];		/* "rule:NAME" or "be:user@client": one flow per key */
	char principal[160];	/* for aiodctl qos */
	uint32_t binds;		/* binds since the flow was set up */
	uint64_t gen;		/* the slot's generation for this flow */
	struct aiod_qos_flow_state st;
	struct rtio_qos_rates published;
	uint64_t hist[QOS_HIST];	/* bytes read + written at each tick, a ring */
	unsigned hist_pos, hist_n;
	unsigned idle_ticks;	/* ticks without a byte: a best-effort flow goes after QOS_IDLE_TICKS */
	bool behind;		/* reserved, and got no more than it (with a margin) in the last second */
};

struct aiod_qos {
	struct aiod_ctx *ctx;
	int fd;
	struct rtio_qos_header *hdr;
	size_t size;
	struct qos_flow flows[AIOD_QOS_SLOTS];
	uint32_t in_use;
	struct tevent_timer *tick;
	struct aiod_qos_flow_state scratch[AIOD_QOS_SLOTS];	/* qos_decide's input and output */
	uint32_t scratch_map[AIOD_QOS_SLOTS];
	unsigned sat_bits;	/* one bit per recent tick: the device was busy (aiod_qos_device_busy) */
	struct aiod_ratelimit full_log;
};

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

/* A rule's configured rates: what the flow gets while the device has room. */
static void qos_rule_state(const struct aiod_qos_rule *r, struct aiod_qos_flow_state *st)
{
	memset(st, 0, sizeof(*st));
	if (r == NULL) {
		st->best_effort = true;
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

static void qos_rates_of(const struct aiod_qos_flow_state *st, struct rtio_qos_rates *r)
{
	memset(r, 0, sizeof(*r));
	r->rate_Bps = st->limit_Bps;
	r->rate_read_Bps = st->limit_read_Bps;
	r->rate_write_Bps = st->limit_write_Bps;
	r->rate_iops = st->limit_iops;
	r->burst_bytes = st->burst_bytes;
}

static void qos_tick(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
		     void *private_data);

static void qos_arm(struct aiod_qos *q)
{
	if (q->tick == NULL && q->in_use > 0) {
		q->tick = tevent_add_timer(q->ctx->ev, q, tevent_timeval_current_ofs(0, AIOD_QOS_TICK_MS * 1000),
					   qos_tick, q);
	}
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
		qos_arm(q);
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

/* ---- the tick ---- */

static uint64_t qos_hist_rate(const struct qos_flow *f, unsigned ticks)
{
	unsigned back = ticks < f->hist_n ? ticks : f->hist_n - 1;
	uint64_t now, then;

	if (f->hist_n < 2 || back == 0) {
		return 0;
	}
	now = f->hist[(f->hist_pos + QOS_HIST - 1) % QOS_HIST];
	then = f->hist[(f->hist_pos + QOS_HIST - 1 - back) % QOS_HIST];
	return (now - then) * 1000u / (back * AIOD_QOS_TICK_MS);
}

/* Give slot i up: a new generation, so every client of it binds again on its next I/O. */
static void qos_release(struct aiod_qos *q, uint32_t i)
{
	struct rtio_qos_rates none = { 0 };

	(void)rtio_qos_assign(rtio_qos_slot(q->hdr, i), &none);
	q->flows[i].in_use = false;
	q->in_use--;
}

static void qos_observe(struct aiod_qos *q, uint64_t now_ns)
{
	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		struct qos_flow *f = &q->flows[i];

		if (!f->in_use) {
			continue;
		}
		aiod_qos_observe(&f->st, rtio_qos_slot(q->hdr, i), now_ns);
		f->idle_ticks = f->st.demand_Bps > 0 || f->st.seen.waiting > 0 ? 0 : f->idle_ticks + 1;
		if (f->rule < 0 && f->idle_ticks > QOS_IDLE_TICKS) {
			qos_release(q, i);
			continue;
		}
		f->hist[f->hist_pos] = f->st.seen.bytes_read + f->st.seen.bytes_written;
		f->hist_pos = (f->hist_pos + 1) % QOS_HIST;
		if (f->hist_n < QOS_HIST) {
			f->hist_n++;
		}
		f->behind = f->st.reserve_Bps > 0 &&
			    qos_hist_rate(f, 1000u / AIOD_QOS_TICK_MS) <
				    f->st.reserve_Bps + f->st.reserve_Bps / AIOD_QOS_RESERVE_MARGIN;
	}
}

/*
 * Whether the device is the bottleneck: busy (qos_rates.h) in most of the
 * last QOS_SAT_TICKS ticks, so one quiet instant does not lift every share.
 */
static bool qos_saturated(struct aiod_qos *q, const struct aiod_qos_flow_state *st, size_t n)
{
	struct aiod_engine_stats es;
	unsigned busy_ticks = 0;
	bool busy;

	aiod_engine_get_stats(q->ctx->engine, &es);
	busy = aiod_qos_device_busy(&(struct aiod_qos_device_seen){ .queued = es.queued,
			.inflight = es.inflight, .streams_Bps = q->ctx->reserved_Bps }, st, n);
	q->sat_bits = ((q->sat_bits << 1) | busy) & ((1u << QOS_SAT_TICKS) - 1);
	for (unsigned b = q->sat_bits; b != 0; b &= b - 1) {
		busy_ticks++;
	}
	return busy_ticks * 2 > QOS_SAT_TICKS;
}

static void qos_publish(struct aiod_qos *q, uint64_t now_ns)
{
	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		struct qos_flow *f = &q->flows[i];

		if (!f->in_use || memcmp(&f->st.out, &f->published, sizeof(f->published)) == 0) {
			continue;
		}
		f->published = f->st.out;
		rtio_qos_publish(rtio_qos_slot(q->hdr, i), &f->published, now_ns);
	}
}

static void qos_decide(struct aiod_qos *q)
{
	struct aiod_qos_flow_state *st = q->scratch;
	uint32_t *map = q->scratch_map;
	struct aiod_qos_device dev = {
		.capacity_Bps = q->ctx->capacity_Bps,
		.streams_Bps = q->ctx->reserved_Bps,
	};
	size_t n = 0;

	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		if (q->flows[i].in_use) {
			map[n] = i;
			st[n++] = q->flows[i].st;
		}
	}
	dev.saturated = qos_saturated(q, st, n);
	aiod_qos_decide(&dev, st, n);
	for (size_t k = 0; k < n; k++) {
		q->flows[map[k]].st = st[k];
	}
}

/*
 * At debug level, each tick with a flow in use: what the device looked
 * like and what every flow was given, the trace that shows why a flow got
 * the rate it got.
 */
static void qos_log_tick(const struct aiod_qos *q)
{
	struct aiod_engine_stats es;
	char line[1024];
	size_t len;

	if (!aiod_log_enabled(AIOD_LOG_DEBUG) || q->in_use == 0) {
		return;
	}
	aiod_engine_get_stats(q->ctx->engine, &es);
	len = (size_t)snprintf(line, sizeof(line), "QoS tick: busy ticks %x, queued %u, in flight %u",
			       q->sat_bits, es.queued, es.inflight);
	for (uint32_t i = 0; i < AIOD_QOS_SLOTS && len < sizeof(line); i++) {
		const struct qos_flow *f = &q->flows[i];

		if (f->in_use) {
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						"; %s: demand %" PRIu64 " KiB/s, waiting %" PRId64 ", rate %" PRIu64 " KiB/s",
						f->key, f->st.demand_Bps >> 10, (int64_t)f->st.seen.waiting,
						f->st.out.rate_Bps >> 10);
		}
	}
	AIOD_DEBUG("%s", line);
}

static void qos_tick(struct tevent_context *ev, struct tevent_timer *te, struct timeval now,
		     void *private_data)
{
	struct aiod_qos *q = private_data;
	uint64_t now_ns = aiod_now_ns();

	(void)ev;
	(void)te;
	(void)now;
	q->tick = NULL;
	qos_observe(q, now_ns);
	qos_decide(q);
	qos_publish(q, now_ns);
	qos_log_tick(q);
	qos_arm(q);
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

/* Every flow goes; clients bind again on their next I/O. */
static void qos_release_all(struct aiod_qos *q)
{
	for (uint32_t i = 0; i < AIOD_QOS_SLOTS; i++) {
		if (q->flows[i].in_use) {
			qos_release(q, i);
		}
	}
	TALLOC_FREE(q->tick);
}

void aiod_qos_reload(struct aiod_ctx *ctx, struct aiod_config *next)
{
	struct aiod_qos_policy *old = ctx->cfg->qos;
	char err[1024];

	if (aiod_qos_check_policy(ctx, next, err, sizeof(err)) != 0) {
		AIOD_ERR("reload: QoS policy refused, keeping the running one: %s", err);
		return;
	}
	/* the flows point into the old policy's rules: release them before it goes */
	if (ctx->qos != NULL) {
		qos_release_all(ctx->qos);
	}
	ctx->cfg->qos = next->qos != NULL ? talloc_steal(ctx->cfg, next->qos) : NULL;
	next->qos = NULL;
	TALLOC_FREE(old);
	AIOD_NOTICE("reload: QoS policy of %u rules in force; clients bind again on their next I/O",
		    ctx->cfg->qos != NULL ? ctx->cfg->qos->n_rules : 0);
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
		rep->rate_1s_Bps = qos_hist_rate(f, 1000u / AIOD_QOS_TICK_MS);
		rep->rate_10s_Bps = qos_hist_rate(f, 10000u / AIOD_QOS_TICK_MS);
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
