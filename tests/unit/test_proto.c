/*
 * Unit tests: message verification (common/rtio_proto.c).
 *
 * Copyright (C) 2026 rtio developers
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rtio_proto.h"
#include "rtio_shm.h"

static void test_proto_verify_accepts_every_request(void **state)
{
	(void)state;
	for (unsigned op = 1; op < RTIO_OP_MAX; op++) {
		union rtio_msg m;
		size_t len = rtio_msg_expected_len(op, 0);

		assert_int_not_equal(len, 0);
		memset(&m, 0, sizeof(m));
		rtio_hdr_init(&m.hdr, op, (uint32_t)len, 7);
		assert_int_equal(rtio_msg_verify(&m, len, 0), 0);
		/* The same bytes are not a reply. */
		assert_int_equal(rtio_msg_verify(&m, len, 1), -EPROTO);
	}
}

static void test_proto_verify_rejects_bad_header(void **state)
{
	union rtio_msg m;
	size_t len = sizeof(struct rtio_io_req);

	(void)state;
	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, RTIO_OP_READ0, (uint32_t)len, 1);
	m.hdr.magic ^= 1;
	assert_int_equal(rtio_msg_verify(&m, len, 0), -EPROTO);
	rtio_hdr_init(&m.hdr, RTIO_OP_READ0, (uint32_t)len, 1);
	m.hdr.version = RTIO_PROTO_VERSION + 1;
	assert_int_equal(rtio_msg_verify(&m, len, 0), -EPROTO);
	rtio_hdr_init(&m.hdr, 0, (uint32_t)len, 1);
	assert_int_equal(rtio_msg_verify(&m, len, 0), -EPROTO);
	rtio_hdr_init(&m.hdr, RTIO_OP_MAX, (uint32_t)len, 1);
	assert_int_equal(rtio_msg_verify(&m, len, 0), -EPROTO);
	rtio_hdr_init(&m.hdr, RTIO_OP_READ0, (uint32_t)len, 1);
	m.hdr.reserved = 1;
	assert_int_equal(rtio_msg_verify(&m, len, 0), -EPROTO);
	rtio_hdr_init(&m.hdr, RTIO_OP_READ0, (uint32_t)len, 1);
	m.hdr.flags = 0x80;
	assert_int_equal(rtio_msg_verify(&m, len, 0), -EPROTO);
	rtio_hdr_init(&m.hdr, RTIO_OP_READ0, (uint32_t)len, 1);
	m.hdr.result = -5;	/* only replies carry results */
	assert_int_equal(rtio_msg_verify(&m, len, 0), -EPROTO);
}

static void test_proto_verify_rejects_bad_lengths(void **state)
{
	union rtio_msg m;
	size_t len = sizeof(struct rtio_io_req);

	(void)state;
	memset(&m, 0, sizeof(m));
	rtio_hdr_init(&m.hdr, RTIO_OP_READ0, (uint32_t)len, 1);
	assert_int_equal(rtio_msg_verify(&m, len - 1, 0), -EMSGSIZE);	/* truncated */
	assert_int_equal(rtio_msg_verify(&m, len + 1, 0), -EMSGSIZE);	/* trailing bytes */
	assert_int_equal(rtio_msg_verify(&m, 3, 0), -EMSGSIZE);		/* not even a header */
	assert_int_equal(rtio_msg_verify(NULL, len, 0), -EMSGSIZE);
	m.hdr.length = (uint32_t)len + 8;	/* header lies about the length */
	assert_int_equal(rtio_msg_verify(&m, len, 0), -EMSGSIZE);
}

/*
 * STATS's reply grows at its end within a protocol version: a reply of any
 * whole number of counters is one (an older or newer aiod); a partial
 * counter, or none at all, is not. No other reply may differ in length.
 */
