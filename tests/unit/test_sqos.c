/*
 * Unit tests of vfs_rtio_sqos_wire.c: MS-SQOS requests decoded (short,
 * garbage, wrong version), what each option does to an open's logical
 * flow, the status answer's layout and Status, and aiod's byte rates in
 * normalized 8 KiB IOPS. Every buffer is allocated at exactly its length,
 * so that ASan sees a read past it.
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vfs_rtio_sqos_wire.h"

#define FLOW_A 0xa1
#define FLOW_B 0xb2

/* A request as an initiator builds it: zero but for what the test sets. */
struct sqos_msg {
	uint8_t b[VFS_RTIO_SQOS_REQ_V1_1_LEN + 64];
	size_t len;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static struct sqos_msg msg(uint16_t version, uint32_t options, uint8_t flow)
{
	struct sqos_msg m;

	memset(&m, 0, sizeof(m));
	m.len = version == VFS_RTIO_SQOS_V1_0 ? VFS_RTIO_SQOS_REQ_V1_0_LEN
					      : VFS_RTIO_SQOS_REQ_V1_1_LEN;
	put16(m.b, version);
	m.b[4] = (uint8_t)options;
	memset(m.b + 8, flow, 16);	/* LogicalFlowID; 0: the empty GUID */
	return m;
}

/* Parse m from a heap copy of exactly m->len bytes. */
static enum vfs_rtio_sqos_result parse(const struct sqos_msg *m, struct vfs_rtio_sqos_req *req)
{
	uint8_t *copy = malloc(m->len > 0 ? m->len : 1);
	enum vfs_rtio_sqos_result r;

