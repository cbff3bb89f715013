/*
 * Unit tests of aiod/qos.c in an in-process aiod: which flow slot a
 * principal is bound to, that a rule's principals share one flow, that no
 * policy means no flow, that a reload keeps flows whose rule only changed its
 * values and sends every client to bind again when matching changed, and
 * that the tick publishes a rule's limit where the clients pace by it.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "unit_ctx.h"
#include "config.h"
#include "qos.h"
#include "qos_policy.h"
#include "rtio_qos.h"
#include "streams.h"

static struct aiod_ctx *qos_ctx(const char *const *kv)
{
	struct aiod_ctx *ctx = unit_ctx_new(NULL, 16u << 20, 1u << 20);
	char err[512];

	if (kv != NULL) {
		ctx->cfg->qos = aiod_qos_policy_new(ctx->cfg);
		for (unsigned i = 0; kv[i] != NULL; i += 3) {
			assert_int_equal(aiod_qos_policy_add(ctx->cfg->qos, kv[i], kv[i + 1], kv[i + 2],
							     i + 1, err, sizeof(err)), 0);
		}
		assert_int_equal(aiod_qos_check_policy(ctx, ctx->cfg, err, sizeof(err)), 0);
	}
	return ctx;
}

static void qbind(struct aiod_ctx *ctx, const char *user, const char *client,
		 struct rtio_qos_bind_rep *rep)
{
	struct rtio_qos_bind_req req;

	memset(&req, 0, sizeof(req));
	snprintf(req.user, sizeof(req.user), "%s", user);
	snprintf(req.client, sizeof(req.client), "%s", client);
	snprintf(req.share, sizeof(req.share), "media");
	assert_int_equal(aiod_qos_bind(ctx, &req, rep), 0);
}

static struct rtio_qos_flow *slot_of(struct aiod_ctx *ctx, uint32_t slot)
{
	return rtio_qos_slot(mmap(NULL, rtio_qos_region_size(AIOD_QOS_SLOTS),
				  PROT_READ | PROT_WRITE, MAP_SHARED, aiod_qos_fd(ctx), 0),
			     slot);
}

static void test_qos_no_policy_no_flow(void **state)
{
	struct aiod_ctx *ctx = qos_ctx(NULL);
	struct rtio_qos_bind_rep rep;

	(void)state;
	qbind(ctx, "alice", "10.0.0.1", &rep);
	assert_int_equal(rep.slot, RTIO_QOS_NO_FLOW);
	assert_true(aiod_qos_fd(ctx) >= 0);
	talloc_free(ctx);
}

static void test_qos_rule_principals_share_a_flow(void **state)
{
	static const char *const kv[] = { "qos.ingest", "match_user", "ingest",
					  "qos.ingest", "limit", "24M", NULL };
	struct aiod_ctx *ctx = qos_ctx(kv);
	struct rtio_qos_bind_rep a, b, c, d;
	struct rtio_qos_list_rep l;

	(void)state;
	qbind(ctx, "ingest", "10.0.0.1", &a);
	qbind(ctx, "ingest", "10.0.0.2", &b);	/* another machine, same user: same flow */
	qbind(ctx, "bob", "10.0.0.3", &c);	/* no rule: his own best-effort flow */
	qbind(ctx, "bob", "10.0.0.3", &d);
	assert_string_equal(a.rule, "ingest");
	assert_int_not_equal(a.slot, RTIO_QOS_NO_FLOW);
	assert_int_equal(a.slot, b.slot);
	assert_int_equal(a.generation, b.generation);
	assert_string_equal(c.rule, "");
	assert_int_not_equal(c.slot, a.slot);
	assert_int_equal(c.slot, d.slot);
	/* the limit is in force from the first bind, before any tick */
	assert_int_equal(slot_of(ctx, a.slot)->rates.rate_Bps, 24u << 20);
	assert_int_equal(slot_of(ctx, c.slot)->rates.rate_Bps, 0);
	assert_int_equal(aiod_qos_list(ctx, 0, &l), 0);
	assert_int_equal(aiod_qos_list(ctx, 1, &l), 0);
	assert_int_equal(aiod_qos_list(ctx, 2, &l), -ENOENT);
	talloc_free(ctx);
}