static void test_proto_stats_reply_of_whole_counters(void **state)
{
	/* as rtio_cl_control() receives: with room for a newer aiod's reply */
	union {
		union rtio_msg m;
		uint8_t raw[sizeof(union rtio_msg) + RTIO_STATS_REP_ROOM];
	} in;
	union rtio_msg m;
	size_t ours = sizeof(struct rtio_stats_rep), hdr = sizeof(struct rtio_hdr);
	size_t ok[] = { hdr + 8, 384, ours - 8, ours, ours + 8, ours + 64 };
	size_t bad[] = { hdr, hdr + 4, 385, ours + 4 };

	(void)state;
	assert_true(ok[5] <= sizeof(in));
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&in, 0, sizeof(in));
		rtio_hdr_init(&in.m.hdr, RTIO_OP_STATS, (uint32_t)ok[i], 3);
		in.m.hdr.flags = RTIO_F_REPLY;
		assert_int_equal(rtio_msg_verify(&in, ok[i], 1), 0);
		/* the header must still say how long it is */
		in.m.hdr.length = (uint32_t)ok[i] + 8;
		assert_int_equal(rtio_msg_verify(&in, ok[i], 1), -EMSGSIZE);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&m, 0, sizeof(m));
		rtio_hdr_init(&m.hdr, RTIO_OP_STATS, (uint32_t)bad[i], 3);
		m.hdr.flags = RTIO_F_REPLY;
		assert_int_equal(rtio_msg_verify(&m, bad[i], 1), -EMSGSIZE);
	}
	/* a request, or another reply, of a counter more is still wrong */
	rtio_hdr_init(&m.hdr, RTIO_OP_STATS, (uint32_t)(hdr + 8), 3);
	assert_int_equal(rtio_msg_verify(&m, hdr + 8, 0), -EMSGSIZE);
	rtio_hdr_init(&m.hdr, RTIO_OP_FILE_STATS, (uint32_t)sizeof(struct rtio_file_stats_rep) + 8, 3);
	m.hdr.flags = RTIO_F_REPLY;
	assert_int_equal(rtio_msg_verify(&m, sizeof(struct rtio_file_stats_rep) + 8, 1), -EMSGSIZE);
}

static void test_proto_verify_reply_segments_bounded(void **state)
{
	struct rtio_io_rep r;

	(void)state;
	memset(&r, 0, sizeof(r));
	rtio_hdr_init(&r.hdr, RTIO_OP_READ0, sizeof(r), 1);
	r.hdr.flags = RTIO_F_REPLY;
	r.nseg = RTIO_MAX_SEGS;
	assert_int_equal(rtio_msg_verify(&r, sizeof(r), 1), 0);
	r.nseg = RTIO_MAX_SEGS + 1;
	assert_int_equal(rtio_msg_verify(&r, sizeof(r), 1), -EPROTO);
}

static void test_proto_read1_has_no_reply(void **state)
{
	(void)state;
	assert_int_equal(rtio_msg_expected_len(RTIO_OP_READ1, 1), 0);
	/* the module's report of its own reads: one-way too */
	assert_int_equal(rtio_msg_expected_len(RTIO_OP_LOCAL_READS, 1), 0);
	assert_int_equal(rtio_msg_expected_len(RTIO_OP_LOCAL_READS, 0),
			 sizeof(struct rtio_local_reads_req));
	assert_string_equal(rtio_op_name(RTIO_OP_LOCAL_READS), "LOCAL_READS");
	assert_string_equal(rtio_op_name(RTIO_OP_WRITE1), "WRITE1");
	assert_string_equal(rtio_op_name(999), "?");
}

static void test_proto_shm_check(void **state)
{
	struct rtio_shm_header h;
	struct rtio_shm_layout l;
	uint64_t size = rtio_shm_region_size(1 << 20, 4);

	(void)state;
	memset(&h, 0, sizeof(h));
	h.magic = RTIO_SHM_MAGIC;
	h.version = RTIO_SHM_VERSION;
	h.size = size;
	h.block_size = 1 << 20;
	h.nblocks = 4;
	rtio_shm_layout(1 << 20, 4, &l);
	h.dir_off = l.dir_off;
	h.hash_off = l.hash_off;
	h.hash_mask = l.hash_mask;
	h.data_off = l.data_off;
	/* 4 entries of 48 bytes, 8 buckets, then the blocks on the next page */
	assert_int_equal(l.hash_off, 4096 + 4 * 48);
	assert_int_equal(l.hash_mask, 7);
	assert_int_equal(l.data_off, 8192);
	assert_int_equal(size, 8192 + 4 * (1 << 20));
	assert_int_equal(rtio_shm_check(&h, size), 0);
	h.data_off = 4096;	/* blocks over the directory */
	assert_int_equal(rtio_shm_check(&h, size), -EPROTO);
	h.data_off = l.data_off;
	h.hash_mask = 3;	/* fewer buckets than the client would hash into */
	assert_int_equal(rtio_shm_check(&h, size), -EPROTO);
	h.hash_mask = l.hash_mask;
	assert_int_equal(rtio_shm_check(&h, size - 1), -EPROTO);	/* mapped less than described */
	h.nblocks = 5;
	assert_int_equal(rtio_shm_check(&h, size), -EPROTO);	/* blocks past the end */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proto_verify_accepts_every_request),
		cmocka_unit_test(test_proto_verify_rejects_bad_header),
		cmocka_unit_test(test_proto_verify_rejects_bad_lengths),
		cmocka_unit_test(test_proto_stats_reply_of_whole_counters),
		cmocka_unit_test(test_proto_verify_reply_segments_bounded),
		cmocka_unit_test(test_proto_read1_has_no_reply),
		cmocka_unit_test(test_proto_shm_check),
	};

	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