	assert_non_null(copy);
	memcpy(copy, m->b, m->len);
	r = vfs_rtio_sqos_parse(m->len > 0 ? copy : NULL, m->len, req);
	free(copy);
	return r;
}

/* parse and apply, as the module does */
static enum vfs_rtio_sqos_result run(struct vfs_rtio_sqos_flow *flow, const struct sqos_msg *m,
				     size_t max_out, struct vfs_rtio_sqos_req *req)
{
	enum vfs_rtio_sqos_result r = parse(m, req);

	return r != VFS_RTIO_SQOS_OK ? r : vfs_rtio_sqos_apply(flow, req, max_out);
}

static void test_sqos_parse_every_short_length(void **state)
{
	struct vfs_rtio_sqos_req req;

	(void)state;
	for (unsigned v = 0; v < 2; v++) {
		struct sqos_msg m = msg(v ? VFS_RTIO_SQOS_V1_1 : VFS_RTIO_SQOS_V1_0,
					VFS_RTIO_SQOS_GET_STATUS, FLOW_A);
		size_t full = m.len;

		for (m.len = 0; m.len < full; m.len++) {
			assert_int_equal(parse(&m, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
		}
		assert_int_equal(parse(&m, &req), VFS_RTIO_SQOS_OK);
		assert_int_equal(req.size, full);
		m.len = sizeof(m.b);	/* names may follow */
		assert_int_equal(parse(&m, &req), VFS_RTIO_SQOS_OK);
	}
	assert_int_equal(vfs_rtio_sqos_parse(NULL, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
}

/* A 1.0-sized request that says 1.1 lacks 1.1's fields (Microsoft's Sqos_InvalidRequestType). */
static void test_sqos_parse_v1_0_body_claiming_v1_1(void **state)
{
	struct sqos_msg m = msg(VFS_RTIO_SQOS_V1_0, VFS_RTIO_SQOS_SET_LOGICAL_FLOW_ID, FLOW_A);
	struct vfs_rtio_sqos_req req;

	(void)state;
	put16(m.b, VFS_RTIO_SQOS_V1_1);
	assert_int_equal(parse(&m, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
}

static void test_sqos_parse_unknown_version(void **state)
{
	static const uint16_t bad[] = { 0x0000, 0x0001, 0x00ff, 0x0102, 0x0200, 0xffff };
	struct vfs_rtio_sqos_req req;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sqos_msg m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_GET_STATUS, FLOW_A);

		put16(m.b, bad[i]);
		assert_int_equal(parse(&m, &req), VFS_RTIO_SQOS_REVISION_MISMATCH);
		m.len = 2;	/* the version is checked before the length */
		assert_int_equal(parse(&m, &req), VFS_RTIO_SQOS_REVISION_MISMATCH);
	}
}

static void test_sqos_parse_needs_a_known_option(void **state)
{
	struct sqos_msg m = msg(VFS_RTIO_SQOS_V1_1, 0, FLOW_A);
	struct vfs_rtio_sqos_req req;

	(void)state;
	assert_int_equal(parse(&m, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	m.b[4] = 0x20;
	m.b[7] = 0x80;
	assert_int_equal(parse(&m, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	m.b[4] = 0x20 | VFS_RTIO_SQOS_GET_STATUS;	/* unknown bits beside a known one: ignored */
	assert_int_equal(parse(&m, &req), VFS_RTIO_SQOS_OK);
}

/* Garbage of every length up to past the fixed part: decoded or refused, never read past. */
static void test_sqos_garbage_never_crashes(void **state)
{
	uint32_t x = 12345;

	(void)state;
	for (unsigned round = 0; round < 4000; round++) {
		struct sqos_msg m;
		struct vfs_rtio_sqos_req req;
		struct vfs_rtio_sqos_flow flow = { .associated = (round & 1) != 0 };
		struct vfs_rtio_sqos_policy pol = { .available = (round & 2) != 0, .max_iops = 9 };
		uint8_t out[VFS_RTIO_SQOS_RESP_V1_1_LEN];
		enum vfs_rtio_sqos_result r;

		m.len = round % sizeof(m.b);
		for (size_t i = 0; i < sizeof(m.b); i++) {
			x = x * 1103515245u + 12345u;
			m.b[i] = (uint8_t)(x >> 16);
		}
		if (round % 3 != 0) {	/* mostly a real version, to get past it */
			put16(m.b, round % 3 == 1 ? VFS_RTIO_SQOS_V1_0 : VFS_RTIO_SQOS_V1_1);
		}
		r = run(&flow, &m, round % 200, &req);
		assert_true(r <= VFS_RTIO_SQOS_NOT_FOUND);
		if (r == VFS_RTIO_SQOS_OK && (req.options & VFS_RTIO_SQOS_GET_STATUS)) {
			assert_true(vfs_rtio_sqos_status(&flow, &req, &pol, round % 200, out) <=
				    round % 200);
		}
	}
}

static void test_sqos_status_needs_a_flow(void **state)
{
	struct vfs_rtio_sqos_flow flow = { .associated = false };
	struct vfs_rtio_sqos_req req;
	struct sqos_msg m;

	(void)state;
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_GET_STATUS, FLOW_A);
	assert_int_equal(run(&flow, &m, 96, &req), VFS_RTIO_SQOS_NOT_FOUND);
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_POLICY, FLOW_A);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_NOT_FOUND);
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_UPDATE_COUNTERS, FLOW_A);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_NOT_FOUND);
	/* a probe needs a flow to name */
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_PROBE_POLICY, 0);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	assert_false(flow.associated);
	/* joined in the same request: fine */
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_LOGICAL_FLOW_ID | VFS_RTIO_SQOS_GET_STATUS,
		FLOW_A);
	assert_int_equal(run(&flow, &m, 96, &req), VFS_RTIO_SQOS_OK);
	assert_true(flow.associated);
	assert_int_equal(flow.flow_id[15], FLOW_A);
}

static void test_sqos_join_probe_leave(void **state)
{
	struct vfs_rtio_sqos_flow flow = { .associated = false };
	struct vfs_rtio_sqos_req req;
	struct sqos_msg m;

	(void)state;
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_PROBE_POLICY, FLOW_A);
	memset(m.b + 40, 0x11, 16);	/* InitiatorID */
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_OK);
	assert_true(flow.associated);
	assert_int_equal(flow.initiator_id[0], 0x11);
	/* in a flow, a probe is ignored: neither the flow nor its policy moves */
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_PROBE_POLICY, FLOW_B);
	memset(m.b + 40, 0x22, 16);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_OK);
	assert_int_equal(flow.flow_id[0], FLOW_A);
	assert_int_equal(flow.initiator_id[0], 0x11);
	/* another flow: the old one's policy stays behind */
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_LOGICAL_FLOW_ID, FLOW_B);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_OK);
	assert_int_equal(flow.flow_id[0], FLOW_B);
	assert_int_equal(flow.initiator_id[0], 0);
	/* the empty GUID leaves */
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_LOGICAL_FLOW_ID, 0);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_OK);
	assert_false(flow.associated);
}