/* aiod_qos_slot_reserve(): what a bind's slot reserves (control.c marks the client's opens by it). */
static void test_qos_slot_reserve(void **state)
{
	static const char *const kv[] = { "qos.bay", "match_user", "bay", "qos.bay", "reserve", "30M",
					  "qos.ingest", "match_user", "ingest",
					  "qos.ingest", "limit", "24M", NULL };
	struct aiod_ctx *ctx = qos_ctx(kv);
	struct rtio_qos_bind_rep a, b, c;

	(void)state;
	qbind(ctx, "bay", "10.0.0.1", &a);
	qbind(ctx, "ingest", "10.0.0.2", &b);
	qbind(ctx, "bob", "10.0.0.3", &c);
	assert_int_equal(aiod_qos_slot_reserve(ctx, a.slot), 30u << 20);
	assert_int_equal(aiod_qos_slot_reserve(ctx, b.slot), 0);
	assert_int_equal(aiod_qos_slot_reserve(ctx, c.slot), 0);
	assert_int_equal(aiod_qos_slot_reserve(ctx, RTIO_QOS_NO_FLOW), 0);
	talloc_free(ctx);
}

/* aiod_qos_slot_read_limit(): the smaller of limit_read and limit, what read-ahead is bounded by. */
static void test_qos_slot_read_limit(void **state)
{
	static const char *const kv[] = { "qos.ingest", "match_user", "ingest",
					  "qos.ingest", "limit", "24M",
					  "qos.both", "match_user", "both",
					  "qos.both", "limit", "24M", "qos.both", "limit_read", "8M",
					  "qos.rd", "match_user", "rd", "qos.rd", "limit_read", "40M",
					  "qos.wr", "match_user", "wr", "qos.wr", "limit_write", "8M",
					  "qos.bay", "match_user", "bay", "qos.bay", "reserve", "30M", NULL };
	struct aiod_ctx *ctx = qos_ctx(kv);
	struct rtio_qos_bind_rep ingest, both, rd, wr, bay, bob;

	(void)state;
	qbind(ctx, "ingest", "10.0.0.1", &ingest);
	qbind(ctx, "both", "10.0.0.2", &both);
	qbind(ctx, "rd", "10.0.0.3", &rd);
	qbind(ctx, "wr", "10.0.0.4", &wr);
	qbind(ctx, "bay", "10.0.0.5", &bay);
	qbind(ctx, "bob", "10.0.0.6", &bob);
	assert_int_equal(aiod_qos_slot_read_limit(ctx, ingest.slot), 24u << 20);
	assert_int_equal(aiod_qos_slot_read_limit(ctx, both.slot), 8u << 20);
	assert_int_equal(aiod_qos_slot_read_limit(ctx, rd.slot), 40u << 20);
	assert_int_equal(aiod_qos_slot_read_limit(ctx, wr.slot), 0);	/* writes only */
	assert_int_equal(aiod_qos_slot_read_limit(ctx, bay.slot), 0);
	assert_int_equal(aiod_qos_slot_read_limit(ctx, bob.slot), 0);	/* best effort */
	assert_int_equal(aiod_qos_slot_read_limit(ctx, RTIO_QOS_NO_FLOW), 0);
	talloc_free(ctx);
}

/*
 * A reserved flow that got less than its reservation in the last second
 * reads like a stream at its reservation: what its client waits for is due
 * now, a block ahead when the reader gets there at the reserved rate, both
 * ahead of best effort's; once it got its reservation it queues like
 * everybody else.
 */
static void test_qos_behind_reservation_goes_first(void **state)
{
	static const char *const kv[] = { "qos.bay", "match_user", "bay", "qos.bay", "reserve", "30M",
					  NULL };
	struct aiod_ctx *ctx = qos_ctx(kv);
	struct rtio_qos_bind_rep a, b;
	struct aiod_open bay = { .qos_slot = 0 }, other = { .qos_slot = 0 };
	uint64_t be = (uint64_t)ctx->cfg->be_deadline_ms * 1000000ull, now, d_bay, d_other, clock;
	struct timeval until;

	(void)state;
	qbind(ctx, "bay", "10.0.0.1", &a);
	qbind(ctx, "bob", "10.0.0.2", &b);
	bay.qos_slot = a.slot;
	other.qos_slot = b.slot;
	/* a few ticks of nothing read: the bay is behind its reservation */
	until = tevent_timeval_current_ofs(0, 350000);
	for (struct timeval tv = tevent_timeval_current(); tevent_timeval_compare(&tv, &until) < 0;
	     tv = tevent_timeval_current()) {
		assert_int_equal(tevent_loop_once(ctx->ev), 0);
	}
	assert_true(aiod_qos_slot_behind(ctx, a.slot));
	assert_false(aiod_qos_slot_behind(ctx, b.slot));	/* best effort has no reservation */
	now = aiod_now_ns();
	clock = ctx->be_clock_ns;
	d_bay = aiod_stream_deadline(ctx, &bay, 0, 1u << 20);
	assert_true(d_bay >= now && d_bay <= now + 50000000ull);
	assert_int_equal(ctx->be_clock_ns, clock);	/* reserved: not best effort's time */
	/* best effort next to a QoS reservation: a whole deadline later, no share (besteffort.c) */
	d_other = aiod_stream_deadline(ctx, &other, 0, 1u << 20);
	assert_true(d_other >= now + be && d_other <= now + be + 50000000ull);
	assert_int_equal(ctx->be_clock_ns, clock);
	/* 30 MiB ahead at 30 MiB/s: a second from now */
	d_bay = aiod_stream_deadline(ctx, &bay, 30ull << 20, 0);
	assert_true(d_bay >= now + 1000000000ull && d_bay <= now + 1050000000ull);
	/* the bay's clients read 100 MiB within a tick: well past its 30 MiB/s */
	__atomic_fetch_add(&slot_of(ctx, a.slot)->bytes_read, 100ull << 20, __ATOMIC_RELAXED);
	until = tevent_timeval_current_ofs(0, 250000);
	for (struct timeval tv = tevent_timeval_current(); tevent_timeval_compare(&tv, &until) < 0;
	     tv = tevent_timeval_current()) {
		assert_int_equal(tevent_loop_once(ctx->ev), 0);
	}
	assert_false(aiod_qos_slot_behind(ctx, a.slot));
	now = aiod_now_ns();
	assert_true(aiod_stream_deadline(ctx, &bay, 0, 1u << 20) >= now + be);
	talloc_free(ctx);
}

static struct aiod_config *policy_of(struct aiod_ctx *ctx, const char *const *kv)
{
	struct aiod_config *next = talloc_zero(ctx, struct aiod_config);
	char err[256];

	next->qos = aiod_qos_policy_new(next);
	for (unsigned i = 0; kv[i] != NULL; i += 3) {
		assert_int_equal(aiod_qos_policy_add(next->qos, kv[i], kv[i + 1], kv[i + 2], 1, err,
						     sizeof(err)), 0);
	}
	return next;
}

/* Run aiod's loop for ms milliseconds (QoS ticks). */
static void run_ms(struct aiod_ctx *ctx, unsigned ms)
{
	struct timeval until = tevent_timeval_current_ofs(0, ms * 1000);

	for (struct timeval tv = tevent_timeval_current(); tevent_timeval_compare(&tv, &until) < 0;
	     tv = tevent_timeval_current()) {
		assert_int_equal(tevent_loop_once(ctx->ev), 0);
	}
}

/*
 * A reload that changes only a rule's values keeps every flow as it is
 * (binding, backlog, counters) and publishes the new value at the next tick.
 */
static void test_qos_reload_keeps_flows(void **state)
{
	static const char *const kv[] = { "qos.ingest", "match_user", "ingest",
					  "qos.ingest", "limit", "24M", NULL };
	static const char *const kv2[] = { "qos.ingest", "match_user", "ingest",
					   "qos.ingest", "limit", "48M", NULL };
	struct aiod_ctx *ctx = qos_ctx(kv);
	struct rtio_qos_bind_rep a, b, be;
	struct rtio_qos_counters c;
	struct rtio_qos_flow *f;
	struct rtio_qos_hold hold;

	(void)state;
	qbind(ctx, "ingest", "10.0.0.1", &a);
	qbind(ctx, "farm", "10.0.0.2", &be);
	f = slot_of(ctx, a.slot);
	assert_int_equal(f->rates.rate_Bps, 24u << 20);
	/* 8 MiB charged at 24 MiB/s: a backlog of about 1/3 s */
	(void)rtio_qos_charge_hold(f, false, 8u << 20, aiod_now_ns(), &hold);
	aiod_qos_reload(ctx, policy_of(ctx, kv2));
	assert_true(rtio_qos_current(f, a.generation));
	assert_true(rtio_qos_current(slot_of(ctx, be.slot), be.generation));
	rtio_qos_read_counters(f, &c);
	assert_int_equal(c.bytes_read, 8u << 20);
	assert_true(rtio_qos_hold_left(f, &hold, aiod_now_ns()) > 0);
	run_ms(ctx, 250);
	assert_int_equal(f->rates.rate_Bps, 48u << 20);
	qbind(ctx, "ingest", "10.0.0.1", &b);
	assert_int_equal(b.slot, a.slot);
	assert_int_equal(b.generation, a.generation);
	talloc_free(ctx);
}

/*
 * A reload that may move principals to other rules sends every client to
 * bind again: a kept rule's flow is renewed (the same slot, its rate as it
 * was), a flow whose rule went is given up, and a principal a new rule
 * matches binds to it.
 */