/* The policy values Windows refuses (the spec's <8>) and bad names; the flow stays as it was. */
static void test_sqos_set_policy_checked(void **state)
{
	struct vfs_rtio_sqos_flow flow = { .associated = true, .flow_id = { FLOW_A } };
	struct vfs_rtio_sqos_flow before = flow;
	struct vfs_rtio_sqos_req req;
	struct sqos_msg m;

	(void)state;
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_POLICY, FLOW_A);
	put64(m.b + 56, VFS_RTIO_SQOS_RATE_MAX + 1);	/* Limit */
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_POLICY, FLOW_A);
	put64(m.b + 56, 100);
	put64(m.b + 64, 200);	/* Reservation above Limit */
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_POLICY, FLOW_A);
	put64(m.b + 56, 100);
	memset(m.b + 24, 0x33, 16);	/* values and a PolicyID */
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_POLICY, FLOW_A);
	put64(m.b + 112, VFS_RTIO_SQOS_RATE_MAX + 1);	/* BandwidthLimit */
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	/* InitiatorName inside the fixed fields, past the end, too long */
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_POLICY, FLOW_A);
	put16(m.b + 72, 100);
	put16(m.b + 74, 4);
	m.len = sizeof(m.b);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	put16(m.b + 72, (uint16_t)(sizeof(m.b) - 2));
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	put16(m.b + 72, VFS_RTIO_SQOS_REQ_V1_1_LEN);
	put16(m.b + 74, VFS_RTIO_SQOS_NAME_MAX + 2);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	put16(m.b + 76, VFS_RTIO_SQOS_REQ_V1_1_LEN);	/* the node name too */
	put16(m.b + 78, 65535);
	put16(m.b + 74, 0);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	assert_memory_equal(&flow, &before, sizeof(flow));
	/* names where they belong, values and no PolicyID: recorded */
	put16(m.b + 78, 8);
	put16(m.b + 72, VFS_RTIO_SQOS_REQ_V1_1_LEN + 8);
	put16(m.b + 74, 6);
	put64(m.b + 56, 500);
	put64(m.b + 64, 50);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_OK);
	assert_int_equal(flow.limit, 500);
	assert_int_equal(flow.reservation, 50);
}