static void test_qos_reload_rebinds(void **state)
{
	static const char *const kv[] = { "qos.ingest", "match_user", "ingest",
					  "qos.ingest", "limit", "24M",
					  "qos.old", "match_user", "old",
					  "qos.old", "limit", "8M", NULL };
	static const char *const kv2[] = { "qos.ingest", "match_user", "ingest",
					   "qos.ingest", "limit", "24M",
					   "qos.farm", "match_user", "farm",
					   "qos.farm", "limit", "10M", NULL };
	struct aiod_ctx *ctx = qos_ctx(kv);
	struct rtio_qos_bind_rep a, b, o, fa, fb;

	(void)state;
	qbind(ctx, "ingest", "10.0.0.1", &a);
	qbind(ctx, "old", "10.0.0.3", &o);
	qbind(ctx, "farm", "10.0.0.2", &fa);
	aiod_qos_reload(ctx, policy_of(ctx, kv2));
	assert_false(rtio_qos_current(slot_of(ctx, a.slot), a.generation));
	assert_false(rtio_qos_current(slot_of(ctx, o.slot), o.generation));
	assert_false(rtio_qos_current(slot_of(ctx, fa.slot), fa.generation));
	qbind(ctx, "ingest", "10.0.0.1", &b);
	assert_int_equal(b.slot, a.slot);
	assert_int_equal(slot_of(ctx, b.slot)->rates.rate_Bps, 24u << 20);
	qbind(ctx, "farm", "10.0.0.2", &fb);
	assert_string_equal(fb.rule, "farm");
	assert_int_equal(slot_of(ctx, fb.slot)->rates.rate_Bps, 10u << 20);
	talloc_free(ctx);
}

/* QOS_POLICY: the rule QOS_BIND would match, its values, and no flow for asking. */
static void test_qos_lookup_names_the_rule(void **state)
{
	static const char *const kv[] = { "qos.bay", "match_user", "colour", "qos.bay", "reserve",
					  "300M", "qos.bay", "limit", "400M", NULL };
	struct aiod_ctx *ctx = qos_ctx(kv), *bare = qos_ctx(NULL);
	struct rtio_qos_bind_req req;
	struct rtio_qos_policy_rep rep;
	uint32_t flows, paced;

	(void)state;
	memset(&req, 0, sizeof(req));
	snprintf(req.user, sizeof(req.user), "colour");
	assert_int_equal(aiod_qos_lookup(ctx, &req, &rep), 0);
	assert_string_equal(rep.rule, "bay");
	assert_int_equal(rep.reserve_Bps, 300u << 20);
	assert_int_equal(rep.limit_Bps, 400u << 20);
	aiod_qos_counts(ctx, &flows, &paced);
	assert_int_equal(flows, 0);
	/* best effort, and no policy at all: nothing limited or reserved */
	snprintf(req.user, sizeof(req.user), "render");
	assert_int_equal(aiod_qos_lookup(ctx, &req, &rep), 0);
	assert_string_equal(rep.rule, "");
	assert_int_equal(rep.limit_Bps + rep.reserve_Bps + rep.limit_iops, 0);
	assert_int_equal(aiod_qos_lookup(bare, &req, &rep), 0);
	assert_string_equal(rep.rule, "");
	assert_int_equal(rep.limit_Bps, 0);
	talloc_free(ctx);
	talloc_free(bare);
}

static void test_qos_overcommitted_reservations_refused(void **state)
{
	static const char *const kv[] = { "qos.a", "match_user", "a", "qos.a", "reserve", "600M",
					  "qos.b", "match_user", "b", "qos.b", "reserve", "600M", NULL };
	struct aiod_ctx *ctx = qos_ctx(NULL);
	char err[512];

	(void)state;
	ctx->cfg->qos = aiod_qos_policy_new(ctx->cfg);
	for (unsigned i = 0; kv[i] != NULL; i += 3) {
		assert_int_equal(aiod_qos_policy_add(ctx->cfg->qos, kv[i], kv[i + 1], kv[i + 2], 1,
						     err, sizeof(err)), 0);
	}
	/* unit_ctx: admission capacity 1e9 bytes/s; 1200 MiB/s reserved does not fit */
	assert_int_equal(aiod_qos_check_policy(ctx, ctx->cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "[qos.a]"));
	assert_non_null(strstr(err, "[qos.b]"));
	talloc_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qos_no_policy_no_flow),
		cmocka_unit_test(test_qos_rule_principals_share_a_flow),
		cmocka_unit_test(test_qos_reload_keeps_flows),
		cmocka_unit_test(test_qos_reload_rebinds),
		cmocka_unit_test(test_qos_slot_reserve),
		cmocka_unit_test(test_qos_slot_read_limit),
		cmocka_unit_test(test_qos_behind_reservation_goes_first),
		cmocka_unit_test(test_qos_lookup_names_the_rule),
		cmocka_unit_test(test_qos_overcommitted_reservations_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