static void test_sqos_status_layout(void **state)
{
	struct vfs_rtio_sqos_flow flow = { .associated = false };
	struct vfs_rtio_sqos_policy pol;
	struct vfs_rtio_sqos_req req;
	uint8_t out[VFS_RTIO_SQOS_RESP_V1_1_LEN];
	struct sqos_msg m;

	(void)state;
	vfs_rtio_sqos_policy_from(200000000, 0, 0, 0, 100000000, &pol);
	m = msg(VFS_RTIO_SQOS_V1_1, VFS_RTIO_SQOS_SET_LOGICAL_FLOW_ID | VFS_RTIO_SQOS_GET_STATUS,
		FLOW_A);
	assert_int_equal(run(&flow, &m, 4096, &req), VFS_RTIO_SQOS_OK);
	assert_int_equal(vfs_rtio_sqos_status(&flow, &req, &pol, 4096, out),
			 VFS_RTIO_SQOS_RESP_V1_1_LEN);
	assert_int_equal(out[0], 0x01);	/* ProtocolVersion 0x0101, as asked */
	assert_int_equal(out[1], 0x01);
	assert_int_equal(get32(out + 4), 0);	/* Options */
	assert_int_equal(out[8], FLOW_A);
	assert_int_equal(out[23], FLOW_A);
	assert_int_equal(get32(out + 56), VFS_RTIO_SQOS_TTL_MS);
	assert_int_equal(get32(out + 60), VFS_RTIO_SQOS_STATUS_OK);
	assert_int_equal(get64(out + 64), 200000000 / 8192);	/* MaximumIoRate */
	assert_int_equal(get64(out + 72), 100000000 / 8192);	/* MinimumIoRate */
	assert_int_equal(get32(out + 80), 8192);		/* BaseIoSize */
	assert_int_equal(get32(out + 84), 0);
	assert_int_equal(get64(out + 88), 200000000 / 1024);	/* MaximumBandwidth, KiB/s */
	/* 1.0: no MaximumBandwidth */
	m = msg(VFS_RTIO_SQOS_V1_0, VFS_RTIO_SQOS_GET_STATUS, FLOW_A);
	assert_int_equal(run(&flow, &m, 4096, &req), VFS_RTIO_SQOS_OK);
	assert_int_equal(vfs_rtio_sqos_status(&flow, &req, &pol, 4096, out),
			 VFS_RTIO_SQOS_RESP_V1_0_LEN);
	assert_int_equal(out[1], 0x01);
	assert_int_equal(out[0], 0x00);
	/* the spec's minimum output buffer: the answer is cut to it */
	assert_int_equal(run(&flow, &m, 80, &req), VFS_RTIO_SQOS_OK);
	assert_int_equal(vfs_rtio_sqos_status(&flow, &req, &pol, 80, out), 80);
	assert_int_equal(run(&flow, &m, 79, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
	assert_int_equal(run(&flow, &m, 0, &req), VFS_RTIO_SQOS_INVALID_PARAMETER);
}

static uint32_t status_of(const struct vfs_rtio_sqos_flow *flow,
			  const struct vfs_rtio_sqos_policy *pol)
{
	struct vfs_rtio_sqos_req req = { .version = VFS_RTIO_SQOS_V1_1 };
	uint8_t out[VFS_RTIO_SQOS_RESP_V1_1_LEN];

	assert_int_equal(vfs_rtio_sqos_status(flow, &req, pol, sizeof(out), out), sizeof(out));
	return get32(out + 60);
}

/* aiod.ini is the policy: the Status says when the initiator asked for something else. */
static void test_sqos_status_codes(void **state)
{
	struct vfs_rtio_sqos_flow flow = { .associated = true, .flow_id = { FLOW_A } };
	struct vfs_rtio_sqos_policy pol, none = { .available = false, .max_iops = 7 };
	struct vfs_rtio_sqos_req req = { .version = VFS_RTIO_SQOS_V1_1 };
	uint8_t out[VFS_RTIO_SQOS_RESP_V1_1_LEN];

	(void)state;
	vfs_rtio_sqos_policy_from(8192 * 100, 0, 0, 0, 8192 * 10, &pol);
	assert_int_equal(status_of(&flow, &pol), VFS_RTIO_SQOS_STATUS_OK);
	assert_int_equal(status_of(&flow, &none), VFS_RTIO_SQOS_STATUS_NOT_AVAILABLE);
	assert_int_equal(vfs_rtio_sqos_status(&flow, &req, &none, sizeof(out), out), sizeof(out));
	assert_int_equal(get64(out + 64), 0);	/* nothing made up when aiod cannot be asked */
	flow.limit = 100;
	flow.reservation = 10;
	flow.bandwidth_limit = 8192 * 100 / 1024;
	assert_int_equal(status_of(&flow, &pol), VFS_RTIO_SQOS_STATUS_OK);	/* asked what applies */
	flow.limit = 50;
	assert_int_equal(status_of(&flow, &pol), VFS_RTIO_SQOS_STATUS_CONFIGURATION_MISMATCH);
	memset(flow.policy_id, 0x44, 16);
	assert_int_equal(status_of(&flow, &pol), VFS_RTIO_SQOS_STATUS_UNKNOWN_POLICY_ID);
}

/* Byte rates in normalized 8 KiB IOPS and KiB/s, never letting through more than configured. */
static void test_sqos_policy_conversion(void **state)
{
	struct vfs_rtio_sqos_policy p;

	(void)state;
	vfs_rtio_sqos_policy_from(0, 0, 0, 0, 0, &p);
	assert_true(p.available);
	assert_int_equal(p.max_iops, 0);
	assert_int_equal(p.min_iops, 0);
	assert_int_equal(p.max_kibps, 0);
	vfs_rtio_sqos_policy_from(200000000, 0, 0, 0, 300000000, &p);
	assert_int_equal(p.max_iops, 24414);	/* 200 MB/s / 8 KiB, down */
	assert_int_equal(p.min_iops, 36621);	/* 300 MB/s / 8 KiB, down */
	assert_int_equal(p.max_kibps, 195312);
	/* a limit below one normalized I/O a second is still a limit */
	vfs_rtio_sqos_policy_from(1000, 0, 0, 0, 4096, &p);
	assert_int_equal(p.max_iops, 1);
	assert_int_equal(p.max_kibps, 1);
	assert_int_equal(p.min_iops, 0);	/* a reservation is never rounded up */
	/* an IOPS limit tighter than the bytes */
	vfs_rtio_sqos_policy_from(200000000, 0, 0, 100, 0, &p);
	assert_int_equal(p.max_iops, 100);
	assert_int_equal(p.max_kibps, 195312);
	vfs_rtio_sqos_policy_from(0, 0, 0, 100, 0, &p);
	assert_int_equal(p.max_iops, 100);
	assert_int_equal(p.max_kibps, 0);
	/* per direction: the total is bounded by both together, not by one */
	vfs_rtio_sqos_policy_from(0, 8192 * 30, 8192 * 10, 0, 0, &p);
	assert_int_equal(p.max_iops, 40);
	vfs_rtio_sqos_policy_from(8192 * 20, 8192 * 30, 8192 * 10, 0, 0, &p);
	assert_int_equal(p.max_iops, 20);
	vfs_rtio_sqos_policy_from(0, 8192 * 30, 0, 0, 0, &p);
	assert_int_equal(p.max_iops, 0);
	vfs_rtio_sqos_policy_from(0, UINT64_MAX, UINT64_MAX, 0, 0, &p);
	assert_int_equal(p.max_iops, UINT64_MAX / 8192);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sqos_parse_every_short_length),
		cmocka_unit_test(test_sqos_parse_v1_0_body_claiming_v1_1),
		cmocka_unit_test(test_sqos_parse_unknown_version),
		cmocka_unit_test(test_sqos_parse_needs_a_known_option),
		cmocka_unit_test(test_sqos_garbage_never_crashes),
		cmocka_unit_test(test_sqos_status_needs_a_flow),
		cmocka_unit_test(test_sqos_join_probe_leave),
		cmocka_unit_test(test_sqos_set_policy_checked),
		cmocka_unit_test(test_sqos_status_layout),
		cmocka_unit_test(test_sqos_status_codes),
		cmocka_unit_test(test_sqos_policy_conversion),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("sqos", tests, NULL, NULL);
}
